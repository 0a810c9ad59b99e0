package ipc

import (
	"context"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// flakyListener fails its first accepts with errs, in order, then accepts.
type flakyListener struct {
	net.Listener
	errs  []error
	calls atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if i := int(l.calls.Add(1)) - 1; i < len(l.errs) {
		return nil, l.errs[i]
	}
	return l.Listener.Accept()
}

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// TestAcceptRetriesTemporaryErrors: running out of file descriptors (and
// the other temporary accept errors) pauses and retries; the server then
// serves as before.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := &flakyListener{Listener: inner, errs: []error{acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE),
		acceptErr(syscall.ECONNABORTED), acceptErr(syscall.EMFILE)}}
	s := &Server{Handler: newTestHandler(), Logger: discardLogger()}
	served := make(chan error, 1)
	start := time.Now()
	go func() { served <- s.Serve(ln) }()
	cc := dial(t, inner.Addr().String(), DialOptions{})
	var out wrapperspb.BytesValue
	_, err = cc.Call(context.Background(), "Echo", wrapperspb.Bytes([]byte("x")), nil, &out)
	require.NoError(t, err)
	require.Equal(t, []byte("x"), out.Value)
	// 5 + 10 + 20 + 40 ms of backoff before the connection was accepted.
	require.GreaterOrEqual(t, time.Since(start), 75*time.Millisecond)
	require.EqualValues(t, 4, s.Stats().AcceptRetries)
	require.NoError(t, s.Close())
	require.ErrorIs(t, <-served, ErrServerClosed)
}

// TestAcceptFailsForGood: an error that is not temporary ends Serve with
// it, so the owner can abort instead of looking healthy.
func TestAcceptFailsForGood(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer inner.Close()
	ln := &flakyListener{Listener: inner, errs: []error{acceptErr(syscall.EMFILE), acceptErr(syscall.EBADF)}}
	s := &Server{Handler: newTestHandler(), Logger: discardLogger()}
	err = s.Serve(ln)
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrServerClosed))
	require.ErrorIs(t, err, syscall.EBADF)
	require.EqualValues(t, 1, s.Stats().AcceptRetries)
	for _, e := range []error{acceptErr(syscall.EMFILE), acceptErr(syscall.ECONNRESET), acceptErr(syscall.ENOBUFS)} {
		require.True(t, temporaryAcceptError(e), "%v", e)
	}
	for _, e := range []error{acceptErr(syscall.EBADF), acceptErr(syscall.EINVAL), net.ErrClosed} {
		require.False(t, temporaryAcceptError(e), "%v", e)
	}
}
