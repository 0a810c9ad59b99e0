//go:build linux

package zkserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestChildDiesWithParent kills a parent process with SIGKILL and checks
// that its ZooKeeper dies too. The parent is this test binary, re-run in
// helper mode.
func TestChildDiesWithParent(t *testing.T) {
	if dir := os.Getenv("ZKSERVER_TEST_HELPER_DIR"); dir != "" {
		s, err := Start(context.Background(), Config{Dir: dir})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("PID", s.Pid(), s.Addr())
		select {} // until killed
	}
	requireZooKeeper(t)
	helper := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithParent$", "-test.v")
	helper.Env = append(os.Environ(), "ZKSERVER_TEST_HELPER_DIR="+t.TempDir())
	out, err := helper.StdoutPipe()
	require.NoError(t, err)
	helper.Stderr = t.Output()
	require.NoError(t, helper.Start())
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()

	var pid int
	var addr string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if _, err := fmt.Sscanf(lines.Text(), "PID %d %s", &pid, &addr); err == nil {
			break
		}
		t.Log("helper:", lines.Text())
	}
	require.NotZero(t, pid, "helper did not report a pid")
	t.Logf("helper %d started ZooKeeper pid %d on %s", helper.Process.Pid, pid, addr)
	mode, err := Probe(addr, 2*time.Second)
	require.NoError(t, err)
	require.Equal(t, "standalone", mode)

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("ZooKeeper pid %d survived its parent", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = Probe(addr, time.Second)
	require.Error(t, err, "ZooKeeper still answers after its parent died")
}

// processGone reports whether pid has exited: no /proc entry, or a zombie
// waiting for a reaper that is not us.
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesized command name.
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
