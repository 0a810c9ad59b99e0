package server

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// rpcBench is a server with one table of one region holding one row, as
// the RPC benchmarks and allocation tests read and write it.
type rpcBench struct {
	s      *Server
	region []byte
	row    []byte
}

func newRPCBench(tb testing.TB) *rpcBench {
	tb.Helper()
	s, err := Start(Config{DataDir: tb.TempDir(), Port: 0, portSet: true, InfoPort: -1, infoPortSet: true,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Shutdown(context.Background()) })
	name := TableName{"default", "bench"}
	require.NoError(tb, s.createTable(context.Background(), &hbasepb.TableSchema{TableName: name.PB(),
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}}}, nil))
	b := &rpcBench{s: s, region: s.tableByName(name).regions[0].name, row: []byte("row-0000001")}
	kv := encoding.KeyValue{Family: []byte("cf"), Qualifier: []byte("q"), Value: make([]byte, 100)}
	r := s.tableByName(name).regions[0].r.Load()
	require.NoError(tb, r.Put(region.NewPut(b.row).Add(kv.Family, kv.Qualifier, kv.Value)))
	return b
}

func (b *rpcBench) getRequest() *hbasepb.GetRequest {
	return &hbasepb.GetRequest{Region: regionSpec(b.region), Get: &hbasepb.Get{Row: b.row}}
}

func (b *rpcBench) mutateRequest() (*hbasepb.MutateRequest, []byte) {
	m, cells := putCells(string(b.row), [2]string{"q", string(make([]byte, 100))})
	return &hbasepb.MutateRequest{Region: regionSpec(b.region), Mutation: m}, cells
}

// BenchmarkRPCGet is a Get through the client and server ends of the real
// ipc path over loopback TCP; allocations are both ends'.
func BenchmarkRPCGet(b *testing.B) {
	rb := newRPCBench(b)
	c, err := ipc.Dial(context.Background(), rb.s.Addr(), ipc.DialOptions{Service: ClientService})
	require.NoError(b, err)
	defer c.Close()
	req := rb.getRequest()
	resp := &hbasepb.GetResponse{}
	b.ReportAllocs()
	for b.Loop() {
		cb, err := c.Call(context.Background(), "Get", req, nil, resp)
		if err != nil || len(cb) == 0 {
			b.Fatal(err, len(cb))
		}
	}
}

// BenchmarkRPCMutate is a one-cell Put through the real ipc path.
func BenchmarkRPCMutate(b *testing.B) {
	rb := newRPCBench(b)
	c, err := ipc.Dial(context.Background(), rb.s.Addr(), ipc.DialOptions{Service: ClientService})
	require.NoError(b, err)
	defer c.Close()
	req, cells := rb.mutateRequest()
	resp := &hbasepb.MutateResponse{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(context.Background(), "Mutate", req, cells, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// rawCaller sends pre-encoded request frames on a bare connection and reads
// the responses into one buffer, so that it allocates nothing and an
// allocation count around it is the server's alone.
type rawCaller struct {
	nc    net.Conn
	frame []byte
	buf   []byte
}

func newRawCaller(tb testing.TB, s *Server, method string, req proto.Message, cells []byte) *rawCaller {
	tb.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	require.NoError(tb, err)
	tb.Cleanup(func() { nc.Close() })
	hdr, err := ipc.AppendConnectionHeader(nil, &hbasepb.ConnectionHeader{ServiceName: proto.String(ClientService),
		CellBlockCodecClass: proto.String(ipc.KeyValueCodecClass)})
	require.NoError(tb, err)
	_, err = nc.Write(hdr)
	require.NoError(tb, err)
	frame, err := ipc.AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(1), MethodName: proto.String(method)}, req, cells)
	require.NoError(tb, err)
	return &rawCaller{nc: nc, frame: frame, buf: make([]byte, 64<<10)}
}

// call sends the request and returns the response frame.
func (r *rawCaller) call() ([]byte, error) {
	if _, err := r.nc.Write(r.frame); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r.nc, r.buf[:4]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(r.buf))
	if n > len(r.buf) {
		return nil, io.ErrShortBuffer
	}
	_, err := io.ReadFull(r.nc, r.buf[:n])
	return r.buf[:n], err
}

// BenchmarkServerGet is the server's side of a Get: its allocations are the
// server's per call (read, dispatch, region read, response write).
func BenchmarkServerGet(b *testing.B) {
	rb := newRPCBench(b)
	rc := newRawCaller(b, rb.s, "Get", rb.getRequest(), nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rc.call(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerMutate is the server's side of a one-cell Put.
func BenchmarkServerMutate(b *testing.B) {
	rb := newRPCBench(b)
	req, cells := rb.mutateRequest()
	rc := newRawCaller(b, rb.s, "Mutate", req, cells)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rc.call(); err != nil {
			b.Fatal(err)
		}
	}
}

func checkResponse(t *testing.T, frame []byte, cellBlock bool) {
	t.Helper()
	var resp ipc.Response
	require.NoError(t, ipc.ParseResponse(frame, &resp))
	require.Nil(t, resp.Header.Exception)
	require.Equal(t, cellBlock, len(resp.CellBlock) > 0)
}

// TestServerGetAllocs bounds what the server allocates to serve a Get of a
// one-cell row from the memstore, from reading the request to writing the
// response.
func TestServerGetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rb := newRPCBench(t)
	rc := newRawCaller(t, rb.s, "Get", rb.getRequest(), nil)
	frame, err := rc.call()
	require.NoError(t, err)
	checkResponse(t, frame, true)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := rc.call(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per Get", allocs)
	require.LessOrEqual(t, allocs, float64(maxGetAllocs))
}

// TestServerMutateAllocs bounds the server's allocations for a one-cell Put.
func TestServerMutateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rb := newRPCBench(t)
	req, cells := rb.mutateRequest()
	rc := newRawCaller(t, rb.s, "Mutate", req, cells)
	frame, err := rc.call()
	require.NoError(t, err)
	checkResponse(t, frame, false)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := rc.call(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per Mutate", allocs)
	require.LessOrEqual(t, allocs, float64(maxMutateAllocs))
}

// Allocation ceilings of the server's side of one call: a Get allocates
// nothing of its own, a Mutate what the region's Put does.
const (
	maxGetAllocs    = 1
	maxMutateAllocs = 3
)
