package server

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// hostedBySpec returns the region spec names, open or not; nil if none.
func (s *Server) hostedBySpec(spec *hbasepb.RegionSpecifier) *hostedRegion {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch spec.GetType() {
	case hbasepb.RegionSpecifier_REGION_NAME:
		return s.regions[string(spec.GetValue())]
	case hbasepb.RegionSpecifier_ENCODED_REGION_NAME:
		return s.encoded[string(spec.GetValue())]
	}
	return nil
}

// lookupRegion finds the open region a RegionSpecifier names.
func (s *Server) lookupRegion(spec *hbasepb.RegionSpecifier) (*hostedRegion, *region.Region, error) {
	if spec == nil {
		return nil, nil, badRequest("missing region specifier")
	}
	hr := s.hostedBySpec(spec)
	if hr == nil {
		return nil, nil, s.notServing(spec, nil)
	}
	r := hr.r.Load()
	if r == nil {
		if hr.table.getState() == hbasepb.TableState_DISABLED || hr.table.getState() == hbasepb.TableState_DISABLING {
			return nil, nil, ipc.Errorf(ipc.ClassTableNotEnabledException, "%s is disabled", hr.table.name)
		}
		return nil, nil, s.notServing(spec, hr)
	}
	return hr, r, nil
}

// notServing is the NotServingRegionException for the region spec names,
// hr (nil if none) when it is not open here: with why it did not open if it
// is FAILED_OPEN.
func (s *Server) notServing(spec *hbasepb.RegionSpecifier, hr *hostedRegion) error {
	if why := hr.failedOpen(); why != "" {
		return ipc.Errorf(ipc.ClassNotServingRegionException, "region %s is FAILED_OPEN on %s: %s", spec.GetValue(), s.ServerName(), why)
	}
	return ipc.Errorf(ipc.ClassNotServingRegionException, "region %s is not online on %s", spec.GetValue(), s.ServerName())
}

// resultBuilder puts results into a response: cells in the cellblock when
// the connection has a codec (as HBase does), inline otherwise.
type resultBuilder struct {
	codec ipc.Codec
	cells []byte
	// spare, if not nil, is the memory of the next result, and count its
	// associated_cell_count: a call's scratch lends them so that a Get or a
	// Mutate builds its one result without allocating.
	spare *hbasepb.Result
	count int32
}

func (b *resultBuilder) result(cells []*encoding.KeyValue, partial bool) *hbasepb.Result {
	r, lent := b.spare, b.spare != nil
	if lent {
		b.spare = nil
		r.Reset()
	} else {
		r = &hbasepb.Result{}
	}
	if partial {
		r.Partial = proto.Bool(true)
	}
	if b.codec.Enabled {
		n := 0
		for _, kv := range cells {
			n += encoding.CellBlockSize(kv, b.codec.WithTags)
		}
		// One growth for the row; the cells are encoded straight from the
		// region's cells into the response's cellblock.
		b.cells = slices.Grow(b.cells, n)
		for _, kv := range cells {
			b.cells = encoding.AppendCellBlock(b.cells, kv, b.codec.WithTags)
		}
		if lent {
			b.count = int32(len(cells))
			r.AssociatedCellCount = &b.count
		} else {
			r.AssociatedCellCount = proto.Int32(int32(len(cells)))
		}
		return r
	}
	for _, kv := range cells {
		r.Cell = append(r.Cell, cellPB(kv))
	}
	return r
}

// empty returns a result without cells, in the spare if there is one.
func (b *resultBuilder) empty() *hbasepb.Result {
	if r := b.spare; r != nil {
		b.spare = nil
		r.Reset()
		return r
	}
	return &hbasepb.Result{}
}

func cellPB(kv *encoding.KeyValue) *hbasepb.Cell {
	c := &hbasepb.Cell{Row: kv.Row, Family: kv.Family, Qualifier: nonNilBytes(kv.Qualifier),
		Timestamp: proto.Uint64(uint64(kv.Timestamp)), CellType: hbasepb.CellType(kv.Type).Enum(),
		Value: nonNilBytes(kv.Value)}
	if len(kv.Tags) > 0 {
		c.Tags = kv.Tags
	}
	return c
}

// get runs a Get on hr. A point read goes into res if not nil (see
// region.GetInto): its cells stay valid until res is used again.
func (s *Server) get(hr *hostedRegion, r *region.Region, g *hbasepb.Get, rb *resultBuilder, res *region.Result) (*hbasepb.Result, error) {
	hr.reads.Add(1)
	if err := hr.checkRowInRegion(g.GetRow()); err != nil {
		return nil, err
	}
	cols, err := columnsFromPB(hr, g.GetColumn())
	if err != nil {
		return nil, err
	}
	tr, err := timeRangeFromPB(g.GetTimeRange())
	if err != nil {
		return nil, err
	}
	if len(g.GetCfTimeRange()) > 0 {
		return nil, badRequest("per-family time ranges are not supported")
	}
	flt, err := filterFromPB(g.GetFilter())
	if err != nil {
		return nil, err
	}
	var cells []*encoding.KeyValue
	if g.GetClosestRowBefore() || g.GetStoreLimit() > 0 || g.GetStoreOffset() > 0 {
		// A one-row scan does what Get alone cannot.
		sc := &region.Scan{StartRow: g.GetRow(), StopRow: g.GetRow(), StopInclusive: true, Columns: cols,
			MaxVersions: int(g.GetMaxVersions()), TimeRange: tr, Filter: flt, Limit: 1,
			StoreLimit: int(g.GetStoreLimit()), StoreOffset: int(g.GetStoreOffset()), NoCacheBlocks: !g.GetCacheBlocks()}
		if g.GetClosestRowBefore() {
			sc.StopRow, sc.StopInclusive, sc.Reversed = nil, false, true
		}
		scn, err := r.NewScanner(sc)
		if err != nil {
			return nil, mapError(err, hr)
		}
		sr, err := scn.Next()
		scn.Close()
		if err != nil {
			return nil, mapError(err, hr)
		}
		if sr != nil {
			cells = sr.Cells
		}
	} else {
		if res == nil {
			res = &region.Result{}
		}
		rg := region.Get{Row: g.GetRow(), Columns: cols, MaxVersions: int(g.GetMaxVersions()), TimeRange: tr, Filter: flt}
		if _, err := r.GetInto(&rg, res); err != nil {
			return nil, mapError(err, hr)
		}
		cells = res.Cells
	}
	if g.GetExistenceOnly() {
		return &hbasepb.Result{Exists: proto.Bool(len(cells) > 0)}, nil
	}
	return rb.result(cells, false), nil
}

// callScratch is the memory of one Get or Mutate call, pooled: the decoded
// request, the region's result, the response and its cellblock. The reply
// lends it to ipc, which releases it once the response is written.
type callScratch struct {
	getReq  hbasepb.GetRequest
	getResp hbasepb.GetResponse
	mutReq  hbasepb.MutateRequest
	mutResp hbasepb.MutateResponse
	result  hbasepb.Result
	res     region.Result
	mut     mutationScratch
	dec     decodeScratch
	rb      resultBuilder
	yes     bool // what MutateResponse.processed points to
}

var callScratches = sync.Pool{New: func() any { return new(callScratch) }}

// maxScratchCellBlock bounds the cellblock buffer a released scratch keeps.
const maxScratchCellBlock = 256 << 10

func getCallScratch(codec ipc.Codec) *callScratch {
	sc := callScratches.Get().(*callScratch)
	sc.rb = resultBuilder{codec: codec, cells: sc.rb.cells[:0], spare: &sc.result}
	return sc
}

// Release implements ipc.Releaser.
func (sc *callScratch) Release() {
	sc.getReq.Reset()
	sc.getResp.Reset()
	sc.mutReq.Reset()
	sc.mutResp.Reset()
	sc.result.Reset()
	sc.mut.reset()
	sc.dec.reset()
	if cap(sc.rb.cells) > maxScratchCellBlock {
		sc.rb.cells = nil
	}
	// The region result keeps the memory of the largest row read into it.
	n := 0
	for _, kv := range sc.res.Cells {
		n += len(kv.Row) + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + len(kv.Tags)
	}
	if n > maxScratchCellBlock || len(sc.res.Cells) > maxScratchKVs {
		sc.res = region.Result{}
	}
	sc.rb = resultBuilder{cells: sc.rb.cells[:0]}
	callScratches.Put(sc)
}

// reply is a successful answer in sc's memory.
func (sc *callScratch) reply(msg proto.Message) ipc.Reply {
	return ipc.Reply{Msg: msg, CellBlock: sc.rb.cells, Release: sc}
}

func (s *Server) handleGet(c *ipc.Call) (ipc.Reply, error) {
	sc := getCallScratch(c.Codec)
	reply, err := s.serveGet(c, sc)
	if err != nil {
		sc.Release()
	}
	return reply, err
}

func (s *Server) serveGet(c *ipc.Call, sc *callScratch) (ipc.Reply, error) {
	req := &sc.getReq
	if !sc.dec.decodeGetRequest(c.Param, req) {
		if err := proto.Unmarshal(c.Param, req); err != nil {
			return ipc.Reply{}, badRequest("decoding GetRequest: %v", err)
		}
	}
	hr, r, err := s.lookupRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	res, err := s.get(hr, r, req.GetGet(), &sc.rb, &sc.res)
	if err != nil {
		return ipc.Reply{}, err
	}
	sc.getResp.Result = res
	return sc.reply(&sc.getResp), nil
}

// mutate applies one decoded mutation that is not part of a batch.
func (s *Server) mutate(ctx context.Context, hr *hostedRegion, r *region.Region, m *mutation, rb *resultBuilder) (*hbasepb.Result, error) {
	hr.writes.Add(1)
	if hr.table.name == MetaTableName {
		return nil, badRequest("hbase:meta is written only by the server")
	}
	if err := m.resolve(hr); err != nil {
		return nil, err
	}
	switch {
	case m.put != nil:
		return rb.empty(), mapError(r.PutContext(ctx, m.put), hr)
	case m.del != nil:
		return rb.empty(), mapError(r.DeleteContext(ctx, m.del), hr)
	case m.inc != nil:
		res, err := r.IncrementContext(ctx, m.inc)
		if err != nil {
			return nil, mapError(err, hr)
		}
		return rb.result(res.Cells, false), nil
	case m.app != nil:
		res, err := r.AppendContext(ctx, m.app)
		if err != nil {
			return nil, mapError(err, hr)
		}
		return rb.result(res.Cells, false), nil
	}
	return nil, badRequest("empty mutation")
}

// checkAndMutate applies ms if cond holds.
func (s *Server) checkAndMutate(ctx context.Context, hr *hostedRegion, r *region.Region, cond *hbasepb.Condition, ms []*mutation) (bool, error) {
	hr.writes.Add(1)
	if hr.table.name == MetaTableName {
		return false, badRequest("hbase:meta is written only by the server")
	}
	if err := hr.checkRowInRegion(cond.GetRow()); err != nil {
		return false, err
	}
	cm := &region.CheckAndMutate{Row: cond.GetRow()}
	tr, err := timeRangeFromPB(cond.GetTimeRange())
	if err != nil {
		return false, err
	}
	cm.TimeRange = tr
	if cond.Filter != nil {
		if cm.Filter, err = filterFromPB(cond.GetFilter()); err != nil {
			return false, err
		}
	} else {
		if err := hr.checkFamily(cond.GetFamily()); err != nil {
			return false, err
		}
		cm.Family, cm.Qualifier = cond.GetFamily(), nonNilBytes(cond.GetQualifier())
		cm.Op = filter.CompareOp(cond.GetCompareType())
		if cond.Comparator == nil {
			return false, badRequest("check-and-mutate condition without a comparator or a filter")
		}
		if cm.Comparator, err = comparatorFromPB(cond.GetComparator()); err != nil {
			return false, err
		}
	}
	for _, m := range ms {
		if err := m.resolve(hr); err != nil {
			return false, err
		}
		rm := m.regionMutation()
		if rm == nil {
			return false, badRequest("check-and-mutate supports puts and deletes, not %v", m.kind)
		}
		cm.Mutations = append(cm.Mutations, rm)
	}
	ok, err := r.CheckAndMutateContext(ctx, cm)
	return ok, mapError(err, hr)
}

func (s *Server) handleMutate(c *ipc.Call) (ipc.Reply, error) {
	sc := getCallScratch(c.Codec)
	reply, err := s.serveMutate(c, sc)
	if err != nil {
		sc.Release()
	}
	return reply, err
}

func (s *Server) serveMutate(c *ipc.Call, sc *callScratch) (ipc.Reply, error) {
	req := &sc.mutReq
	if !sc.dec.decodeMutateRequest(c.Param, req) {
		if err := proto.Unmarshal(c.Param, req); err != nil {
			return ipc.Reply{}, badRequest("decoding MutateRequest: %v", err)
		}
	}
	var it encoding.CellBlockIter
	it.Init(c.CellBlock, c.Codec.WithTags)
	m, err := decodeMutation(req.GetMutation(), &it, &sc.mut)
	if err != nil {
		return ipc.Reply{}, err
	}
	hr, r, err := s.lookupRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	resp := &sc.mutResp
	if req.Condition != nil {
		ok, err := s.checkAndMutate(callContext(c), hr, r, req.GetCondition(), []*mutation{m})
		if err != nil {
			return ipc.Reply{}, err
		}
		sc.yes = ok
		resp.Processed, resp.Result = &sc.yes, &sc.result
		return ipc.Reply{Msg: resp, Release: sc}, nil
	}
	res, err := s.mutate(callContext(c), hr, r, m, &sc.rb)
	if err != nil {
		return ipc.Reply{}, err
	}
	sc.yes = true
	resp.Result, resp.Processed = res, &sc.yes
	return sc.reply(resp), nil
}

func exceptionPair(err error) *hbasepb.NameBytesPair {
	e := ipc.ToException(err)
	return &hbasepb.NameBytesPair{Name: proto.String(e.Class), Value: []byte(e.Message)}
}

func (s *Server) handleMulti(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.MultiRequest{}
	if err := proto.Unmarshal(c.Param, req); err != nil {
		return ipc.Reply{}, badRequest("decoding MultiRequest: %v", err)
	}
	ctx := callContext(c)
	var it encoding.CellBlockIter
	it.Init(c.CellBlock, c.Codec.WithTags)
	// Decode every mutation first: their cells come from one cellblock in
	// request order, whatever happens to each region action.
	type decoded struct {
		m   *mutation
		err error
	}
	muts := make([][]decoded, len(req.GetRegionAction()))
	for i, ra := range req.GetRegionAction() {
		muts[i] = make([]decoded, len(ra.GetAction()))
		for j, a := range ra.GetAction() {
			if a.Mutation != nil {
				m, err := decodeMutation(a.GetMutation(), &it, nil)
				muts[i][j] = decoded{m, err}
			}
		}
	}
	rb := &resultBuilder{codec: c.Codec}
	resp := &hbasepb.MultiResponse{}
	for i, ra := range req.GetRegionAction() {
		rar := &hbasepb.RegionActionResult{}
		resp.RegionActionResult = append(resp.RegionActionResult, rar)
		hr, r, err := s.lookupRegion(ra.GetRegion())
		if err != nil {
			rar.Exception = exceptionPair(err)
			continue
		}
		if ra.GetAtomic() || ra.Condition != nil {
			var ms []*mutation
			for j, a := range ra.GetAction() {
				if a.Mutation == nil {
					err = badRequest("atomic region action %d is not a mutation", a.GetIndex())
					break
				}
				if muts[i][j].err != nil {
					err = muts[i][j].err
					break
				}
				ms = append(ms, muts[i][j].m)
			}
			var ok bool
			if err == nil {
				if ra.Condition != nil {
					ok, err = s.checkAndMutate(ctx, hr, r, ra.GetCondition(), ms)
				} else {
					ok, err = true, s.atomicBatch(ctx, hr, r, ms)
				}
			}
			if err != nil {
				rar.Exception = exceptionPair(err)
				continue
			}
			rar.Processed = proto.Bool(ok)
			for _, a := range ra.GetAction() {
				rar.ResultOrException = append(rar.ResultOrException,
					&hbasepb.ResultOrException{Index: proto.Uint32(a.GetIndex()), Result: &hbasepb.Result{}})
			}
			continue
		}
		s.runActions(ctx, hr, r, ra, rb, rar, func(j int) (*mutation, error) { return muts[i][j].m, muts[i][j].err })
	}
	return ipc.Reply{Msg: resp, CellBlock: rb.cells}, nil
}

// runActions runs the actions of a non-atomic region action in order,
// batching runs of consecutive puts and deletes into one region Batch (one
// WAL entry and sync), and records a result or an exception per action.
func (s *Server) runActions(ctx context.Context, hr *hostedRegion, r *region.Region, ra *hbasepb.RegionAction,
	rb *resultBuilder, rar *hbasepb.RegionActionResult, mut func(int) (*mutation, error)) {
	actions := ra.GetAction()
	results := make([]*hbasepb.ResultOrException, len(actions))
	var batch []int // indexes of pending batchable mutations
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ms := make([]region.Mutation, len(batch))
		for k, j := range batch {
			m, _ := mut(j)
			ms[k] = m.regionMutation()
		}
		hr.writes.Add(int64(len(batch)))
		err := mapError(r.BatchContext(ctx, ms), hr)
		for _, j := range batch {
			roe := &hbasepb.ResultOrException{Index: proto.Uint32(actions[j].GetIndex())}
			if err != nil {
				roe.Exception = exceptionPair(err)
			} else {
				roe.Result = &hbasepb.Result{}
			}
			results[j] = roe
		}
		batch = batch[:0]
	}
	// Results must come out in action order, and cellblock cells in result
	// order, so cell-carrying results are built only after earlier batches
	// are flushed.
	for j, a := range actions {
		roe := &hbasepb.ResultOrException{Index: proto.Uint32(a.GetIndex())}
		switch {
		case a.Get != nil:
			flush()
			res, err := s.get(hr, r, a.GetGet(), rb, nil)
			if err != nil {
				roe.Exception = exceptionPair(err)
			} else {
				roe.Result = res
			}
		case a.Mutation != nil:
			m, err := mut(j)
			if err == nil && hr.table.name == MetaTableName {
				err = badRequest("hbase:meta is written only by the server")
			}
			if err == nil {
				err = m.resolve(hr)
			}
			if err != nil {
				roe.Exception = exceptionPair(err)
				break
			}
			if m.regionMutation() != nil {
				batch = append(batch, j)
				continue
			}
			flush()
			res, err := s.mutate(ctx, hr, r, m, rb)
			if err != nil {
				roe.Exception = exceptionPair(err)
			} else {
				roe.Result = res
			}
		default:
			roe.Exception = exceptionPair(ipc.Errorf(ipc.ClassUnsupportedOperation, "coprocessor calls are not supported"))
		}
		results[j] = roe
	}
	flush()
	rar.ResultOrException = results
}

// atomicBatch applies mutations of one row atomically (RowMutations).
func (s *Server) atomicBatch(ctx context.Context, hr *hostedRegion, r *region.Region, ms []*mutation) error {
	if hr.table.name == MetaTableName {
		return badRequest("hbase:meta is written only by the server")
	}
	rms := make([]region.Mutation, 0, len(ms))
	for _, m := range ms {
		if err := m.resolve(hr); err != nil {
			return err
		}
		rm := m.regionMutation()
		if rm == nil {
			return badRequest("atomic row mutations support puts and deletes, not %v", m.kind)
		}
		if len(rms) > 0 && string(m.row) != string(ms[0].row) {
			return badRequest("atomic row mutations must all be for one row")
		}
		rms = append(rms, rm)
	}
	hr.writes.Add(int64(len(rms)))
	return mapError(r.BatchContext(ctx, rms), hr)
}

// callContext is the context of a call's waits in the region (row locks,
// memstore space): its deadline is the client's call timeout from the
// request header, so a wait ends when the client has given up on it.
func callContext(c *ipc.Call) context.Context {
	if ms := c.Header.GetTimeout(); ms > 0 {
		return deadlineCtx{Context: context.Background(), deadline: time.Now().Add(time.Duration(ms) * time.Millisecond)}
	}
	return context.Background()
}

// deadlineCtx carries a deadline without the timer context.WithDeadline
// starts: the region only reads it to shorten its own waits.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }
