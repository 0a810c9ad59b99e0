package region

import (
	"bytes"
	"sort"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/wal"
)

// Mutation is a Put or a Delete, for Batch and CheckAndMutate.
type Mutation interface {
	mutationRow() []byte
	mutationDurability() wal.Durability
}

// Put writes cells to one row: HBase's Put. Timestamps of
// encoding.LatestTimestamp are replaced by the server's time.
type Put struct {
	Row        []byte
	Cells      []encoding.KeyValue // Family, Qualifier, Timestamp, Value (Row and Type are set by the region)
	Durability Durability          // UseDefault means the region's default
	// TTL, if positive, is a per-cell time to live (HBase's Mutation.setTTL):
	// it travels with each cell as HBase's TTL tag.
	TTL time.Duration
}

// NewPut returns a Put for row.
func NewPut(row []byte) *Put { return &Put{Row: row} }

// Add adds a cell at the server's current time.
func (p *Put) Add(family, qualifier, value []byte) *Put {
	return p.AddAt(family, qualifier, encoding.LatestTimestamp, value)
}

// AddAt adds a cell with an explicit timestamp.
func (p *Put) AddAt(family, qualifier []byte, ts int64, value []byte) *Put {
	p.Cells = append(p.Cells, encoding.KeyValue{Family: family, Qualifier: qualifier, Timestamp: ts, Type: encoding.TypePut, Value: value})
	return p
}

func (p *Put) mutationRow() []byte                { return p.Row }
func (p *Put) mutationDurability() wal.Durability { return p.Durability }

// Delete removes data from one row: HBase's Delete, with its five kinds.
// A Delete with no cells deletes the whole row (every family).
type Delete struct {
	Row        []byte
	Cells      []encoding.KeyValue // delete markers: Family, Qualifier, Timestamp, Type
	Durability Durability
}

// NewDelete returns a Delete for row; with nothing added it deletes the row.
func NewDelete(row []byte) *Delete { return &Delete{Row: row} }

// AddFamily deletes every cell of family with timestamp <= ts
// (LatestTimestamp: all of them).
func (d *Delete) AddFamily(family []byte, ts int64) *Delete {
	return d.add(family, nil, ts, encoding.TypeDeleteFamily)
}

// AddFamilyVersion deletes every column of family at exactly ts.
func (d *Delete) AddFamilyVersion(family []byte, ts int64) *Delete {
	return d.add(family, nil, ts, encoding.TypeDeleteFamilyVersion)
}

// AddColumns deletes every version of the column with timestamp <= ts.
func (d *Delete) AddColumns(family, qualifier []byte, ts int64) *Delete {
	return d.add(family, qualifier, ts, encoding.TypeDeleteColumn)
}

// AddColumn deletes one version of the column: the one at ts, or with
// LatestTimestamp the newest one.
func (d *Delete) AddColumn(family, qualifier []byte, ts int64) *Delete {
	return d.add(family, qualifier, ts, encoding.TypeDelete)
}

func (d *Delete) add(family, qualifier []byte, ts int64, t encoding.Type) *Delete {
	d.Cells = append(d.Cells, encoding.KeyValue{Family: family, Qualifier: qualifier, Timestamp: ts, Type: t})
	return d
}

func (d *Delete) mutationRow() []byte                { return d.Row }
func (d *Delete) mutationDurability() wal.Durability { return d.Durability }

// Column names a family, or one column of it when Qualifier is not nil.
type Column struct {
	Family    []byte
	Qualifier []byte
}

// Get reads one row: HBase's Get.
type Get struct {
	Row []byte
	// Columns restricts the read; empty means every family. A Column with a
	// nil Qualifier means the whole family.
	Columns []Column
	// MaxVersions per column (default 1, capped by the family's VERSIONS).
	MaxVersions int
	// TimeRange restricts timestamps; the zero value means all.
	TimeRange TimeRange
	// Filter, if set, filters the row's cells (package scanner).
	Filter filter.Filter
}

// NewGet returns a Get for row.
func NewGet(row []byte) *Get { return &Get{Row: row} }

// AddFamily restricts the Get to include family.
func (g *Get) AddFamily(family []byte) *Get {
	g.Columns = append(g.Columns, Column{Family: family})
	return g
}

// AddColumn restricts the Get to include family:qualifier.
func (g *Get) AddColumn(family, qualifier []byte) *Get {
	if qualifier == nil {
		qualifier = []byte{}
	}
	g.Columns = append(g.Columns, Column{Family: family, Qualifier: qualifier})
	return g
}

// Result is the cells of one row, sorted by family, qualifier, then newest
// first: HBase's Result.
type Result struct {
	Cells []*encoding.KeyValue

	// Inline room for a one-cell row, so that a Get into a new Result
	// allocates it and one buffer for the cell's bytes.
	kv1  encoding.KeyValue
	ptr1 [1]*encoding.KeyValue
	// mem is the memory a Result read into more than once (GetInto,
	// NextInto) keeps for its cells' bytes and structs. A Result read into
	// once (Get, Scanner.Next) keeps none: its cells hold what they need,
	// and each of the many results a scan returns is 40 bytes smaller.
	mem *resultMem
}

// resultMem is the reusable memory of a Result.
type resultMem struct {
	buf []byte
	kvs []encoding.KeyValue
}

// reset empties r for reuse; its cells' memory is overwritten from now on.
// A Result reset a second time is being reused: it starts keeping memory.
func (r *Result) reset() {
	if r.Cells == nil {
		r.Cells = r.ptr1[:0]
		return
	}
	clear(r.Cells)
	r.Cells = r.Cells[:0]
	if r.mem == nil {
		r.mem = &resultMem{}
	}
	r.mem.buf, r.mem.kvs = r.mem.buf[:0], r.mem.kvs[:0]
}

// cellBytes returns the bytes of the cells' slices.
func cellBytes(cells []*encoding.KeyValue) int {
	n := 0
	for _, c := range cells {
		n += len(c.Row) + len(c.Family) + len(c.Qualifier) + len(c.Value) + len(c.Tags)
	}
	return n
}

// add appends copies of cells to r, in r's own memory.
func (r *Result) add(cells []*encoding.KeyValue) { r.addTo(cells, nil) }

// addTo is add copying the cells' bytes to buf, if it has room for them.
func (r *Result) addTo(cells []*encoding.KeyValue, buf []byte) {
	if len(cells) == 0 {
		return
	}
	var kvs []encoding.KeyValue
	if m := r.mem; m != nil {
		if buf == nil {
			buf = m.buf
		}
		kvs = m.kvs
	}
	n := cellBytes(cells)
	if cap(buf)-len(buf) < n {
		// Grow once for this batch; cells already added keep the old
		// buffer, which stays valid.
		buf = make([]byte, 0, max(n, 2*cap(buf)))
	}
	// Room for every cell at once, as for buf.
	if need := len(r.Cells) + len(cells); cap(r.Cells) < need {
		r.Cells = append(make([]*encoding.KeyValue, 0, max(need, 2*cap(r.Cells))), r.Cells...)
	}
	need := len(kvs) + len(cells)
	if len(r.Cells) == 0 {
		need-- // the first cell goes to kv1
	}
	if need > 0 && cap(kvs) < need {
		kvs = make([]encoding.KeyValue, 0, max(need, 2*cap(kvs)))
	}
	for _, c := range cells {
		var kv *encoding.KeyValue
		if len(r.Cells) == 0 {
			kv = &r.kv1
		} else {
			kvs = append(kvs, encoding.KeyValue{})
			kv = &kvs[len(kvs)-1]
		}
		*kv, buf = c.CopyInto(buf)
		r.Cells = append(r.Cells, kv)
	}
	if m := r.mem; m != nil {
		m.buf, m.kvs = buf, kvs
	}
}

// IsEmpty reports whether the row had no matching cells.
func (r *Result) IsEmpty() bool { return r == nil || len(r.Cells) == 0 }

// Value returns the newest value of family:qualifier, nil if absent.
func (r *Result) Value(family, qualifier []byte) []byte {
	if c := r.Latest(family, qualifier); c != nil {
		return c.Value
	}
	return nil
}

// Latest returns the newest cell of family:qualifier, nil if absent.
func (r *Result) Latest(family, qualifier []byte) *encoding.KeyValue {
	if r == nil {
		return nil
	}
	if len(r.Cells) == 1 {
		// A one-cell row (most are): no search.
		if c := r.Cells[0]; bytes.Equal(c.Family, family) && bytes.Equal(c.Qualifier, qualifier) {
			return c
		}
		return nil
	}
	i := sort.Search(len(r.Cells), func(i int) bool {
		c := r.Cells[i]
		if f := bytes.Compare(c.Family, family); f != 0 {
			return f > 0
		}
		return bytes.Compare(c.Qualifier, qualifier) >= 0
	})
	if i < len(r.Cells) && bytes.Equal(r.Cells[i].Family, family) && bytes.Equal(r.Cells[i].Qualifier, qualifier) {
		return r.Cells[i]
	}
	return nil
}

// Increment adds to 8-byte big-endian counters in one row atomically:
// HBase's Increment. A missing column counts from 0.
type Increment struct {
	Row        []byte
	Columns    []IncrementColumn
	Durability Durability
}

// IncrementColumn is one counter of an Increment.
type IncrementColumn struct {
	Family, Qualifier []byte
	Amount            int64
}

// NewIncrement returns an Increment for row.
func NewIncrement(row []byte) *Increment { return &Increment{Row: row} }

// Add adds amount to family:qualifier.
func (i *Increment) Add(family, qualifier []byte, amount int64) *Increment {
	i.Columns = append(i.Columns, IncrementColumn{Family: family, Qualifier: qualifier, Amount: amount})
	return i
}

// Append appends bytes to the values of columns of one row atomically:
// HBase's Append. A missing column starts empty.
type Append struct {
	Row        []byte
	Cells      []encoding.KeyValue // Family, Qualifier, Value to append
	Durability Durability
}

// NewAppend returns an Append for row.
func NewAppend(row []byte) *Append { return &Append{Row: row} }

// Add appends value to family:qualifier.
func (a *Append) Add(family, qualifier, value []byte) *Append {
	a.Cells = append(a.Cells, encoding.KeyValue{Family: family, Qualifier: qualifier, Value: value})
	return a
}

// CheckAndMutate applies Mutations to Row if the newest value of
// Family:Qualifier compares as Op with Value: HBase's CheckAndMutate. With
// Value nil it checks that the column does not exist ("if not exists").
//
// As in HBase, the comparison reads "expected OP stored", the other way
// round from a filter's "stored OP operand": filter.CompareLess passes when
// Value is less than the value in the cell.
//
// Comparator, if set, replaces Value: the check is then
// Comparator.CompareTo(stored) as Op, as HBase compares with any
// ByteArrayComparable; a NullComparator or an empty BinaryComparator checks
// for absence as a nil Value does. Filter, if set, replaces the column check
// altogether: the mutations apply if the row has any cell passing the filter
// (HBase's CheckAndMutate with a filter condition); Family must then be
// empty.
type CheckAndMutate struct {
	Row               []byte
	Family, Qualifier []byte
	Op                filter.CompareOp
	Value             []byte
	Comparator        filter.ByteArrayComparable
	Filter            filter.Filter
	TimeRange         TimeRange
	// Mutations are applied atomically if the check passes; all must be for Row.
	Mutations []Mutation
}
