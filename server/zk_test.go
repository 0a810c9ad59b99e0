package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func startZK(t *testing.T, dir string, port int) *zkserver.Server {
	t.Helper()
	z, err := zkserver.Start(context.Background(), zkserver.Config{Dir: dir, Port: port})
	if err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return z
}

// readZNode returns the protobuf part of an HBase znode.
func readZNode(t *testing.T, conn *zk.Conn, path string) []byte {
	t.Helper()
	b, _, err := conn.Get(path)
	require.NoError(t, err, path)
	require.Equal(t, byte(0xFF), b[0], "HBase's magic byte")
	n := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
	b = b[5+n:]
	require.Equal(t, "PBUF", string(b[:4]))
	return b[4:]
}

// tcpProxy forwards connections to a target until blocked: then it cuts
// every connection and refuses new ones, as a network partition would.
type tcpProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	blocked bool
	conns   []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.setBlocked(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.blocked {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *tcpProxy) setBlocked(b bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = b
	if b {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// TestZooKeeperRegistration checks the znodes in HBase's format, and that
// they come back after the session is lost: the server is cut off from
// ZooKeeper for longer than its session timeout, so ZooKeeper expires the
// session and deletes its ephemeral znodes.
func TestZooKeeperRegistration(t *testing.T) {
	z := startZK(t, t.TempDir(), 0)
	defer z.Stop()
	proxy := newTCPProxy(t, z.Addr())
	s, err := Start(Config{DataDir: t.TempDir(), Port: FreePort, InfoPort: FreePort, ZKQuorum: proxy.ln.Addr().String(),
		ZKSessionTimeout: 4 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Shutdown(context.Background())

	conn, _, err := zk.Connect([]string{z.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	require.NoError(t, err)
	defer conn.Close()
	check := func() {
		t.Helper()
		require.Eventually(t, func() bool {
			ok, _, err := conn.Exists("/hbase/master")
			return err == nil && ok
		}, 30*time.Second, 50*time.Millisecond, "/hbase/master registered")
		var master hbasepb.Master
		require.NoError(t, protoUnmarshal(readZNode(t, conn, "/hbase/master"), &master))
		require.Equal(t, "127.0.0.1", master.GetMaster().GetHostName())
		require.EqualValues(t, s.cfg.Port, master.GetMaster().GetPort())
		var meta hbasepb.MetaRegionServer
		require.NoError(t, protoUnmarshal(readZNode(t, conn, "/hbase/meta-region-server"), &meta))
		require.EqualValues(t, s.cfg.Port, meta.GetServer().GetPort())
		var id hbasepb.ClusterId
		require.NoError(t, protoUnmarshal(readZNode(t, conn, "/hbase/hbaseid"), &id))
		require.Equal(t, s.clusterID, id.GetClusterId())
		_, stat, err := conn.Get("/hbase/master")
		require.NoError(t, err)
		require.NotZero(t, stat.EphemeralOwner, "/hbase/master is ephemeral")
	}
	check()
	before := s.zk.registrations()

	proxy.setBlocked(true)
	require.Eventually(t, func() bool {
		ok, _, err := conn.Exists("/hbase/master")
		return err == nil && !ok
	}, 30*time.Second, 100*time.Millisecond, "ZooKeeper expires the cut-off session and deletes /hbase/master")
	proxy.setBlocked(false)
	check()
	require.Greater(t, s.zk.registrations(), before, "registered again in a new session")
}

func protoUnmarshal(b []byte, m proto.Message) error { return proto.Unmarshal(b, m) }
