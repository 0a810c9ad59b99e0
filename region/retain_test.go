package region

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"
)

// TestFlushedMemstoreNotRetained: once a flush has written a memstore
// segment out, nothing of the region keeps its memory: the readers a Get
// pools for reuse dropped the cells their scanners stood on. (They used to
// keep one, and through its slab and the older versions linked from there,
// most of a flushed segment, until the pool let the reader go.)
func TestFlushedMemstoreNotRetained(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true })
	defer r.Close()
	row := func(i int) []byte { return fmt.Appendf(nil, "row%05d", i) }
	for i := range 2000 {
		require.NoError(t, r.Put(NewPut(row(i)).Add(fam, b("q"), b("value"))))
	}
	for i := range 2000 {
		res, err := r.Get(NewGet(row(i)).AddColumn(fam, b("q")))
		require.NoError(t, err)
		require.Equal(t, "value", string(res.Value(fam, b("q"))))
	}
	kv, _ := r.storeSet().byFamily["f"].mem.Newest(row(1999), fam, b("q"), math.MaxUint64)
	require.NotNil(t, kv)
	cell := weak.Make(kv)
	kv = nil
	require.NoError(t, r.Flush())
	runtime.GC()
	require.Nil(t, cell.Value(), "a flushed memstore cell is still reachable")
	res, err := r.Get(NewGet(row(1999)).AddColumn(fam, b("q")))
	require.NoError(t, err)
	require.Equal(t, "value", string(res.Value(fam, b("q"))))
}
