package integration

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
