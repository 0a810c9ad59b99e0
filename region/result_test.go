package region

import (
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestResultLatest: Latest finds a column's newest cell in a one-cell row
// (its fast path) as in a wider one, and nothing for a column the row does
// not have, including one that differs only in family or qualifier.
func TestResultLatest(t *testing.T) {
	cell := func(f, q string, ts int64) *encoding.KeyValue {
		return &encoding.KeyValue{Row: b("r"), Family: b(f), Qualifier: b(q), Timestamp: ts, Type: encoding.TypePut}
	}
	one := &Result{Cells: []*encoding.KeyValue{cell("f", "q", 1)}}
	require.Same(t, one.Cells[0], one.Latest(b("f"), b("q")))
	require.Nil(t, one.Latest(b("f"), b("r")))
	require.Nil(t, one.Latest(b("g"), b("q")))
	require.Nil(t, one.Latest(b("f"), b("")))
	require.Nil(t, (&Result{}).Latest(b("f"), b("q")))
	require.Nil(t, (*Result)(nil).Latest(b("f"), b("q")))

	wide := &Result{Cells: []*encoding.KeyValue{cell("f", "a", 2), cell("f", "q", 5), cell("f", "q", 3), cell("g", "q", 1)}}
	require.Same(t, wide.Cells[1], wide.Latest(b("f"), b("q")), "the newest of the column")
	require.Same(t, wide.Cells[3], wide.Latest(b("g"), b("q")))
	require.Nil(t, wide.Latest(b("f"), b("b")))
}
