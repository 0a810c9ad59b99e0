package memstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/encoding"
)

// Row shapes for benchmarks.
type rowShape int

const (
	rowsSequential rowShape = iota // 16 bytes, ascending
	rowsRandom                     // 16 bytes, scattered
	rowsPE                         // HBase pe's: 26 zero-padded digits, scattered
	rowsUser                       // the peer harness's and YCSB's: user%010d, scattered over 1M rows
)

// benchCell fills c (reusing its buffers) with cell number i of the given
// shape: family "f", qualifier "q", and a 100-byte value, the sizes of
// `regionsrv pe`.
func benchCell(c *encoding.KeyValue, i uint64, shape rowShape, seq encoding.SeqNum) {
	if c.Row == nil {
		c.Family, c.Qualifier = []byte("f"), []byte("q")
		c.Value = make([]byte, 100)
		c.Type = encoding.TypePut
	}
	k := i * 0x9E3779B97F4A7C15 // a bijection: distinct rows in random order
	switch shape {
	case rowsSequential:
		c.Row = binary.BigEndian.AppendUint64(c.Row[:0], i)
		c.Row = binary.BigEndian.AppendUint64(c.Row, i)
	case rowsRandom:
		c.Row = binary.BigEndian.AppendUint64(c.Row[:0], k)
		c.Row = binary.BigEndian.AppendUint64(c.Row, i)
	case rowsPE:
		c.Row = fmt.Appendf(c.Row[:0], "%026d", k%10_000_000_000)
	case rowsUser:
		c.Row = fmt.Appendf(c.Row[:0], "user%010d", k%1_000_000)
	}
	c.Timestamp = int64(i)
	c.SeqNum = seq
}

func BenchmarkMemStoreAdd(b *testing.B) {
	for _, shape := range []rowShape{rowsSequential, rowsRandom, rowsPE, rowsUser} {
		b.Run("order="+[]string{"sequential", "random", "pe", "user"}[shape], func(b *testing.B) {
			b.ReportAllocs()
			var c encoding.KeyValue
			benchCell(&c, 0, shape, 1)
			b.SetBytes(DataSize(&c))
			ms := New(encoding.InnerStoreComparer)
			for i := 0; b.Loop(); i++ {
				benchCell(&c, uint64(i), shape, encoding.SeqNum(i+1))
				ms.Add(&c)
			}
		})
	}
	b.Run("order=random/parallel", func(b *testing.B) {
		b.ReportAllocs()
		var c0 encoding.KeyValue
		benchCell(&c0, 0, rowsRandom, 1)
		b.SetBytes(DataSize(&c0))
		ms := New(encoding.InnerStoreComparer)
		var goroutines atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			var c encoding.KeyValue
			i := goroutines.Add(1) << 40 // each goroutine its own range of cells
			for pb.Next() {
				i++
				benchCell(&c, i, rowsRandom, encoding.SeqNum(i))
				ms.Add(&c)
			}
		})
	})
}

// benchSegment returns a segment of n cells with scattered rows.
func benchSegment(n int, shape rowShape) *Segment {
	s := NewSegment(encoding.InnerStoreComparer)
	var c encoding.KeyValue
	for i := range n {
		benchCell(&c, uint64(i), shape, encoding.SeqNum(i+1))
		s.Add(&c)
	}
	return s
}

func BenchmarkScannerNext(b *testing.B) {
	const n = 100_000
	s := benchSegment(n, rowsRandom)
	for _, dir := range []string{"forward", "backward"} {
		b.Run("dir="+dir, func(b *testing.B) {
			b.ReportAllocs()
			sc := s.NewScanner(math.MaxUint64)
			defer sc.Close()
			first, next := sc.SeekToFirst, sc.Next
			if dir == "backward" {
				first, next = sc.SeekToLast, sc.Prev
			}
			first()
			for b.Loop() {
				if next() == nil {
					first()
				}
			}
		})
	}
}

func BenchmarkSeek(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		for _, shape := range []rowShape{rowsRandom, rowsPE} {
			s := benchSegment(n, shape)
			keys := make([]encoding.Key, 4096)
			rng := rand.New(rand.NewPCG(1, 2))
			var c encoding.KeyValue
			for i := range keys {
				benchCell(&c, rng.Uint64N(uint64(n)), shape, 0)
				keys[i] = encoding.FirstOnRow(nil, c.Row)
			}
			rows := []string{"", "random", "pe"}[shape]
			for _, op := range []string{"SeekGE", "SeekLT"} {
				b.Run(fmt.Sprintf("cells=%d/rows=%s/op=%s", n, rows, op), func(b *testing.B) {
					b.ReportAllocs()
					sc := s.NewScanner(math.MaxUint64)
					defer sc.Close()
					seek := sc.SeekGE
					if op == "SeekLT" {
						seek = sc.SeekLT
					}
					for i := 0; b.Loop(); i++ {
						if seek(keys[i%len(keys)]) == nil && op == "SeekGE" {
							b.Fatal("not found")
						}
					}
				})
			}
			// A Get: open the memstore's scanners, seek, read one cell, close.
			b.Run(fmt.Sprintf("cells=%d/rows=%s/op=Get", n, rows), func(b *testing.B) {
				b.ReportAllocs()
				ms := &MemStore{cmp: s.cmp}
				ms.segs.Store(&segments{active: s})
				scs := make([]*SegmentScanner, 0, 2)
				for i := 0; b.Loop(); i++ {
					scs = ms.AppendScanners(scs[:0], math.MaxUint64)
					for _, sc := range scs {
						sc.SeekGE(keys[i%len(keys)])
						sc.Close()
					}
				}
			})
		}
	}
}

// TestZeroAllocs enforces what the benchmarks show: stepping, seeking and
// opening a scanner allocate nothing, and adding a cell, alone or after a
// Get, allocates less than once per cell on average.
func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under -race")
	}
	s := benchSegment(20_000, rowsRandom)
	key := func(i int) encoding.Key {
		var c encoding.KeyValue
		benchCell(&c, uint64(i), rowsRandom, 0)
		return encoding.FirstOnRow(nil, c.Row)
	}
	keys := []encoding.Key{key(5), key(17_000), key(123)}
	sc := s.NewScanner(math.MaxUint64)
	var i int
	for name, f := range map[string]func(){
		"Next":        func() { sc.Next() },
		"Prev":        func() { sc.Prev() },
		"SeekGE":      func() { i++; sc.SeekGE(keys[i%len(keys)]) },
		"SeekLT":      func() { i++; sc.SeekLT(keys[i%len(keys)]) },
		"SeekToFirst": func() { sc.SeekToFirst() },
		"SeekToLast":  func() { sc.SeekToLast() },
		"open+close":  func() { s.NewScanner(10).Close() },
	} {
		sc.SeekToFirst()
		if a := testing.AllocsPerRun(1000, f); a != 0 {
			t.Errorf("%s: %.2f allocs/op, want 0", name, a)
		}
	}
	sc.Close()

	ms := New(encoding.InnerStoreComparer)
	var c encoding.KeyValue
	benchCell(&c, 0, rowsRandom, 1)
	n := 0
	if a := testing.AllocsPerRun(20_000, func() {
		n++
		benchCell(&c, uint64(n), rowsRandom, encoding.SeqNum(n))
		ms.Add(&c)
	}); a > 0.5 {
		t.Errorf("Add: %.2f allocs/op, want < 0.5", a)
	}

	// Read-modify-write, as an Increment: the Get's seek reads the live
	// tree, so the Put after it copies no B-tree nodes a clone would share.
	seq := encoding.SeqNum(s.Len())
	if a := testing.AllocsPerRun(20_000, func() {
		i++
		sc := s.NewScanner(seq)
		sc.SeekGE(keys[i%len(keys)])
		sc.Close()
		seq++
		benchCell(&c, uint64(i%20_000), rowsRandom, seq)
		s.Add(&c)
	}); a > 0.5 {
		t.Errorf("Get+Add: %.2f allocs/op, want < 0.5", a)
	}
}

// BenchmarkReadAfterWrite is a read-modify-write loop on one segment, as the
// region's Increment or a Get+Put client does: open a scanner, seek to a row,
// read its cell, close, then add a newer cell for that row. In parallel,
// each goroutine runs the loop on rows of its own.
func BenchmarkReadAfterWrite(b *testing.B) {
	const n = 100_000
	for _, shape := range []rowShape{rowsRandom, rowsPE} {
		for _, parallel := range []bool{false, true} {
			name := "rows=" + []string{"", "random", "pe"}[shape]
			if parallel {
				name += "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				s := benchSegment(n, shape)
				var seq atomic.Uint64
				seq.Store(n)
				var goroutines atomic.Uint64
				loop := func(next func() bool) {
					rows := make([]uint64, 4096)
					keys := make([]encoding.Key, len(rows))
					rng := rand.New(rand.NewPCG(goroutines.Add(1), 2))
					var c encoding.KeyValue
					for i := range keys {
						rows[i] = rng.Uint64N(n)
						benchCell(&c, rows[i], shape, 0)
						keys[i] = encoding.FirstOnRow(nil, c.Row)
					}
					for i := 0; next(); i++ {
						j := i % len(keys)
						sc := s.NewScanner(encoding.SeqNum(seq.Load()))
						if sc.SeekGE(keys[j]) == nil {
							// Error, not Fatal: this may run on a RunParallel goroutine.
							b.Errorf("row %d not found", rows[j])
							sc.Close()
							return
						}
						sc.Close()
						benchCell(&c, rows[j], shape, encoding.SeqNum(seq.Add(1)))
						s.Add(&c)
					}
				}
				if parallel {
					b.RunParallel(func(pb *testing.PB) { loop(pb.Next) })
				} else {
					loop(b.Loop)
				}
			})
		}
	}
}

// BenchmarkUpsert increments 8-byte counters in 10,000 columns of a segment,
// as Increments to a family of one version do, with no read in progress:
// each upsert unlinks a version and reuses the cell of one unlinked before.
func BenchmarkUpsert(b *testing.B) {
	const columns = 10_000
	s, rows := counters(columns)
	in := &encoding.KeyValue{Family: []byte("f"), Qualifier: []byte("n"), Type: encoding.TypePut, Value: make([]byte, 8)}
	seq := encoding.SeqNum(1)
	oldest := func(encoding.SeqNum) (encoding.SeqNum, bool) { return seq - 1, true }
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seq++
		in.Row = rows[rng.IntN(columns)]
		in.Timestamp, in.SeqNum = int64(seq), seq
		binary.BigEndian.PutUint64(in.Value, uint64(seq))
		s.Upsert(in, oldest)
	}
}

// BenchmarkUpsertParallel is BenchmarkUpsert with a writer per processor,
// each on counters of its own (as row locks make Increments of different
// rows): upserts to columns a segment has share no lock and, in the steady
// state, no counter.
func BenchmarkUpsertParallel(b *testing.B) {
	const columns = 10_000
	s, rows := counters(columns)
	// No reads: every version but the newest is hidden from all of them.
	oldest := func(need encoding.SeqNum) (encoding.SeqNum, bool) { return need, true }
	// Writer w's columns are those ≡ w modulo the number of writers.
	writers := runtime.GOMAXPROCS(0)
	var next atomic.Int32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := int(next.Add(1)) - 1
		in := &encoding.KeyValue{Family: []byte("f"), Qualifier: []byte("n"), Type: encoding.TypePut, Value: make([]byte, 8)}
		rng := rand.New(rand.NewPCG(uint64(w), 2))
		seq := encoding.SeqNum(1)
		for pb.Next() {
			seq++
			in.Row = rows[rng.IntN(columns/writers)*writers+w]
			in.Timestamp, in.SeqNum = int64(seq), seq
			binary.BigEndian.PutUint64(in.Value, uint64(seq))
			s.Upsert(in, oldest)
		}
	})
}

// counters returns a segment of n 8-byte counters f:n, each put once, and
// their rows in a scrambled order.
func counters(n int) (*Segment, [][]byte) {
	s := NewSegment(encoding.InnerStoreComparer)
	rows := make([][]byte, n)
	for i := range rows {
		rows[i] = fmt.Appendf(nil, "ctr%010d", i*7919%n)
		s.Add(&encoding.KeyValue{Row: rows[i], Family: []byte("f"), Qualifier: []byte("n"),
			Timestamp: 1, Type: encoding.TypePut, SeqNum: 1, Value: make([]byte, 8)})
	}
	return s, rows
}
