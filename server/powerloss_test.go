package server

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/stretchr/testify/require"
)

// TestServerPowerLoss cuts the power under a whole server (its catalog,
// table descriptors, cluster id and every region's files go through a
// crashable filesystem) at a random file operation while a client writes
// and deletes with FSYNC_WAL, then starts a server on what the disk held:
// it must start, the table it acknowledged creating must be there, every
// acknowledged write must be read back and no acknowledged delete undone.
func TestServerPowerLoss(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 20
	}
	if v, err := strconv.Atoi(os.Getenv("REGIONKV_CRASH_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	dataDir := t.TempDir()
	fs := crashfs.New()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	acked := map[string]string{} // row -> value, acknowledged and not deleted since
	deleted := map[string]bool{}
	lost, resurrected, created := 0, 0, false
	for c := 0; c < cycles; c++ {
		cfg := Config{DataDir: dataDir, Port: FreePort, InfoPort: -1, FS: fs,
			Logger: slog.New(slog.DiscardHandler)}
		cfg.Region.FlushSize = 16 << 10 // flushes (and WAL pruning) within reach of the cut
		// The client sends every write to the one region it found: no
		// splits (TestSplitPowerLoss cuts the power during splits).
		cfg.SplitPolicy = "DisabledRegionSplitPolicy"
		s, err := Start(cfg)
		require.NoError(t, err, "cycle %d: the server does not start on the crash image", c)
		m := dial(t, s, MasterService)
		cl := dial(t, s, ClientService)
		if !created {
			createTable(t, m, "pl")
			created = true
		}
		regions := metaRegions(t, cl, "pl")
		require.Len(t, regions, 1, "cycle %d: the acknowledged table is gone", c)
		reg := regionSpec(regionFor(regions, "r"))
		get := func(row string) (string, bool) {
			resp := &hbasepb.GetResponse{}
			cb := call(t, cl, "Get", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte(row)}}, resp, nil)
			got := scanRowsOf(t, resp.GetResult(), cb)
			return got, got != ""
		}
		for row, want := range acked {
			if got, ok := get(row); !ok || got != want {
				lost++
				t.Errorf("cycle %d: acknowledged %s=%s reads %q", c, row, want, got)
			}
		}
		for row := range deleted {
			if got, ok := get(row); ok {
				resurrected++
				t.Errorf("cycle %d: deleted %s came back as %q", c, row, got)
			}
		}
		// The crash FS draws on server goroutines: it gets a source of its own.
		fs.CrashAt(int64(1+rng.IntN(400)), crashfs.Mutating, rand.New(rand.NewPCG(rng.Uint64(), 2)))
		for i := 0; ; i++ {
			row := fmt.Sprintf("r%03d", rng.IntN(200))
			val := fmt.Sprintf("c%d-%d", c, i)
			var mp *hbasepb.MutationProto
			var cb []byte
			del := i%5 == 4
			if del {
				mp = &hbasepb.MutationProto{Row: []byte(row), MutateType: hbasepb.MutationProto_DELETE.Enum()}
			} else {
				mp, cb = putCells(row, [2]string{"q", val})
			}
			mp.Durability = hbasepb.MutationProto_FSYNC_WAL.Enum()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := cl.Call(ctx, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, cb, &hbasepb.MutateResponse{})
			cancel()
			if err != nil {
				// In flight at the cut: either outcome is right.
				delete(acked, row)
				delete(deleted, row)
				break
			}
			if del {
				delete(acked, row)
				deleted[row] = true
				// As in HBase, a delete stamped at millisecond T hides
				// puts stamped T too: let the clock move past it.
				time.Sleep(2 * time.Millisecond)
			} else {
				acked[row] = val
				delete(deleted, row)
			}
			select {
			case <-fs.Crashed():
			default:
				continue
			}
			break
		}
		<-fs.Crashed()
		img := fs.Image()
		cl.Close()
		m.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = s.Shutdown(sctx) // on a dead disk: it fails fast
		cancel()
		fs = img
	}
	t.Logf("cycles=%d lost=%d resurrected=%d", cycles, lost, resurrected)
}

// scanRowsOf returns the value of the first cell of a Get result, "" if
// none, from the inline cells or the cellblock.
func scanRowsOf(t *testing.T, r *hbasepb.Result, cb []byte) string {
	t.Helper()
	if len(r.GetCell()) > 0 {
		return string(r.GetCell()[0].GetValue())
	}
	if r.GetAssociatedCellCount() == 0 {
		return ""
	}
	got := scanRows(t, &hbasepb.ScanResponse{CellsPerResult: []uint32{uint32(r.GetAssociatedCellCount())},
		PartialFlagPerResult: []bool{false}}, cb)
	if len(got) == 0 {
		return ""
	}
	// scanRows formats "row=value".
	for i := 0; i < len(got[0]); i++ {
		if got[0][i] == '=' {
			return got[0][i+1:]
		}
	}
	return ""
}
