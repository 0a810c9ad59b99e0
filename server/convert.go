package server

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/scanner"
	"github.com/regionkv/regionkv/wal"
)

// Exception classes the server raises beyond ipc's list.
const (
	classWrongRegion   = "org.apache.hadoop.hbase.regionserver.WrongRegionException"
	classLockTimeout   = "java.io.IOException"
	classIllegalArg    = "org.apache.hadoop.hbase.DoNotRetryIOException"
	classFilterRefused = "org.apache.hadoop.hbase.exceptions.DeserializationException"
)

// ttlAttribute is the mutation attribute that carries a cell TTL in
// milliseconds (HBase's OperationWithAttributes "_ttl").
const ttlAttribute = "_ttl"

// mapError turns a region error into the HBase exception clients expect.
func mapError(err error, hr *hostedRegion) error {
	if err == nil {
		return nil
	}
	if _, ok := ipc.AsException(err); ok {
		return err
	}
	where := ""
	if hr != nil {
		where = " in region " + string(hr.name)
	}
	switch {
	case errors.Is(err, region.ErrNoSuchFamily):
		return &ipc.Exception{Class: ipc.ClassNoSuchColumnFamilyException, Message: err.Error() + where}
	case errors.Is(err, region.ErrRegionTooBusy):
		return &ipc.Exception{Class: ipc.ClassRegionTooBusyException, Message: err.Error() + where}
	case errors.Is(err, region.ErrClosed):
		return &ipc.Exception{Class: ipc.ClassNotServingRegionException, Message: err.Error() + where}
	case errors.Is(err, region.ErrRowLockTimeout):
		return &ipc.Exception{Class: classLockTimeout, Message: err.Error() + where}
	case errors.Is(err, filter.ErrBadFilter):
		// A filter that fails on the data it meets (InclusiveStopFilter
		// without a stop row, ...) fails again on a retry.
		return &ipc.Exception{Class: ipc.ClassDoNotRetryIOException, Message: err.Error() + where}
	}
	return &ipc.Exception{Class: ipc.ClassIOException, Message: err.Error() + where}
}

func badRequest(format string, args ...any) error {
	return ipc.Errorf(ipc.ClassDoNotRetryIOException, format, args...)
}

func checkRow(row []byte) error {
	if len(row) == 0 {
		return badRequest("row key is empty")
	}
	if len(row) > encoding.MaxRowLen {
		return badRequest("row key of %d bytes is longer than %d", len(row), encoding.MaxRowLen)
	}
	return nil
}

func (hr *hostedRegion) checkFamily(f []byte) error {
	for i := range hr.table.families {
		if hr.table.families[i].Name == string(f) {
			return nil
		}
	}
	return &ipc.Exception{Class: ipc.ClassNoSuchColumnFamilyException,
		Message: "column family " + string(f) + " does not exist in region " + string(hr.name) +
			" in table " + hr.table.name.String()}
}

func (hr *hostedRegion) checkRowInRegion(row []byte) error {
	if err := checkRow(row); err != nil {
		return err
	}
	if !hr.info.ContainsRow(row) {
		return &ipc.Exception{Class: classWrongRegion,
			Message: "requested row out of range for region " + string(hr.name) + ", row=" + string(row)}
	}
	return nil
}

func timeRangeFromPB(tr *hbasepb.TimeRange) (scanner.TimeRange, error) {
	if tr == nil {
		return scanner.TimeRange{}, nil
	}
	out := scanner.TimeRange{Min: int64(tr.GetFrom()), Max: math.MaxInt64}
	if tr.To != nil {
		out.Max = int64(tr.GetTo())
	}
	if out.Min < 0 || out.Max < out.Min {
		return out, badRequest("bad time range [%d, %d)", tr.GetFrom(), tr.GetTo())
	}
	if out.Min == 0 && out.Max == math.MaxInt64 {
		return scanner.TimeRange{}, nil
	}
	return out, nil
}

func filterFromPB(f *hbasepb.Filter) (filter.Filter, error) {
	flt, err := filter.FilterFromPB(f)
	if err != nil {
		return nil, &ipc.Exception{Class: ipc.ClassDoNotRetryIOException, Message: "filter " + f.GetName() + ": " + err.Error()}
	}
	return flt, nil
}

func comparatorFromPB(c *hbasepb.Comparator) (filter.ByteArrayComparable, error) {
	cmp, err := filter.ComparatorFromPB(c)
	if err != nil {
		return nil, badRequest("comparator %s: %v", c.GetName(), err)
	}
	return cmp, nil
}

func columnsFromPB(hr *hostedRegion, cols []*hbasepb.Column) ([]region.Column, error) {
	var out []region.Column
	for _, c := range cols {
		if err := hr.checkFamily(c.GetFamily()); err != nil {
			return nil, err
		}
		if len(c.GetQualifier()) == 0 {
			out = append(out, region.Column{Family: c.GetFamily()})
			continue
		}
		for _, q := range c.GetQualifier() {
			out = append(out, region.Column{Family: c.GetFamily(), Qualifier: nonNilBytes(q)})
		}
	}
	return out, nil
}

func durabilityFromPB(d hbasepb.MutationProto_Durability) wal.Durability {
	switch d {
	case hbasepb.MutationProto_SKIP_WAL:
		return wal.SkipWAL
	case hbasepb.MutationProto_ASYNC_WAL:
		return wal.AsyncWAL
	case hbasepb.MutationProto_SYNC_WAL:
		return wal.SyncWAL
	case hbasepb.MutationProto_FSYNC_WAL:
		return wal.FSyncWAL
	}
	return wal.UseDefault
}

// mutationScratch is the memory of one decoded mutation that a call reuses:
// a Put's cells and structs. Only puts use it; the rest are rare enough.
type mutationScratch struct {
	m   mutation
	put region.Put
	kvs []encoding.KeyValue
}

// maxScratchKVs bounds the cells a released scratch keeps.
const maxScratchKVs = 1024

// reset drops the scratch's references into the request it decoded.
func (sc *mutationScratch) reset() {
	clear(sc.kvs[:cap(sc.kvs)])
	if cap(sc.kvs) > maxScratchKVs {
		sc.kvs = nil
	}
	sc.m, sc.put = mutation{}, region.Put{}
}

// mutation is a decoded MutationProto.
type mutation struct {
	kind hbasepb.MutationProto_MutationType
	row  []byte
	put  *region.Put
	del  *region.Delete
	inc  *region.Increment
	app  *region.Append
	// rowDeleteTS, if not 0, makes a whole-row delete cover only cells at
	// or below it.
	rowDeleteTS int64
}

// resolve checks m against the region it is for and fills in what needs
// the region's families.
func (m *mutation) resolve(hr *hostedRegion) error {
	if err := hr.checkRowInRegion(m.row); err != nil {
		return err
	}
	check := func(kvs []encoding.KeyValue) error {
		for i := range kvs {
			if err := hr.checkFamily(kvs[i].Family); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case m.put != nil:
		return check(m.put.Cells)
	case m.del != nil:
		if m.rowDeleteTS != 0 && len(m.del.Cells) == 0 {
			for _, f := range hr.table.families {
				m.del.AddFamily([]byte(f.Name), m.rowDeleteTS)
			}
			m.rowDeleteTS = 0
		}
		return check(m.del.Cells)
	case m.app != nil:
		return check(m.app.Cells)
	case m.inc != nil:
		for _, c := range m.inc.Columns {
			if err := hr.checkFamily(c.Family); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mutation) regionMutation() region.Mutation {
	if m.put != nil {
		return m.put
	}
	if m.del != nil {
		return m.del
	}
	return nil
}

var deleteTypes = map[hbasepb.MutationProto_DeleteType]encoding.Type{
	hbasepb.MutationProto_DELETE_ONE_VERSION:       encoding.TypeDelete,
	hbasepb.MutationProto_DELETE_MULTIPLE_VERSIONS: encoding.TypeDeleteColumn,
	hbasepb.MutationProto_DELETE_FAMILY:            encoding.TypeDeleteFamily,
	hbasepb.MutationProto_DELETE_FAMILY_VERSION:    encoding.TypeDeleteFamilyVersion,
}

// decodeMutation decodes m, taking its associated_cell_count cells from
// cells (the request's cellblock, shared by every mutation of the request
// in order). It consumes those cells even when it fails, so later
// mutations get theirs.
func decodeMutation(m *hbasepb.MutationProto, cells *encoding.CellBlockIter, sc *mutationScratch) (*mutation, error) {
	var kvs []encoding.KeyValue
	if sc != nil {
		kvs = sc.kvs[:0]
		defer func() { sc.kvs = kvs[:0] }()
	}
	var cellErr error
	for i := int32(0); i < m.GetAssociatedCellCount(); i++ {
		var kv encoding.KeyValue
		ok, err := cells.Next(&kv)
		if err != nil || !ok {
			if cellErr == nil {
				cellErr = badRequest("mutation announces %d cells, cellblock has fewer: %v", m.GetAssociatedCellCount(), err)
			}
			break
		}
		kvs = append(kvs, kv)
	}
	if cellErr != nil {
		return nil, cellErr
	}
	row := m.GetRow()
	if len(row) == 0 && len(kvs) > 0 {
		row = kvs[0].Row
	}
	if err := checkRow(row); err != nil {
		return nil, err
	}
	defaultTS := int64(encoding.LatestTimestamp)
	if m.Timestamp != nil {
		defaultTS = int64(m.GetTimestamp())
	}
	for _, cv := range m.GetColumnValue() {
		for _, qv := range cv.GetQualifierValue() {
			kv := encoding.KeyValue{Row: row, Family: cv.GetFamily(), Qualifier: nonNilBytes(qv.GetQualifier()),
				Timestamp: defaultTS, Value: nonNilBytes(qv.GetValue()), Type: encoding.TypePut}
			if qv.Timestamp != nil {
				kv.Timestamp = int64(qv.GetTimestamp())
			}
			if m.GetMutateType() == hbasepb.MutationProto_DELETE {
				kv.Type = deleteTypes[qv.GetDeleteType()]
			}
			kvs = append(kvs, kv)
		}
	}
	for i := range kvs {
		if !bytes.Equal(kvs[i].Row, row) {
			return nil, badRequest("cell row %q does not match the mutation's row %q", kvs[i].Row, row)
		}
		if kvs[i].Timestamp < 0 {
			return nil, badRequest("negative timestamp %d", kvs[i].Timestamp)
		}
	}
	var ttl time.Duration
	for _, a := range m.GetAttribute() {
		if a.GetName() == ttlAttribute {
			if len(a.GetValue()) != 8 {
				return nil, badRequest("attribute _ttl must be 8 bytes, got %d", len(a.GetValue()))
			}
			ms := int64(binary.BigEndian.Uint64(a.GetValue()))
			if ms <= 0 {
				return nil, badRequest("attribute _ttl must be positive, got %d", ms)
			}
			ttl = time.Duration(ms) * time.Millisecond
		}
	}
	dur := durabilityFromPB(m.GetDurability())
	var out *mutation
	if sc != nil {
		out = &sc.m
	} else {
		out = new(mutation)
	}
	*out = mutation{kind: m.GetMutateType(), row: row}
	switch m.GetMutateType() {
	case hbasepb.MutationProto_PUT:
		if len(kvs) == 0 {
			return nil, badRequest("put of row %q has no cells", row)
		}
		for i := range kvs {
			if kvs[i].Type != encoding.TypePut {
				return nil, badRequest("put carries a cell of type %v", kvs[i].Type)
			}
		}
		if sc != nil {
			out.put = &sc.put
		} else {
			out.put = new(region.Put)
		}
		*out.put = region.Put{Row: row, Cells: kvs, Durability: dur, TTL: ttl}
	case hbasepb.MutationProto_DELETE:
		d := &region.Delete{Row: row, Durability: dur}
		for i := range kvs {
			switch kvs[i].Type {
			case encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily, encoding.TypeDeleteFamilyVersion:
			default:
				return nil, badRequest("delete carries a cell of type %v", kvs[i].Type)
			}
		}
		d.Cells = kvs
		if len(kvs) == 0 && defaultTS != int64(encoding.LatestTimestamp) {
			// A whole-row delete up to a timestamp: the caller, who knows
			// the families, turns it into one family delete each.
			out.rowDeleteTS = defaultTS
		}
		out.del = d
	case hbasepb.MutationProto_INCREMENT:
		inc := &region.Increment{Row: row, Durability: dur}
		for i := range kvs {
			if len(kvs[i].Value) != 8 {
				return nil, badRequest("increment of %s:%s: value of %d bytes is not a long", kvs[i].Family, kvs[i].Qualifier, len(kvs[i].Value))
			}
			inc.Columns = append(inc.Columns, region.IncrementColumn{Family: kvs[i].Family, Qualifier: kvs[i].Qualifier,
				Amount: int64(binary.BigEndian.Uint64(kvs[i].Value))})
		}
		if len(inc.Columns) == 0 {
			return nil, badRequest("increment of row %q has no columns", row)
		}
		out.inc = inc
	case hbasepb.MutationProto_APPEND:
		app := &region.Append{Row: row, Durability: dur}
		for i := range kvs {
			app.Cells = append(app.Cells, encoding.KeyValue{Family: kvs[i].Family, Qualifier: kvs[i].Qualifier, Value: kvs[i].Value})
		}
		if len(app.Cells) == 0 {
			return nil, badRequest("append of row %q has no columns", row)
		}
		out.app = app
	default:
		return nil, badRequest("unknown mutation type %v", m.GetMutateType())
	}
	return out, nil
}
