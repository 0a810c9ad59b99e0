package region

import (
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/stretchr/testify/require"
)

// TestOwnedScanResultsStayIntact keeps every result Next returns until the
// scan ends and then checks them all: owned results are copied straight
// into result and scanner memory (the first cell's struct in the result,
// the rest and the bytes in blocks shared by several results), so a row
// that a filter drops, a row split by Batch, or a NextInto between two
// Next calls must never overwrite a result handed out before.
func TestOwnedScanResultsStayIntact(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	type cell struct{ row, fam, qual, val string }
	want := map[string][]cell{}
	var rows []string
	for i := 0; i < 300; i++ {
		row := fmt.Sprintf("r%03d", i)
		p := NewPut(b(row))
		n := 1 + (i*7)%13 // 1..13 cells in fam
		for q := 0; q < n; q++ {
			v := fmt.Sprintf("%s-q%02d-%d", row, q, i%5)
			p.Add(fam, b(fmt.Sprintf("q%02d", q)), b(v))
			want[row] = append(want[row], cell{row, string(fam), fmt.Sprintf("q%02d", q), v})
		}
		if i%4 == 0 {
			p.Add(fam2, b("x"), b(row+"-x"))
			want[row] = append(want[row], cell{row, string(fam2), "x", row + "-x"})
		}
		require.NoError(t, r.Put(p))
		rows = append(rows, row)
		if i == 150 {
			require.NoError(t, r.Flush())
		}
	}
	// Rows whose q00 value ends in 0 or 3 are dropped by the filter.
	kept := func(row string) bool {
		v := want[row][0].val
		return v[len(v)-1] != '0' && v[len(v)-1] != '3'
	}
	newFilter := func() filter.Filter {
		f, err := filter.ParseFilter(fmt.Sprintf("SingleColumnValueFilter('%s', 'q00', !=, 'regexstring:.*-[03]$', true, true)", fam))
		require.NoError(t, err)
		return f
	}
	for _, tc := range []struct {
		name  string
		scan  func() *Scan
		keep  func(string) bool
		mixed bool // alternate Next and NextInto
	}{
		{"plain", func() *Scan { return &Scan{} }, nil, false},
		{"limit", func() *Scan { return &Scan{StartRow: b("r100"), Limit: 70} }, nil, false},
		{"batch", func() *Scan { return &Scan{Batch: 4} }, nil, false},
		{"filter", func() *Scan { return &Scan{Filter: newFilter()} }, kept, false},
		{"filter-reversed", func() *Scan { return &Scan{Filter: newFilter(), Reversed: true} }, kept, false},
		{"mixed", func() *Scan { return &Scan{Limit: 200} }, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.scan()
			sc, err := r.NewScanner(s)
			require.NoError(t, err)
			var got []*ScanResult
			var into ScanResult
			var seen []string // rows in order, each once
			for i := 0; ; i++ {
				var res *ScanResult
				if tc.mixed && i%3 == 2 {
					ok, err := sc.NextInto(&into)
					require.NoError(t, err)
					if !ok {
						break
					}
					res = &into
				} else {
					res, err = sc.Next()
					require.NoError(t, err)
					if res == nil {
						break
					}
					got = append(got, res)
				}
				if row := string(res.Cells[0].Row); len(seen) == 0 || seen[len(seen)-1] != row {
					seen = append(seen, row)
				}
			}
			sc.Close()
			// The rows the scan should have returned, in its order.
			var wantRows []string
			start := 0
			if s.StartRow != nil {
				fmt.Sscanf(string(s.StartRow), "r%03d", &start)
			}
			for j := range rows {
				row := rows[j]
				if s.Reversed {
					row = rows[len(rows)-1-j]
				}
				if row < fmt.Sprintf("r%03d", start) || (tc.keep != nil && !tc.keep(row)) {
					continue
				}
				wantRows = append(wantRows, row)
			}
			if s.Limit > 0 && len(wantRows) > s.Limit {
				wantRows = wantRows[:s.Limit]
			}
			require.Equal(t, wantRows, seen)
			// Every kept result still holds exactly its row's cells (a
			// part of them with Batch), in order.
			next := map[string]int{} // row -> cells checked so far
			for _, res := range got {
				row := string(res.Cells[0].Row)
				if s.Batch > 0 {
					require.LessOrEqual(t, len(res.Cells), s.Batch)
				}
				off := next[row]
				if s.Batch == 0 && !tc.mixed {
					require.Zero(t, off, "row %s returned twice", row)
					require.Len(t, res.Cells, len(want[row]), "row %s", row)
				}
				for k, c := range res.Cells {
					w := want[row][off+k]
					require.Equal(t, w, cell{string(c.Row), string(c.Family), string(c.Qualifier), string(c.Value)}, "row %s cell %d", row, off+k)
					require.Equal(t, encoding.TypePut, c.Type)
				}
				next[row] = off + len(res.Cells)
			}
		})
	}
}
