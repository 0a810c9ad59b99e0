package region

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/memstore"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/regionkv/regionkv/wal"
	"golang.org/x/sys/cpu"
)

// Put writes p.
func (r *Region) Put(p *Put) error { return r.PutContext(context.Background(), p) }

// PutContext is Put with a context whose deadline (and cancellation) also
// ends the waits for the row lock and for memstore space, as a server
// call's deadline does; the waits' own limits (RowLockWait, BlockingWait)
// still apply.
func (r *Region) PutContext(ctx context.Context, p *Put) error {
	s := getWriteScratch()
	defer s.release()
	s.one[0] = p
	return r.batch(ctx, s, s.one[:])
}

// Delete applies d.
func (r *Region) Delete(d *Delete) error { return r.DeleteContext(context.Background(), d) }

// DeleteContext is Delete with a context, as PutContext.
func (r *Region) DeleteContext(ctx context.Context, d *Delete) error {
	s := getWriteScratch()
	defer s.release()
	s.one[0] = d
	return r.batch(ctx, s, s.one[:])
}

// Batch applies puts and deletes, possibly for many rows, as one atomic
// write: one WAL entry and one sequence id, visible to readers all at once.
// Rows are locked shared, as HBase does for plain puts and deletes.
func (r *Region) Batch(ms []Mutation) error { return r.BatchContext(context.Background(), ms) }

// BatchContext is Batch with a context, as PutContext.
func (r *Region) BatchContext(ctx context.Context, ms []Mutation) error {
	s := getWriteScratch()
	defer s.release()
	return r.batch(ctx, s, ms)
}

func (r *Region) batch(ctx context.Context, s *writeScratch, ms []Mutation) error {
	if len(ms) == 0 {
		return nil
	}
	for _, m := range ms {
		if err := checkMutation(m); err != nil {
			return err
		}
	}
	if err := r.checkResources(ctx); err != nil {
		return err
	}
	if len(ms) == 1 {
		rl, err := r.locks.lock(ctx, ms[0].mutationRow(), false, r.opts.RowLockWait, nil)
		if err != nil {
			return err
		}
		defer r.locks.unlock(rl, false)
	} else {
		rows := s.rows[:0]
		for _, m := range ms {
			rows = append(rows, m.mutationRow())
		}
		slices.SortFunc(rows, bytes.Compare)
		rows = slices.CompactFunc(rows, bytes.Equal)
		s.rows = rows
		held, err := r.locks.lockRows(ctx, rows, false, r.opts.RowLockWait, s.held[:0])
		s.held = held
		if err != nil {
			return err
		}
		defer r.locks.unlockRows(held, false)
	}
	return r.applyLocked(s, ms)
}

// writeScratch is the memory of one write, reused across writes through
// writeScratchPool so that a write allocates nothing of its own: the cells,
// the WAL entry, the rows to lock and, for read-modify-writes, the read.
// Nothing in it outlives the write (the memstore and the WAL copy the cells).
type writeScratch struct {
	one   [1]Mutation
	cells []encoding.KeyValue
	entry wal.PreparedEntry
	rows  [][]byte
	held  []*rowLock
	// For readModifyWrite and CheckAndMutate: the read and its result,
	// used only while the row is locked.
	get   Get
	cur   Result
	order []int
	vals  []byte
	spans []rmwSpan
	// pending is a repeated column's value so far; in the scratch because
	// it is handed to the caller's next function, so would escape.
	pending encoding.KeyValue
	// newest holds the cells rmwRead's memstore lookups found, and hints
	// where they found each of get's columns, for the upsert that follows
	// under the same row lock.
	newest []*encoding.KeyValue
	hints  []memstore.Hint
	// row is a readModifyWrite's row, copied: its cells and hints refer to
	// the copy, so that the caller's request does not escape to the heap.
	row []byte
	// rowLock is the row lock of an exclusive write (readModifyWrite,
	// CheckAndMutate) while it holds it: see rowLocks.lock.
	rowLock rowLock
	// we is the mvcc entry of the write in commitLocked, begun with
	// BeginInto and ended with Finish, so that a write allocates none.
	// A scratch whose entry is not idle (a panic went through
	// commitLocked) is not pooled: a drain may still reach it. Drains on
	// other processors write it, so it has cache lines of its own.
	_  cpu.CacheLinePad
	we mvcc.WriteEntry
	_  cpu.CacheLinePad
}

var writeScratchPool = sync.Pool{New: func() any { return new(writeScratch) }}

// maxScratchCells and maxScratchBytes bound what a released scratch keeps:
// one huge batch must not pin its memory in the pool.
const (
	maxScratchCells = 1024
	maxScratchBytes = 1 << 20
)

func getWriteScratch() *writeScratch { return writeScratchPool.Get().(*writeScratch) }

// release returns s to the pool, first dropping its references to the
// caller's memory (rows, values), which the pool would otherwise keep alive.
func (s *writeScratch) release() {
	if cap(s.cells) > maxScratchCells || s.entry.Size() > maxScratchBytes || cap(s.vals) > maxScratchBytes ||
		cap(s.rows) > maxScratchCells || cap(s.spans) > maxScratchCells || !s.we.Idle() {
		return
	}
	s.one[0] = nil
	clear(s.cells)
	s.cells = s.cells[:0]
	clear(s.rows)
	s.rows = s.rows[:0]
	clear(s.held)
	s.held = s.held[:0]
	clear(s.get.Columns)
	s.get = Get{Columns: s.get.Columns[:0]}
	clear(s.spans)
	s.spans = s.spans[:0]
	clear(s.hints)
	s.hints = s.hints[:0]
	s.pending = encoding.KeyValue{}
	if cap(s.row) > maxReusedRowKey {
		s.row = nil
	}
	if cap(s.rowLock.key) > maxReusedRowKey {
		s.rowLock.key = nil
	}
	if m := s.cur.mem; m != nil && cap(m.buf) > maxScratchBytes {
		s.cur = Result{}
	}
	s.cur.reset() // its cells point at its own memory only
	writeScratchPool.Put(s)
}

// checkResources blocks a write while the memstores are over the blocking
// limit, as HBase's HRegion.checkResources does, so memory stays bounded
// when flushes fall behind.
//
// It first makes sure the WAL works (see resetWAL).
func (r *Region) checkResources(ctx context.Context) error {
	if err := r.checkWAL(); err != nil {
		return err
	}
	if m := r.opts.MemstoreLimit; m != nil {
		if err := m.wait(ctx, r, r.opts.BlockingWait); err != nil {
			return err
		}
	}
	limit := r.opts.FlushSize * int64(r.opts.BlockingMultiplier)
	if r.memHeap.Load() <= limit {
		return nil
	}
	r.stats.blockedWrites.Add(1)
	if last := r.lastBlockLog.Load(); time.Since(time.Unix(0, last)) > 10*time.Second &&
		r.lastBlockLog.CompareAndSwap(last, time.Now().UnixNano()) {
		r.log.Warn("region: blocking updates: memstore over the blocking limit; waiting for a flush",
			"region", r.dir, "memstoreHeapSize", r.memHeap.Load(), "limit", limit)
	}
	wait := waitLimit(ctx, r.opts.BlockingWait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for r.memHeap.Load() > limit {
		if r.closed.Load() {
			return ErrClosed
		}
		// The channel first, then the request: a flush that ends after the
		// request closes this channel. Taken after the request, it could
		// be the next flush's, and a flush that had already taken the
		// request and emptied the memstore in between would wake nobody.
		ch := r.flushedChan()
		if r.memHeap.Load() <= limit {
			break
		}
		r.requestFlush()
		if blockedWriteHook != nil {
			blockedWriteHook()
		}
		select {
		case <-ch:
			if p := r.flushErr.Load(); p != nil && r.memHeap.Load() > limit {
				return errors.Wrapf(ErrRegionTooBusy, "over memstore limit=%d, region=%s, and the last flush failed: %v", limit, r.dir, *p)
			}
		case <-deadline.C:
			return errors.Wrapf(ErrRegionTooBusy, "over memstore limit=%d, region=%s, memstore heap=%d after waiting %s",
				limit, r.dir, r.memHeap.Load(), wait)
		case <-ctx.Done():
			return errors.Wrapf(ErrRegionTooBusy, "over memstore limit=%d, region=%s, memstore heap=%d: %v",
				limit, r.dir, r.memHeap.Load(), context.Cause(ctx))
		}
	}
	return nil
}

// blockedWriteHook, if set (by tests), runs in checkResources when a blocked
// write has requested a flush, before it waits for one.
var blockedWriteHook func()

// commitHook, if set (by tests), runs in commitLocked between the MVCC
// begin and the memstore insert.
var commitHook func()

// checkMutation refuses what cannot be applied before anything is locked: a
// nil mutation (typed nil too, whose methods would panic) and a Put without
// cells (HBase refuses it too; a Delete without cells deletes the row).
func checkMutation(m Mutation) error {
	switch m := m.(type) {
	case nil:
		return invalidArgf("region: nil mutation")
	case *Put:
		if m == nil {
			return invalidArgf("region: nil *Put")
		}
		if len(m.Cells) == 0 {
			return invalidArgf("region: put of row %s has no cells", encoding.FormatBytes(m.Row))
		}
	case *Delete:
		if m == nil {
			return invalidArgf("region: nil *Delete")
		}
	default:
		return invalidArgf("region: unsupported mutation %T", m)
	}
	return nil
}

// applyLocked writes mutations whose rows the caller has locked (see
// commitLocked), building their cells in s.
func (r *Region) applyLocked(s *writeScratch, ms []Mutation) error {
	r.hot.updates.RLock()
	defer r.hot.updates.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	now := r.now()
	cells := s.cells[:0]
	dur := wal.SkipWAL
	for _, m := range ms {
		d := m.mutationDurability()
		if d == wal.UseDefault {
			d = r.opts.Durability
		}
		dur = max(dur, d)
		var err error
		switch m := m.(type) {
		case *Put:
			cells, err = r.putCells(cells, m, now)
			r.hot.puts.Add(1)
		case *Delete:
			cells, err = r.deleteCells(cells, m, now)
			r.hot.deletes.Add(1)
		default:
			err = invalidArgf("region: unsupported mutation %T", m)
		}
		if err != nil {
			s.cells = cells
			return err
		}
	}
	s.cells = cells
	return r.commitLocked(s, cells, dur, now, false)
}

// commitLocked writes cells whose rows the caller has locked, holding
// r.updates shared: WAL append (which assigns the sequence id), WAL sync per
// durability, memstore insert, then MVCC completion, in HBase's order.
//
// The WAL entry is encoded, checksum included, before the mvcc lock, which
// then covers only copying it into the WAL's buffer (wal.PreparedEntry).
//
// With upsert (an Increment's or Append's cells, HBase's applyToMemStore
// with delta), a cell of a family that keeps one version is upserted: the
// memstore drops the column's versions that no read can see any more
// (memstore.MemStore.Upsert), so that a counter's memstore does not grow by
// a cell per increment until the next flush.
func (r *Region) commitLocked(s *writeScratch, cells []encoding.KeyValue, dur wal.Durability, now int64, upsert bool) error {
	if len(cells) == 0 {
		return nil
	}
	if dur == wal.UseDefault {
		dur = r.opts.Durability
	}
	logged := dur != wal.SkipWAL
	if logged {
		// The sequence id is not known yet; the next write number is the
		// likely one, and AppendPrepared patches in the real one.
		key := wal.Key{EncodedRegionName: r.encodedKey, TableName: r.tableKey, SeqNum: r.mvcc.WritePoint() + 1, WriteTime: now}
		if err := s.entry.Prepare(&key, &wal.Edit{Cells: cells}); err != nil {
			return errors.Wrapf(err, "region %s: WAL", r.dir)
		}
	}
	var (
		txid   uint64
		walErr error
		seq    uint64
	)
	e := &s.we
	r.mvcc.BeginInto(e, func(n uint64) {
		seq = n
		if logged {
			txid, walErr = r.wal.AppendPrepared(&s.entry, n)
		}
	})
	// Every begun entry must complete, or the read point stalls for good:
	// should anything below panic, the entry completes on the way out.
	completed := false
	defer func() {
		if !completed {
			r.mvcc.Complete(e)
		}
	}()
	if commitHook != nil {
		commitHook()
	}
	if walErr == nil && logged {
		walErr = r.wal.Sync(txid, dur)
	}
	if walErr != nil {
		// Every begun entry must complete, or the read point stalls. The
		// cells are not in the memstore and were not acknowledged; a
		// broken WAL is reset (cutting them from the log) before the
		// next write.
		completed = true
		r.mvcc.Finish(e)
		r.noteWALError()
		return errors.Wrapf(walErr, "region %s: WAL", r.dir)
	}
	var added memstore.Size
	// The caller holds r.updates, so this is the set its cells were
	// checked against.
	set := r.storeSet()
	for i := range cells {
		cells[i].SeqNum = encoding.SeqNum(seq)
		st := set.byFamily[string(cells[i].Family)]
		if upsert && st.options().MaxVersions == 1 {
			// rmwRead's hints are in the order of the cells, one per
			// column, up to the first column it could not answer for.
			var h memstore.Hint
			if i < len(s.hints) {
				h = s.hints[i]
			}
			added = added.Add(st.mem.Upsert(&cells[i], r.oldestRead, h))
		} else {
			added = added.Add(st.mem.Add(&cells[i]))
		}
	}
	r.addMemSize(added)
	completed = true
	r.mvcc.Finish(e)
	if r.memHeap.Load() >= r.opts.FlushSize {
		r.requestFlush()
	}
	return nil
}

func (r *Region) checkRow(row []byte) error {
	if len(row) == 0 || len(row) > encoding.MaxRowLen {
		return invalidArgf("region: row length %d must be 1..%d", len(row), encoding.MaxRowLen)
	}
	return nil
}

func (r *Region) checkRowAndFamily(row, family []byte) error {
	if err := r.checkRow(row); err != nil {
		return err
	}
	if r.storeSet().byFamily[string(family)] == nil {
		return errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", family, r.dir)
	}
	return nil
}

func (r *Region) putCells(dst []encoding.KeyValue, p *Put, now int64) ([]encoding.KeyValue, error) {
	for _, c := range p.Cells {
		if err := r.checkRowAndFamily(p.Row, c.Family); err != nil {
			return nil, err
		}
		kv := encoding.KeyValue{Row: p.Row, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp,
			Type: encoding.TypePut, Value: c.Value, Tags: c.Tags}
		if p.TTL > 0 {
			kv.Tags = encoding.AppendTag(append([]byte(nil), kv.Tags...), encoding.TagTypeTTL,
				binary.BigEndian.AppendUint64(nil, uint64(p.TTL.Milliseconds())))
		}
		if kv.Timestamp == encoding.LatestTimestamp {
			kv.Timestamp = now
		}
		if kv.Timestamp < 0 {
			return nil, invalidArgf("region: negative timestamp %d", kv.Timestamp)
		}
		dst = append(dst, kv)
	}
	return dst, nil
}

func (r *Region) deleteCells(dst []encoding.KeyValue, d *Delete, now int64) ([]encoding.KeyValue, error) {
	if len(d.Cells) == 0 {
		// Delete the whole row: a DeleteFamily marker in every family.
		for _, s := range r.storeSet().stores {
			if err := r.checkRowAndFamily(d.Row, s.family); err != nil {
				return nil, err
			}
			dst = append(dst, encoding.KeyValue{Row: d.Row, Family: s.family, Timestamp: now, Type: encoding.TypeDeleteFamily})
		}
		return dst, nil
	}
	for _, c := range d.Cells {
		if err := r.checkRowAndFamily(d.Row, c.Family); err != nil {
			return nil, err
		}
		if !c.Type.IsDelete() {
			return nil, invalidArgf("region: delete carries a %s cell", c.Type)
		}
		kv := encoding.KeyValue{Row: d.Row, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp, Type: c.Type}
		if c.Type == encoding.TypeDeleteFamily || c.Type == encoding.TypeDeleteFamilyVersion {
			kv.Qualifier = nil
		}
		if kv.Timestamp == encoding.LatestTimestamp {
			kv.Timestamp = now
			if c.Type == encoding.TypeDelete {
				// "Delete the latest version": mark the newest cell's
				// timestamp, as HBase's prepareDeleteTimestamps does.
				res, err := r.get(&Get{Row: d.Row, Columns: []Column{{Family: c.Family, Qualifier: nonNil(c.Qualifier)}}})
				if err != nil {
					return nil, err
				}
				if len(res.Cells) > 0 {
					kv.Timestamp = res.Cells[0].Timestamp
				}
			}
		}
		dst = append(dst, kv)
	}
	return dst, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Increment adds to counters of one row under its exclusive lock and
// returns the new values.
func (r *Region) Increment(inc *Increment) (*Result, error) {
	return r.IncrementContext(context.Background(), inc)
}

// IncrementContext is Increment with a context, as PutContext.
func (r *Region) IncrementContext(ctx context.Context, inc *Increment) (*Result, error) {
	if inc == nil {
		return nil, invalidArgf("region: nil *Increment")
	}
	return r.readModifyWrite(ctx, inc.Row, inc.Durability, len(inc.Columns), func(i int) (fam, qual []byte) {
		return inc.Columns[i].Family, inc.Columns[i].Qualifier
	}, func(dst []byte, i int, cur *encoding.KeyValue) ([]byte, error) {
		var v int64
		if cur != nil {
			if len(cur.Value) != 8 {
				return dst, invalidArgf("region: field %s:%s is not a long, it's %d bytes wide",
					encoding.FormatBytes(cur.Family), encoding.FormatBytes(cur.Qualifier), len(cur.Value))
			}
			v = int64(binary.BigEndian.Uint64(cur.Value))
		}
		return binary.BigEndian.AppendUint64(dst, uint64(v+inc.Columns[i].Amount)), nil
	})
}

// Append appends to values of one row under its exclusive lock and returns
// the new values.
func (r *Region) Append(a *Append) (*Result, error) { return r.AppendContext(context.Background(), a) }

// AppendContext is Append with a context, as PutContext.
func (r *Region) AppendContext(ctx context.Context, a *Append) (*Result, error) {
	if a == nil {
		return nil, invalidArgf("region: nil *Append")
	}
	return r.readModifyWrite(ctx, a.Row, a.Durability, len(a.Cells), func(i int) (fam, qual []byte) {
		return a.Cells[i].Family, a.Cells[i].Qualifier
	}, func(dst []byte, i int, cur *encoding.KeyValue) ([]byte, error) {
		if cur != nil {
			dst = append(dst, cur.Value...)
		}
		return append(dst, a.Cells[i].Value...), nil
	})
}

// rmwSpan is one column written by a readModifyWrite: its new value is
// writeScratch.vals[off:end].
type rmwSpan struct {
	fam, qual []byte
	ts        int64
	off, end  int
}

// rmwResult holds the Result of a one-column readModifyWrite whose cell's
// bytes fit in buf (a counter's row, column and 8-byte value) in one
// allocation: the cell is the Result's inline one. 40 bytes take it to the
// 224-byte size class.
type rmwResult struct {
	res Result
	buf [40]byte
}

// readModifyWrite is the shared body of Increment and Append: under the
// row's exclusive lock (every earlier writer of the row has completed, so
// the current read point sees it), read each column's newest cell, compute
// the new value (next appends it to dst) and write it at max(now, old
// timestamp + 1). A column named twice applies both changes in order, and
// is written once. The Result is sorted by family and qualifier.
//
// col and next must not keep their arguments: they do not escape, so the
// callers' closures stay on the stack.
func (r *Region) readModifyWrite(ctx context.Context, row []byte, dur wal.Durability, n int, col func(int) ([]byte, []byte),
	next func(dst []byte, i int, cur *encoding.KeyValue) ([]byte, error)) (*Result, error) {
	if n == 0 {
		return nil, invalidArgf("region: no columns")
	}
	for i := 0; i < n; i++ {
		f, _ := col(i)
		if err := r.checkRowAndFamily(row, f); err != nil {
			return nil, err
		}
	}
	if err := r.checkResources(ctx); err != nil {
		return nil, err
	}
	// The scratch first: its rowLock is the lock's while it is held, so
	// the unlock must run before the release.
	s := getWriteScratch()
	defer s.release()
	rl, err := r.locks.lock(ctx, row, true, r.opts.RowLockWait, &s.rowLock)
	if err != nil {
		return nil, err
	}
	defer r.locks.unlock(rl, true)
	// The rest is a function of its own so that the compiler open-codes
	// these defers, which it does not in a function with many returns.
	return r.rmwLocked(s, row, dur, n, col, next)
}

// rmwLocked is readModifyWrite with row locked and s its scratch.
func (r *Region) rmwLocked(s *writeScratch, row []byte, dur wal.Durability, n int, col func(int) ([]byte, []byte),
	next func(dst []byte, i int, cur *encoding.KeyValue) ([]byte, error)) (*Result, error) {
	// Columns in family, qualifier order, a repeated one in call order:
	// that is the Result's order, and it groups repeats.
	order := s.order[:0]
	for i := 0; i < n; i++ {
		order = append(order, i)
	}
	if n > 1 {
		slices.SortStableFunc(order, func(i, j int) int {
			fi, qi := col(i)
			fj, qj := col(j)
			if c := bytes.Compare(fi, fj); c != 0 {
				return c
			}
			return bytes.Compare(qi, qj)
		})
	}
	s.order = order
	// From here on the row is the scratch's copy (see writeScratch.row).
	key := append(s.row[:0], row...)
	s.row = key
	g := &s.get
	g.Row = key
	for k, i := range order {
		f, q := col(i)
		if k > 0 {
			if pf, pq := col(order[k-1]); bytes.Equal(f, pf) && bytes.Equal(q, pq) {
				continue
			}
		}
		g.AddColumn(f, q)
	}
	// One clock read for the read's TTL check and the new timestamps, as
	// HBase takes its batch's now once (doMiniBatchMutate).
	now := r.now()
	cur, err := r.rmwRead(g, s, now)
	if err != nil {
		return nil, err
	}

	vals, spans := s.vals[:0], s.spans[:0]
	pending := &s.pending // the column's value so far, for a repeat
	for k, i := range order {
		f, q := col(i)
		var old *encoding.KeyValue
		if repeat := k > 0 && bytes.Equal(f, spans[len(spans)-1].fam) && bytes.Equal(q, spans[len(spans)-1].qual); repeat {
			sp := spans[len(spans)-1]
			*pending = encoding.KeyValue{Family: f, Qualifier: q, Timestamp: sp.ts, Value: vals[sp.off:sp.end]}
			old = pending
			spans = spans[:len(spans)-1]
		} else {
			old = cur.Latest(f, q)
		}
		off := len(vals)
		if vals, err = next(vals, i, old); err != nil {
			s.vals, s.spans = vals, spans
			return nil, err
		}
		ts := now
		if old != nil && old.Timestamp >= ts {
			ts = old.Timestamp + 1
		}
		spans = append(spans, rmwSpan{fam: f, qual: q, ts: ts, off: off, end: len(vals)})
	}
	s.vals, s.spans = vals, spans

	cells := s.cells[:0]
	for _, sp := range spans {
		cells = append(cells, encoding.KeyValue{Row: key, Family: sp.fam, Qualifier: sp.qual, Timestamp: sp.ts,
			Type: encoding.TypePut, Value: vals[sp.off:sp.end]})
	}
	s.cells = cells
	if err := r.commitRMW(s, cells, dur, now); err != nil {
		return nil, err
	}

	// The Result is the caller's: copy the cells out of the scratch and
	// the caller's request (which then stays on the caller's stack).
	size := 0
	for i := range cells {
		size += len(key) + len(cells[i].Family) + len(cells[i].Qualifier) + len(cells[i].Value)
	}
	if len(cells) == 1 && size <= len(rmwResult{}.buf) {
		b := &rmwResult{}
		cells[0].CopyTo(&b.res.kv1, b.buf[:0])
		b.res.ptr1[0] = &b.res.kv1
		b.res.Cells = b.res.ptr1[:]
		return &b.res, nil
	}
	kvs := make([]encoding.KeyValue, len(cells))
	ptrs := make([]*encoding.KeyValue, len(cells))
	buf := make([]byte, 0, size)
	for i := range cells {
		buf = cells[i].CopyTo(&kvs[i], buf)
		ptrs[i] = &kvs[i]
	}
	return &Result{Cells: ptrs}, nil
}

// rmwRead reads the current values of a read-modify-write's columns, g's,
// into s.cur, with the row locked. A column's newest version is most often
// in the memstore (a counter's last increment): when the memstore holds a
// put as the newest version of every column, and no store file can hold
// anything newer, the memstore lookups are the answer, and no store scanner
// merges the memstore with the files. It is HBase's pruning of store files
// by TIMERANGE taken to the point read of one column: a file whose cells are
// all older than the memstore's put can neither hold a newer version nor a
// delete marker that hides it. Anything else reads with getInto. now is
// the write's clock reading, against which TTLs expire.
//
// The memstore lookups read at the newest sequence id, not at the read
// point: every write of a row holds its lock until its cells are visible
// (CompleteAndWait), and this one holds it exclusively, so every cell of the
// row in the memstore is visible already. Loading the read point would cost
// a cache miss on most writes from two processors, since every Complete
// moves it.
func (r *Region) rmwRead(g *Get, s *writeScratch, now int64) (*Result, error) {
	res := &s.cur
	const readPoint = encoding.SeqNum(math.MaxUint64)
	set := r.storeSet()
	cells := s.newest[:0]
	hints := s.hints[:0]
	found := true
	for _, c := range g.Columns {
		st := set.byFamily[string(c.Family)]
		var kv *encoding.KeyValue
		var h memstore.Hint
		if st != nil && c.Qualifier != nil {
			kv, h, found = st.newestPut(g.Row, c.Qualifier, readPoint, now)
		} else {
			found = false
		}
		hints = append(hints, h)
		if !found {
			break
		}
		cells = append(cells, kv)
	}
	s.hints = hints
	if found {
		res.reset()
		res.add(cells) // g.Columns are in family, qualifier order
	}
	// The scratch goes back to a pool: keep no memstore cell alive.
	clear(cells)
	s.newest = cells[:0]
	if found {
		return res, nil
	}
	return r.getInto(g, res)
}

// commitRMW writes a read-modify-write's cells as a Put with durability dur.
func (r *Region) commitRMW(s *writeScratch, cells []encoding.KeyValue, dur wal.Durability, now int64) error {
	r.hot.updates.RLock()
	defer r.hot.updates.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	// The families were checked before the row lock; a DeleteFamily may
	// have run since.
	for i := range cells {
		if err := r.checkRowAndFamily(cells[i].Row, cells[i].Family); err != nil {
			return err
		}
	}
	r.hot.puts.Add(1)
	return r.commitLocked(s, cells, dur, now, true)
}

// CheckAndMutate applies c.Mutations if the check passes, atomically with
// the check: the row is locked exclusively for both. It reports whether the
// mutations were applied.
func (r *Region) CheckAndMutate(c *CheckAndMutate) (bool, error) {
	return r.CheckAndMutateContext(context.Background(), c)
}

// CheckAndMutateContext is CheckAndMutate with a context, as PutContext.
func (r *Region) CheckAndMutateContext(ctx context.Context, c *CheckAndMutate) (bool, error) {
	if c == nil {
		return false, invalidArgf("region: nil *CheckAndMutate")
	}
	if c.Filter != nil {
		if len(c.Family) != 0 {
			return false, invalidArgf("region: check-and-mutate with both a filter and a column")
		}
		if err := r.checkRow(c.Row); err != nil {
			return false, err
		}
	} else if err := r.checkRowAndFamily(c.Row, c.Family); err != nil {
		return false, err
	}
	if len(c.Mutations) == 0 {
		return false, invalidArgf("region: check-and-mutate without mutations")
	}
	for _, m := range c.Mutations {
		if err := checkMutation(m); err != nil {
			return false, err
		}
		if !bytes.Equal(m.mutationRow(), c.Row) {
			return false, invalidArgf("region: check-and-mutate mutation for another row")
		}
	}
	if err := r.checkResources(ctx); err != nil {
		return false, err
	}
	s := getWriteScratch()
	defer s.release() // after the unlock: see readModifyWrite
	rl, err := r.locks.lock(ctx, c.Row, true, r.opts.RowLockWait, &s.rowLock)
	if err != nil {
		return false, err
	}
	defer r.locks.unlock(rl, true)
	return r.checkAndMutateLocked(c, s) // (open-coded defers: see readModifyWrite)
}

// checkAndMutateLocked is CheckAndMutateContext with c's row locked and s
// its scratch.
func (r *Region) checkAndMutateLocked(c *CheckAndMutate, s *writeScratch) (bool, error) {
	g := &s.get
	g.Row, g.TimeRange = c.Row, c.TimeRange
	if c.Filter != nil {
		g.Filter = c.Filter
		cur, err := r.getInto(g, &s.cur)
		if err != nil {
			return false, err
		}
		if cur.IsEmpty() {
			return false, nil
		}
	} else {
		g.AddColumn(c.Family, c.Qualifier)
		cur, err := r.getInto(g, &s.cur)
		if err != nil {
			return false, err
		}
		cell := cur.Latest(c.Family, nonNil(c.Qualifier))
		if c.Comparator != nil {
			if !comparatorMatches(c.Op, c.Comparator, cell) {
				return false, nil
			}
		} else if !checkMatches(c.Op, c.Value, cell) {
			return false, nil
		}
	}
	if err := r.applyLocked(s, c.Mutations); err != nil {
		return false, err
	}
	return true, nil
}

// comparatorMatches is checkMatches with a comparator as the expected side,
// as HRegion.checkAndMutateInternal does it.
func comparatorMatches(op filter.CompareOp, cmp filter.ByteArrayComparable, cell *encoding.KeyValue) bool {
	if op == filter.CompareNoOp {
		return false
	}
	var operand []byte
	switch c := cmp.(type) {
	case *filter.NullComparator:
	case interface{ Value() []byte }:
		operand = c.Value()
	default:
		operand = []byte{0} // any non-empty operand: compare as usual
	}
	if len(operand) == 0 {
		return checkMatches(op, nil, cell)
	}
	if cell == nil {
		return false
	}
	return compareResultMatches(op, cmp.CompareTo(cell.Value))
}

func compareResultMatches(op filter.CompareOp, c int) bool {
	switch op {
	case filter.CompareLess:
		return c < 0
	case filter.CompareLessOrEqual:
		return c <= 0
	case filter.CompareEqual:
		return c == 0
	case filter.CompareNotEqual:
		return c != 0
	case filter.CompareGreaterOrEqual:
		return c >= 0
	case filter.CompareGreater:
		return c > 0
	}
	return false
}

// checkMatches is HBase's check: "expected OP stored", with an empty or nil
// expected value meaning "the column does not exist (or is empty)".
func checkMatches(op filter.CompareOp, expected []byte, cell *encoding.KeyValue) bool {
	if op == filter.CompareNoOp {
		return false
	}
	if len(expected) == 0 {
		exists := cell != nil && len(cell.Value) > 0
		return !exists == (op != filter.CompareNotEqual)
	}
	if cell == nil {
		return false
	}
	return compareResultMatches(op, bytes.Compare(expected, cell.Value))
}
