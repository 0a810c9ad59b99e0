package server

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/go-zookeeper/zk"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// zkRegistration keeps the server's znodes in ZooKeeper, as HBase's master
// and region server do: /hbase/master (ephemeral), /hbase/meta-region-server,
// /hbase/hbaseid, /hbase/running and /hbase/rs/<server name> (ephemeral).
// go-zookeeper reconnects by itself and starts a new session when the old
// one expires; every time a session is established the znodes are written
// again, since the ephemeral ones died with the old session.
type zkRegistration struct {
	s     *Server
	conn  *zk.Conn
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	err   error // last registration error
	count int   // registrations done, for tests
}

// zkData frames a znode value as HBase's ZKUtil/ProtobufUtil do: 0xFF, the
// length of an identifier, the identifier ("pid@host"), then m behind the PB
// magic (hbasepb.AppendPB).
func zkData(m proto.Message) []byte {
	host, _ := os.Hostname()
	id := []byte(fmt.Sprintf("%d@%s", os.Getpid(), host))
	b := []byte{0xFF}
	b = binary.BigEndian.AppendUint32(b, uint32(len(id)))
	b = append(b, id...)
	return append(b, marshalPBUF(m)...)
}

func registerZK(s *Server) (*zkRegistration, error) {
	servers := strings.Split(s.cfg.ZKQuorum, ",")
	conn, events, err := zk.Connect(servers, s.cfg.ZKSessionTimeout, zk.WithLogInfo(false),
		zk.WithLogger(zkLogger{s}))
	if err != nil {
		return nil, errors.Wrapf(err, "server: connecting to ZooKeeper at %s", s.cfg.ZKQuorum)
	}
	z := &zkRegistration{s: s, conn: conn, stop: make(chan struct{}), done: make(chan struct{})}
	// Wait for the first session, so that Start returns registered.
	deadline := time.After(max(s.cfg.ZKSessionTimeout, 10*time.Second))
	for {
		select {
		case ev := <-events:
			if ev.State != zk.StateHasSession {
				continue
			}
			if err := z.register(); err != nil {
				conn.Close()
				return nil, err
			}
			go z.watch(events)
			return z, nil
		case <-deadline:
			conn.Close()
			return nil, errors.Newf("server: no ZooKeeper session with %s (is ZooKeeper running? `regionsrv serve --standalone` starts one)", s.cfg.ZKQuorum)
		}
	}
}

func (z *zkRegistration) watch(events <-chan zk.Event) {
	defer close(z.done)
	for {
		select {
		case <-z.stop:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case zk.StateExpired:
				z.s.log.Warn("ZooKeeper session expired; re-registering when a new one is up")
			case zk.StateHasSession:
				if err := z.register(); err != nil {
					z.s.log.Error("ZooKeeper registration failed", "err", err)
				} else {
					z.s.log.Info("registered in ZooKeeper", "quorum", z.s.cfg.ZKQuorum, "session", z.conn.SessionID())
				}
			}
		}
	}
}

// register (re)writes every znode.
func (z *zkRegistration) register() error {
	s := z.s
	root := strings.TrimSuffix(s.cfg.ZKRoot, "/")
	sn := s.serverNamePB()
	acl := zk.WorldACL(zk.PermAll)
	ensure := func(path string) error {
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		p := ""
		for _, part := range parts {
			p += "/" + part
			if _, err := z.conn.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return errors.Wrapf(err, "creating znode %s", p)
			}
		}
		return nil
	}
	put := func(path string, data []byte, ephemeral bool) error {
		var flags int32
		if ephemeral {
			flags = zk.FlagEphemeral
			// An ephemeral node of our own expired session may linger
			// until ZooKeeper notices; replace it.
			if err := z.conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return errors.Wrapf(err, "deleting znode %s", path)
			}
		}
		if _, err := z.conn.Create(path, data, flags, acl); err != nil {
			if !errors.Is(err, zk.ErrNodeExists) {
				return errors.Wrapf(err, "creating znode %s", path)
			}
			if _, err := z.conn.Set(path, data, -1); err != nil {
				return errors.Wrapf(err, "writing znode %s", path)
			}
		}
		return nil
	}
	var err error
	if err = ensure(root + "/rs"); err == nil {
		err = errors.CombineErrors(err, put(root+"/hbaseid", zkData(&hbasepb.ClusterId{ClusterId: proto.String(s.clusterID)}), false))
		err = errors.CombineErrors(err, put(root+"/running",
			zkData(&hbasepb.ClusterUp{StartDate: proto.String(time.UnixMilli(int64(s.startCode)).String())}), false))
		err = errors.CombineErrors(err, put(root+"/meta-region-server", zkData(&hbasepb.MetaRegionServer{
			Server: sn, RpcVersion: proto.Uint32(0), State: hbasepb.RegionState_OPEN.Enum()}), false))
		err = errors.CombineErrors(err, put(root+"/rs/"+s.ServerName(), zkData(sn), true))
		err = errors.CombineErrors(err, put(root+"/master", zkData(&hbasepb.Master{
			Master: sn, RpcVersion: proto.Uint32(0), InfoPort: proto.Uint32(uint32(max(s.infoPort(), 0)))}), true))
	}
	z.mu.Lock()
	z.err = err
	if err == nil {
		z.count++
	}
	z.mu.Unlock()
	return errors.Wrapf(err, "server: registering in ZooKeeper at %s", s.cfg.ZKQuorum)
}

// registrations returns how many times the znodes were written.
func (z *zkRegistration) registrations() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.count
}

// close removes the ephemeral znodes (ZooKeeper would after the session
// timeout anyway) and ends the session.
func (z *zkRegistration) close() {
	close(z.stop)
	<-z.done
	root := strings.TrimSuffix(z.s.cfg.ZKRoot, "/")
	_ = z.conn.Delete(root+"/master", -1)
	_ = z.conn.Delete(root+"/rs/"+z.s.ServerName(), -1)
	z.conn.Close()
}

type zkLogger struct{ s *Server }

func (l zkLogger) Printf(format string, args ...any) {
	l.s.log.Debug("zookeeper: " + fmt.Sprintf(format, args...))
}
