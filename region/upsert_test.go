package region

import (
	"encoding/binary"
	"fmt"
	"runtime"
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

// TestUpsertConcurrentReads: Gets and scans that run while increments
// upsert counters of several rows always find each counter in its own row,
// and never see one go back, while the cells the upserts unlink are reused
// for other counters (memstore's cellPool).
func TestUpsertConcurrentReads(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 40; o.DisableAutoCompaction = true })
	defer r.Close()
	const rows = 8
	row := func(i int) []byte { return fmt.Appendf(nil, "r%d", i) }
	for i := range rows {
		_, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1))
		require.NoError(t, err)
	}
	const n = 3000
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [rows]uint64
			check := func(i int, res *Result) error {
				c := res.Latest(fam2, b("n"))
				if c == nil || len(c.Value) != 8 || string(c.Row) != string(row(i)) {
					return fmt.Errorf("reader %d: counter %d: got %v", id, i, c)
				}
				got := binary.BigEndian.Uint64(c.Value)
				if got < last[i] {
					return fmt.Errorf("reader %d: counter %d went back from %d to %d", id, i, last[i], got)
				}
				last[i] = got
				return nil
			}
			for k := 0; !done.Load(); k++ {
				if id%2 == 0 {
					i := k % rows
					res, err := r.Get(NewGet(row(i)).AddColumn(fam2, b("n")))
					if err == nil {
						err = check(i, res)
					}
					if err != nil {
						errs <- err
						return
					}
					continue
				}
				// A scan of every counter, reading each row while the
				// increments go on.
				sc, err := r.NewScanner(&Scan{StartRow: b("r")})
				if err != nil {
					errs <- err
					return
				}
				i := 0
				for ; err == nil; i++ {
					var res *ScanResult
					if res, err = sc.Next(); err == nil && res == nil {
						break
					}
					if err == nil {
						runtime.Gosched()
						err = check(i, &res.Result)
					}
				}
				sc.Close()
				if err == nil && i != rows {
					err = fmt.Errorf("reader %d: scanned %d counters", id, i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for k := range n {
		if _, err := r.Increment(NewIncrement(row(k%rows)).Add(fam2, b("n"), 1)); err != nil {
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
	extra := int(memCells(r, "g")/60 + 2)
	for k := range rows * extra {
		_, err := r.Increment(NewIncrement(row(k%rows)).Add(fam2, b("n"), 1))
		require.NoError(t, err)
	}
	require.EqualValues(t, 3*rows, memCells(r, "g"))
	for i := range rows {
		require.Equal(t, long(int64(1+n/rows+extra)), string(getValue(t, r, string(row(i)), "g", "n")))
	}
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
	rp0, s0 := p.acquire(r.mvcc, 0)
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
	rp, s := p.acquire(r.mvcc, 0)
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

// TestIncrementsConcurrentFlushes: writers increment counters of many rows
// from several goroutines (their upserts take no memstore lock and retire
// their mvcc entries without one), while flushes snapshot the memstore under
// them and readers Get the counters: no reader sees a counter go back, and
// every counter ends at the number of its increments, in the memstore and
// after a reopen.
func TestIncrementsConcurrentFlushes(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	const writers, rows = 4, 16
	each := 1500
	if raceEnabled {
		each = 400
	}
	row := func(i int) []byte { return fmt.Appendf(nil, "ctr%02d", i) }
	var counts [rows]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers+3)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				i := (k*7 + w*3) % rows
				if _, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1)); err != nil {
					errs <- err
					return
				}
				counts[i].Add(1)
			}
		}()
	}
	var done atomic.Bool
	var others sync.WaitGroup
	others.Add(1)
	go func() {
		defer others.Done()
		for !done.Load() {
			if err := r.Flush(); err != nil {
				errs <- err
				return
			}
			runtime.Gosched()
		}
	}()
	for id := range 2 {
		others.Add(1)
		go func() {
			defer others.Done()
			var last [rows]uint64
			for k := 0; !done.Load(); k++ {
				i := (k + id) % rows
				res, err := r.Get(NewGet(row(i)).AddColumn(fam2, b("n")))
				if err != nil {
					errs <- err
					return
				}
				var got uint64
				if v := res.Value(fam2, b("n")); v != nil {
					got = binary.BigEndian.Uint64(v)
				}
				if got < last[i] {
					errs <- fmt.Errorf("reader %d: counter %d went back from %d to %d", id, i, last[i], got)
					return
				}
				last[i] = got
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	others.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	check := func(r *Region) {
		var total int64
		for i := range rows {
			res, err := r.Get(NewGet(row(i)).AddColumn(fam2, b("n")))
			require.NoError(t, err)
			require.EqualValues(t, counts[i].Load(), binary.BigEndian.Uint64(res.Value(fam2, b("n"))), "counter %d", i)
			total += counts[i].Load()
		}
		require.EqualValues(t, writers*each, total)
	}
	check(r)
	require.NoError(t, r.Close())
	r = openTest(t, dir, nil)
	defer r.Close()
	check(r)
}
