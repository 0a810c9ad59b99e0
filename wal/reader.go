package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/internal/vfs"
)

// ReplayStats says what a Reader or Replay read, and what it dropped.
type ReplayStats struct {
	// Segments is the number of segment files opened.
	Segments int
	// Entries is the number of intact entries read; Replay splits them into
	// Applied (seq > fromSeq, passed to fn) and Skipped.
	Entries, Applied, Skipped int
	// Cells is the number of cells in the applied entries (all entries, for
	// a Reader).
	Cells int
	// Bytes is the number of bytes of intact headers and records read.
	Bytes int64
	// MaxSeq is the highest sequence id among all entries read, applied or
	// not: the region advances its mvcc past it after replay.
	MaxSeq uint64
	// TornTail reports that the last segment ended in a torn tail: from
	// TornOffset in TornSegment, DroppedBytes bytes that were not an intact
	// record and had no intact record after them were ignored.
	TornTail     bool
	TornSegment  string
	TornOffset   int64
	DroppedBytes int64
}

// segmentSummary is what reading one segment found; Open uses it to learn
// each old segment's highest sequence id and to repair a torn tail.
type segmentSummary struct {
	path      string
	entries   int
	maxSeq    uint64
	validSize int64 // bytes up to the end of the last intact record
	hasHeader bool  // the segment has an intact header
	torn      bool
	// zeroTail: only zeros follow the last intact record, the space a
	// mapped segment allocates ahead of its writes (see mappedFile).
	zeroTail bool
}

// Reader reads the entries of a sequence of segments in order, telling a
// torn tail in the last segment from corruption anywhere (see the package
// comment). A Reader is not safe for concurrent use.
type Reader struct {
	fs    vfs.FS
	paths []string
	idx   int // index in paths of the open segment
	f     vfs.File
	size  int64
	rr    *record.Reader
	// entryOff is the offset of the entry Next returned last.
	entryOff int64
	cur      *segmentSummary
	segs     []segmentSummary
	stats    ReplayStats
	err      error // sticky, io.EOF at the end
}

// NewReader returns a Reader over the segment files at paths, which must be
// in the order they were written (as ListSegments returns them). The last
// one may end in a torn tail; every other one must be intact.
func NewReader(fs vfs.FS, paths []string) *Reader {
	return &Reader{fs: fs, paths: paths, idx: -1}
}

// Next returns the next entry. Key and Edit are new for every entry and the
// caller may keep them and their slices. At the end, including after a torn
// tail, Next returns io.EOF. A corrupt record or segment returns an error
// marked as corruption (encoding.IsCorruption) that names the segment file
// and the offset; errors are sticky.
func (r *Reader) Next() (*Key, *Edit, error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	k, e, err := r.next()
	if err != nil {
		r.err = err
		r.closeSegment()
	}
	return k, e, err
}

func (r *Reader) next() (*Key, *Edit, error) {
	for {
		if r.rr == nil {
			if r.idx+1 >= len(r.paths) {
				return nil, nil, io.EOF
			}
			r.idx++
			if err := r.openSegment(); err != nil && err != io.EOF {
				return nil, nil, err
			}
			if r.rr == nil { // empty or torn before the first entry
				r.closeSegment()
				continue
			}
		}
		off := r.rr.Offset()
		payload, err := r.rr.Next()
		if err == io.EOF {
			r.closeSegment()
			continue
		}
		if err != nil {
			if record.IsInvalidRecord(err) {
				if err := r.tornOrCorrupt(off, err); err != io.EOF {
					return nil, nil, err
				}
				r.closeSegment()
				continue
			}
			return nil, nil, errors.Wrapf(err, "wal: read %s", r.paths[r.idx])
		}
		k, e, err := decodeEntry(payload)
		if err != nil {
			return nil, nil, encoding.MarkCorruption(errors.Wrapf(err,
				"wal: %s: entry at offset %d has an intact frame but does not decode", r.paths[r.idx], off))
		}
		r.entryOff = off
		r.stats.Entries++
		r.stats.Cells += len(e.Cells)
		r.stats.Bytes += int64(record.HeaderSize + len(payload))
		r.stats.MaxSeq = max(r.stats.MaxSeq, k.SeqNum)
		r.cur.entries++
		r.cur.maxSeq = max(r.cur.maxSeq, k.SeqNum)
		r.cur.validSize = r.rr.Offset()
		return k, e, nil
	}
}

// Segment returns the path of the segment of the entry Next returned last.
func (r *Reader) Segment() string {
	if r.idx < 0 || r.idx >= len(r.paths) {
		return ""
	}
	return r.paths[r.idx]
}

// Offset returns the offset in its segment of the entry Next returned last.
func (r *Reader) Offset() int64 { return r.entryOff }

// Stats returns what has been read so far.
func (r *Reader) Stats() ReplayStats { return r.stats }

// Close releases the open segment, if any.
func (r *Reader) Close() error {
	r.closeSegment()
	if r.err == nil {
		r.err = errors.New("wal: reader closed")
	}
	return nil
}

func (r *Reader) lastSegment() bool { return r.idx == len(r.paths)-1 }

func (r *Reader) closeSegment() {
	if r.f != nil {
		_ = r.f.Close()
		r.f, r.rr = nil, nil
	}
}

// openSegment opens r.paths[r.idx] and checks its header. It leaves r.rr nil
// if the segment has no entries to read: it is empty, or (last segment only)
// torn before or inside its header.
func (r *Reader) openSegment() error {
	path := r.paths[r.idx]
	r.segs = append(r.segs, segmentSummary{path: path})
	r.cur = &r.segs[len(r.segs)-1]
	r.stats.Segments++
	f, err := r.fs.Open(path)
	if err != nil {
		return errors.Wrapf(err, "wal: open %s", path)
	}
	r.f = f
	st, err := f.Stat()
	if err != nil {
		return errors.Wrapf(err, "wal: stat %s", path)
	}
	r.size = st.Size()
	if r.size == 0 {
		// Created, and the crash came before the header was written. Only
		// the newest segment can be in that state.
		if !r.lastSegment() {
			return encoding.CorruptionErrorf("wal: %s: empty segment that is not the last", path)
		}
		return nil
	}
	var hdr [magicSize]byte
	n := min(int64(magicSize), r.size)
	if _, err := f.ReadAt(hdr[:n], 0); err != nil && !(err == io.EOF && int64(n) == r.size) {
		return errors.Wrapf(err, "wal: read %s", path)
	}
	want := appendSegmentHeader(nil)[:magicSize]
	if !bytes.Equal(hdr[:n], want[:n]) {
		// The start of the header and zeros after it (all zeros, or
		// "R" then zeros, or the magic and a zeroed version): a header
		// torn by a power loss that extended the file but did not
		// write all of it. Torn, if nothing follows. (Found by
		// region's TestPowerLoss; a version of 0 is never written.)
		i := 0
		for i < int(n) && hdr[i] == want[i] {
			i++
		}
		if allZero(hdr[i:n]) {
			return r.tornOrCorrupt(0, record.ErrTruncated)
		}
		if string(hdr[:4]) == segmentMagic {
			return errors.Mark(errors.Newf("wal: %s: segment version %d, want %d",
				path, binary.BigEndian.Uint32(hdr[4:8]), segmentVersion), ErrUnsupported)
		}
		return encoding.CorruptionErrorf("wal: %s: not a WAL segment (bad magic %q)", path, hdr[:n])
	}
	if r.size < magicSize {
		return r.tornOrCorrupt(0, record.ErrTruncated)
	}
	rr := record.NewReader(f, magicSize, r.size)
	payload, err := rr.Next()
	if err != nil {
		if err == io.EOF {
			err = record.ErrTruncated
		}
		if record.IsInvalidRecord(err) {
			return r.tornOrCorrupt(magicSize, err)
		}
		return errors.Wrapf(err, "wal: read %s", path)
	}
	if err := checkHeader(payload); err != nil {
		return errors.Wrapf(err, "wal: %s: segment header", path)
	}
	r.cur.hasHeader = true
	r.cur.validSize = rr.Offset()
	r.stats.Bytes += rr.Offset()
	r.rr = rr
	return nil
}

// tornOrCorrupt decides what a bad record at off in the open segment is. In
// the last segment, if no intact entry record starts anywhere after off, it
// is a torn tail: tornOrCorrupt records it in the stats and returns io.EOF.
// Otherwise, and in every other segment, it returns a corruption error
// naming the file and offset.
func (r *Reader) tornOrCorrupt(off int64, cause error) error {
	path := r.paths[r.idx]
	if !r.lastSegment() {
		return encoding.MarkCorruption(errors.Wrapf(cause,
			"wal: %s: corrupt record at offset %d of a segment that is not the last", path, off))
	}
	rest := make([]byte, r.size-off)
	if _, err := r.f.ReadAt(rest, off); err != nil && err != io.EOF {
		return errors.Wrapf(err, "wal: read %s", path)
	}
	if r.cur.hasHeader && r.size%mapChunk == 0 && allZero(rest) {
		// Allocated ahead and never written: a mapped segment whose
		// writer stopped before Close cut it, which is the only file
		// to end in zeros at a chunk boundary. The end of the log, not
		// a torn write. Only the last segment ends so.
		r.cur.zeroTail = true
		return io.EOF
	}
	if j, ok := record.FindValid(rest, 1, isEntry); ok {
		return encoding.MarkCorruption(errors.Wrapf(cause,
			"wal: %s: corrupt record at offset %d, followed by an intact record at offset %d (%s); the %d bytes before it %s",
			path, off, off+int64(j), describeEntry(rest[j:]), j, describeDamage(rest[:j])))
	}
	r.cur.torn = true
	r.stats.TornTail = true
	r.stats.TornSegment = path
	r.stats.TornOffset = off
	r.stats.DroppedBytes = r.size - off
	return io.EOF
}

// describeEntry names the region and sequence id of the entry record that
// b starts with, for an error: whose write lies past damage says much about
// how the damage came about.
func describeEntry(b []byte) string {
	payload, _, err := record.Decode(b)
	if err != nil {
		return "undecodable"
	}
	k, _, err := decodeEntry(payload)
	if err != nil {
		return "undecodable"
	}
	return fmt.Sprintf("an entry of region %q, sequence id %d", k.EncodedRegionName, k.SeqNum)
}

// describeDamage says what the damaged bytes b are: all zeros (never
// written), or their first bytes.
func describeDamage(b []byte) string {
	if allZero(b) {
		return "are all zeros"
	}
	return fmt.Sprintf("begin %x", b[:min(len(b), 24)])
}

func isEntry(payload []byte) bool {
	_, _, err := decodeEntry(payload)
	return err == nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Replay reads every segment in dir in order and calls fn for each entry
// whose sequence id is above fromSeq, stopping at the first error from the
// log or from fn. A torn tail in the last segment ends the replay without an
// error and is reported in the stats; corruption is an error marked as
// corruption naming the file and offset. Key and Edit belong to fn, which
// may keep them; each cell's SeqNum is set to the entry's sequence id.
//
// Replay reads the files of the operating system; ReplayFS takes an FS.
func Replay(dir string, fromSeq uint64, fn func(key *Key, edit *Edit) error) (ReplayStats, error) {
	return ReplayFS(vfs.Default, dir, fromSeq, fn)
}

// ReplayFS is Replay over fs.
func ReplayFS(fs vfs.FS, dir string, fromSeq uint64, fn func(key *Key, edit *Edit) error) (ReplayStats, error) {
	paths, err := ListSegments(fs, dir)
	if err != nil {
		return ReplayStats{}, err
	}
	return replayPaths(fs, paths, fromSeq, fn)
}

func replayPaths(fs vfs.FS, paths []string, fromSeq uint64, fn func(key *Key, edit *Edit) error) (ReplayStats, error) {
	r := NewReader(fs, paths)
	defer r.Close()
	var applied, skipped, cells int
	stats := func() ReplayStats {
		s := r.Stats()
		s.Applied, s.Skipped, s.Cells = applied, skipped, cells
		return s
	}
	for {
		k, e, err := r.Next()
		if err == io.EOF {
			return stats(), nil
		}
		if err != nil {
			return stats(), err
		}
		if k.SeqNum <= fromSeq {
			skipped++
			continue
		}
		if err := fn(k, e); err != nil {
			return stats(), errors.Wrapf(err, "wal: replay of sequence id %d (%s, offset %d)", k.SeqNum, r.Segment(), r.Offset())
		}
		applied++
		cells += len(e.Cells)
	}
}
