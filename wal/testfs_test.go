package wal

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// testFS wraps the OS filesystem to count writes and syncs, delay syncs,
// inject errors, hold writes back, and remember what was synced so that a
// test can simulate power loss (crashCopy).
type testFS struct {
	vfs.FS
	writes, syncs atomic.Int64

	mu struct {
		sync.Mutex
		syncDelay, writeDelay time.Duration
		// syncErr and writeErr, if set, are called before each file
		// sync and write; a non-nil result fails the operation.
		syncErr, writeErr func(path string) error
		// writeGate, if set, holds every file write until it is closed.
		writeGate chan struct{}
		files     map[string]*fileState
	}
}

// fileState is what would survive power loss of one file.
type fileState struct {
	size, synced int64
	dirSynced    bool // its directory was synced after it was created
}

func newTestFS() *testFS {
	fs := &testFS{FS: vfs.Default}
	fs.mu.files = map[string]*fileState{}
	return fs
}

func (fs *testFS) setSyncErr(f func(string) error) {
	fs.mu.Lock()
	fs.mu.syncErr = f
	fs.mu.Unlock()
}

func (fs *testFS) setWriteErr(f func(string) error) {
	fs.mu.Lock()
	fs.mu.writeErr = f
	fs.mu.Unlock()
}

func (fs *testFS) setSyncDelay(d time.Duration) {
	fs.mu.Lock()
	fs.mu.syncDelay = d
	fs.mu.Unlock()
}

func (fs *testFS) setWriteDelay(d time.Duration) {
	fs.mu.Lock()
	fs.mu.writeDelay = d
	fs.mu.Unlock()
}

func (fs *testFS) setWriteGate(c chan struct{}) {
	fs.mu.Lock()
	fs.mu.writeGate = c
	fs.mu.Unlock()
}

func (fs *testFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	fs.mu.files[name] = &fileState{}
	fs.mu.Unlock()
	return &testFile{File: f, fs: fs, path: name}, nil
}

func (fs *testFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &testDir{File: f, fs: fs, dir: name}, nil
}

func (fs *testFS) Remove(name string) error {
	fs.mu.Lock()
	delete(fs.mu.files, name)
	fs.mu.Unlock()
	return fs.FS.Remove(name)
}

func (fs *testFS) Truncate(name string, size int64) error {
	fs.mu.Lock()
	if st := fs.mu.files[name]; st != nil {
		st.size = min(st.size, size)
		st.synced = min(st.synced, size)
	}
	fs.mu.Unlock()
	return fs.FS.Truncate(name, size)
}

// crashCopy copies into dst what of the files created through fs would
// survive power loss now: the synced prefix of each file whose directory
// entry was synced.
func (fs *testFS) crashCopy(t *testing.T, dst string) {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for path, st := range fs.mu.files {
		if !st.dirSynced {
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, filepath.Base(path)), b[:st.synced], 0o644))
	}
}

type testFile struct {
	vfs.File
	fs   *testFS
	path string
}

func (f *testFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	gate, werr, delay := f.fs.mu.writeGate, f.fs.mu.writeErr, f.fs.mu.writeDelay
	f.fs.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	if werr != nil {
		if err := werr(f.path); err != nil {
			return 0, err
		}
	}
	n, err := f.File.Write(p)
	f.fs.writes.Add(1)
	f.fs.mu.Lock()
	f.fs.mu.files[f.path].size += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

func (f *testFile) Sync() error {
	f.fs.mu.Lock()
	delay, serr := f.fs.mu.syncDelay, f.fs.mu.syncErr
	size := f.fs.mu.files[f.path].size
	f.fs.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if serr != nil {
		if err := serr(f.path); err != nil {
			return err
		}
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.fs.syncs.Add(1)
	f.fs.mu.Lock()
	if st := f.fs.mu.files[f.path]; st != nil {
		st.synced = max(st.synced, size)
	}
	f.fs.mu.Unlock()
	return nil
}

type testDir struct {
	vfs.File
	fs  *testFS
	dir string
}

func (d *testDir) Sync() error {
	if err := d.File.Sync(); err != nil {
		return err
	}
	d.fs.mu.Lock()
	for path, st := range d.fs.mu.files {
		if filepath.Dir(path) == filepath.Clean(d.dir) {
			st.dirSynced = true
		}
	}
	d.fs.mu.Unlock()
	return nil
}
