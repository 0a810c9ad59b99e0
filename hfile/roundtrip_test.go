package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// randomCells returns n sorted cells with random rows, qualifiers,
// timestamps and types, including runs of cells that differ only in
// sequence id.
func randomCells(rng *rand.Rand, n int, tags bool) []*encoding.KeyValue {
	kvs := make([]*encoding.KeyValue, 0, n)
	for len(kvs) < n {
		kv := &encoding.KeyValue{
			Row:       randBytes(rng, 1+rng.IntN(12), "abcdefgh\x00\xff"),
			Family:    []byte("f"),
			Qualifier: randBytes(rng, rng.IntN(6), "xyz01"),
			Timestamp: rng.Int64N(1 << 20),
			Type:      []encoding.Type{encoding.TypePut, encoding.TypePut, encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily, encoding.TypeDeleteFamilyVersion}[rng.IntN(6)],
			SeqNum:    encoding.SeqNum(rng.IntN(1000)),
			Value:     randBytes(rng, rng.IntN(40), "vwxyz"),
		}
		if tags && rng.IntN(3) == 0 {
			kv.Tags = []byte{0, 3, 8, 'a', 'b'}
		}
		kvs = append(kvs, kv)
		if rng.IntN(10) == 0 {
			dup := kv.Clone()
			dup.SeqNum++
			kvs = append(kvs, dup)
		}
	}
	sortCells(kvs)
	return kvs
}

func sortCells(kvs []*encoding.KeyValue) {
	sort.SliceStable(kvs, func(i, j int) bool {
		return encoding.InnerStoreComparer.CompareKeyValues(kvs[i], kvs[j]) < 0
	})
}

func randBytes(rng *rand.Rand, n int, alphabet string) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

// peCells returns cells shaped like HBase's PerformanceEvaluation table:
// 26-byte zero-padded row keys, family info, qualifier 0, 100-byte values.
func peCells(rng *rand.Rand, n int) []*encoding.KeyValue {
	kvs := make([]*encoding.KeyValue, n)
	for i := range kvs {
		kvs[i] = &encoding.KeyValue{
			Row: []byte(fmt.Sprintf("%026d", i)), Family: []byte("info"), Qualifier: []byte("0"),
			Timestamp: 1700000000000, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i + 1),
			Value: randBytes(rng, 100, "abcdefghijklmnopqrstuvwxyz"),
		}
	}
	return kvs
}

func writeFile(t testing.TB, kvs []*encoding.KeyValue, o WriterOptions) *Reader {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	require.NoError(t, err)
	for _, kv := range kvs {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.Close())
	require.EqualValues(t, buf.Len(), w.Size())
	r, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), t.Name(), ReaderOptions{})
	require.NoError(t, err)
	return r
}

func requireCell(t testing.TB, want *encoding.KeyValue, it *Iterator, mvcc bool) {
	t.Helper()
	var got encoding.KeyValue
	it.KeyValue(&got)
	require.Equal(t, want.Key(), got.Key(), "key")
	require.Equal(t, string(want.Value), string(got.Value), "value of %s", want)
	require.Equal(t, len(want.Tags) > 0, len(got.Tags) > 0)
	if len(want.Tags) > 0 {
		require.Equal(t, want.Tags, got.Tags)
	}
	if mvcc {
		require.Equal(t, want.SeqNum, got.SeqNum, "seq of %s", want)
	}
}

// checkFile compares a reader's content, seeks and blooms against kvs.
func checkFile(t *testing.T, r *Reader, kvs []*encoding.KeyValue, rng *rand.Rand, mvcc bool) {
	it := r.NewIterator(true)
	i := 0
	for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
		require.NoError(t, err)
		require.Less(t, i, len(kvs))
		requireCell(t, kvs[i], it, mvcc)
		i++
	}
	require.Equal(t, len(kvs), i)
	require.EqualValues(t, len(kvs), r.EntryCount())
	if len(kvs) == 0 {
		return
	}
	cmp := r.Comparer()
	// firstAtOrAfter is the brute-force answer to a seek.
	firstAtOrAfter := func(k encoding.Key) int {
		return sort.Search(len(kvs), func(i int) bool { return cmp.CompareKeyValueKey(kvs[i], k) >= 0 })
	}
	probes := make([]encoding.Key, 0, 400)
	nprobes := 200
	if testing.Short() {
		nprobes = 40 // the race run
	}
	for j := 0; j < nprobes; j++ {
		kv := kvs[rng.IntN(len(kvs))]
		probes = append(probes, kv.Key(), encoding.FirstOnRow(nil, kv.Row), encoding.LastOnRow(nil, kv.Row),
			encoding.FirstOnRowCol(nil, kv.Row, kv.Family, kv.Qualifier))
		row := append(append([]byte(nil), kv.Row...), byte(rng.IntN(256)))
		probes = append(probes, encoding.FirstOnRow(nil, row))
	}
	probes = append(probes, encoding.FirstOnRow(nil, nil), encoding.LastOnRow(nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
	for _, k := range probes {
		j := firstAtOrAfter(k)
		res, err := it.SeekTo(k)
		require.NoError(t, err)
		switch res {
		case encoding.SeekPrecedesFile:
			require.Equal(t, 0, j, "seek %s said before file", k)
		case encoding.SeekExact:
			require.Less(t, j, len(kvs))
			require.Zero(t, cmp.CompareKeyValueKey(kvs[j], k))
			requireCell(t, kvs[j], it, mvcc)
		case encoding.SeekBefore:
			require.Greater(t, j, 0)
			requireCell(t, kvs[j-1], it, mvcc)
			ok, err := it.Next()
			require.NoError(t, err)
			require.Equal(t, j < len(kvs), ok)
			if ok {
				requireCell(t, kvs[j], it, mvcc)
			}
		case encoding.SeekPrecedesBlock:
			require.Less(t, j, len(kvs))
			requireCell(t, kvs[j], it, mvcc)
		default:
			t.Fatalf("seek result %d", res)
		}
		// SeekBefore: the last cell strictly before k.
		ok, err := it.SeekBefore(k)
		require.NoError(t, err)
		require.Equal(t, j > 0, ok, "seekBefore %s", k)
		if ok {
			// kvs[j-1] < k, but equal keys (differing in seq) may precede it.
			want := kvs[j-1]
			require.Equal(t, want.Key(), it.Key(), "seekBefore %s", k)
		}
	}
	// SeekBefore after SeekBefore, as reverse scans do, in random order and
	// then from the last probe down, each followed by a Reseek to the probe
	// (which stays in the block when it can).
	sort.Slice(probes, func(a, b int) bool { return cmp.CompareKeys(probes[a], probes[b]) < 0 })
	for pass := 0; pass < 2; pass++ {
		order := rng.Perm(len(probes))
		if pass == 1 {
			for i := range order {
				order[i] = len(probes) - 1 - i
			}
		}
		for _, o := range order {
			k := probes[o]
			j := firstAtOrAfter(k)
			ok, err := it.SeekBefore(k)
			require.NoError(t, err)
			require.Equal(t, j > 0, ok, "seekBefore %s", k)
			if !ok {
				continue
			}
			require.Equal(t, kvs[j-1].Key(), it.Key(), "seekBefore %s", k)
			if rng.IntN(2) == 0 {
				continue
			}
			res, err := it.Reseek(k)
			require.NoError(t, err)
			switch res {
			case encoding.SeekExact, encoding.SeekPrecedesBlock:
				require.Less(t, j, len(kvs))
				require.Equal(t, kvs[j].Key(), it.Key(), "reseek %s after seekBefore", k)
			case encoding.SeekBefore:
				require.Equal(t, kvs[j-1].Key(), it.Key(), "reseek %s after seekBefore", k)
			default:
				t.Fatalf("reseek %s after seekBefore: result %d", k, res)
			}
		}
	}
	// Reseek forward through sorted probes.
	_, err := it.First()
	require.NoError(t, err)
	for _, k := range probes {
		j := firstAtOrAfter(k)
		res, err := it.Reseek(k)
		require.NoError(t, err)
		switch res {
		case encoding.SeekExact, encoding.SeekPrecedesBlock:
			require.Less(t, j, len(kvs))
			require.Equal(t, kvs[j].Key(), it.Key(), "reseek %s", k)
		case encoding.SeekBefore:
			require.Greater(t, j, 0)
			require.Equal(t, kvs[j-1].Key(), it.Key(), "reseek %s", k)
		case encoding.SeekPrecedesFile:
			require.Equal(t, 0, j)
			_, err = it.First()
			require.NoError(t, err)
		}
	}
	// Blooms never give false negatives.
	if r.BloomType() != BloomNone {
		for _, kv := range kvs {
			ok, err := r.MayContainRow(kv.Row)
			require.NoError(t, err)
			require.True(t, ok, "row %q", kv.Row)
			if r.BloomType() == BloomRowCol {
				ok, err := r.MayContainRowCol(kv.Row, kv.Family, kv.Qualifier)
				require.NoError(t, err)
				require.True(t, ok)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	encs := []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingRowIndexV1}
	comps := []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionZstd}
	for _, enc := range encs {
		for _, comp := range comps {
			for _, bs := range []int{256, 4096, DefaultBlockSize} {
				for _, data := range []string{"random", "pe"} {
					name := fmt.Sprintf("enc=%s/comp=%s/block=%d/data=%s", enc, comp, bs, data)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(bs), uint64(enc)))
						var kvs []*encoding.KeyValue
						tags := data == "random" && bs == 4096
						n := 1500
						if testing.Short() {
							n = 300 // the race run: every combination, smaller files
						}
						if data == "random" {
							kvs = randomCells(rng, n, tags)
						} else {
							kvs = peCells(rng, n)
						}
						bloom := []BloomType{BloomNone, BloomRow, BloomRowCol}[rng.IntN(3)]
						o := WriterOptions{BlockSize: bs, Encoding: enc, Compression: comp, BloomType: bloom, IncludesTags: tags}
						r := writeFile(t, kvs, o)
						require.Equal(t, enc, r.Encoding())
						require.Equal(t, comp, r.Trailer().CompressionCodec)
						checkFile(t, r, kvs, rng, true)
					})
				}
			}
		}
	}
}

func TestMultiLevelIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kvs := peCells(rng, 20000)
	if testing.Short() {
		kvs = kvs[:8000]
	}
	for _, c := range []struct {
		maxIndex int
		levels   int
	}{{1 << 20, 1}, {4096, 2}, {600, 3}} {
		t.Run(fmt.Sprintf("maxIndex=%d", c.maxIndex), func(t *testing.T) {
			r := writeFile(t, kvs, WriterOptions{BlockSize: 1024, IndexBlockMaxSize: c.maxIndex, Encoding: encoding.EncodingFastDiff, BloomType: BloomRow})
			require.GreaterOrEqual(t, int(r.Trailer().NumDataIndexLevels), c.levels)
			n, err := r.DataBlockCount()
			require.NoError(t, err)
			require.Greater(t, n, 1000)
			if c.levels > 1 {
				_, _, _, ok := r.MidKeyMetadata()
				require.True(t, ok)
			}
			checkFile(t, r, kvs, rng, true)
		})
	}
}

func TestWithoutMvcc(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	kvs := randomCells(rng, 500, false)
	r := writeFile(t, kvs, WriterOptions{ExcludeMvcc: true, Encoding: encoding.EncodingPrefix, BlockSize: 512})
	require.False(t, r.Format().IncludesMvcc)
	checkFile(t, r, kvs, rng, false)
}

func TestEmptyFile(t *testing.T) {
	r := writeFile(t, nil, WriterOptions{BloomType: BloomRow, Compression: CompressionGZ})
	it := r.NewIterator(false)
	ok, err := it.First()
	require.NoError(t, err)
	require.False(t, ok)
	res, err := it.SeekTo(encoding.FirstOnRow(nil, []byte("a")))
	require.NoError(t, err)
	require.Equal(t, encoding.SeekPrecedesFile, res)
	ok, err = r.MayContainRow([]byte("a"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Nil(t, r.FirstKey())
}

func TestWriterRejectsOutOfOrder(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte("b"), Family: []byte("f"), Type: encoding.TypePut}))
	err = w.Append(&encoding.KeyValue{Row: []byte("a"), Family: []byte("f"), Type: encoding.TypePut})
	require.ErrorContains(t, err, "not lexically larger")
}

func TestMetaBlocksAndFileInfo(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compression: CompressionSnappy})
	require.NoError(t, err)
	require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte("r"), Family: []byte("f"), Type: encoding.TypePut, Value: []byte("v")}))
	require.NoError(t, w.AppendMetaBlock("zeta", []byte("last")))
	require.NoError(t, w.AppendMetaBlock("alpha", []byte("first")))
	require.NoError(t, w.SetFileInfo(FileInfoMaxSeqID, []byte{0, 0, 0, 0, 0, 0, 0, 9}))
	require.Error(t, w.SetFileInfo("hfile.MINE", nil))
	require.NoError(t, w.Close())
	r, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "meta", ReaderOptions{})
	require.NoError(t, err)
	b, err := r.MetaBlock("alpha")
	require.NoError(t, err)
	require.Equal(t, "first", string(b))
	b, err = r.MetaBlock("zeta")
	require.NoError(t, err)
	require.Equal(t, "last", string(b))
	b, err = r.MetaBlock("beta")
	require.NoError(t, err)
	require.Nil(t, b)
	v, ok := r.FileInfo().Int64(FileInfoMaxSeqID)
	require.True(t, ok)
	require.EqualValues(t, 9, v)
}

// TestManyBloomChunks writes small bloom chunks so that one data block fills
// several of them, and a delete-family bloom alongside.
func TestManyBloomChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	kvs := randomCells(rng, 5000, false)
	r := writeFile(t, kvs, WriterOptions{BlockSize: 64 << 10, BloomType: BloomRowCol, BloomBlockSize: 64})
	gb, db := r.Blooms()
	require.NotNil(t, gb)
	require.Greater(t, len(gb.Chunks), 10)
	require.NotNil(t, db, "random cells include DeleteFamily markers")
	checkFile(t, r, kvs, rng, true)
	for _, kv := range kvs {
		if kv.Type == encoding.TypeDeleteFamily || kv.Type == encoding.TypeDeleteFamilyVersion {
			ok, err := r.MayContainDeleteFamily(kv.Row)
			require.NoError(t, err)
			require.True(t, ok)
		}
	}
}
