package ipc

import (
	"bufio"
	"context"
	"net"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// ErrConnClosed is returned (marked) by calls on a closed or broken
// connection.
var ErrConnClosed = errors.New("ipc: connection closed")

// connCallID is the call id of connection-level responses (-1 in Java).
const connCallID = ^uint32(0)

// writeFailGrace is how long a call whose request could not be written
// waits for the server's answer (see Call) before the connection is failed.
const writeFailGrace = time.Second

// ClientConn is the client end of one connection: many calls may be in
// flight at once, from any goroutines; responses are matched by call id.
type ClientConn struct {
	nc    net.Conn
	codec Codec
	max   int

	wmu sync.Mutex // serializes request writes
	w   *bufio.Writer

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan callResult
	err     error // set once the connection is broken
	done    chan struct{}
}

type callResult struct {
	resp *Response
	err  error
}

// DialOptions configure Dial.
type DialOptions struct {
	// Service is the connection header's service_name.
	Service string
	// User is the effective user (default "root", as gohbase sends).
	User string
	// NoCellBlocks leaves the codec out of the header, so the server sends
	// every cell inline.
	NoCellBlocks bool
	// Snappy compresses cellblocks both ways.
	Snappy bool
	// MaxResponseSize bounds response frames (DefaultMaxRequestSize if 0).
	MaxResponseSize int
	Timeout         time.Duration
}

// Dial opens a connection to addr and sends the preamble and header.
func Dial(ctx context.Context, addr string, o DialOptions) (*ClientConn, error) {
	d := net.Dialer{Timeout: o.Timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, errors.Wrapf(err, "ipc: dial %s", addr)
	}
	if o.User == "" {
		o.User = "root"
	}
	h := &hbasepb.ConnectionHeader{
		UserInfo:    &hbasepb.UserInformation{EffectiveUser: proto.String(o.User)},
		ServiceName: proto.String(o.Service),
	}
	if !o.NoCellBlocks {
		h.CellBlockCodecClass = proto.String(KeyValueCodecClass)
		if o.Snappy {
			h.CellBlockCompressorClass = proto.String(SnappyCodecClass)
		}
	}
	codec, _ := CodecFor(h.GetCellBlockCodecClass(), h.GetCellBlockCompressorClass())
	b, err := AppendConnectionHeader(nil, h)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return nil, errors.Wrapf(err, "ipc: sending connection header to %s", addr)
	}
	c := &ClientConn{nc: nc, codec: codec, max: o.MaxResponseSize, w: bufio.NewWriterSize(nc, 64<<10),
		pending: map[uint32]chan callResult{}, done: make(chan struct{})}
	if c.max <= 0 {
		c.max = DefaultMaxRequestSize
	}
	go c.readLoop()
	return c, nil
}

// Codec returns the connection's cellblock codec.
func (c *ClientConn) Codec() Codec { return c.codec }

// Done is closed when the connection breaks or is closed.
func (c *ClientConn) Done() <-chan struct{} { return c.done }

// Err returns why the connection is unusable, or nil.
func (c *ClientConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection; calls in flight fail with ErrConnClosed.
func (c *ClientConn) Close() error {
	c.fail(errors.Mark(errors.New("ipc: connection closed by client"), ErrConnClosed))
	return nil
}

func (c *ClientConn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
	for _, ch := range pending {
		ch <- callResult{err: err}
	}
}

func (c *ClientConn) readLoop() {
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		frame, _, err := ReadFrame(br, c.max, nil)
		if err != nil {
			c.fail(errors.Mark(errors.Wrap(err, "ipc: reading response"), ErrConnClosed))
			return
		}
		r := &Response{}
		if err := ParseResponse(frame, r); err != nil {
			c.fail(errors.Mark(err, ErrConnClosed))
			return
		}
		id := r.Header.GetCallId()
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if !ok {
			if e := r.Header.GetException(); e != nil && id == connCallID {
				// A connection-level exception (call id -1): the server is
				// about to close. An exception for any other unknown id
				// answers a call we gave up on, and is dropped like the
				// answers to such calls.
				c.fail(errors.Mark(&Exception{Class: e.GetExceptionClassName(), Message: e.GetStackTrace()}, ErrConnClosed))
				return
			}
			continue // a call we gave up on
		}
		if len(r.CellBlock) > 0 && c.codec.Snappy {
			cb, err := c.codec.Decompress(nil, r.CellBlock, c.max)
			if err != nil {
				ch <- callResult{err: err}
				continue
			}
			r.CellBlock = cb
		}
		ch <- callResult{resp: r}
	}
}

// Call sends method with req and cellBlock, waits for the response, decodes
// it into resp (if not nil) and returns the response cellblock. A server
// exception is returned as an *Exception.
func (c *ClientConn) Call(ctx context.Context, method string, req proto.Message, cellBlock []byte, resp proto.Message) ([]byte, error) {
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	if c.nextID == connCallID {
		c.nextID = 0
	}
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if len(cellBlock) > 0 {
		cellBlock = c.codec.Compress(nil, cellBlock)
	}
	h := &hbasepb.RequestHeader{CallId: proto.Uint32(id), MethodName: proto.String(method)}
	if dl, ok := ctx.Deadline(); ok {
		h.Timeout = proto.Uint32(uint32(max(time.Until(dl).Milliseconds(), 1)))
	}
	b, err := AppendRequest(nil, h, req, cellBlock)
	if err != nil {
		c.forget(id)
		return nil, err
	}
	c.wmu.Lock()
	_, err = c.w.Write(b)
	if err == nil {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		// The server may have answered and closed (a request too big, a
		// fatal connection error) while we were still writing: the reader
		// gets that answer, then the end of the stream, and fails the
		// connection itself. Give it that time rather than racing it, then
		// fail the connection anyway: its writer is broken for good.
		werr := errors.Mark(errors.Wrap(err, "ipc: sending request"), ErrConnClosed)
		time.AfterFunc(writeFailGrace, func() { c.fail(werr) })
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		if e := r.resp.Header.GetException(); e != nil {
			return nil, &Exception{Class: e.GetExceptionClassName(), Message: e.GetStackTrace()}
		}
		if resp != nil {
			if err := proto.Unmarshal(r.resp.Param, resp); err != nil {
				return nil, errors.Wrapf(err, "ipc: decoding %s response", method)
			}
		}
		return r.resp.CellBlock, nil
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

func (c *ClientConn) forget(id uint32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}
