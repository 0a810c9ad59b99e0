package client

import (
	"bytes"
	"context"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// DefaultCaching is the number of rows a scanner asks for per RPC when
// Scan.Caching is zero.
const DefaultCaching = 100

// Scan metric names, as HBase's ScanMetrics.
const (
	MetricRowsScanned  = "ROWS_SCANNED"
	MetricRowsFiltered = "ROWS_FILTERED"
)

// Scan describes a range scan: HBase's Scan.
type Scan struct {
	// Table is "namespace:table", or "table" in the default namespace.
	Table string
	// StartRow is where the scan starts (inclusive unless StartExclusive);
	// empty: the table's first row, or its last if Reversed. StopRow is
	// where it stops (exclusive unless StopInclusive); empty: the end.
	// Reversed scans go from StartRow down to StopRow, so StartRow >=
	// StopRow.
	StartRow, StopRow []byte
	StartExclusive    bool
	StopInclusive     bool
	Reversed          bool
	// Columns restricts the results to these columns and families.
	Columns []Column
	// Filter, if set, filters rows and cells on the server.
	Filter      filter.Filter
	MaxVersions int
	TimeRange   TimeRange
	// Caching is the number of rows per RPC (DefaultCaching if zero).
	Caching int
	// Limit is the most rows returned in all; 0: no limit.
	Limit int
	// Batch, if positive, splits rows into Results of at most this many
	// cells (HBase's setBatch); the parts are returned as they are.
	Batch int
	// MaxResultSize bounds the bytes of cells per RPC; the server may then
	// split a row. The parts are joined back into whole rows unless
	// AllowPartials is set.
	MaxResultSize int64
	AllowPartials bool
	// StoreLimit and StoreOffset are HBase's maxResultsPerColumnFamily and
	// rowOffsetPerColumnFamily.
	StoreLimit, StoreOffset int
	// TrackMetrics asks the server for scan metrics (Scanner.Metrics).
	TrackMetrics bool
	// NoCacheBlocks keeps the blocks read out of the server's block cache.
	NoCacheBlocks bool
}

// Scanner returns the rows of a Scan, region after region. It is not safe
// for concurrent use. Call Close when done before the end, to release the
// server's scanner (it would otherwise live until its lease expires).
type Scanner struct {
	c    *Client
	scan Scan
	base *hbasepb.Scan // the scan without start, stop and limit
	err  error         // an encoding error of the scan, reported by Next

	loc *regionLoc // region of the current or next server scanner
	// start and startExcl are where the next server scanner starts.
	start     []byte
	startExcl bool
	// prevOf, if set, makes the next server scanner open in the region
	// that ends at prevOf (a reversed scan moving down).
	prevOf  []byte
	open    bool   // a server scanner is open
	id      uint64 // its id
	done    bool   // no more rows on the server side
	started bool   // loc and start are set

	buf     []*Result // fetched, not yet returned
	pieces  []*Result // parts of a row being joined
	fetched int       // whole rows fetched, for Limit
	lastRow []byte    // the last whole row fetched
	metrics map[string]int64
}

// Scan returns a scanner of s. No RPC is made until the first Next.
func (c *Client) Scan(s *Scan) *Scanner {
	sc := &Scanner{c: c, scan: *s, metrics: map[string]int64{}}
	p := &hbasepb.Scan{Column: columnsPB(s.Columns), TimeRange: s.TimeRange.pb()}
	if s.MaxVersions > 1 {
		p.MaxVersions = proto.Uint32(uint32(s.MaxVersions))
	}
	if s.Batch > 0 {
		p.BatchSize = proto.Uint32(uint32(s.Batch))
	}
	if s.MaxResultSize > 0 {
		p.MaxResultSize = proto.Uint64(uint64(s.MaxResultSize))
	}
	if s.AllowPartials {
		p.AllowPartialResults = proto.Bool(true)
	}
	if s.StoreLimit > 0 {
		p.StoreLimit = proto.Uint32(uint32(s.StoreLimit))
	}
	if s.StoreOffset > 0 {
		p.StoreOffset = proto.Uint32(uint32(s.StoreOffset))
	}
	if s.Reversed {
		p.Reversed = proto.Bool(true)
	}
	if s.NoCacheBlocks {
		p.CacheBlocks = proto.Bool(false)
	}
	if s.Filter != nil {
		p.Filter, sc.err = filterPB(s.Filter)
	}
	if s.Caching <= 0 {
		sc.scan.Caching = DefaultCaching
	}
	p.Caching = proto.Uint32(uint32(sc.scan.Caching))
	sc.base = p
	sc.start, sc.startExcl = s.StartRow, s.StartExclusive
	return sc
}

// Next returns the next row (or part of a row, with Scan.Batch or
// Scan.AllowPartials), or io.EOF after the last.
func (s *Scanner) Next(ctx context.Context) (*Result, error) {
	for {
		if len(s.buf) > 0 {
			r := s.buf[0]
			s.buf[0] = nil
			s.buf = s.buf[1:]
			if s.joins() {
				if r.Partial {
					s.pieces = append(s.pieces, r)
					continue
				}
				if len(s.pieces) > 0 {
					r = joinPieces(append(s.pieces, r))
					s.pieces = nil
				}
			}
			return r, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		if s.done || (s.scan.Limit > 0 && s.fetched >= s.scan.Limit) {
			if s.open {
				s.closeServer()
			}
			s.done = true
			return nil, io.EOF
		}
		if err := s.fetch(ctx); err != nil {
			return nil, err
		}
	}
}

// joins reports whether partial results are joined into whole rows.
func (s *Scanner) joins() bool { return !s.scan.AllowPartials && s.scan.Batch <= 0 }

func joinPieces(ps []*Result) *Result {
	n := 0
	for _, p := range ps {
		n += len(p.Cells)
	}
	out := &Result{Cells: make([]*Cell, 0, n)}
	for _, p := range ps {
		out.Cells = append(out.Cells, p.Cells...)
	}
	return out
}

// fetch makes one Scan RPC, opening a server scanner in the right region
// if none is open, retrying as the errors say.
func (s *Scanner) fetch(ctx context.Context) error {
	c := s.c
	for attempt := 0; ; attempt++ {
		err := s.fetchOnce(ctx)
		if err == nil {
			return nil
		}
		addr := ""
		if s.loc != nil {
			addr = s.loc.addr
		}
		retry := c.handleFailure(err, addr, s.scan.Table)
		if !retry || attempt >= c.opts.Retries || ctx.Err() != nil {
			s.err = errors.Wrapf(err, "client: scan of %s", s.scan.Table)
			if s.open && addr != "" {
				// The server scanner may still be open (the caller gave
				// up, or the error was about this call only): release it
				// now rather than when its lease runs out. A scanner
				// that is gone already makes this a no-op.
				c.closeScanner(addr, s.id)
			}
			s.open = false
			return s.err
		}
		c.log.Debug("client: restarting scan", "table", s.scan.Table, "attempt", attempt+1, "err", err.Error())
		// Start over after the last whole row: parts of a row and the
		// server scanner are dropped.
		s.restart()
		if berr := c.backoff(ctx, attempt); berr != nil {
			s.err = errors.Wrapf(errors.CombineErrors(err, berr), "client: scan of %s", s.scan.Table)
			return s.err
		}
	}
}

// restart makes the next fetch open a new server scanner after the last
// whole row fetched.
func (s *Scanner) restart() {
	if s.open {
		s.c.closeScanner(s.loc.addr, s.id)
	}
	s.open, s.started, s.pieces, s.loc, s.prevOf = false, false, nil, nil, nil
	if s.lastRow != nil {
		s.start, s.startExcl = s.lastRow, true
	} else {
		s.start, s.startExcl = s.scan.StartRow, s.scan.StartExclusive
	}
}

func (s *Scanner) fetchOnce(ctx context.Context) error {
	c := s.c
	if !s.started {
		var err error
		switch {
		case s.prevOf != nil:
			s.loc, err = c.locateBefore(ctx, s.scan.Table, s.prevOf)
		case s.scan.Reversed && len(s.start) == 0:
			s.loc, err = c.locateLast(ctx, s.scan.Table)
		default:
			s.loc, err = c.locate(ctx, s.scan.Table, s.start)
		}
		if err != nil {
			return err
		}
		s.started, s.prevOf = true, nil
	}
	if s.loc.addr == "" {
		return errors.Mark(errors.Newf("region %s is not assigned", s.loc.name), errNoRegion)
	}
	rows := s.scan.Caching
	if s.scan.Limit > 0 {
		rows = min(rows, s.scan.Limit-s.fetched)
	}
	var req *hbasepb.ScanRequest
	if s.open {
		req = &hbasepb.ScanRequest{ScannerId: proto.Uint64(s.id), NumberOfRows: proto.Uint32(uint32(rows))}
	} else {
		p := proto.Clone(s.base).(*hbasepb.Scan)
		p.StartRow, p.StopRow = s.start, s.scan.StopRow
		if s.startExcl && len(s.start) > 0 {
			p.IncludeStartRow = proto.Bool(false)
		}
		if s.scan.StopInclusive && len(s.scan.StopRow) > 0 {
			p.IncludeStopRow = proto.Bool(true)
		}
		if s.scan.Limit > 0 {
			p.Limit = proto.Uint32(uint32(s.scan.Limit - s.fetched))
		}
		req = &hbasepb.ScanRequest{Region: s.loc.spec(), Scan: p, NumberOfRows: proto.Uint32(uint32(rows)),
			ClientHandlesPartials: proto.Bool(true), ClientHandlesHeartbeats: proto.Bool(true)}
	}
	if s.scan.TrackMetrics {
		// Every call asks: the server reports metrics only when asked.
		req.TrackScanMetrics = proto.Bool(true)
	}
	resp := &hbasepb.ScanResponse{}
	cb, err := c.call(ctx, s.loc.addr, clientService, "Scan", req, nil, resp)
	if err != nil {
		return err
	}
	results, err := decodeScanResponse(resp, cb)
	if err != nil {
		return err
	}
	if resp.ScannerId != nil {
		s.id = resp.GetScannerId()
	}
	s.open = true
	for _, m := range resp.GetScanMetrics().GetMetrics() {
		s.metrics[m.GetName()] += m.GetValue()
	}
	for _, r := range results {
		if r.Empty() {
			continue
		}
		if !r.Partial {
			s.fetched++
			s.lastRow = r.Row()
		}
		s.buf = append(s.buf, r)
	}
	moreInRegion := len(results) > 0
	if resp.MoreResultsInRegion != nil {
		moreInRegion = resp.GetMoreResultsInRegion()
	}
	if resp.MoreResults != nil && !resp.GetMoreResults() {
		// The whole scan is over (its limit, or a filter that rules out
		// every later row); the server has closed its scanner.
		s.open, s.done = false, true
		return nil
	}
	if !moreInRegion {
		s.open = false
		s.nextRegion()
	}
	return nil
}

// nextRegion moves past the current region, or ends the scan if it was
// the last one in range.
func (s *Scanner) nextRegion() {
	loc, stop := s.loc, s.scan.StopRow
	if !s.scan.Reversed {
		if len(loc.end) == 0 || len(stop) > 0 && (bytes.Compare(loc.end, stop) > 0 ||
			bytes.Equal(loc.end, stop) && !s.scan.StopInclusive) {
			s.done = true
			return
		}
		s.start, s.startExcl, s.started = loc.end, false, false
		return
	}
	if len(loc.start) == 0 || len(stop) > 0 && bytes.Compare(stop, loc.start) >= 0 {
		s.done = true
		return
	}
	// The region before ends where this one starts: scan it from its end
	// key, exclusive, downwards.
	s.start, s.startExcl, s.started = loc.start, true, false
	s.loc = nil
	s.prevOf = loc.start
}

// Metrics returns the scan metrics summed over the RPCs so far
// (Scan.TrackMetrics): MetricRowsScanned, MetricRowsFiltered.
func (s *Scanner) Metrics() map[string]int64 {
	out := make(map[string]int64, len(s.metrics))
	for k, v := range s.metrics {
		out[k] = v
	}
	return out
}

// Renew renews the lease of the server scanner, for a caller that pauses
// longer than the lease between calls of Next. It does nothing if no
// server scanner is open.
func (s *Scanner) Renew(ctx context.Context) error {
	if !s.open {
		return nil
	}
	_, err := s.c.call(ctx, s.loc.addr, clientService, "Scan",
		&hbasepb.ScanRequest{ScannerId: proto.Uint64(s.id), Renew: proto.Bool(true), NumberOfRows: proto.Uint32(0)}, nil, nil)
	return errors.Wrapf(err, "client: renewing scanner of %s", s.scan.Table)
}

// Close ends the scan and closes the server scanner, if one is open.
func (s *Scanner) Close() error {
	s.done = true
	s.buf, s.pieces = nil, nil
	if !s.open {
		return nil
	}
	return s.closeServer()
}

func (s *Scanner) closeServer() error {
	s.open = false
	ctx, cancel := context.WithTimeout(s.c.ctx, s.c.opts.Timeout)
	defer cancel()
	_, err := s.c.call(ctx, s.loc.addr, clientService, "Scan",
		&hbasepb.ScanRequest{ScannerId: proto.Uint64(s.id), CloseScanner: proto.Bool(true), NumberOfRows: proto.Uint32(0)}, nil, nil)
	return errors.Wrapf(err, "client: closing scanner of %s", s.scan.Table)
}
