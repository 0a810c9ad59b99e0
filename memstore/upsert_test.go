package memstore

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/mvcc"
)

// columnCells returns the cells of row's column q a scanner at readPoint
// sees, as "ts:value" in version order.
func columnCells(s *Segment, row, q string, readPoint encoding.SeqNum) []string {
	var out []string
	for _, c := range scanAll(s, readPoint) {
		if string(c.Row) == row && string(c.Qualifier) == q {
			out = append(out, fmt.Sprintf("%d:%s/%s", c.Timestamp, c.Type, c.Value))
		}
	}
	return out
}

// at returns an oldest-read-point function that always answers rp.
func at(rp encoding.SeqNum) func(encoding.SeqNum) (encoding.SeqNum, bool) {
	return func(encoding.SeqNum) (encoding.SeqNum, bool) { return rp, true }
}

// TestUpsertRemovesHiddenPuts: an upsert keeps the cell it adds and the
// newest put the oldest reader sees, and removes the older upserted puts of
// the column; cells in the arena (the column's first, a Put's) stay, since
// removing them would free nothing. The segment's size shrinks by what it
// removed, and other columns and rows stay.
func TestUpsertRemovesHiddenPuts(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r1", "other", 1, 1, "stays"))
	s.Add(kv("r2", "a", 1, 2, "stays"))
	s.Add(kv("r1", "a", 1, 3, "put"))
	var seq encoding.SeqNum = 3
	for i := 2; i <= 20; i++ {
		seq++
		// The reads in progress are all at the cell before this one.
		s.Upsert(kv("r1", "a", int64(i), seq, fmt.Sprint(i)), at(seq-1))
		want := []string{fmt.Sprintf("%d:Put/%d", i, i)}
		if i > 2 {
			// The put the reads in progress see stays.
			want = append(want, fmt.Sprintf("%d:Put/%d", i-1, i-1))
		}
		want = append(want, "1:Put/put")
		require.Equal(t, want, columnCells(s, "r1", "a", seq), "after upsert %d", i)
	}
	var want Size
	for _, c := range scanAll(s, seq) {
		want = want.Add(Size{DataSize: DataSize(c), HeapSize: cellSlotSize + int64(payloadLen(c)), CellCount: 1})
	}
	want.HeapSize += 3 * btreeEntryOverhead // the columns' entries
	require.NotZero(t, spareHeap(s))
	want.HeapSize += spareHeap(s) // the cell r1/a keeps for its next upsert
	require.Equal(t, want, s.Size())
	require.Equal(t, []string{"1:Put/stays"}, columnCells(s, "r1", "other", seq))
	require.Equal(t, []string{"1:Put/stays"}, columnCells(s, "r2", "a", seq))

	// A column an upsert starts keeps that cell too: its memory holds the
	// column.
	for i := 1; i <= 5; i++ {
		seq++
		s.Upsert(kv("r3", "a", int64(i), seq, fmt.Sprint(i)), at(seq-1))
	}
	require.Equal(t, []string{"5:Put/5", "4:Put/4", "1:Put/1"}, columnCells(s, "r3", "a", seq))
}

// TestUpsertKeepsWhatOldReadersSee: a read at an old read point keeps the
// put it sees, and every put newer than it, while it is in progress; the
// upserted cells no read point can see go.
func TestUpsertKeepsWhatOldReadersSee(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r", "a", 1, 1, "1"))
	for seq := encoding.SeqNum(2); seq <= 3; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, fmt.Sprint(seq)), at(seq-1))
	}
	old := s.NewScanner(3) // a scan at read point 3, open throughout
	defer old.Close()
	for seq := encoding.SeqNum(4); seq <= 12; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, fmt.Sprint(seq)), at(3))
	}
	// Put 3 is what read point 3 sees; put 2 is hidden from every read point
	// >= 3 (and was removed); 4..12 are newer than the oldest read point.
	require.Equal(t, []string{"12:Put/12", "11:Put/11", "10:Put/10", "9:Put/9", "8:Put/8", "7:Put/7",
		"6:Put/6", "5:Put/5", "4:Put/4", "3:Put/3", "1:Put/1"}, columnCells(s, "r", "a", 100))
	c := old.SeekToFirst()
	require.NotNil(t, c)
	require.Equal(t, "3", string(c.Value), "the open scanner still reads its version")
	require.Equal(t, "3", string(s.Newest([]byte("r"), []byte("f"), []byte("a"), 3).Value))

	// That read is done: the next upsert keeps only what the reads at 12 see.
	s.Upsert(kv("r", "a", 13, 13, "13"), at(12))
	require.Equal(t, []string{"13:Put/13", "12:Put/12", "1:Put/1"}, columnCells(s, "r", "a", 100))
}

// TestUpsertUnknownReadPoint: when the oldest read point cannot be told,
// nothing is removed.
func TestUpsertUnknownReadPoint(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	unknown := func(encoding.SeqNum) (encoding.SeqNum, bool) { return 0, false }
	for seq := encoding.SeqNum(1); seq <= 8; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, "v"), unknown)
	}
	require.Len(t, columnCells(s, "r", "a", 100), 8)
	require.EqualValues(t, 8, s.Size().CellCount)
	s.Upsert(kv("r", "a", 9, 9, "v"), at(8))
	require.Equal(t, []string{"9:Put/v", "8:Put/v", "1:Put/v"}, columnCells(s, "r", "a", 100), "and then it is")
}

// TestUpsertKeepsMarkersAndTaggedPuts: delete markers stay, and a put with
// tags (a TTL may expire it before the older puts) hides nothing: the
// newest untagged put below it does.
func TestUpsertKeepsMarkersAndTaggedPuts(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	unknown := func(encoding.SeqNum) (encoding.SeqNum, bool) { return 0, false }
	s.Add(kv("r", "a", 0, 1, "p0"))
	for seq := encoding.SeqNum(2); seq <= 5; seq++ {
		s.Upsert(kv("r", "a", int64(seq-1), seq, fmt.Sprintf("p%d", seq-1)), unknown)
	}
	d := kv("r", "a", 2, 6, "")
	d.Type = encoding.TypeDelete // deletes version 2 only
	s.Add(d)
	tagged := kv("r", "a", 10, 7, "tagged")
	tagged.Tags = encoding.AppendTag(nil, encoding.TagTypeTTL, binary.BigEndian.AppendUint64(nil, 1000))
	s.Upsert(tagged, unknown)
	s.Upsert(kv("r", "a", 11, 8, "new"), at(7))
	require.Equal(t, []string{"11:Put/new", "10:Put/tagged", "4:Put/p4", "2:Delete/", "0:Put/p0"}, columnCells(s, "r", "a", 100))
}

// TestUpsertOwnMemory: an upserted cell is a copy that shares nothing with
// the caller's, small or large.
func TestUpsertOwnMemory(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	for _, n := range []int{8, ownCellInline, 1000} {
		in := kv("r", fmt.Sprint(n), 1, 1, string(make([]byte, n)))
		in.Tags = encoding.AppendTag(nil, 9, []byte("t"))
		s.Upsert(in, at(0))
		clear(in.Value)
		in.Row[0] = 'x'
	}
	for _, c := range scanAll(s, 1) {
		require.Equal(t, "r", string(c.Row))
		require.Equal(t, byte(0), c.Value[0])
		require.Equal(t, cap(c.Value), len(c.Value), "appending to a cell must not reach its neighbour")
	}
}

// testReads registers the reads of the concurrent upsert tests, as the
// region's readPoints does: a read holds the read point it reads at until it
// is done, and oldest answers the oldest held, or the current read point.
type testReads struct {
	readPoint atomic.Uint64
	// mvcc, if set, is where the read point comes from instead.
	mvcc *mvcc.Control
	mu   sync.Mutex
	held map[int]encoding.SeqNum
}

// current returns the read point a read starting now takes.
func (r *testReads) current() encoding.SeqNum {
	if r.mvcc != nil {
		return encoding.SeqNum(r.mvcc.ReadPoint())
	}
	return encoding.SeqNum(r.readPoint.Load())
}

func newTestReads(rp encoding.SeqNum) *testReads {
	r := &testReads{held: map[int]encoding.SeqNum{}}
	r.readPoint.Store(uint64(rp))
	return r
}

// read runs f at the current read point, registered as reader id until f
// returns, and returns what f returns.
func (r *testReads) read(id int, f func(rp encoding.SeqNum) string) string {
	r.mu.Lock()
	rp := r.current()
	r.held[id] = rp
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.held, id)
		r.mu.Unlock()
	}()
	return f(rp)
}

func (r *testReads) oldest(encoding.SeqNum) (encoding.SeqNum, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.current()
	for _, h := range r.held {
		rp = min(rp, h)
	}
	return rp, true
}

// TestUpsertConcurrentReaders: readers walk a column without the segment's
// mutex while upserts unlink its old versions: each reader, at a read point
// that the writer's oldest() accounts for, sees exactly the version written
// at its read point.
func TestUpsertConcurrentReaders(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	row, fam, q := []byte("r"), []byte("f"), []byte("a")
	s.Add(kv("r", "a", 1, 1, fmt.Sprint(1)))
	reads := newTestReads(1)
	const n = 20000
	var wg sync.WaitGroup
	var failed atomic.Value
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reads.readPoint.Load() < n {
				msg := reads.read(id, func(rp encoding.SeqNum) string {
					var got *encoding.KeyValue
					if id%2 == 0 {
						got = s.Newest(row, fam, q, rp)
					} else {
						sc := s.NewScanner(rp)
						got = sc.SeekToFirst()
						sc.Close()
					}
					// An upserted cell may be reused once its reader is
					// gone: check it while registered, after giving the
					// writer time to unlink it (and reuse it, were it
					// free).
					runtime.Gosched()
					if got == nil || string(got.Value) != fmt.Sprint(rp) || got.SeqNum != rp {
						return fmt.Sprintf("read point %d: got %v", rp, got)
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
	for seq := encoding.SeqNum(2); seq <= n; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, fmt.Sprint(seq)), reads.oldest)
		reads.readPoint.Store(uint64(seq))
	}
	wg.Wait()
	require.Nil(t, failed.Load())
	// With the readers gone, the next upserts leave two versions: each
	// removes up to maxPruneSteps-2 of those the readers kept (a reader
	// descheduled for a while keeps every version after its own).
	kept := len(columnCells(s, "r", "a", n))
	last := encoding.SeqNum(n + kept/(maxPruneSteps-3) + 2)
	for seq := encoding.SeqNum(n + 1); seq <= last; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, "last"), reads.oldest)
		reads.readPoint.Store(uint64(seq))
	}
	cells := columnCells(s, "r", "a", last)
	require.Equal(t, []string{fmt.Sprintf("%d:Put/last", last), fmt.Sprintf("%d:Put/last", last-1), "1:Put/1"}, cells, "%d kept", kept)
	require.EqualValues(t, 3, s.Size().CellCount)
}

// TestUpsertBoundedWalk: while an old read keeps a column's versions, each
// upsert walks at most maxPruneSteps of them; once the read is done, each
// removes what one walk reaches, until two are left.
func TestUpsertBoundedWalk(t *testing.T) {
	s := NewSegment(encoding.InnerStoreComparer)
	s.Add(kv("r", "a", 1, 1, "1"))
	const n = 200
	for seq := encoding.SeqNum(2); seq <= n; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, fmt.Sprint(seq)), at(1))
	}
	require.Len(t, columnCells(s, "r", "a", n), n, "every version is newer than the old read")
	lens := []int{}
	for seq := encoding.SeqNum(n + 1); seq <= n+4; seq++ {
		s.Upsert(kv("r", "a", int64(seq), seq, fmt.Sprint(seq)), at(seq-1))
		lens = append(lens, len(columnCells(s, "r", "a", seq)))
	}
	// 201 cells: the walk reaches the new cell, the shield and 62 more; the
	// first cell, in the arena, stays.
	require.Equal(t, []int{201 - 62, 201 - 2*62 + 1, 201 - 3*62 + 2, 3}, lens)
}

// TestUpsertHint: a Hint from NewestHint spares the upsert its lookup and
// puts the cell in the column it names, as a lookup would; a hint to a
// segment that has since become the snapshot, or to another column, is
// not used, and the cell goes where a lookup puts it.
func TestUpsertHint(t *testing.T) {
	m := New(encoding.InnerStoreComparer)
	m.Add(kv("r", "a", 1, 1, "1"))
	m.Add(kv("r", "b", 1, 2, "b"))
	newest := func(q string, rp encoding.SeqNum) (string, Hint) {
		got, _, h := m.NewestHint([]byte("r"), []byte("f"), []byte(q), rp)
		if got == nil {
			return "", h
		}
		return string(got.Value), h
	}
	v, h := newest("a", 2)
	require.Equal(t, "1", v)
	require.NotNil(t, h.col)
	require.Same(t, m.segs.Load().active, h.seg)
	m.Upsert(kv("r", "a", 2, 3, "2"), at(2), h)
	v, h = newest("a", 3)
	require.Equal(t, "2", v)
	m.Upsert(kv("r", "a", 3, 4, "3"), at(3), h)
	m.Upsert(kv("r", "a", 4, 5, "4"), at(4), h)
	// The lookup's view: the newest, the one the oldest reader sees, and
	// the column's first (in the arena).
	require.Equal(t, []string{"4:Put/4", "3:Put/3", "1:Put/1"}, columnCells(m.segs.Load().active, "r", "a", 5))

	// A hint to another column is not used.
	_, hb := newest("b", 5)
	m.Upsert(kv("r", "a", 5, 6, "5"), at(5), hb)
	require.Equal(t, []string{"5:Put/5", "4:Put/4", "1:Put/1"}, columnCells(m.segs.Load().active, "r", "a", 6))
	require.Equal(t, []string{"1:Put/b"}, columnCells(m.segs.Load().active, "r", "b", 6))

	// A hint to the segment that is now the snapshot is not used: the
	// cell goes to the new active segment.
	_, h = newest("a", 6)
	snap := m.Snapshot()
	m.Upsert(kv("r", "a", 6, 7, "6"), at(6), h)
	require.Equal(t, []string{"6:Put/6"}, columnCells(m.segs.Load().active, "r", "a", 7))
	require.Equal(t, []string{"5:Put/5", "4:Put/4", "1:Put/1"}, columnCells(snap.Segment, "r", "a", 7))
	v, _ = newest("a", 7)
	require.Equal(t, "6", v)
}

// TestRemovedSize: what a prune takes off a segment's size for a version,
// read from the version alone, is what the cell's own DataSize and payload
// say, with tags and without, and for a size that does not fit the version.
func TestRemovedSize(t *testing.T) {
	for _, tags := range [][]byte{nil, {1, 0, 2, 'x', 'y'}} {
		for _, n := range []int{0, 8, 1000} {
			kv := &encoding.KeyValue{Row: []byte("row-1"), Family: []byte("f"), Qualifier: []byte("qual"),
				Timestamp: 7, Type: encoding.TypePut, Value: make([]byte, n), Tags: tags}
			want := Size{DataSize: DataSize(kv), HeapSize: cellSlotSize + int64(payloadLen(kv)), CellCount: 1}
			var v version
			v.setCell(kv)
			require.Equal(t, want, v.removedSize(), "tags %v, value %d bytes", tags, n)
			v.size = noSize // as for a cell too large for the field
			require.Equal(t, want, v.removedSize())
		}
	}
}
