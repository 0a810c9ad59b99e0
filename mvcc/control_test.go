package mvcc

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func checkPoints(t *testing.T, c *Control, read, write uint64) {
	t.Helper()
	if got := c.ReadPoint(); got != read {
		t.Fatalf("ReadPoint() = %d, want %d", got, read)
	}
	if got := c.WritePoint(); got != write {
		t.Fatalf("WritePoint() = %d, want %d", got, write)
	}
}

// waitUntil polls cond until it holds, failing t after a generous deadline.
// Tests use it only to order goroutines (for example "this waiter is now
// blocked"); Control itself never polls.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
	}
}

// blocked reports whether a CompleteAndWait on e has completed it and is
// waiting for it to be retired.
func blocked(c *Control, e *WriteEntry) bool {
	return e.state.Load() == entryCompleted|entryWaiting
}

func TestSequential(t *testing.T) {
	c := New(100)
	checkPoints(t, c, 100, 100)

	e1 := c.Begin()
	if got := e1.WriteNumber(); got != 101 {
		t.Fatalf("first write number = %d, want 101", got)
	}
	checkPoints(t, c, 100, 101)
	if !c.Complete(e1) {
		t.Fatal("Complete of the only entry reported it not visible")
	}
	checkPoints(t, c, 101, 101)
	// A repeated Complete is a no-op that reports visibility.
	if !c.Complete(e1) {
		t.Fatal("repeated Complete reported not visible")
	}
	checkPoints(t, c, 101, 101)

	e2, e3 := c.Begin(), c.Begin()
	checkPoints(t, c, 101, 103)
	if !c.Complete(e2) {
		t.Fatal("Complete of the head entry reported not visible")
	}
	checkPoints(t, c, 102, 103)
	c.CompleteAndWait(e3) // the head: must not block
	checkPoints(t, c, 103, 103)

	// Await on an idle Control consumes one number and returns at once.
	c.Await()
	checkPoints(t, c, 104, 104)

	// The zero value behaves as New(0).
	var z Control
	checkPoints(t, &z, 0, 0)
	z.CompleteAndWait(z.Begin())
	checkPoints(t, &z, 1, 1)
}

func TestBeginWith(t *testing.T) {
	c := New(7)
	var got []uint64
	e := c.BeginWith(func(n uint64) {
		// The action runs with the queue lock held and sees its own number
		// already published as the write point.
		if c.mu.TryLock() {
			c.mu.Unlock()
			t.Error("BeginWith action ran without the lock held")
		}
		if wp := c.WritePoint(); wp != n {
			t.Errorf("WritePoint() in action = %d, want %d", wp, n)
		}
		got = append(got, n)
	})
	if len(got) != 1 || got[0] != 8 || e.WriteNumber() != 8 {
		t.Fatalf("action saw %v, entry number %d; want [8], 8", got, e.WriteNumber())
	}
	c.CompleteAndWait(e)
	checkPoints(t, c, 8, 8)
}

func TestOutOfOrderComplete(t *testing.T) {
	c := New(0)
	e1, e2, e3 := c.Begin(), c.Begin(), c.Begin()
	if c.Complete(e3) {
		t.Fatal("Complete(3) reported visible with 1 and 2 in flight")
	}
	checkPoints(t, c, 0, 3)
	if c.Complete(e2) {
		t.Fatal("Complete(2) reported visible with 1 in flight")
	}
	checkPoints(t, c, 0, 3)
	if !c.Complete(e1) {
		t.Fatal("Complete(1) reported not visible")
	}
	// One drain retires all three.
	checkPoints(t, c, 3, 3)
	if got := inFlight(c); got != 0 {
		t.Fatalf("%d entries in flight after all completed, want 0", got)
	}
}

// TestOutOfOrderWaiters completes 3, then 2, then 1 with CompleteAndWait from
// three goroutines: the first two block, and the last call moves the read
// point from 0 straight to 3 and releases both.
func TestOutOfOrderWaiters(t *testing.T) {
	defer checkNoLeaks(t)()
	c := New(0)
	e := []*WriteEntry{c.Begin(), c.Begin(), c.Begin()}
	returned := make([]chan uint64, 3)
	wait := func(i int) {
		returned[i] = make(chan uint64, 1)
		go func() {
			c.CompleteAndWait(e[i])
			returned[i] <- c.ReadPoint()
		}()
	}

	wait(2)
	waitUntil(t, "waiter 3 blocks", func() bool { return blocked(c, e[2]) })
	wait(1)
	waitUntil(t, "waiter 2 blocks", func() bool { return blocked(c, e[1]) })
	checkPoints(t, c, 0, 3)
	for _, i := range []int{1, 2} {
		select {
		case rp := <-returned[i]:
			t.Fatalf("waiter %d returned early, read point %d", i+1, rp)
		default:
		}
	}

	wait(0)
	for i := range returned {
		select {
		case rp := <-returned[i]:
			if rp != 3 {
				t.Errorf("waiter %d saw read point %d, want 3", i+1, rp)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d never woke", i+1)
		}
	}
	checkPoints(t, c, 3, 3)
}

func TestAwait(t *testing.T) {
	defer checkNoLeaks(t)()
	c := New(10)
	e := c.Begin()
	done := make(chan struct{})
	go func() {
		c.Await()
		close(done)
	}()
	// The marker is entry 12, behind e.
	waitUntil(t, "Await blocks", func() bool {
		rp := c.readPoint.Load()
		return inFlight(c) == 2 && c.ring.Load().at(rp+2).state.Load()&entryWaiting != 0
	})
	select {
	case <-done:
		t.Fatal("Await returned with an earlier write in flight")
	default:
	}
	// A write begun after Await does not hold it up.
	later := c.Begin()
	if !c.Complete(e) {
		t.Fatal("Complete(e) reported not visible")
	}
	<-done
	checkPoints(t, c, 12, 13)
	c.Complete(later)
	checkPoints(t, c, 13, 13)
}

func TestAdvanceTo(t *testing.T) {
	c := New(5)
	if err := c.AdvanceTo(10); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, c, 10, 10)
	// Never backwards.
	if err := c.AdvanceTo(7); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, c, 10, 10)
	if err := c.AdvanceTo(10); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, c, 10, 10)

	e := c.Begin()
	if e.WriteNumber() != 11 {
		t.Fatalf("write number after AdvanceTo(10) = %d, want 11", e.WriteNumber())
	}
	err := c.AdvanceTo(20)
	if !errors.Is(err, ErrWritesInFlight) {
		t.Fatalf("AdvanceTo with a write in flight: err = %v, want ErrWritesInFlight", err)
	}
	checkPoints(t, c, 10, 11)

	// Completed but not retired is still in flight.
	e2 := c.Begin()
	c.Complete(e2)
	if err := c.AdvanceTo(20); !errors.Is(err, ErrWritesInFlight) {
		t.Fatalf("AdvanceTo with an unretired write: err = %v, want ErrWritesInFlight", err)
	}

	c.Complete(e)
	checkPoints(t, c, 12, 12)
	if err := c.AdvanceTo(20); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, c, 20, 20)
	if got := c.Begin().WriteNumber(); got != 21 {
		t.Fatalf("write number after AdvanceTo(20) = %d, want 21", got)
	}
}

// TestQueueWrap keeps more entries in flight than the initial ring holds,
// completes them in a random order, and checks the read point after each.
func TestQueueWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := New(0)
	var model uint64 // read point computed independently
	done := map[uint64]bool{}
	var inFlight []*WriteEntry
	for round := 0; round < 200; round++ {
		for k := rng.IntN(3 * minRingSize); k > 0; k-- {
			inFlight = append(inFlight, c.Begin())
		}
		for k := rng.IntN(len(inFlight) + 1); k > 0; k-- {
			i := rng.IntN(len(inFlight))
			e := inFlight[i]
			inFlight[i] = inFlight[len(inFlight)-1]
			inFlight = inFlight[:len(inFlight)-1]
			visible := c.Complete(e)
			done[e.WriteNumber()] = true
			for done[model+1] {
				model++
			}
			if got := c.ReadPoint(); got != model {
				t.Fatalf("round %d: read point %d, want %d", round, got, model)
			}
			if want := e.WriteNumber() <= model; visible != want {
				t.Fatalf("round %d: Complete(%d) = %t, want %t", round, e.WriteNumber(), visible, want)
			}
		}
	}
	for _, e := range inFlight {
		c.Complete(e)
	}
	checkPoints(t, c, c.WritePoint(), c.WritePoint())
}

func requireAssertion(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.HasAssertionFailure(err) {
			t.Fatalf("%s: recovered %v, want an assertion failure", what, r)
		}
	}()
	f()
}

func TestAssertions(t *testing.T) {
	requireAssertion(t, "nil entry", func() { New(0).Complete(nil) })

	requireAssertion(t, "entry of another Control", func() {
		a, b := New(0), New(0)
		a.Begin()
		a.Complete(b.Begin())
	})

	requireAssertion(t, "entry from the future", func() {
		a, b := New(0), New(5)
		a.Begin()
		a.Complete(b.Begin())
	})

	requireAssertion(t, "entry missing from the queue", func() {
		c := New(0)
		e1 := c.Begin()
		// Corrupt the queue: entry 1's slot holds another entry 1.
		r := c.ring.Load()
		other := &WriteEntry{}
		other.owner.Store(e1.owner.Load())
		other.writeNumber.Store(1)
		r.slots[1&r.mask].Store(other)
		c.Complete(e1)
	})

	requireAssertion(t, "entry waited on twice", func() {
		c := New(0)
		c.Begin()
		e2 := c.Begin()
		// As if another goroutine were blocked in CompleteAndWait(e2).
		e2.state.Store(entryCompleted | entryWaiting)
		c.CompleteAndWait(e2)
	})
}

// watchReadPoint checks, until quit is closed, that c's read point never
// moves back and never passes a write that done does not report done.
func watchReadPoint(t *testing.T, c *Control, done func(n uint64) bool, quit <-chan struct{}) {
	var checked uint64
	for {
		select {
		case <-quit:
			return
		default:
		}
		rp := c.ReadPoint()
		if rp < checked {
			t.Errorf("reader: read point went back from %d to %d", checked, rp)
			return
		}
		for ; checked < rp; checked++ {
			if !done(checked + 1) {
				t.Errorf("reader: read point %d but write %d not done", rp, checked+1)
				return
			}
		}
		runtime.Gosched()
	}
}

// TestConcurrent runs many writers and a few readers. Writers begin, take a
// random detour, set the flag of their write number, and complete (mostly
// with CompleteAndWait). It checks that:
//   - the read point never goes backwards, as seen by any goroutine;
//   - when CompleteAndWait returns, the read point covers the entry;
//   - a reader that observes read point R finds the flag of every write ≤ R
//     set (the flags are plain bools, so -race also checks that observing R
//     orders the reader after those writes);
//   - at the end every write is visible and the queue is empty.
func TestConcurrent(t *testing.T) {
	defer checkNoLeaks(t)()
	const (
		writers = 32
		readers = 3
	)
	perWriter := 1000
	if testing.Short() {
		perWriter = 100
	}
	total := writers * perWriter
	c := New(0)
	written := make([]bool, total+1)

	var stop sync.WaitGroup
	quit := make(chan struct{})
	for r := 0; r < readers; r++ {
		stop.Add(1)
		go func() {
			defer stop.Done()
			watchReadPoint(t, c, func(n uint64) bool { return written[n] }, quit)
		}()
	}

	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 42))
			var last uint64
			for i := 0; i < perWriter; i++ {
				var e *WriteEntry
				if rng.IntN(2) == 0 {
					e = c.Begin()
				} else {
					e = c.BeginWith(func(uint64) {})
				}
				n := e.WriteNumber()
				if n > uint64(total) {
					t.Errorf("write number %d beyond %d", n, total)
					return
				}
				if rng.IntN(4) == 0 {
					runtime.Gosched()
				}
				written[n] = true
				if rng.IntN(8) == 0 {
					c.Complete(e)
					if rp := c.ReadPoint(); rp < last {
						t.Errorf("writer: read point went back from %d to %d", last, rp)
						return
					}
					continue
				}
				c.CompleteAndWait(e)
				rp := c.ReadPoint()
				if rp < n {
					t.Errorf("CompleteAndWait(%d) returned with read point %d", n, rp)
					return
				}
				if rp < last {
					t.Errorf("writer: read point went back from %d to %d", last, rp)
					return
				}
				last = rp
			}
		}(uint64(w))
	}
	wg.Wait()
	close(quit)
	stop.Wait()
	if t.Failed() {
		return
	}
	checkPoints(t, c, uint64(total), uint64(total))
	if got := inFlight(c); got != 0 {
		t.Fatalf("%d entries in flight at the end, want 0", got)
	}
}

// TestCompleteRace has writers that only Complete, never wait, racing their
// lock-free completions against each other's drains. A completed entry at the
// head that no drain retires (a lost drain) would leave the read point below
// the write point at the end, with every entry completed.
func TestCompleteRace(t *testing.T) {
	const writers = 8
	perWriter := 20000
	if testing.Short() {
		perWriter = 2000
	}
	for round := 0; round < 5; round++ {
		c := New(0)
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(round)))
				held := make([]*WriteEntry, 0, 4)
				for i := 0; i < perWriter; i++ {
					held = append(held, c.Begin())
					// Complete a random one of up to four held entries, so
					// completions come out of order within a goroutine too.
					if len(held) == cap(held) || rng.IntN(2) == 0 {
						j := rng.IntN(len(held))
						c.Complete(held[j])
						held[j] = held[len(held)-1]
						held = held[:len(held)-1]
					}
					if rng.IntN(16) == 0 {
						runtime.Gosched()
					}
				}
				for _, e := range held {
					c.Complete(e)
				}
			}(uint64(w))
		}
		wg.Wait()
		checkPoints(t, c, uint64(writers*perWriter), uint64(writers*perWriter))
		if got := inFlight(c); got != 0 {
			t.Fatalf("%d entries in flight at the end, want 0", got)
		}
	}
}

func ExampleControl() {
	c := New(0)
	e := c.Begin()
	// ... append to the WAL, insert into the memstore with sequence id
	// e.WriteNumber() ...
	c.CompleteAndWait(e)
	fmt.Println(e.WriteNumber(), c.ReadPoint())
	// Output: 1 1
}

// TestBeginWithPanic: an action that panics leaves neither the lock held
// nor its entry in the queue: later writes begin, complete and become
// visible.
func TestBeginWithPanic(t *testing.T) {
	var c Control
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the action's panic did not reach the caller")
			}
		}()
		c.BeginWith(func(uint64) { panic("boom") })
	}()
	done := make(chan struct{})
	go func() {
		e := c.Begin()
		c.CompleteAndWait(e)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a write after the panic did not complete")
	}
	if rp, wp := c.ReadPoint(), c.WritePoint(); rp != wp || rp != 2 {
		t.Fatalf("read point %d, write point %d; want both 2", rp, wp)
	}
}

// inFlight returns the number of entries begun and not retired.
func inFlight(c *Control) uint64 { return c.writePoint.Load() - c.readPoint.Load() }

// TestConcurrentGrowth: with a full ring's worth of entries in flight,
// goroutines that hold many entries each make the ring be replaced by larger
// ones while other goroutines complete and drain entries, through the old
// ring or the new; every write becomes visible, and every CompleteAndWait
// returns with its write visible.
func TestConcurrentGrowth(t *testing.T) {
	defer checkNoLeaks(t)()
	const writers, burst = 8, 24 // up to 192 in flight: two replacements
	rounds := 40
	if raceEnabled {
		rounds = 10
	}
	for iter := 0; iter < 5; iter++ {
		c := New(uint64(iter) * 1000)
		// The first ring's worth of entries stays in flight until the
		// writers have made the ring grow: they drain through the new ring
		// while this goroutine's entries, at its head, complete below.
		first := make([]*WriteEntry, minRingSize)
		for i := range first {
			first[i] = c.Begin()
		}
		var wg sync.WaitGroup
		var failed atomic.Value
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(iter), uint64(w)))
				for range rounds {
					held := make([]*WriteEntry, 0, burst)
					for k := 1 + rng.IntN(burst); k > 0; k-- {
						held = append(held, c.Begin())
					}
					rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
					for i, e := range held {
						if i == len(held)-1 {
							c.CompleteAndWait(e)
							if c.ReadPoint() < e.WriteNumber() {
								failed.Store(fmt.Sprintf("CompleteAndWait(%d) returned at read point %d", e.WriteNumber(), c.ReadPoint()))
							}
						} else {
							c.Complete(e)
						}
					}
				}
			}()
		}
		for len(c.ring.Load().slots) == minRingSize {
			runtime.Gosched()
		}
		rand.New(rand.NewPCG(uint64(iter), 99)).Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
		for _, e := range first {
			c.Complete(e)
			runtime.Gosched()
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			t.Fatal(f)
		}
		checkPoints(t, c, c.WritePoint(), c.WritePoint())
	}
}

// TestCompleteAfterConcurrentRetire: a Complete that finds its entry at the
// head of the queue may be overtaken, before it looks the entry up in the
// ring, by another goroutine's drain, which retires the entry (it is marked
// completed already), and by Begins that reuse the entry's slot or replace
// the ring. The entry is then visible, and Complete must say so, not report
// a broken queue (which a tool/pe test once hit with 200 writers).
func TestCompleteAfterConcurrentRetire(t *testing.T) {
	for _, grow := range []bool{false, true} {
		c := New(0)
		es := make([]*WriteEntry, minRingSize)
		for i := range es {
			es[i] = c.Begin()
		}
		for _, e := range es[2:] {
			require.False(t, c.Complete(e))
		}
		require.True(t, c.Complete(es[0]))
		require.EqualValues(t, 1, c.ReadPoint())

		// Complete(es[1]) loads read point 1; before it looks at the ring,
		// "another goroutine" drains (es[1] is marked completed by then)
		// and begins enough writes to reuse es[1]'s slot, or to grow the
		// ring past it.
		var later []*WriteEntry
		testHookBeforeRingCheck = func() {
			testHookBeforeRingCheck = nil
			c.drain()
			n := 2
			if grow {
				n = minRingSize + 1
			}
			for i := 0; i < n; i++ {
				later = append(later, c.Begin())
			}
		}
		require.True(t, c.Complete(es[1]), "grow=%t", grow)
		require.Nil(t, testHookBeforeRingCheck, "the hook did not run")
		require.EqualValues(t, minRingSize, c.ReadPoint())
		if grow {
			require.Greater(t, len(c.ring.Load().slots), minRingSize)
		}
		for _, e := range later {
			c.CompleteAndWait(e)
		}
		checkPoints(t, c, uint64(minRingSize+len(later)), uint64(minRingSize+len(later)))
	}
}

// TestBeginInto checks an entry of the caller's memory through its life:
// idle when zero, busy from BeginInto until Finish, idle after it, and
// reusable, while entries it left in the ring are found there again.
func TestBeginInto(t *testing.T) {
	c := New(0)
	var e WriteEntry
	require.True(t, e.Idle(), "zero entry")
	var got uint64
	c.BeginInto(&e, func(n uint64) { got = n })
	require.Equal(t, uint64(1), got)
	require.Equal(t, uint64(1), e.WriteNumber())
	require.False(t, e.Idle(), "begun")
	requireAssertion(t, "begun twice", func() { c.BeginInto(&e, nil) })
	c.Finish(&e)
	require.True(t, e.Idle(), "finished")
	checkPoints(t, c, 1, 1)

	// Completed but not retired: an earlier write is in flight.
	x := c.Begin() // 2
	c.BeginInto(&e, nil)
	require.Equal(t, uint64(3), e.WriteNumber())
	require.False(t, c.Complete(&e))
	require.False(t, e.Idle(), "completed behind a write in flight")
	requireAssertion(t, "begun again before retired", func() { c.BeginInto(&e, nil) })
	done := make(chan struct{})
	go func() { defer close(done); c.Finish(&e) }()
	waitUntil(t, "Finish blocked", func() bool { return e.state.Load()&entryWaiting != 0 })
	c.CompleteAndWait(x)
	<-done
	require.True(t, e.Idle(), "finished after the write ahead")
	checkPoints(t, c, 3, 3)

	// The ring slot of write 1 still holds e, now write 3 and retired;
	// fill the ring up to the write before that slot comes round again and
	// reuse e there: a drain that reaches the slot must read e's current
	// number, not retire it for the write the slot is for.
	size := uint64(len(c.ring.Load().slots))
	for c.WritePoint() < size-1 {
		c.CompleteAndWait(c.Begin())
	}
	c.BeginInto(&e, nil) // write size, in slot 0
	require.Equal(t, size, e.WriteNumber())
	require.Same(t, &e, c.ring.Load().at(size+1), "slot of write size+1 holds e from write 1")
	c.Finish(&e)
	checkPoints(t, c, size, size)
	y := c.Begin()
	require.Same(t, y, c.ring.Load().at(size+1))
	c.CompleteAndWait(y)
	checkPoints(t, c, size+1, size+1)
}

// TestBeginIntoOtherControl reuses an entry in a second Control (regions
// share the pooled scratch that holds it) while the first one's ring still
// holds it in the slot of its next write. The two count write numbers
// apart, and here the entry's new number is the one the first Control's
// drain looks for next: it must not take the entry for its own write and
// move its read point past a write never begun.
func TestBeginIntoOtherControl(t *testing.T) {
	a := New(0)
	var e WriteEntry
	a1 := a.Begin()
	a.BeginInto(&e, nil) // 2
	a.CompleteAndWait(a1)
	a.Finish(&e)
	size := uint64(len(a.ring.Load().slots))
	for a.WritePoint() < size {
		a.CompleteAndWait(a.Begin())
	}
	w := a.Begin() // size+1, in flight
	require.Same(t, &e, a.ring.Load().at(size+2), "the slot after w's holds e")

	b := New(size + 1)
	b.BeginInto(&e, nil)
	require.Equal(t, size+2, e.WriteNumber())
	b.Finish(&e)
	checkPoints(t, b, size+2, size+2)

	a.CompleteAndWait(w) // drains on to the slot that holds e
	checkPoints(t, a, size+1, size+1)
	a.CompleteAndWait(a.Begin())
	checkPoints(t, a, size+2, size+2)
}

// TestBeginIntoConcurrent is TestConcurrent with each writer reusing one
// entry of its own for all its writes, beside writers whose entries are
// allocated (BeginWith), with more writers than the first ring holds, so
// that rings grow and slots hold entries since begun again, and with two
// Controls, so that an entry is begun in one and then in the other, as the
// writers of two regions share pooled scratch. A drain that touched an
// entry after Finish returned, or took a reused entry for the write its
// stale slot was for, would move a read point past a write not done, or
// stall it.
func TestBeginIntoConcurrent(t *testing.T) {
	defer checkNoLeaks(t)()
	const writers = 2*minRingSize + 3
	perWriter := 400
	if testing.Short() {
		perWriter = 60
	}
	total := writers * perWriter
	cs := [2]*Control{New(0), New(0)}
	var written [2][]atomic.Bool
	for i := range written {
		written[i] = make([]atomic.Bool, total+1)
	}
	quit := make(chan struct{})
	var readers sync.WaitGroup
	for i, c := range cs {
		readers.Add(1)
		go func() {
			defer readers.Done()
			watchReadPoint(t, c, func(n uint64) bool { return written[i][n].Load() }, quit)
		}()
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			own := seed%4 != 0
			var mine WriteEntry
			for i := 0; i < perWriter; i++ {
				ci := rng.IntN(2)
				c := cs[ci]
				var e *WriteEntry
				var n uint64
				if own {
					if !mine.Idle() {
						t.Errorf("entry not idle after Finish")
						return
					}
					e = &mine
					c.BeginInto(e, func(wn uint64) { n = wn })
				} else {
					e = c.BeginWith(func(wn uint64) { n = wn })
				}
				if e.WriteNumber() != n || n > uint64(total) {
					t.Errorf("write number %d, action saw %d (of %d)", e.WriteNumber(), n, total)
					return
				}
				if rng.IntN(3) == 0 {
					runtime.Gosched()
				}
				written[ci][n].Store(true)
				if own {
					c.Finish(e)
				} else {
					c.CompleteAndWait(e)
				}
				if rp := c.ReadPoint(); rp < n {
					t.Errorf("write %d returned with read point %d", n, rp)
					return
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	close(quit)
	readers.Wait()
	if t.Failed() {
		return
	}
	for i, c := range cs {
		if rp, wp := c.ReadPoint(), c.WritePoint(); rp != wp {
			t.Fatalf("control %d: read point %d, write point %d at the end", i, rp, wp)
		}
	}
	if sum := cs[0].WritePoint() + cs[1].WritePoint(); sum != uint64(total) {
		t.Fatalf("%d writes numbered, want %d", sum, total)
	}
}
