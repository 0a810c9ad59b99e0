package integration

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestStandalone runs `regionsrv serve --standalone` as HBase's standalone
// mode is used: it starts its own ZooKeeper, a client finds the server
// through it, and SIGTERM stops both.
func TestStandalone(t *testing.T) {
	zkPort := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(binary, "serve", "--standalone", "--data-dir", dir,
		"-D", "hbase.zookeeper.property.clientPort="+strconv.Itoa(zkPort),
		"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "regionsrv serving:") {
				serving <- sc.Text()
			}
		}
	}()
	select {
	case line := <-serving:
		if !strings.Contains(line, "zookeeper=127.0.0.1:"+strconv.Itoa(zkPort)) {
			t.Fatalf("serving line %q does not name our ZooKeeper port", line)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no serving line within 60s; stderr:\n%s", stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.New(ctx, client.Options{ZKQuorum: "127.0.0.1:" + strconv.Itoa(zkPort)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, client.TableDescriptor{Name: "demo", Families: []client.Family{{Name: "f"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mutate(ctx, client.NewPut("demo", []byte("r")).Add([]byte("f"), []byte("q"), []byte("v"))); err != nil {
		t.Fatal(err)
	}
	res, err := c.Get(ctx, &client.Get{Table: "demo", Row: []byte("r")})
	if err != nil || string(res.Value([]byte("f"), []byte("q"))) != "v" {
		t.Fatalf("get: %v %v", res, err)
	}
	c.Close()

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("regionsrv exited with %v after SIGTERM; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("regionsrv did not stop within 60s of SIGTERM")
	}
	if !waitPortClosed("127.0.0.1:"+strconv.Itoa(zkPort), 10*time.Second) {
		t.Errorf("ZooKeeper still listens on %d after regionsrv stopped", zkPort)
	}
}

// TestStandaloneWithoutZooKeeper checks the error when Debian's package
// is missing: it says how to install it.
func TestStandaloneWithoutZooKeeper(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--standalone", "--data-dir", t.TempDir(),
		"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0")
	cmd.Env = append(os.Environ(), "REGIONKV_ZOOKEEPER_JAR=/nonexistent/zookeeper.jar")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve --standalone without ZooKeeper succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "apt-get install zookeeper") {
		t.Errorf("the error does not say how to install ZooKeeper:\n%s", out)
	}
}

// syncBuffer is a strings.Builder that a running process writes to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServe runs `regionsrv serve ARGS...` and waits for its serving
// line; stop sends SIGTERM and waits for a clean exit.
func startServe(t *testing.T, args ...string) (serving string, stderr *syncBuffer, stop func()) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "regionsrv serving:") {
				lines <- sc.Text()
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case serving = <-lines:
	case err := <-done:
		t.Fatalf("regionsrv serve exited (%v) before serving; stderr:\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no serving line within 60s; stderr:\n%s", stderr.String())
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("regionsrv exited with %v after SIGTERM; stderr:\n%s", err, stderr.String())
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Errorf("regionsrv did not stop within 60s of SIGTERM")
		}
	}
	t.Cleanup(stop)
	return serving, stderr, stop
}

// TestServeStandaloneByDefault: `serve` without --zk or a quorum runs
// standalone, as `hbase master start` does, and says so; its ZooKeeper
// listens on hbase.zookeeper.property.clientPort from --config as from -D.
func TestServeStandaloneByDefault(t *testing.T) {
	zkPort := freePort(t)
	site := filepath.Join(t.TempDir(), "hbase-site.xml")
	if err := os.WriteFile(site, []byte(`<?xml version="1.0"?>
<configuration>
  <property><name>hbase.zookeeper.property.clientPort</name><value>`+strconv.Itoa(zkPort)+`</value></property>
  <property><name>hbase.regionserver.port</name><value>0</value></property>
  <property><name>hbase.regionserver.info.port</name><value>0</value></property>
</configuration>
`), 0o644); err != nil {
		t.Fatal(err)
	}
	serving, stderr, stop := startServe(t, "--config", site, "--data-dir", t.TempDir())
	quorum := "127.0.0.1:" + strconv.Itoa(zkPort)
	if !strings.Contains(serving, "zookeeper="+quorum+" ") {
		t.Fatalf("serving line %q does not name the clientPort of the --config file", serving)
	}
	if !strings.Contains(stderr.String(), "regionsrv serve: no ZooKeeper quorum given (--zk or hbase.zookeeper.quorum): running standalone, with ZooKeeper as a child process on "+quorum) {
		t.Errorf("serve did not say it runs standalone; stderr:\n%s", stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.New(ctx, client.Options{ZKQuorum: quorum})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, client.TableDescriptor{Name: "by_default", Families: []client.Family{{Name: "f"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	stop()
	if !waitPortClosed(quorum, 10*time.Second) {
		t.Errorf("ZooKeeper still listens on %d after regionsrv stopped", zkPort)
	}

	// --no-zookeeper serves without one.
	serving, _, stop = startServe(t, "--no-zookeeper", "--data-dir", t.TempDir(),
		"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0")
	if !strings.Contains(serving, " zookeeper= ") {
		t.Errorf("serve --no-zookeeper: %q", serving)
	}
	stop()
}
