package memstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
)

// TestScannerRandom drives SegmentScanners with random seeks and steps
// against a brute-force model: the sorted slice of visible cells and an
// index into it. To replay a failure, set MEMSTORE_SEED to the seed it
// printed.
func TestScannerRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MEMSTORE_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (replay with MEMSTORE_SEED=%d)", seed, seed)
	rounds := 12
	if raceEnabled || testing.Short() {
		rounds = 4
	}
	for _, cmp := range []*encoding.Comparer{encoding.InnerStoreComparer, encoding.DefaultComparer, encoding.MetaComparer} {
		for round := range rounds {
			rng := rand.New(rand.NewPCG(seed, uint64(round)))
			name := fmt.Sprintf("%s/round=%d", cmp.Name[strings.LastIndexByte(cmp.Name, '.')+1:], round)
			t.Run(name, func(t *testing.T) {
				runScannerRandom(t, cmp, rng, seed)
			})
		}
	}
}

// randGen makes cells and seek keys over a small key space, so that rows,
// columns, timestamps and sequence ids collide often.
type randGen struct {
	rng      *rand.Rand
	rows     [][]byte
	families [][]byte
	quals    [][]byte
}

func newRandGen(rng *rand.Rand, cmp *encoding.Comparer) *randGen {
	g := &randGen{rng: rng}
	nrows := 1 + rng.IntN(60)
	// Short rows, rows that differ within their first 8 bytes and rows that
	// share a long prefix, some a prefix of another, so that the B-tree's
	// inline row prefix decides some comparisons and not others.
	formats := []string{"r%03d", "r%03d", "%03d-row", "common-prefix-%03d", "common-prefix-%03d\x00", "00000000%03d",
		"common-prefix", "common-prefiy%03d"}
	for i := range nrows {
		r := fmt.Sprintf(formats[rng.IntN(len(formats))], i*3)
		if cmp.IsMeta() {
			r = fmt.Sprintf("t%d,r%03d,%d", i%3, i*3, 100+i)
		}
		g.rows = append(g.rows, []byte(r))
	}
	// A prefix of the skip prefix the segment learns in rounds that start
	// with shared rows, that prefix itself, and rows just past it.
	g.rows = append(g.rows, []byte("common-p"), []byte("common-pr"), []byte("common-pr\x00"), []byte("common-prz"))
	g.families = [][]byte{[]byte("f")}
	if cmp == encoding.DefaultComparer {
		g.families = append(g.families, []byte("a"), []byte("g"))
	}
	// Qualifiers of up to 4 bytes compare inline in the B-tree, longer ones
	// by their first 4 bytes and then in full; some are prefixes of others.
	g.quals = [][]byte{nil, []byte("q0"), []byte("q1"), []byte("q1\x00"), []byte("q2"),
		[]byte("qual"), []byte("qual\x00"), []byte("qualifier-a"), []byte("qualifier-b"), []byte("q1\x00\x00\x00\x00")}
	return g
}

var cellTypes = []encoding.Type{encoding.TypePut, encoding.TypePut, encoding.TypePut,
	encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily, encoding.TypeDeleteFamilyVersion}

func (g *randGen) cell(maxSeq int) *encoding.KeyValue {
	r := g.rng
	return &encoding.KeyValue{
		Row:       g.rows[r.IntN(len(g.rows))],
		Family:    g.families[r.IntN(len(g.families))],
		Qualifier: g.quals[r.IntN(len(g.quals))],
		Timestamp: int64(r.IntN(4)),
		Type:      cellTypes[r.IntN(len(cellTypes))],
		SeqNum:    encoding.SeqNum(1 + r.IntN(maxSeq)),
		Value:     []byte(strconv.Itoa(r.Int())),
	}
}

// key returns a seek key: a fake key around a row or column, a key between
// rows, the key past the column at the model's position, or the key of a
// cell of the model near that position (which exercises seeks answered from
// the scanner's buffer).
func (g *randGen) key(vis []*encoding.KeyValue, pos int) encoding.Key {
	r := g.rng
	row := g.rows[r.IntN(len(g.rows))]
	switch r.IntN(9) {
	case 0:
		return encoding.FirstOnRow(nil, row)
	case 1:
		return encoding.LastOnRow(nil, row)
	case 2:
		return encoding.FirstOnRowCol(nil, row, g.families[r.IntN(len(g.families))], g.quals[r.IntN(len(g.quals))])
	case 3:
		return encoding.LastOnRowCol(nil, row, g.families[r.IntN(len(g.families))], g.quals[r.IntN(len(g.quals))])
	case 4:
		between := append(slices.Clip(row), byte(r.IntN(3)))
		return encoding.FirstOnRow(nil, between)
	case 5:
		// Past the column at the model's position, where a Get or a scan
		// that keeps one version goes next (see SegmentScanner.ahead).
		if pos >= 0 && pos < len(vis) {
			c := vis[pos]
			return encoding.LastOnRowCol(nil, c.Row, c.Family, c.Qualifier)
		}
		return encoding.LastOnRowCol(nil, row, g.families[r.IntN(len(g.families))], g.quals[r.IntN(len(g.quals))])
	default:
		if len(vis) == 0 {
			return encoding.FirstOnRow(nil, row)
		}
		i := pos + r.IntN(41) - 20
		if r.IntN(4) == 0 {
			i = pos + r.IntN(600) - 300
		}
		i = max(0, min(i, len(vis)-1))
		return vis[i].Key()
	}
}

func runScannerRandom(t *testing.T, cmp *encoding.Comparer, rng *rand.Rand, seed uint64) {
	g := newRandGen(rng, cmp)
	s := NewSegment(cmp)
	var model []*encoding.KeyValue
	n := rng.IntN(3000)
	maxSeq := 1 + rng.IntN(100)
	// Half the rounds start with rows that share a long prefix, so that the
	// segment learns a skip prefix (see learnSkip) that later rows, some
	// shorter than it or a prefix of it, do not all share.
	var shared [][]byte
	if !cmp.IsMeta() && rng.IntN(2) == 0 {
		shared = [][]byte{[]byte("common-prefix-100"), []byte("common-prefix-199\x00")}
		for i := 0; i < 4; i++ {
			shared = append(shared, fmt.Appendf(nil, "common-prefix-1%02d", rng.IntN(100)))
		}
	}
	for i := 0; i < n || s.Len() < learnSkipAt && shared != nil; i++ {
		c := g.cell(maxSeq)
		if s.Len() < learnSkipAt && shared != nil {
			c.Row = shared[min(i, rng.IntN(len(shared)))]
		}
		s.Add(c)
		if i := slices.IndexFunc(model, func(m *encoding.KeyValue) bool { return cmp.CompareKeyValues(m, c) == 0 }); i >= 0 {
			model[i] = c // an equal cell replaces
		} else {
			model = append(model, c)
		}
	}
	slices.SortFunc(model, cmp.CompareKeyValues)
	if s.Len() != len(model) {
		t.Fatalf("seed %d: segment has %d cells, model %d", seed, s.Len(), len(model))
	}
	// The common prefix "common-prefix-1", cut to leave 8 bytes of the
	// shortest shared row (17 bytes) inline.
	if shared != nil && string(s.skip) != "common-pr" {
		t.Fatalf("seed %d: segment learned skip prefix %q, want %q", seed, s.skip, "common-pr")
	}

	for range 3 {
		readPoint := encoding.SeqNum(rng.IntN(maxSeq + 2))
		if rng.IntN(4) == 0 {
			readPoint = math.MaxUint64
		}
		var vis []*encoding.KeyValue
		for _, c := range model {
			if c.SeqNum <= readPoint {
				vis = append(vis, c)
			}
		}
		// The random operations interleave writes, which the scanner, opened
		// before them, must not see whatever their sequence ids. They add
		// cells not in the model: a scanner may see a replaced cell in either
		// form (see TestScannerSnapshot).
		var added []*encoding.KeyValue
		has := func(cells []*encoding.KeyValue, c *encoding.KeyValue) bool {
			return slices.ContainsFunc(cells, func(m *encoding.KeyValue) bool { return cmp.CompareKeyValues(m, c) == 0 })
		}
		write := func() {
			for range 10 {
				if c := g.cell(maxSeq); !has(model, c) && !has(added, c) {
					s.Add(c)
					added = append(added, c)
					return
				}
			}
		}
		checkScannerOps(t, cmp, g, s, vis, readPoint, seed, write)
		model = append(model, added...)
		slices.SortFunc(model, cmp.CompareKeyValues)
	}
}

// checkScannerOps checks a scanner of s at readPoint against vis, its visible
// cells. write, called now and then once the scanner is open, adds a cell to
// s that the scanner must not see.
func checkScannerOps(t *testing.T, cmp *encoding.Comparer, g *randGen, s *Segment,
	vis []*encoding.KeyValue, readPoint encoding.SeqNum, seed uint64, write func()) {
	sc := s.NewScanner(readPoint)
	defer sc.Close()
	rng := g.rng

	// Full scans both ways.
	var fwd, bwd []*encoding.KeyValue
	for c := sc.SeekToFirst(); c != nil; c = sc.Next() {
		fwd = append(fwd, c)
	}
	for c := sc.SeekToLast(); c != nil; c = sc.Prev() {
		bwd = append(bwd, c)
	}
	slices.Reverse(bwd)
	if got, want := str(fwd), str(vis); got != want {
		t.Fatalf("seed %d read point %d: forward scan\n got:\n%s\nwant:\n%s", seed, readPoint, got, want)
	}
	if got, want := str(bwd), str(vis); got != want {
		t.Fatalf("seed %d read point %d: backward scan\n got:\n%s\nwant:\n%s", seed, readPoint, got, want)
	}

	// Random operations. pos is the model's position: -1 before the first
	// cell, len(vis) after the last; positioned is false until the first op.
	sc.Close()
	sc = s.NewScanner(readPoint)
	pos, positioned := 0, false
	var ops []string
	// Writes between operations make some refills read the live tree and
	// some clone it; runs of operations without writes make clones cached.
	writeOdds := 1 + rng.IntN(8)
	for range 400 {
		var got *encoding.KeyValue
		var op string
		if rng.IntN(writeOdds) == 0 {
			write()
		}
		switch k := rng.IntN(20); {
		case k < 4:
			key := g.key(vis, pos)
			op = "SeekGE(" + key.String() + ")"
			got = sc.SeekGE(key)
			pos, _ = slices.BinarySearchFunc(vis, key, func(c *encoding.KeyValue, k encoding.Key) int {
				if cmp.CompareKeyValueKey(c, k) < 0 {
					return -1
				}
				return 1
			})
		case k < 7:
			key := g.key(vis, pos)
			op = "SeekLT(" + key.String() + ")"
			got = sc.SeekLT(key)
			i, _ := slices.BinarySearchFunc(vis, key, func(c *encoding.KeyValue, k encoding.Key) int {
				if cmp.CompareKeyValueKey(c, k) < 0 {
					return -1
				}
				return 1
			})
			pos = i - 1
		case k == 7:
			op = "SeekToFirst"
			got = sc.SeekToFirst()
			pos = 0
		case k == 8:
			op = "SeekToLast"
			got = sc.SeekToLast()
			pos = len(vis) - 1
		case k < 14:
			op = "Next"
			got = sc.Next()
			if positioned {
				pos = min(pos+1, len(vis))
			} else {
				pos = 0
			}
		default:
			op = "Prev"
			got = sc.Prev()
			if positioned {
				pos = max(pos-1, -1)
			} else {
				pos = len(vis) - 1
			}
		}
		positioned = true
		// Sometimes repeat the step many times, across refills.
		if (op == "Next" || op == "Prev") && rng.IntN(10) == 0 {
			reps := rng.IntN(600)
			op += fmt.Sprintf("x%d", reps+1)
			for range reps {
				if rng.IntN(32*writeOdds) == 0 {
					write()
				}
				if op[0] == 'N' {
					got = sc.Next()
					pos = min(pos+1, len(vis))
				} else {
					got = sc.Prev()
					pos = max(pos-1, -1)
				}
			}
		}
		ops = append(ops, op)
		var want *encoding.KeyValue
		if pos >= 0 && pos < len(vis) {
			want = vis[pos]
		}
		if !sameCell(got, want) || !sameCell(sc.Current(), want) {
			if len(ops) > 20 {
				ops = ops[len(ops)-20:]
			}
			t.Fatalf("seed %d read point %d (%d visible): after\n  %s\ngot %s, want %s (model position %d)",
				seed, readPoint, len(vis), strings.Join(ops, "\n  "), cellStr(got), cellStr(want), pos)
		}
	}
}

func sameCell(a, b *encoding.KeyValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return encoding.DefaultComparer.CompareKeyValues(a, b) == 0 && string(a.Value) == string(b.Value) &&
		string(a.Family) == string(b.Family)
}

func cellStr(c *encoding.KeyValue) string {
	if c == nil {
		return "<nil>"
	}
	return c.String() + " V:" + string(c.Value)
}
