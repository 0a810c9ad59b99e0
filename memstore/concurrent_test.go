package memstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
)

// The concurrent tests run writers that each add a sequence of cells, with
// sequence ids from one shared counter (so each writer's ids increase), and
// readers that open scanners at random read points while the writes go on.
// With flush=true a flusher also snapshots the memstore, "writes" the
// snapshot to a store-file list, publishes it and clears the snapshot, as the
// region does, and readers read the memstore and then the file list.
//
// What a reader at read point R must see of writer w, whose cell i has
// sequence id seq(w, i):
//
//   - every cell i that w had finished adding before the reader opened its
//     scanners (i < low, low read from w's progress counter just before), iff
//     seq(w, i) <= R: exact;
//   - no cell with seq > R, no cell w had not started adding when the reader
//     finished opening (i > high, high read just after), no cell twice;
//   - since seq(w, i) increases with i, the cells it sees of w are a prefix
//     0..m-1 of w's sequence: a gap would be a lost write or a torn snapshot;
//   - every cell is intact (its value is derived from its row and writer),
//     and each scanner returns cells in strictly increasing order.
//
// Once the writers stop, a reader must see exactly the cells with seq <= R.

type concurrentRun struct {
	ms       *MemStore
	writers  int
	perW     int
	rows     int // if > 0, the rows cells fall on (see cellFor)
	nextSeq  atomic.Uint64
	done     []atomic.Int64    // cells writer w has finished adding
	seqs     [][]atomic.Uint64 // seqs[w][i]: sequence id of writer w's cell i
	filesMu  sync.Mutex
	files    [][]*encoding.KeyValue // flushed snapshots, published before ClearSnapshot
	flushed  sync.Map               // [2]int{w, i} of every flushed cell, for probes
	probes   atomic.Int64
	flushes  atomic.Int64
	scans    atomic.Int64
	failOnce sync.Once
	failMsg  atomic.Pointer[string]
}

// cellFor builds writer w's cell i. Rows are scattered so that writers
// interleave in key order; the value repeats the row and names the writer.
// With r.rows set, all cells fall on that many rows, so that columns gather
// versions from every writer.
func (r *concurrentRun) cellFor(w, i int, seq encoding.SeqNum) *encoding.KeyValue {
	h := rand.New(rand.NewPCG(uint64(w), uint64(i))).Uint64()
	if r.rows > 0 {
		h %= uint64(r.rows)
	}
	row := fmt.Appendf(nil, "%016x", h)
	val := binary.BigEndian.AppendUint32(nil, uint32(w))
	val = binary.BigEndian.AppendUint32(val, uint32(i))
	val = append(val, row...)
	return &encoding.KeyValue{Row: row, Family: []byte("f"), Qualifier: []byte("q"),
		Timestamp: int64(i), Type: encoding.TypePut, SeqNum: seq, Value: val}
}

// parseCell checks c is intact and returns its writer and index.
func (r *concurrentRun) parseCell(c *encoding.KeyValue) (w, i int, err error) {
	if len(c.Value) != 8+len(c.Row) || string(c.Value[8:]) != string(c.Row) {
		return 0, 0, fmt.Errorf("torn cell %s value %q", c, c.Value)
	}
	w, i = int(binary.BigEndian.Uint32(c.Value)), int(binary.BigEndian.Uint32(c.Value[4:]))
	if int64(i) != c.Timestamp || string(r.cellFor(w, i, 0).Row) != string(c.Row) {
		return 0, 0, fmt.Errorf("cell %s does not match writer %d index %d", c, w, i)
	}
	return w, i, nil
}

func (r *concurrentRun) fail(format string, args ...any) {
	r.failOnce.Do(func() {
		msg := fmt.Sprintf(format, args...)
		r.failMsg.Store(&msg)
	})
}

func (r *concurrentRun) failed() bool { return r.failMsg.Load() != nil }

func (r *concurrentRun) write(w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 2))
	for i := range r.perW {
		seq := r.nextSeq.Add(1)
		r.seqs[w][i].Store(seq)
		r.ms.Add(r.cellFor(w, i, encoding.SeqNum(seq)))
		r.done[w].Store(int64(i + 1))
		// Pause now and then, so that readers also open scanners while no
		// write is in flight, when a stale snapshot would show.
		if rng.IntN(16) == 0 {
			time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
		}
	}
}

func (r *concurrentRun) flush() {
	snap := r.ms.Snapshot()
	sc := snap.Segment.NewScanner(math.MaxUint64)
	var file []*encoding.KeyValue
	for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
		file = append(file, c)
	}
	sc.Close()
	if len(file) != snap.Segment.Len() {
		r.fail("flush: snapshot scan found %d cells, segment counts %d", len(file), snap.Segment.Len())
	}
	for _, c := range file {
		w, i, _ := r.parseCell(c)
		r.flushed.Store([2]int{w, i}, true)
	}
	r.filesMu.Lock()
	r.files = append(r.files, file)
	r.filesMu.Unlock()
	if err := r.ms.ClearSnapshot(snap.ID); err != nil {
		r.fail("flush: %v", err)
	}
	r.flushes.Add(1)
}

// read opens scanners at a random read point and checks what they see.
// quiescent means the writers have stopped.
func (r *concurrentRun) read(rng *rand.Rand, quiescent bool) {
	low := make([]int64, r.writers)
	for w := range low {
		low[w] = r.done[w].Load()
	}
	readPoint := encoding.SeqNum(rng.Uint64N(r.nextSeq.Load() + 2))
	if rng.IntN(4) == 0 {
		readPoint = math.MaxUint64
	}
	scanners := r.ms.Scanners(readPoint)
	// Files published so far: with the memstore pair loaded first, a
	// snapshot cleared since is in here.
	r.filesMu.Lock()
	files := r.files[:len(r.files):len(r.files)]
	r.filesMu.Unlock()
	high := make([]int64, r.writers)
	for w := range high {
		high[w] = r.done[w].Load()
	}

	seen := make([][]bool, r.writers)
	for w := range seen {
		seen[w] = make([]bool, r.perW)
	}
	note := func(c *encoding.KeyValue, where string) {
		w, i, err := r.parseCell(c)
		if err != nil {
			r.fail("%s: %v", where, err)
			return
		}
		if c.SeqNum > readPoint {
			r.fail("%s: read point %d sees %s", where, readPoint, c)
		}
		if int64(i) > high[w] {
			r.fail("%s: sees writer %d cell %d, which had not started (%d done)", where, w, i, high[w])
		}
		seen[w][i] = true
	}
	backward := rng.IntN(3) == 0
	for si, sc := range scanners {
		where := fmt.Sprintf("scanner %d of %d", si, len(scanners))
		var prev *encoding.KeyValue
		next, c := sc.Next, sc.SeekToFirst()
		if backward {
			next, c = sc.Prev, sc.SeekToLast()
		}
		for ; c != nil; c = next() {
			if prev != nil {
				d := r.ms.Comparer().CompareKeyValues(prev, c)
				if (!backward && d >= 0) || (backward && d <= 0) {
					r.fail("%s: out of order (backward=%t): %s then %s", where, backward, prev, c)
				}
				if seen[mustWriter(c)][mustIndex(c)] {
					r.fail("%s: %s seen twice", where, c)
				}
			}
			note(c, where)
			prev = c
		}
		sc.Close()
	}
	for _, f := range files {
		for _, c := range f {
			if c.SeqNum <= readPoint {
				note(c, "file")
			}
		}
	}

	for w := range r.writers {
		// The visible cells of w form a prefix; cells done before the open
		// are there exactly when visible.
		end := 0
		for end < r.perW && seen[w][end] {
			end++
		}
		for i := end; i < r.perW; i++ {
			if seen[w][i] {
				r.fail("read point %d: writer %d: sees cell %d but not %d", readPoint, w, i, end)
				return
			}
		}
		known := low[w]
		if quiescent {
			known = int64(r.perW)
		}
		for i := range known {
			visible := encoding.SeqNum(r.seqs[w][i].Load()) <= readPoint
			if visible != seen[w][i] {
				r.fail("read point %d: writer %d cell %d (seq %d, added before open) visible=%t seen=%t",
					readPoint, w, i, r.seqs[w][i].Load(), visible, seen[w][i])
				return
			}
		}
	}
	r.scans.Add(1)
}

// probe checks cheaply that the cells each writer finished last before the
// scanners opened are found by a seek, iff visible. These are the cells a
// stale snapshot of a segment would miss.
func (r *concurrentRun) probe(rng *rand.Rand) {
	low := make([]int64, r.writers)
	for w := range low {
		low[w] = r.done[w].Load()
	}
	readPoint := encoding.SeqNum(math.MaxUint64)
	if rng.IntN(2) == 0 {
		readPoint = encoding.SeqNum(r.nextSeq.Load() - rng.Uint64N(8))
	}
	scanners := r.ms.Scanners(readPoint)
	defer func() {
		for _, sc := range scanners {
			sc.Close()
		}
	}()
	for w := range r.writers {
		if low[w] == 0 {
			continue
		}
		i := int(low[w] - 1)
		if rng.IntN(4) == 0 {
			i = rng.IntN(int(low[w]))
		}
		want := r.cellFor(w, i, 0)
		visible := encoding.SeqNum(r.seqs[w][i].Load()) <= readPoint
		key := want.Key()
		found := false
		for _, sc := range scanners {
			// Other writers' cells may share the key (with r.rows set), in
			// sequence id order.
			for c := sc.SeekGE(key); c != nil && string(c.Row) == string(want.Row) && c.Timestamp == want.Timestamp; c = sc.Next() {
				cw, ci, err := r.parseCell(c)
				if err != nil {
					r.fail("probe: %v", err)
				}
				found = found || cw == w && ci == i
			}
		}
		if !found && visible {
			_, found = r.flushed.Load([2]int{w, i})
		}
		if found != visible {
			r.fail("probe at read point %d: writer %d cell %d (seq %d, added before open) visible=%t found=%t",
				readPoint, w, i, r.seqs[w][i].Load(), visible, found)
		}
	}
	r.probes.Add(1)
}

func mustWriter(c *encoding.KeyValue) int { return int(binary.BigEndian.Uint32(c.Value)) }
func mustIndex(c *encoding.KeyValue) int  { return int(binary.BigEndian.Uint32(c.Value[4:])) }

func TestConcurrentWritersAndScanners(t *testing.T) {
	for _, tc := range []struct {
		flush bool
		rows  int // 0: every cell its own row; 50: versions pile up in 50 columns
	}{{false, 0}, {true, 0}, {false, 50}, {true, 50}} {
		flush := tc.flush
		t.Run(fmt.Sprintf("flush=%t/rows=%d", flush, tc.rows), func(t *testing.T) {
			r := &concurrentRun{ms: New(encoding.InnerStoreComparer), writers: 4, perW: 4000, rows: tc.rows}
			if raceEnabled {
				r.perW = 1500
			}
			r.done = make([]atomic.Int64, r.writers)
			r.seqs = make([][]atomic.Uint64, r.writers)
			for w := range r.seqs {
				r.seqs[w] = make([]atomic.Uint64, r.perW)
			}

			var writers, others sync.WaitGroup
			stop := make(chan struct{})
			for w := range r.writers {
				writers.Go(func() { r.write(w) })
			}
			for g := range 2 {
				others.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for {
						select {
						case <-stop:
							return
						default:
						}
						if rng.IntN(64) == 0 {
							r.read(rng, false)
						} else {
							r.probe(rng)
						}
						if r.failed() {
							return
						}
					}
				})
			}
			if flush {
				others.Go(func() {
					rng := rand.New(rand.NewPCG(3, 3))
					for {
						select {
						case <-stop:
							return
						default:
						}
						r.flush()
						time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
					}
				})
			}
			writers.Wait()
			close(stop)
			others.Wait()
			if m := r.failMsg.Load(); m != nil {
				t.Fatal(*m)
			}

			// Quiescent: exact visibility at several read points.
			rng := rand.New(rand.NewPCG(99, 99))
			for range 20 {
				r.read(rng, true)
			}
			if m := r.failMsg.Load(); m != nil {
				t.Fatal(*m)
			}

			// Every cell is in exactly one place, and the sizes agree.
			total := r.ms.Len()
			for _, f := range r.files {
				total += len(f)
			}
			if want := r.writers * r.perW; total != want {
				t.Fatalf("memstore and files hold %d cells, want %d", total, want)
			}
			t.Logf("%d scans and %d probes checked, %d flushes", r.scans.Load(), r.probes.Load(), r.flushes.Load())
		})
	}
}
