package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestSplitPowerLoss cuts the power under a whole server while it splits
// and merges regions (and compacts daughters, and its janitor clears
// parents) under a writer, at a random file operation of a split, a merge,
// a flush, a compaction or the meta commit, then starts a server on what
// the disk held, again and again. After each cut the table's live regions
// must tile its rows exactly (either the parent or both daughters, never
// both or neither; the same for merges), every one of them must serve,
// every acknowledged write (FSYNC_WAL) must read back, no acknowledged
// delete may be undone and no row may show up twice.
//
// REGIONKV_CRASH_CYCLES sets the number of cycles (40; 10 with -short).
func TestSplitPowerLoss(t *testing.T) {
	cycles := 40
	if testing.Short() {
		cycles = 10
	}
	if v, err := strconv.Atoi(os.Getenv("REGIONKV_CRASH_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("REGIONKV_POWERLOSS_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (REGIONKV_POWERLOSS_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	dataDir := t.TempDir()
	fs := crashfs.New()
	model := &splitModel{rows: map[string]string{}, deleted: map[string]bool{}}
	var lost, resurrected, dups, splits, merges int
	created := false
	for c := 0; c < cycles; c++ {
		cfg := Config{DataDir: dataDir, Port: FreePort, InfoPort: -1, FS: fs, Logger: slog.New(slog.DiscardHandler)}
		cfg.Region.FlushSize = 16 << 10
		cfg.SplitPolicy = "DisabledRegionSplitPolicy" // the test picks the splits
		s, err := Start(cfg)
		require.NoError(t, err, "cycle %d: the server does not start on the crash image (cut at %s)", c, fs.CrashedAt())
		m, cl := dial(t, s, MasterService), dial(t, s, ClientService)
		if !created {
			createTable(t, m, "ps")
			created = true
		}
		// The invariants of what the cut left.
		regions := liveRegions(t, cl, "ps")
		require.NotEmpty(t, regions, "cycle %d: the table has no region", c)
		require.Empty(t, regions[0].GetStartKey(), "cycle %d: a hole before the first region", c)
		require.Empty(t, regions[len(regions)-1].GetEndKey(), "cycle %d: a hole after the last region", c)
		for i := 1; i < len(regions); i++ {
			require.Equal(t, regions[i-1].GetEndKey(), regions[i].GetStartKey(),
				"cycle %d (cut at %s): regions %d and %d do not tile the table (both a parent and a daughter, or neither)",
				c, fs.CrashedAt(), i-1, i)
		}
		got := map[string]string{}
		for _, ri := range regions {
			resp := &hbasepb.ScanResponse{}
			cb, err := cl.Call(context.Background(), "Scan", &hbasepb.ScanRequest{Region: regionSpec(nameOf(t, ri)),
				Scan: &hbasepb.Scan{}, NumberOfRows: proto.Uint32(100000), CloseScanner: proto.Bool(true)}, nil, resp)
			require.NoError(t, err, "cycle %d: region %s does not serve", c, nameOf(t, ri))
			for _, r := range scanRows(t, resp, cb) {
				row, val, _ := strings.Cut(r, "=")
				require.True(t, mustRI(t, ri).ContainsRow([]byte(row)), "cycle %d: row %s outside its region", c, row)
				if _, dup := got[row]; dup {
					dups++
					t.Errorf("cycle %d: row %s twice", c, row)
				}
				got[row] = val
			}
		}
		for row, want := range model.rows {
			if got[row] != want {
				lost++
				t.Errorf("cycle %d (cut at %s): acknowledged %s=%s reads %q", c, fs.CrashedAt(), row, want, got[row])
			}
		}
		for row := range model.deleted {
			if v, ok := got[row]; ok {
				resurrected++
				t.Errorf("cycle %d (cut at %s): deleted %s came back as %q", c, fs.CrashedAt(), row, v)
			}
		}

		// Cut the power at one of the next operations that are not a
		// user region's WAL: a split's or merge's, a flush's, a
		// compaction's, the janitor's, or hbase:meta's (the commit).
		notUserWAL := func(path string) bool {
			return !strings.Contains(path, "/wal/") || strings.Contains(path, MetaEncodedName)
		}
		// The crash draws from a source of its own: it happens on one of
		// the server's goroutines.
		fs.CrashWhere(int64(1+rng.IntN(150)), crashfs.Mutating, notUserWAL, rand.New(rand.NewPCG(rng.Uint64(), 2)))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		wrng := rand.New(rand.NewPCG(rng.Uint64(), 1))
		go func() {
			defer wg.Done()
			model.write(t, s, c, wrng, stop, fs.Crashed())
		}()
		a := dial(t, s, AdminService)
	ops:
		for op := 0; op < 200; op++ {
			select {
			case <-fs.Crashed():
				break ops
			default:
			}
			regions, err := liveRegionsErr(cl, "ps")
			if err != nil {
				break // the power is off
			}
			var class string
			if len(regions) < 5 || rng.IntN(3) > 0 {
				ri := regions[rng.IntN(len(regions))]
				row := innerRow(rng, ri)
				if row == "" {
					continue
				}
				class, err = splitErr(m, ri, row)
				if err == nil && class == "" {
					splits++
				}
			} else {
				i := rng.IntN(len(regions) - 1)
				class, err = mergeErr(m, regions[i], regions[i+1])
				if err == nil && class == "" {
					merges++
				}
			}
			if err != nil || (class != "" && class != ipc.ClassDoNotRetryIOException && class != ipc.ClassMergeRegionException &&
				class != ipc.ClassUnknownRegionException) {
				break // the power is off, or about to be
			}
			if class != "" && rng.IntN(2) == 0 {
				// Not splittable or mergeable yet: hurry the daughters'
				// compactions along.
				for _, ri := range regions {
					_, _ = a.Call(context.Background(), "CompactRegion", &hbasepb.CompactRegionRequest{
						Region: regionSpec(nameOf(t, ri)), Major: proto.Bool(true)}, nil, &hbasepb.CompactRegionResponse{})
				}
			}
		}
		<-fs.Crashed()
		close(stop)
		wg.Wait()
		t.Logf("cycle %d: cut at %s", c, fs.CrashedAt())
		img := fs.Image()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = s.Shutdown(sctx) // on a dead disk: it fails fast
		cancel()
		fs = img
	}
	t.Logf("cycles=%d lost=%d resurrected=%d duplicated=%d (splits=%d merges=%d)", cycles, lost, resurrected, dups, splits, merges)
	require.Positive(t, splits, "no split ran")
}

// splitModel is what the writer of TestSplitPowerLoss had acknowledged:
// each row's value, or that it was deleted. A row whose last write was in
// flight at the cut is in neither.
type splitModel struct {
	mu      sync.Mutex
	rows    map[string]string
	deleted map[string]bool
	seq     int
}

// write puts and deletes rows with FSYNC_WAL until stop or the power cut,
// finding each row's region in hbase:meta again when its region split or
// merged under it.
func (md *splitModel) write(t *testing.T, s *Server, cycle int, rng *rand.Rand, stop, crashed <-chan struct{}) {
	c, err := ipc.Dial(context.Background(), s.Addr(), ipc.DialOptions{Service: ClientService})
	if err != nil {
		return
	}
	defer c.Close()
	var regions []*hbasepb.RegionInfo
	for {
		select {
		case <-stop:
			return
		case <-crashed:
			return
		default:
		}
		if regions == nil {
			if regions, err = liveRegionsErr(c, "ps"); err != nil {
				return
			}
		}
		md.seq++
		row := fmt.Sprintf("r%03d", rng.IntN(300))
		val := fmt.Sprintf("c%d-%d-%s", cycle, md.seq, strings.Repeat("v", rng.IntN(300)))
		del := rng.IntN(6) == 0
		var mp *hbasepb.MutationProto
		var cb []byte
		if del {
			mp = &hbasepb.MutationProto{Row: []byte(row), MutateType: hbasepb.MutationProto_DELETE.Enum()}
		} else {
			mp, cb = putCells(row, [2]string{"q", val})
		}
		mp.Durability = hbasepb.MutationProto_FSYNC_WAL.Enum()
		var name []byte
		for _, ri := range regions {
			if mustRIErr(ri).ContainsRow([]byte(row)) {
				name = nameOf(t, ri)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Call(ctx, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(name), Mutation: mp}, cb, &hbasepb.MutateResponse{})
		cancel()
		if err != nil {
			switch exceptionClass(err) {
			case ipc.ClassNotServingRegionException, classWrongRegion, ipc.ClassRegionTooBusyException:
				// Not applied: the region closed for a split or merge.
				regions = nil
				time.Sleep(time.Millisecond)
				continue
			}
			// In flight at the cut: either outcome is right.
			md.mu.Lock()
			delete(md.rows, row)
			delete(md.deleted, row)
			md.mu.Unlock()
			return
		}
		md.mu.Lock()
		if del {
			delete(md.rows, row)
			md.deleted[row] = true
		} else {
			md.rows[row] = val
			delete(md.deleted, row)
		}
		md.mu.Unlock()
		if del {
			// As in HBase, a delete stamped at millisecond T hides puts
			// stamped T too: let the clock move past it.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func mustRIErr(pb *hbasepb.RegionInfo) *RegionInfo {
	ri, _ := regionInfoFromPB(pb)
	return &ri
}

// innerRow returns a row strictly inside ri's range, "" if none of the
// test's rows is.
func innerRow(rng *rand.Rand, ri *hbasepb.RegionInfo) string {
	for try := 0; try < 20; try++ {
		row := fmt.Sprintf("r%03d", rng.IntN(300))
		if bytes.Compare([]byte(row), ri.GetStartKey()) > 0 && (len(ri.GetEndKey()) == 0 || bytes.Compare([]byte(row), ri.GetEndKey()) < 0) {
			return row
		}
	}
	return ""
}

// liveRegionsErr is liveRegions returning the call's error.
func liveRegionsErr(c *ipc.ClientConn, table string) ([]*hbasepb.RegionInfo, error) {
	resp := &hbasepb.ScanResponse{}
	cb, err := c.Call(context.Background(), "Scan", &hbasepb.ScanRequest{Region: regionSpec([]byte("hbase:meta,,1")),
		Scan: &hbasepb.Scan{StartRow: []byte(table + ","), StopRow: []byte(table + ",\xff"),
			Column: []*hbasepb.Column{{Family: []byte("info"), Qualifier: [][]byte{[]byte("regioninfo")}}}},
		NumberOfRows: proto.Uint32(1000), CloseScanner: proto.Bool(true)}, nil, resp)
	if err != nil {
		return nil, err
	}
	var out []*hbasepb.RegionInfo
	var it encoding.CellBlockIter
	it.Init(cb, false)
	for _, n := range resp.GetCellsPerResult() {
		for i := uint32(0); i < n; i++ {
			var kv encoding.KeyValue
			if ok, err := it.Next(&kv); err != nil || !ok {
				return nil, fmt.Errorf("short cellblock: %v", err)
			}
			ri := &hbasepb.RegionInfo{}
			if err := hbasepb.ParsePB(kv.Value, ri); err != nil {
				return nil, err
			}
			if !ri.GetOffline() {
				out = append(out, ri)
			}
		}
	}
	return out, nil
}

func splitErr(m *ipc.ClientConn, ri *hbasepb.RegionInfo, row string) (string, error) {
	resp := &hbasepb.SplitTableRegionResponse{}
	return procErr(m, "SplitRegion", &hbasepb.SplitTableRegionRequest{RegionInfo: ri, SplitRow: []byte(row)}, resp)
}

func mergeErr(m *ipc.ClientConn, a, b *hbasepb.RegionInfo) (string, error) {
	req := &hbasepb.MergeTableRegionsRequest{}
	for _, pb := range []*hbasepb.RegionInfo{a, b} {
		req.Region = append(req.Region, &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(),
			Value: []byte(mustRIErr(pb).EncodedName())})
	}
	return procErr(m, "MergeTableRegions", req, &hbasepb.MergeTableRegionsResponse{})
}

// procErr runs a procedure call: the exception class it ended with, or an
// error that is not an exception (the connection failed).
func procErr(m *ipc.ClientConn, method string, req proto.Message, resp procResp) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Call(ctx, method, req, nil, resp); err != nil {
		if e, ok := ipc.AsException(err); ok {
			return e.Class, nil
		}
		return "", err
	}
	pr := &hbasepb.GetProcedureResultResponse{}
	if _, err := m.Call(ctx, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(resp.GetProcId())}, nil, pr); err != nil {
		return "", err
	}
	if pr.Exception != nil {
		return pr.GetException().GetGenericException().GetClassName(), nil
	}
	return "", nil
}
