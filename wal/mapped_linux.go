package wal

import (
	"os"
	"unsafe"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs"
	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// mapChunk is how much of a segment is allocated and mapped at a time: a
// multiple of the page size, so that every chunk's offset is one too.
const mapChunk = 1 << 20

// mappedFile writes a segment through a shared memory mapping of it instead
// of write(2). A byte copied into a MAP_SHARED mapping is in the page cache,
// exactly where write(2) would have put it: it survives a crash of the
// process, not of the machine, which is SyncWAL's promise; fsync writes it
// back as it does written bytes. The copy costs about a fifth of the
// write(2) call it replaces (710 → 130-200 ns for a 160-byte entry on this
// machine's ext4), which is most of what a lone SyncWAL writer pays for its
// WAL.
//
// The file is extended by fallocate a chunk or two ahead (see below), so
// that a store into the mapping never needs a block the filesystem cannot give (which would be a
// SIGBUS, not an error): a full disk fails the fallocate, and Write returns
// that. Until Close truncates it to what was written, the file ends in
// zeros, which the Reader takes for the end of the log in the last segment
// (see Reader.tornOrCorrupt); Close makes the truncation durable before the
// writer starts the segment after it, so no other segment ever ends so.
//
// The chunk after the one being written is made ready ahead by a goroutine
// of its own: allocated, mapped, its pages faulted in writable
// (MADV_POPULATE_WRITE), and every line of it loaded (see warm). A store
// into a page of a shared file mapping that is not yet in the page tables
// faults, and the kernel allocates, zeroes and maps the page while the
// writer waits: one fault per 4 KiB, every 25 or so 160-byte entries, was
// about a tenth of a lone writer's CPU in the peer harness's load (perf:
// do_fault under mappedFile.Write). Made ready ahead, that work runs beside
// the writer rather than in its path: 1M harness Puts, five alternations,
// 449k -> 496k Puts/s by medians.
type mappedFile struct {
	f    *os.File
	fd   int
	off  int64  // the end of what was written
	base int64  // the offset of m in the file
	m    []byte // the mapped chunk, nil before the first
	// ahead delivers the chunk after m, once made ready; nil when none is
	// being made.
	ahead chan readyChunk
}

// readyChunk is a chunk made ready ahead: its mapping, or why it has none;
// and the outcome of unmapping the chunk before it, which the goroutine
// does too.
type readyChunk struct {
	m        []byte
	err      error
	unmapErr error
	warmSum  byte // what warm read, kept so that its loads stay
}

// warm loads one byte of every cache line of b, a chunk made ready ahead,
// and returns their sum, so that the loads are not optimized away.
//
// Why: the first user-space access to a page, even one faulted in by
// MADV_POPULATE_WRITE, is slow on this machine (a Firecracker VM on AMD
// EPYC): warm takes 1.3 ms over a fresh chunk and 22 µs over it again.
// 130-byte records copied into a populated mapping took 174 ns each in a
// microbenchmark, against 18 ns once every page had been read. Writers copy
// their records under the region's mvcc lock and the writer's, so every
// other writer waited for that too. Loaded here, beside the writers, the
// chunk's pages are touched and its lines cached when the writers get to
// them. Native Increments on 10k counters, SyncWAL, one region, 1, 2 and 32
// goroutines, medians of alternated runs: 354k, 342k, 402k/s before and
// 404k, 520k, 584k/s after (8 runs each); 372k, 382k, 456k/s and 398k,
// 480k, 506k/s (10 runs each). Loading one byte per page instead got 406k,
// 458k, 479k/s beside the first pair.
func warm(b []byte) byte {
	var sum byte
	for i := 0; i < len(b); i += cacheLine {
		sum += b[i]
	}
	return sum
}

// cacheLine is the line size of the processors segments are written on, as
// golang.org/x/sys/cpu pads for it.
const cacheLine = int(unsafe.Sizeof(cpu.CacheLinePad{}))

// mapSegment returns f, a new segment of size bytes (its header), as a
// mappedFile, or f itself if it is not an operating system file or its
// filesystem cannot allocate ahead (fallocate) or map it.
func mapSegment(f vfs.File, size int64) vfs.File {
	osf, ok := f.(*os.File)
	if !ok {
		return f
	}
	m := &mappedFile{f: osf, fd: int(osf.Fd()), off: size}
	if err := m.advance(); err != nil {
		// Back to the file as it was; a failure here fails the next
		// write(2) just as well.
		_ = osf.Truncate(size)
		return f
	}
	return m
}

// advance moves to the chunk after the current one, made ready ahead if
// it was, and starts a goroutine that unmaps the current one and makes the
// one after the next ready.
func (m *mappedFile) advance() error {
	next := m.base + int64(len(m.m))
	var b []byte
	if m.ahead != nil {
		r := <-m.ahead
		m.ahead = nil
		if r.unmapErr != nil {
			if r.m != nil {
				_ = unix.Munmap(r.m)
			}
			return r.unmapErr
		}
		// A chunk that could not be made ready ahead (a full disk) is
		// tried again here, and its error returned.
		b = r.m
	}
	if b == nil {
		var err error
		if b, err = chunkMapper(m.fd, next); err != nil {
			return err
		}
	}
	old := m.m
	m.m, m.base = b, next
	ch := make(chan readyChunk, 1)
	m.ahead = ch
	go func(fd int, off int64) {
		var r readyChunk
		if old != nil {
			// The bytes stored are in the page cache: unmapping now or
			// later changes nothing but who waits for it.
			r.unmapErr = errors.Wrap(unix.Munmap(old), "munmap")
		}
		if r.m, r.err = chunkMapper(fd, off); r.err == nil {
			// Fault the pages in writable now. Kernels before 5.14 do not
			// know the advice: their pages fault on first store, as
			// without it.
			_ = unix.Madvise(r.m, unix.MADV_POPULATE_WRITE)
			r.warmSum = warm(r.m)
		}
		ch <- r
	}(m.fd, next+mapChunk)
	return nil
}

// chunkMapper is mapChunkAt; tests make it fail.
var chunkMapper = mapChunkAt

// mapChunkAt allocates the chunk at off in the file fd and maps it.
func mapChunkAt(fd int, off int64) ([]byte, error) {
	if err := unix.Fallocate(fd, 0, off, mapChunk); err != nil {
		return nil, errors.Wrapf(err, "fallocate %d bytes at offset %d", mapChunk, off)
	}
	b, err := unix.Mmap(fd, off, mapChunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, errors.Wrapf(err, "mmap %d bytes at offset %d", mapChunk, off)
	}
	return b, nil
}

// dropAhead waits for the goroutine advance started, if any, and unmaps
// the chunk it made ready.
func (m *mappedFile) dropAhead() error {
	if m.ahead == nil {
		return nil
	}
	r := <-m.ahead
	m.ahead = nil
	err := r.unmapErr
	if r.m != nil {
		if uerr := unix.Munmap(r.m); err == nil {
			err = errors.Wrap(uerr, "munmap")
		}
	}
	return err
}

// room implements directFile: the n bytes after what was written, if the
// current chunk holds them (no chunk to advance to, so nothing can fail).
func (m *mappedFile) room(n int) []byte {
	pos := m.off - m.base
	if m.m == nil || pos < 0 || pos+int64(n) > int64(len(m.m)) {
		return nil
	}
	return m.m[pos : pos+int64(n) : pos+int64(n)]
}

// wrote implements directFile.
func (m *mappedFile) wrote(n int) { m.off += int64(n) }

// Write copies p to the end of what was written.
func (m *mappedFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if m.off >= m.base+int64(len(m.m)) {
			if err := m.advance(); err != nil {
				return n, err
			}
		}
		c := orderedCopy(m.m[m.off-m.base:], p[n:])
		n += c
		m.off += int64(c)
	}
	return n, nil
}

// StartWriteBack starts the writeback of the file's pages in [from, to)
// (sync_file_range), without waiting for it and without an fsync: no
// metadata, no cache flush. The writer calls it with pages no store is
// changing, so that the fsync of a roll has less to write while writers
// wait. A page written back faults once more when stored to, which is why
// it stops short of the page being written and of the chunk made ready
// ahead.
func (m *mappedFile) StartWriteBack(from, to int64) error {
	return errors.Wrap(unix.SyncFileRange(m.fd, from, to-from, unix.SYNC_FILE_RANGE_WRITE), "sync_file_range")
}

// Sync fsyncs the file, which on Linux writes back the pages stored
// through the mapping as it does written ones.
func (m *mappedFile) Sync() error { return m.f.Sync() }

func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) { return m.f.ReadAt(p, off) }

func (m *mappedFile) Stat() (os.FileInfo, error) { return m.f.Stat() }

// closeSyncs implements syncingCloser: Close fsyncs.
func (m *mappedFile) closeSyncs() {}

// Close unmaps the file, cuts the zeros after what was written and fsyncs
// that, so that a segment followed by another never ends in zeros, even
// after a power loss.
func (m *mappedFile) Close() error {
	err := m.dropAhead()
	if m.m != nil {
		if uerr := unix.Munmap(m.m); err == nil {
			err = errors.Wrap(uerr, "munmap")
		}
		m.m = nil
	}
	if terr := m.f.Truncate(m.off); err == nil {
		err = terr
	}
	if serr := m.f.Sync(); err == nil {
		err = serr
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	// The descriptor's number is free for the next file opened: a Write
	// after Close must not map that file (advance would, through m.fd).
	// With -1 it fails with EBADF instead.
	m.fd = -1
	return err
}
