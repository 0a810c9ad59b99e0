package zkserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// requireZooKeeper skips the test when ZooKeeper or Java is not installed,
// or fails it when REGIONKV_REQUIRE_ZOOKEEPER is set (as .ci/run sets it).
func requireZooKeeper(t *testing.T) {
	t.Helper()
	_, errJar := resolveJar("")
	_, errJava := resolveJava("")
	err := errors.CombineErrors(errJar, errJava)
	if err == nil {
		return
	}
	if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
		t.Fatalf("REGIONKV_REQUIRE_ZOOKEEPER is set but ZooKeeper cannot run: %v", err)
	}
	t.Skipf("skipping: ZooKeeper cannot run here (%v); set REGIONKV_REQUIRE_ZOOKEEPER=1 to make this a failure", err)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// zkLogger forwards go-zookeeper's log to the test until the test ends;
// the client's goroutines may log after that.
type zkLogger struct {
	t    *testing.T
	done *atomic.Bool
}

func newZKLogger(t *testing.T) zkLogger {
	l := zkLogger{t: t, done: new(atomic.Bool)}
	t.Cleanup(func() { l.done.Store(true) })
	return l
}

func (l zkLogger) Printf(format string, args ...any) {
	if !l.done.Load() {
		l.t.Logf("zk: "+format, args...)
	}
}

func TestServer(t *testing.T) {
	requireZooKeeper(t)
	dir := t.TempDir()
	began := time.Now()
	s, err := Start(context.Background(), Config{Dir: dir, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Logf("ZooKeeper ready on %s (pid %d) after %s", s.Addr(), s.Pid(), time.Since(began).Round(time.Millisecond))
	defer func() { require.NoError(t, s.Stop()) }() // in case a subtest fails first

	require.Equal(t, "127.0.0.1:"+strconv.Itoa(s.Port()), s.Addr())
	require.FileExists(t, filepath.Join(dir, "zoo.cfg"))

	t.Run("Probe", func(t *testing.T) {
		mode, err := Probe(s.Addr(), 2*time.Second)
		require.NoError(t, err)
		require.Equal(t, "standalone", mode)
	})

	t.Run("Znode", func(t *testing.T) {
		conn, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogger(newZKLogger(t)), zk.WithLogInfo(false))
		require.NoError(t, err)
		defer conn.Close()
		path, err := conn.Create("/regionkv-test", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		require.Equal(t, "/regionkv-test", path)
		data, stat, err := conn.Get("/regionkv-test")
		require.NoError(t, err)
		require.Equal(t, "hello", string(data))
		require.EqualValues(t, 0, stat.Version)
		_, err = conn.Set("/regionkv-test", []byte("world"), stat.Version)
		require.NoError(t, err)
		data, _, err = conn.Get("/regionkv-test")
		require.NoError(t, err)
		require.Equal(t, "world", string(data))
	})

	t.Run("SecondStartSamePort", func(t *testing.T) {
		began := time.Now()
		s2, err := Start(context.Background(), Config{Dir: t.TempDir(), Port: s.Port(), Logger: testLogger(t)})
		if s2 != nil {
			_ = s2.Stop()
		}
		require.Error(t, err)
		t.Logf("second Start failed after %s: %v", time.Since(began).Round(time.Millisecond), err)
		require.True(t, errors.Is(err, ErrPortInUse), "%v", err)
		require.Contains(t, err.Error(), fmt.Sprintf("port %d", s.Port()))
		require.Contains(t, err.Error(), "already in use")
		// The first server is unharmed.
		mode, err := Probe(s.Addr(), 2*time.Second)
		require.NoError(t, err)
		require.Equal(t, "standalone", mode)
	})

	t.Run("SecondStartSamePortRace", func(t *testing.T) {
		// Bypass Start's port check, as when a picked port is taken
		// between the check and the JVM's bind: the other server answers
		// srvr first, and conf shows it is not ours.
		dir := t.TempDir()
		java, err := resolveJava("")
		require.NoError(t, err)
		jar, err := resolveJar("")
		require.NoError(t, err)
		s2, err := start(context.Background(), Config{Dir: dir, Logger: testLogger(t), StartTimeout: 30 * time.Second},
			java, jar, dir, s.Port())
		if s2 != nil {
			_ = s2.Stop()
		}
		require.Error(t, err)
		t.Log(err)
		require.True(t, errors.Is(err, ErrPortInUse), "%v", err)
		require.Contains(t, err.Error(), fmt.Sprintf("port %d", s.Port()))
		mode, err := Probe(s.Addr(), 2*time.Second)
		require.NoError(t, err)
		require.Equal(t, "standalone", mode)
	})

	t.Run("Stop", func(t *testing.T) {
		pid := s.Pid()
		began := time.Now()
		require.NoError(t, s.Stop())
		t.Logf("stopped in %s", time.Since(began).Round(time.Millisecond))
		require.NoError(t, s.Stop(), "Stop is idempotent")
		select {
		case <-s.Done():
		default:
			t.Fatal("Done not closed after Stop")
		}
		require.NoError(t, s.Wait(), "Wait after Stop")

		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
			t.Fatalf("port %d still accepts connections after Stop", s.Port())
		}
		if runtime.GOOS == "linux" {
			// A zombie keeps its /proc entry; a reaped process has none.
			_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
			require.True(t, os.IsNotExist(err), "process %d not reaped: %v", pid, err)
		}
	})

	t.Run("Restart", func(t *testing.T) {
		// The data survives a restart on the same directory, and the
		// previous log is kept.
		s2, err := Start(context.Background(), Config{Dir: dir, Logger: testLogger(t)})
		require.NoError(t, err)
		defer func() { require.NoError(t, s2.Stop()) }()
		require.FileExists(t, s2.LogPath()+".1")
		conn, _, err := zk.Connect([]string{s2.Addr()}, 10*time.Second, zk.WithLogger(newZKLogger(t)), zk.WithLogInfo(false))
		require.NoError(t, err)
		defer conn.Close()
		data, _, err := conn.Get("/regionkv-test")
		require.NoError(t, err)
		require.Equal(t, "world", string(data))
	})
}

func TestMissingJar(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "zookeeper.jar")
	_, err := Start(context.Background(), Config{Dir: t.TempDir(), Jar: missing})
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNotInstalled), "%v", err)
	require.Contains(t, err.Error(), missing)
	require.Contains(t, err.Error(), "apt-get install zookeeper")
	require.Contains(t, err.Error(), "Debian")

	// The environment override is reported as the source.
	t.Setenv(EnvJar, missing)
	_, err = Start(context.Background(), Config{Dir: t.TempDir()})
	require.True(t, errors.Is(err, ErrNotInstalled), "%v", err)
	require.Contains(t, err.Error(), "$"+EnvJar)
}

func TestMissingJava(t *testing.T) {
	jar := filepath.Join(t.TempDir(), "zookeeper.jar")
	require.NoError(t, os.WriteFile(jar, nil, 0o644))
	_, err := Start(context.Background(), Config{Dir: t.TempDir(), Jar: jar, Java: filepath.Join(t.TempDir(), "java")})
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNotInstalled), "%v", err)
	require.Contains(t, err.Error(), "apt-get install zookeeper")
}

// fakeJava writes a shell script to stand in for java, with a jar to go
// with it.
func fakeJava(t *testing.T, script string) (java, jar string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	java = filepath.Join(dir, "java")
	require.NoError(t, os.WriteFile(java, []byte("#!/bin/sh\n"+script), 0o755))
	jar = filepath.Join(dir, "zookeeper.jar")
	require.NoError(t, os.WriteFile(jar, nil, 0o644))
	return java, jar
}

func TestPortInUse(t *testing.T) {
	// The port check comes before the child is started.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	java, jar := fakeJava(t, "echo should not run >&2; exit 1\n")
	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Port: port, Java: java, Jar: jar})
	require.True(t, errors.Is(err, ErrPortInUse), "%v", err)
	require.Contains(t, err.Error(), fmt.Sprintf("port %d", port))
	require.NotContains(t, err.Error(), "should not run")
}

func TestEarlyExit(t *testing.T) {
	java, jar := fakeJava(t, "echo 'Error: Could not find or load main class' >&2; exit 3\n")
	_, err := Start(context.Background(), Config{Dir: t.TempDir(), Java: java, Jar: jar})
	require.Error(t, err)
	t.Log(err)
	require.Contains(t, err.Error(), "exited during startup")
	require.Contains(t, err.Error(), "exit status 3")
	require.Contains(t, err.Error(), "Could not find or load main class")
}

// readPid reads the pid a fake java wrote.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

func requireGone(t *testing.T, pid int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	require.True(t, os.IsNotExist(err), "process %d still exists (or is a zombie): %v", pid, err)
}

func TestStartTimeoutKillsChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	java, jar := fakeJava(t, "echo $$ > "+pidFile+"\necho still starting\nexec sleep 60\n")
	began := time.Now()
	_, err := Start(context.Background(), Config{Dir: t.TempDir(), Java: java, Jar: jar, StartTimeout: 500 * time.Millisecond})
	require.Error(t, err)
	t.Log(err)
	require.Less(t, time.Since(began), 10*time.Second)
	require.Contains(t, err.Error(), "not ready after 500ms")
	require.Contains(t, err.Error(), "still starting")
	requireGone(t, readPid(t, pidFile))
}

func TestStartCanceled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	java, jar := fakeJava(t, "echo $$ > "+pidFile+"\nexec sleep 60\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Config{Dir: t.TempDir(), Java: java, Jar: jar})
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	requireGone(t, readPid(t, pidFile))
}

func TestUnexpectedExit(t *testing.T) {
	// A fake server that answers srvr once, then dies: Start succeeds, and
	// Done and Wait report the death.
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the fake server")
	}
	java, jar := fakeJava(t, `cfg="$(eval echo \${$#})"
port=$(sed -n 's/^clientPort=//p' "$cfg")
dataDir=$(sed -n 's/^dataDir=//p' "$cfg")
exec python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
for _ in range(2):
    c, _ = s.accept()
    if c.recv(4) == b"srvr":
        c.sendall(b"Zookeeper version: fake\nMode: standalone\n")
    else:
        c.sendall(b"clientPort=%s\ndataDir=%s/version-2\n" % (sys.argv[1].encode(), sys.argv[2].encode()))
    c.close()
time.sleep(0.5)
print("fake server dying", flush=True); sys.exit(7)
' "$port" "$dataDir"
`)
	s, err := Start(context.Background(), Config{Dir: t.TempDir(), Java: java, Jar: jar, Logger: testLogger(t)})
	require.NoError(t, err)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the child died")
	}
	err = s.Wait()
	require.Error(t, err)
	t.Log(err)
	require.Contains(t, err.Error(), "exited unexpectedly")
	require.Contains(t, err.Error(), "exit status 7")
	require.Contains(t, err.Error(), "fake server dying")
	require.NoError(t, s.Stop())
}

func TestProbe(t *testing.T) {
	serve := func(reply string) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 4)
				_, _ = io.ReadFull(c, buf)
				_, _ = io.WriteString(c, reply)
				c.Close()
			}
		}()
		return l.Addr().String()
	}

	mode, err := Probe(serve("Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n"), time.Second)
	require.NoError(t, err)
	require.Equal(t, "follower", mode)

	_, err = Probe(serve("Zookeeper version: 3.8.0\nMode:standalone\n"), time.Second)
	require.ErrorContains(t, err, "no Mode in reply")

	_, err = Probe(serve("This ZooKeeper instance is not currently serving requests\n"), time.Second)
	require.ErrorContains(t, err, "not currently serving requests")

	_, err = Probe(serve(""), time.Second)
	require.ErrorContains(t, err, "empty reply")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	_, err = Probe(addr, time.Second)
	require.Error(t, err)
}
