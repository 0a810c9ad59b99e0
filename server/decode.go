package server

import (
	"math"

	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The hot requests, GetRequest and MutateRequest, in the shape clients send
// them, are decoded here into a call's scratch, their bytes aliasing the
// request (which lives until the response is written): proto.Unmarshal
// allocates every message, scalar and byte slice of them. A decoder
// returns false for anything it does not take (a field it does not know,
// one repeated where proto would merge, an enum value proto would keep as
// unknown, a required field missing, malformed bytes), and the caller
// falls back to proto.Unmarshal, which gives the same message or the
// error. FuzzDecodeRequests checks them against proto.Unmarshal.

// decodeScratch is the memory the decoders point a request's fields to.
type decodeScratch struct {
	region     hbasepb.RegionSpecifier
	regionType hbasepb.RegionSpecifier_RegionSpecifierType
	get        hbasepb.Get
	maxVer     uint32
	cacheBlk   bool
	existOnly  bool
	cols       []hbasepb.Column
	colPtrs    []*hbasepb.Column
	quals      [][]byte
	mut        hbasepb.MutationProto
	mutType    hbasepb.MutationProto_MutationType
	durability hbasepb.MutationProto_Durability
	ts         uint64
	cellCount  int32
	nonce      uint64
}

// maxScratchColumns bounds the columns a released scratch keeps.
const maxScratchColumns = 64

func (d *decodeScratch) reset() {
	d.region.Reset()
	d.get.Reset()
	d.mut.Reset()
	for i := range d.cols {
		d.cols[i].Reset()
	}
	clear(d.colPtrs)
	clear(d.quals)
	if cap(d.cols) > maxScratchColumns {
		d.cols, d.colPtrs = nil, nil
	}
	if cap(d.quals) > maxScratchColumns {
		d.quals = nil
	}
	d.cols, d.colPtrs, d.quals = d.cols[:0], d.colPtrs[:0], d.quals[:0]
}

// field is one decoded field: a varint's value or a length-delimited
// field's bytes.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// nextField decodes the field at the start of b, taking only varints and
// length-delimited fields, and returns the rest.
func nextField(b []byte) (field, []byte, bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, false
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(b)
	default:
		return field{}, nil, false
	}
	if n < 0 {
		return field{}, nil, false
	}
	return f, b[n:], true
}

// once records field num as seen and reports whether it was new and of
// type typ.
func once(seen *uint32, f field, typ protowire.Type) bool {
	if f.typ != typ || *seen&(1<<f.num) != 0 {
		return false
	}
	*seen |= 1 << f.num
	return true
}

// enumValue returns v as a value of a closed enum whose values are
// 0..maxValue (minValue..maxValue), or false for one proto would keep as an
// unknown field.
func enumValue(v uint64, minValue, maxValue int32) (int32, bool) {
	if v > math.MaxInt32 || int32(v) < minValue || int32(v) > maxValue {
		return 0, false
	}
	return int32(v), true
}

func (d *decodeScratch) decodeRegion(b []byte) (*hbasepb.RegionSpecifier, bool) {
	r := &d.region
	var seen uint32
	for len(b) > 0 {
		f, rest, ok := nextField(b)
		if !ok {
			return nil, false
		}
		b = rest
		switch f.num {
		case 1:
			t, ok := enumValue(f.v, int32(hbasepb.RegionSpecifier_REGION_NAME), int32(hbasepb.RegionSpecifier_ENCODED_REGION_NAME))
			if !ok || !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.regionType = hbasepb.RegionSpecifier_RegionSpecifierType(t)
			r.Type = &d.regionType
		case 2:
			if !once(&seen, f, protowire.BytesType) {
				return nil, false
			}
			r.Value = f.b
		default:
			return nil, false
		}
	}
	return r, seen == 1<<1|1<<2 // both are required
}

// decodeColumn decodes a Column into the scratch's next column.
func (d *decodeScratch) decodeColumn(b []byte) (*hbasepb.Column, bool) {
	if len(d.cols) == cap(d.cols) {
		// Growing would move the columns colPtrs points to.
		return nil, false
	}
	d.cols = d.cols[:len(d.cols)+1]
	c := &d.cols[len(d.cols)-1]
	c.Reset()
	hasFamily := false
	start := len(d.quals)
	for len(b) > 0 {
		f, rest, ok := nextField(b)
		if !ok || f.typ != protowire.BytesType {
			return nil, false
		}
		b = rest
		switch f.num {
		case 1:
			if hasFamily {
				return nil, false
			}
			hasFamily = true
			c.Family = f.b
		case 2:
			d.quals = append(d.quals, f.b)
		default:
			return nil, false
		}
	}
	if len(d.quals) > start {
		c.Qualifier = d.quals[start:len(d.quals):len(d.quals)]
	}
	return c, hasFamily
}

func (d *decodeScratch) decodeGet(b []byte) (*hbasepb.Get, bool) {
	g := &d.get
	var seen uint32
	for len(b) > 0 {
		f, rest, ok := nextField(b)
		if !ok {
			return nil, false
		}
		b = rest
		switch f.num {
		case 1:
			if !once(&seen, f, protowire.BytesType) {
				return nil, false
			}
			g.Row = f.b
		case 2:
			if f.typ != protowire.BytesType {
				return nil, false
			}
			c, ok := d.decodeColumn(f.b)
			if !ok {
				return nil, false
			}
			d.colPtrs = append(d.colPtrs, c)
		case 6:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.maxVer = uint32(f.v)
			g.MaxVersions = &d.maxVer
		case 7:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.cacheBlk = f.v != 0
			g.CacheBlocks = &d.cacheBlk
		case 10:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.existOnly = f.v != 0
			g.ExistenceOnly = &d.existOnly
		default:
			return nil, false
		}
	}
	if len(d.colPtrs) > 0 {
		g.Column = d.colPtrs[:len(d.colPtrs):len(d.colPtrs)]
	}
	return g, seen&(1<<1) != 0 // row is required
}

// splitRegionRequest splits the shape GetRequest and MutateRequest share
// when clients send them: exactly a region (field 1, decoded) and one
// message (field 2, returned undecoded).
func (d *decodeScratch) splitRegionRequest(b []byte) (*hbasepb.RegionSpecifier, []byte, bool) {
	var region *hbasepb.RegionSpecifier
	var body []byte
	var seen uint32
	for len(b) > 0 {
		f, rest, ok := nextField(b)
		if !ok || !once(&seen, f, protowire.BytesType) {
			return nil, nil, false
		}
		b = rest
		switch f.num {
		case 1:
			if region, ok = d.decodeRegion(f.b); !ok {
				return nil, nil, false
			}
		case 2:
			body = f.b
		default:
			return nil, nil, false
		}
	}
	return region, body, seen == 1<<1|1<<2
}

// decodeGetRequest decodes b into req (see the top of the file).
func (d *decodeScratch) decodeGetRequest(b []byte, req *hbasepb.GetRequest) bool {
	proto.Reset(req)
	if cap(d.cols) == 0 {
		d.cols = make([]hbasepb.Column, 0, 8)
	}
	region, body, ok := d.splitRegionRequest(b)
	if !ok {
		return false
	}
	req.Region = region
	req.Get, ok = d.decodeGet(body)
	return ok
}

func (d *decodeScratch) decodeMutation(b []byte) (*hbasepb.MutationProto, bool) {
	m := &d.mut
	var seen uint32
	for len(b) > 0 {
		f, rest, ok := nextField(b)
		if !ok {
			return nil, false
		}
		b = rest
		switch f.num {
		case 1:
			if !once(&seen, f, protowire.BytesType) {
				return nil, false
			}
			m.Row = f.b
		case 2:
			t, ok := enumValue(f.v, int32(hbasepb.MutationProto_APPEND), int32(hbasepb.MutationProto_DELETE))
			if !ok || !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.mutType = hbasepb.MutationProto_MutationType(t)
			m.MutateType = &d.mutType
		case 4:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.ts = f.v
			m.Timestamp = &d.ts
		case 6:
			t, ok := enumValue(f.v, int32(hbasepb.MutationProto_USE_DEFAULT), int32(hbasepb.MutationProto_FSYNC_WAL))
			if !ok || !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.durability = hbasepb.MutationProto_Durability(t)
			m.Durability = &d.durability
		case 8:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.cellCount = int32(f.v)
			m.AssociatedCellCount = &d.cellCount
		case 9:
			if !once(&seen, f, protowire.VarintType) {
				return nil, false
			}
			d.nonce = f.v
			m.Nonce = &d.nonce
		default:
			return nil, false
		}
	}
	return m, true
}

// decodeMutateRequest decodes a MutateRequest without a condition or a
// nonce group into req (see the top of the file).
func (d *decodeScratch) decodeMutateRequest(b []byte, req *hbasepb.MutateRequest) bool {
	proto.Reset(req)
	region, body, ok := d.splitRegionRequest(b)
	if !ok {
		return false
	}
	req.Region = region
	req.Mutation, ok = d.decodeMutation(body)
	return ok
}
