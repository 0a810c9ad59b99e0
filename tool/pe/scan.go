package pe

import (
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/region"
)

// The scan commands, after HBase PerformanceEvaluation's ScanTest,
// ReverseScanTest and RandomScanWithRange{10,100,1000}Test. Like HBase PE's
// they ask for every family × column explicitly (--addColumns=true), and
// like randomRead they check what they read: a row that should be there and
// is not fails the run with errMiss.

// scanNext is one operation of scan and reverseScan: the next row of the
// client's scanner, which must be row. The client opens its scanner over
// its own range [c*rows, (c+1)*rows) on its first operation (timed with it,
// as HBase PE's first testRow opens the scanner), and again when --duration
// makes it wrap around. HBase's ReverseScanTest scans from the end of the
// table whatever the client; ours scans the client's own range backwards,
// so that NCLIENTS reverse scans read the table once, as forward ones do.
func (c *peClient) scanNext(row int64) (time.Duration, error) {
	reversed := c.t.cmd.pick == pickReverse
	first, last := c.id*c.t.rows, (c.id+1)*c.t.rows-1
	var s *region.Scan
	if c.sc == nil || (!reversed && row == first) || (reversed && row == last) {
		c.close()
		s = &region.Scan{
			StartRow: peRowKey(first), StopRow: peRowKey(last), StopInclusive: true,
			Columns: c.t.columns, NoCacheBlocks: !c.t.cacheBlocks,
		}
		if reversed {
			s.StartRow, s.StopRow, s.Reversed = s.StopRow, s.StartRow, true
		}
	}
	start := now()
	if s != nil {
		sc, err := c.t.r.NewScanner(s)
		if err != nil {
			return now() - start, err
		}
		c.sc = sc
	}
	res, err := c.sc.Next()
	took := now() - start
	if err != nil {
		return took, err
	}
	if res == nil {
		return took, errors.Wrap(errMiss, "the scan ended before the row")
	}
	return took, c.checkRow(&res.Result, row, reversed)
}

// checkRow checks that res is row number want with every column. A result
// past want (in the scan's direction) means want is missing.
func (c *peClient) checkRow(res *region.Result, want int64, reversed bool) error {
	if res.IsEmpty() {
		return errors.AssertionFailedf("the scan returned an empty row")
	}
	got, ok := peRowNumber(res.Cells[0].Row)
	switch {
	case !ok:
		return errors.Newf("the scan returned row %q, which is not a pe row key", res.Cells[0].Row)
	case got != want && (got > want) != reversed:
		return errors.Wrapf(errMiss, "the scan returned row %s next", res.Cells[0].Row)
	case got != want:
		return errors.Newf("the scan returned row %s, out of order", res.Cells[0].Row)
	}
	for _, col := range c.t.columns {
		if res.Value(col.Family, col.Qualifier) == nil {
			return errors.Wrapf(errMiss, "column %s:%s", col.Family, col.Qualifier)
		}
	}
	return nil
}

// scanRange is one operation of scanRange10/100/1000: scan from row to
// row+scanLen (exclusive), as HBase PE's RandomScanWithRangeTest does.
// Every row of the range up to the end of the table (rows × NCLIENTS) must
// be there, and the start row even beyond it (--keySpace); the scan may
// also find rows beyond the end, from a bigger table.
func (c *peClient) scanRange(row int64) (time.Duration, error) {
	n := c.t.cmd.scanLen
	s := &region.Scan{StartRow: peRowKey(row), StopRow: peRowKey(row + n), Columns: c.t.columns, NoCacheBlocks: !c.t.cacheBlocks}
	results := c.results[:0]
	start := now()
	sc, err := c.t.r.NewScanner(s)
	if err != nil {
		return now() - start, err
	}
	for {
		res, err := sc.Next()
		if err != nil {
			sc.Close()
			return now() - start, err
		}
		if res == nil {
			break
		}
		results = append(results, res)
	}
	sc.Close()
	took := now() - start
	defer func() { clear(results); c.results = results[:0] }()
	c.rowsRead += int64(len(results))
	if int64(len(results)) > n {
		return took, errors.Newf("a scan of %d rows returned %d", n, len(results))
	}
	for i, res := range results {
		if err := c.checkRow(&res.Result, row+int64(i), false); err != nil {
			return took, err
		}
	}
	// The start row must be there even beyond the table, as randomRead's rows must.
	if want := max(min(n, c.t.tableRows-row), 1); int64(len(results)) < want {
		return took, errors.Wrapf(errMiss, "row %s (the scan returned %d of %d rows)", peRowKey(row+int64(len(results))), len(results), want)
	}
	return took, nil
}

// filterScan is one operation of filterScan, HBase PE's FilteredScanTest: a
// scan of the whole table, family info0, with a SingleColumnValueFilter
// that keeps rows whose info0:0 equals a fresh value. HBase PE's value is
// random, so the filter practically never matches; ours has lower-case
// letters, which pe never writes, so it matches no row pe wrote, and a row
// returned fails the run. The server reads and filters every row and
// returns none: it measures the server side of a scan.
func (c *peClient) filterScan(int64) (time.Duration, error) {
	family, qualifier := c.t.families[0], c.t.qualifiers[0]
	value := peValue(c.rng, c.t.valueSize)
	for i := range value {
		value[i] |= 0x20 // 'A'..'Z' -> 'a'..'z'
	}
	s := &region.Scan{
		NoCacheBlocks: !c.t.cacheBlocks,
		Filter:        filter.NewSingleColumnValueFilter(family, qualifier, filter.CompareEqual, filter.NewBinaryComparator(value)),
	}
	for _, q := range c.t.qualifiers {
		s.Columns = append(s.Columns, region.Column{Family: family, Qualifier: q})
	}
	start := now()
	sc, err := c.t.r.NewScanner(s)
	if err != nil {
		return now() - start, err
	}
	defer sc.Close()
	var first *region.ScanResult
	n := 0
	for {
		res, err := sc.Next()
		if err != nil {
			return now() - start, err
		}
		if res == nil {
			break
		}
		if first == nil {
			first = res
		}
		n++
	}
	took := now() - start
	if n > 0 {
		return took, errors.Newf("the filter matched %d rows, from row %q: was the table written by a pe write command (which writes %s:%s in every row)?",
			n, first.Cells[0].Row, family, qualifier)
	}
	return took, nil
}
