package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/internal/hbaseconf"

	"github.com/stretchr/testify/require"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestDispatch checks the command line's top level: every subcommand
// reaches its tool (each tool's package tests the tool itself), a bad
// command line gets the problem and one line pointing to --help (exit 2),
// and --help prints the usage and exits 0 for every command.
func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: regionsrv COMMAND [options]"},
		{[]string{"help"}, 0, "usage: regionsrv COMMAND [options]"},
		{[]string{"--help"}, 0, "usage: regionsrv COMMAND [options]"},
		{[]string{"nosuch"}, 2, "regionsrv: unknown command \"nosuch\"\nRun 'regionsrv help' for the commands.\n"},
		{[]string{"serve", "extra"}, 2, "regionsrv serve: unexpected argument \"extra\"\nRun 'regionsrv serve --help' for usage.\n"},
		{[]string{"serve", "--nosuchflag"}, 2, "regionsrv serve: flag provided but not defined: -nosuchflag\nRun 'regionsrv serve --help' for usage.\n"},
		{[]string{"serve", "--standalone", "--zk", "127.0.0.1:1"}, 2, "regionsrv serve: --standalone starts its own ZooKeeper; do not also give --zk\n"},
		{[]string{"serve", "--no-zookeeper", "--zk", "127.0.0.1:1"}, 2, "regionsrv serve: --no-zookeeper serves without ZooKeeper; do not also give --standalone or --zk\n"},
		{[]string{"serve", "--standalone", "-D", "hbase.zookeeper.quorum=zk1.example.com"}, 2, "regionsrv serve: --standalone starts its own ZooKeeper, but hbase.zookeeper.quorum is zk1.example.com:2181; give --zk to register there instead\n"},
		{[]string{"hfile"}, 2, "regionsrv hfile: want one path, got no arguments\nRun 'regionsrv hfile --help' for usage.\n"},
		{[]string{"wal"}, 2, "regionsrv wal: want one path, got no arguments\nRun 'regionsrv wal --help' for usage.\n"},
		{[]string{"pe"}, 2, "regionsrv pe: want COMMAND NCLIENTS, got no arguments\nRun 'regionsrv pe --help' for usage.\n"},
		{[]string{"bulkload"}, 2, "regionsrv bulkload: want DIR TABLE, got no arguments\nRun 'regionsrv bulkload --help' for usage.\n"},
		{[]string{"bulkload", "-D", "nosuch=1", "dir", "table"}, 2, `regionsrv bulkload: unknown property "nosuch"`},
		{[]string{"export"}, 2, "regionsrv export: --table and --out are required\nRun 'regionsrv export --help' for usage.\n"},
		{[]string{"export", "extra"}, 2, "regionsrv export: unexpected argument \"extra\"\nRun 'regionsrv export --help' for usage.\n"},
	} {
		code, out, errOut := runCmd(c.args...)
		require.Equal(t, c.code, code, "%q: %s", c.args, errOut)
		require.Empty(t, out, "%q", c.args)
		if strings.HasPrefix(c.want, "usage:") {
			require.Contains(t, errOut, c.want, "%q", c.args)
		} else {
			require.True(t, strings.HasPrefix(errOut, c.want), "%q: %s", c.args, errOut)
		}
	}
	for _, cmd := range commands {
		for _, help := range []string{"--help", "-help"} {
			code, out, errOut := runCmd(cmd.name, help)
			require.Equal(t, 0, code, "regionsrv %s %s: %s", cmd.name, help, errOut)
			require.Empty(t, out, cmd.name)
			require.Contains(t, errOut, "usage: regionsrv "+cmd.name, cmd.name)
		}
	}
}

// TestServePrintConfig: --print-config lists every registered property with
// its effective value, in a form --config loads back, and starts nothing.
func TestServePrintConfig(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd("serve", "--print-config", "--data-dir", dir,
		"-D", "hbase.hregion.memstore.flush.size=1048576", "-D", "hfile.block.cache.policy=TinyLFU")
	require.Equal(t, 0, code, errOut)
	for _, p := range hbaseconf.Properties() {
		require.Contains(t, out, "<name>"+p.Name+"</name>")
	}
	require.Contains(t, out, "<value>1048576</value>")
	require.Contains(t, out, "<value>TinyLFU</value>")
	require.Contains(t, out, "<value>"+dir+"</value>")
	site := filepath.Join(t.TempDir(), "hbase-site.xml")
	require.NoError(t, os.WriteFile(site, []byte(out), 0o644))
	code, again, errOut := runCmd("serve", "--print-config", "--config", site, "--data-dir", dir)
	require.Equal(t, 0, code, errOut)
	// Loaded back, every property is set, each to the same value.
	require.Equal(t, strings.ReplaceAll(out, "<source>default</source>", "<source>set</source>"), again)
	require.Equal(t, 2, func() int { c, _, _ := runCmd("serve", "--print-config", "-D", "no.such.property=1"); return c }())
}
