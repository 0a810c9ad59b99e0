package scanner

import (
	"bytes"
	"math"
	"slices"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
)

// MatchCode tells the StoreScanner what to do with a cell: HBase's
// ScanQueryMatcher.MatchCode.
type MatchCode uint8

// Match codes.
const (
	MatchInclude MatchCode = iota
	MatchIncludeAndSeekNextCol
	MatchIncludeAndSeekNextRow
	MatchSkip
	MatchSeekNextCol
	MatchSeekNextRow
	MatchSeekToColumnHint  // seek to the next wanted column (explicit columns)
	MatchSeekNextUsingHint // seek to the filter's NextCellHint
	MatchDone              // past the scan's stop row, or the filter is done
)

// TimeRange is HBase's TimeRange: [Min, Max).
type TimeRange struct {
	Min, Max int64
}

// AllTime covers every timestamp.
var AllTime = TimeRange{Min: 0, Max: math.MaxInt64}

// compare returns 0 if ts is within the range, 1 if it is too new, -1 if too old.
func (tr TimeRange) compare(ts int64) int {
	if ts >= tr.Max {
		return 1
	}
	if ts < tr.Min {
		return -1
	}
	return 0
}

// Within reports whether ts is in the range.
func (tr TimeRange) Within(ts int64) bool { return tr.compare(ts) == 0 }

// QueryOptions are the parts of a read that decide which cells match.
type QueryOptions struct {
	// MaxVersions is the number of versions per column to return (the lower
	// of the family's VERSIONS and the query's); <= 0 means 1.
	MaxVersions int
	// TimeRange restricts timestamps; the zero value means all time.
	TimeRange TimeRange
	// TTLMillis is the family's time to live; <= 0 means forever.
	TTLMillis int64
	// NowMillis is "now" for TTL: the family's, and a cell's own TTL tag.
	NowMillis int64
	// Clock, if set, gives NowMillis instead, read once when a TTL first
	// needs it: most reads have none, and reading the clock is a few
	// percent of a Get on cached blocks.
	Clock func() int64
	// Columns, if not empty, restricts the read to these qualifiers.
	Columns [][]byte
	// StartRow is where the scan starts (inclusive unless StartExclusive);
	// nil means the first row (the last, reversed).
	StartRow       []byte
	StartExclusive bool
	// StopRow ends the scan (exclusive unless StopInclusive); nil means none.
	StopRow       []byte
	StopInclusive bool
	// Reversed scans rows from the last to the first.
	Reversed bool
	// ReuseCells lets the StoreScanner reuse the memory of the cells it
	// returns: they are then valid only until its next call.
	ReuseCells bool
	// Filter, if set, sees every cell that passes the other checks, as in
	// HBase's UserScanQueryMatcher; it is shared by the read's stores.
	Filter filter.Filter
	// FamilyMaxVersions is the family's VERSIONS: with a filter, versions
	// are counted against it before the filter sees them.
	FamilyMaxVersions int
	// MinVersions is the family's MIN_VERSIONS: a version past the TTL
	// still matches if it is among the first MinVersions versions of its
	// column that are counted (not deleted, within TimeRange), as HBase's
	// ScanWildcardColumnTracker decides. With 0, every expired cell is
	// skipped, and so is the rest of its column.
	MinVersions int
}

// QueryMatcher decides, cell by cell, what a user read sees: HBase's
// UserScanQueryMatcher with its ScanDeleteTracker and column trackers. Cells
// must arrive in store order, row by row.
type QueryMatcher struct {
	cmp  *encoding.Comparer
	opts QueryOptions
	// oldestTS is the oldest timestamp TTL lets live.
	oldestTS int64
	// clocked says opts.NowMillis has been read from opts.Clock.
	clocked bool

	row []byte
	// Row-wide deletes.
	familyStamp    int64
	hasFamilyStamp bool
	familyVersions []int64
	// Deletes and version count of the current column.
	col            []byte
	colStarted     bool
	colDeleteStamp int64
	hasColDelete   bool
	versionDeletes []int64
	versions       int
	included       int   // versions the filter let through
	lastTS         int64 // timestamp of the last counted version
	// Explicit columns: index of the next wanted column.
	colIdx int
	err    error
	// colsBuf holds a sorted copy of the columns when they came unsorted.
	colsBuf [][]byte
}

// NewQueryMatcher returns a matcher for opts.
func NewQueryMatcher(cmp *encoding.Comparer, opts QueryOptions) *QueryMatcher {
	m := &QueryMatcher{}
	m.reset(cmp, opts)
	return m
}

// reset makes m a new matcher for opts, reusing its memory.
func (m *QueryMatcher) reset(cmp *encoding.Comparer, opts QueryOptions) {
	if opts.MaxVersions <= 0 {
		opts.MaxVersions = 1
	}
	if opts.TimeRange == (TimeRange{}) {
		opts.TimeRange = AllTime
	}
	cols := m.colsBuf[:0]
	if len(opts.Columns) > 1 && !slices.IsSortedFunc(opts.Columns, bytes.Compare) {
		cols = append(cols, opts.Columns...)
		slices.SortFunc(cols, bytes.Compare)
		opts.Columns = cols
	}
	*m = QueryMatcher{cmp: cmp, opts: opts, oldestTS: math.MinInt64, colsBuf: cols,
		row: m.row[:0], col: m.col[:0], familyVersions: m.familyVersions[:0], versionDeletes: m.versionDeletes[:0]}
	if opts.TTLMillis > 0 {
		m.oldestTS = m.now() - opts.TTLMillis
	}
}

// now returns opts.NowMillis, read from opts.Clock the first time.
func (m *QueryMatcher) now() int64 {
	if m.opts.Clock != nil && !m.clocked {
		m.opts.NowMillis, m.clocked = m.opts.Clock(), true
	}
	return m.opts.NowMillis
}

// SetRow starts a new row.
func (m *QueryMatcher) SetRow(row []byte) {
	m.row = append(m.row[:0], row...)
	m.hasFamilyStamp = false
	m.familyVersions = m.familyVersions[:0]
	m.colStarted = false
	m.colIdx = 0
}

// Row returns the current row.
func (m *QueryMatcher) Row() []byte { return m.row }

// NextColumnHint returns the next wanted qualifier after MatchSeekToColumnHint.
func (m *QueryMatcher) NextColumnHint() []byte { return m.opts.Columns[m.colIdx] }

// PastStop reports whether row is beyond the scan's stop row.
func (m *QueryMatcher) PastStop(row []byte) bool {
	if m.opts.StopRow == nil {
		return false
	}
	c := m.cmp.CompareRows(row, m.opts.StopRow)
	if m.opts.Reversed {
		c = -c
	}
	return c > 0 || (c == 0 && !m.opts.StopInclusive)
}

// AtLastRow reports whether the current row is the scan's inclusive stop
// row, after which nothing can match: a Get's row.
func (m *QueryMatcher) AtLastRow() bool {
	return m.opts.StopRow != nil && m.opts.StopInclusive && m.cmp.CompareRows(m.row, m.opts.StopRow) == 0
}

// Match classifies kv, which belongs to the current row.
func (m *QueryMatcher) Match(kv *encoding.KeyValue) MatchCode {
	expired := kv.Timestamp < m.oldestTS
	if expired && m.opts.MinVersions <= 0 {
		// Expired, and so is every older version of this column. (With
		// MIN_VERSIONS the versions are counted first: below.)
		return m.nextColumnOrRow(kv)
	}
	if len(kv.Tags) > 0 && kv.Expired(math.MinInt64, m.now()) {
		// This cell's own TTL has passed; older ones may live. MIN_VERSIONS
		// does not keep it: HBase checks the tag before counting versions.
		return MatchSkip
	}
	if !m.colStarted || !bytes.Equal(kv.Qualifier, m.col) {
		m.startColumn(kv.Qualifier)
	}
	if kv.Type.IsDelete() {
		m.trackDelete(kv)
		return MatchSkip
	}
	if m.isDeleted(kv) {
		if m.hasColDelete && kv.Timestamp <= m.colDeleteStamp ||
			m.hasFamilyStamp && kv.Timestamp <= m.familyStamp {
			// Every older version is deleted too.
			return m.nextColumnOrRow(kv)
		}
		return MatchSkip
	}
	switch m.opts.TimeRange.compare(kv.Timestamp) {
	case 1:
		return MatchSkip
	case -1:
		return m.nextColumnOrRow(kv)
	}
	if cols := m.opts.Columns; len(cols) > 0 {
		for m.colIdx < len(cols) && bytes.Compare(cols[m.colIdx], kv.Qualifier) < 0 {
			m.colIdx++
		}
		if m.colIdx == len(cols) {
			return MatchSeekNextRow
		}
		if !bytes.Equal(cols[m.colIdx], kv.Qualifier) {
			return MatchSeekToColumnHint
		}
	}
	// Cells differing only in sequence id are one version: the newest wins.
	if m.versions > 0 && kv.Timestamp == m.lastTS {
		return MatchSkip
	}
	// Versions are counted before the filter, against the family's VERSIONS
	// when there is a filter (HBase's UserScanQueryMatcher); the filter's
	// survivors are then counted against the read's limit.
	limit := m.opts.MaxVersions
	f := m.opts.Filter
	if f != nil {
		limit = max(limit, m.opts.FamilyMaxVersions)
	}
	m.lastTS = kv.Timestamp
	m.versions++
	code := MatchInclude
	switch {
	case m.versions > limit:
		return m.nextColumnOrRow(kv)
	case expired && m.versions > m.opts.MinVersions:
		// Past the TTL and not among the MIN_VERSIONS newest: neither is
		// any older version.
		return m.nextColumnOrRow(kv)
	case m.versions == limit:
		code = MatchIncludeAndSeekNextCol
		if len(m.opts.Columns) > 0 && m.colIdx == len(m.opts.Columns)-1 {
			code = MatchIncludeAndSeekNextRow
		}
	}
	if f == nil {
		return code
	}
	if f.FilterAllRemaining() {
		return MatchDone
	}
	rc, err := f.FilterCell(kv)
	if err != nil {
		m.err = err
		return MatchDone
	}
	// HBase's mergeFilterResponse.
	switch rc {
	case filter.FilterSkip:
		switch code {
		case MatchInclude:
			return MatchSkip
		case MatchIncludeAndSeekNextCol:
			return MatchSeekNextCol
		}
		return MatchSeekNextRow
	case filter.FilterNextCol:
		if code == MatchIncludeAndSeekNextRow {
			return MatchSeekNextRow
		}
		return m.nextColumnOrRow(kv)
	case filter.FilterNextRow:
		return MatchSeekNextRow
	case filter.FilterSeekNextUsingHint:
		return MatchSeekNextUsingHint
	case filter.FilterIncludeAndNextCol:
		if code == MatchInclude {
			code = MatchIncludeAndSeekNextCol
		}
	case filter.FilterIncludeAndSeekNextRow:
		code = MatchIncludeAndSeekNextRow
	}
	m.included++
	if m.included > m.opts.MaxVersions {
		if code == MatchIncludeAndSeekNextRow {
			return MatchSeekNextRow
		}
		return MatchSeekNextCol
	}
	return code
}

// Err returns the error a filter returned, which ended the match with
// MatchDone.
func (m *QueryMatcher) Err() error { return m.err }

// nextColumnOrRow skips the rest of kv's column: to the next wanted column
// when the read names columns, to the next row after the last of them.
func (m *QueryMatcher) nextColumnOrRow(kv *encoding.KeyValue) MatchCode {
	cols := m.opts.Columns
	if len(cols) == 0 {
		return MatchSeekNextCol
	}
	for m.colIdx < len(cols) && bytes.Compare(cols[m.colIdx], kv.Qualifier) < 0 {
		m.colIdx++
	}
	switch {
	case m.colIdx == len(cols):
		return MatchSeekNextRow
	case !bytes.Equal(cols[m.colIdx], kv.Qualifier):
		return MatchSeekToColumnHint
	case m.colIdx == len(cols)-1:
		return MatchSeekNextRow
	}
	return MatchSeekNextCol
}

// plain reports whether the read takes the newest version of every column
// and nothing else decides: one version, all time, no TTL, no column list,
// no filter. (Deletes and per-cell TTL tags still need Match.)
func (m *QueryMatcher) plain() bool {
	o := &m.opts
	return o.MaxVersions == 1 && o.TimeRange == AllTime && m.oldestTS == math.MinInt64 &&
		len(o.Columns) == 0 && o.Filter == nil
}

// resumeColumn puts the matcher where Match leaves it after including the
// newest version of qualifier, at ts, in a plain read: the column's older
// versions are then skipped.
func (m *QueryMatcher) resumeColumn(qualifier []byte, ts int64) {
	m.startColumn(qualifier)
	m.versions, m.lastTS = 1, ts
}

func (m *QueryMatcher) startColumn(q []byte) {
	m.col = append(m.col[:0], q...)
	m.colStarted = true
	m.hasColDelete = false
	m.versionDeletes = m.versionDeletes[:0]
	m.versions = 0
	m.included = 0
}

// trackDelete records a delete marker. Markers sort before the cells they
// mask: newer timestamps first, and at one timestamp delete types before Put.
func (m *QueryMatcher) trackDelete(kv *encoding.KeyValue) {
	ts := kv.Timestamp
	switch kv.Type {
	case encoding.TypeDeleteFamily:
		if !m.hasFamilyStamp || ts > m.familyStamp {
			m.familyStamp, m.hasFamilyStamp = ts, true
		}
	case encoding.TypeDeleteFamilyVersion:
		m.familyVersions = append(m.familyVersions, ts)
	case encoding.TypeDeleteColumn:
		if !m.hasColDelete || ts > m.colDeleteStamp {
			m.colDeleteStamp, m.hasColDelete = ts, true
		}
	case encoding.TypeDelete:
		m.versionDeletes = append(m.versionDeletes, ts)
	}
}

func (m *QueryMatcher) isDeleted(kv *encoding.KeyValue) bool {
	ts := kv.Timestamp
	if m.hasFamilyStamp && ts <= m.familyStamp {
		return true
	}
	if m.hasColDelete && ts <= m.colDeleteStamp {
		return true
	}
	for _, v := range m.familyVersions {
		if v == ts {
			return true
		}
	}
	for _, v := range m.versionDeletes {
		if v == ts {
			return true
		}
	}
	return false
}
