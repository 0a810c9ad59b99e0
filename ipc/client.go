package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/encoding/protowire"
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

	wmu    sync.Mutex // serializes request writes
	w      *bufio.Writer
	queued atomic.Int32 // requests waiting for wmu or holding it

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan callResult
	err     error // set once the connection is broken
	done    chan struct{}
}

// callResult is what the read loop hands a call: the response's message
// and cellblock (pieces of a frame of the call's own) or an error.
type callResult struct {
	param, cellBlock []byte
	exc              *Exception
	err              error
}

// resultChans recycles the channels of calls that received their answer
// (a call that gave up leaves its channel to the read loop, and to the GC).
var resultChans = sync.Pool{New: func() any { return make(chan callResult, 1) }}

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
	var r Response
	for {
		frame, _, err := ReadFrame(br, c.max, nil)
		if err != nil {
			c.fail(errors.Mark(errors.Wrap(err, "ipc: reading response"), ErrConnClosed))
			return
		}
		// r is reused: what a call gets of it are pieces of the frame,
		// which is the call's own (ReadFrame allocates it).
		if err := ParseResponse(frame, &r); err != nil {
			c.fail(errors.Mark(err, ErrConnClosed))
			return
		}
		id := r.Header.GetCallId()
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		var exc *Exception
		if e := r.Header.GetException(); e != nil {
			exc = &Exception{Class: e.GetExceptionClassName(), Message: e.GetStackTrace()}
		}
		if !ok {
			if exc != nil && id == connCallID {
				// A connection-level exception (call id -1): the server is
				// about to close. An exception for any other unknown id
				// answers a call we gave up on, and is dropped like the
				// answers to such calls.
				c.fail(errors.Mark(exc, ErrConnClosed))
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
		ch <- callResult{param: r.Param, cellBlock: r.CellBlock, exc: exc}
	}
}

// Call sends method with req and cellBlock, waits for the response, decodes
// it into resp (if not nil) and returns the response cellblock. A server
// exception is returned as an *Exception.
func (c *ClientConn) Call(ctx context.Context, method string, req proto.Message, cellBlock []byte, resp proto.Message) ([]byte, error) {
	ch := resultChans.Get().(chan callResult)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		resultChans.Put(ch)
		return nil, err
	}
	c.nextID++
	if c.nextID == connCallID {
		c.nextID = 0
	}
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if len(cellBlock) > 0 && c.codec.Snappy {
		cellBlock = c.codec.Compress(nil, cellBlock)
	}
	var timeout uint32
	dl, hasTimeout := ctx.Deadline()
	if hasTimeout {
		timeout = uint32(max(time.Until(dl).Milliseconds(), 1))
	}
	bp := requestBufs.Get().(*[]byte)
	b, err := appendCallRequest((*bp)[:0], id, method, hasTimeout, timeout, req, cellBlock)
	if err != nil {
		requestBufs.Put(bp)
		c.forget(id)
		return nil, err
	}
	// Requests sent together go out in one write: a writer leaves the
	// flush to one queued behind it, and the last one flushes.
	c.queued.Add(1)
	c.wmu.Lock()
	last := c.queued.Add(-1) == 0
	_, err = c.w.Write(b)
	if err == nil && last {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if cap(b) <= maxPooledBuf {
		*bp = b
		requestBufs.Put(bp)
	}
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
		resultChans.Put(ch)
		if r.err != nil {
			return nil, r.err
		}
		if r.exc != nil {
			return nil, r.exc
		}
		if resp != nil {
			if err := proto.Unmarshal(r.param, resp); err != nil {
				return nil, errors.Wrapf(err, "ipc: decoding %s response", method)
			}
		}
		return r.cellBlock, nil
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

// requestBufs recycles the buffers requests are encoded in: a request is
// written before Call waits, so its buffer is free again at once.
var requestBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendCallRequest appends the framed request Call sends: AppendRequest's
// bytes for a header of call_id, method_name, request_param,
// cell_block_meta and timeout (if hasTimeout), the header written by hand
// so that it costs no message.
func appendCallRequest(dst []byte, id uint32, method string, hasTimeout bool, timeout uint32, param proto.Message, cellBlock []byte) ([]byte, error) {
	hdrSize := 1 + protowire.SizeVarint(uint64(id)) + 1 + protowire.SizeBytes(len(method))
	if param != nil {
		hdrSize += 2
	}
	if len(cellBlock) > 0 {
		hdrSize += 3 + protowire.SizeVarint(uint64(len(cellBlock)))
	}
	if hasTimeout {
		hdrSize += 1 + protowire.SizeVarint(uint64(timeout))
	}
	paramSize := 0
	if param != nil {
		paramSize = proto.Size(param)
	}
	start := len(dst)
	dst = slices.Grow(dst, 4+2*binary.MaxVarintLen32+hdrSize+paramSize+len(cellBlock))
	dst = append(dst, 0, 0, 0, 0)
	dst = protowire.AppendVarint(dst, uint64(hdrSize))
	dst = protowire.AppendVarint(dst, protowire.EncodeTag(1, protowire.VarintType))
	dst = protowire.AppendVarint(dst, uint64(id))
	dst = protowire.AppendVarint(dst, protowire.EncodeTag(3, protowire.BytesType))
	dst = protowire.AppendString(dst, method)
	if param != nil {
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(4, protowire.VarintType))
		dst = protowire.AppendVarint(dst, 1)
	}
	if len(cellBlock) > 0 {
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(5, protowire.BytesType))
		dst = protowire.AppendVarint(dst, uint64(1+protowire.SizeVarint(uint64(len(cellBlock)))))
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(1, protowire.VarintType))
		dst = protowire.AppendVarint(dst, uint64(len(cellBlock)))
	}
	if hasTimeout {
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(7, protowire.VarintType))
		dst = protowire.AppendVarint(dst, uint64(timeout))
	}
	if param != nil {
		dst = protowire.AppendVarint(dst, uint64(paramSize))
		var err error
		if dst, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(dst, param); err != nil {
			return nil, errors.Wrap(err, "ipc: encoding request")
		}
	}
	dst = append(dst, cellBlock...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

func (c *ClientConn) forget(id uint32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}
