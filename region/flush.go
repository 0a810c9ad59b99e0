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
		if r.memSize.Load() < r.opts.FlushSize {
			continue
		}
		if err := r.Flush(); err != nil && !r.closed.Load() {
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
	return r.flushStoresLocked()
}

// flushStoresLocked is FlushStores with r.flushMu held.
func (r *Region) flushStoresLocked() (FlushResult, error) {
	res, retried, err := r.flush()
	if err == nil && retried {
		var more FlushResult
		more, _, err = r.flush()
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

// flush flushes once; retried reports that it flushed a snapshot left by a
// failed flush (so newer cells may still be in the active segments).
func (r *Region) flush() (res FlushResult, retried bool, _ error) {
	if r.closed.Load() {
		return res, false, ErrClosed
	}
	start := time.Now()
	// With the updates lock held no mutation is between its WAL append
	// and its memstore insert, so every sequence id up to the write point
	// is in a memstore (now a snapshot) or already in a file. A snapshot
	// left by a failed flush holds only what was written before that
	// flush: it keeps the sequence id it was taken at, and the WAL is
	// pruned only below the smallest of the stores' ids.
	// The families are those of this moment too: one added later holds
	// only writes above writePoint, and none is deleted while flushMu is
	// held.
	r.updates.Lock()
	stores := r.storeSet().stores
	snaps := make([]*memstore.Snapshot, len(stores))
	seqs := make([]encoding.SeqNum, len(stores))
	writePoint := encoding.SeqNum(r.mvcc.WritePoint())
	flushSeq := writePoint
	for i, s := range stores {
		snaps[i] = s.mem.Snapshot()
		var old bool
		seqs[i], old = s.snapshotSeq(snaps[i], writePoint)
		retried = retried || old
		flushSeq = min(flushSeq, seqs[i])
	}
	r.updates.Unlock()
	r.syncWALForFlush()

	tmp := filepath.Join(r.dir, ".tmp")
	now := r.now() // TTL is judged once for the whole flush
	var flushed int64
	files := 0
	for i, s := range stores {
		size := snaps[i].Segment.Size().DataSize
		sf, err := s.flushSnapshot(snaps[i], seqs[i], tmp, now)
		if err != nil {
			return res, retried, errors.Wrapf(err, "region %s: flush of %s failed; its %d bytes stay in the memstore and the WAL", r.dir, s.name, size)
		}
		r.addMemSize(-size)
		flushed += size
		if sf != nil {
			files++
		}
	}
	// Everything up to flushSeq is in store files now.
	if files > 0 || flushed > 0 {
		if err := r.rollWAL(); err != nil {
			return res, retried, errors.Wrapf(err, "region %s: rolling the WAL after a flush", r.dir)
		}
	}
	if _, err := r.wal.Prune(uint64(flushSeq)); err != nil {
		return res, retried, errors.Wrapf(err, "region %s: pruning the WAL", r.dir)
	}
	res = FlushResult{Files: files, Bytes: flushed}
	if files > 0 {
		r.lastFlush.Store(r.now())
		r.requestCompaction()
		r.stats.flushes.Add(1)
		r.stats.flushedBytes.Add(flushed)
		r.log.Debug("region: flushed", "region", r.dir, "files", files, "bytes", flushed, "seq", flushSeq, "took", time.Since(start))
	}
	return res, retried, nil
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
