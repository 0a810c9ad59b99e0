package pe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// TestPERemote runs pe's write, read, scan and read-modify-write commands
// over the network against a server registered in a real ZooKeeper; the
// read commands check every value they read, so a wrong answer fails.
func TestPERemote(t *testing.T) {
	zk, err := zkserver.Start(context.Background(), zkserver.Config{Dir: t.TempDir()})
	if err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer zk.Stop()
	cfg := server.Config{DataDir: t.TempDir(), Port: server.FreePort, InfoPort: -1, ZKQuorum: zk.Addr(),
		Logger: slog.New(slog.DiscardHandler)}
	srv, err := server.Start(cfg)
	require.NoError(t, err)
	defer srv.Shutdown(context.Background())

	pe := func(args ...string) map[string]any {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(append([]string{"pe", "--zk", zk.Addr(), "--json", "--seed", "7"}, args...), &out, &errOut)
		require.Equal(t, 0, code, "pe %v: %s", args, errOut.String())
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var res map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res))
		return res
	}
	res := pe("--rows", "500", "--presplit", "3", "--valueSize", "100", "sequentialWrite", "2")
	require.EqualValues(t, 1000, res["ops"])
	// --presplit on an existing TestTable: the same count is no change; a
	// read command with another refuses (a new table would be empty).
	res = pe("--rows", "500", "--presplit", "3", "--valueSize", "100", "randomRead", "1")
	require.EqualValues(t, 500, res["ops"])
	var out, errOut bytes.Buffer
	code := run([]string{"pe", "--zk", zk.Addr(), "--rows", "10", "--presplit", "5", "randomRead", "1"}, &out, &errOut)
	require.Equal(t, 1, code)
	require.Contains(t, errOut.String(), "TestTable on the cluster at "+zk.Addr()+" has 3 regions, not the 5 --presplit asks for")
	for _, cmd := range []string{"randomRead", "sequentialRead", "scan", "reverseScan", "increment", "checkAndPut", "append"} {
		res := pe("--rows", "500", "--valueSize", "100", cmd, "2")
		require.Greater(t, res["ops"], float64(0), cmd)
	}
	// Flushed on the server's shutdown, the table is still read right by
	// a server started on the same data.
	require.NoError(t, srv.Shutdown(context.Background()))
	srv, err = server.Start(cfg)
	require.NoError(t, err)
	res = pe("--rows", "500", "--valueSize", "100", "sequentialRead", "2")
	require.EqualValues(t, 1000, res["ops"])

	// A write command with another count recreates the table, as hbase pe
	// does, and says so.
	out.Reset()
	errOut.Reset()
	code = run([]string{"pe", "--zk", zk.Addr(), "--rows", "40", "--presplit", "4", "--valueSize", "10", "sequentialWrite", "1"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	require.Contains(t, errOut.String(), "regionsrv pe: TestTable has 3 regions, --presplit asks for 4: dropping it and creating it again, as hbase pe does")
	c, err := client.New(context.Background(), client.Options{ZKQuorum: zk.Addr()})
	require.NoError(t, err)
	defer c.Close()
	regions, err := c.Regions(context.Background(), "TestTable")
	require.NoError(t, err)
	require.Len(t, regions, 4)
	res = pe("--rows", "40", "--valueSize", "10", "sequentialRead", "1")
	require.EqualValues(t, 40, res["ops"], "the new table holds what the last write wrote")
}
