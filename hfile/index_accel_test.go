package hfile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestIndexAccelSearch holds indexAccel.search against the plain binary
// search of the same non-root index block, for keys at, between, before
// and after the entries, over rows that share long prefixes, differ only
// past the accelerator's 8 bytes, are prefixes of one another, or hold
// zero bytes (which the words pad with).
func TestIndexAccelSearch(t *testing.T) {
	cmp := encoding.InnerStoreComparer
	alphabets := []string{"ab", "\x00\x01", "abcdefghijklmnopqrstuvwxyz"}
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		alpha := alphabets[seed%3]
		prefix := []byte("")
		if seed%2 == 0 {
			prefix = []byte(fmt.Sprintf("table-%d/", rng.IntN(3)))
		}
		randRow := func() []byte {
			r := append([]byte(nil), prefix...)
			for n := rng.IntN(14); n > 0; n-- {
				r = append(r, alpha[rng.IntN(len(alpha))])
			}
			return r
		}
		// Keys of cells, and the first and last keys on rows (the writer's
		// midpoint keys are first-on-row keys; a reverse scan seeks with
		// last-on-row ones), so that the first-on-row shortcut meets its
		// own row in every shape.
		key := func(row []byte, ts int64) encoding.Key {
			switch rng.IntN(4) {
			case 0:
				return encoding.AppendKey(nil, row, nil, nil, encoding.LatestTimestamp, encoding.TypeMaximum)
			case 1:
				return encoding.AppendKey(nil, row, nil, nil, encoding.OldestTimestamp, encoding.TypeMinimum)
			case 2:
				return encoding.AppendKey(nil, row, nil, nil, ts, encoding.TypeDeleteFamily)
			}
			return encoding.AppendKey(nil, row, []byte("f"), []byte("q"), ts, encoding.TypePut)
		}
		var keys []encoding.Key
		for n := 1 + rng.IntN(300); n > 0; n-- {
			keys = append(keys, key(randRow(), rng.Int64N(5)))
		}
		slices.SortFunc(keys, func(a, b encoding.Key) int { return cmp.CompareKeys(a, b) })
		keys = slices.CompactFunc(keys, func(a, b encoding.Key) bool { return cmp.CompareKeys(a, b) == 0 })
		var c indexChunk
		for i, k := range keys {
			c.add(k, int64(i)*100, 100, int64(i+1))
		}
		x, err := parseNonRootIndex(c.appendNonRoot(nil), 0)
		require.NoError(t, err)
		a := buildIndexAccel(x)
		require.NotNil(t, a)
		ri := &rootIndex{keys: make([][]byte, len(keys)), offsets: make([]int64, len(keys)), sizes: make([]int32, len(keys))}
		for i, k := range keys {
			ri.keys[i], ri.offsets[i], ri.sizes[i] = k, int64(i)*100, 100
		}
		ra := buildRootAccel(ri)
		require.NotNil(t, ra)
		for i := range keys {
			require.Equal(t, int64(i)*100, a.ents[i].off)
			require.Equal(t, ra.ents[i], a.ents[i])
		}
		cmpKeys := func(p, q []byte) int { return cmp.CompareKeys(p, q) }
		probes := append([]encoding.Key(nil), keys...)
		for i := 0; i < 400; i++ {
			probes = append(probes, key(randRow(), rng.Int64N(7)-1))
		}
		probes = append(probes, key(nil, 0), key([]byte("\xff\xff"), 0), key(prefix, 0))
		for _, p := range probes {
			want, wok := x.search(p, cmpKeys)
			got, gok := a.search(p, cmpKeys)
			require.Equal(t, wok, gok)
			require.Equal(t, want, got, "seed %d key %q (prefix %q)", seed, p, a.prefix)
			require.Equal(t, ri.search(p, cmpKeys), got, "root: seed %d key %q", seed, p)
			rgot, rok := ra.search(p, cmpKeys)
			require.True(t, rok)
			require.Equal(t, want, rgot, "root accel: seed %d key %q", seed, p)
		}
	}
}

// TestIndexAccelMalformed: an entry that does not parse leaves the block
// without an accelerator, so the plain search reports it.
func TestIndexAccelMalformed(t *testing.T) {
	var c indexChunk
	c.add([]byte{0, 9, 'a'}, 0, 100, 1) // row length 9 in a 3-byte key
	c.add(encoding.AppendKey(nil, []byte("b"), nil, nil, 0, encoding.TypePut), 100, 100, 2)
	x, err := parseNonRootIndex(c.appendNonRoot(nil), 0)
	require.NoError(t, err)
	require.Nil(t, buildIndexAccel(x))

	// The root's accelerator, with the malformed key at each position.
	keys := [][]byte{
		encoding.AppendKey(nil, []byte("a"), []byte("f"), []byte("q"), 1, encoding.TypePut),
		encoding.AppendKey(nil, []byte("b"), []byte("f"), []byte("q"), 1, encoding.TypePut),
		encoding.AppendKey(nil, []byte("c"), []byte("f"), []byte("q"), 1, encoding.TypePut),
	}
	offsets, sizes := []int64{0, 100, 200}, []int32{100, 100, 100}
	require.NotNil(t, buildRootAccel(&rootIndex{offsets: offsets, sizes: sizes, keys: keys}))
	for i := range keys {
		bad := slices.Clone(keys)
		bad[i] = []byte{0, 9, 'x'}
		require.Nil(t, buildRootAccel(&rootIndex{offsets: offsets, sizes: sizes, keys: bad}), "malformed key %d", i)
	}
}

// BenchmarkNonRootIndexSearch: one search of a 16 KiB leaf index block of
// harness-like rows (user%010d), plain and with the accelerator.
//
//	go test ./hfile -run '^$' -bench NonRootIndexSearch
func BenchmarkNonRootIndexSearch(b *testing.B) {
	cmp := encoding.InnerStoreComparer
	var c indexChunk
	var keys []encoding.Key
	for i := 0; c.nonRootSize() < DefaultIndexBlockMaxSize; i++ {
		k := encoding.AppendKey(nil, []byte(fmt.Sprintf("user%010d", i*37)), []byte("f"), []byte("v"), 1, encoding.TypePut)
		keys = append(keys, k)
		c.add(k, int64(i)*4096, 4096, int64(i+1))
	}
	x, err := parseNonRootIndex(c.appendNonRoot(nil), 0)
	require.NoError(b, err)
	a := buildIndexAccel(x)
	cmpKeys := func(p, q []byte) int { return cmp.CompareKeys(p, q) }
	probes := make([]encoding.Key, 1024)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range probes {
		probes[i] = encoding.AppendKey(nil, []byte(fmt.Sprintf("user%010d", rng.IntN(len(keys)*37))), nil, nil,
			encoding.LatestTimestamp, encoding.TypeMaximum)
	}
	b.Run("plain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.search(probes[i%len(probes)], cmpKeys)
		}
	})
	// The accelerated searches read the entry found, as lookupDataBlock
	// does: its offset and size are in an array of their own.
	b.Run("accel", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if j, ok := a.search(probes[i%len(probes)], cmpKeys); ok && j >= 0 {
				benchEntrySink += a.ents[j].off
			}
		}
	})
	// accel-cold searches one of 4,096 copies of the accelerator (about
	// 45 MB, past the CPU's caches), as the leaves of a file of a few GB
	// are searched by random reads.
	b.Run("accel-cold", func(b *testing.B) {
		accels := make([]*indexAccel, 4096)
		for i := range accels {
			accels[i] = buildIndexAccel(x)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			a := accels[rng.IntN(len(accels))]
			if j, ok := a.search(probes[i%len(probes)], cmpKeys); ok && j >= 0 {
				benchEntrySink += a.ents[j].off
			}
		}
	})
}

// benchEntrySink keeps the entries BenchmarkNonRootIndexSearch reads from
// being optimized away.
var benchEntrySink int64
