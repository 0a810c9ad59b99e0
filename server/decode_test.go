package server

import (
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// decodeSeeds are requests as clients send them, and some they do not.
func decodeSeeds() []proto.Message {
	reg := regionSpec([]byte("t,,1.abc."))
	return []proto.Message{
		&hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("r")}},
		&hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("r"), MaxVersions: proto.Uint32(3),
			CacheBlocks: proto.Bool(false), ExistenceOnly: proto.Bool(true),
			Column: []*hbasepb.Column{{Family: []byte("f")}, {Family: []byte("g"), Qualifier: [][]byte{[]byte("a"), {}, []byte("c")}}}}},
		&hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("r"), TimeRange: &hbasepb.TimeRange{From: proto.Uint64(1)}}},
		&hbasepb.GetRequest{Region: &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(), Value: []byte{}},
			Get: &hbasepb.Get{Row: []byte{}}},
		&hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{Row: []byte("r"),
			MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(2),
			Durability: hbasepb.MutationProto_SKIP_WAL.Enum(), Timestamp: proto.Uint64(5), Nonce: proto.Uint64(9)}},
		&hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{MutateType: hbasepb.MutationProto_DELETE.Enum(),
			ColumnValue: []*hbasepb.MutationProto_ColumnValue{{Family: []byte("f")}}}},
		&hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{Row: []byte("r")},
			Condition: &hbasepb.Condition{Row: []byte("r")}},
		&hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{AssociatedCellCount: proto.Int32(-1)}},
	}
}

// checkDecoders checks that whatever a hand decoder takes, proto.Unmarshal
// decodes to the same message.
func checkDecoders(t *testing.T, b []byte) (tookGet, tookMutate bool) {
	t.Helper()
	var d decodeScratch
	var g hbasepb.GetRequest
	if d.decodeGetRequest(b, &g) {
		tookGet = true
		var want hbasepb.GetRequest
		if err := proto.Unmarshal(b, &want); err != nil {
			t.Fatalf("decodeGetRequest took %x, proto.Unmarshal: %v", b, err)
		}
		if !proto.Equal(&g, &want) {
			t.Fatalf("decodeGetRequest gave %v, proto.Unmarshal %v", &g, &want)
		}
	}
	d.reset()
	var m hbasepb.MutateRequest
	if d.decodeMutateRequest(b, &m) {
		tookMutate = true
		var want hbasepb.MutateRequest
		if err := proto.Unmarshal(b, &want); err != nil {
			t.Fatalf("decodeMutateRequest took %x, proto.Unmarshal: %v", b, err)
		}
		if !proto.Equal(&m, &want) {
			t.Fatalf("decodeMutateRequest gave %v, proto.Unmarshal %v", &m, &want)
		}
	}
	return tookGet, tookMutate
}

func TestDecodeRequests(t *testing.T) {
	// Which seeds the decoders take: the common shapes, not the rest (a
	// bare Get's bytes are also a valid MutateRequest).
	want := [][2]bool{{true, true}, {true, false}, {false, false}, {true, true},
		{false, true}, {false, false}, {false, false}, {false, true}}
	for i, m := range decodeSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		g, mu := checkDecoders(t, b)
		if g != want[i][0] || mu != want[i][1] {
			t.Errorf("seed %d (%v): took as Get %v, as Mutate %v; want %v", i, m, g, mu, want[i])
		}
	}
}

func FuzzDecodeRequests(f *testing.F) {
	for _, m := range decodeSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecoders(t, b) })
}
