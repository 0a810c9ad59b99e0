package encoding

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func kv(row, fam, qual string, ts int64, t Type, seq SeqNum) *KeyValue {
	return &KeyValue{Row: []byte(row), Family: []byte(fam), Qualifier: []byte(qual), Timestamp: ts, Type: t, SeqNum: seq}
}

// TestComparerOrder lists cells in HBase's order and checks every pair, both
// as KeyValues and as serialized keys.
func TestComparerOrder(t *testing.T) {
	ordered := []*KeyValue{
		kv("a", "", "", LatestTimestamp, TypeMaximum, 0), // first on row a
		kv("a", "f", "", 5, TypePut, 0),
		kv("a", "f", "q", 9, TypePut, 0),
		kv("a", "f", "q", 5, TypeDeleteFamily, 0),
		kv("a", "f", "q", 5, TypeDeleteColumn, 0),
		kv("a", "f", "q", 5, TypeDelete, 0),
		kv("a", "f", "q", 5, TypePut, 7), // newer seq first
		kv("a", "f", "q", 5, TypePut, 3),
		kv("a", "f", "q", math.MinInt64, TypePut, 0),
		kv("a", "f", "q\x00", 5, TypePut, 0),
		kv("a", "f", "r", 5, TypePut, 0),
		kv("a", "", "", OldestTimestamp, TypeMinimum, 0), // last on row a
		kv("a\x00", "f", "", 5, TypePut, 0),
		kv("ab", "f", "", 5, TypePut, 0),
		kv("b", "f", "", 5, TypePut, 0),
		kv("\xff", "f", "", 5, TypePut, 0),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			got := InnerStoreComparer.CompareKeyValues(ordered[i], ordered[j])
			require.Equal(t, want, got, "%s vs %s", ordered[i], ordered[j])
			// Key comparisons ignore the sequence id.
			if ordered[i].Key().String() == ordered[j].Key().String() {
				want = 0
			}
			require.Equal(t, want, InnerStoreComparer.CompareKeys(ordered[i].Key(), ordered[j].Key()), "%s vs %s", ordered[i], ordered[j])
			require.Equal(t, want, InnerStoreComparer.CompareKeyValueKey(ordered[i], ordered[j].Key()))
		}
	}
}

func TestFamilyComparison(t *testing.T) {
	a, b := kv("r", "aa", "", 1, TypePut, 0), kv("r", "b", "", 1, TypePut, 0)
	// Across families bytes decide; inside a store only lengths do.
	require.Equal(t, -1, DefaultComparer.CompareKeyValues(a, b))
	require.Equal(t, 1, InnerStoreComparer.CompareKeyValues(a, b))
}

// TestMetaComparer checks hbase:meta's row order: table, then start key up
// to the last comma, then the rest. Byte order would put the split key 0x03
// before ',' and so before the table's first region.
func TestMetaComparer(t *testing.T) {
	rows := []string{
		"hbase:namespace,,1.ns.",
		"t1,,1700000000000.aaaa.",
		"t1,\x03,1700000000001.bbbb.",
		"t1,a\x00,1700000000003.dddd.",
		"t1,a,b,1700000000002.cccc.", // start key "a,b" contains a comma: compared whole
		"t1,b,1700000000004.eeee.",
		"t1,b,1700000000005.ffff.",
		"t10,,1700000000006.gggg.",
		"t2",
	}
	for i := range rows {
		for j := range rows {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, sign(MetaComparer.CompareRows([]byte(rows[i]), []byte(rows[j]))), "%q vs %q", rows[i], rows[j])
		}
	}
	require.Negative(t, InnerStoreComparer.CompareRows([]byte(rows[2]), []byte(rows[1])), "byte order differs")
	c, err := ComparerByName("org.apache.hadoop.hbase.KeyValue$MetaComparator")
	require.NoError(t, err)
	require.Same(t, MetaComparer, c)
	_, err = ComparerByName("org.example.Nope")
	require.Error(t, err)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestVarints(t *testing.T) {
	// Hadoop VLong: values from WritableUtils' documented boundaries.
	for _, c := range []struct {
		v   int64
		hex []byte
	}{{0, []byte{0}}, {127, []byte{127}}, {-112, []byte{0x90}}, {128, []byte{0x8f, 0x80}}, {-113, []byte{0x87, 0x70}},
		{255, []byte{0x8f, 0xff}}, {256, []byte{0x8e, 0x01, 0x00}}, {26, []byte{26}}} {
		got := AppendVLong(nil, c.v)
		require.Equal(t, c.hex, got, "%d", c.v)
		require.Equal(t, len(got), VLongLen(c.v))
		v, n := DecodeVLong(got)
		require.Equal(t, c.v, v)
		require.Equal(t, len(got), n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10000; i++ {
		v := int64(rng.Uint64()) >> rng.IntN(64)
		b := AppendVLong(nil, v)
		got, n := DecodeVLong(b)
		require.Equal(t, v, got)
		require.Equal(t, len(b), n)
		_, n = DecodeVLong(b[:len(b)-1])
		require.LessOrEqual(t, n, 0)

		u := rng.Uint32() >> rng.IntN(32)
		cb := AppendCompressedInt(nil, u)
		require.Equal(t, CompressedIntLen(u), len(cb))
		cu, cn := DecodeCompressedInt(cb)
		require.Equal(t, u, cu)
		require.Equal(t, len(cb), cn)
	}
	_, n := DecodeCompressedInt([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	require.LessOrEqual(t, n, 0, "more than five bytes")
}

func TestParseKey(t *testing.T) {
	k := kv("row", "fam", "qual", 42, TypeDeleteColumn, 0).Key()
	pk, err := ParseKey(k)
	require.NoError(t, err)
	require.Equal(t, "row", string(pk.Row()))
	require.Equal(t, "fam", string(pk.Family()))
	require.Equal(t, "qual", string(pk.Qualifier()))
	require.EqualValues(t, 42, pk.Timestamp())
	require.Equal(t, TypeDeleteColumn, pk.Type())
	require.Equal(t, "row/fam:qual/42/DeleteColumn", pk.String())
	for n := 0; n < len(k); n++ {
		_, err := ParseKey(k[:n])
		if n < KeyInfraSize+3+3 { // row and family must fit before ts/type
			require.Error(t, err, "prefix %d", n)
			require.True(t, IsCorruption(err))
		}
	}
	bad := append([]byte(nil), k...)
	bad[0], bad[1] = 0xff, 0xff
	_, err = ParseKey(bad)
	require.Error(t, err)
	require.True(t, FirstOnRow(nil, []byte("r")).IsLastOnRow() == false)
	require.True(t, LastOnRow(nil, []byte("r")).IsLastOnRow())
	require.Equal(t, `a\x00\xFF\x5C`, FormatBytes([]byte("a\x00\xff\\")))
}

func TestSortByComparer(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var kvs []*KeyValue
	for i := 0; i < 500; i++ {
		kvs = append(kvs, kv(string(rune('a'+rng.IntN(3))), "f", string(rune('a'+rng.IntN(3))), rng.Int64N(3), []Type{TypePut, TypeDelete}[rng.IntN(2)], SeqNum(rng.IntN(3))))
	}
	sort.Slice(kvs, func(i, j int) bool { return InnerStoreComparer.CompareKeyValues(kvs[i], kvs[j]) < 0 })
	for i := 1; i < len(kvs); i++ {
		require.LessOrEqual(t, InnerStoreComparer.CompareKeys(kvs[i-1].Key(), kvs[i].Key()), 0)
	}
}

// TestCompareVersions: for cells of one column, CompareVersions orders as
// CompareKeyValues does under every comparer.
func TestCompareVersions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	types := []Type{TypePut, TypeDelete, TypeDeleteColumn, TypeDeleteFamily, TypeDeleteFamilyVersion}
	cell := func(row string) *KeyValue {
		return kv(row, "f", "q", int64(rng.IntN(3)), types[rng.IntN(len(types))], SeqNum(rng.IntN(3)))
	}
	for _, c := range []*Comparer{InnerStoreComparer, DefaultComparer, MetaComparer} {
		row := "r"
		if c.IsMeta() {
			row = "t,r,1"
		}
		for range 500 {
			a, b := cell(row), cell(row)
			require.Equal(t, sign(c.CompareKeyValues(a, b)), sign(CompareVersions(a, b)), "%s vs %s under %s", a, b, c.Name)
		}
	}
}
