package client

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// The package's tests share one ZooKeeper and one server, started on first
// use and stopped by TestMain. Tests that restart a server start their own,
// registered under their own ZooKeeper root.
var env struct {
	once    sync.Once
	err     error
	dir     string
	zk      *zkserver.Server
	srv     *server.Server
	tableID atomic.Int64
}

// scannerLease is the shared server's scanner lease, short so that the
// lease test is quick.
const scannerLease = time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if env.srv != nil {
		env.srv.Shutdown(context.Background())
	}
	if env.zk != nil {
		env.zk.Stop()
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// zkAddr returns the shared ZooKeeper's address, starting it on first use.
// Without ZooKeeper the test is skipped, or fails if
// REGIONKV_REQUIRE_ZOOKEEPER is set.
func zkAddr(t *testing.T) string {
	t.Helper()
	env.once.Do(func() {
		env.dir, env.err = os.MkdirTemp("", "regionkv-client-test-")
		if env.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		env.zk, env.err = zkserver.Start(ctx, zkserver.Config{Dir: env.dir + "/zk",
			Logger: slog.New(slog.DiscardHandler)})
		if env.err != nil {
			return
		}
		env.srv, env.err = startServer(env.dir+"/data", env.zk.Addr(), "/hbase")
	})
	if env.err != nil {
		if errors.Is(env.err, zkserver.ErrNotInstalled) && os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") == "" {
			t.Skipf("skipping: %v; set REGIONKV_REQUIRE_ZOOKEEPER=1 to make this a failure", env.err)
		}
		t.Fatalf("test environment: %v", env.err)
	}
	return env.zk.Addr()
}

func startServer(dataDir, zk, root string) (*server.Server, error) {
	cfg := server.Config{DataDir: dataDir, Host: "127.0.0.1", InfoPort: -1, ZKQuorum: zk, ZKRoot: root,
		ScannerTimeout: scannerLease, Logger: slog.New(slog.DiscardHandler)}
	// Port 0 in the struct means the default port; Set marks it explicit.
	if err := cfg.Set("hbase.regionserver.port", "0"); err != nil {
		return nil, err
	}
	return server.Start(cfg)
}

// newClient returns a client of the shared server, closed when t ends.
func newClient(t *testing.T, mod func(*Options)) *Client {
	t.Helper()
	o := Options{ZKQuorum: zkAddr(t), Timeout: 10 * time.Second}
	if os.Getenv("CLIENT_TEST_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if mod != nil {
		mod(&o)
	}
	c, err := New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// newTable creates a table with families cf and cf2 (3 versions each),
// with the split keys, and returns its name.
func newTable(t *testing.T, c *Client, splits ...string) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%s", env.tableID.Add(1), sanitize(t.Name()))
	var keys [][]byte
	for _, s := range splits {
		keys = append(keys, []byte(s))
	}
	err := c.CreateTable(ctx(t), TableDescriptor{Name: name, Families: []Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3"}},
		{Name: "cf2", Attributes: map[string]string{"VERSIONS": "3"}},
	}}, keys)
	require.NoError(t, err)
	return name
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
