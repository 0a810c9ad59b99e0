package region

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRowLockSharedAndExclusive(t *testing.T) {
	var l rowLocks
	row := []byte("row")
	a, err := l.lock(context.Background(), row, false, time.Second, nil)
	require.NoError(t, err)
	bl, err := l.lock(context.Background(), []byte("row"), false, time.Second, nil) // shared with a
	require.NoError(t, err)
	require.Same(t, a, bl)

	// An exclusive waiter waits for both readers, and times out.
	_, err = l.lock(context.Background(), row, true, 20*time.Millisecond, nil)
	require.ErrorIs(t, err, ErrRowLockTimeout)

	got := make(chan *rowLock)
	errc := make(chan error, 1)
	go func() {
		rl, err := l.lock(context.Background(), row, true, 10*time.Second, nil)
		if err != nil {
			errc <- err
			return
		}
		got <- rl
	}()
	l.unlock(a, false)
	select {
	case <-got:
		t.Fatal("exclusive lock granted while a reader holds the row")
	case <-time.After(20 * time.Millisecond):
	}
	l.unlock(bl, false)
	var x *rowLock
	select {
	case x = <-got:
	case err := <-errc:
		t.Fatal(err)
	}

	// Readers and writers wait for the writer; other rows do not.
	_, err = l.lock(context.Background(), row, false, 20*time.Millisecond, nil)
	require.ErrorIs(t, err, ErrRowLockTimeout)
	other, err := l.lock(context.Background(), []byte("other"), true, time.Second, nil)
	require.NoError(t, err)
	l.unlock(other, true)
	l.unlock(x, true)
	again, err := l.lock(context.Background(), row, true, time.Second, nil)
	require.NoError(t, err)
	l.unlock(again, true)
	for i := range l.shards {
		require.Empty(t, l.shards[i].locks, "shard %d holds released locks", i)
		require.Equal(t, [rowLockSlots]*rowLock{}, l.shards[i].slots, "shard %d holds released locks", i)
	}
}

// TestRowLockHashCollision checks rows that share a hash: they are locked
// independently, and release unlinks the right one.
func TestRowLockHashCollision(t *testing.T) {
	var s rowLockShard
	const h = 42
	a, b, c := s.insert(h, []byte("a"), nil), s.insert(h, []byte("b"), nil), s.insert(h, []byte("c"), nil)
	require.Same(t, a, s.find(h, []byte("a")))
	require.Same(t, b, s.find(h, []byte("b")))
	require.Same(t, c, s.find(h, []byte("c")))
	require.Nil(t, s.find(h, []byte("d")))
	s.remove(b)
	require.Nil(t, s.find(h, []byte("b")))
	require.Same(t, a, s.find(h, []byte("a")))
	require.Same(t, c, s.find(h, []byte("c")))
	s.remove(c)
	s.remove(a)
	require.Empty(t, s.locks)
	require.Equal(t, [rowLockSlots]*rowLock{}, s.slots)
	// Reused objects take their new row.
	d := s.insert(h, []byte("d"), nil)
	require.Equal(t, "d", string(d.key))
	require.Same(t, d, s.find(h, []byte("d")))
}

// TestRowLockShardSpill holds more hash chains in one shard than it has
// slots, so that some go to its map, with collisions in both, and releases
// them in several orders: every held lock is found until it is released,
// and a shard left empty holds nothing.
func TestRowLockShardSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var s rowLockShard
		held := map[string]*rowLock{}
		n := 1 + rng.IntN(4*rowLockSlots+4)
		for i := 0; i < n; i++ {
			row := fmt.Sprintf("r%d", i)
			h := uint64(rng.IntN(rowLockSlots + 2)) // few hashes: collisions
			held[row] = s.insert(h, []byte(row), nil)
		}
		rows := make([]string, 0, len(held))
		for row := range held {
			rows = append(rows, row)
		}
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for k, row := range rows {
			rl := held[row]
			s.remove(rl)
			delete(held, row)
			require.Nil(t, s.find(rl.hash, []byte(row)), "round %d: %s after release", round, row)
			for _, other := range rows[k+1:] {
				o := held[other]
				require.Same(t, o, s.find(o.hash, []byte(other)), "round %d: %s", round, other)
			}
		}
		require.Empty(t, s.locks, "round %d", round)
		require.Equal(t, [rowLockSlots]*rowLock{}, s.slots, "round %d", round)
	}
}

// TestRowLockExclusion has writers increment a plain counter per row under
// the exclusive lock, with readers taking it shared meanwhile; the race
// detector and the final counts catch a lock that is not exclusive.
func TestRowLockExclusion(t *testing.T) {
	var l rowLocks
	const rows, workers, each = 4, 8, 300
	var counts [rows]int
	var shared atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Half the workers bring their own lock memory, reused from
			// lock to lock and row to row, as a write's scratch is.
			var own *rowLock
			if w%2 == 0 {
				own = new(rowLock)
			}
			for i := 0; i < each; i++ {
				k := (w + i) % rows
				row := []byte(fmt.Sprintf("row%d", k))
				excl := i%3 != 0
				rl, err := l.lock(context.Background(), row, excl, 10*time.Second, own)
				if err != nil {
					t.Error(err)
					return
				}
				if excl {
					counts[k]++
				} else {
					shared.Add(1)
				}
				l.unlock(rl, excl)
			}
		}(w)
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	require.Equal(t, workers*each, total+int(shared.Load()))
}

// TestRowLockOwn: an exclusive lock of a free row is the caller's own
// memory, which waiters find in the table; released, it leaves the table
// and never joins the shard's free list, and it serves the next lock of
// another row. A shared lock never takes own, and an exclusive lock of a
// row held already waits without it.
func TestRowLockOwn(t *testing.T) {
	var l rowLocks
	var own rowLock
	row := []byte("row")
	rl, err := l.lock(context.Background(), row, true, time.Second, &own)
	require.NoError(t, err)
	require.Same(t, &own, rl)
	require.Equal(t, row, own.key)

	// A reader waits for it, and gets a lock of the free list's once it
	// is released.
	got := make(chan *rowLock, 1)
	go func() {
		r, err := l.lock(context.Background(), row, false, 10*time.Second, nil)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	require.Eventually(t, func() bool {
		s := own.shard
		s.mu.Lock()
		defer s.mu.Unlock()
		return own.waitCh != nil
	}, 10*time.Second, time.Millisecond, "the reader never waited on the owned lock")
	s := own.shard
	l.unlock(rl, true)
	require.Nil(t, own.shard)
	require.Nil(t, own.waitCh)
	reader := <-got
	require.NotSame(t, &own, reader)
	s.mu.Lock()
	for _, f := range s.free {
		require.NotSame(t, &own, f, "an owned lock joined the free list")
	}
	s.mu.Unlock()

	// Held shared: an exclusive lock with own waits (and times out)
	// without entering own into the table.
	_, err = l.lock(context.Background(), row, true, 20*time.Millisecond, &own)
	require.ErrorIs(t, err, ErrRowLockTimeout)
	require.Nil(t, own.shard)
	// A shared lock ignores own.
	r2, err := l.lock(context.Background(), []byte("other"), false, time.Second, &own)
	require.NoError(t, err)
	require.NotSame(t, &own, r2)
	l.unlock(r2, false)
	l.unlock(reader, false)

	// Free again, own serves another row.
	rl, err = l.lock(context.Background(), []byte("another"), true, time.Second, &own)
	require.NoError(t, err)
	require.Same(t, &own, rl)
	require.Equal(t, []byte("another"), own.key)
	l.unlock(rl, true)
	for i := range l.shards {
		require.Empty(t, l.shards[i].locks, "shard %d holds released locks", i)
		require.Equal(t, [rowLockSlots]*rowLock{}, l.shards[i].slots, "shard %d holds released locks", i)
	}
}
