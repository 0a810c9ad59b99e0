package ipc

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Call is one request as a Handler sees it. The Call and the bytes it
// points to are reused for a later request once the response is written: a
// handler must not keep them beyond that.
type Call struct {
	// Service is the connection's service_name (ClientService,
	// MasterService, ...), Method the request's method_name.
	Service, Method string
	Header          *hbasepb.RequestHeader
	// Param is the request message, still encoded.
	Param []byte
	// CellBlock is the request's cellblock, decompressed.
	CellBlock []byte
	// Codec is the connection's cellblock codec, for the response.
	Codec Codec
	// User is the connection's effective user.
	User string
	// RemoteAddr is the client's address.
	RemoteAddr string
}

// Reply is a Handler's answer: a message and an optional cellblock
// (uncompressed; the server compresses it as the connection asks).
type Reply struct {
	Msg       proto.Message
	CellBlock []byte
	// Release, if not nil, is called once the response is encoded (or
	// dropped): from then on the handler may reuse the memory Msg and
	// CellBlock point into, so that a call need not allocate its answer.
	Release Releaser
}

// Releaser takes back memory lent to the server for one response.
type Releaser interface{ Release() }

// Handler serves calls. It is called from many goroutines at once. An error
// becomes an exception response (see ToException); the connection stays up.
// The context passed to ServeCall is cancelled when the server is closed
// (by Close, or by Shutdown once its context ends).
type Handler interface {
	ServeCall(ctx context.Context, c *Call) (Reply, error)
	// Services reports whether the service_name in a connection header is
	// one the handler serves.
	Serves(service string) bool
}

// Server serves HBase RPC connections. Set its fields before Serve.
type Server struct {
	Handler Handler
	// MaxRequestSize is hbase.ipc.max.request.size (DefaultMaxRequestSize
	// if 0): a larger request is answered with RequestTooBigException and
	// its connection closed.
	MaxRequestSize int
	// MaxCallsPerConn bounds the calls one connection has in flight; a
	// connection that has more is not read until some finish (64 if 0).
	MaxCallsPerConn int
	// IdleTimeout closes connections idle this long (none if 0).
	IdleTimeout time.Duration
	Logger      *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	closing   bool
	calls     sync.WaitGroup // calls in flight, for Shutdown; Add only under mu while !closing
	workers   workerPool
	connWG    sync.WaitGroup
	baseCtx   context.Context // handlers' context, cancelled by Close
	cancel    context.CancelFunc

	// Metrics.
	connsOpened  atomic.Int64
	callsServed  atomic.Int64
	badFrames    atomic.Int64
	callsInFlite atomic.Int64
}

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("ipc: server closed")

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Serve accepts connections on ln until Shutdown or Close, serving each in
// its own goroutines.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.initLocked()
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return errors.Wrap(err, "ipc: accept")
		}
		delay = 0
		c := &serverConn{s: s, nc: nc, w: bufio.NewWriterSize(nc, 64<<10)}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.connWG.Add(1)
		s.mu.Unlock()
		s.connsOpened.Add(1)
		go c.serve()
	}
}

func (s *Server) initLocked() {
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
		s.workers.work = make(chan func())
		s.conns = map[*serverConn]struct{}{}
		s.baseCtx, s.cancel = context.WithCancel(context.Background())
	}
}

// Stats are the server's counters.
type Stats struct {
	OpenConnections int
	ConnsOpened     int64
	CallsServed     int64
	CallsInFlight   int64
	BadFrames       int64
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	return Stats{OpenConnections: n, ConnsOpened: s.connsOpened.Load(), CallsServed: s.callsServed.Load(),
		CallsInFlight: s.callsInFlite.Load(), BadFrames: s.badFrames.Load()}
}

// Shutdown stops accepting connections and reading new calls, waits for the
// calls in flight to finish and their responses to be written (or ctx to
// end), then closes every connection.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.stopReading()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.calls.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Close()
	return err
}

// Close closes the listeners and every connection at once, cancels the
// handlers' context and waits for the connections' goroutines (and so for
// the handlers) to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true
	if s.cancel != nil {
		s.cancel()
	}
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.connWG.Wait()
	return nil
}

type serverConn struct {
	s      *Server
	nc     net.Conn
	log    *slog.Logger
	remote string // nc.RemoteAddr().String(), once rather than per call
	header *hbasepb.ConnectionHeader
	codec  Codec
	user   string

	inFlight sync.WaitGroup // this connection's calls being served
	sem      chan struct{}  // bounds them to MaxCallsPerConn
	// methods interns the method names of this connection's requests
	// (read by its read loop only).
	methods methodNames

	wmu    sync.Mutex // serializes response writes
	w      *bufio.Writer
	broken bool         // a write failed; guarded by wmu
	queued atomic.Int32 // responses waiting for wmu or holding it

	stopped atomic.Bool
}

// stopReading makes the read loop stop at its next read, leaving calls in
// flight to finish and write their responses.
func (c *serverConn) stopReading() {
	c.stopped.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

func (c *serverConn) serve() {
	s := c.s
	c.remote = c.nc.RemoteAddr().String()
	c.log = s.logger().With("remote", c.remote)
	log := c.log
	defer func() {
		c.inFlight.Wait()
		c.nc.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.connWG.Done()
	}()
	maxReq := s.MaxRequestSize
	if maxReq <= 0 {
		maxReq = DefaultMaxRequestSize
	}
	maxCalls := s.MaxCallsPerConn
	if maxCalls <= 0 {
		maxCalls = 64
	}
	br := bufio.NewReaderSize(c.nc, 64<<10)
	c.setDeadline()
	if _, err := ReadPreamble(br); err != nil {
		if errors.Is(err, ErrBadPreamble) {
			// HBase answers a bad preamble with a FatalConnectionException
			// for call -1 before closing; Java clients look for it.
			s.badFrames.Add(1)
			log.Warn("ipc: closing connection", "reason", err)
			c.writeResponse(nil, ^uint32(0), Reply{}, &Exception{Class: ClassFatalConnectionException, Message: err.Error()})
		}
		return
	}
	h, err := ReadConnectionHeader(br)
	if err != nil {
		s.badFrames.Add(1)
		log.Warn("ipc: closing connection", "reason", err)
		return
	}
	if !s.Handler.Serves(h.GetServiceName()) {
		s.badFrames.Add(1)
		err := errors.Newf("ipc: unknown service %q", h.GetServiceName())
		log.Warn("ipc: closing connection", "reason", err)
		c.writeResponse(nil, ^uint32(0), Reply{}, &Exception{Class: ClassUnknownProtocolException, Message: err.Error()})
		return
	}
	if c.codec, err = CodecFor(h.GetCellBlockCodecClass(), h.GetCellBlockCompressorClass()); err != nil {
		s.badFrames.Add(1)
		log.Warn("ipc: closing connection", "reason", err)
		c.writeResponse(nil, ^uint32(0), Reply{}, &Exception{Class: ClassFatalConnectionException, Message: err.Error()})
		return
	}
	c.header = h
	c.user = h.GetUserInfo().GetEffectiveUser()
	c.sem = make(chan struct{}, maxCalls)
	for {
		if c.stopped.Load() {
			return
		}
		c.setDeadline()
		st := getCallState(c)
		frame, n, err := ReadFrame(br, maxReq, st.frame[:0])
		st.frame = frame
		if err != nil {
			st.release()
			switch {
			case c.stopped.Load() || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
			case errors.Is(err, ErrFrameTooBig):
				s.badFrames.Add(1)
				log.Warn("ipc: closing connection", "reason", err)
				// Read what we can of the header to answer the call, but
				// do not wait long for a client that sent only a length.
				c.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
				prefix := make([]byte, min(int(n), 4096))
				if _, rerr := io.ReadFull(br, prefix); rerr == nil {
					if id, ok := peekCallID(prefix); ok {
						c.inFlight.Wait()
						c.writeResponse(nil, id, Reply{}, &Exception{Class: ClassRequestTooBigException,
							Message: errors.Wrapf(err, "request of %d bytes", n).Error()})
					}
				}
			default:
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					log.Info("ipc: closing idle connection")
				} else {
					s.badFrames.Add(1)
					log.Warn("ipc: closing connection", "reason", err)
				}
			}
			return
		}
		req := &st.req
		if err := parseRequest(frame, req, &c.methods); err != nil {
			st.release()
			s.badFrames.Add(1)
			log.Warn("ipc: closing connection: malformed request", "reason", err)
			return
		}
		cells := req.CellBlock
		if len(cells) > 0 && c.codec.Snappy {
			if cells, err = c.codec.Decompress(st.cells[:0], cells, maxReq); err != nil {
				st.release()
				s.badFrames.Add(1)
				log.Warn("ipc: closing connection: bad cellblock", "reason", err, "call", req.Header.GetCallId())
				return
			}
			st.cells = cells
		}
		st.call = Call{
			Service: h.GetServiceName(), Method: req.Header.GetMethodName(), Header: &req.Header,
			Param: req.Param, CellBlock: cells, Codec: c.codec, User: c.user, RemoteAddr: c.remote,
		}
		c.sem <- struct{}{}
		// Shutdown waits on s.calls once it has set closing: a call read
		// after that is dropped (the connection is about to close) rather
		// than Added concurrently with that Wait.
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			st.release()
			return
		}
		s.calls.Add(1)
		s.mu.Unlock()
		c.inFlight.Add(1)
		s.callsInFlite.Add(1)
		s.workers.run(st.runFn)
	}
}

// callState is the memory of one call, pooled so that a call allocates
// none of it: the request frame (which the Call's Param and CellBlock
// alias), the decoded request, the Call, and the response being encoded.
type callState struct {
	c     *serverConn
	frame []byte
	cells []byte // the decompressed request cellblock
	req   Request
	call  Call
	out   []byte // the encoded response
	cb    []byte // the compressed response cellblock
	runFn func() // st.run, bound once: a method value per call would allocate
}

var callStates sync.Pool

// init sets the pool's New, which refers to the pool through st.run.
func init() {
	callStates.New = func() any {
		st := &callState{}
		st.runFn = st.run
		return st
	}
}

// maxPooledBuf bounds the buffers a released callState keeps: one huge call
// must not pin its memory in the pool.
const maxPooledBuf = 256 << 10

func getCallState(c *serverConn) *callState {
	st := callStates.Get().(*callState)
	st.c = c
	return st
}

func (st *callState) release() {
	st.c = nil
	st.call = Call{}
	st.req.Param, st.req.CellBlock = nil, nil
	for _, b := range []*[]byte{&st.frame, &st.cells, &st.out, &st.cb} {
		if cap(*b) > maxPooledBuf {
			*b = nil
		}
	}
	callStates.Put(st)
}

// run serves the call on a worker.
func (st *callState) run() {
	c := st.c
	s := c.s
	c.handle(st)
	st.release()
	s.callsInFlite.Add(-1)
	s.calls.Done()
	c.inFlight.Done()
	<-c.sem
}

// workerPool runs calls on goroutines that outlive one call. A fresh
// goroutine per call would start on a small stack and grow it, copying it,
// on every call that reaches the region (a third of a Get's server CPU
// was stack growth); a worker keeps its grown stack. Idle workers exit
// after workerIdle, so an idle server holds none.
type workerPool struct {
	work chan func() // unbuffered: a send succeeds only to an idle worker
}

var workerIdle = 2 * time.Second // a variable so tests can shorten it

func (p *workerPool) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

func (p *workerPool) worker(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(workerIdle)
		select {
		case f = <-p.work:
		case <-t.C:
			return
		}
	}
}

func (c *serverConn) setDeadline() {
	if c.stopped.Load() {
		return
	}
	if d := c.s.IdleTimeout; d > 0 {
		c.nc.SetReadDeadline(time.Now().Add(d))
		// stopReading may have run between the check above and this
		// deadline, which would have undone its own.
		if c.stopped.Load() {
			c.nc.SetReadDeadline(time.Now())
		}
	}
}

func (c *serverConn) handle(st *callState) {
	call := &st.call
	defer func() {
		if r := recover(); r != nil {
			// A handler bug must not take the server down: answer and log.
			err := errors.AssertionFailedf("ipc: panic serving %s: %v", call.Method, r)
			c.log.Error("ipc: handler panic", "method", call.Method, "panic", r, "err", errors.WithStack(err))
			c.writeResponse(st, call.Header.GetCallId(), Reply{}, &Exception{Class: ClassDoNotRetryIOException, Message: err.Error()})
		}
	}()
	reply, err := c.s.Handler.ServeCall(c.s.baseCtx, call)
	c.s.callsServed.Add(1)
	var exc *Exception
	if err != nil {
		exc = ToException(err)
	}
	c.writeResponse(st, call.Header.GetCallId(), reply, exc)
}

// writeResponse encodes and sends a response, in st's buffers if st is not
// nil, and then releases the reply's memory.
func (c *serverConn) writeResponse(st *callState, callID uint32, r Reply, exc *Exception) {
	if r.Release != nil {
		defer r.Release.Release()
	}
	var out, cbuf []byte
	if st != nil {
		out, cbuf = st.out[:0], st.cb[:0]
	}
	cb := r.CellBlock
	if len(cb) > 0 && c.codec.Snappy && exc == nil {
		cb = c.codec.Compress(cbuf, cb)
		cbuf = cb
	}
	buf, err := AppendResponse(out, callID, r.Msg, cb, exc)
	if err != nil {
		// A response we cannot encode (a required field unset) is a bug;
		// tell the client rather than hang it.
		c.s.logger().Error("ipc: encoding response", "call", callID, "err", err)
		buf, _ = AppendResponse(out[:0], callID, nil, nil, &Exception{Class: ClassDoNotRetryIOException, Message: err.Error()})
	}
	if st != nil {
		st.out, st.cb = buf, cbuf
	}
	// Responses finished together go out in one write: a writer leaves the
	// flush to one queued behind it, and the last one flushes.
	c.queued.Add(1)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	last := c.queued.Add(-1) == 0
	if c.broken {
		return
	}
	_, err = c.w.Write(buf)
	if err == nil && last {
		err = c.w.Flush()
	}
	if err != nil {
		// The peer cannot get this or any later answer: stop reading its
		// requests too.
		c.broken = true
		c.nc.Close()
	}
}
