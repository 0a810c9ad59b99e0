package region

import (
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/memstore"
)

// requestFlush wakes the background flusher; it never blocks.
func (r *Region) requestFlush() {
	select {
	case r.flushReq <- struct{}{}:
	default:
	}
}

func (r *Region) flushedChan() <-chan struct{} {
	r.flushedMu.Lock()
	defer r.flushedMu.Unlock()
	return r.flushedCh
}

func (r *Region) notifyFlushed() {
	r.flushedMu.Lock()
	close(r.flushedCh)
	r.flushedCh = make(chan struct{})
	r.flushedMu.Unlock()
}

// flusher flushes when the memstores pass the flush size
// (hbase.hregion.memstore.flush.size).
func (r *Region) flusher() {
	defer close(r.bgDone)
	for {
		select {
		case <-r.stop:
			return
		case <-r.flushReq:
		}
		if err := r.flushIfFull(); err != nil && !r.closed.Load() {
			r.log.Error("region: flush failed; will retry", "region", r.dir, "err", err)
			select {
			case <-r.stop:
				return
			case <-time.After(time.Second):
			}
			r.requestFlush()
		}
	}
}

// flushIfFull flushes if the memstores are at the flush size. It checks
// with r.flushMu held: a request made while another flush ran (a caller's
// Flush, say) finds the memstores emptied by it, and must not write the
// few cells that arrived since as a file of their own.
func (r *Region) flushIfFull() error {
	if r.memHeap.Load() < r.opts.FlushSize {
		return nil
	}
	if flusherWaitHook != nil {
		flusherWaitHook()
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if r.memHeap.Load() < r.opts.FlushSize {
		return nil
	}
	_, err := r.flushLocked()
	return err
}

// flusherWaitHook, if set (by tests, before Open), runs in flushIfFull when
// the memstores are full, before it waits for flushMu.
var flusherWaitHook func()

// Flush writes every memstore to a new store file, publishes the files and
// drops the WAL segments they make redundant. Writes continue during the
// flush (into fresh memstores); only the snapshot step excludes them.
//
// If a flush fails (a full disk, say), the memstore snapshot it was writing
// stays in memory, readable and still covered by the WAL, and the next
// flush writes that same snapshot first, then (in the same call) what
// arrived since.
func (r *Region) Flush() error {
	_, err := r.FlushStores()
	return err
}

// FlushResult says what a flush did.
type FlushResult struct {
	// Files is the number of store files written: 0 when the memstores
	// were empty.
	Files int
	// Bytes is the memstore data flushed.
	Bytes int64
}

// FlushStores is Flush returning what it did.
func (r *Region) FlushStores() (FlushResult, error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.flushLocked()
}

// flushLocked is FlushStores with r.flushMu held.
func (r *Region) flushLocked() (FlushResult, error) { return r.flushStoresLocked(false) }

// flushStoresLocked is flushLocked; closing lets the last flush of Close
// run on a region that no longer takes writes.
//
// REQUIRES: r.flushMu is held.
func (r *Region) flushStoresLocked(closing bool) (FlushResult, error) {
	res, retried, err := r.flush(closing)
	if err == nil && retried {
		var more FlushResult
		more, _, err = r.flush(closing)
		res.Files += more.Files
		res.Bytes += more.Bytes
	}
	if err != nil {
		r.flushErr.Store(&err)
	} else {
		r.flushErr.Store(nil)
	}
	r.notifyFlushed()
	return res, err
}

// flushPlan is what a flush writes: each store's memstore snapshot and the
// sequence id it covers.
type flushPlan struct {
	stores []*Store
	snaps  []*memstore.Snapshot
	seqs   []encoding.SeqNum
	// flushSeq is the smallest of seqs: everything up to it is in store
	// files once the plan is written.
	flushSeq encoding.SeqNum
	// retried is set when a snapshot is one a failed flush left (so newer
	// cells may still be in the active segments).
	retried bool
}

// snapshotLocked snapshots every memstore.
//
// With the updates lock held no mutation is between its WAL append and its
// memstore insert, so every sequence id up to the write point is in a
// memstore (now a snapshot) or already in a file. A snapshot left by a
// failed flush holds only what was written before that flush: it keeps the
// sequence id it was taken at, and the WAL is pruned only below the
// smallest of the stores' ids. The families are those of this moment too:
// one added later holds only writes above the write point, and none is
// deleted while flushMu is held.
//
// REQUIRES: r.flushMu is held, and r.updates exclusively.
func (r *Region) snapshotLocked() flushPlan {
	stores := r.storeSet().stores
	p := flushPlan{stores: stores, snaps: make([]*memstore.Snapshot, len(stores)), seqs: make([]encoding.SeqNum, len(stores))}
	writePoint := encoding.SeqNum(r.mvcc.WritePoint())
	p.flushSeq = writePoint
	for i, s := range stores {
		p.snaps[i] = s.mem.Snapshot()
		var old bool
		p.seqs[i], old = s.snapshotSeq(p.snaps[i], writePoint)
		p.retried = p.retried || old
		p.flushSeq = min(p.flushSeq, p.seqs[i])
	}
	return p
}

// writeSnapshots writes the plan's snapshots to store files and publishes
// them; it returns the number of files written and the memstore bytes
// flushed. now (milliseconds) is when TTL is judged.
//
// REQUIRES: r.flushMu is held.
func (r *Region) writeSnapshots(p flushPlan, now int64) (files int, flushed int64, _ error) {
	tmp := filepath.Join(r.dir, ".tmp")
	for i, s := range p.stores {
		size := p.snaps[i].Segment.Size()
		sf, err := s.flushSnapshot(p.snaps[i], p.seqs[i], tmp, now)
		if err != nil {
			return files, flushed, errors.Wrapf(err, "region %s: flush of %s failed; its %d bytes stay in the memstore and the WAL", r.dir, s.name, size.DataSize)
		}
		r.addMemSize(size.Neg())
		flushed += size.DataSize
		if sf != nil {
			files++
		}
	}
	return files, flushed, nil
}

// flush flushes once; retried reports that it flushed a snapshot left by a
// failed flush (so newer cells may still be in the active segments).
func (r *Region) flush(closing bool) (res FlushResult, retried bool, _ error) {
	if r.closed.Load() && !closing {
		return res, false, ErrClosed
	}
	start := time.Now()
	r.hot.updates.Lock()
	p := r.snapshotLocked()
	r.hot.updates.Unlock()
	r.syncWALForFlush()

	files, flushed, err := r.writeSnapshots(p, r.now()) // TTL is judged once for the whole flush
	if err != nil {
		return res, p.retried, err
	}
	// Everything up to flushSeq is in store files now.
	if files > 0 || flushed > 0 {
		if err := r.rollWAL(); err != nil {
			return res, p.retried, errors.Wrapf(err, "region %s: rolling the WAL after a flush", r.dir)
		}
	}
	if _, err := r.wal.Prune(uint64(p.flushSeq)); err != nil {
		return res, p.retried, errors.Wrapf(err, "region %s: pruning the WAL", r.dir)
	}
	res = FlushResult{Files: files, Bytes: flushed}
	if files > 0 {
		r.noteFlushed(flushed)
		r.log.Debug("region: flushed", "region", r.dir, "files", files, "bytes", flushed, "seq", p.flushSeq, "took", time.Since(start))
		if !closing {
			r.storeFilesChanged()
		}
	}
	return res, p.retried, nil
}

// noteFlushed counts a flush that wrote files and asks for a compaction.
func (r *Region) noteFlushed(flushed int64) {
	r.lastFlush.Store(r.now())
	r.requestCompaction()
	r.stats.flushes.Add(1)
	r.stats.flushedBytes.Add(flushed)
}

// rollWAL rolls the WAL; a broken WAL is reset instead, which also starts
// a new segment.
func (r *Region) rollWAL() error {
	if !r.walBroken.Load() {
		err := r.wal.Roll()
		if err == nil {
			return nil
		}
		r.noteWALError()
		if !r.walBroken.Load() {
			return err
		}
	}
	return r.resetWAL()
}
