package region

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestOpenMustExist: with MustExist, a region directory that is not there
// is an error (ErrNoRegion) and is not created; one that is opens with its
// data. Without it, Open creates the region.
func TestOpenMustExist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	must := func(o *Options) { o.MustExist = true }
	_, err := Open(dir, Options{Families: []FamilyOptions{{Name: "f"}}, MustExist: true, EncodedName: "abc"})
	require.True(t, errors.Is(err, ErrNoRegion), "%v", err)
	require.Contains(t, err.Error(), dir)
	_, statErr := os.Stat(dir)
	require.True(t, os.IsNotExist(statErr), "the directory must not be created")

	r := openTest(t, dir, nil) // created
	require.NoError(t, r.Put(NewPut(b("row")).Add(b("f"), b("q"), b("v"))))
	require.NoError(t, r.Close())
	r = openTest(t, dir, must)
	res, err := r.Get(&Get{Row: b("row")})
	require.NoError(t, err)
	require.Equal(t, b("v"), res.Value(b("f"), b("q")))
	require.NoError(t, r.Close())
}
