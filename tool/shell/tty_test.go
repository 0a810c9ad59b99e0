package shell

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// ptyOutput collects what the shell writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the terminal output after from contains want and
// returns the offset after it. The deadline is for the event, not a speed
// check: a loaded machine can be slow.
func (o *ptyOutput) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := o.String()
		if i := strings.Index(s[from:], want); i >= 0 {
			return from + i + len(want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell did not print %q; it printed:\n%s", want, s[from:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShellTerminal drives the interactive shell through a pseudo-terminal
// as a person would: it recalls a command with the up arrow, edits it with
// the left arrow and typing, and the edited command is the one that runs;
// the history is kept in the home directory for the next session; output
// is laid out to the terminal's width.
func TestShellTerminal(t *testing.T) {
	zk := zkAddr(t)
	home := t.TempDir()
	start := func() (*exec.Cmd, *os.File, *ptyOutput) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"=--zk "+zk, "HOME="+home, "TERM=xterm")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
		require.NoError(t, err)
		out := &ptyOutput{}
		go func() { _, _ = io.Copy(out, f) }()
		return cmd, f, out
	}
	cmd, f, out := start()
	defer cmd.Process.Kill()
	defer f.Close()

	at := out.waitFor(t, 0, "hbase:001:0> ")
	type_ := func(s string) { _, err := f.Write([]byte(s)); require.NoError(t, err) }
	type_("create 'tty', 'f'\r")
	at = out.waitFor(t, at, "=> Hbase::Table - tty")
	at = out.waitFor(t, at, "hbase:002:0> ")
	type_("put 'tty', 'r1', 'f:q', 'v1'\r")
	at = out.waitFor(t, at, "hbase:003:0> ")
	// Up arrow recalls the put; left arrow moves before the closing quote,
	// where "2" goes in: the value written is v12.
	type_("\x1b[A")
	at = out.waitFor(t, at, "put 'tty', 'r1', 'f:q', 'v1'")
	type_("\x1b[D2\r")
	at = out.waitFor(t, at, "hbase:004:0> ")
	// A statement continued on the next line gets the continuation prompt.
	type_("get 'tty',\r")
	at = out.waitFor(t, at, "hbase:005:1* ")
	type_("'r1'\r")
	at = out.waitFor(t, at, "1 row(s)")
	got := out.String()
	// On a 100-column terminal the first column is 25 wide, then two spaces.
	require.Regexp(t, regexp.MustCompile(`COLUMN {21}CELL`), got)
	require.Regexp(t, regexp.MustCompile(` f:q {23}timestamp=\S+, value=v12`), got)
	at = out.waitFor(t, at, "hbase:006:0> ")
	// An error is reported and the shell goes on.
	type_("get 'nosuch', 'r'\r")
	at = out.waitFor(t, at, "ERROR: Unknown table nosuch!")
	at = out.waitFor(t, at, "For usage try 'help \"get\"'")
	at = out.waitFor(t, at, "hbase:007:0> ")
	type_("exit\r")
	require.NoError(t, cmd.Wait())

	hist, err := os.ReadFile(filepath.Join(home, HistoryFile))
	require.NoError(t, err)
	require.Equal(t, "create 'tty', 'f'\nput 'tty', 'r1', 'f:q', 'v1'\nput 'tty', 'r1', 'f:q', 'v12'\n"+
		"get 'tty', 'r1'\nget 'nosuch', 'r'\nexit\n", string(hist))

	// The next session starts with that history: three up arrows reach the
	// edited get.
	cmd, f, out = start()
	defer cmd.Process.Kill()
	defer f.Close()
	at = out.waitFor(t, 0, "hbase:001:0> ")
	type_ = func(s string) { _, err := f.Write([]byte(s)); require.NoError(t, err) }
	type_("\x1b[A\x1b[A\x1b[A\r")
	at = out.waitFor(t, at, "value=v12")
	type_("\x04") // Ctrl-D leaves
	require.NoError(t, cmd.Wait())
	_ = at
}
