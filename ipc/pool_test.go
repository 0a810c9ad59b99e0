package ipc

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestAppendResponseHeaderIsProtos checks the hand-written header of an
// answer against the header proto.Marshal writes.
func TestAppendResponseHeaderIsProtos(t *testing.T) {
	msg := wrapperspb.Bytes([]byte("value"))
	for _, id := range []uint32{0, 1, 127, 128, 1 << 20, 0xFFFFFFFF} {
		for _, n := range []int{0, 1, 127, 128, 300000} {
			cells := make([]byte, n)
			h := &hbasepb.ResponseHeader{CallId: proto.Uint32(id)}
			if n > 0 {
				h.CellBlockMeta = &hbasepb.CellBlockMeta{Length: proto.Uint32(uint32(n))}
			}
			want := []byte{0, 0, 0, 0}
			want, _ = appendDelimited(want, h)
			want, _ = appendDelimited(want, msg)
			want = append(want, cells...)
			putLen(want)
			got, err := AppendResponse([]byte("prefix"), id, msg, cells, nil)
			if err != nil {
				t.Fatal(err)
			}
			assertBytes(t, "response", got[len("prefix"):], want)
		}
	}
}

func putLen(frame []byte) {
	n := len(frame) - 4
	frame[0], frame[1], frame[2], frame[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

// TestDecodeHeaderTakesCommonHeaders checks that the headers clients send
// are decoded without proto.Unmarshal, and the rest are left to it.
func TestDecodeHeaderTakesCommonHeaders(t *testing.T) {
	tests := []struct {
		h    *hbasepb.RequestHeader
		fast bool
	}{
		{&hbasepb.RequestHeader{CallId: proto.Uint32(7), MethodName: proto.String("Get"), RequestParam: proto.Bool(true)}, true},
		{&hbasepb.RequestHeader{CallId: proto.Uint32(1 << 31), MethodName: proto.String("Mutate"), RequestParam: proto.Bool(true),
			CellBlockMeta: &hbasepb.CellBlockMeta{Length: proto.Uint32(1000)}, Priority: proto.Uint32(200), Timeout: proto.Uint32(60000)}, true},
		{&hbasepb.RequestHeader{CellBlockMeta: &hbasepb.CellBlockMeta{}}, true},
		{&hbasepb.RequestHeader{}, true},
		{&hbasepb.RequestHeader{CallId: proto.Uint32(1), TraceInfo: &hbasepb.RPCTInfo{}}, false},
		{&hbasepb.RequestHeader{CallId: proto.Uint32(1), Attribute: []*hbasepb.NameBytesPair{{Name: proto.String("a")}}}, false},
	}
	var names methodNames
	for _, tc := range tests {
		b, err := proto.Marshal(tc.h)
		if err != nil {
			t.Fatal(err)
		}
		var req Request
		if got := decodeHeader(b, &req, &names); got != tc.fast {
			t.Fatalf("decodeHeader(%v) = %v, want %v", tc.h, got, tc.fast)
		}
		if tc.fast && !proto.Equal(&req.Header, tc.h) {
			t.Fatalf("decoded %v, want %v", &req.Header, tc.h)
		}
	}
	// A repeated field is proto's to merge.
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = append(b, b...)
	var req Request
	if decodeHeader(b, &req, &names) {
		t.Fatal("decodeHeader took a header with call_id twice")
	}
	if len(names) != 2 {
		t.Fatalf("interned %d names, want 2", len(names))
	}
}

// releaseHandler answers every call with a reply whose memory it counts out
// and back in.
type releaseHandler struct {
	out, in atomic.Int64
}

type countedReply struct{ h *releaseHandler }

func (r countedReply) Release() { r.h.in.Add(1) }

func (h *releaseHandler) Serves(string) bool { return true }

func (h *releaseHandler) ServeCall(_ context.Context, c *Call) (Reply, error) {
	h.out.Add(1)
	if c.Method == "Fail" {
		return Reply{Release: countedReply{h}}, Errorf(ClassIOException, "failing")
	}
	return Reply{Msg: wrapperspb.Bytes(c.Param), CellBlock: c.CellBlock, Release: countedReply{h}}, nil
}

// TestReplyReleased checks that every reply's memory is released once its
// response is written, exceptions included.
func TestReplyReleased(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &releaseHandler{}
	s := &Server{Handler: h, Logger: discardLogger()}
	go s.Serve(ln)
	defer s.Close()
	for _, snappy := range []bool{false, true} {
		cc := dial(t, ln.Addr().String(), DialOptions{Snappy: snappy})
		for i := 0; i < 100; i++ {
			method := "Echo"
			if i%10 == 0 {
				method = "Fail"
			}
			_, err := cc.Call(ctxT(t), method, wrapperspb.Bytes([]byte("x")), cellsFor("r", 3, 10), nil)
			if (err != nil) != (method == "Fail") {
				t.Fatalf("%s: %v", method, err)
			}
			// Released after the write, so perhaps just after the answer.
			waitFor(t, "the reply released", func() bool { return h.out.Load() == h.in.Load() })
		}
	}
}

// TestAppendCallRequestIsAppendRequest checks Call's hand-written request
// header against AppendRequest's.
func TestAppendCallRequestIsAppendRequest(t *testing.T) {
	for _, id := range []uint32{0, 1, 128, 0xFFFFFFFE} {
		for _, param := range []proto.Message{nil, wrapperspb.Bytes(nil), wrapperspb.Bytes(make([]byte, 200))} {
			for _, n := range []int{0, 5, 200} {
				for _, timeout := range []uint32{0, 1, 60000} {
					for _, hasTimeout := range []bool{false, true} {
						h := &hbasepb.RequestHeader{CallId: proto.Uint32(id), MethodName: proto.String("Mutate")}
						if hasTimeout {
							h.Timeout = proto.Uint32(timeout)
						}
						cells := make([]byte, n)
						want, err := AppendRequest(nil, h, param, cells)
						if err != nil {
							t.Fatal(err)
						}
						got, err := appendCallRequest([]byte("x"), id, "Mutate", hasTimeout, timeout, param, cells)
						if err != nil {
							t.Fatal(err)
						}
						assertBytes(t, "request", got[1:], want)
					}
				}
			}
		}
	}
}
