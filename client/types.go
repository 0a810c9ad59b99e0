package client

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Cell is one cell of a Result: HBase's Cell. Cells returned by the client
// are copies owned by the caller.
type Cell = encoding.KeyValue

// LatestTimestamp, as a cell's timestamp in a mutation, lets the server
// stamp the cell with its clock (HBase's HConstants.LATEST_TIMESTAMP).
const LatestTimestamp = encoding.LatestTimestamp

// Result is one row, or part of one: HBase's Result.
type Result struct {
	// Cells are in HBase's order: by family, qualifier, then newest first.
	Cells []*Cell
	// Exists answers a Get with ExistenceOnly.
	Exists bool
	// Partial is set on a part of a row when the scan returns partial rows
	// (Scan.AllowPartials or Scan.Batch); the last part has it clear.
	Partial bool
}

// Row returns the row key, or nil for an empty result.
func (r *Result) Row() []byte {
	if r == nil || len(r.Cells) == 0 {
		return nil
	}
	return r.Cells[0].Row
}

// Empty reports whether the result has no cells.
func (r *Result) Empty() bool { return r == nil || len(r.Cells) == 0 }

// Value returns the value of the newest cell of family:qualifier, or nil.
func (r *Result) Value(family, qualifier []byte) []byte {
	if c := r.Cell(family, qualifier); c != nil {
		return c.Value
	}
	return nil
}

// Cell returns the newest cell of family:qualifier, or nil.
func (r *Result) Cell(family, qualifier []byte) *Cell {
	if r == nil {
		return nil
	}
	for _, c := range r.Cells {
		if bytes.Equal(c.Family, family) && bytes.Equal(c.Qualifier, qualifier) {
			return c
		}
	}
	return nil
}

// Column names a column (Family and Qualifier) or, with a nil Qualifier, a
// whole family.
type Column struct {
	Family, Qualifier []byte
}

// Col returns the column family:qualifier.
func Col(family, qualifier string) Column {
	return Column{Family: []byte(family), Qualifier: []byte(qualifier)}
}

// Fam returns the whole family.
func Fam(family string) Column { return Column{Family: []byte(family)} }

// TimeRange selects cells with Min <= timestamp < Max. The zero value
// selects everything; a zero Max means no upper bound.
type TimeRange struct {
	Min, Max int64
}

func (tr TimeRange) pb() *hbasepb.TimeRange {
	if tr.Min == 0 && (tr.Max == 0 || tr.Max == math.MaxInt64) {
		return nil
	}
	p := &hbasepb.TimeRange{From: proto.Uint64(uint64(tr.Min))}
	if tr.Max != 0 && tr.Max != math.MaxInt64 {
		p.To = proto.Uint64(uint64(tr.Max))
	}
	return p
}

// Get reads one row: HBase's Get.
type Get struct {
	// Table is "namespace:table", or "table" in the default namespace.
	Table string
	Row   []byte
	// Columns restricts the result to these columns and families; all if
	// empty.
	Columns []Column
	// MaxVersions is the most versions per column (1 if zero).
	MaxVersions int
	TimeRange   TimeRange
	// Filter, if set, filters the row's cells on the server (package
	// scanner has HBase's filters).
	Filter filter.Filter
	// ExistenceOnly asks only whether the row has matching cells: the
	// answer is Result.Exists, with no cells.
	ExistenceOnly bool
	// StoreLimit and StoreOffset are HBase's maxResultsPerColumnFamily and
	// rowOffsetPerColumnFamily.
	StoreLimit, StoreOffset int
}

func (g *Get) pb() (*hbasepb.Get, error) {
	p := &hbasepb.Get{Row: g.Row, Column: columnsPB(g.Columns), TimeRange: g.TimeRange.pb()}
	if g.MaxVersions > 1 {
		p.MaxVersions = proto.Uint32(uint32(g.MaxVersions))
	}
	if g.ExistenceOnly {
		p.ExistenceOnly = proto.Bool(true)
	}
	if g.StoreLimit > 0 {
		p.StoreLimit = proto.Uint32(uint32(g.StoreLimit))
	}
	if g.StoreOffset > 0 {
		p.StoreOffset = proto.Uint32(uint32(g.StoreOffset))
	}
	if g.Filter != nil {
		f, err := filterPB(g.Filter)
		if err != nil {
			return nil, err
		}
		p.Filter = f
	}
	return p, nil
}

// columnsPB groups columns by family, in order of first appearance. A
// whole family wins over its single columns.
func columnsPB(cols []Column) []*hbasepb.Column {
	var out []*hbasepb.Column
	idx := map[string]int{}
	whole := map[string]bool{}
	for _, c := range cols {
		i, ok := idx[string(c.Family)]
		if !ok {
			i = len(out)
			idx[string(c.Family)] = i
			out = append(out, &hbasepb.Column{Family: c.Family})
		}
		if c.Qualifier == nil {
			whole[string(c.Family)] = true
			out[i].Qualifier = nil
			continue
		}
		if !whole[string(c.Family)] {
			out[i].Qualifier = append(out[i].Qualifier, c.Qualifier)
		}
	}
	return out
}

func filterPB(f filter.Filter) (*hbasepb.Filter, error) {
	p, err := filter.FilterToPB(f)
	if err != nil {
		return nil, errors.Wrap(err, "client: encoding filter")
	}
	return p, nil
}

func comparatorPB(c filter.ByteArrayComparable) (*hbasepb.Comparator, error) {
	p, err := filter.ComparatorToPB(c)
	if err != nil {
		return nil, errors.Wrap(err, "client: encoding comparator")
	}
	return p, nil
}

// MutationType is the kind of a Mutation.
type MutationType int32

// Mutation types; the values are HBase's MutationProto.MutationType.
const (
	MutationAppend    = MutationType(hbasepb.MutationProto_APPEND)
	MutationIncrement = MutationType(hbasepb.MutationProto_INCREMENT)
	MutationPut       = MutationType(hbasepb.MutationProto_PUT)
	MutationDelete    = MutationType(hbasepb.MutationProto_DELETE)
)

// Durability says how a mutation is made durable; the values are HBase's.
type Durability int32

// Durability levels.
const (
	DurabilityDefault = Durability(hbasepb.MutationProto_USE_DEFAULT)
	SkipWAL           = Durability(hbasepb.MutationProto_SKIP_WAL)
	AsyncWAL          = Durability(hbasepb.MutationProto_ASYNC_WAL)
	SyncWAL           = Durability(hbasepb.MutationProto_SYNC_WAL)
	FsyncWAL          = Durability(hbasepb.MutationProto_FSYNC_WAL)
)

// Mutation changes one row: HBase's Put, Delete, Increment or Append. Build
// one with NewPut, NewDelete, NewIncrement or NewAppend and their adders.
type Mutation struct {
	// Table is "namespace:table", or "table" in the default namespace.
	Table string
	Row   []byte
	Type  MutationType
	// Cells are the cells to write. For a delete, the cell type says the
	// kind (encoding.TypeDelete, TypeDeleteColumn, TypeDeleteFamily,
	// TypeDeleteFamilyVersion); a delete without cells removes the row.
	// For an increment, each value is an 8-byte big-endian amount. A cell
	// timestamp of LatestTimestamp means the server's clock (or Timestamp).
	Cells []Cell
	// Timestamp, if not zero, is the timestamp of cells added without one,
	// and for a delete without cells the newest timestamp it removes.
	Timestamp int64
	// TTL, if positive, expires the written cells after this long (the
	// "_ttl" attribute, milliseconds).
	TTL        time.Duration
	Durability Durability
}

// NewPut returns a put of row in table.
func NewPut(table string, row []byte) *Mutation {
	return &Mutation{Table: table, Row: row, Type: MutationPut}
}

// NewDelete returns a delete of row in table: without cells, it deletes
// the whole row.
func NewDelete(table string, row []byte) *Mutation {
	return &Mutation{Table: table, Row: row, Type: MutationDelete}
}

// NewIncrement returns an increment of row in table.
func NewIncrement(table string, row []byte) *Mutation {
	return &Mutation{Table: table, Row: row, Type: MutationIncrement}
}

// NewAppend returns an append to row in table.
func NewAppend(table string, row []byte) *Mutation {
	return &Mutation{Table: table, Row: row, Type: MutationAppend}
}

func (m *Mutation) add(family, qualifier []byte, ts int64, t encoding.Type, value []byte) *Mutation {
	if qualifier == nil {
		qualifier = []byte{}
	}
	m.Cells = append(m.Cells, Cell{Row: m.Row, Family: family, Qualifier: qualifier, Timestamp: ts, Type: t, Value: value})
	return m
}

// Add adds a cell of value at family:qualifier, stamped by the server (a
// put), or the value to append (an append).
func (m *Mutation) Add(family, qualifier, value []byte) *Mutation {
	return m.add(family, qualifier, LatestTimestamp, encoding.TypePut, value)
}

// AddAt adds a cell with the timestamp ts.
func (m *Mutation) AddAt(family, qualifier []byte, ts int64, value []byte) *Mutation {
	return m.add(family, qualifier, ts, encoding.TypePut, value)
}

// AddInt adds amount to family:qualifier (an increment).
func (m *Mutation) AddInt(family, qualifier []byte, amount int64) *Mutation {
	return m.add(family, qualifier, LatestTimestamp, encoding.TypePut, binary.BigEndian.AppendUint64(nil, uint64(amount)))
}

// DeleteFamily deletes every cell of family at or before ts
// (LatestTimestamp: all).
func (m *Mutation) DeleteFamily(family []byte, ts int64) *Mutation {
	return m.add(family, nil, ts, encoding.TypeDeleteFamily, nil)
}

// DeleteFamilyVersion deletes every cell of family with exactly the
// timestamp ts.
func (m *Mutation) DeleteFamilyVersion(family []byte, ts int64) *Mutation {
	return m.add(family, nil, ts, encoding.TypeDeleteFamilyVersion, nil)
}

// DeleteColumns deletes every version of family:qualifier at or before ts
// (LatestTimestamp: all): HBase's Delete.addColumns.
func (m *Mutation) DeleteColumns(family, qualifier []byte, ts int64) *Mutation {
	return m.add(family, qualifier, ts, encoding.TypeDeleteColumn, nil)
}

// DeleteColumn deletes one version of family:qualifier, the one with
// timestamp ts, or the newest if ts is LatestTimestamp: HBase's
// Delete.addColumn.
func (m *Mutation) DeleteColumn(family, qualifier []byte, ts int64) *Mutation {
	return m.add(family, qualifier, ts, encoding.TypeDelete, nil)
}

var deleteTypes = map[encoding.Type]hbasepb.MutationProto_DeleteType{
	encoding.TypeDelete:              hbasepb.MutationProto_DELETE_ONE_VERSION,
	encoding.TypeDeleteColumn:        hbasepb.MutationProto_DELETE_MULTIPLE_VERSIONS,
	encoding.TypeDeleteFamily:        hbasepb.MutationProto_DELETE_FAMILY,
	encoding.TypeDeleteFamilyVersion: hbasepb.MutationProto_DELETE_FAMILY_VERSION,
}

// ttlAttribute is the mutation attribute of a cell TTL in milliseconds.
const ttlAttribute = "_ttl"

func (m *Mutation) check() error {
	if len(m.Row) == 0 {
		return errors.New("client: mutation without a row")
	}
	if m.Table == "" {
		return errors.New("client: mutation without a table")
	}
	switch m.Type {
	case MutationPut, MutationAppend, MutationIncrement:
		if len(m.Cells) == 0 {
			return errors.Newf("client: %v of row %q without cells", m.Type, m.Row)
		}
	case MutationDelete:
	default:
		return errors.Newf("client: unknown mutation type %d", m.Type)
	}
	for i := range m.Cells {
		c := &m.Cells[i]
		if m.Type == MutationDelete {
			if _, ok := deleteTypes[c.Type]; !ok {
				return errors.Newf("client: delete of row %q has a cell of type %v", m.Row, c.Type)
			}
		} else if c.Type != encoding.TypePut {
			return errors.Newf("client: %v of row %q has a cell of type %v", m.Type, m.Row, c.Type)
		}
		if m.Type == MutationIncrement && len(c.Value) != 8 {
			return errors.Newf("client: increment of %s:%s: amount of %d bytes, want 8", c.Family, c.Qualifier, len(c.Value))
		}
	}
	return nil
}

// String names the type as HBase does.
func (t MutationType) String() string {
	return hbasepb.MutationProto_MutationType(t).String()
}

// pb encodes m. With cellblocks, its cells are appended to *cells and
// counted in associated_cell_count; otherwise they go inline.
func (m *Mutation) pb(cells *[]byte, cellBlocks bool) (*hbasepb.MutationProto, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	p := &hbasepb.MutationProto{Row: m.Row, MutateType: hbasepb.MutationProto_MutationType(m.Type).Enum()}
	if m.Durability != DurabilityDefault {
		p.Durability = hbasepb.MutationProto_Durability(m.Durability).Enum()
	}
	if m.TTL > 0 {
		p.Attribute = append(p.Attribute, &hbasepb.NameBytesPair{Name: proto.String(ttlAttribute),
			Value: binary.BigEndian.AppendUint64(nil, uint64(m.TTL.Milliseconds()))})
	}
	if m.Timestamp != 0 && m.Timestamp != LatestTimestamp {
		p.Timestamp = proto.Uint64(uint64(m.Timestamp))
	}
	ts := func(c *Cell) int64 {
		if c.Timestamp == LatestTimestamp && m.Timestamp != 0 {
			return m.Timestamp
		}
		return c.Timestamp
	}
	if cellBlocks {
		for i := range m.Cells {
			kv := m.Cells[i]
			kv.Row, kv.Timestamp, kv.Tags = m.Row, ts(&m.Cells[i]), nil
			if err := kv.Validate(); err != nil {
				return nil, errors.Wrap(err, "client: bad cell")
			}
			*cells = encoding.AppendCellBlock(*cells, &kv, false)
		}
		p.AssociatedCellCount = proto.Int32(int32(len(m.Cells)))
		return p, nil
	}
	byFamily := map[string]*hbasepb.MutationProto_ColumnValue{}
	for i := range m.Cells {
		c := &m.Cells[i]
		cv := byFamily[string(c.Family)]
		if cv == nil {
			cv = &hbasepb.MutationProto_ColumnValue{Family: c.Family}
			byFamily[string(c.Family)] = cv
			p.ColumnValue = append(p.ColumnValue, cv)
		}
		qv := &hbasepb.MutationProto_ColumnValue_QualifierValue{Qualifier: c.Qualifier, Value: c.Value}
		if t := ts(c); t != LatestTimestamp {
			qv.Timestamp = proto.Uint64(uint64(t))
		}
		if m.Type == MutationDelete {
			qv.DeleteType = deleteTypes[c.Type].Enum()
		}
		cv.QualifierValue = append(cv.QualifierValue, qv)
	}
	return p, nil
}

// decodeResult turns a Result protobuf into a Result, taking its
// associated cells from it (the response's cellblock). Cells are copied.
func decodeResult(p *hbasepb.Result, it *encoding.CellBlockIter) (*Result, error) {
	r := &Result{Exists: p.GetExists(), Partial: p.GetPartial()}
	for _, c := range p.GetCell() {
		r.Cells = append(r.Cells, &Cell{Row: c.GetRow(), Family: c.GetFamily(), Qualifier: c.GetQualifier(),
			Timestamp: int64(c.GetTimestamp()), Type: encoding.Type(c.GetCellType()), Value: c.GetValue(), Tags: c.GetTags()})
	}
	cells, err := takeCells(it, int(p.GetAssociatedCellCount()))
	if err != nil {
		return nil, err
	}
	r.Cells = append(r.Cells, cells...)
	return r, nil
}

// takeCells copies the next n cells of it.
func takeCells(it *encoding.CellBlockIter, n int) ([]*Cell, error) {
	var out []*Cell
	for i := 0; i < n; i++ {
		var kv encoding.KeyValue
		ok, err := it.Next(&kv)
		if err != nil {
			return nil, errors.Wrap(err, "client: decoding response cellblock")
		}
		if !ok {
			return nil, errors.Newf("client: response cellblock has %d cells, the result announces %d", i, n)
		}
		out = append(out, kv.Clone())
	}
	return out, nil
}

// Int64 decodes an 8-byte big-endian value, as written by increments.
func Int64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, errors.Newf("client: value of %d bytes is not a long", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}
