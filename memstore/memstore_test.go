package memstore

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"

	"github.com/regionkv/regionkv/encoding"
)

// kv builds a Put cell of family "f".
func kv(row, qual string, ts int64, seq encoding.SeqNum, value string) *encoding.KeyValue {
	return &encoding.KeyValue{Row: []byte(row), Family: []byte("f"), Qualifier: []byte(qual),
		Timestamp: ts, Type: encoding.TypePut, SeqNum: seq, Value: []byte(value)}
}

// scanAll returns the cells a fresh scanner at readPoint sees, forward.
func scanAll(s *Segment, readPoint encoding.SeqNum) []*encoding.KeyValue {
	sc := s.NewScanner(readPoint)
	defer sc.Close()
	var out []*encoding.KeyValue
	for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
		out = append(out, c)
	}
	return out
}

// str formats cells one per line with their values, for comparisons whose
// failures read well.
func str(kvs []*encoding.KeyValue) string {
	var b bytes.Buffer
	for _, c := range kvs {
		fmt.Fprintf(&b, "%s V:%s\n", c, c.Value)
	}
	return b.String()
}

func TestSegmentOrder(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	in := []*encoding.KeyValue{
		kv("b", "q", 5, 1, "b5@1"),
		kv("a", "q", 5, 1, "a5@1"),
		kv("a", "q", 5, 3, "a5@3"), // same key, newer seq: first
		kv("a", "q", 7, 2, "a7@2"), // newer ts: before ts 5
		kv("a", "p", 1, 9, "p"),    // smaller qualifier: first of the row
		kv("a", "q", 5, 2, "a5@2"),
	}
	del := kv("a", "q", 5, 1, "")
	del.Type = encoding.TypeDeleteColumn // type descending: before the Put at ts 5
	in = append(in, del)
	for _, c := range in {
		s.Add(c)
	}
	want := `a/f:p/1/Put/vlen=1/seqid=9 V:p
a/f:q/7/Put/vlen=4/seqid=2 V:a7@2
a/f:q/5/DeleteColumn/vlen=0/seqid=1 V:
a/f:q/5/Put/vlen=4/seqid=3 V:a5@3
a/f:q/5/Put/vlen=4/seqid=2 V:a5@2
a/f:q/5/Put/vlen=4/seqid=1 V:a5@1
b/f:q/5/Put/vlen=4/seqid=1 V:b5@1
`
	require.Equal(t, want, str(scanAll(s, math.MaxUint64)))
	require.Equal(t, 7, s.Len())
}

func TestSegmentOverwrite(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	first := kv("r", "q", 1, 5, "old")
	d1 := s.Add(first)
	second := kv("r", "q", 1, 5, "newer")
	d2 := s.Add(second)
	require.Equal(t, int64(1), d1.CellCount)
	require.Equal(t, int64(0), d2.CellCount, "an equal cell replaces, it does not add")
	require.Equal(t, DataSize(second), d2.DataSize, "HBase counts the overwriting copy with MSLAB on")
	require.Equal(t, d1.HeapSize-btreeEntryOverhead+int64(len("newer")-len("old")), d2.HeapSize)
	require.Equal(t, d1.Add(d2), s.Size())

	got := scanAll(s, math.MaxUint64)
	require.Len(t, got, 1)
	require.Equal(t, "newer", string(got[0].Value))

	// Same key, different seq: both stay.
	s.Add(kv("r", "q", 1, 6, "v6"))
	require.Equal(t, "r/f:q/1/Put/vlen=2/seqid=6 V:v6\nr/f:q/1/Put/vlen=5/seqid=5 V:newer\n", str(scanAll(s, math.MaxUint64)))
}

func TestReadPoint(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for seq := encoding.SeqNum(1); seq <= 10; seq++ {
		s.Add(kv(fmt.Sprintf("r%02d", 11-seq), "q", 1, seq, "v"))
		s.Add(kv("same", "q", 1, seq, fmt.Sprint(seq)))
	}
	for rp := encoding.SeqNum(0); rp <= 11; rp++ {
		got := scanAll(s, rp)
		require.Len(t, got, 2*int(min(rp, 10)), "read point %d", rp)
		for _, c := range got {
			require.LessOrEqual(t, c.SeqNum, rp)
		}
		// A Get of "same" at the read point finds the newest visible version.
		sc := s.NewScanner(rp)
		c := sc.SeekGE(encoding.FirstOnRow(nil, []byte("same")))
		if rp == 0 {
			require.Nil(t, c)
		} else {
			require.Equal(t, fmt.Sprint(min(rp, 10)), string(c.Value))
		}
		sc.Close()
	}
}

// TestScannerSnapshot checks that a scanner sees the cells added before it
// was opened and no later ones, even with sequence ids at its read point,
// whether a refill reads the live tree, a clone made after the scanner was
// opened or one cached when it was.
func TestScannerSnapshot(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	var rows []string // every row added, one cell each
	add := func(row string, seq encoding.SeqNum) {
		s.Add(kv(row, "q", 1, seq, "v"))
		rows = append(rows, row)
	}
	for i := range 300 {
		add(fmt.Sprintf("r%04d", 2*i), 5)
	}
	later := 0
	addLater := func() { // rows between and around the others, at a lower seq
		add(fmt.Sprintf("r%04d-%d", 2*(later%300)+1, later), 1)
		later++
	}
	check := func(name string, sc *SegmentScanner, want []string) {
		t.Helper()
		slices.Sort(want)
		for _, r := range []string{"r0001", "r0100", "r0003"} {
			i, _ := slices.BinarySearch(want, r)
			c := sc.SeekGE(encoding.FirstOnRow(nil, []byte(r)))
			require.Equal(t, want[i], string(c.Row), name)
			addLater()
		}
		var got []string
		for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
			got = append(got, string(c.Row))
			addLater()
		}
		require.Equal(t, want, got, name)
		got = got[:0]
		for c := sc.SeekToLast(); c != nil; c = sc.Prev() {
			got = append(got, string(c.Row))
			addLater()
		}
		slices.Reverse(got)
		require.Equal(t, want, got, name)
	}

	// No clone cached at open: the seeks read the live tree, the scans go
	// on in a clone made after the writes that followed the open.
	require.Nil(t, s.readTree.Load())
	sc := s.NewScanner(math.MaxUint64)
	want := slices.Clone(rows)
	addLater()
	check("live, then a later clone", sc, want)
	sc.Close()

	// A clone cached at open, and writes after.
	scanAll(s, math.MaxUint64)
	require.NotNil(t, s.readTree.Load(), "a scan clones")
	sc = s.NewScanner(math.MaxUint64)
	require.NotNil(t, sc.tree)
	check("clone cached at open", sc, slices.Clone(rows))
	sc.Close()

	// A cell replaced by an equal one after the open is seen once, in
	// either form; a scanner opened after sees the new form.
	s.Add(kv("replaced", "q", 1, 7, "old"))
	for _, cached := range []bool{false, true} {
		s.Add(kv("other", "q", 1, 7, "v")) // leaves no clone cached
		if cached {
			scanAll(s, math.MaxUint64)
		}
		sc := s.NewScanner(math.MaxUint64)
		s.Add(kv("replaced", "q", 1, 7, fmt.Sprint("new", cached)))
		var seen []string
		for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
			if string(c.Row) == "replaced" {
				seen = append(seen, string(c.Value))
			}
		}
		sc.Close()
		require.Len(t, seen, 1, "cached=%t", cached)
		require.Contains(t, []string{"old", "newfalse", fmt.Sprint("new", cached)}, seen[0])
		sc = s.NewScanner(math.MaxUint64)
		c := sc.SeekGE(encoding.FirstOnRow(nil, []byte("replaced")))
		require.Equal(t, fmt.Sprint("new", cached), string(c.Value))
		sc.Close()
	}
}

func TestAddCopies(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	src := &encoding.KeyValue{Row: []byte("row"), Family: []byte("f"), Qualifier: []byte("q"),
		Timestamp: 1, Type: encoding.TypePut, SeqNum: 1, Value: []byte("value"), Tags: []byte{0, 2, 1, 'x'}}
	s.Add(src)
	s.Add(kv("row2", "q", 1, 1, "v2"))
	for _, b := range [][]byte{src.Row, src.Family, src.Qualifier, src.Value, src.Tags} {
		for i := range b {
			b[i] = '!'
		}
	}
	got := scanAll(s, math.MaxUint64)
	require.Equal(t, "row/f:q/1/Put/vlen=5/seqid=1", got[0].String())
	require.Equal(t, "value", string(got[0].Value))
	require.Equal(t, []byte{0, 2, 1, 'x'}, got[0].Tags)
	// Appending to a returned slice must not overwrite the next cell's bytes.
	_ = append(got[0].Value, "XXXXXXXXXXXXXXXX"...)
	_ = append(got[0].Row, "XXXXXXXXXXXXXXXX"...)
	require.Equal(t, "row2/f:q/1/Put/vlen=2/seqid=1 V:v2\n", str(got[1:]))
	require.Equal(t, "value", string(got[0].Value))
	require.Nil(t, kv("r", "q", 1, 1, "").Tags)
}

func TestArenaLargeAndManyCells(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	big := bytes.Repeat([]byte{'B'}, maxArenaAlloc+1)
	const n = 5000
	val := bytes.Repeat([]byte{'v'}, 900) // 5000 * ~900 B crosses several doubling chunks
	for i := range n {
		c := kv(fmt.Sprintf("r%05d", i), "q", 1, 1, "")
		c.Value = val
		if i == 1234 {
			c.Value = big
		}
		s.Add(c)
	}
	got := scanAll(s, math.MaxUint64)
	require.Len(t, got, n)
	for i, c := range got {
		require.Equal(t, fmt.Sprintf("r%05d", i), string(c.Row))
		if i == 1234 {
			require.Equal(t, big, c.Value)
		} else {
			require.Equal(t, val, c.Value)
		}
	}
	// The arena holds the payload with bounded slack: chunks double to 2 MiB.
	payload := int64(n*(6+1+1+900) + len(big) - 900)
	reserved := s.arena.reserved.Load()
	require.GreaterOrEqual(t, reserved, payload+n*cellSlotSize)
	require.Less(t, reserved, 2*payload+maxChunkSize+(n+2*maxSlabLen)*cellSlotSize)
}

func TestSizeAccounting(t *testing.T) {
	c := &encoding.KeyValue{Row: []byte("row"), Family: []byte("fam"), Qualifier: []byte("qual"),
		Timestamp: 1, Type: encoding.TypePut, SeqNum: 1, Value: []byte("value")}
	// HBase's KeyValue length: 4 keyLen + 4 valueLen + key (2+3+1+3+4+8+1) + value.
	require.Equal(t, int64(8+22+5), DataSize(c))
	withTags := *c
	withTags.Tags = []byte{0, 2, 1, 'x'}
	require.Equal(t, int64(8+22+5+2+4), DataSize(&withTags))
	// HBase's KeyValueCodecWithTags writes the same bytes after a 4-byte total length.
	require.Equal(t, DataSize(&withTags), int64(encoding.CellBlockSize(&withTags, true)-4))

	ms := New(encoding.InnerStoreComparer)
	var want Size
	for i := range 100 {
		want = want.Add(ms.Add(kv(fmt.Sprintf("r%03d", i), "q", 1, encoding.SeqNum(i+1), "value")))
	}
	require.Equal(t, want, ms.Size())
	require.Equal(t, int64(100), want.CellCount)
	require.Equal(t, 100*DataSize(kv("r000", "q", 1, 1, "value")), want.DataSize)
	perCell := want.HeapSize / 100
	require.Equal(t, cellSlotSize+btreeEntryOverhead+int64(len("r000f")+len("q")+len("value")), perCell)

	snap := ms.Snapshot()
	require.Equal(t, want, snap.Segment.Size())
	require.Equal(t, want, ms.SnapshotSize())
	require.True(t, ms.ActiveSize().IsEmpty())
	d := ms.Add(kv("new", "q", 1, 1000, "v"))
	require.Equal(t, want.Add(d), ms.Size())
	require.Equal(t, 101, ms.Len())
	require.NoError(t, ms.ClearSnapshot(snap.ID))
	require.Equal(t, d, ms.Size())
}

func TestSeqAndTimeRange(t *testing.T) {
	ms := New(encoding.InnerStoreComparer)
	_, ok := ms.MinSeq()
	require.False(t, ok)
	_, _, ok = ms.TimeRange()
	require.False(t, ok)

	ms.Add(kv("a", "q", 50, 7, "v"))
	ms.Add(kv("b", "q", 10, 3, "v"))
	ms.Add(kv("c", "q", 90, 12, "v"))
	seq, ok := ms.MinSeq()
	require.True(t, ok)
	require.Equal(t, encoding.SeqNum(3), seq)
	lo, hi, ok := ms.TimeRange()
	require.True(t, ok)
	require.Equal(t, [2]int64{10, 90}, [2]int64{lo, hi})

	// After a snapshot the active segment's range restarts; the earliest
	// unflushed seq still covers the snapshot until it is cleared.
	snap := ms.Snapshot()
	_, ok = ms.MinSeq()
	require.False(t, ok)
	ms.Add(kv("d", "q", 1, 20, "v"))
	seq, _ = ms.MinSeq()
	require.Equal(t, encoding.SeqNum(20), seq)
	seq, ok = ms.EarliestUnflushedSeq()
	require.True(t, ok)
	require.Equal(t, encoding.SeqNum(3), seq)
	require.NoError(t, ms.ClearSnapshot(snap.ID))
	seq, _ = ms.EarliestUnflushedSeq()
	require.Equal(t, encoding.SeqNum(20), seq)
}

func TestSnapshotLifecycle(t *testing.T) {
	ms := New(encoding.InnerStoreComparer)

	// Snapshot of an empty memstore: an empty frozen snapshot, active kept.
	active, _ := ms.Segments()
	empty := ms.Snapshot()
	require.True(t, empty.Segment.Empty())
	require.True(t, empty.Segment.Frozen())
	a2, s2 := ms.Segments()
	require.Same(t, active, a2)
	require.Same(t, empty, s2)
	require.NoError(t, ms.ClearSnapshot(empty.ID))

	for i := range 10 {
		ms.Add(kv(fmt.Sprintf("r%d", i), "q", 1, encoding.SeqNum(i+1), "v"))
	}
	snap := ms.Snapshot()
	require.Greater(t, snap.ID, empty.ID)
	require.Equal(t, 10, snap.Segment.Len())
	require.True(t, snap.Segment.Frozen())
	require.Panics(t, func() { snap.Segment.Add(kv("x", "q", 1, 1, "v")) })

	// Writes continue into the new active segment; readers see both.
	ms.Add(kv("r5", "q", 2, 100, "new"))
	scs := ms.Scanners(math.MaxUint64)
	require.Len(t, scs, 2)
	require.Same(t, snap.Segment, scs[1].Segment())
	var n int
	for _, sc := range scs {
		for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
			n++
		}
	}
	require.Equal(t, 11, n)

	// A second Snapshot before ClearSnapshot returns the pending one.
	require.Same(t, snap, ms.Snapshot())
	require.Equal(t, int64(1), ms.ActiveSize().CellCount)

	err := ms.ClearSnapshot(snap.ID + 1)
	require.True(t, errors.Is(err, ErrSnapshotMismatch), "%v", err)
	require.NoError(t, ms.ClearSnapshot(snap.ID))
	require.NoError(t, ms.ClearSnapshot(snap.ID), "clearing again is a no-op")
	_, s := ms.Segments()
	require.Nil(t, s)

	// Scanners opened before the clear keep working.
	c := scs[1].SeekGE(encoding.FirstOnRow(nil, []byte("r3")))
	require.Equal(t, "r3", string(c.Row))
	for _, sc := range scs {
		sc.Close()
	}

	// Scanners skips segments with nothing visible at the read point.
	require.Empty(t, ms.Scanners(99))
	require.Len(t, ms.Scanners(100), 1)
}

func TestScannerPositioning(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for _, r := range []string{"b", "d", "f"} {
		s.Add(kv(r, "q", 1, 1, r))
	}
	row := func(c *encoding.KeyValue) string {
		if c == nil {
			return "<nil>"
		}
		return string(c.Row)
	}
	first := func(r string) encoding.Key { return encoding.FirstOnRow(nil, []byte(r)) }
	sc := s.NewScanner(math.MaxUint64)
	defer sc.Close()
	require.Nil(t, sc.Current())
	require.Equal(t, "b", row(sc.Next()), "Next on an unpositioned scanner is SeekToFirst")
	require.Equal(t, "f", row(sc.SeekGE(first("e"))))
	require.Equal(t, "<nil>", row(sc.Next()))
	require.Equal(t, "<nil>", row(sc.Next()))
	require.Equal(t, "f", row(sc.Prev()))
	require.Equal(t, "<nil>", row(sc.SeekGE(first("g"))))
	require.Equal(t, "f", row(sc.Prev()), "Prev after the end is the last cell")
	require.Equal(t, "d", row(sc.SeekLT(first("e"))))
	require.Equal(t, "b", row(sc.SeekLT(first("d"))))
	require.Equal(t, "<nil>", row(sc.Prev()))
	require.Equal(t, "<nil>", row(sc.Current()))
	require.Equal(t, "b", row(sc.Next()), "Next before the start is the first cell")
	require.Equal(t, "<nil>", row(sc.SeekLT(first("a"))))
	require.Equal(t, "b", row(sc.Next()))
	require.Equal(t, "f", row(sc.SeekToLast()))
	require.Equal(t, "d", row(sc.Prev()))
	require.Equal(t, "f", row(sc.Next()))
	require.Equal(t, "b", row(sc.SeekToFirst()))
	// Last on row sorts after every cell of the row.
	require.Equal(t, "d", row(sc.SeekGE(encoding.LastOnRow(nil, []byte("b")))))
	require.Equal(t, "b", row(sc.SeekLT(encoding.LastOnRow(nil, []byte("b")))))
}

// TestSkipPrefixFromSequentialRows: a table's first rows added in order
// share more than the rows after them (ctrs0000000000 to ctrs0000000063
// share 13 bytes, ctrs0000001234 only 10 of those); the skip prefix leaves 8
// bytes of them inline, so that later rows still have it.
func TestSkipPrefixFromSequentialRows(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for i := range learnSkipAt {
		s.Add(&encoding.KeyValue{Row: fmt.Appendf(nil, "ctrs%010d", i), Family: []byte("f"), Qualifier: []byte("v"),
			Timestamp: 1, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i + 1)})
	}
	require.Equal(t, "ctrs00", string(s.skip))
	e := s.entry(&encoding.KeyValue{Row: []byte("ctrs0000009999")}, &column{})
	require.NotZero(t, e.meta&metaHasSkip, "a later row has the skip prefix")
}

// TestSkipPrefixBeforeFirstClone: reads that come before the segment has
// learnSkipAt cells (an Increment reads a counter's row before it writes
// it) make it clone its tree; the prefix is picked before that first clone,
// which would fix it for good, and the clone and the trees after it keep
// the rows in order. A segment with no cell is read without its mutex and
// never cloned.
func TestSkipPrefixBeforeFirstClone(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	read := func(seq encoding.SeqNum) []string {
		sc := s.NewScanner(seq)
		defer sc.Close()
		var rows []string
		for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
			rows = append(rows, string(c.Row))
		}
		return rows
	}
	for i := 0; i < 2*cloneAfterLiveReads; i++ {
		require.Empty(t, read(100))
	}
	require.Nil(t, s.readTree.Load(), "an empty segment is not cloned")
	require.False(t, s.learned)

	add := func(i int, seq encoding.SeqNum) {
		s.Add(&encoding.KeyValue{Row: fmt.Appendf(nil, "ctrs%010d", i), Family: []byte("f"), Qualifier: []byte("v"),
			Timestamp: 1, Type: encoding.TypePut, SeqNum: seq})
	}
	add(4711, 1)
	for i := 0; i < 2*cloneAfterLiveReads; i++ {
		require.Equal(t, []string{"ctrs0000004711"}, read(100))
	}
	require.Nil(t, s.readTree.Load(), "a one-cell segment is read live")
	add(815, 2)
	add(9, 3)
	var want []string
	for i := 0; i <= cloneAfterLiveReads; i++ {
		want = read(100)
	}
	require.Equal(t, []string{"ctrs0000000009", "ctrs0000000815", "ctrs0000004711"}, want)
	require.NotNil(t, s.readTree.Load(), "reads with no write between clone the tree")
	require.True(t, s.learned)
	require.Equal(t, "ctrs00", string(s.skip), "the prefix was picked before the clone")

	// Rows after the clone, with and without the prefix, go in order, in
	// the live tree and in the clones that follow it.
	add(12, 4)
	add(5000, 5)
	s.Add(&encoding.KeyValue{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("v"),
		Timestamp: 1, Type: encoding.TypePut, SeqNum: 6})
	want = []string{"a", "ctrs0000000009", "ctrs0000000012", "ctrs0000000815", "ctrs0000004711", "ctrs0000005000"}
	for i := 0; i <= cloneAfterLiveReads; i++ {
		require.Equal(t, want, read(100))
	}
	require.Equal(t, []string{"ctrs0000000009", "ctrs0000000815", "ctrs0000004711"}, read(3),
		"a scanner at read point 3 sees the first three adds")
}

// TestSeekAheadPastColumn: a seek that stops in its first column, one with
// more versions, collects what follows the column in the same descent, so
// that leaving the column (a Get of a counter's row, a scan that keeps one
// version) costs no second descent; ColumnGoesOn tells the caller to leave
// by a seek rather than by stepping down the list.
func TestSeekAheadPastColumn(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	seq := encoding.SeqNum(0)
	add := func(row string, versions int) {
		for ts := 1; ts <= versions; ts++ {
			seq++
			s.Add(kv(row, "q", int64(ts), seq, fmt.Sprintf("%s%d", row, ts)))
		}
	}
	add("a", 10)
	add("b", 1)
	add("c", 3)
	add("d", 1)
	val := func(c *encoding.KeyValue) string {
		if c == nil {
			return "<nil>"
		}
		return string(c.Value)
	}
	first := func(r string) encoding.Key { return encoding.FirstOnRow(nil, []byte(r)) }
	past := func(r string) encoding.Key {
		return encoding.LastOnRowCol(nil, []byte(r), []byte("f"), []byte("q"))
	}

	sc := s.NewScanner(math.MaxUint64)
	defer sc.Close()
	require.Equal(t, "a10", val(sc.SeekGE(first("a"))))
	require.True(t, sc.ColumnGoesOn(), "a's nine older versions are not collected")
	require.Equal(t, 1, sc.descents)
	require.Equal(t, "b1", val(sc.SeekGE(past("a"))), "past a's column")
	require.Equal(t, 1, sc.descents, "answered from what the first descent collected")
	require.False(t, sc.ColumnGoesOn(), "b has one version")
	require.Equal(t, "c3", val(sc.Next()))
	require.True(t, sc.ColumnGoesOn())
	require.Equal(t, "c2", val(sc.Next()))
	require.Equal(t, "c1", val(sc.Next()))
	require.Equal(t, "d1", val(sc.Next()))
	require.Equal(t, 2, sc.descents, "after c the tree is read again")
	require.Equal(t, "<nil>", val(sc.Next()))

	// Stepping down the column instead reaches what the seek collected
	// past it without a second descent.
	sc2 := s.NewScanner(math.MaxUint64)
	defer sc2.Close()
	var got []string
	for c := sc2.SeekGE(first("a")); c != nil && string(c.Row) < "c"; c = sc2.Next() {
		got = append(got, val(c))
	}
	require.Equal(t, []string{"a10", "a9", "a8", "a7", "a6", "a5", "a4", "a3", "a2", "a1", "b1"}, got)
	require.Equal(t, 1, sc2.descents)

	// A seek into the column's uncollected versions is not answered from
	// ahead; one past everything finds the end.
	sc3 := s.NewScanner(math.MaxUint64)
	defer sc3.Close()
	require.Equal(t, "a10", val(sc3.SeekGE(first("a"))))
	older := encoding.AppendKey(nil, []byte("a"), []byte("f"), []byte("q"), 4, encoding.TypeMaximum)
	require.Equal(t, "a4", val(sc3.SeekGE(older)))
	require.Equal(t, "b1", val(sc3.SeekGE(past("a"))))
	sc4 := s.NewScanner(math.MaxUint64)
	defer sc4.Close()
	require.Equal(t, "c3", val(sc4.SeekGE(first("c"))))
	require.Equal(t, "<nil>", val(sc4.SeekGE(past("d"))))
	require.Equal(t, "d1", val(sc4.Prev()))

	// Versions the scanner cannot see are skipped in ahead as in buf.
	sc5 := s.NewScanner(12) // sees a and b, and c's first version
	defer sc5.Close()
	require.Equal(t, "a10", val(sc5.SeekGE(first("a"))))
	require.Equal(t, "b1", val(sc5.SeekGE(past("a"))))
	require.Equal(t, "c1", val(sc5.Next()))
	require.Equal(t, "<nil>", val(sc5.Next()))
}

// TestDeletesAndTagsCounted: a segment counts its delete markers and notes
// whether any cell had tags, by Add and by Upsert, so that a flush of puts
// without tags skips its passes over every cell.
func TestDeletesAndTagsCounted(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	require.Zero(t, s.Deletes())
	require.False(t, s.HasTags())
	s.Add(kv("a", "q", 1, 1, "x"))
	s.Upsert(kv("b", "q", 1, 2, "y"), func(encoding.SeqNum) (encoding.SeqNum, bool) { return 0, false })
	require.Zero(t, s.Deletes())
	require.False(t, s.HasTags())
	for i, typ := range []encoding.Type{encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily, encoding.TypeDeleteFamilyVersion} {
		d := kv("c", "q", 1, encoding.SeqNum(3+i), "")
		d.Type, d.Value = typ, nil
		s.Add(d)
		require.EqualValues(t, i+1, s.Deletes(), "%s", typ)
	}
	tagged := kv("d", "q", 1, 9, "z")
	tagged.Tags = []byte{0, 2, 8, 1} // one tag of type 8, one byte
	s.Add(tagged)
	require.True(t, s.HasTags())
}
