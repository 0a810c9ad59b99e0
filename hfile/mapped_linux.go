//go:build linux

package hfile

import (
	"io"
	"os"
	"runtime/debug"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// MappedFile reads a file through a read-only shared mapping of it: a
// block read that misses the block cache is then a copy from the page
// cache instead of a pread(2), about 1 µs less on this machine's page
// cache (measured: 1.5 µs per random 4 KiB pread, 0.4-0.55 µs per copy
// from a mapping, page faults included). The file must not change while
// mapped; HFiles never do.
//
// A read that faults (an I/O error under the mapping, or a file cut short
// behind our back: SIGBUS) returns an error instead of crashing the
// process (debug.SetPanicOnFault). Close must not run while a ReadAt
// may: the caller's references to the file (a store's StoreFile) ensure
// that, as they do for the file descriptor.
type MappedFile struct {
	f    *os.File
	data []byte
}

// MapFile maps f, whose size is size, for ReadAt; f is then the
// MappedFile's, which closes it. It returns f itself, unmapped, where the
// file cannot be mapped (empty, or the mmap fails).
func MapFile(f *os.File, size int64) ReaderAtCloser {
	if size <= 0 || int64(int(size)) != size {
		return f
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return f
	}
	return &MappedFile{f: f, data: data}
}

// ReadAt implements io.ReaderAt as os.File does: io.EOF when p runs past
// the end of the file.
func (m *MappedFile) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, errors.Newf("hfile %s: read at negative offset %d", m.f.Name(), off)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			n, err = 0, errors.Newf("hfile %s: reading %d bytes at offset %d: fault in the file's mapping (I/O error or truncated file): %v",
				m.f.Name(), len(p), off, r)
		}
	}()
	n = copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close unmaps the file and closes it.
func (m *MappedFile) Close() error {
	err := unix.Munmap(m.data)
	m.data = nil
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrap(err, "hfile: closing mapped file")
}
