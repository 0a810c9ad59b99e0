package region

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func cellStrings(res *Result) []string {
	var out []string
	for _, c := range res.Cells {
		v := string(c.Value)
		if len(c.Value) == 8 {
			v = string(binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(c.Value)))
		}
		out = append(out, string(c.Family)+":"+string(c.Qualifier)+"="+v)
	}
	return out
}

func long(v int64) string { return string(binary.BigEndian.AppendUint64(nil, uint64(v))) }

// TestReadModifyWriteColumns checks increments and appends of several
// columns at once: the Result is sorted by family and qualifier, a column
// named twice gets both changes and is written once, one timestamp later.
func TestReadModifyWriteColumns(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	inc := NewIncrement(b("r")).Add(fam2, b("b"), 1).Add(fam, b("z"), 2).Add(fam, b("a"), 3).Add(fam, b("z"), 10)
	res, err := r.Increment(inc)
	require.NoError(t, err)
	require.Equal(t, []string{"f:a=" + long(3), "f:z=" + long(12), "g:b=" + long(1)}, cellStrings(res))
	a, z := res.Latest(fam, b("a")), res.Latest(fam, b("z"))
	require.Equal(t, a.Timestamp+1, z.Timestamp)
	for _, c := range res.Cells {
		require.Equal(t, "r", string(c.Row))
	}

	g := NewGet(b("r")).AddColumn(fam, b("z"))
	g.MaxVersions = 3
	got, err := r.Get(g)
	require.NoError(t, err)
	require.Len(t, got.Cells, 1, "a repeated column is written once")
	require.Equal(t, z.Timestamp, got.Cells[0].Timestamp)

	res, err = r.Increment(NewIncrement(b("r")).Add(fam, b("z"), 1))
	require.NoError(t, err)
	require.Equal(t, []string{"f:z=" + long(13)}, cellStrings(res))
	require.Greater(t, res.Cells[0].Timestamp, z.Timestamp)

	app := NewAppend(b("s")).Add(fam, b("x"), b("ab")).Add(fam2, b("y"), b("0123456789")).Add(fam, b("x"), b("cd"))
	res, err = r.Append(app)
	require.NoError(t, err)
	require.Equal(t, []string{"f:x=abcd", "g:y=0123456789"}, cellStrings(res))
	res, err = r.Append(NewAppend(b("s")).Add(fam, b("x"), b("e")))
	require.NoError(t, err)
	require.Equal(t, []string{"f:x=abcde"}, cellStrings(res))
	require.Equal(t, "abcde", string(getValue(t, r, "s", "f", "x")))

	// The Result is the caller's: a later write does not change it.
	res, err = r.Append(NewAppend(b("s")).Add(fam, b("x"), b("f")))
	require.NoError(t, err)
	_, err = r.Append(NewAppend(b("s")).Add(fam, b("x"), b("g")))
	require.NoError(t, err)
	require.Equal(t, "abcdef", string(res.Cells[0].Value))

	_, err = r.Increment(NewIncrement(b("s")).Add(fam, b("x"), 1))
	require.ErrorContains(t, err, "is not a long")
	_, err = r.Increment(NewIncrement(b("s")).Add(b("nope"), b("x"), 1))
	require.ErrorIs(t, err, ErrNoSuchFamily)
	_, err = r.Increment(NewIncrement(b("s")))
	require.Error(t, err)
}

// TestReadModifyWriteResultOwnsItsBytes: the Result of an Increment or
// Append holds copies of the row and columns, not the caller's request, which
// may be reused as soon as the call returns; each slice is capped, so that
// appending to one cannot overwrite the next.
func TestReadModifyWriteResultOwnsItsBytes(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for _, tc := range []struct {
		name string
		op   func(row []byte, cols [][]byte) (*Result, error)
		want []string
	}{
		{"one counter", func(row []byte, cols [][]byte) (*Result, error) {
			return r.Increment(NewIncrement(row).Add(fam, cols[0], 5))
		}, []string{"f:q0=" + long(5)}},
		{"counters", func(row []byte, cols [][]byte) (*Result, error) {
			return r.Increment(NewIncrement(row).Add(fam, cols[0], 1).Add(fam2, cols[1], 2).Add(fam, cols[0], 3))
		}, []string{"f:q0=" + long(4), "g:q1=" + long(2)}},
		{"long append", func(row []byte, cols [][]byte) (*Result, error) {
			app := NewAppend(row)
			for range 20 {
				app.Add(fam, cols[0], cols[1])
			}
			return r.Append(app)
		}, []string{"f:q0=" + strings.Repeat("q1", 20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := []byte("row-" + tc.name)
			cols := [][]byte{[]byte("q0"), []byte("q1")}
			res, err := tc.op(row, cols)
			require.NoError(t, err)
			for _, buf := range append(cols, row) {
				for i := range buf {
					buf[i] = 'X'
				}
			}
			require.Equal(t, tc.want, cellStrings(res))
			for _, c := range res.Cells {
				require.Equal(t, "row-"+tc.name, string(c.Row))
				for _, s := range [][]byte{c.Row, c.Family, c.Qualifier, c.Value} {
					require.Equal(t, len(s), cap(s))
				}
			}
		})
	}
}
