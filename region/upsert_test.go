package region

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// memCells returns the number of cells in family's memstore.
func memCells(r *Region, family string) int64 {
	return r.storeSet().byFamily[family].mem.Size().CellCount
}

// TestIncrementUpserts: Increments and Appends to a family of one version
// (g) upsert, as HBase's do: the memstore keeps a few versions of the
// column, not one per write, and its size shrinks to match; a family that
// keeps more versions (f) keeps every one until a flush. Values stay right
// through a flush.
func TestIncrementUpserts(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 40; o.DisableAutoCompaction = true })
	defer r.Close()
	const n = 1000
	var secondTS int64
	for i := range n {
		res, err := r.Increment(NewIncrement(b("r")).Add(fam, b("n"), 1).Add(fam2, b("n"), 1))
		require.NoError(t, err)
		if i == 1 {
			secondTS = res.Latest(fam2, b("n")).Timestamp
		}
		_, err = r.Append(NewAppend(b("r")).Add(fam2, b("a"), b("x")))
		require.NoError(t, err)
	}
	require.Equal(t, long(n), string(getValue(t, r, "r", "g", "n")))
	require.Equal(t, long(n), string(getValue(t, r, "r", "f", "n")))
	require.Equal(t, strings.Repeat("x", n), string(getValue(t, r, "r", "g", "a")))
	// Two columns of three versions: the newest, the one before (which
	// reads that started before the newest see) and the column's first,
	// whose memory holds the column.
	require.EqualValues(t, 2*3, memCells(r, "g"))
	require.EqualValues(t, n, memCells(r, "f"))
	// The region's memstore size is what its stores hold.
	set := r.storeSet()
	require.Equal(t, set.byFamily["f"].mem.Size().DataSize+set.byFamily["g"].mem.Size().DataSize, r.Stats().MemStoreSize)
	require.Equal(t, set.byFamily["f"].mem.Size().HeapSize+set.byFamily["g"].mem.Size().HeapSize, r.Stats().MemStoreHeapSize,
		"the heap size too, removed versions taken out")

	// The second increment's version is gone, as in HBase: a read of the
	// time it was written finds nothing in g, and finds it in f.
	g := NewGet(b("r")).AddColumn(fam2, b("n")).AddColumn(fam, b("n"))
	g.TimeRange = TimeRange{Min: secondTS, Max: secondTS + 1}
	res, err := r.Get(g)
	require.NoError(t, err)
	require.Equal(t, []string{"f:n=" + long(2)}, cellStrings(res))

	require.NoError(t, r.Flush())
	require.Zero(t, r.Stats().MemStoreSize)
	require.Zero(t, r.Stats().MemStoreHeapSize)
	for i := range 10 {
		_, err := r.Increment(NewIncrement(b("r")).Add(fam2, b("n"), 1))
		require.NoError(t, err)
		require.Equal(t, long(n+int64(i)+1), string(getValue(t, r, "r", "g", "n")))
	}
}

// TestUpsertKeepsOpenReads: a Scanner opened before a run of increments
// reads the counter as it was when it opened, forward or reversed, however
// many versions the increments would otherwise remove; once it is closed,
// they go.
func TestUpsertKeepsOpenReads(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 40; o.DisableAutoCompaction = true })
	defer r.Close()
	inc := NewIncrement(b("r")).Add(fam2, b("n"), 1)
	for range 5 {
		_, err := r.Increment(inc)
		require.NoError(t, err)
	}
	fwd, err := r.NewScanner(&Scan{Columns: []Column{{Family: fam2}}})
	require.NoError(t, err)
	rev, err := r.NewScanner(&Scan{Columns: []Column{{Family: fam2}}, Reversed: true})
	require.NoError(t, err)
	for range 100 {
		_, err := r.Increment(inc)
		require.NoError(t, err)
	}
	require.Greater(t, memCells(r, "g"), int64(100), "open scanners keep what they may read")
	for _, sc := range []*Scanner{fwd, rev} {
		res, err := sc.Next()
		require.NoError(t, err)
		require.NotNil(t, res)
		require.Equal(t, []string{"g:n=" + long(5)}, cellStrings(&res.Result))
		sc.Close()
	}
	for range 3 {
		_, err := r.Increment(inc)
		require.NoError(t, err)
	}
	require.EqualValues(t, 3, memCells(r, "g"))
	require.Equal(t, long(108), string(getValue(t, r, "r", "g", "n")))
}

// TestUpsertConcurrentReads: Gets and short scans that run while
// increments upsert always find the counter, and never see it go back.
func TestUpsertConcurrentReads(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 40; o.DisableAutoCompaction = true })
	defer r.Close()
	inc := NewIncrement(b("r")).Add(fam2, b("n"), 1)
	_, err := r.Increment(inc)
	require.NoError(t, err)
	const n = 3000
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for !done.Load() {
				var v []byte
				if id%2 == 0 {
					res, err := r.Get(NewGet(b("r")).AddColumn(fam2, b("n")))
					if err != nil {
						errs <- err
						return
					}
					if c := res.Latest(fam2, b("n")); c != nil {
						v = c.Value
					}
				} else {
					sc, err := r.NewScanner(&Scan{StartRow: b("r"), Limit: 1})
					if err != nil {
						errs <- err
						return
					}
					res, err := sc.Next()
					sc.Close()
					if err != nil {
						errs <- err
						return
					}
					if res != nil {
						if c := res.Latest(fam2, b("n")); c != nil {
							v = c.Value
						}
					}
				}
				if len(v) != 8 {
					errs <- fmt.Errorf("reader %d: counter not found (%q)", id, v)
					return
				}
				got := binary.BigEndian.Uint64(v)
				if got < last {
					errs <- fmt.Errorf("reader %d: counter went back from %d to %d", id, last, got)
					return
				}
				last = got
			}
		}()
	}
	for range n {
		if _, err := r.Increment(inc); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A reader descheduled for a while keeps every version after its own;
	// each increment removes a walk's worth of them.
	for range memCells(r, "g")/60 + 2 {
		_, err := r.Increment(inc)
		require.NoError(t, err)
	}
	require.EqualValues(t, 3, memCells(r, "g"))
}

// TestReadPoints: the registry of reads in progress answers the oldest read
// point a read holds, the current one without reads, and nothing while a
// read is loading its read point or has overflowed the slots.
func TestReadPoints(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	p := &r.readers
	put := func() {
		require.NoError(t, r.Put(NewPut(b("r")).Add(fam, b("q"), b("v"))))
	}
	put()
	rp0, s0 := p.acquire(r.mvcc)
	require.EqualValues(t, r.mvcc.ReadPoint(), rp0)
	put()
	put()
	oldest, ok := p.oldest(r.mvcc, 1<<62)
	require.True(t, ok)
	require.Equal(t, rp0, oldest)
	p.release(s0)
	oldest, ok = p.oldest(r.mvcc, 1<<62)
	require.True(t, ok)
	require.EqualValues(t, r.mvcc.ReadPoint(), oldest)

	// A read loading its read point: no answer, but for a need the floor
	// (the last answer) covers.
	p.slots[3].v.Store(slotLoading)
	_, ok = p.oldest(r.mvcc, 1<<62)
	require.False(t, ok)
	floor, ok := p.oldest(r.mvcc, oldest)
	require.True(t, ok)
	require.Equal(t, oldest, floor)
	p.slots[3].v.Store(slotFree)

	// Every slot taken: the next read overflows, and there is no answer
	// until it is done.
	for i := range p.slots {
		p.slots[i].v.Store(slotReadPoint + uint64(rp0))
	}
	rp, s := p.acquire(r.mvcc)
	require.Equal(t, overflowSlot, s)
	require.EqualValues(t, r.mvcc.ReadPoint(), rp)
	_, ok = p.oldest(r.mvcc, 1<<62)
	require.False(t, ok)
	p.release(s)
	oldest, ok = p.oldest(r.mvcc, 1<<62)
	require.True(t, ok)
	require.Equal(t, rp0, oldest)
	for i := range p.slots {
		p.release(readSlot(i))
	}

	// Gets and Scanners register until they are done.
	sc, err := r.NewScanner(&Scan{})
	require.NoError(t, err)
	put()
	oldest, ok = p.oldest(r.mvcc, 1<<62)
	require.True(t, ok)
	require.EqualValues(t, r.mvcc.ReadPoint()-1, oldest)
	sc.Close()
	sc.Close() // a second Close releases nothing more
	getValue(t, r, "r", "f", "q")
	for i := range p.slots {
		require.EqualValues(t, slotFree, p.slots[i].v.Load())
	}
	require.Zero(t, p.overflow.Load())
}
