package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/server"
)

const serveSynopsis = "[--config hbase-site.xml] [-D k=v ...] [--data-dir DIR] [--standalone | --zk HOST:PORT | --no-zookeeper] [--print-config]"

// runServe is `regionsrv serve`: it turns the flags into a server.Config
// and calls server.Run, which stops on SIGTERM or SIGINT.
//
// Without a ZooKeeper quorum (--zk, hbase.zookeeper.quorum) it runs
// standalone, starting ZooKeeper as a child process, as `hbase master
// start` does in HBase's default (local) mode; --standalone asks for that
// explicitly, and --no-zookeeper serves without ZooKeeper at all (for
// clients that find the server through HBase's RPC connection registry).
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configPath := fs.String("config", "", "an hbase-site.xml to read")
	dataDir := fs.String("data-dir", "", "where to keep data (hbase.rootdir); default "+defaultDataDir())
	standalone := fs.Bool("standalone", false, "start ZooKeeper as a child process, like HBase's standalone mode (what serve does when no quorum is given)")
	zkAddr := fs.String("zk", "", "ZooKeeper quorum to register in (host:port,...), instead of starting one")
	noZK := fs.Bool("no-zookeeper", false, "serve without ZooKeeper: clients find the server through HBase's RPC connection registry (hbase.client.bootstrap.servers=HOST:PORT)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	printConfig := fs.Bool("print-config", false, "print every configuration property with its effective value (hbase-site.xml format) and exit")
	var defines hbaseconf.Defines
	fs.Var(&defines, "D", "set a configuration property: -D key=value (repeatable)")
	usage := func() {
		fmt.Fprintln(stderr, "usage: regionsrv serve "+serveSynopsis)
		fmt.Fprintln(stderr, "Runs the region server (also its own master). Without --zk or hbase.zookeeper.quorum it runs")
		fmt.Fprintln(stderr, "standalone: ZooKeeper as a child process on hbase.zookeeper.property.clientPort (2181).")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
	}
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	bad := func(format string, a ...any) int { return usageError(stderr, "serve", format, a...) }
	if err := fs.Parse(hbaseconf.ExpandDefines(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return 0
		}
		return bad("%v", err)
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return bad("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	cfg := server.Config{Logger: log}
	// The file and -D go through the same Set: a property means the same
	// wherever it is given (-D after the file, so -D wins).
	if *configPath != "" {
		if err := cfg.LoadSiteXML(*configPath); err != nil {
			fmt.Fprintf(stderr, "regionsrv serve: %v\n", err)
			return 2
		}
	}
	for _, kv := range defines {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			fmt.Fprintf(stderr, "regionsrv serve: -D %s=%s: %v\n", kv[0], kv[1], err)
			return 2
		}
	}
	if *dataDir != "" {
		cfg.DataDir = *dataDir
	}
	if cfg.DataDir == "" {
		cfg.DataDir = defaultDataDir()
	}
	if *zkAddr != "" {
		cfg.ZKQuorum = *zkAddr
	}
	if *printConfig {
		// The flags that stand for properties show as those properties.
		_ = cfg.Set("hbase.rootdir", cfg.DataDir)
		if *zkAddr != "" {
			_ = cfg.Set("hbase.zookeeper.quorum", *zkAddr)
		}
		if err := cfg.WriteConfigXML(stdout); err != nil {
			fmt.Fprintf(stderr, "regionsrv serve: %v\n", err)
			return 1
		}
		return 0
	}
	quorum := cfg.Quorum()
	switch {
	case *noZK && (*standalone || *zkAddr != ""):
		return bad("--no-zookeeper serves without ZooKeeper; do not also give --standalone or --zk")
	case *standalone && *zkAddr != "":
		return bad("--standalone starts its own ZooKeeper; do not also give --zk")
	case *noZK:
		cfg.ZKQuorum = ""
		if quorum != "" {
			fmt.Fprintf(stderr, "regionsrv serve: --no-zookeeper: not registering in the configured quorum %s\n", quorum)
		}
		cfg = withoutQuorum(cfg)
	case *standalone && quorum != "" && !localQuorum(quorum):
		return bad("--standalone starts its own ZooKeeper, but hbase.zookeeper.quorum is %s; give --zk to register there instead", quorum)
	case *standalone:
		cfg = withoutQuorum(cfg)
	case quorum == "":
		// HBase's default: `hbase master start` with
		// hbase.cluster.distributed false starts its own ZooKeeper.
		*standalone = true
		fmt.Fprintf(stderr, "regionsrv serve: no ZooKeeper quorum given (--zk or hbase.zookeeper.quorum): running standalone, "+
			"with ZooKeeper as a child process on 127.0.0.1:%d (--no-zookeeper serves without one)\n", cfg.ZooKeeperClientPort())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := server.Run(ctx, cfg, server.RunOptions{Standalone: *standalone, ZKPort: cfg.ZooKeeperClientPort(),
		Serving: func(srv *server.Server, zkQuorum string) {
			fmt.Fprintf(stdout, "regionsrv serving: rpc=%s info=%s zookeeper=%s data=%s\n", srv.Addr(), srv.InfoAddr(), zkQuorum, cfg.DataDir)
		}})
	if err != nil {
		fmt.Fprintf(stderr, "regionsrv serve: %v\n", err)
		return 1
	}
	return 0
}

// defaultDataDir is where serve keeps its data without --data-dir or
// hbase.rootdir: /tmp/regionkv-$USER, as HBase's standalone default is
// under /tmp/hbase-$USER.
func defaultDataDir() string {
	name := "regionkv"
	if u, err := user.Current(); err == nil {
		name += "-" + u.Username
	}
	return filepath.Join(os.TempDir(), name)
}

// withoutQuorum drops a configured quorum (the standalone server registers
// in its own ZooKeeper, or in none).
func withoutQuorum(cfg server.Config) server.Config {
	_ = cfg.Set("hbase.zookeeper.quorum", "")
	cfg.ZKQuorum = ""
	return cfg
}

// localQuorum reports whether every host of quorum is this machine's
// loopback, as the hbase.zookeeper.quorum of a standalone HBase is
// (localhost, its default).
func localQuorum(quorum string) bool {
	for _, h := range strings.Split(quorum, ",") {
		host, _, err := net.SplitHostPort(strings.TrimSpace(h))
		if err != nil {
			host = strings.TrimSpace(h)
		}
		if host != "localhost" && !net.ParseIP(host).IsLoopback() {
			return false
		}
	}
	return true
}

// usageError reports a bad command line, "regionsrv NAME: problem" and a
// line pointing to --help, and returns 2 (the tools under tool/ do the same
// through tool/internal/cli).
func usageError(stderr io.Writer, name, format string, a ...any) int {
	fmt.Fprintf(stderr, "regionsrv %s: %s\n", name, fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "Run 'regionsrv %s --help' for usage.\n", name)
	return 2
}
