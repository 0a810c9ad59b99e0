package shell

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary run the shell itself (for the
// pseudo-terminal test) instead of the tests.
const childEnv = "REGIONKV_SHELL_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(Main(context.Background(), strings.Fields(os.Getenv(childEnv)), os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	cluster.stop()
	os.Exit(code)
}

// testCluster is one ZooKeeper and one server for all the tests of the
// package, started by the first test that needs it.
type testCluster struct {
	once sync.Once
	zk   *zkserver.Server
	srv  *server.Server
	err  error
	dir  string
}

var cluster testCluster

func (c *testCluster) stop() {
	if c.srv != nil {
		c.srv.Shutdown(context.Background())
	}
	if c.zk != nil {
		c.zk.Stop()
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}

// zkAddr returns the quorum of the package's live server.
func zkAddr(t *testing.T) string {
	t.Helper()
	cluster.once.Do(func() {
		cluster.dir, cluster.err = os.MkdirTemp("", "shell-test")
		if cluster.err != nil {
			return
		}
		cluster.zk, cluster.err = zkserver.Start(context.Background(), zkserver.Config{Dir: filepath.Join(cluster.dir, "zk")})
		if cluster.err != nil {
			return
		}
		cluster.srv, cluster.err = server.Start(server.Config{DataDir: filepath.Join(cluster.dir, "data"), Port: server.FreePort,
			InfoPort: -1, ZKQuorum: cluster.zk.Addr(), Logger: slog.New(slog.DiscardHandler)})
	})
	if cluster.err != nil {
		if cluster.zk == nil && os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") == "" {
			t.Skip(cluster.err)
		}
		t.Fatal(cluster.err)
	}
	return cluster.zk.Addr()
}

var (
	isoStamp = regexp.MustCompile(`timestamp=\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{3})?)?`)
	startRE  = regexp.MustCompile(`(127\.0\.0\.1:\d+) \d+`)
)

// normalize replaces what changes from run to run: the times of "Took"
// lines and the timestamps the server gave cells.
func normalize(s string) string {
	s = NormalizeTook(s)
	return isoStamp.ReplaceAllString(s, "timestamp=TS")
}

// runShell runs the shell with args (and stdin) and returns its exit
// status, standard output and standard error.
func runShell(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), append([]string{"--zk", zkAddr(t)}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The script and what HBase 2.6's shell prints for it, in its
// non-interactive layout (no terminal: columns are not padded), with
// "Took" times and cell timestamps normalized.
const dataScript = `
create 'st', {NAME => 'f', VERSIONS => 3}, 'g'
list 'st'
exists 'st'; exists 'nosuch'
is_enabled 'st'
put 'st', 'r1', 'f:a', 'v1'
put 'st', 'r1', 'f:b', "x\x00y\n"
put 'st', 'r2', 'g:c', 'v3'
put 'st', 'r3', 'f:a', 'old', 1000
put 'st', 'r3', 'f:a', 'new', 2000
get 'st', 'r1'
get 'st', 'r3', {COLUMN => 'f:a', VERSIONS => 3}
get 'st', 'nosuch'
scan 'st'
scan 'st', {STARTROW => 'r2', LIMIT => 1}
scan 'st', {REVERSED => true, COLUMNS => ['f:a']}
scan 'st', {FILTER => "PrefixFilter('r1') AND ValueFilter(=, 'binary:v1')"}
scan 'st', {TIMERANGE => [1000, 1500]}
count 'st', INTERVAL => 2
incr 'st', 'c', 'f:n', 5
incr 'st', 'c', 'f:n'
get_counter 'st', 'c', 'f:n'
delete 'st', 'r1', 'f:a'
deleteall 'st', 'r2'
scan 'st', {COLUMNS => 'f:b'}
`

const dataWant = `Created table st
Took 0.0000 seconds
=> Hbase::Table - st
TABLE
st
1 row(s)
Took 0.0000 seconds
=> ["st"]
Table st does exist
Took 0.0000 seconds
=> true
Table nosuch does not exist
Took 0.0000 seconds
=> false
true
Took 0.0000 seconds
=> true
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
COLUMN  CELL
 f:a timestamp=TS, value=v1
 f:b timestamp=TS, value=x\x00y\x0A
1 row(s)
Took 0.0000 seconds
COLUMN  CELL
 f:a timestamp=TS, value=new
 f:a timestamp=TS, value=old
1 row(s)
Took 0.0000 seconds
COLUMN  CELL
0 row(s)
Took 0.0000 seconds
ROW  COLUMN+CELL
 r1 column=f:a, timestamp=TS, value=v1
 r1 column=f:b, timestamp=TS, value=x\x00y\x0A
 r2 column=g:c, timestamp=TS, value=v3
 r3 column=f:a, timestamp=TS, value=new
3 row(s)
Took 0.0000 seconds
ROW  COLUMN+CELL
 r2 column=g:c, timestamp=TS, value=v3
1 row(s)
Took 0.0000 seconds
ROW  COLUMN+CELL
 r3 column=f:a, timestamp=TS, value=new
 r1 column=f:a, timestamp=TS, value=v1
2 row(s)
Took 0.0000 seconds
ROW  COLUMN+CELL
 r1 column=f:a, timestamp=TS, value=v1
1 row(s)
Took 0.0000 seconds
ROW  COLUMN+CELL
 r3 column=f:a, timestamp=TS, value=old
1 row(s)
Took 0.0000 seconds
Current count: 2, row: r2
3 row(s)
Took 0.0000 seconds
=> 3
COUNTER VALUE = 5
Took 0.0000 seconds
COUNTER VALUE = 6
Took 0.0000 seconds
COUNTER VALUE = 6
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
ROW  COLUMN+CELL
 r1 column=f:b, timestamp=TS, value=x\x00y\x0A
1 row(s)
Took 0.0000 seconds
`

// TestShellScript runs a script of data commands through -e against a
// live server and compares the output with HBase's layout.
func TestShellScript(t *testing.T) {
	code, out, errOut := runShell(t, "", "-e", dataScript)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	require.Equal(t, dataWant, normalize(out))

	// Milliseconds since the epoch with hbase.shell.timestamp.format.epoch,
	// and LocalDateTime's form otherwise (checked exactly in
	// TestFormatTimestamp).
	code, out, errOut = runShell(t, "", "-D", "hbase.shell.timestamp.format.epoch=true", "-e", "get 'st', 'r3', 'f:a'")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "COLUMN  CELL\n f:a timestamp=2000, value=new\n1 row(s)\nTook 0.0000 seconds\n", NormalizeTook(out))

	code, out, errOut = runShell(t, "", "-e", "disable 'st'; drop 'st'; exists 'st'")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Took 0.0000 seconds\nTook 0.0000 seconds\nTable st does not exist\nTook 0.0000 seconds\n=> false\n", NormalizeTook(out))
}

// TestShellAdmin runs the table and namespace administration commands
// from a file and from standard input.
func TestShellAdmin(t *testing.T) {
	script := `create_namespace 'sa_ns'
create 'sa_ns:t', 'f', SPLITS => ['b', 'm']
list 'sa_ns:.*'
list_namespace 'sa.*'
alter 'sa_ns:t', {NAME => 'f', VERSIONS => 4, TTL => 86400}, {NAME => 'g', BLOOMFILTER => 'rowcol'}
alter 'sa_ns:t', MAX_FILESIZE => '1073741824', METADATA => {'owner' => 'me'}
describe 'sa_ns:t'
alter 'sa_ns:t', 'delete' => 'g'
alter 'sa_ns:t', METHOD => 'table_att_unset', NAME => 'MAX_FILESIZE'
describe 'sa_ns:t'
put 'sa_ns:t', 'a', 'f:q', '1'
put 'sa_ns:t', 'z', 'f:q', '2'
flush 'sa_ns:t'
major_compact 'sa_ns:t'
truncate 'sa_ns:t'
count 'sa_ns:t'
is_enabled 'sa_ns:t'
disable 'sa_ns:t'
is_enabled 'sa_ns:t'
is_disabled 'sa_ns:t'
drop 'sa_ns:t'
drop_namespace 'sa_ns'
`
	want := `Took 0.0000 seconds
Created table sa_ns:t
Took 0.0000 seconds
=> Hbase::Table - sa_ns:t
TABLE
sa_ns:t
1 row(s)
Took 0.0000 seconds
=> ["sa_ns:t"]
NAMESPACE
sa_ns
1 row(s)
Took 0.0000 seconds
Updating all regions with the new schema...
3/3 regions updated.
Done.
Took 0.0000 seconds
Updating all regions with the new schema...
3/3 regions updated.
Done.
Took 0.0000 seconds
Table sa_ns:t is ENABLED
sa_ns:t, {TABLE_ATTRIBUTES => {MAX_FILESIZE => '1073741824', METADATA => {'owner' => 'me'}}}
COLUMN FAMILIES DESCRIPTION
{NAME => 'f', VERSIONS => '4', TTL => '86400 SECONDS (1 DAY)'}

{NAME => 'g', BLOOMFILTER => 'ROWCOL'}

2 row(s)
Took 0.0000 seconds
Updating all regions with the new schema...
3/3 regions updated.
Done.
Took 0.0000 seconds
Updating all regions with the new schema...
3/3 regions updated.
Done.
Took 0.0000 seconds
Table sa_ns:t is ENABLED
sa_ns:t, {TABLE_ATTRIBUTES => {METADATA => {'owner' => 'me'}}}
COLUMN FAMILIES DESCRIPTION
{NAME => 'f', VERSIONS => '4', TTL => '86400 SECONDS (1 DAY)'}

1 row(s)
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Truncating 'sa_ns:t' table (it may take a while):
Disabling table...
Truncating table...
Took 0.0000 seconds
0 row(s)
Took 0.0000 seconds
=> 0
true
Took 0.0000 seconds
=> true
Took 0.0000 seconds
false
Took 0.0000 seconds
=> false
true
Took 0.0000 seconds
=> true
Took 0.0000 seconds
Took 0.0000 seconds
`
	path := filepath.Join(t.TempDir(), "admin.rb")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	code, out, errOut := runShell(t, "", path)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, want, normalize(out))

	// The same from standard input, after the file dropped everything.
	code, out, errOut = runShell(t, script)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, want, normalize(out))

	code, out, errOut = runShell(t, "", "-e", "status; status 'simple'")
	require.Equal(t, 0, code, errOut)
	out = startRE.ReplaceAllString(NormalizeTook(out), "$1 START")
	require.Regexp(t, `^1 active master, 0 backup masters, 1 servers, 0 dead, \d+\.\d{4} average load
Took 0\.0000 seconds
active master:  127\.0\.0\.1:\d+ START
0 backup masters
1 live servers
    127\.0\.0\.1:\d+ START
        requestsPerSecond=\d+\.\d, numberOfOnlineRegions=\d+, .*
0 dead servers
Aggregate load: \d+, regions: \d+
Took 0\.0000 seconds
$`, out)
}

// TestShellErrors: a script stops at its first error with exit status 1
// and HBase's message on stderr; later commands do not run.
func TestShellErrors(t *testing.T) {
	for _, tc := range []struct {
		script, stderr string
	}{
		{"get 'nosuch', 'r'", "ERROR: Unknown table nosuch!\n"},
		{"create 'se', 'f'\ncreate 'se', 'f'", "ERROR: Table already exists: se!\n"},
		{"put 'se', 'r', 'nofam:q', 'v'", "ERROR: Unknown column family! Valid column names: f:*\n"},
		{"drop 'se'", "ERROR: Table se is enabled. Disable it first.\n"},
		{"disable 'nosuch'", "ERROR: Table nosuch does not exist.\n"},
		{"list_namespace; drop_namespace 'nons'", "ERROR: Unknown namespace nons!\n"},
		{"create 'se2'", "ERROR: wrong number of arguments (given 1, expected 2+)\n"},
		{"incr 'se', 'r', 'f'", "ERROR: Failed to provide both column family and column qualifier for incr\n"},
		{"scan 'se', {FILTER => \"PrefixFilter('a') AND\"}",
			"ERROR: FILTER \"PrefixFilter('a') AND\": filter string at offset 21: expected a filter, found end of string\n"},
		{"scan 'se', {LIMITS => 3}", "ERROR: scan does not take LIMITS\n"},
		{"put 'se', 'r', 'f:q', 'not a counter'\nget_counter 'se', 'r', 'f:q'",
			"ERROR: the value of f:q in row r is 13 bytes, not an 8-byte counter\n"},
		{"split 'se'", "ERROR: split is not available yet: RegionKV's client has no split call (it comes with issue 15)\n"},
		{"snapshot 'se', 'se-s1'\nsnapshot 'se', 'se-s1'", "ERROR: org.apache.hadoop.hbase.snapshot.SnapshotExistsException: Snapshot 'se-s1' already stored on the filesystem.\n"},
		{"restore_snapshot 'se-s1'", "ERROR: org.apache.hadoop.hbase.TableNotDisabledException: se\n"},
		{"snapshot 'se', 'bad', {FLUSHY => true}", "ERROR: unknown snapshot option FLUSHY (SKIP_FLUSH, TTL)\n"},
		{"foo 'se'", "line 1, column 1: NameError: undefined local variable or method 'foo' for main:Object (type help for the commands)\n"},
		{"list\nscan 'se', {LIMIT => }", "-e: SyntaxError: line 2, column 22: unexpected '}', expecting a value\n"},
	} {
		code, out, errOut := runShell(t, "", "-e", tc.script+"\nlist 'never'")
		require.Equal(t, 1, code, tc.script)
		require.Equal(t, tc.stderr, errOut, tc.script)
		require.NotContains(t, out, "never", "%s: the command after the error ran", tc.script)
	}
	// Piped in, the commands before a syntax error run (as they arrive),
	// and the error names the line of the whole input.
	code, out, errOut := runShell(t, "list 'se'\nget 'se',\n 'r'\nscan 'se', {LIMIT => }\nlist 'never'\n")
	require.Equal(t, 1, code)
	require.Equal(t, "stdin: SyntaxError: line 4, column 22: unexpected '}', expecting a value\n", errOut)
	require.Contains(t, out, "=> [\"se\"]")
	require.Contains(t, out, "COLUMN  CELL\n")
	require.NotContains(t, out, "never")
	// A statement left open at the end of the input is an error too.
	code, _, errOut = runShell(t, "list 'se'\nget 'se',")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stdin: SyntaxError: line 2, column 10: unexpected end of input")

	// A file that does not exist, a cluster that cannot be reached.
	code, _, errOut = runShell(t, "", filepath.Join(t.TempDir(), "none.rb"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no such file")
	var outBuf, errBuf bytes.Buffer
	require.Equal(t, 1, Main(context.Background(), []string{"--zk", "127.0.0.1:1", "-e", "list"}, strings.NewReader(""), &outBuf, &errBuf))
	require.Contains(t, errBuf.String(), "regionsrv shell: cannot reach the cluster through ZooKeeper at 127.0.0.1:1")
	require.Equal(t, 2, Main(context.Background(), []string{"-e", "list", "file.rb"}, strings.NewReader(""), &outBuf, &errBuf))
}

// TestShellHelp: help lists the groups and their commands, help 'cmd' a
// command's text, and the command that waits for issue 15 says so.
func TestShellHelp(t *testing.T) {
	code, out, errOut := runShell(t, "", "-e", "help")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "  Group name: ddl\n  Commands: create, alter, describe, desc, list, exists, enable, disable, is_enabled, is_disabled, drop\n")
	require.Contains(t, out, "  Group name: snapshots\n")
	require.NotContains(t, out, "Took")
	code, out, _ = runShell(t, "", "-e", "help 'split'")
	require.Equal(t, 0, code)
	require.Contains(t, out, "comes with issue 15")
	code, out, _ = runShell(t, "", "-e", "help 'dml'")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Command: scan\n")
	for _, c := range commands {
		require.NotEmpty(t, c.help, c.name)
		require.Contains(t, groupNames(), c.group, c.name)
	}
}

// TestShellSnapshots: snapshot, list_snapshots, restore_snapshot,
// clone_snapshot and delete_snapshot, as HBase's shell runs them.
func TestShellSnapshots(t *testing.T) {
	script := `create 'ss', 'f'
put 'ss', 'r1', 'f:q', 'old'
snapshot 'ss', 'ss-snap'
snapshot 'ss', 'ss-skip', {SKIP_FLUSH => true, TTL => 3600}
list_snapshots 'ss-.*'
put 'ss', 'r1', 'f:q', 'new'
disable 'ss'
restore_snapshot 'ss-snap'
enable 'ss'
get 'ss', 'r1'
clone_snapshot 'ss-snap', 'ss_clone'
get 'ss_clone', 'r1'
delete_snapshot 'ss-snap'
delete_snapshot 'ss-skip'
list_snapshots 'ss-.*'
`
	code, out, errOut := runShell(t, "", "-e", script)
	require.Equal(t, 0, code, errOut)
	out = regexp.MustCompile(`\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [-+]\d{4}\)`).ReplaceAllString(normalize(out), "(TIME)")
	require.Equal(t, `Created table ss
Took 0.0000 seconds
=> Hbase::Table - ss
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
SNAPSHOT  TABLE + CREATION TIME
 ss-snap ss (TIME)
 ss-skip ss (TIME)
2 row(s)
Took 0.0000 seconds
=> ["ss-snap", "ss-skip"]
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
COLUMN  CELL
 f:q timestamp=TS, value=old
1 row(s)
Took 0.0000 seconds
Took 0.0000 seconds
COLUMN  CELL
 f:q timestamp=TS, value=old
1 row(s)
Took 0.0000 seconds
Took 0.0000 seconds
Took 0.0000 seconds
SNAPSHOT  TABLE + CREATION TIME
0 row(s)
Took 0.0000 seconds
=> []
`, out)
}

func groupNames() []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.name)
	}
	return out
}
