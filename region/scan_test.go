package region

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func scanAll(t *testing.T, r *Region, s *Scan) (rows []string, results []*ScanResult) {
	t.Helper()
	sc, err := r.NewScanner(s)
	require.NoError(t, err)
	defer sc.Close()
	for {
		res, err := sc.Next()
		require.NoError(t, err)
		if res == nil {
			return rows, results
		}
		results = append(results, res)
		row := string(res.Cells[0].Row)
		if len(rows) == 0 || rows[len(rows)-1] != row {
			rows = append(rows, row)
		}
	}
}

func TestScanForwardReverseAcrossFamilies(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for i := 0; i < 30; i++ {
		p := NewPut(b(fmt.Sprintf("r%02d", i)))
		if i%2 == 0 {
			p.Add(fam, b("q"), b("f"))
		}
		if i%3 == 0 {
			p.Add(fam2, b("x"), b("g"))
		}
		if len(p.Cells) > 0 {
			require.NoError(t, r.Put(p))
		}
		if i == 15 {
			require.NoError(t, r.Flush())
		}
	}
	var want []string
	for i := 0; i < 30; i++ {
		if i%2 == 0 || i%3 == 0 {
			want = append(want, fmt.Sprintf("r%02d", i))
		}
	}
	rows, results := scanAll(t, r, &Scan{})
	require.Equal(t, want, rows)
	for _, res := range results {
		require.False(t, res.Partial)
	}
	rev, _ := scanAll(t, r, &Scan{Reversed: true})
	for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
		want[i], want[j] = want[j], want[i]
	}
	require.Equal(t, want, rev)

	rows, _ = scanAll(t, r, &Scan{StartRow: b("r04"), StopRow: b("r12")})
	require.Equal(t, []string{"r04", "r06", "r08", "r09", "r10"}, rows)
	rows, _ = scanAll(t, r, &Scan{StartRow: b("r04"), StartExclusive: true, StopRow: b("r12"), StopInclusive: true})
	require.Equal(t, []string{"r06", "r08", "r09", "r10", "r12"}, rows)
	rows, _ = scanAll(t, r, &Scan{Reversed: true, StartRow: b("r12"), StopRow: b("r04")})
	require.Equal(t, []string{"r12", "r10", "r09", "r08", "r06"}, rows)
	rows, _ = scanAll(t, r, &Scan{Reversed: true, StartRow: b("r11"), StopRow: b("r04"), StopInclusive: true, Limit: 3})
	require.Equal(t, []string{"r10", "r09", "r08"}, rows)
	rows, _ = scanAll(t, r, &Scan{Columns: []Column{{Family: fam2}}})
	require.Equal(t, []string{"r00", "r03", "r06", "r09", "r12", "r15", "r18", "r21", "r24", "r27"}, rows)
}

func TestScanLimitsAndPartials(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	p := NewPut(b("wide"))
	for q := 0; q < 10; q++ {
		p.Add(fam, b(fmt.Sprintf("q%d", q)), b("v"))
	}
	p.Add(fam2, b("x"), b("v"))
	require.NoError(t, r.Put(p))
	require.NoError(t, r.Put(NewPut(b("z")).Add(fam, b("q"), b("v"))))

	_, results := scanAll(t, r, &Scan{Batch: 4})
	var sizes []int
	var partial []bool
	for _, res := range results {
		sizes = append(sizes, len(res.Cells))
		partial = append(partial, res.Partial)
	}
	require.Equal(t, []int{4, 4, 3, 1}, sizes)
	require.Equal(t, []bool{true, true, false, false}, partial)

	_, results = scanAll(t, r, &Scan{StoreOffset: 2, StoreLimit: 3})
	require.Len(t, results[0].Cells, 3) // f: q2..q4; g has one cell, offset 2 skips it
	require.Equal(t, "q2", string(results[0].Cells[0].Qualifier))
	require.Len(t, results, 1, "row z has one cell, skipped by the offset")

	_, results = scanAll(t, r, &Scan{AllowPartialResults: true, MaxResultSize: 60})
	require.Greater(t, len(results), 2)
	require.True(t, results[0].Partial)
}

// TestScanSnapshotIsolation keeps a scanner open while rows are rewritten,
// flushed and deleted: it sees only what existed when it opened.
func TestScanSnapshotIsolation(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for i := 0; i < 200; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), b("old"))))
	}
	for _, reversed := range []bool{false, true} {
		sc, err := r.NewScanner(&Scan{Reversed: reversed})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), b("new"))); err != nil {
					t.Error(err)
				}
				if i%50 == 0 {
					if err := r.Flush(); err != nil {
						t.Error(err)
					}
				}
				if err := r.Put(NewPut(b(fmt.Sprintf("n%03d", i))).Add(fam, b("q"), b("new"))); err != nil {
					t.Error(err)
				}
			}
		}()
		n := 0
		for {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				break
			}
			require.Equal(t, "old", string(res.Cells[0].Value), "row %s", res.Cells[0].Row)
			n++
		}
		sc.Close()
		wg.Wait()
		require.Equal(t, 200, n)
		// Reset for the next direction.
		for i := 0; i < 200; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), b("old"))))
			require.NoError(t, r.Delete(NewDelete(b(fmt.Sprintf("n%03d", i)))))
		}
	}
}
