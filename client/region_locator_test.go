package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetaLookupKey(t *testing.T) {
	require.Equal(t, "t,row,99999999999999", string(MetaLookupKey("default:t", []byte("row"))))
	require.Equal(t, "ns:t,,99999999999999", string(MetaLookupKey("ns:t", nil)))
}

// TestLocateRegion checks both paths of LocateRegion, cached and a fresh
// reversed meta scan, on split keys that plain byte order would misplace
// in meta (below ',', and containing one), and that a reload drops a stale
// cache.
func TestLocateRegion(t *testing.T) {
	c := newClient(t, nil)
	other := newClient(t, nil)
	splits := []string{"\x03", "b", "m,n", "m,z"}
	tbl := newTable(t, c, splits...)
	bounds := append(append([]string{""}, splits...), "")
	cases := map[string]int{"": 0, "\x01": 0, "\x03": 1, "a": 1, "b": 2, "m": 2, "m,n": 3, "m,o": 3, "m,z": 4, "zz": 4}
	for _, reload := range []bool{true, false} {
		for row, want := range cases {
			ri, err := c.LocateRegion(ctx(t), tbl, []byte(row), reload)
			require.NoError(t, err, "row %q", row)
			require.Equal(t, bounds[want], string(ri.StartKey), "row %q, reload %v", row, reload)
			require.Equal(t, bounds[want+1], string(ri.EndKey), "row %q, reload %v", row, reload)
			require.NotEmpty(t, ri.Server)
			require.Len(t, ri.EncodedName, 32)
		}
	}

	_, err := c.LocateRegion(ctx(t), tbl+"_missing", []byte("a"), true)
	require.True(t, IsException(err, "TableNotFoundException"), "%v", err)

	// Recreated with other splits behind c's back: the cache still says
	// the old, a reload reads the new and drops the cache.
	require.NoError(t, other.DisableTable(ctx(t), tbl))
	require.NoError(t, other.DeleteTable(ctx(t), tbl))
	require.NoError(t, other.CreateTable(ctx(t), TableDescriptor{Name: tbl, Families: []Family{{Name: "cf"}}},
		[][]byte{[]byte("k")}))
	old, err := c.LocateRegion(ctx(t), tbl, []byte("c"), false)
	require.NoError(t, err)
	require.Equal(t, "b", string(old.StartKey))
	fresh, err := c.LocateRegion(ctx(t), tbl, []byte("c"), true)
	require.NoError(t, err)
	require.Equal(t, "", string(fresh.StartKey))
	require.Equal(t, "k", string(fresh.EndKey))
	cached, err := c.LocateRegion(ctx(t), tbl, []byte("c"), false)
	require.NoError(t, err)
	require.Equal(t, fresh, cached)
}
