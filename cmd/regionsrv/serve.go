package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/server"
)

// runServe is `regionsrv serve`: it turns the flags into a server.Config
// and calls server.Run, which stops on SIGTERM or SIGINT.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "an hbase-site.xml to read")
	dataDir := fs.String("data-dir", "", "where to keep data (hbase.rootdir); default /tmp/regionkv-$USER")
	standalone := fs.Bool("standalone", false, "start ZooKeeper as a child process, like HBase's standalone mode")
	zkAddr := fs.String("zk", "", "ZooKeeper quorum to register in (host:port,...)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	printConfig := fs.Bool("print-config", false, "print every configuration property with its effective value (hbase-site.xml format) and exit")
	var defines hbaseconf.Defines
	fs.Var(&defines, "D", "set a configuration property: -D key=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: regionsrv serve [--config hbase-site.xml] [-D k=v ...] [--data-dir DIR] [--standalone] [--zk HOST:PORT] [--print-config]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(hbaseconf.ExpandDefines(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "regionsrv serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "regionsrv serve: --log-level: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	cfg := server.Config{Logger: log}
	if *configPath != "" {
		if err := cfg.LoadSiteXML(*configPath); err != nil {
			fmt.Fprintf(stderr, "regionsrv serve: %v\n", err)
			return 2
		}
	}
	zkPort := server.DefaultZKClientPort
	for _, kv := range defines {
		k, v := kv[0], kv[1]
		if err := cfg.Set(k, v); err != nil {
			fmt.Fprintf(stderr, "regionsrv serve: -D %s=%s: %v\n", k, v, err)
			return 2
		}
		if k == "hbase.zookeeper.property.clientPort" {
			zkPort, _ = strconv.Atoi(v)
		}
	}
	if *dataDir != "" {
		cfg.DataDir = *dataDir
	}
	if cfg.DataDir == "" {
		name := "regionkv"
		if u, err := user.Current(); err == nil {
			name += "-" + u.Username
		}
		cfg.DataDir = filepath.Join(os.TempDir(), name)
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
	if *standalone && cfg.ZKQuorum != "" {
		fmt.Fprintln(stderr, "regionsrv serve: --standalone starts its own ZooKeeper; do not also give --zk")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := server.Run(ctx, cfg, server.RunOptions{Standalone: *standalone, ZKPort: zkPort,
		Serving: func(srv *server.Server, zkQuorum string) {
			fmt.Fprintf(stdout, "regionsrv serving: rpc=%s info=%s zookeeper=%s data=%s\n", srv.Addr(), srv.InfoAddr(), zkQuorum, cfg.DataDir)
		}})
	if err != nil {
		fmt.Fprintf(stderr, "regionsrv serve: %v\n", err)
		return 1
	}
	return 0
}
