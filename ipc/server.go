package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
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
	// IdleTimeout closes connections idle this long (none if 0): with
	// IdleThreshold 0, any connection whose next request does not arrive
	// in time; otherwise, as HBase's hbase.ipc.client.idlethreshold, only
	// while more than IdleThreshold connections are open, the ones with
	// nothing in flight that have been quiet this long.
	IdleTimeout   time.Duration
	IdleThreshold int
	// MaxQueueBytes bounds the bytes of requests being read or served,
	// over every connection (hbase.ipc.server.max.callqueue.size;
	// DefaultMaxQueueBytes if 0). A request that would pass it is read
	// into nothing and answered with CallQueueTooBigException, so peers
	// announcing large requests and sending them slowly cannot hold the
	// server's memory.
	MaxQueueBytes int64
	// MaxConnections bounds the open connections (none if 0); one accepted
	// beyond it is closed at once.
	MaxConnections int
	// WriteTimeout bounds each response write (none if 0): a peer that
	// stops reading its answers loses its connection instead of holding
	// the connection's write lock, and the calls queued behind it, forever.
	WriteTimeout time.Duration
	Logger       *slog.Logger

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
	// acceptRetries counts temporary accept errors.
	acceptRetries atomic.Int64
	// queuedBytes are the bytes of requests being read or served;
	// queueRejected counts requests refused for it; connsRefused the
	// connections closed over MaxConnections; idleClosed those closed
	// idle.
	queuedBytes   atomic.Int64
	queueRejected atomic.Int64
	connsRefused  atomic.Int64
	idleClosed    atomic.Int64
	openConns     atomic.Int64
	reaperOnce    sync.Once
}

// DefaultMaxQueueBytes is hbase.ipc.server.max.callqueue.size's default.
const DefaultMaxQueueBytes = 1 << 30

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("ipc: server closed")

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Serve accepts connections on ln until Shutdown or Close, serving each in
// its own goroutines. Temporary accept errors (a timeout, too many open
// files, a connection aborted before it was accepted) are logged and
// retried after a pause that doubles from 5 ms to 1 s, as net/http does;
// any other error ends Serve, and the caller should treat the server as
// failed rather than leave it looking healthy.
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
			if temporaryAcceptError(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.acceptRetries.Add(1)
				s.logger().Warn("ipc: accept failed; retrying", "err", err, "in", delay)
				time.Sleep(delay)
				continue
			}
			return errors.Wrap(err, "ipc: accept")
		}
		delay = 0
		if s.MaxConnections > 0 && s.openConns.Load() >= int64(s.MaxConnections) {
			s.connsRefused.Add(1)
			s.logger().Warn("ipc: refusing connection: too many open", "remote", nc.RemoteAddr().String(), "max", s.MaxConnections)
			nc.Close()
			continue
		}
		c := &serverConn{s: s, nc: nc, w: bufio.NewWriterSize(nc, 64<<10)}
		c.touch()
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.openConns.Add(1)
		s.conns[c] = struct{}{}
		s.connWG.Add(1)
		s.mu.Unlock()
		s.connsOpened.Add(1)
		go c.serve()
	}
}

// temporaryAcceptError reports whether an Accept error may clear by itself:
// the process or the system is out of file descriptors or buffers, or a
// client went away before its connection was accepted.
func temporaryAcceptError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

func (s *Server) initLocked() {
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
		s.workers.work = make(chan func())
		s.conns = map[*serverConn]struct{}{}
		s.baseCtx, s.cancel = context.WithCancel(context.Background())
	}
	if s.IdleTimeout > 0 && s.IdleThreshold > 0 {
		s.reaperOnce.Do(func() { go s.reapIdle() })
	}
}

// reapIdle closes quiet connections while more than IdleThreshold are
// open, as HBase's connection manager does.
func (s *Server) reapIdle() {
	t := time.NewTicker(max(s.IdleTimeout/4, 10*time.Millisecond))
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return
		}
		var idle []*serverConn
		if len(s.conns) > s.IdleThreshold {
			cutoff := time.Now().Add(-s.IdleTimeout).UnixNano()
			for c := range s.conns {
				if c.calls.Load() == 0 && c.lastActive.Load() < cutoff {
					idle = append(idle, c)
				}
			}
		}
		s.mu.Unlock()
		for _, c := range idle {
			s.idleClosed.Add(1)
			c.log.Info("ipc: closing idle connection", "open", s.openConns.Load(), "threshold", s.IdleThreshold)
			c.nc.Close()
		}
	}
}

// Stats are the server's counters.
type Stats struct {
	OpenConnections int
	ConnsOpened     int64
	CallsServed     int64
	CallsInFlight   int64
	BadFrames       int64
	// AcceptRetries counts accept errors retried (out of file
	// descriptors, say).
	AcceptRetries int64
	// QueuedBytes are the bytes of requests being read or served;
	// QueueRejected counts the requests answered CallQueueTooBigException.
	QueuedBytes   int64
	QueueRejected int64
	// ConnsRefused counts connections closed over MaxConnections,
	// IdleClosed those closed idle.
	ConnsRefused int64
	IdleClosed   int64
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	return Stats{OpenConnections: n, ConnsOpened: s.connsOpened.Load(), CallsServed: s.callsServed.Load(),
		CallsInFlight: s.callsInFlite.Load(), BadFrames: s.badFrames.Load(), AcceptRetries: s.acceptRetries.Load(),
		QueuedBytes: s.queuedBytes.Load(), QueueRejected: s.queueRejected.Load(), ConnsRefused: s.connsRefused.Load(),
		IdleClosed: s.idleClosed.Load()}
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
	// lastActive is when a request was last read or a response written
	// (unix nanoseconds); calls counts the calls in flight. The idle
	// reaper reads both.
	lastActive atomic.Int64
	calls      atomic.Int32
}

func (c *serverConn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

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
		s.openConns.Add(-1)
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
	maxQueue := s.MaxQueueBytes
	if maxQueue <= 0 {
		maxQueue = DefaultMaxQueueBytes
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
		reserved, err := c.admit(br, maxReq, maxQueue)
		if err == nil && reserved < 0 {
			continue // refused and answered: the call queue is full
		}
		st := getCallState(c)
		st.reserved = max(reserved, 0)
		var frame []byte
		var n uint32
		if err == nil {
			frame, n, err = ReadFrame(br, maxReq, st.frame[:0])
			st.frame = frame
			c.touch()
		}
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
				// Log before release: st (and req in it) may be reused at once.
				s.badFrames.Add(1)
				log.Warn("ipc: closing connection: bad cellblock", "reason", err, "call", req.Header.GetCallId())
				st.release()
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

// admit peeks at the length of the next request and reserves its bytes in
// the server's call queue budget. It returns the bytes reserved (0 for a
// request over the size limit, which ReadFrame refuses), or -1 when the
// budget is spent: the request has then been read into nothing and
// answered with CallQueueTooBigException, and the connection goes on.
func (c *serverConn) admit(br *bufio.Reader, maxReq int, maxQueue int64) (int64, error) {
	l, err := br.Peek(4)
	if err != nil {
		if len(l) > 0 && errors.Is(err, io.EOF) {
			// Part of a length, then the end: a truncated frame, not a
			// clean close between frames.
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(l))
	if n > int64(maxReq) {
		return 0, nil
	}
	s := c.s
	if s.queuedBytes.Add(n) <= maxQueue {
		return n, nil
	}
	s.queuedBytes.Add(-n)
	s.queueRejected.Add(1)
	if _, err := br.Discard(4); err != nil {
		return 0, err
	}
	// The call id is in the request header at the frame's start; the rest
	// is skipped through the reader's buffer, never held.
	var prefix [4096]byte
	p := prefix[:min(int(n), len(prefix))]
	if _, err := io.ReadFull(br, p); err != nil {
		return 0, err
	}
	if _, err := br.Discard(int(n) - len(p)); err != nil {
		return 0, err
	}
	c.touch()
	if id, ok := peekCallID(p); ok {
		c.writeResponse(nil, id, Reply{}, &Exception{Class: ClassCallQueueTooBigException,
			Message: fmt.Sprintf("call queue is full: %d bytes queued, limit %d (hbase.ipc.server.max.callqueue.size); request of %d bytes refused",
				s.queuedBytes.Load(), maxQueue, n)})
	}
	return -1, nil
}

// callState is the memory of one call, pooled so that a call allocates
// none of it: the request frame (which the Call's Param and CellBlock
// alias), the decoded request, the Call, and the response being encoded.
type callState struct {
	c *serverConn
	// reserved is this call's share of the server's call queue budget,
	// given back on release.
	reserved int64
	frame    []byte
	cells    []byte // the decompressed request cellblock
	req      Request
	call     Call
	out      []byte // the encoded response
	cb       []byte // the compressed response cellblock
	runFn    func() // st.run, bound once: a method value per call would allocate
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
	c.calls.Add(1)
	return st
}

func (st *callState) release() {
	if st.reserved > 0 {
		st.c.s.queuedBytes.Add(-st.reserved)
		st.reserved = 0
	}
	st.c.calls.Add(-1)
	st.c.touch()
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
	if d := c.s.IdleTimeout; d > 0 && c.s.IdleThreshold == 0 {
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
	if d := c.s.WriteTimeout; d > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(d))
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
