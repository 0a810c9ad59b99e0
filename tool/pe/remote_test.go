package pe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

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
}
