package client

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/go-zookeeper/zk"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Znodes under Options.ZKRoot.
const (
	znodeMeta   = "/meta-region-server"
	znodeMaster = "/master"
)

// zkSessionTimeout is the session timeout asked for the short sessions of
// lookups.
const zkSessionTimeout = 10 * time.Second

// maxZNodeMetaLen bounds the identifier in a znode's header, as HBase's
// RecoverableZooKeeper does.
const maxZNodeMetaLen = 65000

// metaAddr returns the address of hbase:meta's server, reading ZooKeeper
// if it is not known.
func (c *Client) metaAddr(ctx context.Context) (string, error) {
	c.mu.Lock()
	addr := c.metaLoc
	c.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	var m hbasepb.MetaRegionServer
	if err := c.readZNode(ctx, znodeMeta, &m); err != nil {
		return "", err
	}
	addr = hostPort(m.GetServer().GetHostName(), m.GetServer().GetPort())
	c.mu.Lock()
	c.metaLoc = addr
	c.mu.Unlock()
	return addr, nil
}

// masterAddr returns the address of the master, reading ZooKeeper if it
// is not known.
func (c *Client) masterAddr(ctx context.Context) (string, error) {
	c.mu.Lock()
	addr := c.master
	c.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	var m hbasepb.Master
	if err := c.readZNode(ctx, znodeMaster, &m); err != nil {
		return "", err
	}
	addr = hostPort(m.GetMaster().GetHostName(), m.GetMaster().GetPort())
	c.mu.Lock()
	c.master = addr
	c.mu.Unlock()
	return addr, nil
}

// readZNode reads Options.ZKRoot+name in a fresh ZooKeeper session and
// decodes it into m.
func (c *Client) readZNode(ctx context.Context, name string, m proto.Message) error {
	path := c.opts.ZKRoot + name
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	conn, _, err := zk.Connect(c.servers, zkSessionTimeout, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		return errors.Wrapf(err, "client: connecting to ZooKeeper at %s", c.opts.ZKQuorum)
	}
	defer conn.Close()
	type got struct {
		data []byte
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		data, _, err := conn.Get(path)
		ch <- got{data, err}
	}()
	var g got
	select {
	case g = <-ch:
	case <-ctx.Done():
		return errors.Wrapf(ctx.Err(), "client: reading znode %s from ZooKeeper at %s", path, c.opts.ZKQuorum)
	}
	if g.err != nil {
		return errors.Wrapf(g.err, "client: reading znode %s from ZooKeeper at %s", path, c.opts.ZKQuorum)
	}
	return errors.Wrapf(parseZNode(g.data, m), "client: znode %s", path)
}

// parseZNode decodes HBase's znode format:
//
//	0xFF | u32 BE len | identifier (len bytes) | "PBUF" | protobuf
func parseZNode(b []byte, m proto.Message) error {
	if len(b) < 5 || b[0] != 0xFF {
		return errors.Newf("not in HBase's format (%d bytes, first %#x)", len(b), firstByte(b))
	}
	n := binary.BigEndian.Uint32(b[1:])
	if n < 1 || n > maxZNodeMetaLen || int(n) > len(b)-5 {
		return errors.Newf("bad identifier length %d in %d bytes", n, len(b))
	}
	return hbasepb.ParsePB(b[5+n:], m)
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
