package region

import (
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/scanner"
)

// Scan reads a range of rows: HBase's Scan.
type Scan struct {
	// StartRow (inclusive unless StartExclusive) and StopRow (exclusive
	// unless StopInclusive); nil means unbounded. A reversed scan starts at
	// StartRow and goes down to StopRow.
	StartRow       []byte
	StartExclusive bool
	StopRow        []byte
	StopInclusive  bool
	Reversed       bool
	// Columns, MaxVersions and TimeRange as for Get.
	Columns     []Column
	MaxVersions int
	TimeRange   TimeRange
	// Limit is the most rows to return; 0 means all.
	Limit int
	// StoreLimit and StoreOffset are HBase's maxResultsPerColumnFamily and
	// rowOffsetPerColumnFamily: per row and family, skip StoreOffset cells
	// then return at most StoreLimit (0: no limit).
	StoreLimit  int
	StoreOffset int
	// Batch splits rows into Results of at most this many cells (HBase's
	// setBatch); 0 means whole rows.
	Batch int
	// MaxResultSize, with AllowPartialResults, splits a row into Results of
	// about this many bytes; 0 means no limit.
	MaxResultSize       int64
	AllowPartialResults bool
	// NoCacheBlocks keeps the data blocks this scan reads out of the block
	// cache (HBase's setCacheBlocks(false)), for big one-off scans.
	NoCacheBlocks bool
	// Filter, if set, decides which rows and cells the scan returns
	// (package scanner has HBase's filters). It is used by this scan only.
	Filter filter.Filter
}

// ScanResult is one row, or part of a row when the scan splits rows.
type ScanResult struct {
	Result
	// Partial is set on every part of a split row but the last.
	Partial bool
}

// Scanner iterates over the rows of a Scan at the read point of its
// creation: it sees a consistent snapshot while writes, flushes and
// compactions go on. It is HBase's RegionScanner. Not safe for concurrent
// use; Close it when done.
type Scanner struct {
	r           *Region
	scan        Scan
	stores      []*scanner.StoreScanner
	rows        int
	pending     []*encoding.KeyValue // rest of a row being split
	cells       []*encoding.KeyValue // the current row's cells, reused
	rowBuf      []byte               // the current row's key
	st          *scanState           // nil once closed
	opened      int                  // stores of st whose readers hold files
	results     []ScanResult         // what is left of Next's current block of results
	resultBlock int                  // size of that block
	slab        []byte               // Next's current block of cell bytes
	kvSlab      []encoding.KeyValue  // Next's current block of cell structs
	kvBlock     int                  // size of that block
	carveRes    *ScanResult          // the owned result being read
	carvedCells int                  // cells carved for the row being read
	pendingOwn  bool                 // pending's bytes are cut from slab
	carving     bool                 // the store scanners carve from the slabs
	simple      bool                 // one store, no filter, whole rows: nextSimple
	slot        readSlot             // the read point's registration, until Close
	done        bool
	closed      bool
	metrics     ScanMetrics
}

// ScanMetrics are HBase's server-side scan metrics of one scanner.
type ScanMetrics struct {
	// RowsScanned counts the rows the scanner read, RowsFiltered those it
	// dropped: by the filter, or because no cell of the row was left after
	// column, time range and version selection, as HBase counts them (a row
	// whose key the filter rejects when the filter is then done counts as
	// filtered only).
	RowsScanned, RowsFiltered int64
}

// Metrics returns the scanner's metrics so far.
func (sc *Scanner) Metrics() ScanMetrics { return sc.metrics }

// NewScanner opens a scanner over s.
func (r *Region) NewScanner(s *Scan) (*Scanner, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if s == nil {
		return nil, invalidArgf("region: nil *Scan")
	}
	if s.Filter != nil && s.Filter.HasFilterRow() && (s.Batch > 0 || s.AllowPartialResults) {
		return nil, invalidArgf("region: a filter that needs whole rows cannot be combined with batch or partial results")
	}
	st := scanStates.Get().(*scanState)
	var err error
	st.wants, st.cols, err = r.appendWantedStores(st.wants[:0], st.cols[:0], s.Columns)
	if err != nil {
		st.done()
		return nil, err
	}
	// Registered until Close (see readPoints).
	readPoint, slot := r.readers.acquire(r.mvcc, st.hint)
	now := r.now()
	sc := &Scanner{r: r, scan: *s, st: st, cells: st.cells[:0], slot: slot}
	if s.Filter != nil {
		s.Filter.SetReversed(s.Reversed)
	}
	if cap(st.stores) < len(st.wants) {
		st.stores = make([]scanStore, len(st.wants))
	}
	st.stores = st.stores[:len(st.wants)]
	sc.stores = st.ssp[:0]
	for i, w := range st.wants {
		rs := &st.stores[i]
		rs.rd.hint = st.hint
		scanners, err := w.s.openReaders(&rs.rd, readPoint, nil, nil, !s.NoCacheBlocks)
		if err != nil {
			rs.rd.releaseFiles()
			sc.Close()
			return nil, err
		}
		maxVersions := s.MaxVersions
		if maxVersions <= 0 {
			maxVersions = 1
		}
		fo := w.s.options()
		err = rs.ss.Reset(r.cmp, scanners, scanner.QueryOptions{
			MaxVersions: min(maxVersions, fo.MaxVersions), TimeRange: s.TimeRange,
			TTLMillis: fo.TTL.Milliseconds(), NowMillis: now, Columns: w.cols,
			StartRow: s.StartRow, StartExclusive: s.StartExclusive, StopRow: s.StopRow, StopInclusive: s.StopInclusive,
			Reversed: s.Reversed, Filter: s.Filter, FamilyMaxVersions: fo.MaxVersions, MinVersions: fo.MinVersions,
			// Cells are copied into each Result (or not at all by NextInto's
			// caller-owned one), so the store scanners reuse their memory.
			ReuseCells: true,
		})
		if err != nil {
			rs.rd.releaseFiles()
			sc.Close()
			return nil, errors.Wrapf(err, "region %s: scan", r.dir)
		}
		sc.stores = append(sc.stores, &rs.ss)
		sc.opened = i + 1
	}
	st.ssp = sc.stores
	sc.simple = len(sc.stores) == 1 && s.Filter == nil && s.Batch <= 0 &&
		!(s.AllowPartialResults && s.MaxResultSize > 0) && s.StoreLimit <= 0 && s.StoreOffset <= 0
	return sc, nil
}

// Next returns the next row (or part of one), or nil at the end. The
// result is the caller's to keep.
//
// Results are cut from blocks the scanner allocates for several rows at
// a time (growing from 4 results and 1 KiB of cell bytes to scanSlabRows
// and scanSlabBytes), so that a scan allocates about once per block rather
// than twice per row; a result kept after the scan moves on keeps its
// block alive, at most about 40 KiB.
func (sc *Scanner) Next() (*ScanResult, error) {
	if len(sc.results) == 0 {
		// Blocks grow from small, so that short scans (most are) do not
		// allocate for rows they never return; a Limit says how many rows
		// are wanted.
		sc.resultBlock = min(max(2*sc.resultBlock, 4), scanSlabRows)
		if left := sc.rowsLeft(); left > 0 {
			sc.resultBlock = min(left, scanSlabRows)
		}
		sc.results = make([]ScanResult, sc.resultBlock)
	}
	res := &sc.results[0]
	sc.results = sc.results[1:]
	ok, err := sc.nextInto(res, true)
	if err != nil || !ok {
		return nil, err
	}
	return res, nil
}

// Sizes of the blocks Next cuts its results from. 28 results of 192 bytes
// are 5,376 bytes, one of Go's size classes, three to a span. A size just
// above a class wastes the rest: 32 results of the earlier 232 bytes made
// 7,424 bytes, rounded up to 8 KiB, one object per span, so that every
// block cost a refill of the allocator's span cache (5% of a cached scan's
// profile). TestScanResultSize keeps this in step with ScanResult.
const (
	scanSlabRows  = 28
	scanSlabBytes = 32 << 10
)

// slabCarver is a Scanner as a scanner.Carver for its store scanners: the
// cells of an owned result are copied once, straight into the result being
// read (its first cell's struct) and the scanner's slabs.
type slabCarver Scanner

// CarveCell implements scanner.Carver.
func (c *slabCarver) CarveCell(n int) (*encoding.KeyValue, []byte) {
	sc := (*Scanner)(c)
	return sc.carveKV(), sc.carve(n)
}

// carveKV returns the struct for the next cell of the row being read into
// an owned result: the result's inline one for the row's first cell, else
// one cut from the scanner's block of cell structs.
func (sc *Scanner) carveKV() *encoding.KeyValue {
	i := sc.carvedCells
	sc.carvedCells++
	if i == 0 {
		return &sc.carveRes.kv1
	}
	if len(sc.kvSlab) == cap(sc.kvSlab) {
		sc.kvBlock = min(max(2*sc.kvBlock, 8), scanSlabRows)
		sc.kvSlab = make([]encoding.KeyValue, 0, sc.kvBlock)
	}
	sc.kvSlab = sc.kvSlab[:len(sc.kvSlab)+1]
	return &sc.kvSlab[len(sc.kvSlab)-1]
}

// carve returns an empty slice with room for n bytes for an owned result,
// cut from the scanner's current block of cell bytes.
func (sc *Scanner) carve(n int) []byte {
	if n > scanSlabBytes/4 {
		return make([]byte, 0, n)
	}
	if cap(sc.slab)-len(sc.slab) < n {
		size := min(max(2*cap(sc.slab), 1<<10), scanSlabBytes)
		if left := sc.rowsLeft(); left > 0 {
			// Room for the rows a Limit still wants, if they are like
			// this one (the cells of a row are carved one at a time, so
			// wide rows only grow faster).
			size = min(min(left, scanSlabBytes)*n, scanSlabBytes)
		}
		for size < 4*n {
			size *= 2
		}
		sc.slab = make([]byte, 0, size)
	}
	p := len(sc.slab)
	sc.slab = sc.slab[:p+n]
	return sc.slab[p : p : p+n]
}

// rowsLeft returns how many more rows the scan's Limit lets it return,
// counting the one being read, or 0 without a Limit.
func (sc *Scanner) rowsLeft() int {
	if sc.scan.Limit <= 0 {
		return 0
	}
	return max(sc.scan.Limit-sc.rows, 1)
}

// NextInto reads the next row (or part of one) into res, reusing its
// memory as GetInto does: the cells of the previous result read into res
// become invalid, the new ones stay valid until res is used again. A scan
// loop that reuses one ScanResult allocates nothing per row in the steady
// state. It returns false at the end.
func (sc *Scanner) NextInto(res *ScanResult) (bool, error) { return sc.nextInto(res, false) }

// nextInto is NextInto; owned results get their cell bytes from carve.
func (sc *Scanner) nextInto(res *ScanResult, owned bool) (bool, error) {
	res.reset()
	res.Partial = false
	if sc.closed {
		return false, errors.New("region: scanner closed")
	}
	if len(sc.pending) > 0 {
		sc.emit(res, sc.pending, owned, sc.pendingOwn)
		return true, nil
	}
	// Owned results take their cells' memory from res and the slabs as
	// the store scanners copy them; others copy from the store scanners'
	// memory.
	if owned != sc.carving {
		var carver scanner.Carver
		if owned {
			carver = (*slabCarver)(sc)
		}
		for _, ss := range sc.stores {
			ss.SetCarver(carver)
		}
		sc.carving = owned
	}
	sc.carveRes = res
	if sc.simple {
		return sc.nextSimple(res, owned)
	}
	f := sc.scan.Filter
	for !sc.done {
		if sc.scan.Limit > 0 && sc.rows >= sc.scan.Limit {
			sc.done = true
			break
		}
		if f != nil && f.FilterAllRemaining() {
			sc.done = true
			break
		}
		// The next row is the smallest (largest, reversed) any family is at.
		var row []byte
		for _, ss := range sc.stores {
			pr := ss.PeekRow()
			if pr == nil {
				continue
			}
			if row == nil {
				row = pr
				continue
			}
			c := sc.r.cmp.CompareRows(pr, row)
			if (c < 0) != sc.scan.Reversed && c != 0 {
				row = pr
			}
		}
		if row == nil {
			sc.done = true
			break
		}
		if len(sc.stores) > 1 || f != nil {
			// The row is compared with the other stores' and given to the
			// filter while the stores move.
			row = append(sc.rowBuf[:0], row...)
			sc.rowBuf = row
		}
		if f != nil {
			skip, err := f.FilterRowKey(row)
			if err != nil {
				return false, errors.Wrapf(err, "region %s: scan filter", sc.r.dir)
			}
			if skip {
				for _, ss := range sc.stores {
					if pr := ss.PeekRow(); pr != nil && sc.r.cmp.CompareRows(pr, row) == 0 {
						if err := ss.SkipRow(); err != nil {
							return false, errors.Wrapf(err, "region %s: scan", sc.r.dir)
						}
					}
				}
				f.Reset()
				// As HBase's RegionScannerImpl: a row its key filters out
				// counts as filtered, and as scanned only if the scan goes
				// on (a filter now done ends it here).
				sc.metrics.RowsFiltered++
				if f.FilterAllRemaining() {
					sc.done = true
					break
				}
				sc.metrics.RowsScanned++
				continue
			}
		}
		cells := sc.cells[:0]
		sc.carvedCells = 0 // (a row dropped below leaves nothing in res)
		for _, ss := range sc.stores {
			if len(sc.stores) > 1 {
				// (One store is at the row: it is the one row came from.)
				if pr := ss.PeekRow(); pr == nil || sc.r.cmp.CompareRows(pr, row) != 0 {
					continue
				}
			}
			n := len(cells)
			var err error
			if cells, err = ss.Row(cells); err != nil {
				return false, errors.Wrapf(err, "region %s: scan", sc.r.dir)
			}
			cells = applyStoreLimits(cells, n, sc.scan.StoreOffset, sc.scan.StoreLimit)
		}
		sc.cells = cells
		sc.metrics.RowsScanned++
		if f != nil {
			if f.HasFilterRow() {
				cells = f.FilterRowCells(cells)
			}
			if len(cells) > 0 && f.FilterRow() {
				cells = nil
			}
			f.Reset()
		}
		if len(cells) == 0 {
			// Filtered whether a filter or the column, time range and
			// version selection emptied it, as HBase counts.
			sc.metrics.RowsFiltered++
			continue
		}
		sc.rows++
		sc.emit(res, cells, owned, owned)
		return true, nil
	}
	return false, nil
}

// nextSimple is nextInto's loop for the usual scan (simple): one store,
// no filter, whole rows. No row is split, so nothing is ever pending, and
// each row's cells go to res as the store scanner returns them.
func (sc *Scanner) nextSimple(res *ScanResult, owned bool) (bool, error) {
	ss := sc.stores[0]
	for !sc.done {
		if sc.scan.Limit > 0 && sc.rows >= sc.scan.Limit {
			sc.done = true
			break
		}
		if ss.PeekRow() == nil {
			sc.done = true
			break
		}
		sc.carvedCells = 0
		cells, err := ss.Row(sc.cells[:0])
		if err != nil {
			return false, errors.Wrapf(err, "region %s: scan", sc.r.dir)
		}
		sc.cells = cells
		sc.metrics.RowsScanned++
		if len(cells) == 0 {
			sc.metrics.RowsFiltered++
			continue
		}
		sc.rows++
		if owned {
			// The cells live in res (the first) and the slabs already.
			res.Cells = append(res.Cells, cells...)
		} else {
			res.add(cells)
		}
		return true, nil
	}
	return false, nil
}

// applyStoreLimits keeps, of the family's cells cells[from:], StoreLimit
// cells after skipping StoreOffset.
func applyStoreLimits(cells []*encoding.KeyValue, from, offset, limit int) []*encoding.KeyValue {
	if offset <= 0 && limit <= 0 {
		return cells
	}
	fam := cells[from:]
	if offset > 0 {
		if offset >= len(fam) {
			fam = fam[:0]
		} else {
			fam = fam[offset:]
		}
	}
	if limit > 0 && len(fam) > limit {
		fam = fam[:limit]
	}
	return append(cells[:from], fam...)
}

// emit copies into res the first Result of cells, splitting by Batch and
// MaxResultSize, and keeps the rest pending. The pending cells stay in the
// store scanners' memory, which they reuse only on their next row: every
// part of this row is emitted before that. carved says the cells' bytes
// are cut from the slab already: an owned result then takes them as they
// are.
func (sc *Scanner) emit(res *ScanResult, cells []*encoding.KeyValue, owned, carved bool) {
	n := len(cells)
	if sc.scan.Batch > 0 && n > sc.scan.Batch {
		n = sc.scan.Batch
	}
	if sc.scan.AllowPartialResults && sc.scan.MaxResultSize > 0 {
		var size int64
		for i := 0; i < n; i++ {
			size += int64(len(cells[i].Row) + len(cells[i].Family) + len(cells[i].Qualifier) + len(cells[i].Value) + 20)
			if size >= sc.scan.MaxResultSize {
				n = i + 1
				break
			}
		}
	}
	switch {
	case owned && carved:
		// The cells live in res (the first) and the slabs already.
		res.Cells = append(res.Cells, cells[:n]...)
	case owned:
		res.addTo(cells[:n], sc.carve(cellBytes(cells[:n])))
	default:
		res.add(cells[:n])
	}
	sc.pending, sc.pendingOwn = cells[n:], carved
	res.Partial = len(sc.pending) > 0
}

// Close releases the scanner.
func (sc *Scanner) Close() {
	if sc.closed {
		return
	}
	sc.closed = true
	for _, ss := range sc.stores {
		ss.Close()
	}
	st := sc.st
	for i := 0; i < sc.opened; i++ {
		st.stores[i].rd.releaseFiles()
	}
	clear(sc.cells[:cap(sc.cells)])
	clear(sc.pending)
	st.cells = sc.cells[:0]
	sc.stores, sc.st, sc.cells, sc.pending = nil, nil, nil, nil
	st.done()
	sc.r.readers.release(sc.slot)
}

// scanState is the reusable memory of a Scanner: its store scanners and
// what they merge. Scanners take one from a pool and return it on Close,
// so a short scan (a client's region lookup is one row) does not allocate
// a dozen objects to open.
type scanState struct {
	hint   readHint
	wants  []storeWant
	cols   [][]byte
	stores []scanStore
	ssp    []*scanner.StoreScanner
	cells  []*encoding.KeyValue // the Scanner's row buffer
}

// scanStore is one store's part of a scanState.
type scanStore struct {
	ss scanner.StoreScanner
	rd storeReaders
}

var scanStates = sync.Pool{New: func() any { return &scanState{hint: newReadHint()} }}

// done returns st to the pool, without references to the caller's memory.
func (st *scanState) done() {
	clear(st.wants[:cap(st.wants)])
	clear(st.cols[:cap(st.cols)])
	clear(st.ssp[:cap(st.ssp)])
	st.wants, st.cols, st.ssp = st.wants[:0], st.cols[:0], st.ssp[:0]
	scanStates.Put(st)
}
