package wal

import (
	"bytes"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeEntry decodes arbitrary entry payloads: no panic, and either a
// corruption error or an entry that encodes and decodes to itself.
func FuzzDecodeEntry(f *testing.F) {
	for seq := uint64(0); seq < 8; seq++ {
		k, e := testEdit(seq)
		f.Add(appendEntry(nil, k, e))
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{3, 0x0a, 1, 'r'})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, e, err := decodeEntry(b)
		if err != nil {
			require.True(t, encoding.IsCorruption(err), "%v", err)
			return
		}
		if validateEdit(k, e) != nil {
			return // e.g. a decoded row longer than HBase allows
		}
		k2, e2, err := decodeEntry(appendEntry(nil, k, e))
		require.NoError(t, err)
		if k.WriteTime == 0 {
			k2.WriteTime = 0 // Append stamps the current time
		}
		require.Equal(t, k, k2)
		require.Equal(t, len(e.Cells), len(e2.Cells))
		for i := range e.Cells {
			require.Equal(t, e.Cells[i].String(), e2.Cells[i].String())
		}
	})
}

// FuzzReplay replays an arbitrary last segment, with and without a valid
// header in front: no panic, and either success or a corruption or
// unsupported-segment error.
func FuzzReplay(f *testing.F) {
	data := func() []byte {
		b := appendSegmentHeader(nil)
		for seq := uint64(1); seq < 5; seq++ {
			k, e := testEdit(seq)
			b, _ = record.Append(b, appendEntry(nil, k, e))
		}
		return b
	}()
	hdrLen := len(appendSegmentHeader(nil))
	f.Add(data, false)
	f.Add(data[hdrLen:], true)
	f.Add(data[:len(data)-3], false)
	f.Add(append(data[:len(data):len(data)], make([]byte, 20)...), false)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, b []byte, withHeader bool) {
		if withHeader {
			b = append(appendSegmentHeader(nil), b...)
		}
		fs := memFS{SegmentName(1): b}
		stats, err := ReplayFS(fs, "", 0, func(k *Key, e *Edit) error { return nil })
		if err != nil {
			require.True(t, encoding.IsCorruption(err) || isUnsupported(err), "%v", err)
			return
		}
		require.LessOrEqual(t, stats.Bytes+stats.DroppedBytes, int64(len(b)))
	})
}

// memFS is a read-only in-memory filesystem of one flat directory, so that
// fuzzing does not wait for files.
type memFS map[string][]byte

var _ vfs.FS = memFS{}

func (fs memFS) Open(name string) (vfs.File, error) {
	b, ok := fs[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return memFile{Reader: bytes.NewReader(b), name: name, size: int64(len(b))}, nil
}

func (fs memFS) List(string) ([]string, error) {
	var names []string
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (fs memFS) Stat(name string) (os.FileInfo, error) {
	b, ok := fs[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return memInfo{name: name, size: int64(len(b))}, nil
}

func (memFS) Create(string) (vfs.File, error)    { return nil, os.ErrPermission }
func (memFS) OpenDir(string) (vfs.File, error)   { return nil, os.ErrPermission }
func (memFS) Remove(string) error                { return os.ErrPermission }
func (memFS) Rename(string, string) error        { return os.ErrPermission }
func (memFS) Link(string, string) error          { return os.ErrPermission }
func (memFS) Truncate(string, int64) error       { return os.ErrPermission }
func (memFS) MkdirAll(string, os.FileMode) error { return os.ErrPermission }

type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (memFile) Write([]byte) (int, error)    { return 0, os.ErrPermission }
func (memFile) Sync() error                  { return nil }
func (memFile) Close() error                 { return nil }
func (f memFile) Stat() (os.FileInfo, error) { return memInfo(f), nil }

type memInfo memFile

func (i memInfo) Name() string     { return i.name }
func (i memInfo) Size() int64      { return i.size }
func (memInfo) Mode() os.FileMode  { return 0o444 }
func (memInfo) ModTime() time.Time { return time.Time{} }
func (memInfo) IsDir() bool        { return false }
func (memInfo) Sys() any           { return nil }
