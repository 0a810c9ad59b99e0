package client

import (
	"context"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Action is one operation of a Batch: a *Get or a *Mutation.
type Action interface{ batchAction() }

func (*Get) batchAction()      {}
func (*Mutation) batchAction() {}

// BatchResult is the outcome of one action of a Batch: its Result (an
// empty one for puts and deletes), or its error.
type BatchResult struct {
	Result *Result
	Err    error
}

// Batch runs gets and mutations, of any tables and rows, with one Multi
// RPC per server (and per retry round): HBase's Table.batch. Actions of one
// region run in order; there is no atomicity across actions. Each action
// gets its own result or error; the returned error is only for a batch that
// could not be encoded.
//
// Actions whose region moved are retried after relocating, like single
// calls; an increment or append is not resent after a connection broke
// while it was in flight.
func (c *Client) Batch(ctx context.Context, actions []Action) ([]BatchResult, error) {
	type encoded struct {
		table  string
		row    []byte
		get    *hbasepb.Get
		mut    *hbasepb.MutationProto
		cells  []byte // the mutation's cellblock part
		idemp  bool
		result *BatchResult
	}
	results := make([]BatchResult, len(actions))
	enc := make([]encoded, len(actions))
	for i, a := range actions {
		e := &enc[i]
		e.result = &results[i]
		switch a := a.(type) {
		case *Get:
			pg, err := a.pb()
			if err != nil {
				return nil, errors.Wrapf(err, "client: batch action %d", i)
			}
			e.table, e.row, e.get, e.idemp = a.Table, a.Row, pg, true
		case *Mutation:
			pm, err := a.pb(&e.cells, c.codecEnabled())
			if err != nil {
				return nil, errors.Wrapf(err, "client: batch action %d", i)
			}
			e.table, e.row, e.mut = a.Table, a.Row, pm
			e.idemp = a.Type == MutationPut || a.Type == MutationDelete
		default:
			return nil, errors.Newf("client: batch action %d: unsupported type %T", i, a)
		}
	}

	pending := make([]int, len(actions))
	for i := range pending {
		pending[i] = i
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		lastRound := attempt >= c.opts.Retries
		var retry []int
		var retryMu sync.Mutex
		// fail records err for action i, or queues it for the next round.
		fail := func(i int, err error, addr string) {
			e := &enc[i]
			if !lastRound && ctx.Err() == nil && c.handleFailure(err, addr, e.table) && mayRetry(err, e.idemp) {
				retryMu.Lock()
				retry = append(retry, i)
				retryMu.Unlock()
				return
			}
			e.result.Err = errors.Wrapf(err, "client: batch action %d in %s (row %q)", i, e.table, e.row)
		}

		// Group by server, then by region, keeping action order.
		type regionGroup struct {
			loc     *regionLoc
			actions []int
		}
		type serverGroup struct {
			addr    string
			regions []*regionGroup
			byName  map[string]*regionGroup
		}
		servers := map[string]*serverGroup{}
		var order []*serverGroup
		for _, i := range pending {
			loc, err := c.locate(ctx, enc[i].table, enc[i].row)
			if err == nil && loc.addr == "" {
				err = errors.Mark(errors.Newf("region %s is not assigned", loc.name), errNoRegion)
			}
			if err != nil {
				fail(i, err, "")
				continue
			}
			sg := servers[loc.addr]
			if sg == nil {
				sg = &serverGroup{addr: loc.addr, byName: map[string]*regionGroup{}}
				servers[loc.addr] = sg
				order = append(order, sg)
			}
			rg := sg.byName[string(loc.name)]
			if rg == nil {
				rg = &regionGroup{loc: loc}
				sg.byName[string(loc.name)] = rg
				sg.regions = append(sg.regions, rg)
			}
			rg.actions = append(rg.actions, i)
		}

		var wg sync.WaitGroup
		for _, sg := range order {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := &hbasepb.MultiRequest{}
				var cells []byte
				for _, rg := range sg.regions {
					ra := &hbasepb.RegionAction{Region: rg.loc.spec()}
					for _, i := range rg.actions {
						a := &hbasepb.Action{Index: proto.Uint32(uint32(i)), Get: enc[i].get, Mutation: enc[i].mut}
						cells = append(cells, enc[i].cells...)
						ra.Action = append(ra.Action, a)
					}
					req.RegionAction = append(req.RegionAction, ra)
				}
				resp := &hbasepb.MultiResponse{}
				cb, err := c.call(ctx, sg.addr, clientService, "Multi", req, cells, resp)
				if err == nil && len(resp.GetRegionActionResult()) != len(sg.regions) {
					err = errors.Newf("client: Multi answered %d region actions of %d", len(resp.GetRegionActionResult()), len(sg.regions))
				}
				if err != nil {
					for _, rg := range sg.regions {
						for _, i := range rg.actions {
							fail(i, err, sg.addr)
						}
					}
					return
				}
				// Result cells are in the cellblock in response order.
				var it encoding.CellBlockIter
				it.Init(cb, false)
				for k, rar := range resp.GetRegionActionResult() {
					rg := sg.regions[k]
					if e := rar.GetException(); e != nil {
						for _, i := range rg.actions {
							fail(i, exceptionOf(e), sg.addr)
						}
						continue
					}
					seen := map[int]bool{}
					for _, roe := range rar.GetResultOrException() {
						i := int(roe.GetIndex())
						if i >= len(enc) || seen[i] {
							continue
						}
						seen[i] = true
						if e := roe.GetException(); e != nil {
							fail(i, exceptionOf(e), sg.addr)
							continue
						}
						r, err := decodeResult(roe.GetResult(), &it)
						if err != nil {
							enc[i].result.Err = err
							continue
						}
						enc[i].result.Result = r
					}
					for _, i := range rg.actions {
						if !seen[i] {
							enc[i].result.Err = errors.Newf("client: Multi gave no result for action %d", i)
						}
					}
				}
			}()
		}
		wg.Wait()
		pending = retry
		if len(pending) > 0 {
			c.log.Debug("client: retrying batch actions", "actions", len(pending), "attempt", attempt+1)
			if err := c.backoff(ctx, attempt); err != nil {
				for _, i := range pending {
					enc[i].result.Err = errors.Wrapf(err, "client: batch action %d", i)
				}
				break
			}
		}
	}
	return results, nil
}
