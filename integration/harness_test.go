package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/zkserver"
)

// binary is the regionsrv built for this test run; zk the shared ZooKeeper.
var (
	binary string
	zk     *zkserver.Server
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "regionkv-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binary = filepath.Join(tmp, "regionsrv")
	args := []string{"build", "-o", binary}
	if raceEnabled && os.Getenv("REGIONKV_RACE_SERVER") != "" {
		// The server under -race too: a data race in it makes its exit
		// status 66, which stop reports. Opt-in, since a race-built
		// server needs several times the memory (TestLoad200Connections
		// bounds it).
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/regionkv/regionkv/cmd/regionsrv")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building regionsrv:", err)
		return 1
	}
	zk, err = zkserver.Start(context.Background(), zkserver.Config{Dir: filepath.Join(tmp, "zk")})
	if err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			fmt.Fprintln(os.Stderr, "integration tests need ZooKeeper:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "skipping integration tests:", err)
		return 0
	}
	defer zk.Stop()
	sharedDir = filepath.Join(tmp, "shared")
	code := m.Run()
	if !stopShared() && code == 0 {
		code = 1
	}
	return code
}

// tb is the part of testing.TB the server process uses: a test's, or
// mainTB for the server shared by many tests.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// serverProc is a regionsrv serve process.
type serverProc struct {
	t       tb
	dir     string
	root    string // ZooKeeper root znode, one per test so tests do not mix
	args    []string
	cmd     *exec.Cmd
	addr    string
	info    string
	logPath string
	exited  chan struct{}
}

var servingLine = regexp.MustCompile(`regionsrv serving: rpc=(\S+) info=(\S*) `)

// startServer starts regionsrv on a fresh data directory (or dir, if not
// empty) with the given -D settings, registering under its own ZooKeeper
// root, and waits until it serves.
func startServer(t *testing.T, dir string, defines ...string) *serverProc {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	root := "/hbase-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	p := newServerProc(t, dir, root, defines...)
	p.start()
	t.Cleanup(func() { p.stop() })
	return p
}

func newServerProc(t tb, dir, root string, defines ...string) *serverProc {
	p := &serverProc{t: t, dir: dir, root: root}
	p.args = []string{"serve", "--data-dir", dir, "--zk", zk.Addr(),
		"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0",
		"-D", "zookeeper.znode.parent=" + root}
	for _, d := range defines {
		p.args = append(p.args, "-D", d)
	}
	return p
}

func (p *serverProc) start() {
	t := p.t
	t.Helper()
	p.logPath = filepath.Join(p.dir, fmt.Sprintf("regionsrv-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, p.args...)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	ready := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m
			}
		}
	}()
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	select {
	case m := <-ready:
		p.addr, p.info = m[1], m[2]
	case <-p.exited:
		t.Fatalf("regionsrv exited before serving; log:\n%s", p.log())
	case <-time.After(60 * time.Second):
		p.kill()
		t.Fatalf("regionsrv did not start within 60s; log:\n%s", p.log())
	}
}

func (p *serverProc) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// stop sends SIGTERM and waits for a graceful exit.
func (p *serverProc) stop() {
	if p.cmd == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			p.t.Errorf("regionsrv exited with %d after SIGTERM; log:\n%s", code, p.log())
		}
	case <-time.After(60 * time.Second):
		p.kill()
		p.t.Errorf("regionsrv did not stop within 60s of SIGTERM; log:\n%s", p.log())
	}
}

// kill sends SIGKILL and waits.
func (p *serverProc) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// use makes p report to t (a subtest, say) until the returned function
// is called: defer p.use(t)().
func (p *serverProc) use(t tb) func() {
	old := p.t
	p.t = t
	return func() { p.t = old }
}

// restart stops (gracefully, or with SIGKILL if hard) and starts again on
// the same data directory.
func (p *serverProc) restart(hard bool) {
	if hard {
		p.kill()
	} else {
		p.stop()
	}
	p.start()
}

// waitPortClosed is for tests that check a stopped server let go of its port.
func waitPortClosed(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return true
		}
		c.Close()
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
