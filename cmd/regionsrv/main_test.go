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
// reaches its tool (each tool's package tests the tool itself), and bad or
// missing commands exit 2 with the usage.
func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args  []string
		code  int
		usage string
	}{
		{nil, 2, "usage: regionsrv COMMAND [options]"},
		{[]string{"help"}, 0, "usage: regionsrv COMMAND [options]"},
		{[]string{"--help"}, 0, "usage: regionsrv COMMAND [options]"},
		{[]string{"nosuch"}, 2, "usage: regionsrv COMMAND [options]"},
		{[]string{"serve", "extra"}, 2, `regionsrv serve: unexpected argument "extra"`},
		{[]string{"serve", "--help"}, 0, "usage: regionsrv serve [--config hbase-site.xml]"},
		{[]string{"hfile"}, 2, "usage: regionsrv hfile [-p] [-m] [-s] [-b] [-h] [-k] [-e] FILE"},
		{[]string{"hfile", "--help"}, 2, "usage: regionsrv hfile"},
		{[]string{"wal"}, 2, "usage: regionsrv wal [-p] FILE|DIR"},
		{[]string{"pe"}, 2, "usage: regionsrv pe [options] COMMAND NCLIENTS"},
		{[]string{"pe", "--help"}, 0, "usage: regionsrv pe [options] COMMAND NCLIENTS"},
		{[]string{"export"}, 2, "usage: regionsrv export [--zk HOST:PORT | --dir DATA_DIR] --table T --out DIR"},
		{[]string{"export", "--help"}, 0, "usage: regionsrv export"},
		{[]string{"bulkload"}, 2, "usage: regionsrv bulkload [--zk HOST:PORT]"},
		{[]string{"bulkload", "-D", "nosuch=1", "dir", "table"}, 2, `unknown property "nosuch"`},
	} {
		code, out, errOut := runCmd(c.args...)
		require.Equal(t, c.code, code, "%q: %s", c.args, errOut)
		require.Empty(t, out, "%q", c.args)
		require.Contains(t, errOut, c.usage, "%q", c.args)
	}
	code, _, errOut := runCmd("serve", "--standalone", "--zk", "127.0.0.1:1", "--data-dir", t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "regionsrv serve: --standalone starts its own ZooKeeper; do not also give --zk")
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
