package filter

import (
	"math"
	"slices"
	"sort"

	"github.com/regionkv/regionkv/encoding"
)

// TimestampsFilter keeps the cells whose timestamp is one of a set:
// HBase's TimestampsFilter. Versions older than the smallest timestamp end
// their column. Other misses are skipped one by one or, with canHint,
// answered FilterSeekNextUsingHint with the column's next wanted
// timestamp. As HBase warns, such a seek can step over a delete marker
// between the two timestamps and so show a cell it deletes: use canHint
// only where that cannot happen (or does not matter).
type TimestampsFilter struct {
	FilterBase
	timestamps []int64 // sorted, distinct
	canHint    bool
	minTS      int64
}

// NewTimestampsFilter returns a filter keeping cells with one of
// timestamps. A negative timestamp is an error marked ErrBadFilter, as
// HBase's constructor refuses it.
func NewTimestampsFilter(timestamps []int64, canHint bool) (*TimestampsFilter, error) {
	ts := slices.Clone(timestamps)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	if len(ts) > 0 && ts[0] < 0 {
		return nil, badFilterf("TimestampsFilter: timestamp %d must be positive", ts[0])
	}
	f := &TimestampsFilter{timestamps: ts, canHint: canHint, minTS: math.MaxInt64}
	if len(ts) > 0 {
		f.minTS = ts[0]
	}
	return f, nil
}

// Timestamps returns the timestamps in ascending order; the caller must
// not modify them.
func (f *TimestampsFilter) Timestamps() []int64 { return f.timestamps }

// CanHint reports whether the filter seeks to the next wanted timestamp.
func (f *TimestampsFilter) CanHint() bool { return f.canHint }

// Min returns the smallest timestamp (math.MaxInt64 for none).
func (f *TimestampsFilter) Min() int64 { return f.minTS }

// FilterCell includes the wanted timestamps.
func (f *TimestampsFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if _, ok := slices.BinarySearch(f.timestamps, kv.Timestamp); ok {
		return FilterInclude, nil
	}
	if kv.Timestamp < f.minTS {
		// Older versions of the column are older still.
		return FilterNextCol, nil
	}
	if f.canHint {
		return FilterSeekNextUsingHint, nil
	}
	return FilterSkip, nil
}

// NextCellHint returns the first key of kv's column at the largest wanted
// timestamp below kv's (versions sort newest first), or the column's last
// key if there is none; nil without canHint.
func (f *TimestampsFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	if !f.canHint {
		return nil
	}
	i := sort.Search(len(f.timestamps), func(i int) bool { return f.timestamps[i] >= kv.Timestamp })
	if i == 0 {
		return encoding.LastOnRowCol(nil, kv.Row, kv.Family, kv.Qualifier)
	}
	return encoding.AppendKey(nil, kv.Row, kv.Family, kv.Qualifier, f.timestamps[i-1], encoding.TypeMaximum)
}
