package region

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/scanner"
	"github.com/stretchr/testify/require"
)

// modelCell is one physical cell the model holds.
type modelCell struct {
	row, fam, qual string
	ts             int64
	typ            encoding.Type
	seq            int
	value          string
	// file is the store file (its path) the cell is in, "" while it is in
	// the memstore: compactions rewrite the cells of their input files.
	file string
	// own marks an upserted cell that joined a column of the memstore: one
	// that a later upsert may remove (see regionModel.upsert).
	own bool
}

// regionModel is the reference: every physical cell, and reads computed
// from HBase's rules directly. It mirrors the region's physical state, file
// by file, where HBase's semantics depend on it: a major compaction removes
// delete markers, what they mask and surplus versions from flushed cells,
// which changes what later reads see (HBase's "deletes mask puts until a
// major compaction"); flushes and minor compactions drop the versions their
// own cells hide, which later version deletes would otherwise show and reads
// with a time range would return; and flushes and major compactions drop
// expired versions beyond MIN_VERSIONS.
type regionModel struct {
	cells       []*modelCell
	seq         int
	maxVersions map[string]int
	// minVersions and ttl (milliseconds, 0 for none) are the families'
	// MIN_VERSIONS and TTL; now is the clock reads and rewrites judge TTL by.
	minVersions map[string]int
	ttl         map[string]int64
	now         func() int64
	// deletes indexes the delete markers by row and family, byRow every cell.
	deletes map[[2]string][]*modelCell
	byRow   map[string][]*modelCell
}

func (m *regionModel) add(c *modelCell) {
	m.cells = append(m.cells, c)
	if m.byRow == nil {
		m.byRow = map[string][]*modelCell{}
	}
	m.byRow[c.row] = append(m.byRow[c.row], c)
	if c.typ.IsDelete() {
		if m.deletes == nil {
			m.deletes = map[[2]string][]*modelCell{}
		}
		k := [2]string{c.row, c.fam}
		m.deletes[k] = append(m.deletes[k], c)
	}
}

// markerSet says which delete markers a masking check sees; nil is all.
type markerSet func(d *modelCell) bool

// Which delete markers a masking check sees.
var (
	allMarkers       markerSet                                         // a read
	fileMarkers      = func(d *modelCell) bool { return d.file != "" } // a major compaction: the markers in files
	unflushedMarkers = func(d *modelCell) bool { return d.file == "" } // a flush: the markers being flushed
)

// masked reports whether a delete marker of those markers sees hides p.
func (m *regionModel) masked(p *modelCell, markers markerSet) bool {
	for _, d := range m.deletes[[2]string{p.row, p.fam}] {
		if markers != nil && !markers(d) {
			continue
		}
		switch d.typ {
		case encoding.TypeDeleteFamily:
			if d.ts >= p.ts {
				return true
			}
		case encoding.TypeDeleteFamilyVersion:
			if d.ts == p.ts {
				return true
			}
		case encoding.TypeDeleteColumn:
			if d.qual == p.qual && d.ts >= p.ts {
				return true
			}
		case encoding.TypeDelete:
			if d.qual == p.qual && d.ts == p.ts {
				return true
			}
		}
	}
	return false
}

// expired reports whether c is past its family's TTL now.
func (m *regionModel) expired(c *modelCell) bool {
	ttl := m.ttl[c.fam]
	return ttl > 0 && c.ts < m.now()-ttl
}

// column returns the cells a read sees of one column: newest first, one
// per timestamp, not masked, within tr, at most n; of the expired, only
// those among the family's MIN_VERSIONS first counted (HBase's
// ScanWildcardColumnTracker), none without MIN_VERSIONS.
func (m *regionModel) column(puts []*modelCell, tr scanner.TimeRange, n int, markers markerSet) []*modelCell {
	return m.columnTTL(puts, tr, n, markers, true)
}

// columnTTL is column; without ttl, no version counts as expired.
func (m *regionModel) columnTTL(puts []*modelCell, tr scanner.TimeRange, n int, markers markerSet, ttl bool) []*modelCell {
	sort.Slice(puts, func(i, j int) bool {
		if puts[i].ts != puts[j].ts {
			return puts[i].ts > puts[j].ts
		}
		return puts[i].seq > puts[j].seq
	})
	var out []*modelCell
	lastTS := int64(-1)
	for _, p := range puts {
		minVersions := m.minVersions[p.fam]
		expired := ttl && m.expired(p)
		if expired && minVersions == 0 {
			break // so is every older version
		}
		if m.masked(p, markers) || p.ts == lastTS || !tr.Within(p.ts) {
			continue
		}
		lastTS = p.ts
		if len(out) == n || expired && len(out) >= minVersions {
			break
		}
		out = append(out, p)
	}
	return out
}

type colKey struct{ row, fam, qual string }

// modelFilter is the model's reading of the filters the test uses.
type modelFilter struct {
	rowPrefix string // PrefixFilter
	colPrefix string // ColumnPrefixFilter
	keyOnly   bool   // KeyOnlyFilter
	value     string // ValueFilter EQUAL, when set
	desc      string
	// columns, when set, are the only columns read ("family:qualifier"),
	// as a Get naming them.
	columns map[string]bool
}

// read returns, per row, the formatted cells a read sees.
func (m *regionModel) read(inRow func(string) bool, fams map[string]bool, maxVersions int, tr scanner.TimeRange, mf ...modelFilter) map[string][]string {
	var flt modelFilter
	if len(mf) > 0 {
		flt = mf[0]
	}
	if flt.rowPrefix != "" {
		in := inRow
		inRow = func(row string) bool { return strings.HasPrefix(row, flt.rowPrefix) && in(row) }
	}
	if tr == (scanner.TimeRange{}) {
		tr = scanner.AllTime
	}
	cols := map[colKey][]*modelCell{}
	for row, cells := range m.byRow {
		if !inRow(row) {
			continue
		}
		for _, c := range cells {
			if c.typ == encoding.TypePut && (fams == nil || fams[c.fam]) && strings.HasPrefix(c.qual, flt.colPrefix) &&
				(flt.columns == nil || flt.columns[c.fam+":"+c.qual]) {
				k := colKey{c.row, c.fam, c.qual}
				cols[k] = append(cols[k], c)
			}
		}
	}
	out := map[string][]string{}
	for k, puts := range cols {
		limit := min(max(maxVersions, 1), m.maxVersions[k.fam])
		after := limit
		if flt.value != "" {
			// A value filter sees the family's VERSIONS newest versions;
			// of those it keeps, the read's limit applies.
			limit = m.maxVersions[k.fam]
		}
		n := 0
		for _, p := range m.column(puts, tr, limit, allMarkers) {
			if flt.value != "" && p.value != flt.value {
				continue
			}
			if n == after {
				break
			}
			n++
			v := p.value
			if flt.keyOnly {
				v = ""
			}
			out[k.row] = append(out[k.row], fmt.Sprintf("%s:%s@%d=%s", p.fam, p.qual, p.ts, v))
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// flush writes the unflushed cells to files as the region's flush does:
// the delete markers (but the expired, without MIN_VERSIONS), and of the
// puts what a read of VERSIONS versions sees when only the flushed markers
// mask. files names each family's new file.
func (m *regionModel) flush(files map[string]string) {
	m.rewrite(func(c *modelCell) bool { return c.file == "" }, true, unflushedMarkers, true)
	for _, c := range m.cells {
		if c.file == "" {
			c.file = files[c.fam]
		}
	}
}

// majorCompactFamily keeps, of the flushed cells of fam, what a read of
// every version returns, in the file out; unflushed cells stay as they are.
func (m *regionModel) majorCompactFamily(fam, out string) {
	in := func(c *modelCell) bool { return c.file != "" && c.fam == fam }
	m.rewrite(in, false, fileMarkers, true)
	for _, c := range m.cells {
		if in(c) {
			c.file = out
		}
	}
}

// minorCompact rewrites the cells of fam's files inputs into out as the
// region's minor compaction does. With no version delete marker in any
// other file of fam: the markers (but the expired, without MIN_VERSIONS)
// and of the puts what a read of VERSIONS versions sees when only the
// inputs' markers mask, expired versions counting as any other with
// MIN_VERSIONS; otherwise every cell but the expired (without MIN_VERSIONS).
// It reports whether it dropped versions.
func (m *regionModel) minorCompact(fam string, inputs map[string]bool, out string) bool {
	in := func(c *modelCell) bool { return c.fam == fam && inputs[c.file] }
	drop := true
	for _, c := range m.cells {
		if c.fam == fam && c.file != "" && !inputs[c.file] && (c.typ == encoding.TypeDelete || c.typ == encoding.TypeDeleteFamilyVersion) {
			drop = false
		}
	}
	if drop {
		m.rewrite(in, true, in, m.minVersions[fam] == 0)
	} else if m.minVersions[fam] == 0 {
		var kept []*modelCell
		for _, c := range m.cells {
			if !in(c) || !m.expired(c) {
				kept = append(kept, c)
			}
		}
		m.cells, m.deletes, m.byRow = nil, nil, nil
		for _, c := range kept {
			m.add(c)
		}
	}
	for _, c := range m.cells {
		if in(c) {
			c.file = out
		}
	}
	return drop
}

// rewrite replaces the cells in for which in is true by what a read of
// VERSIONS versions of them returns when the given markers mask (and TTL
// expires, if ttl), and their delete markers if keepMarkers; other cells
// stay.
func (m *regionModel) rewrite(in func(*modelCell) bool, keepMarkers bool, markers markerSet, ttl bool) {
	cols := map[colKey][]*modelCell{}
	var kept []*modelCell
	for _, c := range m.cells {
		switch {
		case !in(c) || (keepMarkers && c.typ.IsDelete() && (m.minVersions[c.fam] > 0 || !m.expired(c))):
			kept = append(kept, c)
		case c.typ == encoding.TypePut:
			k := colKey{c.row, c.fam, c.qual}
			cols[k] = append(cols[k], c)
		}
	}
	for k, puts := range cols {
		kept = append(kept, m.columnTTL(puts, scanner.AllTime, m.maxVersions[k.fam], markers, ttl)...)
	}
	// Masking is judged against the old cells, so swap only at the end.
	m.cells, m.deletes, m.byRow = nil, nil, nil
	for _, c := range kept {
		m.add(c)
	}
}

// upsert mirrors the memstore's upsert of c, an Increment's cell just
// added, in a family of one version (memstore.Segment.Upsert): c is its own
// cell unless it started the column in the memstore; then of the column's
// memstore cells in version order, the own puts after the newest put other
// than c are removed, up to the first put that is not own, in a walk of at
// most 64 cells. No read is in progress (the model's scans end before the
// next operation), and every other cell was visible before c.
func (m *regionModel) upsert(c *modelCell) {
	if m.maxVersions[c.fam] != 1 {
		return
	}
	var col []*modelCell
	for _, x := range m.byRow[c.row] {
		if x.file == "" && x.fam == c.fam && x.qual == c.qual {
			col = append(col, x)
		}
	}
	if len(col) == 1 {
		return // c started the column
	}
	c.own = true
	sort.Slice(col, func(i, j int) bool {
		a, b := col[i], col[j]
		if a.ts != b.ts {
			return a.ts > b.ts
		}
		if a.typ != b.typ {
			return a.typ > b.typ
		}
		return a.seq > b.seq
	})
	gone := map[*modelCell]bool{}
	shield := false
	for steps, x := range col {
		if steps == 64 {
			break
		}
		if x == c || x.typ != encoding.TypePut {
			continue
		}
		if !shield {
			shield = true
			continue
		}
		if !x.own {
			break
		}
		gone[x] = true
	}
	if len(gone) == 0 {
		return
	}
	kept := m.cells
	m.cells, m.deletes, m.byRow = nil, nil, nil
	for _, x := range kept {
		if !gone[x] {
			m.add(x)
		}
	}
}

// storeFiles returns each family's store files (paths).
func storeFiles(r *Region) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, st := range r.storeSet().stores {
		out[st.name] = map[string]bool{}
		for _, f := range st.Files() {
			out[st.name][f.Path] = true
		}
	}
	return out
}

// filesChange returns, per family, the files in before and not after and
// the one file in after and not before ("" if none).
func filesChange(before, after map[string]map[string]bool) (gone map[string]map[string]bool, added map[string]string) {
	gone, added = map[string]map[string]bool{}, map[string]string{}
	for fam, files := range after {
		for p := range before[fam] {
			if !files[p] {
				if gone[fam] == nil {
					gone[fam] = map[string]bool{}
				}
				gone[fam][p] = true
			}
		}
		for p := range files {
			if !before[fam][p] {
				added[fam] = p
			}
		}
	}
	return gone, added
}

func formatResult(cells []*encoding.KeyValue) map[string][]string {
	out := map[string][]string{}
	for _, c := range cells {
		out[string(c.Row)] = append(out[string(c.Row)], fmt.Sprintf("%s:%s@%d=%s", c.Family, c.Qualifier, c.Timestamp, c.Value))
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// TestRandomizedAgainstModel runs a long random sequence of puts, deletes
// of every kind, gets, forward and reverse scans, flushes, compactions and
// reopens (clean and crash-like) against the region and the model. Replay a
// failure with REGIONKV_MODEL_SEED; REGIONKV_MODEL_OPS sets the length.
func TestRandomizedAgainstModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("REGIONKV_MODEL_SEED"), 10, 64); err == nil {
		seed = v
	}
	ops := 100_000
	if testing.Short() {
		ops = 10_000 // the race detector run; the full run does 100,000
	}
	if v, err := strconv.Atoi(os.Getenv("REGIONKV_MODEL_OPS")); err == nil && v > 0 {
		ops = v
	}
	t.Logf("seed %d, %d operations (REGIONKV_MODEL_SEED=%d to replay)", seed, ops, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	clock := int64(1000)
	// Families t and m have a TTL of about two writes of a column, and m
	// MIN_VERSIONS: puts at the explicit timestamps (1..20) are always
	// expired there, those at the clock's time for a while. h gets only
	// the markers of whole-row deletes.
	opts := Options{
		Families: []FamilyOptions{{Name: "f", MaxVersions: 3, Encoding: encoding.EncodingPrefix},
			{Name: "g", MaxVersions: 1, Encoding: encoding.EncodingFastDiff, BlockSize: 512},
			{Name: "h", MaxVersions: 2, Encoding: encoding.EncodingRowIndexV1, BlockSize: 256},
			{Name: "t", MaxVersions: 2, TTL: 1500 * time.Millisecond, Encoding: encoding.EncodingPrefix},
			{Name: "m", MaxVersions: 4, MinVersions: 2, TTL: 2 * time.Second, Encoding: encoding.EncodingFastDiff, BlockSize: 512}},
		FlushSize: 1 << 40, DisableAutoCompaction: true,
		Now: func() time.Time { return time.UnixMilli(clock) },
	}
	// Semantics, not durability, are under test: on tmpfs the many flushes'
	// fsyncs cost nothing.
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "regionkv-model-"); err == nil {
		dir = d
		defer os.RemoveAll(d)
	}
	r, err := Open(dir, opts)
	require.NoError(t, err)
	defer func() { r.Close() }()
	m := &regionModel{maxVersions: map[string]int{"f": 3, "g": 1, "h": 2, "t": 2, "m": 4},
		minVersions: map[string]int{"m": 2}, ttl: map[string]int64{"t": 1500, "m": 2000},
		now: func() int64 { return clock }}

	famNames := []string{"f", "g", "h", "t", "m"}
	// The families puts and deletes of one family write.
	written := []string{"f", "g", "t", "m"}
	rowOf := func() string { return fmt.Sprintf("r%02d", rng.IntN(40)) }
	qualOf := func() string { return string(rune('a' + rng.IntN(4))) }
	tsOf := func() int64 {
		if rng.IntN(4) == 0 {
			return encoding.LatestTimestamp
		}
		return int64(1 + rng.IntN(20))
	}
	var history []string
	var lastInc [3]string          // row, family and qualifier of the last increment
	var minors, minorsDropping int // minor compactions of a store, and those that dropped versions
	defer func() { t.Logf("minor compactions: %d, %d of them dropping versions", minors, minorsDropping) }()
	var filterReads filterStats
	defer func() { t.Logf("filtered reads (of the second set): %s", filterReads) }()
	fail := func(format string, args ...any) {
		t.Helper()
		start := max(0, len(history)-15)
		t.Fatalf("seed %d, op %d: %s\nlast operations:\n  %s", seed, len(history), fmt.Sprintf(format, args...),
			strings.Join(history[start:], "\n  "))
	}
	check := func(what string, got, want map[string][]string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			var diff []string
			for row := range want {
				if fmt.Sprint(got[row]) != fmt.Sprint(want[row]) {
					diff = append(diff, row)
				}
			}
			for row := range got {
				if _, ok := want[row]; !ok {
					diff = append(diff, row)
				}
			}
			var detail []string
			for _, row := range diff {
				detail = append(detail, fmt.Sprintf("row %s: got %v want %v", row, got[row], want[row]))
				for _, c := range m.byRow[row] {
					{
						detail = append(detail, fmt.Sprintf("    model cell %s:%s@%d %s seq=%d %s file=%s", c.fam, c.qual, c.ts, c.typ, c.seq, c.value, filepath.Base(c.file)))
					}
				}
			}
			for _, row := range diff {
				for _, st := range r.storeSet().stores {
					for _, f := range st.Files() {
						it := f.Reader.NewIterator(false)
						var kv encoding.KeyValue
						for ok, err := it.First(); ok && err == nil; ok, err = it.Next() {
							it.KeyValue(&kv)
							if string(kv.Row) == row {
								detail = append(detail, fmt.Sprintf("    file %s cell %s seq=%d v=%s", filepath.Base(f.Path)[:6], kv.String(), kv.SeqNum, kv.Value))
							}
						}
					}
					for _, ms := range st.mem.Scanners(1 << 62) {
						for kv := ms.SeekToFirst(); kv != nil; kv = ms.Next() {
							if string(kv.Row) == row {
								detail = append(detail, fmt.Sprintf("    mem cell %s seq=%d v=%s", kv.String(), kv.SeqNum, kv.Value))
							}
						}
						ms.Close()
					}
				}
			}
			fail("%s differs:\n%s", what, strings.Join(detail, "\n"))
		}
	}
	for i := 0; i < ops; i++ {
		clock++
		op := rng.IntN(100)
		switch {
		case op < 35: // put
			row, f := rowOf(), written[rng.IntN(len(written))]
			p := NewPut(b(row))
			n := 1 + rng.IntN(3)
			// Sometimes several versions of one column at once, so that
			// flushes see more versions of a column than VERSIONS or
			// MIN_VERSIONS keep.
			burst := ""
			if rng.IntN(4) == 0 {
				n, burst = 3+rng.IntN(3), qualOf()
			}
			for j := 0; j < n; j++ {
				q, ts := qualOf(), tsOf()
				if burst != "" {
					q = burst
				}
				v := fmt.Sprintf("v%d", i)
				if rng.IntN(10) == 0 {
					// A counter the increments below read, set at an
					// explicit time, past or future: a store file may then
					// hold a newer version of it than the memstore.
					q, v = "z", string(binary.BigEndian.AppendUint64(nil, uint64(rng.IntN(1000))))
					if rng.IntN(2) == 0 {
						ts = clock + int64(rng.IntN(100))
					}
				}
				p.AddAt(b(f), b(q), ts, b(v))
				if ts == encoding.LatestTimestamp {
					ts = clock
				}
				m.seq++
				m.add(&modelCell{row: row, fam: f, qual: q, ts: ts, typ: encoding.TypePut, seq: m.seq, value: v})
			}
			history = append(history, fmt.Sprintf("put %s %v", row, p.Cells))
			if err := r.Put(p); err != nil {
				fail("put: %v", err)
			}
		case op < 50: // delete, one of five kinds
			row, f, q := rowOf(), written[rng.IntN(len(written))], qualOf()
			if rng.IntN(5) == 0 {
				q = "z" // the increments' counter
			}
			ts := tsOf()
			d := NewDelete(b(row))
			var cells []*modelCell
			m.seq++
			switch k := rng.IntN(5); k {
			case 0: // the whole row
				for _, fn := range famNames {
					cells = append(cells, &modelCell{row: row, fam: fn, ts: clock, typ: encoding.TypeDeleteFamily, seq: m.seq})
				}
			case 1:
				d.AddFamily(b(f), ts)
				cells = append(cells, &modelCell{row: row, fam: f, ts: orNow(ts, clock), typ: encoding.TypeDeleteFamily, seq: m.seq})
			case 2:
				if ts == encoding.LatestTimestamp {
					ts = int64(1 + rng.IntN(20))
				}
				d.AddFamilyVersion(b(f), ts)
				cells = append(cells, &modelCell{row: row, fam: f, ts: ts, typ: encoding.TypeDeleteFamilyVersion, seq: m.seq})
			case 3:
				d.AddColumns(b(f), b(q), ts)
				cells = append(cells, &modelCell{row: row, fam: f, qual: q, ts: orNow(ts, clock), typ: encoding.TypeDeleteColumn, seq: m.seq})
			case 4:
				d.AddColumn(b(f), b(q), ts)
				mts := ts
				if ts == encoding.LatestTimestamp {
					// "The latest version": the newest visible cell's timestamp, else now.
					mts = clock
					vis := m.read(func(s string) bool { return s == row }, map[string]bool{f: true}, 1, scanner.AllTime)[row]
					for _, c := range vis {
						if strings.HasPrefix(c, f+":"+q+"@") {
							mts, _ = strconv.ParseInt(strings.SplitN(strings.TrimPrefix(c, f+":"+q+"@"), "=", 2)[0], 10, 64)
						}
					}
				}
				cells = append(cells, &modelCell{row: row, fam: f, qual: q, ts: mts, typ: encoding.TypeDelete, seq: m.seq})
			}
			for _, c := range cells {
				m.add(c)
			}
			history = append(history, fmt.Sprintf("delete %s %v", row, d.Cells))
			if err := r.Delete(d); err != nil {
				fail("delete: %v", err)
			}
		case op < 67: // get
			row := rowOf()
			g := &Get{Row: b(row), MaxVersions: 1 + rng.IntN(4)}
			fams := map[string]bool(nil)
			var mf modelFilter
			switch rng.IntN(4) {
			case 0:
				f := written[rng.IntN(len(written))]
				g.AddFamily(b(f))
				fams = map[string]bool{f: true}
			case 1: // one or two columns of one family
				f := written[rng.IntN(len(written))]
				fams, mf.columns = map[string]bool{f: true}, map[string]bool{}
				for j := 0; j < 1+rng.IntN(2); j++ {
					q := qualOf()
					g.AddColumn(b(f), b(q))
					mf.columns[f+":"+q] = true
				}
			}
			if rng.IntN(4) == 0 {
				lo := int64(rng.IntN(15))
				g.TimeRange = scanner.TimeRange{Min: lo, Max: lo + 1 + int64(rng.IntN(10))}
			}
			var fc *filterCase
			if mf.columns == nil { // the filter models read whole families
				switch rng.IntN(8) {
				case 0:
					c := randomFilterCase(rng, rowOf, qualOf, fmt.Sprintf("v%d", max(0, i-rng.IntN(200))), false)
					fc = &c
				case 1:
					c := columnCountGetCase(rng)
					fc = &c
				}
			}
			desc := ""
			if fc != nil {
				g.Filter, desc = fc.filter, " filter="+fc.desc
			}
			history = append(history, fmt.Sprintf("get %s versions=%d tr=%v fams=%v cols=%v%s", row, g.MaxVersions, g.TimeRange, fams, mf.columns, desc))
			res, err := r.Get(g)
			if err != nil {
				fail("get: %v", err)
			}
			inRow := func(s string) bool { return s == row }
			if fc != nil {
				want := m.readFiltered(inRow, fams, g.MaxVersions, g.TimeRange, false, *fc)
				filterReads.count(fc.desc, want)
				check("get "+row+desc, formatResult(res.Cells), want)
				break
			}
			check("get "+row, formatResult(res.Cells), m.read(inRow, fams, g.MaxVersions, g.TimeRange, mf))
		case op < 70: // increment a counter, or a column puts wrote (not a counter: refused)
			row, f := rowOf(), written[rng.IntN(len(written))]
			q := "z"
			if rng.IntN(3) == 0 {
				q = qualOf()
			}
			if lastInc[0] != "" && rng.IntN(2) == 0 {
				// Again the last one: a counter the memstore holds, which
				// the increment reads from the memstore alone when no
				// store file can hold a newer version.
				row, f, q = lastInc[0], lastInc[1], lastInc[2]
			}
			lastInc = [3]string{row, f, q}
			// A few at once, as a counter is used: the first leaves the
			// counter in the memstore for the others.
			for range 1 + rng.IntN(3) {
				amount := int64(1 + rng.IntN(5))
				var old []byte
				oldTS, hasOld := int64(0), false
				prefix := f + ":" + q + "@"
				for _, c := range m.read(func(s string) bool { return s == row }, map[string]bool{f: true}, 1, scanner.AllTime,
					modelFilter{columns: map[string]bool{f + ":" + q: true}})[row] {
					if rest, ok := strings.CutPrefix(c, prefix); ok {
						tsStr, v, _ := strings.Cut(rest, "=")
						oldTS, _ = strconv.ParseInt(tsStr, 10, 64)
						old, hasOld = []byte(v), true
					}
				}
				history = append(history, fmt.Sprintf("increment %s %s:%s by %d (model: %q@%d)", row, f, q, amount, old, oldTS))
				res, err := r.Increment(&Increment{Row: b(row), Columns: []IncrementColumn{{Family: b(f), Qualifier: b(q), Amount: amount}}})
				if hasOld && len(old) != 8 {
					if err == nil {
						fail("increment of %s:%s over %q: no error", f, q, old)
					}
					break // the others would be refused too
				}
				if err != nil {
					fail("increment: %v", err)
				}
				want := amount
				ts := clock
				if hasOld {
					want += int64(binary.BigEndian.Uint64(old))
					if oldTS >= ts {
						ts = oldTS + 1
					}
				}
				v := string(binary.BigEndian.AppendUint64(nil, uint64(want)))
				if got := res.Latest(b(f), b(q)); got == nil || string(got.Value) != v || got.Timestamp != ts {
					fail("increment of %s:%s returned %v, want %d at %d", f, q, got, want, ts)
				}
				m.seq++
				c := &modelCell{row: row, fam: f, qual: q, ts: ts, typ: encoding.TypePut, seq: m.seq, value: v}
				m.add(c)
				m.upsert(c)
				clock++
			}
		case op < 85: // scan, forward or reversed, with random bounds
			s := &Scan{Reversed: rng.IntN(2) == 0, MaxVersions: 1 + rng.IntN(3)}
			if rng.IntN(3) > 0 {
				s.StartRow = b(rowOf())
				s.StartExclusive = rng.IntN(2) == 0
			}
			if rng.IntN(3) > 0 {
				s.StopRow = b(rowOf())
				s.StopInclusive = rng.IntN(2) == 0
			}
			in := func(row string) bool {
				if s.StartRow != nil {
					c := strings.Compare(row, string(s.StartRow))
					if s.Reversed {
						c = -c
					}
					if c < 0 || (c == 0 && s.StartExclusive) {
						return false
					}
				}
				if s.StopRow != nil {
					c := strings.Compare(row, string(s.StopRow))
					if s.Reversed {
						c = -c
					}
					if c > 0 || (c == 0 && !s.StopInclusive) {
						return false
					}
				}
				return true
			}
			var mf modelFilter
			var fc *filterCase
			switch rng.IntN(8) {
			case 4, 5:
				// One of the second set of filters, with a value some recent
				// put wrote.
				c := randomFilterCase(rng, rowOf, qualOf, fmt.Sprintf("v%d", max(0, i-rng.IntN(200))), s.Reversed)
				fc = &c
				s.Filter, mf.desc = c.filter, c.desc
			case 0:
				mf.rowPrefix = fmt.Sprintf("r%d", rng.IntN(4))
				s.Filter = filter.NewPrefixFilter(b(mf.rowPrefix))
			case 1:
				mf.colPrefix = qualOf()
				s.Filter = filter.NewColumnPrefixFilter(b(mf.colPrefix))
			case 2:
				mf.keyOnly = true
				s.Filter = filter.NewKeyOnlyFilter(false)
			case 3:
				// A value some recent put wrote.
				mf.value = fmt.Sprintf("v%d", max(0, i-rng.IntN(200)))
				s.Filter = filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator(b(mf.value)))
			}
			if s.Filter != nil && fc == nil {
				mf.desc = fmt.Sprintf("%T%+v", s.Filter, mf)
			}
			history = append(history, fmt.Sprintf("scan %+v filter=%s", *s, mf.desc))
			sc, err := r.NewScanner(s)
			if err != nil {
				fail("scan: %v", err)
			}
			var cells []*encoding.KeyValue
			var order []string
			for {
				res, err := sc.Next()
				if err != nil {
					fail("scan next: %v", err)
				}
				if res == nil {
					break
				}
				cells = append(cells, res.Cells...)
				order = append(order, string(res.Cells[0].Row))
			}
			sc.Close()
			for j := 1; j < len(order); j++ {
				if (order[j] < order[j-1]) != s.Reversed {
					fail("scan order: %v", order)
				}
			}
			if fc != nil {
				want := m.readFiltered(in, nil, s.MaxVersions, scanner.AllTime, s.Reversed, *fc)
				filterReads.count(fc.desc, want)
				check("scan", formatResult(cells), want)
				break
			}
			check("scan", formatResult(cells), m.read(in, nil, s.MaxVersions, scanner.AllTime, mf))
		case op < 92:
			history = append(history, "flush")
			before := storeFiles(r)
			if err := r.Flush(); err != nil {
				fail("flush: %v", err)
			}
			_, added := filesChange(before, storeFiles(r))
			m.flush(added)
		case op < 95 && rng.IntN(3) == 0:
			// A minor compaction of a random run of one store's files, as
			// the exploring policy picks for stores bigger than this one.
			st := r.storeSet().stores[rng.IntN(len(r.storeSet().stores))]
			st.compactMu.Lock()
			files := st.Files()
			if len(files) == 0 {
				st.compactMu.Unlock()
				break
			}
			start := rng.IntN(len(files))
			end := start + 1 + rng.IntN(len(files)-start)
			history = append(history, fmt.Sprintf("minor compaction of %s files [%d, %d) of %d", st.name, start, end, len(files)))
			before := storeFiles(r)
			_, _, err := st.compact(r.bgCtx, files[start:end], false, filepath.Join(r.dir, ".tmp"), r.now(), &throttle{})
			st.compactMu.Unlock()
			if err != nil {
				fail("minor compaction: %v", err)
			}
			gone, added := filesChange(before, storeFiles(r))
			minors++
			if m.minorCompact(st.name, gone[st.name], added[st.name]) {
				minorsDropping++
			}
		case op < 95:
			major := rng.IntN(2) == 0
			history = append(history, fmt.Sprintf("compact major=%t", major))
			majors := map[string]int64{}
			for _, st := range r.storeSet().stores {
				majors[st.name] = st.majors.Load()
			}
			before := storeFiles(r)
			if err := r.Compact(major); err != nil {
				fail("compact: %v", err)
			}
			gone, added := filesChange(before, storeFiles(r))
			for _, st := range r.storeSet().stores {
				switch {
				case st.majors.Load() != majors[st.name]:
					// Also a minor pick of every file of a store.
					history = append(history, "  (major: "+st.name+")")
					m.majorCompactFamily(st.name, added[st.name])
				case len(gone[st.name]) > 0:
					history = append(history, fmt.Sprintf("  (minor: %s, %d files)", st.name, len(gone[st.name])))
					minors++
					if m.minorCompact(st.name, gone[st.name], added[st.name]) {
						minorsDropping++
					}
				}
			}
		case op < 97: // clean reopen: Close flushes
			history = append(history, "reopen")
			before := storeFiles(r)
			if err := r.Close(); err != nil {
				fail("close: %v", err)
			}
			if r, err = Open(dir, opts); err != nil {
				fail("reopen: %v", err)
			}
			_, added := filesChange(before, storeFiles(r))
			m.flush(added)
		default: // crash-like reopen: nothing flushed, the WAL brings it back
			history = append(history, "crash-reopen")
			r.closed.Store(true)
			r.bgCancel()
			close(r.stop)
			<-r.bgDone
			<-r.compactDone
			r.wal.Close()
			r.closeStores()
			r.lock.Close()
			if r, err = Open(dir, opts); err != nil {
				fail("reopen after crash: %v", err)
			}
		}
	}
}

func orNow(ts, now int64) int64 {
	if ts == encoding.LatestTimestamp {
		return now
	}
	return ts
}
