package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The golden bytes below are built field by field with protowire, the way
// gohbase's marshalled messages look on the wire, independently of the
// generated code that AppendXxx uses.

func pbString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func pbBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func pbVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func delimited(b, msg []byte) []byte {
	b = protowire.AppendVarint(b, uint64(len(msg)))
	return append(b, msg...)
}

// frameOf prefixes body with its u32 big-endian length.
func frameOf(parts ...[]byte) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func assertBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got  %s\n want %s", what, hex.EncodeToString(got), hex.EncodeToString(want))
	}
}

// goldenGetParam is GetRequest{region: {REGION_NAME, "t1,,1.abc."}, get: {row: "row1"}}.
func goldenGetParam() []byte {
	region := pbVarint(nil, 1, 1)
	region = pbString(region, 2, "t1,,1.abc.")
	get := pbString(nil, 1, "row1")
	p := pbBytes(nil, 1, region)
	return pbBytes(p, 2, get)
}

func getRequestMsg() *hbasepb.GetRequest {
	return &hbasepb.GetRequest{
		Region: &hbasepb.RegionSpecifier{
			Type:  hbasepb.RegionSpecifier_REGION_NAME.Enum(),
			Value: []byte("t1,,1.abc."),
		},
		Get: &hbasepb.Get{Row: []byte("row1")},
	}
}

func TestPreamble(t *testing.T) {
	assertBytes(t, "preamble", Preamble(), []byte("HBas\x00\x50"))
	tests := []struct {
		name  string
		in    string
		ok    bool
		isBad bool // marked ErrBadPreamble (answered), vs a read error
	}{
		{"hbase", "HBas\x00\x50", true, false},
		{"hbase with more", "HBas\x00\x50\x00\x00", true, false},
		{"http", "GET / HTTP/1.1\r\n", false, true},
		{"version 1", "HBas\x01\x50", false, true},
		{"kerberos", "HBas\x00\x51", false, true},
		{"digest", "HBas\x00\x52", false, true},
		{"lower case", "hbas\x00\x50", false, true},
		{"short", "HBa", false, false},
		{"empty", "", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadPreamble(strings.NewReader(tc.in))
			if tc.ok {
				if err != nil {
					t.Fatalf("ReadPreamble: %v", err)
				}
				if string(p[:]) != "HBas\x00\x50" {
					t.Fatalf("got %q", p)
				}
				return
			}
			if err == nil {
				t.Fatal("ReadPreamble accepted a bad preamble")
			}
			if got := errors.Is(err, ErrBadPreamble); got != tc.isBad {
				t.Fatalf("errors.Is(err, ErrBadPreamble) = %v, want %v (err %v)", got, tc.isBad, err)
			}
		})
	}
}

func TestConnectionHeaderGolden(t *testing.T) {
	user := pbString(nil, 1, "root")
	body := pbBytes(nil, 1, user)
	body = pbString(body, 2, "ClientService")
	body = pbString(body, 3, "org.apache.hadoop.hbase.codec.KeyValueCodec")
	want := append([]byte("HBas\x00\x50"), frameOf(body)...)

	h := &hbasepb.ConnectionHeader{
		UserInfo:            &hbasepb.UserInformation{EffectiveUser: proto.String("root")},
		ServiceName:         proto.String("ClientService"),
		CellBlockCodecClass: proto.String(KeyValueCodecClass),
	}
	got, err := AppendConnectionHeader(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "connection header", got, want)

	// Appending keeps what is already in dst.
	got2, err := AppendConnectionHeader([]byte("xyz"), h)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "appended connection header", got2, append([]byte("xyz"), want...))

	// And the server side reads it back.
	r := bytes.NewReader(want)
	if _, err := ReadPreamble(r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadConnectionHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(back, h) {
		t.Fatalf("read back %v, want %v", back, h)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes left after the header", r.Len())
	}
	c, err := CodecFor(back.GetCellBlockCodecClass(), back.GetCellBlockCompressorClass())
	if err != nil || c != (Codec{Enabled: true}) {
		t.Fatalf("CodecFor = %+v, %v", c, err)
	}
}

func TestConnectionHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short length", []byte{0, 0}},
		{"truncated body", frameOf([]byte{0x12, 0x05, 'C'})[:6]},
		{"too big", binary.BigEndian.AppendUint32(nil, maxHeaderSize+1)},
		{"bad protobuf", frameOf([]byte{0x12, 0x7f})},
		// UserInformation.effective_user is required.
		{"missing required", frameOf(pbBytes(nil, 1, nil))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if h, err := ReadConnectionHeader(bytes.NewReader(tc.in)); err == nil {
				t.Fatalf("accepted %x as %v", tc.in, h)
			}
		})
	}
}

func TestRequestGolden(t *testing.T) {
	param := goldenGetParam()
	hdr := pbVarint(nil, 1, 1)
	hdr = pbString(hdr, 3, "Get")
	hdr = pbVarint(hdr, 4, 1)
	want := frameOf(delimited(nil, hdr), delimited(nil, param))

	h := &hbasepb.RequestHeader{CallId: proto.Uint32(1), MethodName: proto.String("Get")}
	got, err := AppendRequest(nil, h, getRequestMsg(), nil)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "Get request", got, want)
	if !h.GetRequestParam() || h.CellBlockMeta != nil {
		t.Fatalf("AppendRequest left header %v", h)
	}

	var req Request
	if err := ParseRequest(want[4:], &req); err != nil {
		t.Fatal(err)
	}
	if req.Header.GetCallId() != 1 || req.Header.GetMethodName() != "Get" || !req.Header.GetRequestParam() {
		t.Fatalf("parsed header %v", &req.Header)
	}
	assertBytes(t, "param", req.Param, param)
	if req.CellBlock != nil {
		t.Fatalf("cellblock %x", req.CellBlock)
	}
	var gr hbasepb.GetRequest
	if err := proto.Unmarshal(req.Param, &gr); err != nil || !proto.Equal(&gr, getRequestMsg()) {
		t.Fatalf("param decodes to %v, %v", &gr, err)
	}
}

// goldenCell is one Put cell and its KeyValueCodec bytes, written out by
// hand: u32 len | u32 keylen | u32 vlen | u16 rowlen | row | u8 famlen |
// fam | qual | u64 ts | u8 type | value.
func goldenCell() (*encoding.KeyValue, []byte) {
	kv := &encoding.KeyValue{
		Row: []byte("row1"), Family: []byte("cf"), Qualifier: []byte("q"),
		Timestamp: 0x0102030405060708, Type: encoding.TypePut, Value: []byte("value"),
	}
	want := []byte{
		0, 0, 0, 32, // 4 + 4 + key 19 + value 5
		0, 0, 0, 19, // key: 2 + 4 + 1 + 2 + 1 + 8 + 1
		0, 0, 0, 5,
		0, 4, 'r', 'o', 'w', '1',
		2, 'c', 'f',
		'q',
		1, 2, 3, 4, 5, 6, 7, 8,
		4,
		'v', 'a', 'l', 'u', 'e',
	}
	return kv, want
}

func TestCellBlockLayout(t *testing.T) {
	kv, want := goldenCell()
	got := encoding.AppendCellBlock(nil, kv, false)
	assertBytes(t, "cell", got, want)
	// KeyValueCodec drops tags.
	kv.Tags = []byte{0, 3, 1, 'a', 'b'}
	assertBytes(t, "cell with tags, no-tags codec", encoding.AppendCellBlock(nil, kv, false), want)

	// Delete with an empty value and qualifier, timestamp LATEST (MaxInt64).
	del := &encoding.KeyValue{Row: []byte("r"), Family: []byte("f"), Timestamp: 1<<63 - 1, Type: encoding.TypeDeleteFamily}
	wantDel := []byte{
		0, 0, 0, 22, 0, 0, 0, 14, 0, 0, 0, 0, // key: 2 + 1 + 1 + 0 + 8 + 1
		0, 1, 'r', 1, 'f',
		0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		14,
	}
	assertBytes(t, "delete family cell", encoding.AppendCellBlock(nil, del, false), wantDel)
}

func TestRequestWithCellBlockGolden(t *testing.T) {
	kv, cell := goldenCell()
	cb := encoding.AppendCellBlock(nil, kv, false)
	cb = encoding.AppendCellBlock(cb, kv, false)

	param := goldenGetParam()
	meta := pbVarint(nil, 1, uint64(len(cb)))
	hdr := pbVarint(nil, 1, 300) // a two-byte varint call id
	hdr = pbString(hdr, 3, "Mutate")
	hdr = pbVarint(hdr, 4, 1)
	hdr = pbBytes(hdr, 5, meta)
	hdr = pbVarint(hdr, 6, 200)
	want := frameOf(delimited(nil, hdr), delimited(nil, param), cell, cell)

	h := &hbasepb.RequestHeader{CallId: proto.Uint32(300), MethodName: proto.String("Mutate"), Priority: proto.Uint32(200)}
	got, err := AppendRequest(nil, h, getRequestMsg(), cb)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "Mutate request", got, want)

	var req Request
	if err := ParseRequest(want[4:], &req); err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "param", req.Param, param)
	assertBytes(t, "cellblock", req.CellBlock, cb)
	if req.Header.GetCellBlockMeta().GetLength() != uint32(len(cb)) || req.Header.GetPriority() != 200 {
		t.Fatalf("header %v", &req.Header)
	}
	var n int
	if err := encoding.DecodeCellBlock(req.CellBlock, false, func(got *encoding.KeyValue) error {
		n++
		if !bytes.Equal(got.Row, kv.Row) || !bytes.Equal(got.Value, kv.Value) || got.Timestamp != kv.Timestamp {
			t.Errorf("cell %d = %v", n, got)
		}
		return nil
	}); err != nil || n != 2 {
		t.Fatalf("decoded %d cells, %v", n, err)
	}
}

func TestRequestWithoutParam(t *testing.T) {
	// No param and no cellblock: just the header.
	hdr := pbVarint(nil, 1, 9)
	hdr = pbString(hdr, 3, "GetClusterId")
	want := frameOf(delimited(nil, hdr))
	got, err := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9), MethodName: proto.String("GetClusterId")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "request", got, want)
	var req Request
	if err := ParseRequest(want[4:], &req); err != nil || req.Param != nil || req.CellBlock != nil {
		t.Fatalf("ParseRequest: %v %v %x %x", err, &req.Header, req.Param, req.CellBlock)
	}

	// An empty param (all defaults) is still sent, as a zero length.
	got, err = AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9)}, &hbasepb.GetResponse{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hdr = pbVarint(nil, 1, 9)
	hdr = pbVarint(hdr, 4, 1)
	assertBytes(t, "empty param", got, frameOf(delimited(nil, hdr), []byte{0}))
	if err := ParseRequest(got[4:], &req); err != nil || req.Param == nil || len(req.Param) != 0 {
		t.Fatalf("ParseRequest: %v param %v", err, req.Param)
	}
}

func TestAppendRequestMissingRequired(t *testing.T) {
	// GetRequest.region is required: encoding must fail, not send garbage.
	_, err := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(1)}, &hbasepb.GetRequest{}, nil)
	if err == nil {
		t.Fatal("AppendRequest encoded a message with required fields unset")
	}
}

func TestResponseWithCellBlockGolden(t *testing.T) {
	kv, cell := goldenCell()
	meta := pbVarint(nil, 1, uint64(len(cell)))
	hdr := pbVarint(nil, 1, 1)
	hdr = pbBytes(hdr, 3, meta)
	result := pbVarint(nil, 2, 1) // Result.associated_cell_count = 1
	msg := pbBytes(nil, 1, result)
	want := frameOf(delimited(nil, hdr), delimited(nil, msg), cell)

	resp := &hbasepb.GetResponse{Result: &hbasepb.Result{AssociatedCellCount: proto.Int32(1)}}
	got, err := AppendResponse(nil, 1, resp, encoding.AppendCellBlock(nil, kv, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "Get response", got, want)

	var r Response
	if err := ParseResponse(want[4:], &r); err != nil {
		t.Fatal(err)
	}
	if r.Header.GetCallId() != 1 || r.Header.Exception != nil || r.Header.GetCellBlockMeta().GetLength() != uint32(len(cell)) {
		t.Fatalf("header %v", &r.Header)
	}
	assertBytes(t, "param", r.Param, msg)
	assertBytes(t, "cellblock", r.CellBlock, cell)
}

func TestResponseExceptionGolden(t *testing.T) {
	tests := []struct {
		class      string
		doNotRetry bool
	}{
		{ClassNotServingRegionException, false},
		{ClassUnknownScannerException, true},
		{ClassIOException, false},
		{ClassFatalConnectionException, true},
	}
	for _, tc := range tests {
		t.Run(tc.class[strings.LastIndexByte(tc.class, '.')+1:], func(t *testing.T) {
			const stack = "region t1,,1.abc. is not online\n\tat here"
			exc := pbString(nil, 1, tc.class)
			exc = pbString(exc, 2, stack)
			var dnr uint64
			if tc.doNotRetry {
				dnr = 1
			}
			exc = pbVarint(exc, 5, dnr)
			hdr := pbVarint(nil, 1, 0xFFFFFFFF)
			hdr = pbBytes(hdr, 2, exc)
			want := frameOf(delimited(nil, hdr))

			// The message and cellblock are dropped on exception.
			e := &Exception{Class: tc.class, Message: stack}
			got, err := AppendResponse(nil, 0xFFFFFFFF, &hbasepb.GetResponse{}, []byte("cells"), e)
			if err != nil {
				t.Fatal(err)
			}
			assertBytes(t, "exception response", got, want)

			var r Response
			if err := ParseResponse(want[4:], &r); err != nil {
				t.Fatal(err)
			}
			ex := r.Header.GetException()
			if r.Header.GetCallId() != 0xFFFFFFFF || ex.GetExceptionClassName() != tc.class ||
				ex.GetStackTrace() != stack || ex.GetDoNotRetry() != tc.doNotRetry || r.Param != nil || r.CellBlock != nil {
				t.Fatalf("parsed %v param %x cells %x", &r.Header, r.Param, r.CellBlock)
			}
		})
	}
}

func TestParseRequestErrors(t *testing.T) {
	hdrWith := func(fields ...[]byte) []byte {
		var h []byte
		for _, f := range fields {
			h = append(h, f...)
		}
		return h
	}
	callID := pbVarint(nil, 1, 1)
	withParam := pbVarint(nil, 4, 1)
	meta := func(n uint64) []byte { return pbBytes(nil, 5, pbVarint(nil, 1, n)) }
	tests := []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"truncated varint", []byte{0x80, 0x80, 0x80}},
		{"overlong varint", bytes.Repeat([]byte{0xff}, 11)},
		{"header overruns frame", []byte{0x10, 0x08, 0x01}},
		{"header not protobuf", delimited(nil, []byte{0x0a, 0x7f})},
		{"header invalid wire type", delimited(nil, []byte{0x0f, 1})},
		{"header field 0", delimited(nil, []byte{0x00, 1})},
		{"param missing", delimited(nil, hdrWith(callID, withParam))},
		{"param overruns", append(delimited(nil, hdrWith(callID, withParam)), 5, 1, 2)},
		{"stray bytes", append(delimited(nil, callID), 1, 2, 3)},
		{"stray bytes after param", append(delimited(delimited(nil, hdrWith(callID, withParam)), []byte{8, 1}), 0)},
		{"cellblock shorter than meta", append(delimited(nil, hdrWith(callID, meta(10))), make([]byte, 5)...)},
		{"cellblock longer than meta", append(delimited(nil, hdrWith(callID, meta(3))), make([]byte, 5)...)},
		{"cellblock meta but none", delimited(nil, hdrWith(callID, meta(1)))},
		{"meta length 0 but bytes", append(delimited(nil, hdrWith(callID, meta(0))), 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var req Request
			if err := ParseRequest(tc.frame, &req); err == nil {
				t.Fatalf("ParseRequest(%x) succeeded: %v param %x cells %x", tc.frame, &req.Header, req.Param, req.CellBlock)
			}
		})
	}

	// ParseRequest resets the header it decodes into.
	var req Request
	first, _ := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(1), MethodName: proto.String("Get"), Priority: proto.Uint32(5)}, getRequestMsg(), []byte("cell"))
	second, _ := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(2)}, nil, nil)
	if err := ParseRequest(first[4:], &req); err != nil {
		t.Fatal(err)
	}
	if err := ParseRequest(second[4:], &req); err != nil {
		t.Fatal(err)
	}
	if req.Header.MethodName != nil || req.Header.Priority != nil || req.Header.CellBlockMeta != nil || req.Param != nil || req.CellBlock != nil {
		t.Fatalf("state of the first request left over: %v %x %x", &req.Header, req.Param, req.CellBlock)
	}
}

func TestParseResponseErrors(t *testing.T) {
	meta := func(n uint64) []byte { return pbBytes(pbVarint(nil, 1, 1), 3, pbVarint(nil, 1, n)) }
	tests := []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"truncated varint", []byte{0xff}},
		{"header overruns", []byte{0x05, 0x08}},
		{"header not protobuf", delimited(nil, []byte{0x12, 0x09})},
		{"cellblock longer than frame", append(delimited(nil, meta(10)), 1, 2, 3)},
		{"message overruns", append(delimited(nil, pbVarint(nil, 1, 1)), 0x09, 1)},
		{"message varint truncated", append(delimited(nil, pbVarint(nil, 1, 1)), 0x80)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Response
			if err := ParseResponse(tc.frame, &r); err == nil {
				t.Fatalf("ParseResponse(%x) succeeded: %v", tc.frame, &r.Header)
			}
		})
	}

	// As gohbase does, the cellblock is the last meta.length bytes.
	f := append(delimited(nil, meta(3)), delimited(nil, []byte{8, 1})...)
	f = append(f, 'a', 'b', 'c')
	var r Response
	if err := ParseResponse(f, &r); err != nil {
		t.Fatal(err)
	}
	assertBytes(t, "param", r.Param, []byte{8, 1})
	assertBytes(t, "cells", r.CellBlock, []byte("abc"))

	// A response with neither message nor cellblock (e.g. an empty reply).
	if err := ParseResponse(delimited(nil, pbVarint(nil, 1, 4)), &r); err != nil || r.Param != nil || r.CellBlock != nil {
		t.Fatalf("bare header: %v %x %x", err, r.Param, r.CellBlock)
	}
}

func TestReadFrame(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16+7) // > frameReadChunk, not a multiple
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    []byte
		tooBig  bool
		wantErr bool
	}{
		{"empty frame", frameOf(), 10, []byte{}, false, false},
		{"small", frameOf([]byte("hello")), 10, []byte("hello"), false, false},
		{"exactly max", frameOf([]byte("0123456789")), 10, []byte("0123456789"), false, false},
		{"over max", frameOf([]byte("0123456789a")), 10, nil, true, true},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff}, 1 << 20, nil, true, true},
		{"truncated body", frameOf([]byte("hello"))[:7], 10, nil, false, true},
		{"truncated length", []byte{0, 0}, 10, nil, false, true},
		{"no input", nil, 10, nil, false, true},
		{"big chunked", frameOf(big), len(big), big, false, false},
		{"big truncated", frameOf(big)[:len(big)-1], len(big), nil, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := ReadFrame(bytes.NewReader(tc.in), tc.max, nil)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error, got %d bytes", len(got))
				}
				if errors.Is(err, ErrFrameTooBig) != tc.tooBig {
					t.Fatalf("ErrFrameTooBig = %v, want %v: %v", !tc.tooBig, tc.tooBig, err)
				}
				if tc.tooBig && n != binary.BigEndian.Uint32(tc.in) {
					t.Fatalf("length %d, want %d", n, binary.BigEndian.Uint32(tc.in))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if int(n) != len(tc.want) || !bytes.Equal(got, tc.want) {
				t.Fatalf("got %d bytes (n=%d), want %d", len(got), n, len(tc.want))
			}
		})
	}

	// Successive frames from one stream, reusing the buffer.
	stream := append(frameOf([]byte("one")), frameOf([]byte("three"))...)
	stream = append(stream, frameOf([]byte("two"))...)
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 8)
	for _, want := range []string{"one", "three", "two"} {
		var err error
		buf, _, err = ReadFrame(r, 100, buf)
		if err != nil || string(buf) != want {
			t.Fatalf("got %q, %v; want %q", buf, err, want)
		}
	}
	if _, _, err := ReadFrame(r, 100, buf); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

// allocatedBy returns how many bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadFrameDoesNotTrustLength(t *testing.T) {
	// A 200 MB length under a 256 MB limit, followed by 10 bytes: the
	// reader must not allocate the announced size before the bytes come.
	in := append(binary.BigEndian.AppendUint32(nil, 200<<20), make([]byte, 10)...)
	var err error
	n := allocatedBy(func() { _, _, err = ReadFrame(bytes.NewReader(in), DefaultMaxRequestSize, nil) })
	if err == nil {
		t.Fatal("truncated frame accepted")
	}
	if n > 4<<20 {
		t.Fatalf("reading a truncated 200 MB frame allocated %d bytes", n)
	}
}
