package region

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/scanner"
)

// modelColumn is one column of a row as the matcher hands it to a filter:
// its visible versions within the read's time range, newest first, at most
// the family's VERSIONS (with a filter, HBase counts versions against the
// family before the filter and against the read after it).
type modelColumn struct {
	fam, qual string
	versions  []*modelCell
}

// filterCase is a filter for one read and the model's reading of it,
// written from the filter's documented semantics rather than its return
// codes: rowFn gets each row with cells, in scan order, and returns what
// the read returns of it, and whether the scan ends after it.
type filterCase struct {
	desc   string
	filter filter.Filter
	rowFn  func(row string, cols []modelColumn, maxVersions int) (out []*modelCell, stop bool)
}

// keepCells is a read whose filter keeps or skips single cells: of each
// column's versions the kept ones, at most maxVersions.
func keepCells(cols []modelColumn, maxVersions int, keep func(c *modelColumn, p *modelCell) bool) []*modelCell {
	var out []*modelCell
	for i := range cols {
		n := 0
		for _, p := range cols[i].versions {
			if !keep(&cols[i], p) {
				continue
			}
			if n == maxVersions {
				break
			}
			n++
			out = append(out, p)
		}
	}
	return out
}

func keepAll(*modelColumn, *modelCell) bool { return true }

// byRow is a filter that keeps or drops whole rows by key.
func byRow(in func(row string) bool) func(string, []modelColumn, int) ([]*modelCell, bool) {
	return func(row string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
		if !in(row) {
			return nil, false
		}
		return keepCells(cols, maxVersions, keepAll), false
	}
}

// byCell is a filter that keeps or skips single cells.
func byCell(keep func(c *modelColumn, p *modelCell) bool) func(string, []modelColumn, int) ([]*modelCell, bool) {
	return func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
		return keepCells(cols, maxVersions, keep), false
	}
}

// newestOfColumns is a filter that takes the newest version of some of
// the row's columns, counted across families.
func newestOfColumns(take func(i int, c *modelColumn) bool) func(string, []modelColumn, int) ([]*modelCell, bool) {
	return func(_ string, cols []modelColumn, _ int) ([]*modelCell, bool) {
		var out []*modelCell
		for i := range cols {
			if take(i, &cols[i]) {
				out = append(out, cols[i].versions[0])
			}
		}
		return out, false
	}
}

// randomFilterCase returns a fresh filter of the second set (they keep
// per-read state) with its model. rows and quals are the test's key
// spaces; value is a value some recent put wrote; get limits the choice to
// filters meant for Gets too.
func randomFilterCase(rng *rand.Rand, rowOf, qualOf func() string, value string, reversed bool) filterCase {
	must := func(f filter.Filter, err error) filter.Filter {
		if err != nil {
			panic(err)
		}
		return f
	}
	optBytes := func(s string) []byte {
		if s == "" {
			return nil
		}
		return b(s)
	}
	qualRange := func() (lo string, loIn bool, hi string, hiIn bool, in func(q string) bool) {
		if rng.IntN(4) > 0 {
			lo = qualOf()
		}
		if rng.IntN(4) > 0 {
			hi = qualOf()
		}
		loIn, hiIn = rng.IntN(2) == 0, rng.IntN(2) == 0
		return lo, loIn, hi, hiIn, func(q string) bool {
			if lo != "" && (q < lo || (q == lo && !loIn)) {
				return false
			}
			return hi == "" || q < hi || (q == hi && hiIn)
		}
	}
	randomTimestamps := func() (ts []int64, in map[int64]bool) {
		in = map[int64]bool{}
		for i := 0; i < rng.IntN(6); i++ {
			t := int64(1 + rng.IntN(20))
			ts = append(ts, t)
			in[t] = true
		}
		return ts, in
	}
	switch k := rng.IntN(17); k {
	case 0:
		var prefixes [][]byte
		set := map[string]bool{}
		for i := 0; i < rng.IntN(4); i++ {
			p := qualOf()
			if rng.IntN(4) == 0 {
				p += "x" // matches no qualifier
			}
			if !set[p] {
				set[p] = true
				prefixes = append(prefixes, b(p))
			}
		}
		sorted := slices.Clone(prefixes)
		slices.SortFunc(sorted, bytes.Compare)
		return filterCase{desc: fmt.Sprintf("MultipleColumnPrefixFilter%q", prefixes),
			filter: must(filter.NewMultipleColumnPrefixFilter(prefixes)),
			rowFn: byCell(func(c *modelColumn, _ *modelCell) bool {
				if len(sorted) == 0 {
					return true
				}
				// HBase's rule: the largest prefix <= the qualifier decides.
				n := sort.Search(len(sorted), func(i int) bool { return string(sorted[i]) > c.qual })
				return n > 0 && strings.HasPrefix(c.qual, string(sorted[n-1]))
			})}
	case 1:
		lo, loIn, hi, hiIn, in := qualRange()
		return filterCase{desc: fmt.Sprintf("ColumnRangeFilter(%q,%t,%q,%t)", lo, loIn, hi, hiIn),
			filter: filter.NewColumnRangeFilter(optBytes(lo), loIn, optBytes(hi), hiIn),
			rowFn:  byCell(func(c *modelColumn, _ *modelCell) bool { return in(c.qual) })}
	case 2:
		ts, in := randomTimestamps()
		return filterCase{desc: fmt.Sprintf("TimestampsFilter%v", ts), filter: must(filter.NewTimestampsFilter(ts, false)),
			rowFn: byCell(func(_ *modelColumn, p *modelCell) bool { return in[p.ts] })}
	case 3:
		limit, offset := rng.IntN(4), rng.IntN(4)
		return filterCase{desc: fmt.Sprintf("ColumnPaginationFilter(%d,%d)", limit, offset),
			filter: must(filter.NewColumnPaginationFilter(int32(limit), int32(offset))),
			rowFn:  newestOfColumns(func(i int, _ *modelColumn) bool { return i >= offset && i < offset+limit })}
	case 4:
		limit, at := rng.IntN(4), qualOf()
		taken := 0
		return filterCase{desc: fmt.Sprintf("ColumnPaginationFilter(%d,%q)", limit, at),
			filter: must(filter.NewColumnPaginationFilterAt(int32(limit), b(at))),
			rowFn: func(row string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				taken = 0
				// Columns before the offset are skipped (by seeks, in each
				// family) until one column is taken.
				return newestOfColumns(func(_ int, c *modelColumn) bool {
					if taken >= limit || (taken == 0 && c.qual < at) {
						return false
					}
					taken++
					return true
				})(row, cols, maxVersions)
			}}
	case 5:
		stop := rowOf()
		return filterCase{desc: fmt.Sprintf("InclusiveStopFilter(%q)", stop), filter: filter.NewInclusiveStopFilter(b(stop)),
			rowFn: byRow(func(row string) bool { return (row <= stop) != reversed || row == stop })}
	case 6:
		// WhileMatchFilter(ValueFilter(NOT_EQUAL, value)): the scan ends at
		// the first cell holding value; the cells before it in its row stay.
		return filterCase{desc: fmt.Sprintf("WhileMatchFilter(ValueFilter(!=%q))", value),
			filter: filter.NewWhileMatchFilter(filter.NewValueFilter(filter.CompareNotEqual, filter.NewBinaryComparator(b(value)))),
			rowFn: func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				var out []*modelCell
				for _, c := range cols {
					n := 0
					for _, p := range c.versions {
						if p.value == value {
							return out, true
						}
						// Counted after the filter saw it: one version past
						// the read's limit is still seen.
						if n++; n > maxVersions {
							break
						}
						out = append(out, p)
					}
				}
				return out, false
			}}
	case 7:
		// SkipFilter(ValueFilter(NOT_EQUAL, value)): rows where the filter
		// sees value are dropped whole.
		return filterCase{desc: fmt.Sprintf("SkipFilter(ValueFilter(!=%q))", value),
			filter: filter.NewSkipFilter(filter.NewValueFilter(filter.CompareNotEqual, filter.NewBinaryComparator(b(value)))),
			rowFn: func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				var out []*modelCell
				for _, c := range cols {
					n := 0
					for _, p := range c.versions {
						if p.value == value {
							return nil, false
						}
						if n++; n > maxVersions {
							break
						}
						out = append(out, p)
					}
				}
				return out, false
			}}
	case 8:
		fam, qual, drop := []string{"f", "g"}[rng.IntN(2)], qualOf(), rng.IntN(2) == 0
		withValue := rng.IntN(2) == 0
		desc := fmt.Sprintf("DependentColumnFilter(%s:%s,drop=%t", fam, qual, drop)
		f := filter.NewDependentColumnFilter(b(fam), b(qual), drop, filter.CompareNoOp, nil)
		if withValue {
			desc += fmt.Sprintf(",=%q", value)
			f = filter.NewDependentColumnFilter(b(fam), b(qual), drop, filter.CompareEqual, filter.NewBinaryComparator(b(value)))
		}
		return filterCase{desc: desc + ")", filter: f,
			rowFn: func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				stamps := map[int64]bool{}
				var included []*modelCell
				for _, c := range cols {
					n := 0
					for _, p := range c.versions {
						if c.fam == fam && c.qual == qual {
							if withValue && p.value != value {
								continue // SKIP, not counted
							}
							stamps[p.ts] = true
							if drop {
								continue
							}
						}
						if n++; n > maxVersions {
							break
						}
						included = append(included, p)
					}
				}
				var out []*modelCell
				for _, p := range included {
					if stamps[p.ts] {
						out = append(out, p)
					}
				}
				return out, false
			}}
	case 9:
		fam, qual := []string{"f", "g"}[rng.IntN(2)], qualOf()
		op := []filter.CompareOp{filter.CompareEqual, filter.CompareNotEqual}[rng.IntN(2)]
		ifMissing, latestOnly := rng.IntN(2) == 0, rng.IntN(2) == 0
		f := filter.NewSingleColumnValueExcludeFilter(b(fam), b(qual), op, filter.NewBinaryComparator(b(value)))
		f.SetFilterIfMissing(ifMissing)
		f.SetLatestVersionOnly(latestOnly)
		passes := func(p *modelCell) bool { return (p.value == value) == (op == filter.CompareEqual) }
		return filterCase{desc: fmt.Sprintf("SingleColumnValueExcludeFilter(%s:%s %s %q,ifMissing=%t,latest=%t)", fam, qual, op, value, ifMissing, latestOnly),
			filter: f,
			rowFn: func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				var target *modelColumn
				for i := range cols {
					if cols[i].fam == fam && cols[i].qual == qual {
						target = &cols[i]
					}
				}
				switch {
				case target == nil && ifMissing:
					return nil, false
				case target != nil:
					seen := target.versions[:1]
					if !latestOnly {
						seen = target.versions[:min(len(target.versions), maxVersions+1)]
					}
					if !slices.ContainsFunc(seen, passes) {
						return nil, false
					}
				}
				return keepCells(cols, maxVersions, func(c *modelColumn, _ *modelCell) bool { return c != target }), false
			}}
	case 10:
		fam, qual := []string{"f", "g"}[rng.IntN(2)], qualOf()
		op := []filter.CompareOp{filter.CompareEqual, filter.CompareNotEqual}[rng.IntN(2)]
		f, err := filter.NewColumnValueFilter(b(fam), b(qual), op, filter.NewBinaryComparator(b(value)))
		return filterCase{desc: fmt.Sprintf("ColumnValueFilter(%s:%s %s %q)", fam, qual, op, value), filter: must(f, err),
			rowFn: byCell(func(c *modelColumn, p *modelCell) bool {
				return c.fam == fam && c.qual == qual && (p.value == value) == (op == filter.CompareEqual)
			})}
	case 11:
		var ranges []filter.RowRange
		var descs []string
		for i := 0; i < 1+rng.IntN(3); i++ {
			lo, hi := rowOf(), rowOf()
			if lo > hi {
				lo, hi = hi, lo
			}
			r := filter.RowRange{StartRow: b(lo), StartRowInclusive: rng.IntN(2) == 0, StopRow: b(hi), StopRowInclusive: rng.IntN(2) == 0}
			if rng.IntN(6) == 0 {
				r.StartRow = nil
			}
			if rng.IntN(6) == 0 {
				r.StopRow = nil
			}
			if lo == hi {
				r.StopRowInclusive = true
			}
			ranges = append(ranges, r)
			descs = append(descs, fmt.Sprintf("%q%t-%q%t", r.StartRow, r.StartRowInclusive, r.StopRow, r.StopRowInclusive))
		}
		in := func(row string) bool {
			for _, r := range ranges {
				c := strings.Compare(row, string(r.StartRow))
				if c < 0 || (c == 0 && !r.StartRowInclusive) {
					continue
				}
				if len(r.StopRow) == 0 {
					return true
				}
				if c := strings.Compare(row, string(r.StopRow)); c < 0 || (c == 0 && r.StopRowInclusive) {
					return true
				}
			}
			return false
		}
		return filterCase{desc: "MultiRowRangeFilter" + fmt.Sprint(descs), filter: must(filter.NewMultiRowRangeFilter(ranges)), rowFn: byRow(in)}
	case 12:
		// Rows are "rNN": keys of up to three bytes, each free or fixed.
		var keys []filter.FuzzyKey
		var descs []string
		for i := 0; i < 1+rng.IntN(3); i++ {
			pattern := []byte(rowOf())[:1+rng.IntN(3)]
			key, mask := slices.Clone(pattern), make([]byte, len(pattern))
			for j := range mask {
				if rng.IntN(2) == 0 {
					mask[j], key[j] = 1, '?'
				}
			}
			keys = append(keys, filter.FuzzyKey{Key: key, Mask: mask})
			descs = append(descs, string(key))
		}
		return filterCase{desc: "FuzzyRowFilter" + fmt.Sprint(descs), filter: must(filter.NewFuzzyRowFilter(keys)),
			rowFn: byRow(func(row string) bool {
				for _, k := range keys {
					ok := true
					for j := range k.Key {
						if k.Mask[j] == 0 && (j >= len(row) || row[j] != k.Key[j]) {
							ok = false
						}
					}
					if ok {
						return true
					}
				}
				return false
			})}
	case 13:
		quals := map[string]bool{}
		var qs [][]byte
		for i := 0; i < 1+rng.IntN(2); i++ {
			q := qualOf()
			quals[q] = true
			qs = append(qs, b(q))
		}
		return filterCase{desc: fmt.Sprintf("FirstKeyValueMatchingQualifiersFilter%q", qs),
			filter: filter.NewFirstKeyValueMatchingQualifiersFilter(qs),
			rowFn: func(_ string, cols []modelColumn, maxVersions int) ([]*modelCell, bool) {
				var out []*modelCell
				for _, c := range cols {
					if quals[c.qual] {
						return append(out, c.versions[0]), false
					}
					out = append(out, c.versions[:min(len(c.versions), maxVersions)]...)
				}
				return out, false
			}}
	case 14:
		chance := []float32{-1, 0, 1, 2}[rng.IntN(4)]
		return filterCase{desc: fmt.Sprintf("RandomRowFilter(%v)", chance), filter: filter.NewRandomRowFilter(chance),
			rowFn: byRow(func(string) bool { return chance >= 1 })}
	case 15:
		// A list of two filters with hints: AND keeps what both keep.
		lo, loIn, hi, hiIn, in := qualRange()
		ts, tsIn := randomTimestamps()
		return filterCase{desc: fmt.Sprintf("AND(ColumnRangeFilter(%q,%t,%q,%t),TimestampsFilter%v)", lo, loIn, hi, hiIn, ts),
			filter: filter.NewFilterList(filter.MustPassAll,
				filter.NewColumnRangeFilter(optBytes(lo), loIn, optBytes(hi), hiIn), must(filter.NewTimestampsFilter(ts, false))),
			rowFn: byCell(func(c *modelColumn, p *modelCell) bool { return in(c.qual) && tsIn[p.ts] })}
	default:
		// OR keeps what either keeps.
		lo, loIn, hi, hiIn, in := qualRange()
		ts, tsIn := randomTimestamps()
		return filterCase{desc: fmt.Sprintf("OR(ColumnRangeFilter(%q,%t,%q,%t),TimestampsFilter%v)", lo, loIn, hi, hiIn, ts),
			filter: filter.NewFilterList(filter.MustPassOne,
				filter.NewColumnRangeFilter(optBytes(lo), loIn, optBytes(hi), hiIn), must(filter.NewTimestampsFilter(ts, false))),
			rowFn: byCell(func(c *modelColumn, p *modelCell) bool { return in(c.qual) || tsIn[p.ts] })}
	}
}

// columnCountGetCase is ColumnCountGetFilter, for Gets: the newest
// versions of the row's first n columns.
func columnCountGetCase(rng *rand.Rand) filterCase {
	n := rng.IntN(4)
	f, err := filter.NewColumnCountGetFilter(int32(n))
	if err != nil {
		panic(err)
	}
	return filterCase{desc: fmt.Sprintf("ColumnCountGetFilter(%d)", n), filter: f,
		rowFn: newestOfColumns(func(i int, _ *modelColumn) bool { return i < n })}
}

// readFiltered is read with a filter of the second set: the rows in scan
// order, each row's columns as the filter gets them, and fc's model.
func (m *regionModel) readFiltered(inRow func(string) bool, fams map[string]bool, maxVersions int, tr scanner.TimeRange,
	reversed bool, fc filterCase) map[string][]string {
	if tr == (scanner.TimeRange{}) {
		tr = scanner.AllTime
	}
	var rows []string
	for row := range m.byRow {
		if inRow(row) {
			rows = append(rows, row)
		}
	}
	sort.Strings(rows)
	if reversed {
		slices.Reverse(rows)
	}
	out := map[string][]string{}
	for _, row := range rows {
		puts := map[colKey][]*modelCell{}
		for _, c := range m.byRow[row] {
			if c.typ.IsDelete() || (fams != nil && !fams[c.fam]) {
				continue
			}
			k := colKey{c.row, c.fam, c.qual}
			puts[k] = append(puts[k], c)
		}
		var cols []modelColumn
		for k, ps := range puts {
			if vs := m.column(ps, tr, m.maxVersions[k.fam], allMarkers); len(vs) > 0 {
				cols = append(cols, modelColumn{fam: k.fam, qual: k.qual, versions: vs})
			}
		}
		if len(cols) == 0 {
			continue // no cell reaches the filter
		}
		sort.Slice(cols, func(i, j int) bool {
			if cols[i].fam != cols[j].fam {
				return cols[i].fam < cols[j].fam
			}
			return cols[i].qual < cols[j].qual
		})
		cells, stop := fc.rowFn(row, cols, max(maxVersions, 1))
		for _, p := range cells {
			out[row] = append(out[row], fmt.Sprintf("%s:%s@%d=%s", p.fam, p.qual, p.ts, p.value))
		}
		if stop {
			break
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// filterStats counts, per filter class, the model test's reads and those
// that returned cells, so that a model that expects nothing stands out.
type filterStats map[string][2]int

func (fs *filterStats) count(desc string, want map[string][]string) {
	if *fs == nil {
		*fs = filterStats{}
	}
	class := desc[:strings.IndexAny(desc+"(", "([")]
	c := (*fs)[class]
	c[0]++
	if len(want) > 0 {
		c[1]++
	}
	(*fs)[class] = c
}

func (fs filterStats) String() string {
	var parts []string
	for class, c := range fs {
		parts = append(parts, fmt.Sprintf("%s %d/%d", class, c[1], c[0]))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
