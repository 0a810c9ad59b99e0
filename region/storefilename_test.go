package region

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// hbaseStoreFile is HBase's StoreFileInfo pattern of a store file (not a
// reference or a link): hex digits, with a bulk load's _SeqId_N_.
var hbaseStoreFile = regexp.MustCompile(`^[0-9a-f]+(?:_SeqId_[0-9]+_)?$`)

func storeFileNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// TestStoreFileNames: with HBaseFileNames new store files are named as
// HBase names them; without it <32 hex>.hfile; a store with both kinds
// opens with all its data, whichever the setting.
func TestStoreFileNames(t *testing.T) {
	dir := t.TempDir()
	put := func(r *Region, i int) {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).Add(fam, b("q"), b(fmt.Sprint(i)))))
		require.NoError(t, r.Flush())
	}
	// Two files the old way, then two HBase's way, then the old way again.
	for i, hbase := range []bool{false, false, true, true, false} {
		r := openTest(t, dir, func(o *Options) {
			o.HBaseFileNames = hbase
			require.NoError(t, o.SetConfig("hbase.hstore.compaction.min", "100")) // keep every flushed file
		})
		for j := 0; j < i; j++ {
			require.Equal(t, fmt.Sprint(j), string(getValue(t, r, fmt.Sprintf("r%02d", j), "f", "q")))
		}
		put(r, i)
		require.NoError(t, r.Close())
	}
	names := storeFileNames(t, filepath.Join(dir, "f"))
	require.Len(t, names, 5)
	var suffixed, plain int
	for _, n := range names {
		switch {
		case regexp.MustCompile(`^[0-9a-f]{32}\.hfile$`).MatchString(n):
			suffixed++
		case regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(n):
			require.Regexp(t, hbaseStoreFile, n)
			plain++
		default:
			t.Fatalf("unexpected store file name %q", n)
		}
	}
	require.Equal(t, 3, suffixed)
	require.Equal(t, 2, plain)

	// A major compaction with HBase's names leaves one file named so, with
	// every row.
	r := openTest(t, dir, func(o *Options) { o.HBaseFileNames = true })
	require.NoError(t, r.Compact(true))
	for j := 0; j < 5; j++ {
		require.Equal(t, fmt.Sprint(j), string(getValue(t, r, fmt.Sprintf("r%02d", j), "f", "q")))
	}
	require.NoError(t, r.Close())
	names = storeFileNames(t, filepath.Join(dir, "f"))
	require.Len(t, names, 1)
	require.Regexp(t, `^[0-9a-f]{32}$`, names[0])

	// Names that are neither are not store files: a crash's leftovers stay
	// out of the store.
	for _, n := range []string{"0123.hfile", "xyz", "0123456789abcdef0123456789abcdeg"} {
		_, ok := parseStoreFileName(n)
		require.False(t, ok, n)
	}
}
