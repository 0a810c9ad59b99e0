//go:build linux

package hfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestMappedFileReadAt: reads through the mapping return what os.File's
// ReadAt does, io.EOF included, and a reader opened on the mapping reads
// every cell of a written file.
func TestMappedFileReadAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.hfile")
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{BlockSize: 512, Encoding: encoding.EncodingFastDiff})
	require.NoError(t, err)
	const n = 2000
	for i := 0; i < n; i++ {
		require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte{byte(i >> 8), byte(i)}, Family: []byte("f"),
			Qualifier: []byte("q"), Timestamp: 1, Type: encoding.TypePut, Value: bytes.Repeat([]byte{byte(i)}, 20)}))
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	f, err := os.Open(path)
	require.NoError(t, err)
	size := int64(buf.Len())
	src := MapFile(f, size)
	m, ok := src.(*MappedFile)
	require.True(t, ok, "an HFile on disk is mapped")
	plain, err := os.Open(path)
	require.NoError(t, err)
	defer plain.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		off := rng.Int64N(size + 10)
		l := rng.IntN(5000)
		p, q := make([]byte, l), make([]byte, l)
		n1, err1 := m.ReadAt(p, off)
		n2, err2 := plain.ReadAt(q, off)
		require.Equal(t, n2, n1, "read of %d at %d", len(p), off)
		require.Equal(t, err2, err1)
		require.Equal(t, q[:n2], p[:n1])
	}
	_, err = m.ReadAt(make([]byte, 1), -1)
	require.Error(t, err)

	r, err := Open(m, size, path, ReaderOptions{})
	require.NoError(t, err)
	it := r.NewIterator(false)
	got := 0
	for ok, err := it.First(); ok; ok, err = it.Next() {
		require.NoError(t, err)
		got++
	}
	require.NoError(t, it.Err())
	it.Close()
	require.Equal(t, n, got)
	require.NoError(t, m.Close())
}

// TestMappedFileFault: a file cut short under its mapping makes a read of
// the lost pages fail with an error (SIGBUS, turned into a panic and
// recovered), not crash the process; the pages still there read on.
func TestMappedFileFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	m, ok := MapFile(f, int64(len(data))).(*MappedFile)
	require.True(t, ok)
	defer m.Close()
	require.NoError(t, os.Truncate(path, 4096))
	p := make([]byte, 100)
	_, err = m.ReadAt(p, 32<<10)
	require.ErrorContains(t, err, "fault in the file's mapping")
	n, err := m.ReadAt(p, 100)
	require.NoError(t, err)
	require.Equal(t, data[100:200], p[:n])
}
