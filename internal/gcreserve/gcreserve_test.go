package gcreserve

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

func liveHeap(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("no /gc/heap/live:bytes metric")
	}
	return int64(s[0].Value.Uint64())
}

// TestLargestRequest checks that holders share one reserve of the largest
// request, which shrinks as requests end.
func TestLargestRequest(t *testing.T) {
	a := Acquire(8 << 20)
	b := Acquire(16 << 20)
	c := Acquire(0)
	if got := Size(); got != 16<<20 {
		t.Fatalf("size with requests of 8 and 16 MiB = %d", got)
	}
	b.Release()
	if got := Size(); got != 8<<20 {
		t.Fatalf("size after releasing 16 MiB = %d", got)
	}
	b.Release() // a second release changes nothing
	if got := Size(); got != 8<<20 {
		t.Fatalf("size after releasing 16 MiB twice = %d", got)
	}
	a.Release()
	if got := Size(); got != 0 {
		t.Fatalf("size with only an empty request left = %d", got)
	}
	c.Release()
	var none *Reservation
	none.Release()
}

// TestCountedAsLive checks what the reserve is for: the collector counts it
// as live heap while it is held, and not after.
func TestCountedAsLive(t *testing.T) {
	const n = 64 << 20
	before := liveHeap(t)
	r := Acquire(n)
	held := liveHeap(t)
	r.Release()
	after := liveHeap(t)
	if held-before < n {
		t.Fatalf("live heap grew by %d with a %d-byte reserve", held-before, n)
	}
	if after-before > 8<<20 {
		t.Fatalf("live heap %d after release, %d before", after, before)
	}
}

// TestFewerCollections checks the effect on the collector: the same garbage
// takes far fewer collections with a reserve.
func TestFewerCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var sink [][]byte
	cycles := func() uint32 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		start := ms.NumGC
		for i := 0; i < 256<<10; i++ { // 256 MiB of short-lived 1 KiB buffers
			sink = append(sink, make([]byte, 1<<10))
			if len(sink) == 64 {
				sink = sink[:0]
			}
		}
		runtime.ReadMemStats(&ms)
		return ms.NumGC - start
	}
	without := cycles()
	r := Acquire(64 << 20)
	with := cycles()
	r.Release()
	if with*4 > without {
		t.Fatalf("%d collections with a 64 MiB reserve, %d without", with, without)
	}
	t.Logf("collections for 256 MiB of garbage: %d without a reserve, %d with 64 MiB", without, with)
}

// TestUntouched checks that the reserve takes address space, not memory:
// the process's resident set does not grow by its size, even where the
// reserve lands on heap memory used before and since returned to the OS.
// (Go 1.26 itself skips zeroing a span it knows was returned whole; the
// reserve's allocation zeroes nothing, so a partly returned span is not
// faulted back in either.)
func TestUntouched(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/statm")
	}
	rss := func() int64 {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		pages, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return pages * int64(os.Getpagesize())
	}
	const n = 256 << 20
	used := make([]byte, n)
	for i := 0; i < n; i += os.Getpagesize() {
		used[i] = 1
	}
	used = nil
	runtime.GC()
	debug.FreeOSMemory()
	before := rss()
	r := Acquire(n)
	defer r.Release()
	runtime.GC()
	if grew := rss() - before; grew > n/8 {
		t.Fatalf("resident set grew by %d bytes with a %d-byte reserve", grew, n)
	}
}

func TestTuned(t *testing.T) {
	for _, c := range []struct {
		gogc, limit uint64
		want        bool
	}{
		{100, math.MaxInt64, false},
		{200, math.MaxInt64, true},
		{0, math.MaxInt64, true},
		{math.MaxUint64, math.MaxInt64, true}, // GOGC=off
		{100, 4 << 30, true},
	} {
		if got := tuned(c.gogc, c.limit); got != c.want {
			t.Errorf("tuned(GOGC %d, limit %d) = %t", c.gogc, c.limit, got)
		}
	}
	// The process's own settings, as the test binary runs.
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	if got, want := Tuned(), tuned(s[0].Value.Uint64(), s[1].Value.Uint64()); got != want {
		t.Errorf("Tuned() = %t, metrics say %t", got, want)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	if !Tuned() {
		t.Errorf("Tuned() = false with GOGC 150")
	}
}
