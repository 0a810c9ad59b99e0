package ipc

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// rawParam is a proto.Message whose encoding is exactly b (as unknown
// fields), so a parsed param can be re-sent byte for byte.
func rawParam(b []byte) proto.Message {
	m := &emptypb.Empty{}
	m.ProtoReflect().SetUnknown(protoreflect.RawFields(b))
	return m
}

func seedRequests(f *testing.F) {
	_, cell := goldenCell()
	add := func(b []byte, err error) {
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[4:])
	}
	add(AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(1), MethodName: proto.String("Get")}, getRequestMsg(), nil))
	add(AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(300), MethodName: proto.String("Mutate"), Priority: proto.Uint32(200),
		Timeout: proto.Uint32(5000), TraceInfo: &hbasepb.RPCTInfo{Headers: map[string]string{"traceparent": "00-ab-cd-01"}},
		Attribute: []*hbasepb.NameBytesPair{{Name: proto.String("a"), Value: []byte("b")}}}, getRequestMsg(), append(cell, cell...)))
	add(AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9)}, nil, nil))
	add(AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9)}, nil, cell))
	add(AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9)}, wrapperspb.Bytes(nil), nil))
	f.Add([]byte{})
	f.Add([]byte{0x80, 0x80, 0x80})
	f.Add([]byte{0x10, 0x08, 0x01})
	f.Add(append(delimited(nil, pbBytes(pbVarint(nil, 1, 1), 5, pbVarint(nil, 1, 10))), 1, 2, 3))
}

func FuzzParseRequest(f *testing.F) {
	seedRequests(f)
	var names methodNames
	f.Fuzz(func(t *testing.T, data []byte) {
		// The hand decoder of common headers agrees with proto.Unmarshal
		// whenever it accepts a header.
		if h, _, err := nextDelimited(data, "header"); err == nil {
			var fast Request
			if decodeHeader(h, &fast, &names) {
				var want hbasepb.RequestHeader
				if err := proto.Unmarshal(h, &want); err != nil {
					t.Fatalf("decodeHeader accepted %x, proto.Unmarshal: %v", h, err)
				}
				if !proto.Equal(&fast.Header, &want) {
					t.Fatalf("decodeHeader gave %v, proto.Unmarshal %v", &fast.Header, &want)
				}
			}
		}
		var req Request
		if err := ParseRequest(data, &req); err != nil {
			return
		}
		// Param and cellblock are pieces of the frame.
		if len(req.Param)+len(req.CellBlock) > len(data) {
			t.Fatalf("param %d + cellblock %d bytes from a frame of %d", len(req.Param), len(req.CellBlock), len(data))
		}
		if req.Param != nil && !req.Header.GetRequestParam() {
			t.Fatal("param without request_param")
		}
		// Re-encoding gives a frame that parses to the same request. The
		// header to compare with is the one AppendRequest sent (it sets
		// request_param and cell_block_meta).
		h := proto.Clone(&req.Header).(*hbasepb.RequestHeader)
		var param proto.Message
		if req.Header.GetRequestParam() {
			param = rawParam(req.Param)
		}
		buf, err := AppendRequest(nil, h, param, req.CellBlock)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", &req.Header, err)
		}
		frame, n, err := ReadFrame(bytes.NewReader(buf), len(buf), nil)
		if err != nil || int(n) != len(buf)-4 {
			t.Fatalf("re-encoded frame: length %d of %d, %v", n, len(buf), err)
		}
		var again Request
		if err := ParseRequest(frame, &again); err != nil {
			t.Fatalf("re-encoded request does not parse: %v\nheader %v", err, h)
		}
		if !proto.Equal(&again.Header, h) {
			t.Fatalf("header %v, re-parsed as %v", h, &again.Header)
		}
		if !proto.Equal(&again.Header, &req.Header) && len(req.CellBlock) == 0 {
			t.Fatalf("header %v changed to %v without a cellblock", &req.Header, &again.Header)
		}
		if !bytes.Equal(again.Param, req.Param) || (again.Param == nil) != (req.Param == nil) {
			t.Fatalf("param %x, re-parsed as %x", req.Param, again.Param)
		}
		if !bytes.Equal(again.CellBlock, req.CellBlock) {
			t.Fatalf("cellblock %x, re-parsed as %x", req.CellBlock, again.CellBlock)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	_, cell := goldenCell()
	add := func(b []byte, err error) {
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[4:])
	}
	add(AppendResponse(nil, 1, &hbasepb.GetResponse{Result: &hbasepb.Result{AssociatedCellCount: proto.Int32(1)}}, cell, nil))
	add(AppendResponse(nil, 2, &hbasepb.GetResponse{}, nil, nil))
	add(AppendResponse(nil, 3, nil, nil, nil))
	add(AppendResponse(nil, 0xFFFFFFFF, nil, nil, &Exception{Class: ClassFatalConnectionException, Message: "bad preamble"}))
	add(AppendResponse(nil, 4, nil, snappyCodec.Compress(nil, cell), nil))
	f.Add([]byte{})
	f.Add([]byte{0xff})
	f.Add(append(delimited(nil, pbBytes(pbVarint(nil, 1, 1), 3, pbVarint(nil, 1, 10))), 1, 2, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The hand decoder of answers' headers agrees with proto.Unmarshal
		// whenever it accepts a header.
		if h, _, err := nextDelimited(data, "header"); err == nil {
			var fast Response
			if decodeResponseHeader(h, &fast) {
				var want hbasepb.ResponseHeader
				if err := proto.Unmarshal(h, &want); err != nil {
					t.Fatalf("decodeResponseHeader accepted %x, proto.Unmarshal: %v", h, err)
				}
				if !proto.Equal(&fast.Header, &want) {
					t.Fatalf("decodeResponseHeader gave %v, proto.Unmarshal %v", &fast.Header, &want)
				}
			}
		}
		var r Response
		if err := ParseResponse(data, &r); err != nil {
			return
		}
		if m := r.Header.GetCellBlockMeta().GetLength(); m > 0 && int(m) != len(r.CellBlock) {
			t.Fatalf("cellblock of %d bytes, meta says %d", len(r.CellBlock), m)
		}
		if len(r.CellBlock) > 0 && !bytes.HasSuffix(data, r.CellBlock) {
			t.Fatal("cellblock is not the end of the frame")
		}
		if r.Header.Exception != nil && r.Param != nil {
			t.Fatal("param decoded for an exception")
		}
		if len(r.Param)+len(r.CellBlock) > len(data) {
			t.Fatalf("param %d + cellblock %d bytes from a frame of %d", len(r.Param), len(r.CellBlock), len(data))
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	const max = 64
	f.Add(frameOf([]byte("hello")))
	f.Add(append(frameOf([]byte("one")), frameOf(nil)...))
	f.Add(frameOf(make([]byte, max)))
	f.Add(frameOf(make([]byte, max+1)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 5, 'a'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var buf []byte
		consumed := 0
		for {
			var n uint32
			var err error
			buf, n, err = ReadFrame(r, max, buf)
			if err != nil {
				if consumed+4 <= len(data) && binary.BigEndian.Uint32(data[consumed:]) > max && n == 0 {
					t.Fatalf("too-big frame at %d without its length", consumed)
				}
				return
			}
			if int(n) != len(buf) || n > max {
				t.Fatalf("frame of %d bytes, length %d, max %d", len(buf), n, max)
			}
			if !bytes.Equal(buf, data[consumed+4:consumed+4+int(n)]) {
				t.Fatalf("frame at %d differs from the input", consumed)
			}
			consumed += 4 + int(n)
			if r.Len() != len(data)-consumed {
				t.Fatalf("reader at %d, frames end at %d", len(data)-r.Len(), consumed)
			}
		}
	})
}
