package region

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the region's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCorruptBloomChunk: a store file whose bloom chunk is damaged on disk
// does not fail Gets (before, every Get on the region failed, even of rows
// only in the memstore): the file is read as if it had no bloom, and the
// warning is logged once.
func TestCorruptBloomChunk(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	for i := 0; i < 200; i += 2 {
		row := fmt.Sprintf("row%03d", i)
		require.NoError(t, r.Put(NewPut(b(row)).Add(fam, b("q"), b("v"+row))))
	}
	require.NoError(t, r.Flush())
	files := r.Store("f").Files()
	require.Len(t, files, 1)
	path := files[0].Reader.Name()
	gb, _ := files[0].Reader.Blooms()
	require.NotNil(t, gb)
	require.NoError(t, r.Close())

	// Damage the (only) chunk's payload.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[gb.Chunks[0].Offset+hfile.HeaderSize+1] ^= 0x40
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	var logs syncBuffer
	before := hfile.BloomErrors()
	r = openTest(t, dir, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	defer r.Close()
	for i := 1; i < 200; i += 4 {
		row := fmt.Sprintf("row%03d", i)
		require.NoError(t, r.Put(NewPut(b(row)).Add(fam, b("q"), b("m"+row)))) // memstore only
	}
	for i := 0; i < 200; i++ {
		row := fmt.Sprintf("row%03d", i)
		var want []byte
		switch {
		case i%2 == 0:
			want = b("v" + row)
		case i%4 == 1:
			want = b("m" + row)
		}
		require.Equal(t, want, getValue(t, r, row, "f", "q"), row)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "bloom filter unreadable"), logs.String())
	require.Equal(t, before+1, hfile.BloomErrors())
}
