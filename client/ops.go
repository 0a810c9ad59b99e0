package client

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// mayRetry reports whether a call that failed with err may be sent again:
// an operation that is not idempotent (increment, append) is not resent
// after a connection broke with the request possibly applied.
func mayRetry(err error, idempotent bool) bool {
	if idempotent || !errors.Is(err, errConnFailed) {
		return true
	}
	return errors.Is(err, errDialFailed)
}

// withRegion runs fn on the region of table containing row, relocating and
// retrying as the error says.
func (c *Client) withRegion(ctx context.Context, op, table string, row []byte, idempotent bool,
	fn func(loc *regionLoc) error) error {
	for attempt := 0; ; attempt++ {
		loc, err := c.locate(ctx, table, row)
		addr := ""
		if err == nil {
			addr = loc.addr
			if addr == "" {
				err = errors.Mark(errors.Newf("region %s is not assigned", loc.name), errNoRegion)
			} else {
				err = fn(loc)
			}
		}
		if err == nil {
			return nil
		}
		retry := c.handleFailure(err, addr, table) && mayRetry(err, idempotent)
		if !retry || attempt >= c.opts.Retries || ctx.Err() != nil {
			return errors.Wrapf(err, "client: %s in %s (row %q)", op, table, row)
		}
		c.log.Debug("client: retrying", "op", op, "table", table, "attempt", attempt+1, "err", err.Error())
		if berr := c.backoff(ctx, attempt); berr != nil {
			return errors.Wrapf(errors.CombineErrors(err, berr), "client: %s in %s (row %q)", op, table, row)
		}
	}
}

// Get reads one row. A row without matching cells gives an empty Result.
func (c *Client) Get(ctx context.Context, g *Get) (*Result, error) {
	pg, err := g.pb()
	if err != nil {
		return nil, err
	}
	var res *Result
	err = c.withRegion(ctx, "get", g.Table, g.Row, true, func(loc *regionLoc) error {
		resp := &hbasepb.GetResponse{}
		cb, err := c.call(ctx, loc.addr, clientService, "Get", &hbasepb.GetRequest{Region: loc.spec(), Get: pg}, nil, resp)
		if err != nil {
			return err
		}
		var it encoding.CellBlockIter
		it.Init(cb, false)
		res, err = decodeResult(resp.GetResult(), &it)
		return err
	})
	return res, err
}

// mutateOps names Mutate's operation in errors without building the name
// on every call.
var mutateOps = map[MutationType]string{}

func init() {
	for _, t := range []MutationType{MutationAppend, MutationIncrement, MutationPut, MutationDelete} {
		mutateOps[t] = "mutate (" + t.String() + ")"
	}
}

func mutateOp(t MutationType) string {
	if op, ok := mutateOps[t]; ok {
		return op
	}
	return "mutate (" + t.String() + ")"
}

// Mutate applies one mutation. It returns the new cells for an increment
// or an append, and an empty Result otherwise.
//
// An increment or append is not resent after a connection broke while it
// was in flight, since it may have been applied.
func (c *Client) Mutate(ctx context.Context, m *Mutation) (*Result, error) {
	var cells []byte
	pm, err := m.pb(&cells, c.codecEnabled())
	if err != nil {
		return nil, err
	}
	idempotent := m.Type == MutationPut || m.Type == MutationDelete
	var res *Result
	err = c.withRegion(ctx, mutateOp(m.Type), m.Table, m.Row, idempotent, func(loc *regionLoc) error {
		resp := &hbasepb.MutateResponse{}
		cb, err := c.call(ctx, loc.addr, clientService, "Mutate", &hbasepb.MutateRequest{Region: loc.spec(), Mutation: pm}, cells, resp)
		if err != nil {
			return err
		}
		var it encoding.CellBlockIter
		it.Init(cb, false)
		res, err = decodeResult(resp.GetResult(), &it)
		return err
	})
	return res, err
}

// IncrementColumn adds amount to the 8-byte counter at family:qualifier of
// row and returns its new value.
func (c *Client) IncrementColumn(ctx context.Context, table string, row, family, qualifier []byte, amount int64) (int64, error) {
	res, err := c.Mutate(ctx, NewIncrement(table, row).AddInt(family, qualifier, amount))
	if err != nil {
		return 0, err
	}
	if len(res.Cells) != 1 {
		return 0, errors.Newf("client: increment of %s:%s returned %d cells, want 1", family, qualifier, len(res.Cells))
	}
	return Int64(res.Cells[0].Value)
}

// Condition is the test of a CheckAndMutate: either a column compared with
// a comparator, or a filter that the row must pass.
type Condition struct {
	// Family and Qualifier name the column tested.
	Family, Qualifier []byte
	// Op compares the comparator's operand with the column's value, in
	// that order, as HBase does: CompareGreater holds when the operand is
	// greater than the value.
	Op filter.CompareOp
	// Comparator compares the value; if nil, a BinaryComparator of Value.
	// A binary comparator of an empty value with CompareEqual tests that
	// the column does not exist.
	Comparator filter.ByteArrayComparable
	Value      []byte
	// Filter, if set, is the condition instead of the column test: the
	// mutations apply if the row passes it.
	Filter filter.Filter
	// TimeRange restricts the cells tested.
	TimeRange TimeRange
}

// IfEquals is the condition "family:qualifier equals value".
func IfEquals(family, qualifier, value []byte) Condition {
	return Condition{Family: family, Qualifier: qualifier, Op: filter.CompareEqual, Value: value}
}

// IfNotExists is the condition "family:qualifier has no cell".
func IfNotExists(family, qualifier []byte) Condition {
	return Condition{Family: family, Qualifier: qualifier, Op: filter.CompareEqual}
}

// IfFilter is the condition "the row passes f".
func IfFilter(f filter.Filter) Condition { return Condition{Filter: f} }

func (cond *Condition) pb(row []byte) (*hbasepb.Condition, error) {
	p := &hbasepb.Condition{Row: row, TimeRange: cond.TimeRange.pb()}
	if cond.Filter != nil {
		f, err := filterPB(cond.Filter)
		if err != nil {
			return nil, err
		}
		p.Filter = f
		return p, nil
	}
	cmp := cond.Comparator
	if cmp == nil {
		v := cond.Value
		if v == nil {
			v = []byte{}
		}
		cmp = filter.NewBinaryComparator(v)
	}
	pc, err := comparatorPB(cmp)
	if err != nil {
		return nil, err
	}
	p.Family, p.Qualifier = cond.Family, cond.Qualifier
	if p.Qualifier == nil {
		p.Qualifier = []byte{}
	}
	p.CompareType = hbasepb.CompareType(cond.Op).Enum()
	p.Comparator = pc
	return p, nil
}

// CheckAndMutate applies muts (puts and deletes of one row) atomically if
// cond holds for that row, and reports whether it did. One mutation is sent
// as a Mutate with a condition; several as a conditional RegionAction of a
// Multi.
func (c *Client) CheckAndMutate(ctx context.Context, cond Condition, muts ...*Mutation) (bool, error) {
	if len(muts) == 0 {
		return false, errors.New("client: CheckAndMutate without mutations")
	}
	table, row := muts[0].Table, muts[0].Row
	for _, m := range muts {
		if normalizeTable(m.Table) != normalizeTable(table) || string(m.Row) != string(row) {
			return false, errors.New("client: CheckAndMutate mutations must all be of one table and row")
		}
		if m.Type != MutationPut && m.Type != MutationDelete {
			return false, errors.Newf("client: CheckAndMutate takes puts and deletes, not %v", m.Type)
		}
	}
	pc, err := cond.pb(row)
	if err != nil {
		return false, err
	}
	var cells []byte
	pms := make([]*hbasepb.MutationProto, len(muts))
	for i, m := range muts {
		if pms[i], err = m.pb(&cells, c.codecEnabled()); err != nil {
			return false, err
		}
	}
	var processed bool
	err = c.withRegion(ctx, "check-and-mutate", table, row, true, func(loc *regionLoc) error {
		if len(pms) == 1 {
			resp := &hbasepb.MutateResponse{}
			_, err := c.call(ctx, loc.addr, clientService, "Mutate",
				&hbasepb.MutateRequest{Region: loc.spec(), Mutation: pms[0], Condition: pc}, cells, resp)
			if err != nil {
				return err
			}
			if resp.Processed == nil {
				return errors.New("client: check-and-mutate response without processed")
			}
			processed = resp.GetProcessed()
			return nil
		}
		ra := &hbasepb.RegionAction{Region: loc.spec(), Atomic: proto.Bool(true), Condition: pc}
		for i, pm := range pms {
			ra.Action = append(ra.Action, &hbasepb.Action{Index: proto.Uint32(uint32(i)), Mutation: pm})
		}
		resp := &hbasepb.MultiResponse{}
		if _, err := c.call(ctx, loc.addr, clientService, "Multi",
			&hbasepb.MultiRequest{RegionAction: []*hbasepb.RegionAction{ra}}, cells, resp); err != nil {
			return err
		}
		if len(resp.GetRegionActionResult()) != 1 {
			return errors.Newf("client: check-and-mutate: %d region action results, want 1", len(resp.GetRegionActionResult()))
		}
		rar := resp.GetRegionActionResult()[0]
		if e := rar.GetException(); e != nil {
			return exceptionOf(e)
		}
		for _, roe := range rar.GetResultOrException() {
			if e := roe.GetException(); e != nil {
				return exceptionOf(e)
			}
		}
		processed = rar.GetProcessed()
		return nil
	})
	return processed, err
}

// exceptionOf turns a Multi exception (class and stack trace) into an
// *ipc.Exception.
func exceptionOf(p *hbasepb.NameBytesPair) error {
	return &ipc.Exception{Class: p.GetName(), Message: string(p.GetValue())}
}
