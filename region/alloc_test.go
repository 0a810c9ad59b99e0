package region

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// allCache is an unbounded hfile.Cache, so that every block is cached.
type allCache map[[2]int64]*hfile.Block

func (c allCache) GetBlock(file uint64, off int64) *hfile.Block { return c[[2]int64{int64(file), off}] }
func (c allCache) CacheBlock(file uint64, off int64, b *hfile.Block, _ bool) {
	c[[2]int64{int64(file), off}] = b
}

// TestPointReadAllocs asserts the allocation ceilings of the read hot
// paths on a cached store file: a Get allocates its Result and one buffer,
// a GetInto reusing its Result nothing; a scan's Next cuts its result
// and its bytes from blocks shared by many rows (under one allocation per
// row), its NextInto nothing; opening and closing a scanner 3 objects.
func TestPointReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops objects")
	}
	r := openTest(t, t.TempDir(), func(o *Options) {
		o.BlockCache = allCache{}
		o.DisableAutoCompaction = true
		o.Families = []FamilyOptions{{Name: "f", Encoding: encoding.EncodingFastDiff, Compression: hfile.CompressionSnappy}}
	})
	defer r.Close()
	fam, qual := []byte("f"), []byte("q")
	const rows = 5000
	for i := 0; i < rows; i++ {
		require.NoError(t, r.Put(NewPut(fmt.Appendf(nil, "row%06d", i)).Add(fam, qual, fmt.Appendf(nil, "value-%d", i))))
	}
	require.NoError(t, r.Flush())
	keys, wants := make([][]byte, 64), make([]string, 64)
	for i := range keys {
		keys[i], wants[i] = fmt.Appendf(nil, "row%06d", i*71), fmt.Sprintf("value-%d", i*71)
	}
	g := &Get{}
	res := &Result{}
	for pass := 0; pass < 2; pass++ { // cache every block and build its restart index
		for _, k := range keys {
			g.Row = k
			_, err := r.GetInto(g, res)
			require.NoError(t, err)
		}
	}
	i := 0
	get := func(into bool) {
		g.Row = keys[i%len(keys)]
		want := wants[i%len(keys)]
		i++
		out := res
		var err error
		if into {
			_, err = r.GetInto(g, res)
		} else {
			out, err = r.Get(g)
		}
		if err != nil || string(out.Value(fam, qual)) != want {
			t.Fatalf("get %q: %v, %v", g.Row, out, err)
		}
	}
	require.LessOrEqual(t, testing.AllocsPerRun(500, func() { get(false) }), 2.0, "Get")
	require.LessOrEqual(t, testing.AllocsPerRun(500, func() { get(true) }), 0.0, "GetInto")

	for _, reversed := range []bool{false, true} {
		sc, err := r.NewScanner(&Scan{Reversed: reversed})
		require.NoError(t, err)
		var sr ScanResult
		n := 0
		next := func() {
			ok, err := sc.NextInto(&sr)
			if err != nil || !ok || len(sr.Cells) != 1 || len(sr.Cells[0].Value) < 7 {
				t.Fatalf("row %d reversed=%t: %v %v %v", n, reversed, ok, err, sr.Cells)
			}
			n++
		}
		for range 100 { // grow the buffers
			next()
		}
		require.LessOrEqual(t, testing.AllocsPerRun(2000, next), 0.0, "Scanner.NextInto reversed=%t", reversed)
		require.LessOrEqual(t, testing.AllocsPerRun(500, func() {
			if _, err := sc.Next(); err != nil {
				t.Fatal(err)
			}
		}), 0.0, "Scanner.Next (results cut from blocks: under one allocation per row) reversed=%t", reversed)
		sc.Close()
	}

	// A one-row reversed scan, as a client's region lookup: the Scanner
	// is the only allocation of any size; its store scanners are pooled.
	var sr ScanResult
	j := 0
	lookup := func() {
		sc, err := r.NewScanner(&Scan{StartRow: keys[j%len(keys)], Reversed: true, Limit: 1})
		j++
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := sc.NextInto(&sr); err != nil || !ok {
			t.Fatalf("lookup: %v %v", ok, err)
		}
		sc.Close()
	}
	for range 100 {
		lookup()
	}
	require.LessOrEqual(t, testing.AllocsPerRun(500, lookup), 3.0, "one-row scan")
}

// TestScanResultSize: a block of scanSlabRows results must fill one of
// Go's size classes exactly (see scanSlabRows); 5,376 is one. Change both
// together.
func TestScanResultSize(t *testing.T) {
	require.Equal(t, uintptr(192), unsafe.Sizeof(ScanResult{}))
	require.Equal(t, 5376, scanSlabRows*int(unsafe.Sizeof(ScanResult{})))
}
