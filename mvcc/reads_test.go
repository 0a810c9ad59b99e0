package mvcc

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// write makes n writes through c, one at a time.
func write(c *Control, n int) {
	for i := 0; i < n; i++ {
		c.CompleteAndWait(c.Begin())
	}
}

func TestSmallestReadPoint(t *testing.T) {
	c := New(10)
	if got := c.SmallestReadPoint(); got != 10 {
		t.Fatalf("no reads: SmallestReadPoint() = %d, want the read point 10", got)
	}
	r := c.BeginRead()
	if r.Point() != 10 {
		t.Fatalf("BeginRead().Point() = %d, want 10", r.Point())
	}
	write(c, 5)
	for i := 0; i < 3; i++ {
		if got := c.SmallestReadPoint(); got != 10 {
			t.Fatalf("a read at 10 in progress: SmallestReadPoint() = %d, want 10", got)
		}
	}
	// A second read, later: the bound stays at the older one's.
	r2 := c.BeginRead()
	if r2.Point() != 15 {
		t.Fatalf("second read's point = %d, want 15", r2.Point())
	}
	c.EndRead(r)
	write(c, 5)
	if got := c.SmallestReadPoint(); got > 15 {
		t.Fatalf("a read at 15 in progress: SmallestReadPoint() = %d, want at most 15", got)
	}
	c.EndRead(r2)
	// With no read left, the bound catches up within two calls: one
	// retires the epoch the last read was in, the next the one after.
	c.SmallestReadPoint()
	if got := c.SmallestReadPoint(); got != 20 {
		t.Fatalf("no reads: SmallestReadPoint() = %d, want the read point 20", got)
	}
}

func TestReadsAllocateNothing(t *testing.T) {
	c := New(0)
	if n := testing.AllocsPerRun(100, func() {
		r := c.BeginRead()
		c.SmallestReadPoint()
		c.EndRead(r)
	}); n != 0 {
		t.Fatalf("BeginRead, SmallestReadPoint and EndRead allocate %.0f times", n)
	}
}

// TestSmallestReadPointConcurrent checks the bound against the reads in
// progress while readers come and go and writers move the read point: a
// checker takes the bound and then finds every read it can see published
// at or above it. A read published after the bound was taken began after
// it too (BeginRead precedes publishing), so its point is at or above the
// read point then, which is at or above the bound.
func TestSmallestReadPointConcurrent(t *testing.T) {
	const readers = 8
	rounds := 5000
	if testing.Short() {
		rounds = 1000
	}
	c := New(0)
	var (
		slots   [readers]atomic.Uint64 // point+1 of the reader's read in progress, 0 if none
		stop    atomic.Bool
		failure atomic.Pointer[string]
		wg      sync.WaitGroup
	)
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for !stop.Load() {
				r := c.BeginRead()
				slots[i].Store(r.Point() + 1)
				if rng.IntN(2) == 0 {
					runtime.Gosched() // descheduled mid-read
				}
				slots[i].Store(0)
				c.EndRead(r)
			}
		}(i)
	}
	wg.Add(1)
	go func() { // the writers, one at a time
		defer wg.Done()
		for !stop.Load() {
			write(c, 1)
			runtime.Gosched()
		}
	}()
	last := uint64(0)
	// Until the bound has moved well on: the goroutines share the
	// processors with the checker, which yields to them each round.
	for n := 0; (n < rounds || last < 1000) && n < 100*rounds && failure.Load() == nil; n++ {
		runtime.Gosched()
		s := c.SmallestReadPoint()
		if s < last {
			msg := fmt.Sprintf("SmallestReadPoint went back from %d to %d", last, s)
			failure.Store(&msg)
		}
		last = s
		if rp := c.ReadPoint(); s > rp {
			msg := fmt.Sprintf("SmallestReadPoint %d above the read point %d", s, rp)
			failure.Store(&msg)
		}
		for i := range slots {
			if p := slots[i].Load(); p != 0 && p-1 < s {
				msg := fmt.Sprintf("reader %d reads at %d, below SmallestReadPoint %d", i, p-1, s)
				failure.Store(&msg)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if p := failure.Load(); p != nil {
		t.Fatal(*p)
	}
	if last < 1000 {
		t.Fatalf("the bound never moved (read point %d)", c.ReadPoint())
	}
}
