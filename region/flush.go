package region

import (
	"log/slog"
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
			slog.Error("region: flush failed; will retry", "region", r.dir, "err", err)
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
func (r *Region) Flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	err := r.flush()
	if err != nil {
		r.flushErr.Store(&err)
	} else {
		r.flushErr.Store(nil)
	}
	r.notifyFlushed()
	return err
}

func (r *Region) flush() error {
	if r.closed.Load() {
		return ErrClosed
	}
	start := time.Now()
	// With the updates lock held no mutation is between its WAL append
	// and its memstore insert, so every sequence id up to the write point
	// is in a memstore (now a snapshot) or already in a file.
	r.updates.Lock()
	snaps := make([]*memstore.Snapshot, len(r.stores))
	for i, s := range r.stores {
		snaps[i] = s.mem.Snapshot()
	}
	flushSeq := encoding.SeqNum(r.mvcc.WritePoint())
	r.updates.Unlock()

	tmp := filepath.Join(r.dir, ".tmp")
	var flushed int64
	files := 0
	for i, s := range r.stores {
		size := snaps[i].Segment.Size().DataSize
		sf, err := s.flushSnapshot(snaps[i], flushSeq, tmp)
		if err != nil {
			return errors.Wrapf(err, "region %s: flush", r.dir)
		}
		r.memSize.Add(-size)
		flushed += size
		if sf != nil {
			files++
		}
	}
	// Everything up to flushSeq is in store files now.
	if files > 0 || flushed > 0 {
		if err := r.wal.Roll(); err != nil {
			return errors.Wrapf(err, "region %s: rolling the WAL after a flush", r.dir)
		}
	}
	if _, err := r.wal.Prune(uint64(flushSeq)); err != nil {
		return errors.Wrapf(err, "region %s: pruning the WAL", r.dir)
	}
	if files > 0 {
		r.requestCompaction()
		r.stats.flushes.Add(1)
		r.stats.flushedBytes.Add(flushed)
		slog.Debug("region: flushed", "region", r.dir, "files", files, "bytes", flushed, "seq", flushSeq, "took", time.Since(start))
	}
	return nil
}
