package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/zkserver"
)

// RunOptions are how Run runs a server, beyond its Config.
type RunOptions struct {
	// Standalone starts ZooKeeper as a child process first, as HBase's
	// standalone mode does: its data under Config.DataDir/zookeeper, its
	// client port ZKPort (0: a free one). The server registers in it, so
	// Config.ZKQuorum must be empty.
	Standalone bool
	ZKPort     int
	// Serving, if set, is called once the server serves, with the quorum
	// it registered in ("" for none): `regionsrv serve` prints its
	// "regionsrv serving:" line there, which scripts and tests wait for.
	Serving func(srv *Server, zkQuorum string)
}

// runShutdownTimeout bounds the graceful shutdown at the end of Run: calls
// in flight get this long to finish.
const runShutdownTimeout = 30 * time.Second

// Run is the server's life as a process (`regionsrv serve`): it starts
// ZooKeeper if opts.Standalone, then the server, and serves until ctx is
// done or the child ZooKeeper exits; then it shuts the server down
// gracefully (Shutdown) and stops ZooKeeper. It returns an error if either
// fails to start, if the server fails while serving (Fatal), or if the
// shutdown fails.
func Run(ctx context.Context, cfg Config, opts RunOptions) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	var zks *zkserver.Server
	if opts.Standalone {
		if cfg.ZKQuorum != "" {
			return errors.Newf("server: standalone mode starts its own ZooKeeper, but the quorum %s is configured", cfg.ZKQuorum)
		}
		var err error
		zks, err = zkserver.Start(ctx, zkserver.Config{Dir: filepath.Join(cfg.DataDir, "zookeeper"), Port: opts.ZKPort, Logger: log})
		if err != nil {
			return errors.Wrap(err, "starting ZooKeeper")
		}
		defer func() {
			if err := zks.Stop(); err != nil {
				log.Error("stopping ZooKeeper", "err", err)
			}
		}()
		cfg.ZKQuorum = zks.Addr()
		log.Info("ZooKeeper started", "addr", zks.Addr(), "pid", zks.Pid(), "log", zks.LogPath())
	}
	srv, err := Start(cfg)
	if err != nil {
		return err
	}
	if opts.Serving != nil {
		opts.Serving(srv, cfg.ZKQuorum)
	}
	var zkDied <-chan struct{}
	if zks != nil {
		zkDied = zks.Done()
	}
	var fatal error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case <-zkDied:
		log.Error("ZooKeeper child process exited; shutting down", "err", zks.Wait())
	case fatal = <-srv.Fatal():
		// Abort rather than stay registered answering nothing: the
		// shutdown deregisters from ZooKeeper, and the error makes the
		// process exit non-zero.
		log.Error("aborting", "err", fatal)
	}
	sctx, cancel := context.WithTimeout(context.Background(), runShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if fatal != nil {
		return errors.CombineErrors(fatal, err)
	}
	return err
}
