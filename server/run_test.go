package server

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRun: Run serves until its context is done, says when it serves, and
// then shuts down, releasing the port and the data directory.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Port: FreePort, InfoPort: -1, Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		quorum  string
		dialErr error
		served  bool
	)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, RunOptions{Serving: func(srv *Server, zkQuorum string) {
			served, quorum = true, zkQuorum
			var c net.Conn
			if c, dialErr = net.Dial("tcp", srv.Addr()); dialErr == nil {
				c.Close()
			}
			cancel()
		}})
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its context was cancelled")
	}
	require.True(t, served)
	require.NoError(t, dialErr, "Serving was called before the server listened")
	require.Empty(t, quorum)
	// The data directory is unlocked again: a second server can open it.
	s, err := Start(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))

	// Standalone mode brings its own ZooKeeper: a configured quorum is a mistake.
	cfg.ZKQuorum = "127.0.0.1:2181"
	err = Run(context.Background(), cfg, RunOptions{Standalone: true})
	require.ErrorContains(t, err, "standalone mode starts its own ZooKeeper")
}

// TestRunAbortsWhenListenerFails: an RPC listener that fails for good (here
// closed under the server) makes Run shut the server down and return the
// error, so the process exits non-zero instead of staying up answering
// nothing; the data directory is released.
func TestRunAbortsWhenListenerFails(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Port: FreePort, InfoPort: -1, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), cfg, RunOptions{Serving: func(srv *Server, _ string) {
			srv.ln.Close() // Accept now fails with net.ErrClosed, not temporary
		}})
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "RPC listener failed")
	case <-time.After(time.Minute):
		t.Fatal("Run did not abort after its listener failed")
	}
	s, err := Start(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
}
