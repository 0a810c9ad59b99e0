package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// checkGoroutines fails the test if, once everything the test registered
// later has been cleaned up, more goroutines run than when it started.
// Register it first: cleanups run last-in first-out.
func checkGoroutines(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutine leak: %d running, %d at the start\n%s", n, base, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// testHandler serves ClientService and MasterService with methods that
// exercise the server; see ServeCall.
type testHandler struct {
	inFlight, maxInFlight atomic.Int32
	started               chan string   // Slow and CtxWait announce themselves
	release               chan struct{} // closed to let Slow calls finish
	ctxErr                chan error    // what CtxWait saw
}

func newTestHandler() *testHandler {
	return &testHandler{started: make(chan string, 100), release: make(chan struct{}), ctxErr: make(chan error, 100)}
}

func (h *testHandler) Serves(service string) bool {
	return service == "ClientService" || service == "MasterService"
}

func (h *testHandler) ServeCall(ctx context.Context, c *Call) (Reply, error) {
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for {
		m := h.maxInFlight.Load()
		if n <= m || h.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	var in wrapperspb.BytesValue
	if err := proto.Unmarshal(c.Param, &in); err != nil {
		return Reply{}, errors.Wrap(err, "bad param")
	}
	// Every cellblock the handler gets must be plain KeyValueCodec.
	cells := 0
	if err := encoding.DecodeCellBlock(c.CellBlock, false, func(*encoding.KeyValue) error { cells++; return nil }); err != nil {
		return Reply{}, Errorf(ClassDoNotRetryIOException, "bad cellblock: %v", err)
	}
	switch c.Method {
	case "Echo":
		// Answer out of order.
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		return Reply{Msg: wrapperspb.Bytes(in.Value), CellBlock: c.CellBlock}, nil
	case "Info":
		info := fmt.Sprintf("service=%s method=%s user=%s codec=%+v timeout=%d cells=%d",
			c.Service, c.Method, c.User, c.Codec, c.Header.GetTimeout(), cells)
		return Reply{Msg: wrapperspb.Bytes([]byte(info))}, nil
	case "Fail":
		return Reply{}, Errorf(string(in.Value), "failing on purpose")
	case "Wrapped":
		return Reply{}, errors.Wrap(Errorf(ClassNotServingRegionException, "region r1"), "serving Get")
	case "Plain":
		return Reply{}, errors.New("disk on fire")
	case "Panic":
		panic("handler bug")
	case "BadReply":
		return Reply{Msg: &hbasepb.GetRequest{}}, nil // required fields unset
	case "Slow":
		h.started <- "Slow"
		select {
		case <-h.release:
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		}
		return Reply{Msg: wrapperspb.Bytes(in.Value), CellBlock: c.CellBlock}, nil
	case "CtxWait":
		h.started <- "CtxWait"
		select {
		case <-ctx.Done():
			h.ctxErr <- ctx.Err()
			return Reply{}, ctx.Err()
		case <-time.After(5 * time.Second):
			h.ctxErr <- errors.New("context not cancelled in 5s")
			return Reply{}, errors.New("context not cancelled")
		}
	case "FailLate":
		time.Sleep(100 * time.Millisecond)
		return Reply{}, Errorf(ClassNotServingRegionException, "too late")
	case "Sleep":
		time.Sleep(20 * time.Millisecond)
		return Reply{Msg: wrapperspb.Bytes(in.Value)}, nil
	}
	return Reply{}, Errorf(ClassUnsupportedOperation, "no method %s", c.Method)
}

type testServer struct {
	s      *Server
	h      *testHandler
	addr   string
	served chan error
}

// startServer serves a testHandler on a loopback listener until the test
// ends. configure, if not nil, sets Server fields before Serve.
func startServer(t *testing.T, configure func(*Server)) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{h: newTestHandler(), addr: ln.Addr().String(), served: make(chan error, 1)}
	ts.s = &Server{Handler: ts.h, Logger: discardLogger()}
	if configure != nil {
		configure(ts.s)
	}
	go func() { ts.served <- ts.s.Serve(ln) }()
	t.Cleanup(func() {
		ts.s.Close()
		select {
		case err := <-ts.served:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return ts
}

func dial(t *testing.T, addr string, o DialOptions) *ClientConn {
	t.Helper()
	if o.Service == "" {
		o.Service = "ClientService"
	}
	cc, err := Dial(context.Background(), addr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// echo makes an Echo call and checks the answer.
func echo(t *testing.T, cc *ClientConn, val string, cells []byte) {
	t.Helper()
	var out wrapperspb.BytesValue
	gotCells, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes([]byte(val)), cells, &out)
	if err != nil {
		t.Fatalf("Echo %q: %v", val, err)
	}
	if string(out.Value) != val || !bytes.Equal(gotCells, cells) {
		t.Fatalf("Echo %q: got %q and %d cellblock bytes, want %d", val, out.Value, len(gotCells), len(cells))
	}
}

func info(t *testing.T, cc *ClientConn, ctx context.Context) string {
	t.Helper()
	var out wrapperspb.BytesValue
	if _, err := cc.Call(ctx, "Info", wrapperspb.Bytes(nil), nil, &out); err != nil {
		t.Fatalf("Info: %v", err)
	}
	return string(out.Value)
}

// cellsFor returns a cellblock of n cells whose rows name tag.
func cellsFor(tag string, n, valueLen int) []byte {
	var b []byte
	for i := range n {
		kv := &encoding.KeyValue{
			Row: fmt.Appendf(nil, "%s-row-%06d", tag, i), Family: []byte("cf"), Qualifier: []byte("q"),
			Timestamp: int64(i), Type: encoding.TypePut, Value: bytes.Repeat([]byte{byte(i)}, valueLen),
		}
		b = encoding.AppendCellBlock(b, kv, false)
	}
	return b
}

// rawConn opens a connection and sends the preamble and a header for
// service (none if service is "-").
func rawConn(t *testing.T, addr, service string, snappy bool) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if service == "-" {
		return nc
	}
	h := &hbasepb.ConnectionHeader{
		UserInfo:            &hbasepb.UserInformation{EffectiveUser: proto.String("root")},
		ServiceName:         proto.String(service),
		CellBlockCodecClass: proto.String(KeyValueCodecClass),
	}
	if snappy {
		h.CellBlockCompressorClass = proto.String(SnappyCodecClass)
	}
	b, err := AppendConnectionHeader(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	return nc
}

func readResponse(t *testing.T, nc net.Conn) *Response {
	t.Helper()
	frame, _, err := ReadFrame(nc, 64<<20, nil)
	if err != nil {
		t.Fatalf("reading a response: %v", err)
	}
	r := &Response{}
	if err := ParseResponse(frame, r); err != nil {
		t.Fatalf("parsing a response: %v", err)
	}
	return r
}

// expectClosed checks that the server closes nc without sending anything
// (more).
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := nc.Read(b[:])
	if n > 0 {
		rest, _ := io.ReadAll(io.LimitReader(nc, 64))
		t.Fatalf("server sent %x%x, want the connection closed", b[:n], rest)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("server did not close the connection")
	}
}

func expectConnException(t *testing.T, nc net.Conn, class string) {
	t.Helper()
	r := readResponse(t, nc)
	if r.Header.GetCallId() != 0xFFFFFFFF {
		t.Fatalf("call id %d, want 0xFFFFFFFF", r.Header.GetCallId())
	}
	if got := r.Header.GetException().GetExceptionClassName(); got != class {
		t.Fatalf("exception %q, want %q (%v)", got, class, &r.Header)
	}
	if r.Param != nil || r.CellBlock != nil {
		t.Fatalf("exception response with param %x, cells %x", r.Param, r.CellBlock)
	}
	expectClosed(t, nc)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConcurrentCallsOutOfOrder(t *testing.T) {
	for _, snappy := range []bool{false, true} {
		t.Run(fmt.Sprintf("snappy=%v", snappy), func(t *testing.T) {
			checkGoroutines(t)
			ts := startServer(t, nil)
			cc := dial(t, ts.addr, DialOptions{Snappy: snappy})
			const calls = 200
			var wg sync.WaitGroup
			errs := make(chan error, calls)
			for i := range calls {
				wg.Go(func() {
					val := fmt.Sprintf("call-%d", i)
					cells := cellsFor(val, i%5, 10+i) // some calls without a cellblock
					var out wrapperspb.BytesValue
					got, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes([]byte(val)), cells, &out)
					switch {
					case err != nil:
						errs <- fmt.Errorf("%s: %w", val, err)
					case string(out.Value) != val:
						errs <- fmt.Errorf("%s: got answer %q", val, out.Value)
					case !bytes.Equal(got, cells):
						errs <- fmt.Errorf("%s: got %d cellblock bytes, want %d", val, len(got), len(cells))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if m := ts.h.maxInFlight.Load(); m < 2 {
				t.Errorf("at most %d calls ran at once: the server does not run calls concurrently", m)
			}
			// A call's in-flight count drops just after its answer is written.
			waitFor(t, "no calls in flight", func() bool { return ts.s.Stats().CallsInFlight == 0 })
			if st := ts.s.Stats(); st.CallsServed != calls || st.ConnsOpened != 1 || st.BadFrames != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestLargeCellBlocks(t *testing.T) {
	for _, snappy := range []bool{false, true} {
		t.Run(fmt.Sprintf("snappy=%v", snappy), func(t *testing.T) {
			checkGoroutines(t)
			ts := startServer(t, nil)
			cc := dial(t, ts.addr, DialOptions{Snappy: snappy})
			for _, n := range []int{1, 100, 3000, 20000} { // up to ~3 MB, > one snappy chunk
				echo(t, cc, fmt.Sprintf("n=%d", n), cellsFor("big", n, 137))
			}
		})
	}
}

// TestSnappyOnTheWire checks that the server decompresses request
// cellblocks and compresses its responses' in Hadoop framing.
func TestSnappyOnTheWire(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	nc := rawConn(t, ts.addr, "ClientService", true)
	cells := cellsFor("wire", 5000, 64) // ~500 KB: several snappy blocks
	comp := snappyCodec.Compress(nil, cells)
	req, err := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(7), MethodName: proto.String("Echo")},
		wrapperspb.Bytes([]byte("x")), comp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	r := readResponse(t, nc)
	if r.Header.GetCallId() != 7 || r.Header.Exception != nil {
		t.Fatalf("response header %v", &r.Header)
	}
	if int(r.Header.GetCellBlockMeta().GetLength()) != len(r.CellBlock) || len(r.CellBlock) >= len(cells) {
		t.Fatalf("response cellblock of %d bytes for %d raw", len(r.CellBlock), len(cells))
	}
	checkHadoopFraming(t, r.CellBlock, cells)
}

func TestConnectionInfo(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	tests := []struct {
		o    DialOptions
		want string
	}{
		{DialOptions{}, "service=ClientService method=Info user=root codec={Enabled:true WithTags:false Snappy:false} timeout=0"},
		{DialOptions{Snappy: true, User: "alice"}, "user=alice codec={Enabled:true WithTags:false Snappy:true}"},
		{DialOptions{NoCellBlocks: true, Snappy: true}, "codec={Enabled:false WithTags:false Snappy:false}"},
		{DialOptions{Service: "MasterService"}, "service=MasterService"},
	}
	for _, tc := range tests {
		cc := dial(t, ts.addr, tc.o)
		if got := info(t, cc, context.Background()); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q, want it to contain %q", tc.o, got, tc.want)
		}
		if cc.Codec().Snappy != (tc.o.Snappy && !tc.o.NoCellBlocks) {
			t.Errorf("%+v: client codec %+v", tc.o, cc.Codec())
		}
	}
	// A deadline travels as the header's timeout.
	cc := dial(t, ts.addr, DialOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if got := info(t, cc, ctx); strings.Contains(got, "timeout=0 ") {
		t.Errorf("deadline not sent: %q", got)
	}
}

func TestHandlerErrors(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{})
	tests := []struct {
		method, param string
		class         string
		msg           string
	}{
		{"Fail", ClassNotServingRegionException, ClassNotServingRegionException, "failing on purpose"},
		{"Fail", ClassUnknownScannerException, ClassUnknownScannerException, "failing on purpose"},
		{"Fail", "com.example.CustomException", "com.example.CustomException", "failing on purpose"},
		{"Wrapped", "", ClassNotServingRegionException, "serving Get: "},
		{"Plain", "", ClassIOException, "disk on fire"},
		{"Panic", "", ClassDoNotRetryIOException, "handler bug"},
		{"BadReply", "", ClassDoNotRetryIOException, ""},
		{"NoSuchMethod", "", ClassUnsupportedOperation, "NoSuchMethod"},
	}
	for _, tc := range tests {
		t.Run(tc.method+"/"+tc.param, func(t *testing.T) {
			_, err := cc.Call(ctxT(t), tc.method, wrapperspb.Bytes([]byte(tc.param)), nil, nil)
			e, ok := AsException(err)
			if !ok {
				t.Fatalf("got %v (%T), want an *Exception", err, err)
			}
			if e.Class != tc.class || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %q: %q, want %q containing %q", e.Class, e.Message, tc.class, tc.msg)
			}
			// The connection is still good.
			echo(t, cc, "after "+tc.method, nil)
		})
	}
	if cc.Err() != nil {
		t.Fatalf("connection broken: %v", cc.Err())
	}
}

func TestExceptionMapping(t *testing.T) {
	e := ToException(errors.New("boom"))
	if e.Class != ClassIOException || e.Message != "boom" || e.DoNotRetry() {
		t.Errorf("plain error: %+v", e)
	}
	e = ToException(errors.Wrap(Errorf(ClassTableNotFoundException, "t1"), "get"))
	// The wrapping context is kept; the class is not repeated in the message.
	if e.Class != ClassTableNotFoundException || e.Message != "get: t1" || !e.DoNotRetry() {
		t.Errorf("wrapped: %+v", e)
	}
	if s := (&Exception{Class: "a.B"}).Error(); s != "a.B" {
		t.Errorf("Error() = %q", s)
	}
	if (&Exception{Class: ClassNotServingRegionException}).DoNotRetry() {
		t.Error("NotServingRegionException must be retried")
	}
}

func TestUnknownService(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	good := dial(t, ts.addr, DialOptions{})
	echo(t, good, "before", nil)

	nc := rawConn(t, ts.addr, "AdminService", false)
	expectConnException(t, nc, ClassUnknownProtocolException)

	// The client end sees the exception as the reason the connection died.
	cc := dial(t, ts.addr, DialOptions{Service: "NoSuchService"})
	select {
	case <-cc.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection to an unknown service stayed open")
	}
	if e, ok := AsException(cc.Err()); !ok || e.Class != ClassUnknownProtocolException || !errors.Is(cc.Err(), ErrConnClosed) {
		t.Fatalf("Err() = %v", cc.Err())
	}
	if _, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes(nil), nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call on a dead connection: %v", err)
	}

	echo(t, good, "after", nil)
	waitFor(t, "closed connections to go", func() bool { return ts.s.Stats().OpenConnections == 1 })
	if st := ts.s.Stats(); st.BadFrames != 2 || st.ConnsOpened != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestBadConnectionSetup(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	good := dial(t, ts.addr, DialOptions{})
	header := func(codec, compressor string) []byte {
		h := &hbasepb.ConnectionHeader{
			UserInfo:                 &hbasepb.UserInformation{EffectiveUser: proto.String("root")},
			ServiceName:              proto.String("ClientService"),
			CellBlockCodecClass:      proto.String(codec),
			CellBlockCompressorClass: proto.String(compressor),
		}
		b, err := AppendConnectionHeader(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name   string
		send   []byte
		class  string // "" = closed without an answer
		notBad bool   // not counted in BadFrames
	}{
		{"http", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), ClassFatalConnectionException, false},
		{"version 1", []byte("HBas\x01\x50"), ClassFatalConnectionException, false},
		{"kerberos", []byte("HBas\x00\x51"), ClassFatalConnectionException, false},
		{"short preamble", []byte("HBa"), "", true}, // a port probe
		{"no header", Preamble(), "", false},
		{"header too big", append(Preamble(), 0, 1, 0, 1), "", false},
		{"header garbage", append(Preamble(), 0, 0, 0, 2, 0x12, 0x7f), "", false},
		{"header truncated", header(KeyValueCodecClass, "")[:20], "", false},
		{"unknown codec", header("org.apache.hadoop.hbase.codec.CellCodec", ""), ClassFatalConnectionException, false},
		{"unknown compressor", header(KeyValueCodecClass, "org.apache.hadoop.io.compress.GzipCodec"), ClassFatalConnectionException, false},
	}
	var bad int64
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := rawConn(t, ts.addr, "-", false)
			if _, err := nc.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			nc.(*net.TCPConn).CloseWrite()
			if tc.class != "" {
				expectConnException(t, nc, tc.class)
			} else {
				expectClosed(t, nc)
			}
			echo(t, good, tc.name, nil)
			if !tc.notBad {
				bad++
			}
			if st := ts.s.Stats(); st.BadFrames != bad {
				t.Errorf("BadFrames = %d, want %d", st.BadFrames, bad)
			}
		})
	}
}

func TestRequestTooBig(t *testing.T) {
	checkGoroutines(t)
	const max = 64 << 10
	ts := startServer(t, func(s *Server) { s.MaxRequestSize = max })
	good := dial(t, ts.addr, DialOptions{})

	// A request of exactly the limit is served.
	exactReq := func(callID uint32, extra int) []byte {
		t.Helper()
		h := func() *hbasepb.RequestHeader {
			return &hbasepb.RequestHeader{CallId: proto.Uint32(callID), MethodName: proto.String("Echo")}
		}
		probe, _ := AppendRequest(nil, h(), wrapperspb.Bytes(make([]byte, max-100)), nil)
		val := make([]byte, max-100+max-(len(probe)-4)+extra)
		req, _ := AppendRequest(nil, h(), wrapperspb.Bytes(val), nil)
		if got := len(req) - 4; got != max+extra {
			t.Fatalf("test bug: frame of %d bytes, want %d", got, max+extra)
		}
		return req
	}
	nc := rawConn(t, ts.addr, "ClientService", false)
	if _, err := nc.Write(exactReq(2, 0)); err != nil {
		t.Fatal(err)
	}
	if r := readResponse(t, nc); r.Header.GetCallId() != 2 || r.Header.Exception != nil {
		t.Fatalf("request of exactly the limit: %v", &r.Header)
	}
	nc.Close()

	// One byte more is refused, for that call id, and the connection closed.
	req := exactReq(42, 1)
	nc = rawConn(t, ts.addr, "ClientService", false)
	go nc.Write(req) // the server may close before reading it all
	r := readResponse(t, nc)
	if r.Header.GetCallId() != 42 || r.Header.GetException().GetExceptionClassName() != ClassRequestTooBigException {
		t.Fatalf("too big request: %v", &r.Header)
	}
	expectClosed(t, nc)

	// A too-big frame whose header cannot be read: just closed.
	nc = rawConn(t, ts.addr, "ClientService", false)
	go nc.Write(append(binary.BigEndian.AppendUint32(nil, max+1), bytes.Repeat([]byte{0xff}, max+1)...))
	expectClosed(t, nc)

	// Through ClientConn, the caller gets the exception, whether its write
	// completed before the server closed (small) or failed (8 MB, more than
	// the socket buffers hold).
	for _, n := range []int{1000, 60000} {
		cc := dial(t, ts.addr, DialOptions{})
		_, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes(nil), cellsFor("big", n, 100), nil)
		if e, ok := AsException(err); !ok || e.Class != ClassRequestTooBigException {
			t.Fatalf("%d cells: ClientConn got %v, want RequestTooBigException", n, err)
		}
		select {
		case <-cc.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("client connection not closed after RequestTooBigException")
		}
	}

	echo(t, good, "still here", nil)
	if st := ts.s.Stats(); st.BadFrames != 4 {
		t.Errorf("BadFrames = %d, want 4", st.BadFrames)
	}
}

func TestMalformedFrames(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	good := dial(t, ts.addr, DialOptions{Snappy: true})
	callHdr := func(fields ...[]byte) []byte {
		h := pbVarint(nil, 1, 1)
		h = pbString(h, 3, "Echo")
		for _, f := range fields {
			h = append(h, f...)
		}
		return h
	}
	withParam := pbVarint(nil, 4, 1)
	meta := func(n uint64) []byte { return pbBytes(nil, 5, pbVarint(nil, 1, n)) }
	param := delimited(nil, pbBytes(nil, 1, []byte("v")))
	cells := cellsFor("m", 3, 10)
	tests := []struct {
		name   string
		frame  []byte // without length
		snappy bool
		send   []byte // raw bytes after the header, instead of frame
	}{
		{name: "bad varint", frame: []byte{0x80, 0x80, 0x80}},
		{name: "overlong varint", frame: bytes.Repeat([]byte{0xff}, 12)},
		{name: "header overruns frame", frame: []byte{0x40, 0x08, 0x01}},
		{name: "header not protobuf", frame: delimited(nil, []byte{0x0f, 0x01})},
		{name: "param overruns frame", frame: append(delimited(nil, callHdr(withParam)), 0x30, 1)},
		{name: "cellblock shorter than meta", frame: append(append(delimited(nil, callHdr(withParam, meta(uint64(len(cells)+1)))), param...), cells...)},
		{name: "cellblock longer than meta", frame: append(append(delimited(nil, callHdr(withParam, meta(uint64(len(cells)-1)))), param...), cells...)},
		{name: "stray bytes", frame: append(append(delimited(nil, callHdr(withParam)), param...), 0)},
		{name: "bad snappy cellblock", snappy: true, frame: append(append(delimited(nil, callHdr(withParam, meta(uint64(len(cells))))), param...), cells...)},
		{name: "truncated frame", send: append(binary.BigEndian.AppendUint32(nil, 100), 1, 2, 3)},
		{name: "truncated length", send: []byte{0, 0}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := rawConn(t, ts.addr, "ClientService", tc.snappy)
			send := tc.send
			if send == nil {
				send = frameOf(tc.frame)
			}
			if _, err := nc.Write(send); err != nil {
				t.Fatal(err)
			}
			nc.(*net.TCPConn).CloseWrite()
			expectClosed(t, nc)
			echo(t, good, tc.name, cells)
			if st := ts.s.Stats(); st.BadFrames != int64(i+1) {
				t.Errorf("BadFrames = %d, want %d", st.BadFrames, i+1)
			}
		})
	}

	// A well-formed request after a good one on a raw connection, then a
	// clean close (EOF between frames) is not a bad frame.
	nc := rawConn(t, ts.addr, "ClientService", false)
	req, _ := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(1), MethodName: proto.String("Echo")}, wrapperspb.Bytes([]byte("v")), cells)
	nc.Write(req)
	if r := readResponse(t, nc); r.Header.Exception != nil || !bytes.Equal(r.CellBlock, cells) {
		t.Fatalf("raw request: %v", &r.Header)
	}
	nc.(*net.TCPConn).CloseWrite()
	expectClosed(t, nc)
	if st := ts.s.Stats(); st.BadFrames != int64(len(tests)) {
		t.Errorf("BadFrames = %d after a clean close, want %d", st.BadFrames, len(tests))
	}
}

func TestShutdownWaitsForCalls(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{Snappy: true})
	echo(t, cc, "warm up", nil)

	cells := cellsFor("slow", 10, 10)
	type result struct {
		val   string
		cells []byte
		err   error
	}
	res := make(chan result, 1)
	go func() {
		var out wrapperspb.BytesValue
		got, err := cc.Call(context.Background(), "Slow", wrapperspb.Bytes([]byte("slow")), cells, &out)
		res <- result{string(out.Value), got, err}
	}()
	<-ts.h.started
	// The warm-up call's count drops just after its answer is written.
	waitFor(t, "one call in flight", func() bool { return ts.s.Stats().CallsInFlight == 1 })
	if st := ts.s.Stats(); st.OpenConnections != 1 || st.CallsServed != 1 {
		t.Errorf("stats during the call: %+v", st)
	}

	shut := make(chan error, 1)
	go func() { shut <- ts.s.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	// No new connections meanwhile.
	waitFor(t, "the listener to close", func() bool {
		nc, err := net.DialTimeout("tcp", ts.addr, time.Second)
		if err == nil {
			nc.Close()
		}
		return err != nil
	})

	close(ts.h.release)
	r := <-res
	if r.err != nil || r.val != "slow" || !bytes.Equal(r.cells, cells) {
		t.Fatalf("in-flight call: %q, %d cellblock bytes, %v", r.val, len(r.cells), r.err)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return after the call finished")
	}
	select {
	case <-cc.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed by Shutdown")
	}
	select {
	case err := <-ts.served:
		ts.served <- err // for the cleanup's check
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Shutdown")
	}
	if st := ts.s.Stats(); st.OpenConnections != 0 || st.CallsInFlight != 0 || st.CallsServed != 2 {
		t.Errorf("stats after Shutdown: %+v", st)
	}
	// The server stays closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := ts.s.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}

func TestShutdownDeadlineCancelsHandlers(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{})
	callErr := make(chan error, 1)
	go func() {
		_, err := cc.Call(context.Background(), "CtxWait", wrapperspb.Bytes(nil), nil, nil)
		callErr <- err
	}()
	<-ts.h.started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ts.s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Shutdown took %v past its deadline", d)
	}
	if err := <-ts.h.ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler's context: %v", err)
	}
	select {
	case err := <-callErr:
		if err == nil {
			t.Fatal("call cut off by Shutdown succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call cut off by Shutdown did not return")
	}
}

func TestCloseWithIdleAndHalfOpenConns(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{})
	echo(t, cc, "x", nil)
	rawConn(t, ts.addr, "-", false)             // nothing sent
	rawConn(t, ts.addr, "ClientService", false) // header, no calls
	nc := rawConn(t, ts.addr, "-", false)       // half a preamble
	nc.Write([]byte("HB"))
	waitFor(t, "4 connections", func() bool { return ts.s.Stats().OpenConnections == 4 })
	done := make(chan struct{})
	go func() { ts.s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	<-cc.Done()
	if st := ts.s.Stats(); st.OpenConnections != 0 || st.ConnsOpened != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestIdleTimeout(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, func(s *Server) { s.IdleTimeout = 100 * time.Millisecond })
	cc := dial(t, ts.addr, DialOptions{})
	echo(t, cc, "x", nil)
	select {
	case <-cc.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("idle connection not closed")
	}
	// Idle closes are not bad frames.
	nc := rawConn(t, ts.addr, "-", false) // idle during the preamble
	expectClosed(t, nc)
	if st := ts.s.Stats(); st.BadFrames != 0 {
		t.Errorf("BadFrames = %d after idle closes", st.BadFrames)
	}
}

func TestMaxCallsPerConn(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, func(s *Server) { s.MaxCallsPerConn = 2 })
	cc := dial(t, ts.addr, DialOptions{})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			var out wrapperspb.BytesValue
			if _, err := cc.Call(ctxT(t), "Sleep", wrapperspb.Bytes([]byte{byte(i)}), nil, &out); err != nil || out.Value[0] != byte(i) {
				t.Errorf("call %d: %v %x", i, err, out.Value)
			}
		})
	}
	wg.Wait()
	if m := ts.h.maxInFlight.Load(); m > 2 {
		t.Fatalf("%d calls ran at once on a connection limited to 2", m)
	}
}

// TestClientGivesUp checks that an exception answering a call the client no
// longer waits for does not take the connection down.
func TestClientGivesUp(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := cc.Call(ctx, "FailLate", wrapperspb.Bytes(nil), nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	if _, err := cc.Call(ctx2, "Slow", wrapperspb.Bytes(nil), nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	close(ts.h.release)
	waitFor(t, "the late answers", func() bool { return ts.s.Stats().CallsServed == 2 })
	time.Sleep(20 * time.Millisecond) // let the client read them
	if err := cc.Err(); err != nil {
		t.Fatalf("connection broken by a late answer: %v", err)
	}
	echo(t, cc, "still usable", nil)
}

func TestClientClose(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, nil)
	cc := dial(t, ts.addr, DialOptions{})
	callErr := make(chan error, 1)
	go func() {
		_, err := cc.Call(context.Background(), "Slow", wrapperspb.Bytes(nil), nil, nil)
		callErr <- err
	}()
	<-ts.h.started
	cc.Close()
	if err := <-callErr; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("pending call got %v, want ErrConnClosed", err)
	}
	if _, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes(nil), nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call after Close got %v", err)
	}
	cc.Close() // twice is fine
	close(ts.h.release)
}

func TestClientBadResponses(t *testing.T) {
	checkGoroutines(t)
	tests := []struct {
		name  string
		reply func(callID uint32) []byte
	}{
		{"garbage frame", func(uint32) []byte { return frameOf([]byte{0xff}) }},
		{"frame too big", func(uint32) []byte { return binary.BigEndian.AppendUint32(nil, 1<<20+1) }},
		{"bad snappy cellblock", func(id uint32) []byte {
			b, _ := AppendResponse(nil, id, wrapperspb.Bytes(nil), []byte("not snappy"), nil)
			return b
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			srvDone := make(chan struct{})
			go func() {
				defer close(srvDone)
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				defer nc.Close()
				if _, err := ReadPreamble(nc); err != nil {
					return
				}
				if _, err := ReadConnectionHeader(nc); err != nil {
					return
				}
				frame, _, err := ReadFrame(nc, 1<<20, nil)
				if err != nil {
					return
				}
				var req Request
				if ParseRequest(frame, &req) != nil {
					return
				}
				nc.Write(tc.reply(req.Header.GetCallId()))
				io.Copy(io.Discard, nc)
			}()
			cc := dial(t, ln.Addr().String(), DialOptions{Snappy: true, MaxResponseSize: 1 << 20})
			_, err = cc.Call(ctxT(t), "Echo", wrapperspb.Bytes(nil), nil, nil)
			if err == nil {
				t.Fatal("bad response accepted")
			}
			cc.Close()
			<-srvDone
		})
	}
}

// TestShutdownUnderLoad shuts the server down while clients keep calling:
// every call either gets its answer or a closed connection, Shutdown
// returns, and nothing is left running.
func TestShutdownUnderLoad(t *testing.T) {
	checkGoroutines(t)
	ts := startServer(t, func(s *Server) { s.IdleTimeout = time.Minute })
	var wg sync.WaitGroup
	var ok, closed atomic.Int64
	stop := make(chan struct{})
	for c := range 4 {
		cc := dial(t, ts.addr, DialOptions{Snappy: c%2 == 0})
		for g := range 8 {
			wg.Go(func() {
				cells := cellsFor(fmt.Sprint(c, g), 3, 20)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					val := fmt.Sprintf("%d/%d/%d", c, g, i)
					var out wrapperspb.BytesValue
					got, err := cc.Call(ctxT(t), "Echo", wrapperspb.Bytes([]byte(val)), cells, &out)
					switch {
					case err == nil && string(out.Value) == val && bytes.Equal(got, cells):
						ok.Add(1)
					case errors.Is(err, ErrConnClosed):
						closed.Add(1)
						return
					default:
						t.Errorf("call %s: %q, %v", val, out.Value, err)
						return
					}
				}
			})
		}
	}
	waitFor(t, "some calls", func() bool { return ok.Load() > 200 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	close(stop)
	wg.Wait()
	if st := ts.s.Stats(); st.OpenConnections != 0 || st.CallsInFlight != 0 || st.BadFrames != 0 {
		t.Errorf("stats after Shutdown: %+v", st)
	}
	t.Logf("%d calls answered, %d cut off", ok.Load(), closed.Load())
}
