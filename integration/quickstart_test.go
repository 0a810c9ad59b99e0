package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeSection returns the README's text from the heading to the next
// heading of the same level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	s = s[i+1+len(heading):]
	level := strings.SplitN(heading, " ", 2)[0]
	if j := strings.Index(s, "\n"+level+" "); j >= 0 {
		s = s[:j]
	}
	return s
}

// codeBlocks returns the fenced blocks of a README section with the given
// info string (sh, go).
func codeBlocks(section, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// commandOf is a shell line without its trailing comment.
func commandOf(line string) string {
	if i := strings.Index(line, "   #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// TestReadmeExample: the README's embedded-store example is
// region/readme_example_test.go's Example_readme, which go test compiles
// and runs, word for word.
func TestReadmeExample(t *testing.T) {
	blocks := codeBlocks(readmeSection(t, "## The embedded store"), "go")
	if len(blocks) == 0 {
		t.Fatal("the README's embedded store section has no Go example")
	}
	src, err := os.ReadFile(filepath.Join("..", "region", "readme_example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)// README BEGIN\n(.*?)\t// README END`).FindSubmatch(src)
	if m == nil {
		t.Fatal("region/readme_example_test.go has no README BEGIN/END lines")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(m[1]), "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if want := strings.Join(lines, "\n") + "\n"; blocks[0] != want {
		t.Errorf("the README's example differs from Example_readme's; README:\n%s\nExample_readme:\n%s", blocks[0], want)
	}
}

// TestQuickStart does what the README's quick start says, as written: its
// first command (the script, on a free ZooKeeper port and data directory
// so as not to meet other servers on this machine), then the shell lines
// against it; the second command is the test command.
func TestQuickStart(t *testing.T) {
	section := readmeSection(t, "## Quick start")
	blocks := codeBlocks(section, "sh")
	if len(blocks) < 2 {
		t.Fatalf("the quick start has %d sh blocks, want the commands and the shell lines", len(blocks))
	}
	cmds := strings.Split(strings.TrimSpace(blocks[0]), "\n")
	if len(cmds) != 2 || commandOf(cmds[1]) != "bash .ci/run" {
		t.Fatalf("the quick start is not two commands, the second the test command: %q", cmds)
	}
	first := strings.Fields(commandOf(cmds[0]))
	if len(first) != 2 || first[0] != "bash" {
		t.Fatalf("the first command is not `bash SCRIPT`: %q", cmds[0])
	}
	zkPort := freePort(t)
	quorum := "127.0.0.1:" + strconv.Itoa(zkPort)
	cmd := exec.Command(first[0], first[1], "--data-dir", t.TempDir(),
		"-D", "hbase.zookeeper.property.clientPort="+strconv.Itoa(zkPort),
		"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0")
	cmd.Dir = ".."
	// `go run` does not pass SIGTERM on to the server: signal the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "regionsrv serving:") {
				serving <- sc.Text()
			}
		}
		done <- cmd.Wait()
	}()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("the quick start's server did not stop within 60s of SIGTERM")
		}
	}
	defer stop()
	select {
	case line := <-serving:
		if !strings.Contains(line, "zookeeper="+quorum+" ") {
			t.Fatalf("serving line %q: not standalone on our ZooKeeper port", line)
		}
	case err := <-done:
		t.Fatalf("%s exited (%v) before serving; stderr:\n%s", cmds[0], err, stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s: no serving line within 3 minutes; stderr:\n%s", cmds[0], stderr.String())
	}

	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(blocks[1]), "\n") {
		c := commandOf(line)
		if !strings.HasPrefix(c, "go run ./cmd/regionsrv shell -e ") {
			continue // the interactive line
		}
		arg := strings.TrimPrefix(c, "go run ./cmd/regionsrv shell -e ")
		if len(arg) < 2 || arg[0] != '"' || arg[len(arg)-1] != '"' {
			t.Fatalf("the shell line's -e argument is not one double-quoted string: %s", arg)
		}
		sh := exec.Command("go", "run", "./cmd/regionsrv", "shell", "--zk", quorum, "-e", arg[1:len(arg)-1])
		sh.Dir = ".."
		got, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, got)
		}
		ran++
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^ROW\s+COLUMN\+CELL$`),
			regexp.MustCompile(`(?m)^ r1\s+column=f:q, timestamp=\S.*, value=v1$`),
			regexp.MustCompile(`(?m)^1 row\(s\)$`),
			regexp.MustCompile(`(?m)^Took \d+\.\d{4} seconds$`),
		} {
			if !want.Match(got) {
				t.Errorf("%s: output lacks %s:\n%s", c, want, got)
			}
		}
	}
	if ran == 0 {
		t.Fatal("the quick start shows no `shell -e` line to run")
	}
}

// TestQuickStartInstallsZooKeeper runs the quick start's script on a
// machine without ZooKeeper (REGIONKV_ZOOKEEPER_JAR points nowhere), with
// apt-get, sudo and id replaced by stubs that log: as root it installs
// Debian's zookeeper itself, as another user through sudo, then starts the
// server, which here fails saying what to install.
func TestQuickStartInstallsZooKeeper(t *testing.T) {
	for _, uid := range []string{"0", "1000"} {
		t.Run("uid="+uid, func(t *testing.T) {
			stubs := t.TempDir()
			log := filepath.Join(stubs, "log")
			write := func(name, body string) {
				if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write("apt-get", `echo "apt-get $*" >> `+log)
			write("sudo", `echo "sudo $*" >> `+log+`; exec "$@"`)
			write("id", `echo `+uid)
			cmd := exec.Command("bash", "bin/start-regionkv.sh", "--data-dir", t.TempDir(),
				"-D", "hbase.zookeeper.property.clientPort="+strconv.Itoa(freePort(t)),
				"-D", "hbase.regionserver.port=0", "-D", "hbase.regionserver.info.port=0")
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "REGIONKV_ZOOKEEPER_JAR=/nonexistent/zookeeper.jar")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the server started without ZooKeeper:\n%s", out)
			}
			b, _ := os.ReadFile(log)
			want := "apt-get update -qq\napt-get install -y -qq zookeeper\n"
			if uid != "0" {
				want = "sudo apt-get update -qq\napt-get update -qq\n" +
					"sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper\napt-get install -y -qq zookeeper\n"
			}
			if string(b) != want {
				t.Errorf("the script ran:\n%s\nwant:\n%s\noutput:\n%s", b, want, out)
			}
			for _, s := range []string{"start-regionkv: installing Debian's zookeeper package", "apt-get install zookeeper"} {
				if !strings.Contains(string(out), s) {
					t.Errorf("the output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}
