package encoding

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// decodeCells decodes a whole cell block into deep copies.
func decodeCells(b []byte, withTags bool) ([]KeyValue, error) {
	var out []KeyValue
	err := DecodeCellBlock(b, withTags, func(kv *KeyValue) error {
		out = append(out, *kv.Clone())
		return nil
	})
	return out, err
}

// normalize makes cells comparable with require.Equal: empty slices become
// nil, tags are dropped unless kept, and seq nums (not carried) are zeroed.
func normalize(cells []KeyValue, keepTags bool) []KeyValue {
	out := make([]KeyValue, len(cells))
	nilIfEmpty := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	for i, kv := range cells {
		kv.Row, kv.Family, kv.Qualifier, kv.Value = nilIfEmpty(kv.Row), nilIfEmpty(kv.Family), nilIfEmpty(kv.Qualifier), nilIfEmpty(kv.Value)
		kv.Tags = nilIfEmpty(kv.Tags)
		if !keepTags {
			kv.Tags = nil
		}
		kv.SeqNum = 0
		out[i] = kv
	}
	return out
}

func TestCellBlockRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, withTags := range []bool{false, true} {
		for i := 0; i < 50; i++ {
			cells := randomCells(rng, rng.IntN(30), DefaultComparer)
			var b []byte
			for j := range cells {
				n := len(b)
				b = AppendCellBlock(b, &cells[j], withTags)
				require.Equal(t, CellBlockSize(&cells[j], withTags), len(b)-n)
			}
			got, err := decodeCells(b, withTags)
			require.NoError(t, err)
			require.Equal(t, normalize(cells, withTags), normalize(got, true))
		}
	}
}

func TestCellBlockBytes(t *testing.T) {
	kv := KeyValue{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: TypePut,
		Value: []byte("v"), SeqNum: 9}
	key := []byte{0, 1, 'r', 1, 'f', 'q', 0, 0, 0, 0, 0, 0, 0, 1, 4}
	want := slices.Concat([]byte{0, 0, 0, 24, 0, 0, 0, 15, 0, 0, 0, 1}, key, []byte("v"))
	require.Equal(t, want, AppendCellBlock(nil, &kv, false))
	// KeyValueCodecWithTags writes nothing more for a cell without tags.
	require.Equal(t, want, AppendCellBlock(nil, &kv, true))
	kv.Tags = []byte{0, 2, 1, 7}
	require.Equal(t, want, AppendCellBlock(nil, &kv, false))
	withTags := slices.Concat([]byte{0, 0, 0, 30, 0, 0, 0, 15, 0, 0, 0, 1}, key, []byte("v"), []byte{0, 4}, kv.Tags)
	require.Equal(t, withTags, AppendCellBlock(nil, &kv, true))

	got, err := decodeCells(withTags, true)
	require.NoError(t, err)
	require.Equal(t, []KeyValue{{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1,
		Type: TypePut, Value: []byte("v"), Tags: kv.Tags}}, got)
	// A KeyValueCodec reader does not expect tags.
	_, err = decodeCells(withTags, false)
	requireCorruption(t, err)
	// An explicit empty tags part is accepted, as HBase's KeyValue does.
	empty := slices.Concat([]byte{0, 0, 0, 26, 0, 0, 0, 15, 0, 0, 0, 1}, key, []byte("v"), []byte{0, 0})
	got, err = decodeCells(empty, true)
	require.NoError(t, err)
	require.Nil(t, got[0].Tags)
}

func TestCellBlockIter(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	cells := randomCells(rng, 10, DefaultComparer)
	var b []byte
	for i := range cells {
		b = AppendCellBlock(b, &cells[i], false)
	}
	var it CellBlockIter
	it.Init(b, false)
	var kv KeyValue
	for i := range cells {
		ok, err := it.Next(&kv)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, normalize(cells[i:i+1], false), normalize([]KeyValue{kv}, false))
	}
	ok, err := it.Next(&kv)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, len(b), it.Offset())

	var zero CellBlockIter
	ok, err = zero.Next(&kv)
	require.NoError(t, err)
	require.False(t, ok)

	stop := errors.New("stop")
	require.Equal(t, stop, DecodeCellBlock(b, false, func(*KeyValue) error { return stop }))

	if !raceEnabled {
		require.Zero(t, testing.AllocsPerRun(10, func() {
			it.Init(b, false)
			for {
				if ok, err := it.Next(&kv); !ok || err != nil {
					break
				}
			}
		}))
	}
}

func TestCellBlockCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, withTags := range []bool{false, true} {
		cells := randomCells(rng, 6, DefaultComparer)
		var b []byte
		for i := range cells {
			b = AppendCellBlock(b, &cells[i], withTags)
		}
		for n := 0; n < len(b); n++ {
			checkCellBlock(t, b[:n], withTags)
		}
		for i := 0; i < 300; i++ {
			d := slices.Clone(b)
			d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
			checkCellBlock(t, d, withTags)
		}
	}
	key := AppendKey(nil, []byte("r"), nil, nil, 0, TypePut)
	for name, b := range map[string][]byte{
		"short length":          {0, 0, 1},
		"cell overruns":         {0, 0, 0, 9, 0, 0, 0, 0},
		"cell too short":        {0, 0, 0, 4, 0, 0, 0, 0},
		"key and value overrun": {0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0},
		"huge lengths":          {0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"bad key":               {0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 7},
		"bad tags length":       slices.Concat([]byte{0, 0, 0, byte(8 + len(key) + 3), 0, 0, 0, byte(len(key)), 0, 0, 0, 0}, key, []byte{0, 5, 1}),
		"one trailing byte":     slices.Concat([]byte{0, 0, 0, byte(8 + len(key) + 1), 0, 0, 0, byte(len(key)), 0, 0, 0, 0}, key, []byte{0}),
	} {
		_, err := decodeCells(b, true)
		requireCorruption(t, err, name)
		t.Logf("%s: %v", name, err)
	}
}

// checkCellBlock decodes an untrusted cell block: it must either decode, and
// then re-encode to cells that decode the same, or fail with corruption.
func checkCellBlock(t testing.TB, b []byte, withTags bool) {
	t.Helper()
	cells, err := decodeCells(b, withTags)
	if err != nil {
		requireCorruption(t, err)
		return
	}
	var re []byte
	for i := range cells {
		re = AppendCellBlock(re, &cells[i], withTags)
	}
	again, err := decodeCells(re, withTags)
	require.NoError(t, err)
	require.Equal(t, normalize(cells, true), normalize(again, true))
}
