package wal

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

const (
	crashDirEnv   = "REGIONKV_WAL_CRASH_DIR"
	crashStartEnv = "REGIONKV_WAL_CRASH_START"
)

// TestCrash re-runs the test binary as a child that appends SYNC_WAL entries
// from several goroutines and prints each acknowledged sequence id, kills it
// with SIGKILL at a random moment, and checks that replay finds every
// acknowledged entry and reports no corruption. The cycles share the
// directory, so each child also recovers (Open repairs the torn tail) the
// log its predecessor left. Beside them, the child appends large ASYNC_WAL
// entries, so that rounds copy kilobytes into a mapped segment: a kill in
// the middle of such a copy must leave a torn tail, not what reads as
// corruption (see orderedCopy).
//
// REGIONKV_WAL_CRASH_CYCLES sets the number of cycles (12).
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	cycles := 12
	if s := os.Getenv("REGIONKV_WAL_CRASH_CYCLES"); s != "" {
		var err error
		cycles, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	var start uint64
	acked := map[uint64]bool{}
	for cycle := 0; cycle < cycles; cycle++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStartEnv+"="+strconv.FormatUint(start, 10))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		ready := make(chan struct{})
		var readErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			once := sync.Once{}
			for sc.Scan() {
				line := sc.Text()
				if line == "ready" {
					once.Do(func() { close(ready) })
					continue
				}
				if s, ok := strings.CutPrefix(line, "ack "); ok {
					seq, err := strconv.ParseUint(s, 10, 64)
					if err != nil {
						readErr = err
						continue
					}
					acked[seq] = true
				}
			}
			once.Do(func() { close(ready) })
		}()
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Fatal("child did not start")
		}
		time.Sleep(time.Duration(20+rng.IntN(150)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill()) // SIGKILL
		wg.Wait()
		_ = cmd.Wait()
		require.NoError(t, readErr)

		seen := map[uint64]bool{}
		stats, err := ReplayFS(vfs.Default, dir, 0, func(k *Key, e *Edit) error {
			checkCrashEntry(t, k, e)
			require.False(t, seen[k.SeqNum], "seq %d twice", k.SeqNum)
			seen[k.SeqNum] = true
			return nil
		})
		require.NoError(t, err, "cycle %d", cycle)
		for seq := range acked {
			require.True(t, seen[seq], "cycle %d: acknowledged seq %d lost", cycle, seq)
		}
		t.Logf("cycle %d: %d acknowledged so far, %d entries, %d segments, torn tail %v (%d bytes)",
			cycle, len(acked), stats.Entries, stats.Segments, stats.TornTail, stats.DroppedBytes)
		start = stats.MaxSeq
	}
	require.NotEmpty(t, acked)
}

// TestCrashChild is the child of TestCrash; it does nothing unless started by
// it. It appends until killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only run by TestCrash")
	}
	start, err := strconv.ParseUint(os.Getenv(crashStartEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, Options{RollSize: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := newRegion(w, start)
	var mu sync.Mutex
	fmt.Println("ready")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq, err := r.write(SyncWAL)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Printf("ack %d\n", seq)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := r.writeWith(bigEdit, AsyncWAL); err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(1)
				}
			}
		}()
	}
	wg.Wait()
}

// bigEdit is testEdit(seq) with one more cell, of a few kilobytes.
func bigEdit(seq uint64) (*Key, *Edit) {
	k, e := testEdit(seq)
	k.EncodedRegionName = []byte("big0123456789abc")
	e.Cells = append(e.Cells, encoding.KeyValue{
		Row: []byte(fmt.Sprintf("row-%06d", seq)), Family: []byte("f"), Qualifier: []byte("big"),
		Timestamp: int64(seq), Type: encoding.TypePut,
		Value: bytes.Repeat([]byte{byte(seq), byte(seq >> 8), 'x'}, 1000+int(seq%300)),
	})
	return k, e
}

// checkCrashEntry checks that a replayed entry is testEdit(k.SeqNum) or
// bigEdit(k.SeqNum).
func checkCrashEntry(t testing.TB, k *Key, e *Edit) {
	t.Helper()
	if string(k.EncodedRegionName) != "big0123456789abc" {
		checkEntry(t, k, e)
		return
	}
	checkEntryOf(t, bigEdit, k, e)
}
