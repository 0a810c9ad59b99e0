package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestDisableEnableUnderTraffic disables and enables a table while other
// connections write, read and scan it: every call either works or gets
// one of the exceptions a client expects for a region going away, the
// server never breaks (run it with -race), and the data written before
// is intact at the end.
func TestDisableEnableUnderTraffic(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	createTable(t, m, "ddl")
	c := dial(t, s, ClientService)
	regions := metaRegions(t, c, "ddl")
	reg := regionSpec(regionFor(regions, "a"))
	mp, cb := putCells("a", [2]string{"q", "kept"})
	call(t, c, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)

	allowed := map[string]bool{
		ipc.ClassTableNotEnabledException:  true,
		ipc.ClassNotServingRegionException: true,
		ipc.ClassUnknownScannerException:   true,
	}
	var ok, refused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		conn := dial(t, s, ClientService) // here: dial may fail the test
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch i % 3 {
				case 0:
					mp, cb := putCells("b", [2]string{"q", "v"})
					_, err = conn.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, cb, &hbasepb.MutateResponse{})
				case 1:
					_, err = conn.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("a")}}, nil, &hbasepb.GetResponse{})
				default:
					resp := &hbasepb.ScanResponse{}
					if _, err = conn.Call(context.Background(), "Scan", &hbasepb.ScanRequest{Region: reg, Scan: &hbasepb.Scan{},
						NumberOfRows: proto.Uint32(1)}, nil, resp); err == nil && resp.GetMoreResultsInRegion() {
						_, err = conn.Call(context.Background(), "Scan", &hbasepb.ScanRequest{ScannerId: resp.ScannerId,
							NumberOfRows: proto.Uint32(10), CloseScanner: proto.Bool(true)}, nil, &hbasepb.ScanResponse{})
					}
				}
				if err == nil {
					ok.Add(1)
					continue
				}
				e, isExc := ipc.AsException(err)
				if !isExc || !allowed[e.Class] {
					t.Errorf("writer %d: unexpected error: %v", w, err)
					return
				}
				refused.Add(1)
			}
		}(w)
	}
	tn := &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte("ddl")}
	for i := 0; i < 10; i++ {
		time.Sleep(20 * time.Millisecond)
		call(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: tn}, &hbasepb.DisableTableResponse{}, nil)
		time.Sleep(20 * time.Millisecond)
		call(t, m, "EnableTable", &hbasepb.EnableTableRequest{TableName: tn}, &hbasepb.EnableTableResponse{}, nil)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d calls served, %d refused while the table was disabled", ok.Load(), refused.Load())
	require.Greater(t, ok.Load(), int64(0))
	v, found := getValue(t, c, regions, "a", "q")
	require.True(t, found)
	require.Equal(t, "kept", v)
}
