package region

import (
	"bytes"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
)

// Get reads one row at the current read point. The Result is the
// caller's to keep.
func (r *Region) Get(g *Get) (*Result, error) {
	return r.GetInto(g, &Result{})
}

// GetInto is Get reading into res, whose memory it reuses: the cells of
// the previous result read into res (and every slice in them) become
// invalid, and those of the new one stay valid until res is used again. A
// point read loop that reuses one Result allocates nothing in the steady
// state. It returns res (a new Result if res is nil).
func (r *Region) GetInto(g *Get, res *Result) (*Result, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if g == nil {
		return nil, invalidArgf("region: nil *Get")
	}
	if res == nil {
		res = &Result{}
	}
	r.stats.gets.Add(1)
	return r.getInto(g, res)
}

// get is Get for the region's own reads (increment, check-and-mutate, ...).
func (r *Region) get(g *Get) (*Result, error) { return r.getInto(g, &Result{}) }

// getter is the reusable memory of one Get: the store scanner, the scanners
// it merges and the buffers that find them. Gets take one from a pool, so
// a Get allocates only its Result.
type getter struct {
	wants []storeWant
	cols  [][]byte
	ss    scanner.StoreScanner
	rd    storeReaders // one store at a time
	cells []*encoding.KeyValue
}

var getters = sync.Pool{New: func() any { return &getter{rd: storeReaders{hint: newReadHint()}} }}

func (r *Region) getInto(g *Get, res *Result) (*Result, error) {
	if len(g.Row) == 0 || len(g.Row) > encoding.MaxRowLen {
		return nil, invalidArgf("region: row length %d must be 1..%d", len(g.Row), encoding.MaxRowLen)
	}
	res.reset()
	gt := getters.Get().(*getter)
	defer gt.done()
	var err error
	gt.wants, gt.cols, err = r.appendWantedStores(gt.wants[:0], gt.cols[:0], g.Columns)
	if err != nil {
		return nil, err
	}
	// Registered until the Get is done, so that no upsert removes a
	// version it may still read (see readPoints).
	readPoint, slot := r.readers.acquire(r.mvcc, gt.rd.hint)
	defer r.readers.release(slot)
	// The rest is a function of its own so that the compiler open-codes
	// these defers, which it does not in a function with many returns: the
	// runtime's deferred calls cost 30 ns a Get.
	return r.getRow(g, res, gt, readPoint)
}

// getRow is getInto's read of g's row at readPoint, with gt's stores.
func (r *Region) getRow(g *Get, res *Result, gt *getter, readPoint encoding.SeqNum) (*Result, error) {
	f := g.Filter
	if f != nil {
		f.SetReversed(false)
		if f.FilterAllRemaining() {
			return res, nil
		}
		skip, err := f.FilterRowKey(g.Row)
		if err != nil {
			return nil, errors.Wrapf(err, "region %s: get filter", r.dir)
		}
		if skip {
			f.Reset()
			return res, nil
		}
	}
	for i := range gt.wants {
		w := &gt.wants[i]
		var bloomQual []byte
		if len(w.cols) == 1 {
			bloomQual = w.cols[0]
		}
		scanners, err := w.s.openReaders(&gt.rd, readPoint, g.Row, bloomQual, true)
		if err != nil {
			gt.rd.releaseFiles()
			return nil, err
		}
		maxVersions := g.MaxVersions
		if maxVersions <= 0 {
			maxVersions = 1
		}
		fo := w.s.options()
		maxVersions = min(maxVersions, fo.MaxVersions)
		opts := scanner.QueryOptions{
			MaxVersions: maxVersions, TimeRange: g.TimeRange, TTLMillis: fo.TTL.Milliseconds(), Clock: r.clock,
			Columns: w.cols, StartRow: g.Row, StopRow: g.Row, StopInclusive: true, Filter: f, FamilyMaxVersions: fo.MaxVersions,
			MinVersions: fo.MinVersions,
			ReuseCells:  true,
		}
		err = gt.ss.Reset(r.cmp, scanners, opts)
		if err == nil {
			if pr := gt.ss.PeekRow(); pr != nil && bytes.Equal(pr, g.Row) {
				gt.cells, err = gt.ss.Row(gt.cells[:0])
				if err == nil {
					// The cells live in the store scanner's memory until
					// its next use: copy them into the result.
					res.add(gt.cells)
				}
			}
			gt.ss.Close()
		}
		gt.rd.releaseFiles()
		clear(gt.cells[:cap(gt.cells)])
		if err != nil {
			return nil, errors.Wrapf(err, "region %s: get", r.dir)
		}
	}
	if f != nil {
		if f.HasFilterRow() {
			res.Cells = f.FilterRowCells(res.Cells)
		}
		if len(res.Cells) > 0 && f.FilterRow() {
			res.Cells = res.Cells[:0]
		}
		f.Reset()
	}
	return res, nil
}

// done returns gt to the pool, without references to the caller's memory.
func (gt *getter) done() {
	clear(gt.wants[:cap(gt.wants)])
	clear(gt.cols[:cap(gt.cols)])
	gt.wants, gt.cols = gt.wants[:0], gt.cols[:0]
	getters.Put(gt)
}

// storeWant is a store a read touches and the qualifiers it wants of it
// (nil: all).
type storeWant struct {
	s    *Store
	cols [][]byte
}

// wantedStores resolves a read's columns to stores, in family order.
func (r *Region) wantedStores(columns []Column) ([]storeWant, error) {
	wants, _, err := r.appendWantedStores(nil, nil, columns)
	return wants, err
}

// appendWantedStores is wantedStores appending to wants, with the
// qualifiers of every store appended to cols.
func (r *Region) appendWantedStores(wants []storeWant, cols [][]byte, columns []Column) ([]storeWant, [][]byte, error) {
	set := r.storeSet()
	if len(columns) == 0 {
		for _, s := range set.stores {
			wants = append(wants, storeWant{s: s})
		}
		return wants, cols, nil
	}
	for _, c := range columns {
		if set.byFamily[string(c.Family)] == nil {
			return wants, cols, errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", c.Family, r.dir)
		}
	}
	// Stores are few: a pass over the columns per store needs no map.
	for _, s := range set.stores {
		named, whole := false, false
		from := len(cols)
		for _, c := range columns {
			if string(c.Family) != s.name {
				continue
			}
			named = true
			if c.Qualifier == nil {
				whole = true // the whole family wins
			} else {
				cols = append(cols, c.Qualifier)
			}
		}
		if !named {
			continue
		}
		w := storeWant{s: s}
		if !whole {
			w.cols = cols[from:len(cols):len(cols)]
		}
		wants = append(wants, w)
	}
	return wants, cols, nil
}
