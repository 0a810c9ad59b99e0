package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// writeBulkHFile writes q=<prefix><row> for each row of family to path.
func writeBulkHFile(t *testing.T, path, family, prefix string, rows ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, hfile.WriterOptions{})
	require.NoError(t, err)
	for _, row := range rows {
		kv := encoding.KeyValue{Row: []byte(row), Family: []byte(family), Qualifier: []byte("q"), Timestamp: 1,
			Type: encoding.TypePut, Value: []byte(prefix + row)}
		require.NoError(t, w.Append(&kv))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

func TestBulkLoad(t *testing.T) {
	c := newClient(t, nil)
	table := newTable(t, c, "m")
	token, err := c.PrepareBulkLoad(ctx(t), table)
	require.NoError(t, err)
	st, err := os.Stat(token)
	require.NoError(t, err, "the token is a staging directory on the (local) server")
	require.True(t, st.IsDir())

	// Two families at once into the first region.
	pa, pb := filepath.Join(token, "cf", "a"), filepath.Join(token, "cf2", "b")
	writeBulkHFile(t, pa, "cf", "x", "a", "b", "c")
	writeBulkHFile(t, pb, "cf2", "y", "b", "l")
	loaded, err := c.BulkLoadHFiles(ctx(t), table, []byte("a"),
		[]BulkLoadFile{{Family: "cf", Path: pa}, {Family: "cf2", Path: "file://" + pb}}, BulkLoadOptions{Token: token})
	require.NoError(t, err)
	require.True(t, loaded)
	res := get(t, c, &Get{Table: table, Row: []byte("b")})
	require.Equal(t, []string{"b/cf:q=xb", "b/cf2:q=yb"}, cellStrings(res.Cells, false))

	// A file across the region boundary: not loaded, no error.
	ps := filepath.Join(token, "cf", "s")
	writeBulkHFile(t, ps, "cf", "s", "d", "z")
	loaded, err = c.BulkLoadHFiles(ctx(t), table, []byte("d"), []BulkLoadFile{{Family: "cf", Path: ps}}, BulkLoadOptions{Token: token})
	require.NoError(t, err)
	require.False(t, loaded)
	require.Empty(t, get(t, c, &Get{Table: table, Row: []byte("d")}).Cells)
	// Copied into the second region it loads, and the file stays.
	pz := filepath.Join(token, "cf", "z")
	writeBulkHFile(t, pz, "cf", "z", "q", "z")
	loaded, err = c.BulkLoadHFiles(ctx(t), table, []byte("q"), []BulkLoadFile{{Family: "cf", Path: pz}}, BulkLoadOptions{CopyFiles: true})
	require.NoError(t, err)
	require.True(t, loaded)
	_, err = os.Stat(pz)
	require.NoError(t, err)
	require.Equal(t, []string{"z/cf:q=zz"}, cellStrings(get(t, c, &Get{Table: table, Row: []byte("z")}).Cells, false))

	_, err = c.BulkLoadHFiles(ctx(t), table, []byte("a"), []BulkLoadFile{{Family: "nope", Path: ps}}, BulkLoadOptions{})
	require.True(t, IsException(err, "DoNotRetryIOException"), "%v", err)
	require.True(t, strings.Contains(err.Error(), "No such column family nope"), "%v", err)
	_, err = c.BulkLoadHFiles(ctx(t), table, []byte("a"), []BulkLoadFile{{Family: "cf", Path: filepath.Join(token, "gone")}}, BulkLoadOptions{})
	require.True(t, IsException(err, "java.io.FileNotFoundException"), "%v", err)
	_, err = c.BulkLoadHFiles(ctx(t), table, []byte("a"), nil, BulkLoadOptions{})
	require.Error(t, err)

	require.NoError(t, c.CleanupBulkLoad(ctx(t), table, token))
	_, err = os.Stat(token)
	require.True(t, os.IsNotExist(err))
	require.NoError(t, c.CleanupBulkLoad(ctx(t), table, token), "cleaning up twice is no error")
	_, err = c.PrepareBulkLoad(ctx(t), "no_such_table")
	require.True(t, IsException(err, "TableNotFoundException"), "%v", err)
}
