package region

import (
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// TestDeleteFamilyBehindRowColBloom: a store file holding only a row's
// DeleteFamily marker, under a ROWCOL bloom that says no for the column a
// Get names, still hides the column's older put in another file. The Get
// must not skip the file for its ROWCOL answer: the file's delete-family
// count and bloom say it may delete the row.
func TestDeleteFamilyBehindRowColBloom(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) {
		o.Families = []FamilyOptions{{Name: "f", Bloom: hfile.BloomRowCol}}
	})
	defer r.Close()
	row, q := b("r1"), b("q")
	require.NoError(t, r.Put(NewPut(row).Add(fam, q, b("v"))))
	// Another row, so that the second file's blooms are not the marker's
	// alone.
	require.NoError(t, r.Put(NewPut(b("r2")).Add(fam, q, b("w"))))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Delete(NewDelete(row).AddFamily(fam, encoding.LatestTimestamp)))
	require.NoError(t, r.Put(NewPut(b("r3")).Add(fam, q, b("x"))))
	require.NoError(t, r.Flush())

	files := r.Store("f").Files()
	require.Len(t, files, 2)
	marker := files[1].Reader
	require.Equal(t, hfile.BloomRowCol, marker.BloomType())
	// The premise: the marker's file alone answers no for the column, so
	// only its delete-family count and bloom keep it in the read.
	ok, err := marker.MayContainRowCol(row, fam, q)
	require.NoError(t, err)
	require.False(t, ok, "the ROWCOL bloom of the marker's file holds (r1, q)")
	ok, err = marker.MayContainDeleteFamily(row)
	require.NoError(t, err)
	require.True(t, ok)

	require.Nil(t, getValue(t, r, "r1", "f", "q"), "the DeleteFamily marker hides the put")
	res, err := r.Get(NewGet(row))
	require.NoError(t, err)
	require.Empty(t, res.Cells)
	require.Equal(t, "w", string(getValue(t, r, "r2", "f", "q")))
	require.Equal(t, "x", string(getValue(t, r, "r3", "f", "q")))
}
