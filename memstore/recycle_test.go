package memstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/mvcc"
)

// counter returns an upsert of an 8-byte counter r/f:a, reusing one
// KeyValue, and the number of the next upsert: upsert(seq, oldest) writes
// seq at timestamp seq.
func counter(s *Segment) func(seq encoding.SeqNum, oldest func(encoding.SeqNum) (encoding.SeqNum, bool)) {
	in := kv("r", "a", 0, 0, "")
	in.Value = make([]byte, 8)
	return func(seq encoding.SeqNum, oldest func(encoding.SeqNum) (encoding.SeqNum, bool)) {
		in.Timestamp, in.SeqNum = int64(seq), seq
		binary.BigEndian.PutUint64(in.Value, uint64(seq))
		s.Upsert(in, oldest)
	}
}

// TestUpsertRecyclesCells: the cells upserts unlink are reused only once
// no read that may have reached them is registered, and then an upsert to a
// counter allocates nothing.
func TestUpsertRecyclesCells(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r", "a", 1, 1, "first"))
	upsert := counter(s)
	seq := encoding.SeqNum(2)
	for ; seq < 10; seq++ {
		upsert(seq, at(seq-1))
	}
	// A read at read point held, which has walked the column: the cells it
	// reached (the shield and, behind it, cells an upsert may unlink as soon
	// as no older read is left) stay as they were while it is registered.
	held := seq - 1
	seen := scanAll(s, held)
	require.Greater(t, len(seen), 1)
	want := str(seen)
	for end := seq + 1000; seq < end; seq++ {
		upsert(seq, at(held))
	}
	require.Equal(t, want, str(seen), "a cell a registered read reached was reused")
	require.NotNil(t, columnOf(s, "r", "a").spare)
	require.Equal(t, 1.0, testing.AllocsPerRun(10, func() {
		upsert(seq, at(held))
		seq++
	}), "the spare is not free while the read is registered")

	// The read is done: the cells are reused, and an upsert allocates
	// nothing.
	for end := seq + 10; seq < end; seq++ {
		upsert(seq, at(seq-1))
	}
	require.NotEqual(t, want, str(seen), "no cell was reused")
	allocs := testing.AllocsPerRun(100, func() {
		upsert(seq, at(seq-1))
		seq++
	})
	require.Zero(t, allocs)
	cells := columnCells(s, "r", "a", seq)
	require.Len(t, cells, 3, "the newest, the one the oldest read sees, the first: %v", cells)
	require.Equal(t, "1:Put/first", cells[2])
	require.EqualValues(t, 3, s.Size().CellCount)
}

// columnOf returns row's column q of family f in s.
func columnOf(s *Segment, row, q string) *column {
	return s.column([]byte(row), []byte("f"), []byte(q))
}

// spareHeap is the heap size of the spare cells s's columns keep.
func spareHeap(s *Segment) int64 {
	var n int64
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.tree.Ascend(func(e entry) bool {
		if sp := e.col.spare; sp != nil {
			n += cellSize(&sp.kv).HeapSize
		}
		return true
	})
	return n
}

// TestUpsertRecycleConcurrentScanners: scanners walk every version of a
// counter without the segment's mutex, pausing on each, while upserts unlink
// the old versions and recycle their cells: every cell a scanner returns is the one it reached (its value is its
// sequence id, in version order, at or below the read point) and stays so
// until the read is done, and the walk ends at the column's first cell. A
// cell reused while a scanner stands on it would break the order, or lead
// the walk into another list.
func TestUpsertRecycleConcurrentScanners(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r", "a", 1, 1, "first"))
	reads := newTestReads(1)
	const n = 20000
	var wg sync.WaitGroup
	var failed atomic.Value
	check := func(rp encoding.SeqNum) string {
		sc := s.NewScanner(rp)
		defer sc.Close()
		prev := rp + 1
		var seen []*encoding.KeyValue
		var was []string
		for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
			runtime.Gosched()
			if string(c.Row) != "r" || string(c.Qualifier) != "a" || c.SeqNum >= prev {
				return fmt.Sprintf("read point %d: %v after seq %d", rp, c, prev)
			}
			if c.SeqNum > 1 && (len(c.Value) != 8 || binary.BigEndian.Uint64(c.Value) != uint64(c.SeqNum)) {
				return fmt.Sprintf("read point %d: %v holds %x", rp, c, c.Value)
			}
			prev = c.SeqNum
			seen, was = append(seen, c), append(was, fmt.Sprintf("%v %x", c, c.Value))
		}
		if len(seen) == 0 || string(seen[len(seen)-1].Value) != "first" {
			return fmt.Sprintf("read point %d: the walk ended at %v", rp, seen)
		}
		// Every cell the read returned is as it was while it is registered.
		for i, c := range seen {
			if now := fmt.Sprintf("%v %x", c, c.Value); now != was[i] {
				return fmt.Sprintf("read point %d: cell %s became %s", rp, was[i], now)
			}
		}
		return ""
	}
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reads.readPoint.Load() < n && failed.Load() == nil {
				if msg := reads.read(id, check); msg != "" {
					failed.Store(msg)
				}
			}
		}()
	}
	upsert := counter(s)
	for seq := encoding.SeqNum(2); seq <= n; seq++ {
		upsert(seq, reads.oldest)
		reads.readPoint.Store(uint64(seq))
		runtime.Gosched() // let the readers keep up
	}
	wg.Wait()
	require.Nil(t, failed.Load())
}

// TestUpsertKeepsColumnSlots: a column an upsert starts is in that cell's
// slot, so the cell is never unlinked, or kept as the spare and reused,
// while the cells after it cycle through the column's spare.
func TestUpsertKeepsColumnSlots(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Upsert(kv("r", "a", 1, 1, "first"), at(0))
	col := columnOf(s, "r", "a")
	require.Same(t, &col.v0, col.head.Load(), "the column is in the first cell's slot")
	upsert := counter(s)
	other := kv("s", "b", 0, 0, "")
	for seq := encoding.SeqNum(3); seq < 100; seq += 2 {
		upsert(seq, at(seq-1))
		other.Timestamp, other.SeqNum = int64(seq+1), seq+1
		s.Upsert(other, at(seq))
		require.NotSame(t, ownCellOf(&col.v0), col.spare)
	}
	require.NotNil(t, col.spare)
	got := columnCells(s, "r", "a", 100)
	require.Len(t, got, 3, "%v", got)
	require.Equal(t, "1:Put/first", got[2])
	require.Equal(t, "99:Put/", got[0][:len("99:Put/")])
	require.Len(t, columnCells(s, "s", "b", 100), 3)
	var rows []string
	for _, c := range scanAll(s, 100) {
		rows = append(rows, string(c.Row)+"/"+string(c.Qualifier))
	}
	require.Equal(t, []string{"r/a", "r/a", "r/a", "s/b", "s/b", "s/b"}, rows)
}

// TestUpsertRecycleMidWalk: a scanner standing in the middle of a column's
// old versions when they are unlinked goes on down them as they were, while
// its read point is held, however many upserts come meanwhile.
func TestUpsertRecycleMidWalk(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r", "a", 1, 1, "first"))
	upsert := counter(s)
	// Versions 10..20 stay: a read at 10 was held while 11..20 were
	// written.
	for seq := encoding.SeqNum(2); seq <= 20; seq++ {
		upsert(seq, at(min(seq-1, 10)))
	}
	const held = 15
	sc := s.NewScanner(held)
	defer sc.Close()
	got := []encoding.SeqNum{sc.SeekToFirst().SeqNum, sc.Next().SeqNum}
	// The read at 10 is done; the scanner's, at 15, is the oldest: the
	// upserts unlink 13 and older (own cells) while it stands on 14.
	for seq := encoding.SeqNum(21); seq <= 100; seq++ {
		upsert(seq, at(held))
	}
	for c := sc.Next(); c != nil; c = sc.Next() {
		if c.SeqNum > 1 {
			require.Equal(t, uint64(c.SeqNum), binary.BigEndian.Uint64(c.Value))
		}
		got = append(got, c.SeqNum)
	}
	require.Equal(t, []encoding.SeqNum{15, 14, 13, 12, 11, 10, 1}, got)
	require.Equal(t, []string{"100:Put/\x00\x00\x00\x00\x00\x00\x00d", "99:Put/\x00\x00\x00\x00\x00\x00\x00c",
		"98:Put/\x00\x00\x00\x00\x00\x00\x00b"}, columnCells(s, "r", "a", 100)[:3])
}

// TestConcurrentUpserts: writers upsert counters of their own columns of one
// segment at once, without its mutex, numbered by mvcc as a region's are,
// while another writer adds new rows (B-tree inserts under the mutex) and
// scanners read at registered read points. Every cell a scanner returns is
// whole (its value names its own sequence id) and stays so while the read is
// registered, a column's versions come newest first, every counter ends at
// the number of its upserts, and the segment's size is what its cells, the
// columns' entries and their spare cells hold.
func TestConcurrentUpserts(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	reads := newTestReads(0)
	reads.mvcc = mvcc.New(0)
	const writers, columns = 4, 8
	perW := 3000
	if raceEnabled {
		perW = 800
	}
	// value is a counter cell's value: the count, then the cell's own
	// sequence id.
	value := func(n uint64, seq encoding.SeqNum) string {
		return string(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, n), uint64(seq)))
	}
	row := func(w, c int) string { return fmt.Sprintf("w%d-c%d", w, c) }
	var wg sync.WaitGroup
	var failed atomic.Value
	var stop atomic.Bool
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts := make([]uint64, columns)
			for i := range perW * columns {
				c := i % columns
				e := reads.mvcc.Begin()
				seq := encoding.SeqNum(e.WriteNumber())
				// The column is this writer's alone, as a row lock makes
				// it: its newest cell is its own last write.
				if cur := s.Newest([]byte(row(w, c)), []byte("f"), []byte("n"), seq); counts[c] > 0 &&
					(cur == nil || binary.BigEndian.Uint64(cur.Value) != counts[c]) {
					failed.Store(fmt.Sprintf("%s: newest %v, want count %d", row(w, c), cur, counts[c]))
				}
				counts[c]++
				s.Upsert(kv(row(w, c), "n", int64(seq), seq, value(counts[c], seq)), reads.oldest)
				reads.mvcc.CompleteAndWait(e)
			}
		}()
	}
	var others sync.WaitGroup
	others.Add(1)
	go func() {
		defer others.Done()
		for i := 0; !stop.Load(); i++ {
			e := reads.mvcc.Begin()
			seq := encoding.SeqNum(e.WriteNumber())
			s.Add(kv(fmt.Sprintf("x%07d", i), "n", int64(seq), seq, value(0, seq)))
			reads.mvcc.CompleteAndWait(e)
		}
	}()
	for id := range 2 {
		others.Add(1)
		go func() {
			defer others.Done()
			for !stop.Load() {
				msg := reads.read(id, func(rp encoding.SeqNum) string {
					sc := s.NewScanner(rp)
					defer sc.Close()
					var seen []*encoding.KeyValue
					var was []string
					for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
						if len(c.Value) != 16 || binary.BigEndian.Uint64(c.Value[8:]) != uint64(c.SeqNum) || c.SeqNum > rp {
							return fmt.Sprintf("read point %d: %v holds %x", rp, c, c.Value)
						}
						if n := len(seen); n > 0 && bytes.Equal(seen[n-1].Row, c.Row) && seen[n-1].SeqNum <= c.SeqNum {
							return fmt.Sprintf("read point %d: %v after %v", rp, c, seen[n-1])
						}
						seen, was = append(seen, c), append(was, fmt.Sprintf("%v %x", c, c.Value))
					}
					runtime.Gosched()
					for i, c := range seen {
						if now := fmt.Sprintf("%v %x", c, c.Value); now != was[i] {
							return fmt.Sprintf("read point %d: cell %s became %s", rp, was[i], now)
						}
					}
					return ""
				})
				if msg != "" {
					failed.Store(msg)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	others.Wait()
	require.Nil(t, failed.Load())

	rp := encoding.SeqNum(reads.mvcc.ReadPoint())
	want := Size{}
	counters := map[string]uint64{}
	for _, c := range scanAll(s, rp) {
		want = want.Add(Size{DataSize: DataSize(c), HeapSize: cellSlotSize + int64(payloadLen(c)), CellCount: 1})
		if c.Row[0] == 'w' {
			if _, ok := counters[string(c.Row)]; !ok {
				counters[string(c.Row)] = binary.BigEndian.Uint64(c.Value)
			}
		}
	}
	require.Len(t, counters, writers*columns)
	for r, n := range counters {
		require.EqualValues(t, perW, n, r)
	}
	want.HeapSize += int64(s.mu.tree.Len())*btreeEntryOverhead + spareHeap(s)
	require.Equal(t, want, s.Size())
	// Both kinds of writer moved the bounds, the upserts without the mutex:
	// every write numbered 1 to rp added a cell at its number's timestamp.
	lo, hi, ok := s.TimeRange()
	require.True(t, ok)
	require.Equal(t, [2]int64{1, int64(rp)}, [2]int64{lo, hi})
	minSeq, ok := s.MinSeq()
	require.True(t, ok)
	require.EqualValues(t, 1, minSeq)
}

// TestUpsertCellClasses: counters too large for an ownCell, as HBase PE's
// IncrementTest ones (52 bytes), cycle through ownCellLarge cells and
// allocate nothing either; a column whose cells change class reuses its
// spare only for a cell of the spare's class, and its values stay right.
func TestUpsertCellClasses(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	pe := &encoding.KeyValue{Row: []byte(strings.Repeat("0", 26)), Family: []byte("info0"),
		Qualifier: []byte("IncrementTest"), Type: encoding.TypePut, Value: make([]byte, 8)}
	require.Equal(t, 52, payloadLen(pe))
	require.Greater(t, payloadLen(pe), ownCellInline)
	seq := encoding.SeqNum(1)
	upsert := func(kv *encoding.KeyValue, value []byte) {
		kv.Value = value
		kv.Timestamp, kv.SeqNum = int64(seq), seq
		s.Upsert(kv, at(seq-1))
		seq++
	}
	for range 5 {
		upsert(pe, binary.BigEndian.AppendUint64(nil, uint64(seq)))
	}
	v := make([]byte, 8)
	require.Zero(t, testing.AllocsPerRun(100, func() { upsert(pe, v) }))
	require.NotNil(t, s.column(pe.Row, pe.Family, pe.Qualifier).spare)

	small, eight, other := kv("r", "a", 0, 0, ""), []byte("8 bytes!"), []byte("small!!!")
	for range 5 {
		upsert(small, eight)
	}
	require.Zero(t, testing.AllocsPerRun(10, func() { upsert(small, eight) }))
	// mallocs counts the allocations of one call (AllocsPerRun would make
	// two, its warm-up changing the spare).
	mallocs := func(f func()) uint64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	// A cell of the large class cannot have the small spare, which stays.
	large := []byte(strings.Repeat("L", 60))
	require.EqualValues(t, 1, mallocs(func() { upsert(small, large) }))
	// The next small cell has it.
	require.EqualValues(t, 0, mallocs(func() { upsert(small, other) }))
	got := columnCells(s, "r", "a", seq)
	require.Len(t, got, 3, "%v", got)
	require.Equal(t, fmt.Sprintf("%d:Put/small!!!", seq-1), got[0])
	require.Equal(t, fmt.Sprintf("%d:Put/%s", seq-2, large), got[1])
	want := Size{}
	for _, c := range scanAll(s, seq) {
		want = want.Add(Size{DataSize: DataSize(c), HeapSize: cellSlotSize + int64(payloadLen(c)), CellCount: 1})
	}
	want.HeapSize += int64(s.mu.tree.Len())*btreeEntryOverhead + spareHeap(s)
	require.Equal(t, want, s.Size())
}
