package memstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionkv/regionkv/encoding"
)

// keys formats cells as row/qualifier@ts#seq, one per line.
func keys(kvs []*encoding.KeyValue) string {
	var b bytes.Buffer
	for _, c := range kvs {
		fmt.Fprintf(&b, "%s/%s@%d#%d %s\n", c.Row, c.Qualifier, c.Timestamp, c.SeqNum, c.Type)
	}
	return b.String()
}

func TestUpsertRemovesHiddenVersions(t *testing.T) {
	m := New(encoding.InnerStoreComparer)
	// Neighbours that must stay: the row before, another column of the
	// row, the row after.
	m.Add(kv("a", "q", 1, 1, "x"))
	m.Add(kv("r", "p", 1, 2, "x"))
	m.Add(kv("s", "q", 1, 3, "x"))
	for seq := encoding.SeqNum(4); seq <= 9; seq++ {
		m.Add(kv("r", "q", int64(seq), seq, "v"))
	}
	del := kv("r", "q", 7, 10, "")
	del.Type = encoding.TypeDelete // a marker between the versions: stays
	m.Add(del)
	before := m.Size()

	// Every read is at or above 7: the newest Put at or below 7 (ts 7)
	// hides 6, 5 and 4 from all of them; 8 and 9 are above the bound.
	up := kv("r", "q", 11, 11, "new")
	d := m.Upsert(up, 7)
	require.Equal(t, int64(1-3), d.CellCount)
	require.Equal(t, DataSize(up), d.DataSize, "removed bytes stay in the arena, and counted")
	require.Equal(t, before.CellCount-2, m.Size().CellCount)
	active, _ := m.Segments()
	require.Equal(t, `a/q@1#1 Put
r/p@1#2 Put
r/q@11#11 Put
r/q@9#9 Put
r/q@8#8 Put
r/q@7#10 Delete
r/q@7#7 Put
s/q@1#3 Put
`, keys(scanAll(active, 100)))

	// The next upsert with every read at 11 keeps 11 and drops the rest of
	// the Puts; the marker stays.
	m.Upsert(kv("r", "q", 12, 12, "newer"), 11)
	require.Equal(t, `r/p@1#2 Put
r/q@12#12 Put
r/q@11#11 Put
r/q@7#10 Delete
`, keys(scanAll(active, 100)[1:5]))
	require.Equal(t, 6, m.Len())
}

func TestUpsertKeepsWhatReadsSee(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for seq := encoding.SeqNum(1); seq <= 3; seq++ {
		s.Add(kv("r", "q", int64(seq), seq, "v"))
	}
	// A read at 1 is in progress: nothing at or below 1 has a newer Put
	// at or below 1 hiding it, so nothing goes.
	s.Upsert(kv("r", "q", 4, 4, "v"), 1)
	require.Equal(t, 4, s.Len())
	// Bound 0: nothing is visible to every read.
	s.Upsert(kv("r", "q", 5, 5, "v"), 0)
	require.Equal(t, 5, s.Len())
	// A column named by a longer qualifier, or a shorter one, is another
	// column.
	s.Add(kv("r", "qq", 1, 6, "v"))
	s.Add(kv("r", "", 1, 7, "v"))
	s.Upsert(kv("r", "q", 8, 8, "v"), 7)
	require.Equal(t, `r/@1#7 Put
r/q@8#8 Put
r/q@5#5 Put
r/qq@1#6 Put
`, keys(scanAll(s, 100)))
}

func TestUpsertBounded(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	n := 3 * maxUpsertRemovals
	for seq := 1; seq <= n; seq++ {
		s.Add(kv("r", "q", int64(seq), encoding.SeqNum(seq), "v"))
	}
	seq := encoding.SeqNum(n)
	upsert := func() int {
		seq++
		return int(s.Upsert(kv("r", "q", int64(seq), seq, "v"), seq-1).CellCount)
	}
	require.Equal(t, 1-maxUpsertRemovals, upsert())
	calls := 1
	for d := upsert(); d != 0; d = upsert() {
		require.GreaterOrEqual(t, d, 1-maxUpsertRemovals)
		calls++
	}
	// 3*max-1 hidden and one more per call: four calls remove them all,
	// the fifth is the steady state, one in and one out.
	require.Equal(t, 4, calls)
	require.Equal(t, 2, s.Len())
}

// TestScannerAcrossUpsert moves scanners across cells an Upsert removed
// after they were collected: they resume after them, never repeating a
// cell or going back, forward and backward.
func TestScannerAcrossUpsert(t *testing.T) {
	for _, backward := range []bool{false, true} {
		t.Run(fmt.Sprintf("backward=%t", backward), func(t *testing.T) {
			s := NewSegment(encoding.InnerStoreComparer)
			seq := encoding.SeqNum(0)
			for v := 0; v < 40; v++ {
				for _, row := range []string{"a", "b", "c"} {
					seq++
					s.Add(kv(row, "q", int64(seq), seq, "v"))
				}
			}
			sc := s.NewScanner(seq)
			defer sc.Close()
			var got []*encoding.KeyValue
			step := sc.Next
			first := sc.SeekToFirst
			if backward {
				step, first = sc.Prev, sc.SeekToLast
			}
			c := first()
			for i := 0; i < 5; i++ { // into the first column's versions
				got = append(got, c)
				c = step()
			}
			// Every version of the three columns but the newest the
			// scanner sees goes.
			rp := seq
			for _, row := range []string{"a", "b", "c"} {
				seq++
				require.Equal(t, int64(1-39), s.Upsert(kv(row, "q", int64(seq), seq, "v"), rp).CellCount)
			}
			for ; c != nil; c = step() {
				got = append(got, c)
			}
			for i := 1; i < len(got); i++ {
				c := encoding.InnerStoreComparer.CompareKeyValues(got[i-1], got[i])
				if backward {
					c = -c
				}
				require.Negative(t, c, "cell %d %s after %s", i, got[i], got[i-1])
			}
			// The newest version of each column at the scanner's read point
			// was seen: the removed ones were older.
			for _, row := range []string{"a", "b", "c"} {
				found := false
				for _, c := range got {
					found = found || string(c.Row) == row && c.SeqNum >= 118
				}
				require.True(t, found, "newest of %s", row)
			}
			// Direction changes across removed cells still move by one.
			if !backward {
				require.Nil(t, sc.Next())
				last := sc.Prev()
				require.NotNil(t, last)
				if prev := sc.Prev(); prev != nil {
					require.Negative(t, encoding.InnerStoreComparer.CompareKeyValues(prev, last))
					require.Equal(t, last, sc.Next())
				}
			}
		})
	}
}

// TestConcurrentUpsertAndScanners runs upserts of counters against
// scanners at read points the writer's bound respects, as the region does
// with its read points: every scanner sees, for every counter, its newest
// version at the scanner's read point, and cells in order.
func TestConcurrentUpsertAndScanners(t *testing.T) {
	const counters = 16
	ops := 20000
	if testing.Short() || raceEnabled {
		ops = 3000
	}
	m := New(encoding.InnerStoreComparer)
	row := func(i int) []byte { return fmt.Appendf(nil, "ctr%03d", i) }
	var (
		mu      sync.Mutex
		open    = map[int]encoding.SeqNum{} // reader id -> read point
		latest  [counters][]encoding.SeqNum // each counter's seqs, ascending
		visible atomic.Uint64               // the read point: every seq up to it is in
		failed  atomic.Pointer[string]
		wg      sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failed.CompareAndSwap(nil, &msg)
	}
	smallest := func() encoding.SeqNum {
		mu.Lock()
		defer mu.Unlock()
		s := encoding.SeqNum(visible.Load())
		for _, rp := range open {
			s = min(s, rp)
		}
		return s
	}
	for i := 0; i < counters; i++ {
		latest[i] = []encoding.SeqNum{encoding.SeqNum(i + 1)}
		m.Add(kv(string(row(i)), "n", 1, encoding.SeqNum(i+1), "v"))
	}
	visible.Store(counters)
	done := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(id), 9))
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				rp := encoding.SeqNum(visible.Load())
				open[id] = rp
				want := make([]encoding.SeqNum, counters)
				for i := range latest {
					for _, s := range latest[i] {
						if s <= rp {
							want[i] = s
						}
					}
				}
				mu.Unlock()
				active, _ := m.Segments()
				sc := active.NewScanner(rp)
				var prev *encoding.KeyValue
				seen := make([]encoding.SeqNum, counters)
				backward := rng.IntN(2) == 0
				c := sc.SeekToFirst()
				if backward {
					c = sc.SeekToLast()
				}
				for ; c != nil; prev, c = c, nextOf(sc, backward) {
					if prev != nil {
						o := encoding.InnerStoreComparer.CompareKeyValues(prev, c)
						if backward {
							o = -o
						}
						if o >= 0 {
							fail("out of order (backward=%t): %s then %s", backward, prev, c)
						}
					}
					var i int
					fmt.Sscanf(string(c.Row), "ctr%03d", &i)
					seen[i] = max(seen[i], c.SeqNum)
				}
				sc.Close()
				for i := range seen {
					if seen[i] != want[i] {
						fail("counter %d: newest seen at read point %d is %d, want %d", i, rp, seen[i], want[i])
					}
				}
				mu.Lock()
				delete(open, id)
				mu.Unlock()
			}
		}(r)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for seq := encoding.SeqNum(counters + 1); seq < encoding.SeqNum(counters+ops) && failed.Load() == nil; seq++ {
		i := rng.IntN(counters)
		m.Upsert(kv(string(row(i)), "n", int64(seq), seq, "v"), smallest())
		mu.Lock()
		latest[i] = append(latest[i], seq)
		visible.Store(uint64(seq))
		mu.Unlock()
	}
	close(done)
	wg.Wait()
	if p := failed.Load(); p != nil {
		t.Fatal(*p)
	}
	// With no read left, one upsert of each counter leaves two versions,
	// whatever the reads held on to.
	seq := encoding.SeqNum(visible.Load())
	for i := 0; i < counters; i++ {
		seq++
		for m.Upsert(kv(string(row(i)), "n", int64(seq), seq, "v"), seq-1).CellCount < 0 {
			seq++
		}
	}
	require.Equal(t, 2*counters, m.Len())
}

func nextOf(sc *SegmentScanner, backward bool) *encoding.KeyValue {
	if backward {
		return sc.Prev()
	}
	return sc.Next()
}

// TestSkipPrefixLeavesRowsInline: rows added in order share more of a
// prefix at first than later ones do; the skip prefix leaves the last 8
// bytes of the rows it was learned from inline, so that later rows share
// it too and compare whole inline.
func TestSkipPrefixLeavesRowsInline(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for i := 0; i < learnSkipAt; i++ {
		s.Add(kv(fmt.Sprintf("ctrs%010d", i), "v", 1, encoding.SeqNum(i+1), "x"))
	}
	require.Equal(t, "ctrs00", string(s.skip))
	for _, row := range []string{"ctrs0000009999", "ctrs0000000100"} {
		e := s.entry(kv(row, "v", 1, 1, "x"), 0)
		require.NotZero(t, e.meta&metaWhole, row)
	}
	// Versions of one row, and rows that differ only in length, are
	// ordered without reading the rows.
	for i := 0; i < 3; i++ {
		s.Add(kv("ctrs0000000100", "v", int64(i), encoding.SeqNum(100+i), "x"))
	}
	s.Add(kv("ctrs000000010", "v", 1, 200, "x"))
	s.Add(kv("ctrs00000001000", "v", 1, 201, "x"))
	cells := scanAll(s, 1000)
	for i := 1; i < len(cells); i++ {
		require.Negative(t, encoding.InnerStoreComparer.CompareKeyValues(cells[i-1], cells[i]), "%s then %s", cells[i-1], cells[i])
	}
	require.Len(t, cells, learnSkipAt+5)
}
