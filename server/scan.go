package server

import (
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// defaultClientMaxResultSize is hbase.client.scanner.max.result.size, for
// clients that do not send one.
const defaultClientMaxResultSize = 2 << 20

// scanFromPB builds a region scan from a client's Scan.
func scanFromPB(hr *hostedRegion, sp *hbasepb.Scan, handlesPartials bool, limitOfRows uint32) (*region.Scan, error) {
	cols, err := columnsFromPB(hr, sp.GetColumn())
	if err != nil {
		return nil, err
	}
	tr, err := timeRangeFromPB(sp.GetTimeRange())
	if err != nil {
		return nil, err
	}
	if len(sp.GetCfTimeRange()) > 0 {
		return nil, badRequest("per-family time ranges are not supported")
	}
	flt, err := filterFromPB(sp.GetFilter())
	if err != nil {
		return nil, err
	}
	sc := &region.Scan{
		StartRow: sp.GetStartRow(), StartExclusive: !sp.GetIncludeStartRow(),
		StopRow: sp.GetStopRow(), StopInclusive: sp.GetIncludeStopRow(),
		Reversed: sp.GetReversed(), Columns: cols, MaxVersions: int(sp.GetMaxVersions()), TimeRange: tr,
		StoreLimit: int(sp.GetStoreLimit()), StoreOffset: int(sp.GetStoreOffset()), Batch: int(sp.GetBatchSize()),
		NoCacheBlocks: !sp.GetCacheBlocks(), Filter: flt,
	}
	if len(sc.StartRow) == 0 {
		sc.StartRow, sc.StartExclusive = nil, false
	}
	if len(sc.StopRow) == 0 {
		sc.StopRow, sc.StopInclusive = nil, false
	}
	if sp.GetLimit() > 0 {
		sc.Limit = int(sp.GetLimit())
	}
	if limitOfRows > 0 && (sc.Limit == 0 || int(limitOfRows) < sc.Limit) {
		sc.Limit = int(limitOfRows)
	}
	if (handlesPartials || sp.GetAllowPartialResults()) && sp.GetMaxResultSize() > 0 {
		sc.AllowPartialResults, sc.MaxResultSize = true, int64(sp.GetMaxResultSize())
	}
	if sc.Filter != nil && sc.Filter.HasFilterRow() && (sc.AllowPartialResults || sc.Batch > 0) {
		// HBase refuses the same combination: such a filter needs whole rows.
		return nil, badRequest("a filter that needs whole rows cannot be used with partial results or a batch size")
	}
	return sc, nil
}

func (s *Server) handleScan(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ScanRequest{}
	if err := proto.Unmarshal(c.Param, req); err != nil {
		return ipc.Reply{}, badRequest("decoding ScanRequest: %v", err)
	}
	var os *openScanner
	if req.ScannerId != nil {
		os = s.scanners.get(req.GetScannerId())
		if os == nil {
			if name, ok := s.scanners.regionClosed(req.GetScannerId()); ok && !req.GetCloseScanner() {
				return ipc.Reply{}, ipc.Errorf(ipc.ClassNotServingRegionException,
					"region %s is not online on %s: scanner %d closed with it", name, s.ServerName(), req.GetScannerId())
			}
			if _, ok := s.scanners.regionClosed(req.GetScannerId()); ok || s.scanners.recentlyClosed(req.GetScannerId()) {
				// As HBase 2: the server closed it (the scan was done) and
				// the client sends one more next or close; answer with
				// nothing but the id.
				return ipc.Reply{Msg: &hbasepb.ScanResponse{ScannerId: proto.Uint64(req.GetScannerId())}}, nil
			}
			return ipc.Reply{}, ipc.Errorf(ipc.ClassUnknownScannerException,
				"unknown scanner %d: its lease (%v) may have expired, or the region moved or closed",
				req.GetScannerId(), s.cfg.ScannerTimeout)
		}
	} else {
		if req.Scan == nil {
			return ipc.Reply{}, badRequest("scan request with neither a scanner id nor a scan")
		}
		hr, r, err := s.lookupRegion(req.GetRegion())
		if err != nil {
			return ipc.Reply{}, err
		}
		hr.reads.Add(1)
		sc, err := scanFromPB(hr, req.GetScan(), req.GetClientHandlesPartials(), req.GetLimitOfRows())
		if err != nil {
			return ipc.Reply{}, err
		}
		rs, err := r.NewScanner(sc)
		if err != nil {
			return ipc.Reply{}, mapError(err, hr)
		}
		os = s.scanners.add(hr, rs)
		os.limit = sc.Limit
		os.maxResultSize = int64(req.GetScan().GetMaxResultSize())
		if os.maxResultSize <= 0 {
			os.maxResultSize = defaultClientMaxResultSize
		}
		os.maxResultSize = min(os.maxResultSize, s.cfg.ScannerMaxResultSize)
		if f := sc.Filter; f != nil {
			os.filterAll = f.FilterAllRemaining
		}
	}
	os.mu.Lock()
	defer os.mu.Unlock()
	resp := &hbasepb.ScanResponse{ScannerId: proto.Uint64(os.id), Ttl: proto.Uint32(uint32(s.cfg.ScannerTimeout.Milliseconds()))}
	if os.closed {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassUnknownScannerException, "scanner %d is closed", os.id)
	}
	if req.NextCallSeq != nil {
		if req.GetNextCallSeq() != os.nextCallSeq {
			s.scanners.remove(os.locked())
			return ipc.Reply{}, ipc.Errorf(ipc.ClassOutOfOrderScannerNext,
				"expected nextCallSeq %d but got %d for scanner %d", os.nextCallSeq, req.GetNextCallSeq(), os.id)
		}
		os.nextCallSeq++
	}
	if req.GetRenew() {
		s.scanners.touch(os)
		resp.MoreResults, resp.MoreResultsInRegion = proto.Bool(true), proto.Bool(true)
		return ipc.Reply{Msg: resp}, nil
	}
	rows := int(req.GetNumberOfRows())
	if rows == 0 && req.Scan != nil {
		rows = int(req.GetScan().GetCaching())
	}
	if rows == 0 && !req.GetCloseScanner() && req.ScannerId != nil {
		rows = 100
	}
	rb := &resultBuilder{codec: c.Codec}
	var size int64
	exhausted := false
	for n := 0; n < rows && size < os.maxResultSize; {
		res, err := os.next(c.Codec.Enabled)
		if err != nil {
			s.scanners.remove(os.locked())
			return ipc.Reply{}, mapError(err, os.hr)
		}
		if res == nil {
			exhausted = true
			break
		}
		for _, kv := range res.Cells {
			size += int64(len(kv.Row) + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + 20)
		}
		r := rb.result(res.Cells, res.Partial)
		if c.Codec.Enabled {
			resp.CellsPerResult = append(resp.CellsPerResult, uint32(len(res.Cells)))
			resp.PartialFlagPerResult = append(resp.PartialFlagPerResult, res.Partial)
		} else {
			resp.Results = append(resp.Results, r)
			resp.PartialFlagPerResult = append(resp.PartialFlagPerResult, res.Partial)
		}
		if !res.Partial {
			n++
			os.rows++
		}
	}
	if req.GetTrackScanMetrics() {
		m := os.sc.Metrics()
		resp.ScanMetrics = &hbasepb.ScanMetrics{Metrics: []*hbasepb.NameInt64Pair{
			{Name: proto.String("ROWS_SCANNED"), Value: proto.Int64(m.RowsScanned - os.reported.RowsScanned)},
			{Name: proto.String("ROWS_FILTERED"), Value: proto.Int64(m.RowsFiltered - os.reported.RowsFiltered)},
		}}
		os.reported = m
	}
	// The whole scan is over, not just this region, when its limit is
	// reached or its filter rules out every later row.
	scanDone := (os.limit > 0 && os.rows >= os.limit) || (os.filterAll != nil && os.filterAll())
	resp.MoreResultsInRegion = proto.Bool(!exhausted && !scanDone)
	resp.MoreResults = proto.Bool(!scanDone)
	if exhausted || scanDone || req.GetCloseScanner() {
		s.scanners.remove(os.locked())
	} else {
		s.scanners.touch(os)
	}
	return ipc.Reply{Msg: resp, CellBlock: rb.cells}, nil
}

// next returns the scanner's next row. With reuse (a cellblock response,
// which copies the cells before the next row is read) it is read into the
// scanner's own result rather than a new one.
//
// REQUIRES: os.mu is held.
func (os *openScanner) next(reuse bool) (*region.ScanResult, error) {
	if !reuse {
		return os.sc.Next()
	}
	ok, err := os.sc.NextInto(&os.res)
	if err != nil || !ok {
		return nil, err
	}
	return &os.res, nil
}
