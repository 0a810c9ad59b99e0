package region

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/scanner"
	"github.com/stretchr/testify/require"
)

// TestIncrementUpsert: in a family of VERSIONS 1, increments and appends
// do not pile up versions in the memstore (HBase's upsert); in one that
// keeps more, every version stays for reads of several versions.
func TestIncrementUpsert(t *testing.T) {
	r := openTest(t, t.TempDir(), nil) // f: VERSIONS 3, g: VERSIONS 1
	defer r.Close()
	for i := 0; i < 100; i++ {
		_, err := r.Increment(NewIncrement(b("ctr")).Add(fam, b("n"), 1).Add(fam2, b("n"), 1))
		require.NoError(t, err)
		_, err = r.Append(NewAppend(b("log")).Add(fam2, b("a"), b("x")))
		require.NoError(t, err)
	}
	g := r.Store("g").mem
	require.LessOrEqual(t, g.Len(), 4, "family g keeps one version: the newest and the one before it stay")
	require.Equal(t, 100, r.Store("f").mem.Len(), "family f keeps three versions: nothing is upserted")

	res, err := r.Get(&Get{Row: b("ctr"), MaxVersions: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"f:n=" + long(100), "f:n=" + long(99), "f:n=" + long(98), "g:n=" + long(100)}, cellStrings(res))
	res, err = r.Get(NewGet(b("log")))
	require.NoError(t, err)
	require.Equal(t, 100, len(res.Value(fam2, b("a"))))

	// A plain Put of a VERSIONS 1 family keeps its versions until the
	// flush, as in HBase: a read with a time range still finds them.
	for i := 0; i < 5; i++ {
		require.NoError(t, r.Put(NewPut(b("p")).AddAt(fam2, b("q"), int64(10+i), b(fmt.Sprint(i)))))
	}
	res, err = r.Get(&Get{Row: b("p"), TimeRange: scanner.TimeRange{Min: 10, Max: 11}})
	require.NoError(t, err)
	require.Equal(t, "0", string(res.Value(fam2, b("q"))))

	// What the memstore dropped, the flush would have dropped too.
	require.NoError(t, r.Flush())
	res, err = r.Get(&Get{Row: b("ctr"), MaxVersions: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"f:n=" + long(100), "f:n=" + long(99), "f:n=" + long(98), "g:n=" + long(100)}, cellStrings(res))
}

// TestUpsertKeepsOpenScannersView: a scanner opened before increments reads
// the counters as they were when it was opened, although the increments
// upsert: its read point holds back what they may remove.
func TestUpsertKeepsOpenScannersView(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	const rows = 200
	row := func(i int) []byte { return fmt.Appendf(nil, "ctr%04d", i) }
	for i := 0; i < rows; i++ {
		for j := 0; j < 3; j++ {
			_, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1))
			require.NoError(t, err)
		}
	}
	sc, err := r.NewScanner(&Scan{Columns: []Column{{Family: fam2}}})
	require.NoError(t, err)
	defer sc.Close()
	first, err := sc.Next()
	require.NoError(t, err)
	require.Equal(t, long(3), string(first.Value(fam2, b("n"))))
	// The scanner has read ahead a few rows; those beyond it are read
	// from the memstore when it gets there, after these increments.
	for i := 0; i < rows; i++ {
		for j := 0; j < 5; j++ {
			_, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1))
			require.NoError(t, err)
		}
	}
	n := 1
	for {
		res, err := sc.Next()
		require.NoError(t, err)
		if res == nil {
			break
		}
		require.Equal(t, long(3), string(res.Value(fam2, b("n"))), "row %s", res.Cells[0].Row)
		n++
	}
	require.Equal(t, rows, n)
	sc.Close()

	// Closed, it holds nothing back: the next increment of each counter
	// leaves two versions of it.
	for i := 0; i < rows; i++ {
		_, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1))
		require.NoError(t, err)
	}
	require.Equal(t, 2*rows, r.Store("g").mem.Len())
	require.Equal(t, long(9), string(getValue(t, r, "ctr0042", "g", "n")))
}

// TestConcurrentIncrementsAndReads: Gets and scans running beside
// upserting increments always find every counter, never going back.
func TestConcurrentIncrementsAndReads(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	const counters = 8
	ops := 4000
	if testing.Short() {
		ops = 1000
	}
	row := func(i int) []byte { return fmt.Appendf(nil, "ctr%d", i) }
	for i := 0; i < counters; i++ {
		_, err := r.Increment(NewIncrement(row(i)).Add(fam2, b("n"), 1))
		require.NoError(t, err)
	}
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		failure atomic.Pointer[string]
	)
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failure.CompareAndSwap(nil, &msg)
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < ops && failure.Load() == nil; i++ {
				if _, err := r.Increment(NewIncrement(row((i+w)%counters)).Add(fam2, b("n"), 1)); err != nil {
					fail("increment: %v", err)
				}
			}
		}(w)
	}
	readers := sync.WaitGroup{}
	for rd := 0; rd < 2; rd++ {
		readers.Add(1)
		go func(scan bool) {
			defer readers.Done()
			last := make([]uint64, counters)
			var res Result
			for !stop.Load() && failure.Load() == nil {
				vals := make([]uint64, counters)
				if scan {
					sc, err := r.NewScanner(&Scan{Columns: []Column{{Family: fam2, Qualifier: b("n")}}})
					if err != nil {
						fail("scan: %v", err)
						return
					}
					n := 0
					for ; ; n++ {
						row, err := sc.Next()
						if err != nil || row == nil {
							if err != nil {
								fail("scan: %v", err)
							}
							break
						}
						var i int
						fmt.Sscanf(string(row.Cells[0].Row), "ctr%d", &i)
						vals[i] = binary.BigEndian.Uint64(row.Value(fam2, b("n")))
					}
					sc.Close()
					if n != counters {
						fail("scan found %d counters", n)
					}
				} else {
					for i := 0; i < counters; i++ {
						if _, err := r.GetInto(NewGet(row(i)).AddColumn(fam2, b("n")), &res); err != nil {
							fail("get: %v", err)
							return
						}
						v := res.Value(fam2, b("n"))
						if len(v) != 8 {
							fail("get of counter %d found %d bytes", i, len(v))
							return
						}
						vals[i] = binary.BigEndian.Uint64(v)
					}
				}
				for i := range vals {
					if vals[i] < last[i] {
						fail("counter %d went back from %d to %d", i, last[i], vals[i])
					}
					last[i] = vals[i]
				}
			}
		}(rd == 0)
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if p := failure.Load(); p != nil {
		t.Fatal(*p)
	}
	var sum uint64
	for i := 0; i < counters; i++ {
		sum += binary.BigEndian.Uint64(getValue(t, r, string(row(i)), "g", "n"))
	}
	require.Equal(t, uint64(counters+2*ops), sum)
}
