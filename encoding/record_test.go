package encoding

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRecordRestartIndex: an index recorded while Next steps through a block
// is the one BuildRestartIndex builds, whatever steps back and seeks came in
// between, or none if a seek skipped one of its samples; ROW_INDEX_V1 blocks,
// which carry their own, record none.
func TestRecordRestartIndex(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	for _, enc := range testEncodings {
		for _, f := range testFormats {
			t.Run(fmt.Sprintf("encoding=%s/%s", enc, formatName(f)), func(t *testing.T) {
				recorded, abandoned := 0, 0
				for trial := 0; trial < 40; trial++ {
					cmp := testComparers[trial%len(testComparers)]
					cells := randomCells(rng, 1+rng.IntN(200), cmp)
					payload, ref, want := indexedBlock(t, enc, f, cmp, cells)
					candidates := seekKeys(cells)

					s, err := NewSeeker(enc, f, cmp)
					require.NoError(t, err)
					require.NoError(t, s.Init(payload))
					s.RecordRestartIndex()
					// Steps, with now and then a step back (a seek before the
					// current key) or a seek anywhere, until the end.
					moves := rng.IntN(3) // 0: Next only
					for {
						if moves > 0 && rng.IntN(8) == 0 {
							key := candidates[rng.IntN(len(candidates))]
							if moves == 1 {
								key = s.Key() // a seek to where it is
							}
							_, err := s.SeekToKeyInBlock(key, rng.IntN(2) == 0)
							require.NoError(t, err)
						}
						ok, err := s.Next()
						require.NoError(t, err)
						if !ok {
							break
						}
					}
					got := s.TakeRestartIndex()
					require.Nil(t, s.TakeRestartIndex(), "taken once")
					switch {
					case enc == EncodingRowIndexV1:
						require.Nil(t, got)
					case got == nil:
						require.NotZero(t, moves, "Next alone records the index")
						abandoned++
					default:
						require.Equal(t, want, got)
						recorded++
						// And seeks with it find what they find without.
						ix, err := NewSeeker(enc, f, cmp)
						require.NoError(t, err)
						require.NoError(t, ix.InitIndexed(payload, got))
						for range 20 {
							key := candidates[rng.IntN(len(candidates))]
							r1, err1 := ix.SeekToKeyInBlock(key, false)
							r2, err2 := ref.SeekToKeyInBlock(key, false)
							require.NoError(t, err1)
							require.NoError(t, err2)
							require.Equal(t, r2, r1)
							require.Equal(t, current(ref), current(ix))
						}
					}
				}
				if enc != EncodingRowIndexV1 {
					require.NotZero(t, recorded)
				}
				t.Logf("%d recorded, %d abandoned", recorded, abandoned)
			})
		}
	}
}

// TestSearchSamplesRowWindows: the restart samples' search, which decides
// most samples by their row windows, finds what a binary search comparing
// every key in full finds: for rows with long shared prefixes (as keys
// like user0000012345 have in a block), rows that differ past the window,
// rows ending in zero bytes, and keys outside the block's prefix.
func TestSearchSamplesRowWindows(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for trial := 0; trial < 300; trial++ {
		cmp := testComparers[trial%len(testComparers)]
		enc := testEncodings[trial%len(testEncodings)]
		prefix := []byte(fmt.Sprintf("user%06d", rng.IntN(1000)))
		var cells []KeyValue
		var probes []Key
		base := rng.IntN(1 << 20)
		for i := 0; i < 1+rng.IntN(150); i++ {
			row := append(slices.Clone(prefix), fmt.Sprintf("%05d", base+i*(1+rng.IntN(3)))...)
			switch rng.IntN(6) {
			case 0:
				row = append(row, 0, 0)
			case 1:
				row = append(row, bytes.Repeat([]byte("x"), 9+rng.IntN(3))...)
			case 2:
				row = row[:len(prefix)+rng.IntN(6)]
			}
			kv := KeyValue{Row: row, Family: []byte("f"), Qualifier: []byte{byte('a' + rng.IntN(3))},
				Timestamp: int64(rng.IntN(5)), Type: TypePut, Value: []byte("v")}
			cells = append(cells, kv)
			probes = append(probes, FirstOnRow(nil, row), LastOnRow(nil, row), kv.Key(),
				FirstOnRow(nil, append(slices.Clone(row), 0)), FirstOnRow(nil, row[:len(row)/2]))
		}
		probes = append(probes, FirstOnRow(nil, nil), LastOnRow(nil, []byte("zzz")), FirstOnRow(nil, []byte("user")))
		slices.SortFunc(cells, func(a, b KeyValue) int { return cmp.CompareKeys(a.Key(), b.Key()) })
		cells = slices.CompactFunc(cells, func(a, b KeyValue) bool { return cmp.CompareKeys(a.Key(), b.Key()) == 0 })
		payload, sk, idx := indexedBlock(t, enc, testFormats[0], cmp, cells)
		if idx == nil {
			continue // ROW_INDEX_V1 has its own
		}
		require.NoError(t, sk.InitIndexed(payload, idx))
		s := sk.(*seeker)
		if s.idx == nil {
			continue
		}
		if len(idx.cells) >= 2 {
			require.NotNil(t, idx.rowWin)
		}
		for _, key := range probes {
			want := sort.Search(len(idx.cells), func(j int) bool { return cmp.CompareKeys(s.sampleKey(j), key) >= 0 })
			require.Equal(t, want, s.searchSamples(key), "key %q, %s, %s", key, enc, cmp.Name)
		}
	}
}

// indexedBlock encodes cells as a block and returns it with a seeker
// initialized on it and the block's RestartIndex (nil for ROW_INDEX_V1).
func indexedBlock(t testing.TB, enc DataBlockEncoding, f BlockFormat, cmp *Comparer, cells []KeyValue) ([]byte, Seeker, *RestartIndex) {
	t.Helper()
	payload := encodeBlock(t, enc, f, cells)
	s, err := NewSeeker(enc, f, cmp)
	require.NoError(t, err)
	require.NoError(t, s.Init(payload))
	idx, err := s.BuildRestartIndex()
	require.NoError(t, err)
	return payload, s, idx
}

// TestInitSeek: InitSeek lands where InitIndexed and SeekToKeyInBlock do,
// for every key of the block, keys between them and keys outside it, with
// and without before, and the seeker then moves on (Next, SeekBeforeKey,
// SeekBeforeRow, Rewind and another seek) exactly as the other does; its
// FirstKey is the block's. For a key after the block's first, it reads
// neither the block's header nor its first cell: it seeks right in a copy
// whose encoding id is damaged (PREFIX and FAST_DIFF; a ROW_INDEX_V1
// block has its own index, and NONE no header).
func TestInitSeek(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	for trial := 0; trial < 60; trial++ {
		cmp := testComparers[trial%len(testComparers)]
		enc := testEncodings[trial%len(testEncodings)]
		f := testFormats[rng.IntN(len(testFormats))]
		cells := randomCells(rng, 1+rng.IntN(200), cmp)
		payload, ref, idx := indexedBlock(t, enc, f, cmp, cells)
		first := []byte(slices.Clone(ref.FirstKey()))
		damaged := slices.Clone(payload)
		damaged[0] ^= 0x55
		sk, err := NewSeeker(enc, f, cmp)
		require.NoError(t, err)
		var probes []Key
		for _, c := range cells {
			probes = append(probes, c.Key(), FirstOnRow(nil, c.Row), LastOnRow(nil, c.Row),
				FirstOnRow(nil, append(slices.Clone(c.Row), 0)))
		}
		probes = append(probes, FirstOnRow(nil, nil), LastOnRow(nil, bytes.Repeat([]byte{0xff}, 300)))
		where := func(s Seeker) string { return fmt.Sprintf("%d %q", s.Offset(), s.Key()) }
		for _, key := range probes {
			before := rng.IntN(2) == 0
			require.NoError(t, ref.InitIndexed(payload, idx))
			wantRes, err := ref.SeekToKeyInBlock(key, before)
			require.NoError(t, err)
			res, err := sk.InitSeek(payload, idx, key, before)
			require.NoError(t, err)
			msg := fmt.Sprintf("%s %s key %q before %v", enc, cmp.Name, key, before)
			require.Equal(t, wantRes, res, msg)
			require.Equal(t, where(ref), where(sk), msg)
			require.Equal(t, first, []byte(sk.FirstKey()), msg)
			if idx != nil && enc != EncodingNone && enc != EncodingRowIndexV1 && cmp.CompareKeys(key, first) > 0 {
				res, err := sk.InitSeek(damaged, idx, key, before)
				require.NoError(t, err, msg)
				require.Equal(t, wantRes, res, msg)
				require.Equal(t, where(ref), where(sk), msg)
				res, err = sk.InitSeek(payload, idx, key, before)
				require.NoError(t, err)
				require.Equal(t, wantRes, res, msg)
			}
			for step := 0; step < 3; step++ {
				other := probes[rng.IntN(len(probes))]
				switch rng.IntN(5) {
				case 0:
					ok1, err1 := ref.Next()
					ok2, err2 := sk.Next()
					require.Equal(t, err1, err2)
					require.Equal(t, ok1, ok2)
				case 1:
					r1, err1 := ref.SeekBeforeKey(other)
					r2, err2 := sk.SeekBeforeKey(other)
					require.Equal(t, err1, err2)
					require.Equal(t, r1, r2)
				case 2:
					r1, err1 := ref.SeekBeforeRow(other.Row())
					r2, err2 := sk.SeekBeforeRow(other.Row())
					require.Equal(t, err1, err2)
					require.Equal(t, r1, r2)
				case 3:
					require.NoError(t, ref.Rewind())
					require.NoError(t, sk.Rewind())
				case 4:
					require.NoError(t, ref.Rewind())
					require.NoError(t, sk.Rewind())
					r1, err1 := ref.SeekToKeyInBlock(other, false)
					r2, err2 := sk.SeekToKeyInBlock(other, false)
					require.Equal(t, err1, err2)
					require.Equal(t, r1, r2)
				}
				require.Equal(t, where(ref), where(sk), "%s, step %d", msg, step)
				require.Equal(t, first, []byte(sk.FirstKey()), msg)
			}
		}
	}
}

// TestRestartIndexOneAllocation: a finished index is one allocation, with
// no pointer out of it (its slices point into it), that stays intact while
// only its slices are held, across collections; indexes of every size,
// none of whose slices may point past the allocation's end (a pointer
// there would name whatever object follows, and the collector would find
// it freed: "found pointer to free object").
func TestRestartIndexOneAllocation(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	type held struct {
		cells           []cellState
		keys, prefix    []byte
		win             []uint64
		wantCells       []cellState
		wantKeys, wantP []byte
		wantWin         []uint64
	}
	var all []held
	for _, enc := range testEncodings {
		if enc == EncodingRowIndexV1 {
			continue // carries its own index
		}
		for _, f := range testFormats {
			for _, n := range []int{1, 2, 3, 5, 9, 40, 200} {
				cmp := testComparers[n%len(testComparers)]
				payload, _, x := indexedBlock(t, enc, f, cmp, randomCells(rng, n, cmp))
				require.Positive(t, x.size)
				require.Equal(t, int64(x.size)+8, x.MemSize())
				// Every slice lies inside the allocation, none starts at its end.
				base, end := uintptr(unsafe.Pointer(x)), uintptr(unsafe.Pointer(x))+uintptr(x.size)
				inside := func(name string, p unsafe.Pointer, bytes int) {
					if p == nil {
						return
					}
					at := uintptr(p)
					require.True(t, at >= base && at < end && at+uintptr(bytes) <= end,
						"%s at %#x+%d outside [%#x, %#x)", name, at, bytes, base, end)
				}
				inside("cells", unsafe.Pointer(unsafe.SliceData(x.cells)), cap(x.cells)*int(unsafe.Sizeof(cellState{})))
				inside("keys", unsafe.Pointer(unsafe.SliceData(x.keys)), cap(x.keys))
				inside("rowPrefix", unsafe.Pointer(unsafe.SliceData(x.rowPrefix)), cap(x.rowPrefix))
				inside("rowWin", unsafe.Pointer(unsafe.SliceData(x.rowWin)), 8*cap(x.rowWin))
				// Trimming again copies into one new allocation.
				require.Equal(t, 1.0, testing.AllocsPerRun(10, func() { x.trimmed(payload) }))
				all = append(all, held{
					cells: x.cells, keys: x.keys, prefix: x.rowPrefix, win: x.rowWin,
					wantCells: slices.Clone(x.cells), wantKeys: bytes.Clone(x.keys),
					wantP: bytes.Clone(x.rowPrefix), wantWin: slices.Clone(x.rowWin),
				})
			}
		}
	}
	for round := 0; round < 3; round++ {
		runtime.GC()
		// Garbage, to reuse whatever the collector freed.
		var junk [][]uint64
		for i := 0; i < 2000; i++ {
			junk = append(junk, make([]uint64, 1+rng.IntN(200)))
			for j := range junk[i] {
				junk[i][j] = ^uint64(0)
			}
		}
		runtime.KeepAlive(junk)
		for i, h := range all {
			require.Equal(t, h.wantCells, h.cells, "index %d", i)
			require.Equal(t, h.wantKeys, h.keys, "index %d", i)
			require.Equal(t, h.wantP, h.prefix, "index %d", i)
			require.Equal(t, h.wantWin, h.win, "index %d", i)
		}
		all = all[len(all)/3:] // drop some, keep the rest
	}
}
