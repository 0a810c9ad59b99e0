package region

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"sort"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
	"github.com/regionkv/regionkv/wal"
)

// Put writes p.
func (r *Region) Put(p *Put) error { return r.Batch([]Mutation{p}) }

// Delete applies d.
func (r *Region) Delete(d *Delete) error { return r.Batch([]Mutation{d}) }

// Batch applies puts and deletes, possibly for many rows, as one atomic
// write: one WAL entry and one sequence id, visible to readers all at once.
// Rows are locked shared, as HBase does for plain puts and deletes.
func (r *Region) Batch(ms []Mutation) error {
	if len(ms) == 0 {
		return nil
	}
	rows := make([]string, 0, len(ms))
	for _, m := range ms {
		if m == nil {
			return errors.New("region: nil mutation")
		}
		rows = append(rows, string(m.mutationRow()))
	}
	rows = sortedUnique(rows)
	if err := r.checkResources(); err != nil {
		return err
	}
	unlock, err := r.locks.lockRows(rows, false, r.opts.RowLockWait)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = r.applyLocked(ms)
	return err
}

func sortedUnique(rows []string) []string {
	sort.Strings(rows)
	out := rows[:0]
	for i, r := range rows {
		if i == 0 || r != rows[i-1] {
			out = append(out, r)
		}
	}
	return out
}

// checkResources blocks a write while the memstores are over the blocking
// limit, as HBase's HRegion.checkResources does, so memory stays bounded
// when flushes fall behind.
//
// It first makes sure the WAL works (see resetWAL).
func (r *Region) checkResources() error {
	if err := r.checkWAL(); err != nil {
		return err
	}
	limit := r.opts.FlushSize * int64(r.opts.BlockingMultiplier)
	if r.memSize.Load() <= limit {
		return nil
	}
	r.stats.blockedWrites.Add(1)
	if last := r.lastBlockLog.Load(); time.Since(time.Unix(0, last)) > 10*time.Second &&
		r.lastBlockLog.CompareAndSwap(last, time.Now().UnixNano()) {
		slog.Warn("region: blocking updates: memstore over the blocking limit; waiting for a flush",
			"region", r.dir, "memstoreSize", r.memSize.Load(), "limit", limit)
	}
	deadline := time.NewTimer(r.opts.BlockingWait)
	defer deadline.Stop()
	for r.memSize.Load() > limit {
		if r.closed.Load() {
			return ErrClosed
		}
		r.requestFlush()
		ch := r.flushedChan()
		select {
		case <-ch:
			if p := r.flushErr.Load(); p != nil && r.memSize.Load() > limit {
				return errors.Wrapf(ErrRegionTooBusy, "over memstore limit=%d, region=%s, and the last flush failed: %v", limit, r.dir, *p)
			}
		case <-deadline.C:
			return errors.Wrapf(ErrRegionTooBusy, "over memstore limit=%d, region=%s, memstore=%d after waiting %s",
				limit, r.dir, r.memSize.Load(), r.opts.BlockingWait)
		}
	}
	return nil
}

// applyLocked writes mutations whose rows the caller has locked: WAL append
// (which assigns the sequence id), WAL sync per durability, memstore insert,
// then MVCC completion, in HBase's order. It returns the cells written.
func (r *Region) applyLocked(ms []Mutation) ([]encoding.KeyValue, error) {
	r.updates.RLock()
	defer r.updates.RUnlock()
	if r.closed.Load() {
		return nil, ErrClosed
	}
	now := r.now()
	var cells []encoding.KeyValue
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
			r.stats.puts.Add(1)
		case *Delete:
			cells, err = r.deleteCells(cells, m, now)
			r.stats.deletes.Add(1)
		default:
			err = errors.Newf("region: unsupported mutation %T", m)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(cells) == 0 {
		return nil, nil
	}
	var (
		txid   uint64
		walErr error
		seq    uint64
	)
	e := r.mvcc.BeginWith(func(n uint64) {
		seq = n
		if dur == wal.SkipWAL {
			return
		}
		key := wal.Key{EncodedRegionName: r.encodedKey, TableName: r.tableKey, SeqNum: n, WriteTime: now}
		txid, walErr = r.wal.Append(&key, &wal.Edit{Cells: cells})
	})
	if walErr == nil && dur != wal.SkipWAL {
		walErr = r.wal.Sync(txid, dur)
	}
	if walErr != nil {
		// Every begun entry must complete, or the read point stalls. The
		// cells are not in the memstore and were not acknowledged; a
		// broken WAL is reset (cutting them from the log) before the
		// next write.
		r.mvcc.Complete(e)
		r.noteWALError()
		return nil, errors.Wrapf(walErr, "region %s: WAL", r.dir)
	}
	var added int64
	for i := range cells {
		cells[i].SeqNum = encoding.SeqNum(seq)
		added += r.byFamily[string(cells[i].Family)].mem.Add(&cells[i]).DataSize
	}
	r.memSize.Add(added)
	r.mvcc.CompleteAndWait(e)
	if r.memSize.Load() >= r.opts.FlushSize {
		r.requestFlush()
	}
	return cells, nil
}

func (r *Region) checkRow(row []byte) error {
	if len(row) == 0 || len(row) > encoding.MaxRowLen {
		return errors.Newf("region: row length %d must be 1..%d", len(row), encoding.MaxRowLen)
	}
	return nil
}

func (r *Region) checkRowAndFamily(row, family []byte) error {
	if err := r.checkRow(row); err != nil {
		return err
	}
	if r.byFamily[string(family)] == nil {
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
			return nil, errors.Newf("region: negative timestamp %d", kv.Timestamp)
		}
		dst = append(dst, kv)
	}
	return dst, nil
}

func (r *Region) deleteCells(dst []encoding.KeyValue, d *Delete, now int64) ([]encoding.KeyValue, error) {
	if len(d.Cells) == 0 {
		// Delete the whole row: a DeleteFamily marker in every family.
		for _, s := range r.stores {
			if err := r.checkRowAndFamily(d.Row, []byte(s.opts.Name)); err != nil {
				return nil, err
			}
			dst = append(dst, encoding.KeyValue{Row: d.Row, Family: []byte(s.opts.Name), Timestamp: now, Type: encoding.TypeDeleteFamily})
		}
		return dst, nil
	}
	for _, c := range d.Cells {
		if err := r.checkRowAndFamily(d.Row, c.Family); err != nil {
			return nil, err
		}
		if !c.Type.IsDelete() {
			return nil, errors.Newf("region: delete carries a %s cell", c.Type)
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
	return r.readModifyWrite(inc.Row, inc.Durability, len(inc.Columns), func(i int) (fam, qual []byte) {
		return inc.Columns[i].Family, inc.Columns[i].Qualifier
	}, func(i int, cur *encoding.KeyValue) ([]byte, error) {
		var v int64
		if cur != nil {
			if len(cur.Value) != 8 {
				return nil, errors.Newf("region: field %s:%s is not a long, it's %d bytes wide",
					encoding.FormatBytes(cur.Family), encoding.FormatBytes(cur.Qualifier), len(cur.Value))
			}
			v = int64(binary.BigEndian.Uint64(cur.Value))
		}
		return binary.BigEndian.AppendUint64(nil, uint64(v+inc.Columns[i].Amount)), nil
	})
}

// Append appends to values of one row under its exclusive lock and returns
// the new values.
func (r *Region) Append(a *Append) (*Result, error) {
	return r.readModifyWrite(a.Row, a.Durability, len(a.Cells), func(i int) (fam, qual []byte) {
		return a.Cells[i].Family, a.Cells[i].Qualifier
	}, func(i int, cur *encoding.KeyValue) ([]byte, error) {
		var v []byte
		if cur != nil {
			v = append(v, cur.Value...)
		}
		return append(v, a.Cells[i].Value...), nil
	})
}

// readModifyWrite is the shared body of Increment and Append: under the
// row's exclusive lock (every earlier writer of the row has completed, so
// the current read point sees it), read each column's newest cell, compute
// the new value and write it at max(now, old timestamp + 1).
func (r *Region) readModifyWrite(row []byte, dur wal.Durability, n int, col func(int) ([]byte, []byte),
	next func(int, *encoding.KeyValue) ([]byte, error)) (*Result, error) {
	if n == 0 {
		return nil, errors.New("region: no columns")
	}
	for i := 0; i < n; i++ {
		f, _ := col(i)
		if err := r.checkRowAndFamily(row, f); err != nil {
			return nil, err
		}
	}
	if err := r.checkResources(); err != nil {
		return nil, err
	}
	unlock, err := r.locks.lockRows([]string{string(row)}, true, r.opts.RowLockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	g := &Get{Row: row}
	for i := 0; i < n; i++ {
		f, q := col(i)
		g.AddColumn(f, q)
	}
	cur, err := r.get(g)
	if err != nil {
		return nil, err
	}
	now := r.now()
	p := &Put{Row: row, Durability: dur}
	// A column named twice applies both changes in order.
	pending := map[string]*encoding.KeyValue{}
	var order []string
	for i := 0; i < n; i++ {
		f, q := col(i)
		k := string(f) + "\x00" + string(q)
		old := pending[k]
		if old == nil {
			old = cur.Latest(f, q)
		}
		v, err := next(i, old)
		if err != nil {
			return nil, err
		}
		ts := now
		if old != nil && old.Timestamp >= ts {
			ts = old.Timestamp + 1
		}
		if _, ok := pending[k]; !ok {
			order = append(order, k)
		}
		pending[k] = &encoding.KeyValue{Row: row, Family: f, Qualifier: q, Timestamp: ts, Type: encoding.TypePut, Value: v}
	}
	res := &Result{}
	for _, k := range order {
		kv := pending[k]
		p.Cells = append(p.Cells, *kv)
		res.Cells = append(res.Cells, kv)
	}
	if _, err := r.applyLocked([]Mutation{p}); err != nil {
		return nil, err
	}
	sort.Slice(res.Cells, func(i, j int) bool {
		a, b := res.Cells[i], res.Cells[j]
		if c := bytes.Compare(a.Family, b.Family); c != 0 {
			return c < 0
		}
		return bytes.Compare(a.Qualifier, b.Qualifier) < 0
	})
	return res, nil
}

// CheckAndMutate applies c.Mutations if the check passes, atomically with
// the check: the row is locked exclusively for both. It reports whether the
// mutations were applied.
func (r *Region) CheckAndMutate(c *CheckAndMutate) (bool, error) {
	if c.Filter != nil {
		if len(c.Family) != 0 {
			return false, errors.New("region: check-and-mutate with both a filter and a column")
		}
		if err := r.checkRow(c.Row); err != nil {
			return false, err
		}
	} else if err := r.checkRowAndFamily(c.Row, c.Family); err != nil {
		return false, err
	}
	if len(c.Mutations) == 0 {
		return false, errors.New("region: check-and-mutate without mutations")
	}
	for _, m := range c.Mutations {
		if m == nil || !bytes.Equal(m.mutationRow(), c.Row) {
			return false, errors.New("region: check-and-mutate mutation for another row")
		}
	}
	if err := r.checkResources(); err != nil {
		return false, err
	}
	unlock, err := r.locks.lockRows([]string{string(c.Row)}, true, r.opts.RowLockWait)
	if err != nil {
		return false, err
	}
	defer unlock()
	if c.Filter != nil {
		cur, err := r.get(&Get{Row: c.Row, TimeRange: c.TimeRange, Filter: c.Filter})
		if err != nil {
			return false, err
		}
		if cur.IsEmpty() {
			return false, nil
		}
	} else {
		cur, err := r.get(&Get{Row: c.Row, Columns: []Column{{Family: c.Family, Qualifier: nonNil(c.Qualifier)}}, TimeRange: c.TimeRange})
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
	if _, err := r.applyLocked(c.Mutations); err != nil {
		return false, err
	}
	return true, nil
}

// comparatorMatches is checkMatches with a comparator as the expected side,
// as HRegion.checkAndMutateInternal does it.
func comparatorMatches(op CompareOp, cmp scanner.ByteArrayComparable, cell *encoding.KeyValue) bool {
	if op == NoOp {
		return false
	}
	var operand []byte
	switch c := cmp.(type) {
	case *scanner.NullComparator:
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

func compareResultMatches(op CompareOp, c int) bool {
	switch op {
	case Less:
		return c < 0
	case LessOrEqual:
		return c <= 0
	case Equal:
		return c == 0
	case NotEqual:
		return c != 0
	case GreaterOrEqual:
		return c >= 0
	case Greater:
		return c > 0
	}
	return false
}

// checkMatches is HBase's check: "expected OP stored", with an empty or nil
// expected value meaning "the column does not exist (or is empty)".
func checkMatches(op CompareOp, expected []byte, cell *encoding.KeyValue) bool {
	if op == NoOp {
		return false
	}
	if len(expected) == 0 {
		exists := cell != nil && len(cell.Value) > 0
		return !exists == (op != NotEqual)
	}
	if cell == nil {
		return false
	}
	return compareResultMatches(op, bytes.Compare(expected, cell.Value))
}
