package client

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// Service names of the connection header.
const (
	clientService = "ClientService"
	masterService = "MasterService"
)

// Defaults for Options.
const (
	DefaultZKRoot  = "/hbase"
	DefaultTimeout = 30 * time.Second
	DefaultRetries = 10
)

// Backoff between retries: it starts at minBackoff and doubles up to
// maxBackoff.
const (
	minBackoff = 20 * time.Millisecond
	maxBackoff = time.Second
)

// ErrClosed is returned (marked) by calls on a closed Client.
var ErrClosed = errors.New("client: closed")

// Options configure a Client. Only ZKQuorum is required.
type Options struct {
	// ZKQuorum is the ZooKeeper ensemble, "host:port[,host:port...]".
	ZKQuorum string
	// ZKRoot is the znode parent (zookeeper.znode.parent); DefaultZKRoot if
	// empty.
	ZKRoot string
	// Timeout bounds each RPC, dial and ZooKeeper read, unless the
	// caller's context ends first; DefaultTimeout if zero.
	Timeout time.Duration
	// Retries is how many times a call is retried after a retryable error
	// (region moved, server unreachable, region busy); DefaultRetries if
	// zero, none if negative.
	Retries int
	// Snappy compresses cellblocks both ways.
	Snappy bool
	// NoCellBlocks leaves the cellblock codec out of the connection
	// header: every cell travels inline in protobuf, both ways.
	NoCellBlocks bool
	// User is the effective user of the connections ("root" if empty).
	User string
	// Logger receives retries and reconnects at debug level; nothing is
	// logged if nil.
	Logger *slog.Logger
}

// Client is a connection to a RegionKV or HBase cluster. It is safe for
// concurrent use. Close it when done.
type Client struct {
	opts    Options
	log     *slog.Logger
	servers []string

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	conns   map[connKey]*connSlot
	metaLoc string // address of hbase:meta's server; "" until read
	master  string // address of the master; "" until read

	regions regionCache
}

type connKey struct{ addr, service string }

// connSlot holds one connection; its mutex serializes dialing, so
// concurrent callers share a single dial.
type connSlot struct {
	mu   sync.Mutex
	conn *ipc.ClientConn
}

// New returns a client of the cluster registered in ZooKeeper at
// o.ZKQuorum. It reads the location of hbase:meta once, so that a wrong
// quorum or root fails here rather than on the first call.
func New(ctx context.Context, o Options) (*Client, error) {
	if o.ZKQuorum == "" {
		return nil, errors.New("client: Options.ZKQuorum is required")
	}
	if o.ZKRoot == "" {
		o.ZKRoot = DefaultZKRoot
	}
	o.ZKRoot = "/" + strings.Trim(o.ZKRoot, "/")
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Client{opts: o, log: log, conns: map[connKey]*connSlot{}}
	for _, s := range strings.Split(o.ZKQuorum, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.servers = append(c.servers, s)
		}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.regions.init()
	if _, err := c.metaAddr(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes every connection. Calls in flight fail; later calls return
// an error marked ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	conns := c.conns
	c.conns = map[connKey]*connSlot{}
	c.mu.Unlock()
	c.cancel()
	for _, s := range conns {
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
		}
		s.mu.Unlock()
	}
	return nil
}

// conn returns the connection to addr for service, dialing it if there is
// none or the last one broke.
func (c *Client) conn(ctx context.Context, addr, service string) (*ipc.ClientConn, error) {
	k := connKey{addr, service}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	s := c.conns[k]
	if s == nil {
		s = &connSlot{}
		c.conns[k] = s
	}
	c.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.Err() == nil {
		return s.conn, nil
	}
	if s.conn != nil {
		c.log.Debug("client: reconnecting", "addr", addr, "service", service, "err", s.conn.Err().Error())
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	conn, err := ipc.Dial(ctx, addr, ipc.DialOptions{Service: service, User: c.opts.User,
		NoCellBlocks: c.opts.NoCellBlocks, Snappy: c.opts.Snappy, Timeout: c.opts.Timeout})
	if err != nil {
		return nil, errors.Mark(errors.Mark(err, errConnFailed), errDialFailed)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		conn.Close()
		return nil, ErrClosed
	}
	s.conn = conn
	return conn, nil
}

// dropConn closes the connections to addr (both services), so the next
// call dials again.
func (c *Client) dropConn(addr string) {
	c.mu.Lock()
	var slots []*connSlot
	for k, s := range c.conns {
		if k.addr == addr {
			slots = append(slots, s)
		}
	}
	c.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
		}
		s.mu.Unlock()
	}
}

// call makes one RPC to addr with the per-call timeout.
func (c *Client) call(ctx context.Context, addr, service, method string, req proto.Message, cells []byte, resp proto.Message) ([]byte, error) {
	// A call whose context is over is not sent: ipc would send it and
	// then race its answer against the context, so a canceled caller
	// could still see (and apply) calls succeed.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := c.conn(ctx, addr, service)
	if err != nil {
		return nil, err
	}
	// A caller's deadline within the per-call timeout already bounds the
	// call: a context of our own would cost a timer and allocations.
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.opts.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	cb, err := conn.Call(ctx, method, req, cells, resp)
	if err != nil && errors.Is(err, ipc.ErrConnClosed) {
		err = errors.Mark(err, errConnFailed)
	}
	return cb, err
}

// codecEnabled reports whether connections carry cellblocks.
func (c *Client) codecEnabled() bool { return !c.opts.NoCellBlocks }

// errConnFailed marks errors of dialing or of a broken connection: the
// server may be gone, so locations on it are dropped and the call retried.
var errConnFailed = errors.New("client: connection failed")

// errDialFailed marks errors of dialing: the request was never sent, so
// even a call that is not idempotent can be retried.
var errDialFailed = errors.New("client: dial failed")

// retryKind says what to do about an error.
type retryKind int

const (
	noRetry       retryKind = iota
	retryRelocate           // the region is elsewhere: drop cached locations
	retryServer             // the server is unreachable or stopping
	retryBackoff            // the server is busy: wait and try again
)

// Java class names the client reacts to, beyond ipc's list.
const (
	classRegionMoved      = "org.apache.hadoop.hbase.exceptions.RegionMovedException"
	classWrongRegion      = "org.apache.hadoop.hbase.regionserver.WrongRegionException"
	classRegionOpening    = "org.apache.hadoop.hbase.exceptions.RegionOpeningException"
	classServerAborted    = "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException"
	classMasterStopped    = "org.apache.hadoop.hbase.exceptions.MasterStoppedException"
	classCallQueueTooBig  = "org.apache.hadoop.hbase.CallQueueTooBigException"
	classRetryImmediately = "org.apache.hadoop.hbase.RetryImmediatelyException"
	classPleaseHold       = "org.apache.hadoop.hbase.PleaseHoldException"
	classThrottling       = "org.apache.hadoop.hbase.quotas.RpcThrottlingException"
	classTableNotFound    = ipc.ClassTableNotFoundException
	classNotServingRegion = ipc.ClassNotServingRegionException
	classServerStopped    = ipc.ClassRegionServerStoppedException
	classServerNotRunning = ipc.ClassServerNotRunningYetException
	classRegionTooBusy    = ipc.ClassRegionTooBusyException
)

// classify says whether and how err can be retried, as gohbase sorts
// HBase's exceptions.
func classify(err error) retryKind {
	if err == nil {
		return noRetry
	}
	if errors.Is(err, errConnFailed) {
		return retryServer
	}
	if errors.Is(err, errNoRegion) {
		return retryRelocate
	}
	e, ok := ipc.AsException(err)
	if !ok {
		return noRetry
	}
	return classifyClass(e.Class)
}

func classifyClass(class string) retryKind {
	switch class {
	case classNotServingRegion, classRegionMoved, classWrongRegion, classRegionOpening:
		return retryRelocate
	case classServerStopped, classServerNotRunning, classServerAborted, classMasterStopped:
		return retryServer
	case classRegionTooBusy, classCallQueueTooBig, classRetryImmediately, classPleaseHold, classThrottling:
		return retryBackoff
	}
	return noRetry
}

// IsException reports whether err carries a server exception of the given
// Java class, e.g. "org.apache.hadoop.hbase.TableNotFoundException". A
// class without a package ("TableNotFoundException") matches the simple
// name.
func IsException(err error, class string) bool {
	e, ok := ipc.AsException(err)
	if !ok {
		return false
	}
	if strings.Contains(class, ".") {
		return e.Class == class
	}
	return e.Class == class || strings.HasSuffix(e.Class, "."+class)
}

// backoff sleeps before retry attempt n (0-based), or returns the
// context's error.
func (c *Client) backoff(ctx context.Context, n int) error {
	d := minBackoff << min(n, 10)
	if d > maxBackoff {
		d = maxBackoff
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
}

// handleFailure updates the client's state after err from a call to addr
// (for table, if not "") and reports whether the call may be retried.
func (c *Client) handleFailure(err error, addr, table string) bool {
	switch classify(err) {
	case retryRelocate:
		if normalizeTable(table) == metaTableName {
			c.mu.Lock()
			c.metaLoc = ""
			c.mu.Unlock()
		} else if table != "" {
			c.regions.invalidate(table)
		}
		return true
	case retryServer:
		c.log.Debug("client: server unreachable; relocating", "addr", addr, "err", err.Error())
		if addr != "" {
			c.dropConn(addr)
			c.regions.invalidateServer(addr)
		}
		c.mu.Lock()
		if c.metaLoc == addr {
			c.metaLoc = ""
		}
		if c.master == addr {
			c.master = ""
		}
		c.mu.Unlock()
		return true
	case retryBackoff:
		return true
	}
	return false
}

// hostPort joins a ServerName's host and port.
func hostPort(host string, port uint32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
