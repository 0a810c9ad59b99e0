// Package gcreserve holds a process-wide reserve on the Go heap: one
// pointer-free allocation that nothing reads or writes, kept alive so that
// the garbage collector counts it as live heap. The collector's heap goal
// is twice the live heap (GOGC=100), so a reserve of n bytes lets about n
// more bytes of short-lived garbage build up between two collections, and
// the collector runs that much less often. It is the "GC ballast" of
// long-running Go servers, for a library that must not set GOGC or
// GOMEMLIMIT for the program that embeds it.
//
// Why the storage engine wants one: its block memory lives outside the Go
// heap (internal/offheap) or is a small cache, so the heap the collector
// sees is a few MiB, and reads that return a Result per row or per Get
// (hundreds of bytes each, at millions per second) made it collect every
// few milliseconds. Each cycle costs fixed work on both processors, and in
// the peer harness's scans the collector ran more than a quarter of the
// time.
//
// The reserve costs address space, not memory: it is allocated without
// zeroing (strings.Builder.Grow), so pages fresh from the OS are never
// touched. What it does cost is the garbage it lets build up, in the worst
// case as many more resident bytes as the reserve's size.
//
// Several holders share one reserve, the size of the largest request: two
// regions' block caches in one process do not double it.
package gcreserve

import (
	"math"
	"runtime/metrics"
	"strings"
	"sync"
)

// A Reservation is one holder's request; Release ends it.
type Reservation struct {
	n        int64
	released bool
}

var reserve struct {
	mu   sync.Mutex
	reqs map[*Reservation]struct{}
	size int64
	// buf holds the reserve: its capacity is the allocation.
	buf *strings.Builder
}

// Acquire requests a reserve of at least n bytes until Release. n <= 0
// requests nothing (Release is still allowed).
func Acquire(n int64) *Reservation {
	r := &Reservation{n: max(n, 0)}
	reserve.mu.Lock()
	defer reserve.mu.Unlock()
	if reserve.reqs == nil {
		reserve.reqs = make(map[*Reservation]struct{})
	}
	reserve.reqs[r] = struct{}{}
	resizeLocked()
	return r
}

// Release ends r's request; the reserve shrinks to the largest request
// left (none: no reserve). Releasing twice is a no-op.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	reserve.mu.Lock()
	defer reserve.mu.Unlock()
	if r.released {
		return
	}
	r.released = true
	delete(reserve.reqs, r)
	resizeLocked()
}

// Size returns the reserve's size in bytes (what the collector counts may
// be a little more: the allocation is rounded up to whole pages).
func Size() int64 {
	reserve.mu.Lock()
	defer reserve.mu.Unlock()
	return reserve.size
}

func resizeLocked() {
	var want int64
	for r := range reserve.reqs {
		want = max(want, r.n)
	}
	if want == reserve.size {
		return
	}
	// The old reserve becomes garbage before the new one is made, so that
	// the two are never both counted by a collection's end.
	reserve.buf, reserve.size = nil, 0
	if want > 0 {
		b := new(strings.Builder)
		// Grow allocates without zeroing (internal/bytealg.MakeNoZero):
		// fresh pages stay untouched, so the reserve takes no memory.
		b.Grow(int(want))
		reserve.buf, reserve.size = b, want
	}
}

// Tuned reports whether the program has tuned the collector itself: GOGC
// other than 100, or a memory limit (GOMEMLIMIT, debug.SetMemoryLimit). A
// reserve would then work against its settings: under a memory limit the
// reserve's address space counts against the limit, and the program's
// GOGC already says how much garbage it allows.
func Tuned() bool {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false // a runtime without these metrics
	}
	return tuned(s[0].Value.Uint64(), s[1].Value.Uint64())
}

// tuned is Tuned on the metrics' values: GOGC=off reads as
// math.MaxUint64, and an unset limit as math.MaxInt64.
func tuned(gogc, limit uint64) bool {
	return gogc != 100 || limit < math.MaxInt64
}
