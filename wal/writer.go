package wal

import (
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/internal/vfs"
)

// Defaults for Options.
const (
	// DefaultRollSize is the segment size that triggers a roll (64 MiB).
	// HBase derives its equivalent from hbase.regionserver.logroll.multiplier
	// times the WAL block size.
	DefaultRollSize = 64 << 20
	// DefaultAsyncFlushInterval bounds how long an AsyncWAL entry waits in
	// the buffer: HBase's hbase.regionserver.optionallogflushinterval.
	DefaultAsyncFlushInterval = time.Second
	// DefaultMaxAsyncPendingBytes bounds the buffer of unwritten entries:
	// beyond it, an AsyncWAL Sync waits like a SyncWAL one.
	DefaultMaxAsyncPendingBytes = 16 << 20
)

// maxSpareBuffer is the largest flushed buffer kept for reuse.
const maxSpareBuffer = 4 << 20

// Options configure a Writer. The zero value gives the defaults.
type Options struct {
	// FS is the filesystem; vfs.Default if nil.
	FS vfs.FS
	// RollSize: after a write leaves the active segment at or above this
	// size, the writer rolls to a new segment. DefaultRollSize if 0.
	RollSize int64
	// AsyncFlushInterval: every appended entry is written to the OS within
	// about this long, even if no one waits for it.
	// DefaultAsyncFlushInterval if 0.
	AsyncFlushInterval time.Duration
	// MaxAsyncPendingBytes: DefaultMaxAsyncPendingBytes if 0.
	MaxAsyncPendingBytes int
	// Logger receives warnings (a torn tail repaired on Open); slog.Default()
	// if nil.
	Logger *slog.Logger
	// PlainWrites writes segments with write(2) even where they could be
	// written through a shared mapping (Linux, the operating system's
	// filesystem; see mappedFile). Segments of another FS always are.
	PlainWrites bool
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.RollSize <= 0 {
		o.RollSize = DefaultRollSize
	}
	if o.AsyncFlushInterval <= 0 {
		o.AsyncFlushInterval = DefaultAsyncFlushInterval
	}
	if o.MaxAsyncPendingBytes <= 0 {
		o.MaxAsyncPendingBytes = DefaultMaxAsyncPendingBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ErrClosed is returned by Append, Sync and Roll on a closed Writer.
var ErrClosed = errors.New("wal: writer closed")

// Metrics counts what a Writer did since Open.
type Metrics struct {
	Appends      uint64 // entries appended
	Writes       uint64 // file writes, each carrying a batch of entries (or a segment header)
	Syncs        uint64 // fsyncs of segment files (on request, on roll, on close)
	Rolls        uint64 // segments rolled
	BytesWritten uint64 // bytes written, segment headers included
}

// SegmentInfo describes one segment a Writer tracks.
type SegmentInfo struct {
	Path string
	// MaxSeq is the highest sequence id of the entries in the segment (those
	// taken by a write round, for the active one); 0 if none.
	MaxSeq uint64
	// Size is the number of bytes written to the segment.
	Size   int64
	Active bool
}

type lostRange struct {
	from, through uint64
	err           error
}

type segment struct {
	num    uint64
	path   string
	maxSeq uint64
	size   int64
}

func (s segment) info(active bool) SegmentInfo {
	return SegmentInfo{Path: s.path, MaxSeq: s.maxSeq, Size: s.size, Active: active}
}

// Writer is HBase's WAL (FSHLog): it appends entries to the active segment
// of a directory, batches concurrent writers into one write and one fsync
// (group commit), rolls to a new segment by size or on demand, and deletes
// segments whose entries have all been flushed. See the package comment for
// the contract with the region. All methods are safe for concurrent use.
type Writer struct {
	fs   vfs.FS
	dir  string
	opts Options

	// Rounds' counters; direct appends count theirs in writerHot, and
	// appends is mu.appended.
	writes, syncs, rolls, bytesWritten atomic.Uint64

	// flusherDone is closed when the flush goroutine exits.
	flusherDone chan struct{}

	// file is the active segment's file. Only the goroutine that set
	// mu.busy uses it (and Reset, which runs only while no one is busy).
	file vfs.File

	// mu protects everything in it (and in its writerHot, but for the
	// atomics, which are read without it). It is held by Append (which
	// runs under the region's mvcc lock) only to copy an entry into
	// pending or into the mapped segment, and released around every
	// write, sync and roll.
	mu struct {
		// writerHot holds the mutex and what an append touches.
		*writerHot
		// pending holds framed entries not yet taken by a round;
		// pendingMaxSeq is their highest sequence id. spare is the
		// previous round's buffer, kept for reuse.
		pending, spare []byte
		pendingMaxSeq  uint64
		synced         uint64 // see writerHot.appended
		// The highest txid that FSyncWAL callers wait for: a round fsyncs
		// if it is above synced.
		syncReq uint64
		// asyncTimer, when armed, sets asyncDue after
		// AsyncFlushInterval: write whatever is pending.
		asyncTimer *time.Timer
		asyncArmed bool
		asyncDue   bool
		// err is sticky: once a write, sync or roll fails, every call
		// that is not already satisfied returns it, until Reset.
		err error
		// lost are the txids that Reset dropped unwritten (or whose
		// bytes it truncated away), with the error that lost them: a
		// Sync of one of them must fail, not see written ≥ txid.
		lost []lostRange
		// active is the segment appended to, but for its size and
		// maxSeq, which are writerHot's activeSize and activeMaxSeq and
		// zero here (activeLocked puts them together).
		active segment
		closed []segment // older segments, oldest first
	}
	// work wakes the flush goroutine; done wakes callers waiting in Sync
	// and Roll, at the end of every round. Both use mu.
	work, done sync.Cond
}

// writerHot is the part of Writer.mu that appends write, on two cache lines
// of their own: appends run one after another on whichever processor, so a
// line they write moves between the processors' caches on nearly every
// append, inside the locks that order appends. The first line holds what a
// direct append writes, the second what it reads and rounds change. It is
// allocated apart from the Writer, free of pointers, so that it starts a
// line (TestWriterHotLines).
type writerHot struct {
	sync.Mutex
	// activeSize and activeMaxSeq are the active segment's size and
	// highest sequence id.
	activeSize   int64
	activeMaxSeq uint64
	// Transaction ids: Append numbers entries 1, 2, 3, ...; every entry
	// up to written has been written to the OS, every entry up to synced
	// has been fsync'd. synced ≤ written ≤ appended.
	appended, written uint64
	// Direct appends' writes and bytes (Metrics).
	directWrites, directBytes uint64
	// writtenMirror mirrors written for Sync's check without the lock.
	writtenMirror atomic.Uint64

	// lostThrough is the highest txid in mu.lost (stored before written
	// moves past it): Sync of a txid at or below it needs the lock.
	lostThrough atomic.Uint64
	// busy is set while a goroutine does I/O on the active segment: a
	// Sync caller leading a round, or the flush goroutine. At most one
	// goroutine is busy, so writes never interleave. While mu.err is set,
	// no one is busy.
	busy bool
	// rollHandoff is set by a round that left the segment full: the file
	// stays busy, handed to the flush goroutine to roll.
	rollHandoff bool
	// syncing is set while the active segment is fsync'd with the file
	// not busy: by a round that had nothing to write (syncFreeLocked: a
	// flush's SyncAll fsyncs a memstore's worth of log, tens of
	// milliseconds that every writer used to wait out), or by a roll
	// before it holds writers (rollLocked); and while the flush goroutine
	// starts the segment's writeback (writeBackFreeLocked). Rounds that
	// only write (SyncWAL) and direct appends go on meanwhile; another
	// fsync, a roll, Close and Reset wait for it.
	syncing bool
	closing bool
	// writeBackDue is set once the active segment has grown writeBackBytes
	// past syncedSize: the flush goroutine then starts the writeback of
	// the rest (writeBackFreeLocked).
	writeBackDue bool
	// syncedSize is how much of the active segment an fsync has covered
	// or a writeback has been started for; once writeBackBytes more is
	// written, the flush goroutine starts the writeback of the rest
	// (writeBackFreeLocked), so that a roll's fsync, which writers wait
	// for, finds little left to write.
	syncedSize int64
	// Roll requests are numbered; rollDone is the last one served.
	rollReq, rollDone uint64
	_                 [24]byte
}

// setActiveLocked makes seg the active segment, none of it synced.
//
// REQUIRES: w.mu held.
func (w *Writer) setActiveLocked(seg segment) {
	w.mu.activeSize, w.mu.activeMaxSeq, w.mu.syncedSize = seg.size, seg.maxSeq, 0
	// A writeback still due was the old segment's.
	w.mu.writeBackDue = false
	// Only in writerHot: a copy left here would go stale on the next
	// append.
	seg.size, seg.maxSeq = 0, 0
	w.mu.active = seg
}

// activeLocked returns the active segment, its size and maxSeq included.
//
// REQUIRES: w.mu held.
func (w *Writer) activeLocked() segment {
	seg := w.mu.active
	seg.size, seg.maxSeq = w.mu.activeSize, w.mu.activeMaxSeq
	return seg
}

// Open opens the WAL in dir (creating dir if needed) for appending. It first
// reads every existing segment, to learn each one's highest sequence id for
// Prune, and repairs a torn tail of the last one (truncating it to its last
// intact record, or removing it if it has no intact header), logging a
// warning; so that once new segments follow it, it does not read as
// corruption. A corrupt segment fails Open with the Reader's error. Open then
// starts a new segment, numbered after the existing ones.
//
// Call Replay before Open to see what a torn tail dropped; Replay after Open
// reads the repaired log just as well.
func Open(dir string, opts Options) (*Writer, error) {
	opts = opts.withDefaults()
	w := &Writer{fs: opts.FS, dir: dir, opts: opts, flusherDone: make(chan struct{})}
	w.mu.writerHot = new(writerHot)
	w.work.L = &w.mu
	w.done.L = &w.mu
	// Synced into its parent: a WAL whose directory a power loss can
	// undo is no log at all.
	if err := vfs.MkdirAllSync(w.fs, dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "wal: create %s", dir)
	}
	lastNum, err := w.recover()
	if err != nil {
		return nil, err
	}
	f, seg, err := w.createSegment(lastNum + 1)
	if err != nil {
		return nil, err
	}
	w.file = f
	w.setActiveLocked(seg)
	go w.flushLoop()
	return w, nil
}

// recover scans the existing segments, repairs a torn last one and returns
// the highest segment number in dir.
func (w *Writer) recover() (lastNum uint64, _ error) {
	paths, err := ListSegments(w.fs, w.dir)
	if err != nil {
		return 0, err
	}
	r := NewReader(w.fs, paths)
	for {
		_, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = r.Close()
			return 0, errors.Wrapf(err, "wal: open %s", w.dir)
		}
	}
	_ = r.Close()
	removed := false
	last, lastSynced := "", false // the newest segment kept, and whether it is fsync'd
	for _, s := range r.segs {
		num, _ := parseSegmentName(filepath.Base(s.path))
		lastNum = max(lastNum, num)
		switch {
		case !s.hasHeader:
			// Only the last segment can lack a header (else the Reader
			// failed): nothing in it was ever written whole.
			w.opts.Logger.Warn("wal: removing a segment without an intact header", "segment", s.path)
			if err := w.fs.Remove(s.path); err != nil {
				return 0, errors.Wrapf(err, "wal: remove %s", s.path)
			}
			removed = true
			continue
		case s.torn, s.zeroTail:
			// A zero tail is a mapped segment's space allocated ahead,
			// not damage: cut quietly, so that the segment does not end
			// in zeros once another follows it.
			if s.torn {
				st := r.Stats()
				w.opts.Logger.Warn("wal: truncating a torn tail", "segment", s.path,
					"offset", st.TornOffset, "droppedBytes", st.DroppedBytes)
			}
			if err := w.truncate(s.path, s.validSize); err != nil {
				return 0, err
			}
		}
		last, lastSynced = s.path, s.torn || s.zeroTail // truncate synced it
		w.mu.closed = append(w.mu.closed, segment{num: num, path: s.path, maxSeq: s.maxSeq, size: s.validSize})
	}
	// The newest segment stops being the last one: fsync it before a new
	// one follows it. The process that wrote it may have been killed with
	// SYNC_WAL entries (or just the header) in the page cache; the region
	// replays them and builds on them, and a power loss must not tear them
	// off once a later segment exists (the log would read as corrupt in the
	// middle and the region would not open). Found by TestPowerLossAfterRestart.
	if last != "" && !lastSynced {
		if err := w.syncFile(last); err != nil {
			return 0, err
		}
	}
	if removed {
		if err := vfs.SyncDir(w.fs, w.dir); err != nil {
			return 0, errors.Wrapf(err, "wal: sync %s", w.dir)
		}
	}
	return lastNum, nil
}

// truncate cuts path to size and makes that durable.
func (w *Writer) truncate(path string, size int64) error {
	if err := w.fs.Truncate(path, size); err != nil {
		return errors.Wrapf(err, "wal: truncate %s", path)
	}
	return w.syncFile(path)
}

// syncFile fsyncs the file at path.
func (w *Writer) syncFile(path string) error {
	f, err := w.fs.Open(path)
	if err != nil {
		return errors.Wrapf(err, "wal: open %s", path)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "wal: sync %s", path)
}

// createSegment creates segment num with its header and makes its directory
// entry durable. The header itself is not synced: a segment whose header did
// not survive a crash is the last one and is treated as torn.
func (w *Writer) createSegment(num uint64) (vfs.File, segment, error) {
	path := filepath.Join(w.dir, SegmentName(num))
	f, err := w.fs.Create(path)
	if err != nil {
		return nil, segment{}, errors.Wrapf(err, "wal: create %s", path)
	}
	hdr := appendSegmentHeader(nil)
	if _, err := f.Write(hdr); err != nil {
		_ = f.Close()
		return nil, segment{}, errors.Wrapf(err, "wal: write %s", path)
	}
	w.writes.Add(1)
	w.bytesWritten.Add(uint64(len(hdr)))
	if err := vfs.SyncDir(w.fs, w.dir); err != nil {
		_ = f.Close()
		return nil, segment{}, errors.Wrapf(err, "wal: sync %s", w.dir)
	}
	if !w.opts.PlainWrites {
		f = mapSegment(f, int64(len(hdr)))
	}
	return f, segment{num: num, path: path, size: int64(len(hdr))}, nil
}

// Append adds an entry for key and edit to the log and returns its
// transaction id, for Sync. It never waits for I/O: it copies the entry into
// the writer's buffer, and a later Sync (or the flush goroutine) writes it
// out. Entries are logged in the order of Append calls, so the region calls
// Append inside mvcc.Control.BeginWith, setting key.SeqNum to the write
// number: then sequence ids increase along the log (see the package
// comment).
//
// Append encodes the entry under the writer's lock; AppendPrepared, with the
// entry encoded beforehand, holds it only for a copy.
//
// Append does not keep key, edit or their slices. An error (an invalid cell,
// an entry above record.MaxPayloadSize, a broken or closed writer) means the
// entry was not appended.
func (w *Writer) Append(key *Key, edit *Edit) (txid uint64, _ error) {
	if err := validateEdit(key, edit); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendableLocked(); err != nil {
		return 0, err
	}
	buf, start := record.Start(w.mu.pending)
	buf = appendEntry(buf, key, edit)
	buf, err := record.Finish(buf, start)
	w.mu.pending = buf
	if err != nil {
		return 0, errors.Wrapf(err, "wal: entry of sequence id %d", key.SeqNum)
	}
	return w.appendedLocked(key.SeqNum), nil
}

// AppendPrepared is Append for an entry encoded by p.Prepare, with sequence
// id seq in place of the one it was prepared with. It copies the record and
// patches the sequence id and the checksum in, which takes constant time
// (see PreparedEntry). p may be prepared again once it returns.
func (w *Writer) AppendPrepared(p *PreparedEntry, seq uint64) (txid uint64, _ error) {
	if len(p.buf) == 0 {
		return 0, errors.AssertionFailedf("wal: AppendPrepared of an entry that was not prepared")
	}
	if seq == 0 {
		return 0, errors.AssertionFailedf("wal: Append of an entry without a sequence id")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendableLocked(); err != nil {
		return 0, err
	}
	if txid, ok := w.appendDirectLocked(p, seq); ok {
		return txid, nil
	}
	buf, err := p.appendTo(w.mu.pending, seq)
	w.mu.pending = buf
	if err != nil {
		return 0, err
	}
	return w.appendedLocked(seq), nil
}

// directFile is a segment file a record can be framed straight into
// (a mapped segment: a copy into the mapping is the write).
type directFile interface {
	// room returns the n bytes after what was written, or nil if they
	// cannot be had without I/O. They are to be filled with orderedCopy
	// (see there).
	room(n int) []byte
	// wrote records that n more bytes were written.
	wrote(n int)
}

// appendDirectLocked writes p's record, with sequence id seq, straight into
// a mapped active segment when the file is free and everything appended
// before is written, and reports whether it did; the entry is then written
// to the OS when it returns, so SyncWAL callers do not wait for a round.
//
// Why: a round is two more acquisitions of w.mu, a copy out of pending and
// a wake-up of every waiting caller, per write with a lone writer and per
// group with many; with many writers on two processors each of those moved
// the writer's lines between the processors' caches and parked goroutines
// on the done condition. The copy into the mapping is the copy into
// pending, done once, under the lock it was done under already (the mvcc
// lock too: records go into the segment in sequence-id order).
//
// It leaves to rounds everything but the copy: a record whose sequence id
// changes its length (re-framed), one that does not fit in the chunk
// mapped, and any segment due for a writeback, a roll or a close.
//
// REQUIRES: w.mu held, the writer appendable.
func (w *Writer) appendDirectLocked(p *PreparedEntry, seq uint64) (uint64, bool) {
	if w.mu.busy || len(w.mu.pending) != 0 || w.mu.written != w.mu.appended ||
		w.mu.rollReq > w.mu.rollDone || w.segmentFullLocked() || !p.sameLength(seq) {
		return 0, false
	}
	// Only now, with the file not busy, may w.file be read: the busy
	// goroutine replaces it without w.mu on a roll.
	df, ok := w.file.(directFile)
	if !ok {
		return 0, false
	}
	n := p.Size()
	room := df.room(n)
	if room == nil {
		return 0, false
	}
	p.setSeq(seq) // same length, checked above
	orderedCopy(room, p.buf)
	df.wrote(n)
	w.mu.activeSize += int64(n)
	w.mu.activeMaxSeq = max(w.mu.activeMaxSeq, seq)
	w.mu.appended++
	w.setWrittenLocked(w.mu.appended)
	w.mu.directWrites++
	w.mu.directBytes += uint64(n)
	w.checkWriteBackLocked()
	return w.mu.appended, true
}

// setWrittenLocked moves mu.written (and its mirror) to txid.
func (w *Writer) setWrittenLocked(txid uint64) {
	w.mu.written = txid
	w.mu.writtenMirror.Store(txid)
}

func (w *Writer) appendableLocked() error {
	if w.mu.err != nil {
		return w.mu.err
	}
	if w.mu.closing {
		return ErrClosed
	}
	return nil
}

// appendedLocked accounts for an entry of sequence id seq just added to
// pending and returns its txid.
func (w *Writer) appendedLocked(seq uint64) uint64 {
	w.mu.appended++
	w.mu.pendingMaxSeq = max(w.mu.pendingMaxSeq, seq)
	if !w.mu.asyncArmed {
		w.mu.asyncArmed = true
		if w.mu.asyncTimer == nil {
			w.mu.asyncTimer = time.AfterFunc(w.opts.AsyncFlushInterval, w.asyncFlushDue)
		} else {
			w.mu.asyncTimer.Reset(w.opts.AsyncFlushInterval)
		}
	}
	return w.mu.appended
}

func (w *Writer) asyncFlushDue() {
	w.mu.Lock()
	w.mu.asyncArmed = false
	w.mu.asyncDue = true
	w.work.Signal()
	w.mu.Unlock()
}

// Sync waits until the entry txid (and every entry appended before it) is as
// durable as d asks (see Durability): SkipWAL and AsyncWAL do not wait
// (AsyncWAL waits like SyncWAL only while more than
// Options.MaxAsyncPendingBytes are unwritten), SyncWAL and UseDefault wait
// until it has been written to the OS, FSyncWAL until it has been fsync'd.
// Concurrent callers share writes and fsyncs: a caller that finds no write
// in progress writes (and fsyncs, if anyone waits for that) everything
// appended so far itself, and the others wait for it.
//
// If the write or fsync that would serve txid fails, Sync returns that error
// to every caller it would have served and the writer is broken: every later
// Append, Roll and unsatisfied Sync returns the same error, until the WAL is
// closed and opened again, or revived by Reset. An entry for which Sync
// returned an error was not acknowledged; if the writer is closed and the
// WAL opened again without a Reset, it may still be in the log and be
// replayed (as after any crash): its outcome is unknown. Reset removes it.
func (w *Writer) Sync(txid uint64, d Durability) error {
	if d == SkipWAL {
		return nil
	}
	if (d == SyncWAL || d == UseDefault) && w.mu.writtenMirror.Load() >= txid && txid > w.mu.lostThrough.Load() {
		// Written already (most often by appendDirectLocked), and not
		// among the txids a Reset dropped: lostThrough is stored before
		// written moves past them, so seeing that written means seeing
		// it. Txids appended after a Reset keep the fast path.
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if txid > w.mu.appended {
		return errors.AssertionFailedf("wal: Sync of txid %d, but only %d appended", txid, w.mu.appended)
	}
	if err := w.lostLocked(txid); err != nil {
		return err
	}
	fsync := false
	switch d {
	case AsyncWAL:
		if len(w.mu.pending) < w.opts.MaxAsyncPendingBytes {
			return w.mu.err
		}
	case UseDefault, SyncWAL:
	case FSyncWAL:
		fsync = true
	default:
		return errors.AssertionFailedf("wal: unknown durability %d", d)
	}
	for lost := len(w.mu.lost); ; {
		if len(w.mu.lost) != lost {
			// A Reset while we waited may have dropped txid, and it moved
			// written and synced past it.
			if err := w.lostLocked(txid); err != nil {
				return err
			}
			lost = len(w.mu.lost)
		}
		if fsync && w.mu.synced >= txid || !fsync && w.mu.written >= txid {
			return nil
		}
		if w.mu.err != nil {
			return w.mu.err
		}
		if fsync && txid > w.mu.syncReq {
			w.mu.syncReq = txid
		}
		if !w.mu.busy && !w.mu.closing && !(fsync && w.mu.written >= txid && w.mu.syncing) {
			// No one is writing: lead a round. A lone writer so writes its
			// own entry without waking any goroutine. (An entry written
			// and waiting for an fsync waits for the one in progress to
			// end before it leads the next.)
			w.leadLocked()
			continue
		}
		// The round in progress (or the flush goroutine, while closing)
		// wakes us when it ends; then our entry is written or we lead.
		w.done.Wait()
	}
}

// SyncAll fsyncs every entry appended so far, as a Sync with FSyncWAL of
// the last one would; it returns at once if they are all fsync'd. The
// region calls it before a flush writes its store files, so that no store
// file holds an entry the log could still lose.
func (w *Writer) SyncAll() error {
	w.mu.Lock()
	txid, done := w.mu.appended, w.mu.appended <= w.mu.synced
	w.mu.Unlock()
	if done {
		return nil
	}
	// A txid above synced was appended after any Reset (which leaves
	// synced at appended), so no Reset has dropped it yet.
	return w.Sync(txid, FSyncWAL)
}

// lostLocked returns the error that lost txid, if Reset dropped it.
func (w *Writer) lostLocked(txid uint64) error {
	for _, l := range w.mu.lost {
		if l.from <= txid && txid <= l.through {
			return l.err
		}
	}
	return nil
}

// leadLocked runs one round as a Sync caller: it writes everything pending
// with one write, fsyncs if a caller waits for that, wakes the callers
// waiting, and rolls the segment if the round left it full.
//
// REQUIRES: w.mu is held, no one is busy, the writer is neither broken nor
// closing. It releases w.mu around the I/O.
func (w *Writer) leadLocked() {
	w.mu.busy = true
	buf, through := w.takePendingLocked()
	sync := w.mu.syncReq > w.mu.synced && !w.mu.syncing
	// A round with entries to write fsyncs them before it reports them
	// written, as one unit, so that a failed fsync fails every caller the
	// round serves and Reset drops its entries. A round with nothing to
	// write (a flush's SyncAll, most often: every entry already written by
	// SyncWAL rounds) fsyncs with the file free (see syncFreeLocked).
	free := sync && len(buf) == 0
	path := w.mu.active.path
	w.mu.Unlock()
	err := w.writeAndSync(path, buf, sync && !free)
	w.mu.Lock()
	if !w.finishRoundLocked(buf, through, sync && !free, err) {
		return
	}
	if free && !w.syncFreeLocked(path, through) {
		return
	}
	w.checkWriteBackLocked()
	if w.segmentFullLocked() && !w.mu.syncing {
		// The round left the segment full. The flush goroutine rolls it,
		// not this caller: a roll's first fsync takes milliseconds (tens
		// on a slow disk), and in the region this caller's write is in
		// flight until it returns (its mvcc entry not complete), so every
		// other writer would wait for that fsync too. The file is handed
		// over busy, so that no round slips in before the roll; the roll
		// frees it for its first fsync, and writers wait only for the
		// short rest (see rollLocked).
		w.mu.rollHandoff = true
		w.work.Signal()
		// The flush goroutine may be in rollLocked already, waiting on
		// done for the file; finishRoundLocked's broadcast may have come
		// before rollHandoff was set (syncFreeLocked releases the lock in
		// between), and then this is its only wake-up.
		w.done.Broadcast()
		return
	}
	w.mu.busy = false
	if w.mu.closing || w.mu.rollReq > w.mu.rollDone || w.mu.asyncDue && w.mu.appended > w.mu.written ||
		w.mu.writeBackDue {
		// The flush goroutine waits for the file to be free. Signal only
		// then: waking it for nothing would cost a lone writer the
		// goroutine switch this design avoids.
		w.work.Signal()
	}
}

// segmentFullLocked reports whether the active segment is due to be rolled
// for its size. REQUIRES: w.mu held.
func (w *Writer) segmentFullLocked() bool {
	return w.mu.activeSize >= w.opts.RollSize && !w.mu.closing
}

// syncingCloser is a segment file whose Close fsyncs everything written
// to it (mapped segments).
type syncingCloser interface {
	closeSyncs()
}

// writeBacker is a segment file that can start the writeback of a range
// of its pages without waiting for it and without an fsync (mapped
// segments: sync_file_range).
type writeBacker interface {
	StartWriteBack(from, to int64) error
}

// pageSize is the page size writeBackFreeLocked rounds down to; a
// multiple of it is a page boundary on every platform we run on.
const pageSize = 4096

// checkWriteBackLocked marks the writeback of the active segment due, and
// wakes the flush goroutine for it, once the segment has grown
// writeBackBytes past syncedSize, if it can be written back (mapped).
//
// REQUIRES: w.mu held, by the busy goroutine or with the file free (it
// reads w.file).
func (w *Writer) checkWriteBackLocked() {
	if !w.mu.writeBackDue && w.mu.activeSize-w.mu.syncedSize >= w.writeBackBytes() {
		if _, ok := w.file.(writeBacker); ok {
			w.mu.writeBackDue = true
			w.work.Signal()
		}
	}
}

// writeBackFreeLocked starts the writeback of what the active segment
// holds past syncedSize, to its last whole page, so that the next fsync (a
// roll's, which writers wait for) finds little left. It only queues the
// I/O, and it is not an fsync: synced does not move. A failure is left to
// that fsync to report. A segment that cannot (not mapped) is left as it
// was.
//
// Why the flush goroutine, with the file free: queueing the writeback of
// an eighth of a roll (8 MiB by default) takes a millisecond or two, and a
// round that did it held the file busy meanwhile, so that every writer
// waited for it, once every 8 MiB of log. Now rounds and direct appends go
// on; only the pages below the one being written are written back, and no
// store changes them.
//
// REQUIRES: w.mu held, by the flush goroutine, no one busy or syncing, the
// writer not broken. It releases w.mu around the system call, with syncing
// set: no roll, Close or Reset replaces w.file meanwhile.
func (w *Writer) writeBackFreeLocked() {
	w.mu.writeBackDue = false
	wb, ok := w.file.(writeBacker)
	from, to := w.mu.syncedSize, w.mu.activeSize&^(pageSize-1)
	if !ok || to <= from {
		return
	}
	w.mu.syncing = true
	w.mu.Unlock()
	if writeBackHook != nil {
		writeBackHook()
	}
	err := wb.StartWriteBack(from, to)
	w.mu.Lock()
	w.mu.syncing = false
	if err == nil {
		w.mu.syncedSize = max(w.mu.syncedSize, to)
	}
	// Callers waiting for the fsync in progress to end (an FSyncWAL Sync,
	// Reset) may go on.
	w.done.Broadcast()
}

// writeBackHook, if set (by tests), runs in writeBackFreeLocked before the
// system call, without w.mu.
var writeBackHook func()

// writeBackBytes is how far the active segment may grow past its last
// fsync or writeback before the flush goroutine starts writing it back
// (see checkWriteBackLocked): an eighth of a roll, and at least a chunk,
// so that small test segments roll without it.
func (w *Writer) writeBackBytes() int64 { return max(w.opts.RollSize/8, mapChunk) }

// syncFreeLocked fsyncs the active segment, through txid through, with
// the file not busy, so that other callers' rounds write meanwhile; it
// then takes the file again (busy) and reports true, unless the fsync
// failed (the writer is then broken) or another round has the file by
// then, which finishes what this one would have (rolling, waking the
// flush goroutine): then it returns false.
//
// REQUIRES: w.mu held, by the busy goroutine, no fsync in progress. It
// releases w.mu around the fsync.
func (w *Writer) syncFreeLocked(path string, through uint64) bool {
	size := w.mu.activeSize // no roll while syncing: the segment stays
	w.mu.busy, w.mu.syncing = false, true
	w.done.Broadcast() // callers waiting to write may lead now
	w.mu.Unlock()
	// No roll, Close or Reset replaces w.file while syncing is set.
	err := w.file.Sync()
	w.mu.Lock()
	w.mu.syncing = false
	defer w.done.Broadcast()
	if err != nil {
		if w.mu.err == nil {
			w.mu.err = errors.Wrapf(err, "wal: sync %s", path)
		}
		w.work.Signal() // the flush goroutine answers roll requests and Close
		return false
	}
	w.syncs.Add(1)
	w.mu.synced = max(w.mu.synced, through)
	w.mu.syncedSize = max(w.mu.syncedSize, size)
	if w.mu.busy || w.mu.err != nil {
		w.work.Signal() // the flush goroutine may wait for the fsync to end
		return false
	}
	w.mu.busy = true
	return true
}

// takePendingLocked takes the pending entries for a round and returns them
// with the txid of the last one.
func (w *Writer) takePendingLocked() (buf []byte, through uint64) {
	buf, through = w.mu.pending, w.mu.appended
	w.mu.pending, w.mu.spare = w.mu.spare[:0], nil
	w.mu.activeMaxSeq = max(w.mu.activeMaxSeq, w.mu.pendingMaxSeq)
	w.mu.pendingMaxSeq = 0
	w.mu.asyncDue = false
	return buf, through
}

// finishRoundLocked records the outcome of a round that wrote buf (entries
// up to through) and fsynced if sync, and wakes the callers waiting. On
// error it breaks the writer and clears busy, and returns false; on success
// busy stays set, for the caller to clear or hand over.
func (w *Writer) finishRoundLocked(buf []byte, through uint64, sync bool, err error) bool {
	defer w.done.Broadcast()
	if err != nil {
		w.mu.err = err
		w.mu.busy = false
		// The flush goroutine answers roll requests and Close.
		w.work.Signal()
		return false
	}
	w.setWrittenLocked(through)
	w.mu.activeSize += int64(len(buf))
	if sync {
		w.mu.synced = through
	}
	if cap(buf) <= maxSpareBuffer {
		w.mu.spare = buf[:0]
	}
	return true
}

// Roll writes out what is pending into the active segment, fsyncs and closes
// it, and starts a new one; it returns when the new segment is in use.
// Entries appended while it runs may go to either segment.
func (w *Writer) Roll() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.err != nil {
		return w.mu.err
	}
	if w.mu.closing {
		return ErrClosed
	}
	w.mu.rollReq++
	req := w.mu.rollReq
	w.work.Signal()
	for w.mu.rollDone < req && w.mu.err == nil {
		w.done.Wait()
	}
	if w.mu.rollDone < req {
		return w.mu.err
	}
	return nil
}

// Prune deletes every segment other than the active one whose entries all
// have sequence ids at or below flushedSeq (segments with no entries
// included), and returns how many it deleted. The region calls it after a
// flush has made everything up to flushedSeq durable in store files.
//
// It assumes one sequence space, that of the region the WAL belongs to.
func (w *Writer) Prune(flushedSeq uint64) (int, error) {
	w.mu.Lock()
	var victims []segment
	keep := w.mu.closed[:0]
	for _, s := range w.mu.closed {
		if s.maxSeq <= flushedSeq {
			victims = append(victims, s)
		} else {
			keep = append(keep, s)
		}
	}
	w.mu.closed = keep
	w.mu.Unlock()
	var err error
	for _, s := range victims {
		if rerr := w.fs.Remove(s.path); rerr != nil {
			err = errors.CombineErrors(err, errors.Wrapf(rerr, "wal: remove %s", s.path))
		}
	}
	if len(victims) > 0 {
		if serr := vfs.SyncDir(w.fs, w.dir); serr != nil {
			err = errors.CombineErrors(err, errors.Wrapf(serr, "wal: sync %s", w.dir))
		}
	}
	return len(victims), err
}

// Err returns the error that broke the writer (see Sync), or nil if it is
// not broken.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

// Reset revives a broken writer, once the cause of the failure (a full
// disk, say) is gone. It truncates the active segment to the bytes of its
// last successful write, so that the entries whose write or fsync failed
// are not in the log (no caller was told they were durable: each got the
// error), fsyncs it, and starts a new segment. It drops the entries
// appended but not yet written: a Sync of any of them, or of an entry whose
// bytes it truncated, returns the error that broke the writer. Entries
// appended after Reset go to the new segment and are synced afresh, so no
// later Sync can vouch for bytes from before the failure that were never
// made durable.
//
// Entries acknowledged before the failure stay in the log: FSyncWAL ones
// were fsync'd by an fsync that succeeded; SyncWAL ones (written, not
// fsync'd) are as safe as the operating system kept them (after a failed
// fsync, Linux may have dropped dirty pages of the file: SyncWAL never
// promised to survive that). AsyncWAL entries among the dropped ones were
// acknowledged without waiting: they are lost from the log, as on a crash.
//
// If Reset fails (the fault persists), the writer stays broken and Reset
// may be called again. It returns nil at once if the writer is not broken,
// and ErrClosed after Close.
//
// HBase rolls the WAL when a sync fails and aborts the region server when
// it cannot; Reset is the roll, and the region decides when to call it.
func (w *Writer) Reset() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closing {
		return ErrClosed
	}
	if w.mu.err == nil {
		return nil
	}
	// While the writer is broken no one starts I/O: holding w.mu, Reset
	// owns the file once the I/O in progress is done. A failed fsync run
	// with the file free (syncFreeLocked) breaks the writer while another
	// caller's round may still be writing: wait for that round too (it, or
	// the flush goroutine it hands the file to, frees the file and
	// broadcasts). Close or another Reset may come meanwhile.
	for w.mu.syncing || w.mu.busy {
		w.done.Wait()
	}
	if w.mu.closing {
		return ErrClosed
	}
	cause := w.mu.err
	if cause == nil {
		return nil
	}
	if w.file != nil {
		_ = w.file.Close()
		w.file = nil
	}
	old := w.activeLocked()
	if err := w.truncate(old.path, old.size); err != nil {
		return errors.Wrapf(err, "wal: reset after %v", cause)
	}
	f, seg, err := w.createSegment(old.num + 1)
	if err != nil {
		return errors.Wrapf(err, "wal: reset after %v", cause)
	}
	w.file = f
	if w.mu.appended > w.mu.written {
		w.mu.lost = append(w.mu.lost, lostRange{from: w.mu.written + 1, through: w.mu.appended, err: cause})
		w.mu.lostThrough.Store(w.mu.appended)
	}
	w.setWrittenLocked(w.mu.appended)
	w.mu.synced = w.mu.appended
	w.mu.pending, w.mu.pendingMaxSeq, w.mu.asyncDue = w.mu.pending[:0], 0, false
	// old.maxSeq may count dropped entries: that only keeps it from
	// Prune a little longer.
	w.mu.closed = append(w.mu.closed, old)
	w.setActiveLocked(seg)
	w.mu.err = nil
	w.opts.Logger.Warn("wal: reset after a failure: truncated the active segment to its last good write and started a new one",
		"segment", old.path, "size", old.size, "cause", cause.Error())
	w.done.Broadcast()
	return nil
}

// Segments returns the segments the writer tracks, oldest first; the last
// one is the active segment.
func (w *Writer) Segments() []SegmentInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]SegmentInfo, 0, len(w.mu.closed)+1)
	for _, s := range w.mu.closed {
		out = append(out, s.info(false))
	}
	return append(out, w.activeLocked().info(true))
}

// Metrics returns the writer's counters.
func (w *Writer) Metrics() Metrics {
	w.mu.Lock()
	appends, directWrites, directBytes := w.mu.appended, w.mu.directWrites, w.mu.directBytes
	w.mu.Unlock()
	return Metrics{
		Appends:      appends,
		Writes:       w.writes.Load() + directWrites,
		Syncs:        w.syncs.Load(),
		Rolls:        w.rolls.Load(),
		BytesWritten: w.bytesWritten.Load() + directBytes,
	}
}

// Close writes out and fsyncs everything appended, closes the active
// segment and stops the flush goroutine. It returns the writer's error, if
// it is broken. Calling Close again returns ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.mu.closing {
		w.mu.Unlock()
		<-w.flusherDone
		return ErrClosed
	}
	w.mu.closing = true
	if w.mu.asyncTimer != nil {
		w.mu.asyncTimer.Stop()
	}
	w.work.Signal()
	w.mu.Unlock()
	<-w.flusherDone
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

// flushLoop is the flush goroutine, which does the I/O no Sync caller
// waits for: it writes AsyncWAL entries out within AsyncFlushInterval,
// rolls the segment when asked or when a round left it full, and on Close
// writes out and fsyncs everything and closes the file. It waits for the
// file to be free (see Writer.mu.busy), and Sync callers wait for it in
// turn; a round is otherwise as in leadLocked.
func (w *Writer) flushLoop() {
	defer close(w.flusherDone)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.done.Broadcast()
	for {
		if w.mu.rollHandoff {
			// The file is ours, busy (see leadLocked). A failed fsync
			// since (syncFreeLocked) leaves it to be freed here.
			w.mu.rollHandoff = false
			if w.mu.err == nil && !w.mu.closing {
				w.rollLocked()
			}
			w.mu.busy = false
			w.done.Broadcast()
			continue
		}
		if w.mu.err != nil {
			// Broken: answer roll requests with the error, exit on Close,
			// once no round is writing the file and no fsync is running
			// (a failed fsync with the file free breaks the writer while
			// another caller's round may still be writing it).
			w.mu.rollDone = w.mu.rollReq
			w.done.Broadcast()
			if w.mu.closing && !w.mu.busy && !w.mu.syncing {
				if w.file != nil {
					_ = w.file.Close()
					w.file = nil
				}
				return
			}
			w.work.Wait()
			continue
		}
		if w.mu.busy || w.mu.syncing {
			// A Sync caller is writing or fsyncing; it signals work when
			// done if there is any for us.
			w.work.Wait()
			continue
		}
		if w.mu.writeBackDue && !w.mu.closing {
			w.writeBackFreeLocked()
			continue
		}
		unwritten := w.mu.appended > w.mu.written
		roll := w.mu.rollReq > w.mu.rollDone || w.segmentFullLocked()
		write := unwritten && (w.mu.asyncDue || roll || w.mu.closing || w.mu.syncReq > w.mu.written)
		sync := w.mu.syncReq > w.mu.synced || (w.mu.closing && w.mu.synced < w.mu.appended)
		if !write && !sync && !roll {
			if !unwritten {
				w.mu.asyncDue = false
			}
			if w.mu.closing {
				if err := w.file.Close(); err != nil {
					w.mu.err = errors.Wrapf(err, "wal: close %s", w.mu.active.path)
				}
				w.file = nil
				return
			}
			w.work.Wait()
			continue
		}

		w.mu.busy = true
		through := w.mu.written
		var buf []byte
		if write {
			buf, through = w.takePendingLocked()
		}
		path := w.mu.active.path
		w.mu.Unlock()
		err := w.writeAndSync(path, buf, sync)
		w.mu.Lock()
		if !w.finishRoundLocked(buf, through, sync, err) {
			continue
		}
		if roll || w.segmentFullLocked() {
			w.rollLocked()
		}
		if w.mu.err == nil {
			w.mu.busy = false
		}
		// Callers that found the file busy wait to lead.
		w.done.Broadcast()
	}
}

// writeAndSync writes buf to the active file and fsyncs it if sync.
//
// REQUIRES: the caller is busy (see Writer.mu) and does not hold w.mu.
func (w *Writer) writeAndSync(path string, buf []byte, sync bool) error {
	if len(buf) > 0 {
		if _, err := w.file.Write(buf); err != nil {
			return errors.Wrapf(err, "wal: write %s", path)
		}
		w.writes.Add(1)
		w.bytesWritten.Add(uint64(len(buf)))
	}
	if sync {
		if err := w.file.Sync(); err != nil {
			return errors.Wrapf(err, "wal: sync %s", path)
		}
		w.syncs.Add(1)
	}
	return nil
}

// rollLocked fsyncs and closes the active segment and starts the next one.
// Every segment but the last is therefore complete and durable, which is
// what lets a reader call any damage in it corruption.
//
// REQUIRES: w.mu is held, by the busy goroutine, and everything taken
// from pending has been written. It releases w.mu around the I/O, and
// busy around an fsync first (others may write meanwhile). On error it
// breaks the writer and clears busy.
func (w *Writer) rollLocked() {
	if w.mu.written > w.mu.synced && !w.mu.syncing {
		// Fsync what is written with the file free first (a SyncWAL
		// segment is all unsynced: tens of milliseconds), so that
		// writers go on meanwhile, and hold them below only for the
		// fsync of what they wrote in between.
		num := w.mu.active.num
		if !w.syncFreeLocked(w.mu.active.path, w.mu.written) {
			if w.mu.err != nil {
				return
			}
			for w.mu.busy || w.mu.syncing {
				if w.mu.rollHandoff && !w.mu.syncing {
					// A round left the segment full and handed the
					// file to the flush goroutine, which is this
					// one: take it, busy, and roll.
					w.mu.rollHandoff = false
					break
				}
				w.done.Wait()
			}
			if w.mu.err != nil {
				w.mu.busy = false // (busy only if handed over)
				return
			}
			w.mu.busy = true
			if w.mu.active.num != num && w.mu.rollReq == w.mu.rollDone {
				// The round that had the file meanwhile rolled it, and
				// no roll was asked for since: rolling again would only
				// start an empty segment.
				return
			}
		}
	}
	req := w.mu.rollReq
	old := w.activeLocked()
	w.mu.Unlock()
	var f vfs.File
	var seg segment
	err := func() error {
		// Even with every entry synced (or none written): the header
		// was not, and a segment that is not the last must survive a
		// power loss whole. Found by TestPowerLossEmptyRoll. A mapped
		// segment's Close fsyncs (after cutting its zeros), and one
		// fsync is a millisecond less that writers wait for.
		if _, ok := w.file.(syncingCloser); !ok {
			if err := w.file.Sync(); err != nil {
				return errors.Wrapf(err, "wal: sync %s", old.path)
			}
		}
		w.syncs.Add(1)
		err := w.file.Close()
		w.file = nil
		if err != nil {
			return errors.Wrapf(err, "wal: close %s", old.path)
		}
		f, seg, err = w.createSegment(old.num + 1)
		return err
	}()
	w.mu.Lock()
	if err != nil {
		w.mu.err = err
		w.mu.busy = false
		w.done.Broadcast()
		w.work.Signal() // the flush goroutine answers roll requests and Close
		return
	}
	w.file = f
	w.mu.synced = w.mu.written
	w.mu.closed = append(w.mu.closed, w.activeLocked())
	w.setActiveLocked(seg)
	w.mu.rollDone = req
	w.rolls.Add(1)
	w.done.Broadcast()
}
