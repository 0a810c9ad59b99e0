package pe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// TestPERemoteMeta runs metaWrite and metaRandomRead against a server
// registered in a real ZooKeeper: metaWrite creates TestTableMeta with a
// region per key and metaRandomRead's uncached lookups find them.
func TestPERemoteMeta(t *testing.T) {
	zk, err := zkserver.Start(context.Background(), zkserver.Config{Dir: t.TempDir()})
	if err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer zk.Stop()
	srv, err := server.Start(server.Config{DataDir: t.TempDir(), Port: server.FreePort, InfoPort: -1, ZKQuorum: zk.Addr(),
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer srv.Shutdown(context.Background())

	pe := func(args ...string) (int, map[string]any, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(append([]string{"pe", "--zk", zk.Addr(), "--json", "--seed", "7"}, args...), &out, &errOut)
		if code != 0 {
			return code, nil, errOut.String()
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var res map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res))
		return code, res, errOut.String()
	}
	code, _, errOut := pe("metaRandomRead", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "run metaWrite with --zk first")

	code, res, errOut := pe("--rows", "12", "metaWrite", "2")
	require.Equal(t, 0, code, errOut)
	require.EqualValues(t, 24, res["ops"])
	// Again: the table of the earlier run is replaced.
	code, res, errOut = pe("--rows", "15", "metaWrite", "2")
	require.Equal(t, 0, code, errOut)
	require.EqualValues(t, 30, res["ops"])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(ctx, client.Options{ZKQuorum: zk.Addr()})
	require.NoError(t, err)
	defer c.Close()
	regions, err := c.Regions(ctx, peMetaRemoteTable)
	require.NoError(t, err)
	require.Len(t, regions, 30)
	for i, r := range regions {
		if i > 0 {
			require.Equal(t, string(peMetaKey(int64(i), 2)), string(r.StartKey))
		}
	}

	code, res, errOut = pe("--rows", "100", "metaRandomRead", "2")
	require.Equal(t, 0, code, errOut)
	require.EqualValues(t, 200, res["ops"])
	code, res, errOut = pe("--duration", "300ms", "metaRandomRead", "2")
	require.Equal(t, 0, code, errOut)
	require.Greater(t, res["ops"], float64(0))

	code, _, errOut = pe("--rows", "3000", "metaWrite", "2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "at most 5000")

	// The hbase:meta rows are the server's own, and clients cannot write
	// there (server/hostile_test.go checks the refusal itself).
	_, err = c.Mutate(ctx, client.NewPut("hbase:meta", []byte("TestTableMeta,99,1.x.")).Add([]byte("info"), []byte("server"), []byte("x:1")))
	require.Error(t, err)
}
