package region

import (
	"bytes"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
)

// Get reads one row at the current read point.
func (r *Region) Get(g *Get) (*Result, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	r.stats.gets.Add(1)
	return r.get(g)
}

func (r *Region) get(g *Get) (*Result, error) {
	if len(g.Row) == 0 || len(g.Row) > encoding.MaxRowLen {
		return nil, errors.Newf("region: row length %d must be 1..%d", len(g.Row), encoding.MaxRowLen)
	}
	wants, err := r.wantedStores(g.Columns)
	if err != nil {
		return nil, err
	}
	readPoint := encoding.SeqNum(r.mvcc.ReadPoint())
	now := r.now()
	res := &Result{}
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
	for _, w := range wants {
		var bloomQual []byte
		if len(w.cols) == 1 {
			bloomQual = w.cols[0]
		}
		scanners, err := w.s.scanners(readPoint, g.Row, bloomQual, true)
		if err != nil {
			return nil, err
		}
		maxVersions := g.MaxVersions
		if maxVersions <= 0 {
			maxVersions = 1
		}
		maxVersions = min(maxVersions, w.s.opts.MaxVersions)
		opts := scanner.QueryOptions{
			MaxVersions: maxVersions, TimeRange: g.TimeRange, TTLMillis: w.s.opts.TTL.Milliseconds(), NowMillis: now,
			Columns: w.cols, StartRow: g.Row, StopRow: g.Row, StopInclusive: true, Filter: f, FamilyMaxVersions: w.s.opts.MaxVersions,
		}
		ss, err := scanner.NewStoreScanner(r.cmp, scanners, opts)
		if err != nil {
			return nil, err
		}
		if ss.PeekRow() != nil && bytes.Equal(ss.PeekRow(), g.Row) {
			res.Cells, err = ss.Row(res.Cells)
		}
		ss.Close()
		if err != nil {
			return nil, errors.Wrapf(err, "region %s: get", r.dir)
		}
	}
	if f != nil {
		if f.HasFilterRow() {
			res.Cells = f.FilterRowCells(res.Cells)
		}
		if len(res.Cells) > 0 && f.FilterRow() {
			res.Cells = nil
		}
		f.Reset()
	}
	return res, nil
}

// storeWant is a store a read touches and the qualifiers it wants of it
// (nil: all).
type storeWant struct {
	s    *Store
	cols [][]byte
}

// wantedStores resolves a read's columns to stores, in family order.
func (r *Region) wantedStores(columns []Column) ([]storeWant, error) {
	var wants []storeWant
	if len(columns) == 0 {
		for _, s := range r.stores {
			wants = append(wants, storeWant{s: s})
		}
		return wants, nil
	}
	byName := map[string]*storeWant{}
	for _, c := range columns {
		s := r.byFamily[string(c.Family)]
		if s == nil {
			return nil, errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", c.Family, r.dir)
		}
		w := byName[s.opts.Name]
		if w == nil {
			w = &storeWant{s: s, cols: [][]byte{}}
			byName[s.opts.Name] = w
		}
		if c.Qualifier == nil {
			w.cols = nil // the whole family wins
		} else if w.cols != nil {
			w.cols = append(w.cols, c.Qualifier)
		}
	}
	for _, s := range r.stores {
		if w := byName[s.opts.Name]; w != nil {
			wants = append(wants, *w)
		}
	}
	return wants, nil
}
