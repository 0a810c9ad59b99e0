package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// rawConn opens a connection that has sent the preamble and a
// ClientService header, for writing hand-made frames.
func rawConn(t *testing.T, s *Server) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	hdr, err := ipc.AppendConnectionHeader(nil, &hbasepb.ConnectionHeader{ServiceName: proto.String(ClientService),
		CellBlockCodecClass: proto.String(ipc.KeyValueCodecClass)})
	require.NoError(t, err)
	_, err = nc.Write(hdr)
	require.NoError(t, err)
	return nc
}

// readResponse reads one response frame, or reports that the connection
// was closed.
func readResponse(t *testing.T, nc net.Conn) (*ipc.Response, bool) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, _, err := ipc.ReadFrame(nc, 64<<20, nil)
	if err != nil {
		require.ErrorIs(t, err, io.EOF, "the server closes the connection rather than hang it")
		return nil, false
	}
	r := &ipc.Response{}
	require.NoError(t, ipc.ParseResponse(frame, r))
	return r, true
}

// readResponseOrReset reads one response, returning the error if the
// connection ends or is reset first.
func readResponseOrReset(nc net.Conn) (*ipc.Response, error) {
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, _, err := ipc.ReadFrame(nc, 64<<20, nil)
	if err != nil {
		return nil, err
	}
	r := &ipc.Response{}
	return r, ipc.ParseResponse(frame, r)
}

func requestFrame(t *testing.T, callID uint32, method string, param proto.Message, cells []byte) []byte {
	t.Helper()
	b, err := ipc.AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(callID), MethodName: proto.String(method)}, param, cells)
	require.NoError(t, err)
	return b
}

// TestHostileRequests sends malformed and hostile requests to a live server:
// each gets an HBase exception or a closed connection, and a well-behaved
// client on another connection keeps being served throughout.
func TestHostileRequests(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) { c.MaxRequestSize = 1 << 20 })
	m := dial(t, s, MasterService)
	createTable(t, m, "h")
	good := dial(t, s, ClientService)
	regions := metaRegions(t, good, "h")
	reg := regionSpec(regionFor(regions, "a"))
	healthy := func() {
		t.Helper()
		mp, cb := putCells("ok", [2]string{"q", "v"})
		call(t, good, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)
		v, ok := getValue(t, good, regions, "ok", "q")
		require.True(t, ok)
		require.Equal(t, "v", v)
	}
	healthy()

	putReq := func(row []byte, n int32) *hbasepb.MutateRequest {
		return &hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{Row: row,
			MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(n)}}
	}
	cell := func(row []byte) []byte {
		kv := encoding.KeyValue{Row: row, Family: []byte("cf"), Qualifier: []byte("q"), Timestamp: 1, Type: encoding.TypePut, Value: []byte("v")}
		return encoding.AppendCellBlock(nil, &kv, false)
	}
	negLen := cell([]byte("a"))
	binary.BigEndian.PutUint32(negLen[4:], 0xFFFFFFF0) // key length "negative" as a Java int
	huge := bytes.Repeat([]byte("x"), encoding.MaxRowLen+1)

	cases := []struct {
		name string
		// raw, if set, is written instead of a framed request on a fresh
		// connection (including the preamble).
		raw []byte
		// frame is written after the connection header.
		frame []byte
		// wantClass is the exception expected, or "" for a closed connection.
		wantClass string
	}{
		{name: "wrong preamble", raw: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), wantClass: ipc.ClassFatalConnectionException},
		{name: "wrong auth byte", raw: []byte("HBas\x00\x51"), wantClass: ipc.ClassFatalConnectionException},
		{name: "oversized frame", frame: requestFrame(t, 7, "Mutate", putReq([]byte("a"), 1), bytes.Repeat([]byte{0}, 2<<20)),
			wantClass: ipc.ClassRequestTooBigException},
		{name: "length prefix of 4 GiB", frame: []byte{0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3}},
		{name: "header varint overruns the frame", frame: []byte{0, 0, 0, 3, 0x7F, 1, 2}},
		{name: "garbage header", frame: []byte{0, 0, 0, 4, 3, 0xFF, 0xFF, 0xFF}},
		{name: "cellblock meta longer than the frame", frame: func() []byte {
			b := requestFrame(t, 9, "Mutate", putReq([]byte("a"), 1), cell([]byte("a")))
			return b[:len(b)-3] // truncate the cellblock, then fix the length
		}()},
		{name: "unknown method", frame: requestFrame(t, 10, "Frobnicate", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("a")}}, nil), wantClass: ipc.ClassUnknownProtocolException},
		{name: "unknown region", frame: requestFrame(t, 11, "Get", &hbasepb.GetRequest{Region: regionSpec([]byte("nope,,1.abc.")), Get: &hbasepb.Get{Row: []byte("a")}}, nil),
			wantClass: ipc.ClassNotServingRegionException},
		{name: "param that is not a GetRequest", frame: func() []byte {
			h, _ := proto.Marshal(&hbasepb.RequestHeader{CallId: proto.Uint32(12), MethodName: proto.String("Get"), RequestParam: proto.Bool(true)})
			b := protowire.AppendVarint(nil, uint64(len(h)))
			b = append(b, h...)
			b = append(b, 3, 0xFF, 0xFF, 0xFF)
			return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
		}(), wantClass: ipc.ClassDoNotRetryIOException},
		{name: "huge row key", frame: requestFrame(t, 13, "Mutate", putReq(huge, 1), cell(huge)), wantClass: ipc.ClassDoNotRetryIOException},
		{name: "fewer cells than announced", frame: requestFrame(t, 14, "Mutate", putReq([]byte("a"), 5), cell([]byte("a"))), wantClass: ipc.ClassDoNotRetryIOException},
		{name: "negative key length in a cell", frame: requestFrame(t, 15, "Mutate", putReq([]byte("a"), 1), negLen), wantClass: ipc.ClassDoNotRetryIOException},
		{name: "increment of a non-long", frame: requestFrame(t, 16, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{
			Row: []byte("a"), MutateType: hbasepb.MutationProto_INCREMENT.Enum(), AssociatedCellCount: proto.Int32(1)}}, cell([]byte("a"))),
			wantClass: ipc.ClassDoNotRetryIOException},
		{name: "scan of an unknown scanner", frame: requestFrame(t, 17, "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(12345), NumberOfRows: proto.Uint32(1)}, nil),
			wantClass: ipc.ClassUnknownScannerException},
		{name: "write to hbase:meta", frame: requestFrame(t, 18, "Mutate", &hbasepb.MutateRequest{Region: regionSpec([]byte("hbase:meta,,1")),
			Mutation: &hbasepb.MutationProto{Row: []byte("h,,1"), MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}},
			func() []byte {
				kv := encoding.KeyValue{Row: []byte("h,,1"), Family: []byte("info"), Qualifier: []byte("server"), Timestamp: 1, Type: encoding.TypePut, Value: []byte("evil:1")}
				return encoding.AppendCellBlock(nil, &kv, false)
			}()), wantClass: ipc.ClassDoNotRetryIOException},
		{name: "bad filter", frame: requestFrame(t, 19, "Scan", &hbasepb.ScanRequest{Region: reg, NumberOfRows: proto.Uint32(1),
			Scan: &hbasepb.Scan{Filter: &hbasepb.Filter{Name: proto.String("org.apache.hadoop.hbase.filter.NoSuchFilter"), SerializedFilter: []byte{1}}}}, nil),
			wantClass: ipc.ClassDoNotRetryIOException},
	}
	// Fix the length of the truncated-cellblock frame.
	for i := range cases {
		if cases[i].name == "cellblock meta longer than the frame" {
			f := cases[i].frame
			binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nc net.Conn
			if tc.raw != nil {
				var err error
				nc, err = net.Dial("tcp", s.Addr())
				require.NoError(t, err)
				defer nc.Close()
				_, err = nc.Write(tc.raw)
				require.NoError(t, err)
			} else {
				nc = rawConn(t, s)
				if _, err := nc.Write(tc.frame); err != nil {
					// The server answers a too-big request from its header
					// and closes, which can reset our write of the rest; the
					// answer may then be lost with the connection.
					require.Equal(t, ipc.ClassRequestTooBigException, tc.wantClass, "write failed: %v", err)
					if r, err := readResponseOrReset(nc); err == nil {
						require.Equal(t, tc.wantClass, r.Header.GetException().GetExceptionClassName())
					}
					healthy()
					return
				}
			}
			r, open := readResponse(t, nc)
			if tc.wantClass == "" {
				require.False(t, open, "expected the connection closed, got %v", r)
			} else {
				require.True(t, open, "expected %s, got a closed connection", tc.wantClass)
				require.NotNil(t, r.Header.Exception, "expected %s", tc.wantClass)
				require.Equal(t, tc.wantClass, r.Header.Exception.GetExceptionClassName(), r.Header.Exception.GetStackTrace())
			}
			healthy()
		})
	}
	var after runtime.MemStats
	// Nothing hostile made the server hold on to memory: the live heap
	// stays within a few MiB of where it started.
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(64<<20))
}
