package region

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

const crashChildEnv = "REGIONKV_CRASH_CHILD"

// TestCrashChild is the child of TestCrashRecovery: it writes until it is
// killed, printing a line for every acknowledged write.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("run by TestCrashRecovery as a child process")
	}
	parts := strings.SplitN(spec, ",", 2)
	cycle, dir := parts[0], parts[1]
	r, err := Open(dir, crashOptions())
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(3)
	}
	// Each line is one write(2) to a pipe, so a kill never leaves half a line.
	out := os.Stdout
	val := make([]byte, 300)
	for i := 0; ; i++ {
		key := fmt.Sprintf("c%s-%06d", cycle, i)
		dur := wal.SyncWAL
		if i%3 == 0 {
			dur = wal.FSyncWAL
		}
		p := NewPut([]byte(key)).Add(fam, []byte("q"), val)
		p.Durability = dur
		if err := r.Put(p); err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "put %s\n", key)
		if i%5 == 0 {
			inc := NewIncrement([]byte("counter")).Add(fam, []byte("n"), 1)
			inc.Durability = dur
			if _, err := r.Increment(inc); err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(3)
			}
			fmt.Fprintf(out, "inc\n")
		}
		if i%7 == 0 && i > 0 {
			// Announce the delete: if the kill lands before its ack, the
			// parent cannot know whether it happened.
			fmt.Fprintf(out, "willdel c%s-%06d\n", cycle, i-1)
			del := NewDelete([]byte(fmt.Sprintf("c%s-%06d", cycle, i-1)))
			del.Durability = dur
			if err := r.Delete(del); err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(3)
			}
			fmt.Fprintf(out, "del c%s-%06d\n", cycle, i-1)
		}
	}
}

func crashOptions() Options {
	// A small flush size puts flushes (and WAL pruning) in the window that
	// the kill can hit.
	return Options{Families: []FamilyOptions{{Name: "f"}}, FlushSize: 128 << 10}
}

// TestCrashRecovery kills a writing child process with SIGKILL at random
// moments, reopens the region and checks that every acknowledged write is
// there, every acknowledged delete stays deleted, and the counter is exact
// (every acknowledged increment, and at most one more that was in flight).
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	// REGIONKV_CRASH_CYCLES runs longer; the default keeps CI quick.
	cycles := 20
	if v, err := strconv.Atoi(os.Getenv("REGIONKV_CRASH_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	present := map[string]bool{} // acknowledged puts not later deleted
	deleted := map[string]bool{}
	var incs int64
	for c := 0; c < cycles; c++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%s", crashChildEnv, c, dir))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		lines := make(chan string, 1<<16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		// Read the pipe to its end before Wait, which closes it: lines
		// still in it would be lost, and an acknowledged increment not
		// counted looks like a counter ahead of its acknowledgements (a
		// flake under load).
		var all []string
		for l := range lines { // closed at EOF: the killed child's end is closed
			all = append(all, l)
		}
		_ = cmd.Wait()
		acked := 0
		for _, l := range all {
			f := strings.Fields(l)
			switch f[0] {
			case "put":
				present[f[1]] = true
				acked++
			case "willdel":
				delete(present, f[1]) // in doubt until acknowledged
			case "del":
				deleted[f[1]] = true
			case "inc":
				incs++
			case "error":
				t.Fatalf("child failed: %s", l)
			}
		}
		r, err := Open(dir, crashOptions())
		require.NoError(t, err, "cycle %d", c)
		for k := range present {
			res, err := r.Get(NewGet([]byte(k)))
			require.NoError(t, err)
			require.False(t, res.IsEmpty(), "cycle %d: acknowledged put %s lost", c, k)
		}
		for k := range deleted {
			res, err := r.Get(NewGet([]byte(k)))
			require.NoError(t, err)
			require.True(t, res.IsEmpty(), "cycle %d: deleted row %s came back", c, k)
		}
		res, err := r.Get(NewGet([]byte("counter")))
		require.NoError(t, err)
		var n int64
		if v := res.Value(fam, []byte("n")); v != nil {
			n = int64(binary.BigEndian.Uint64(v))
		}
		// The write in flight at the kill may or may not have landed.
		require.GreaterOrEqual(t, n, incs, "cycle %d: acknowledged increments lost", c)
		require.LessOrEqual(t, n, incs+1, "cycle %d: counter ahead of acknowledged increments", c)
		incs = n
		require.NoError(t, r.Close())
		t.Logf("cycle %d: %d puts acknowledged, %d rows present, counter %d", c, acked, len(present), n)
	}
	t.Log("cycles=" + strconv.Itoa(cycles))
}
