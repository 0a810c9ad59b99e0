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
	// Which stores, and which qualifiers of each (nil: the whole family).
	type want struct {
		s    *Store
		cols [][]byte
	}
	var wants []want
	if len(g.Columns) == 0 {
		for _, s := range r.stores {
			wants = append(wants, want{s: s})
		}
	} else {
		byName := map[string]*want{}
		var order []string
		for _, c := range g.Columns {
			s := r.byFamily[string(c.Family)]
			if s == nil {
				return nil, errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", c.Family, r.dir)
			}
			w := byName[s.opts.Name]
			if w == nil {
				w = &want{s: s, cols: [][]byte{}}
				byName[s.opts.Name] = w
				order = append(order, s.opts.Name)
			}
			if c.Qualifier == nil {
				w.cols = nil // whole family wins
			} else if w.cols != nil {
				w.cols = append(w.cols, c.Qualifier)
			}
		}
		for _, s := range r.stores { // keep family order
			if w := byName[s.opts.Name]; w != nil {
				wants = append(wants, *w)
			}
		}
		_ = order
	}
	readPoint := encoding.SeqNum(r.mvcc.ReadPoint())
	now := r.now()
	res := &Result{}
	var keyBuf []byte
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
			Columns: w.cols, StopRow: g.Row, StopInclusive: true,
		}
		keyBuf = encoding.FirstOnRow(keyBuf[:0], g.Row)
		ss, err := scanner.NewStoreScanner(r.cmp, scanners, keyBuf, opts)
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
	return res, nil
}
