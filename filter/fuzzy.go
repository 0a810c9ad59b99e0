package filter

import (
	"bytes"
	"container/heap"

	"github.com/regionkv/regionkv/encoding"
)

// FuzzyKey is one pattern of a FuzzyRowFilter: a row key and a mask of the
// same length, where mask byte 0 fixes the key's byte at that position and
// 1 leaves it free. (HBase's client sends masks preprocessed, 0xFF for
// fixed and 2 for free; the decoder accepts both forms.)
type FuzzyKey struct {
	Key, Mask []byte
}

// fuzzyKey is a FuzzyKey ready to match: the key with its free bytes
// zeroed, as HBase preprocesses it, and which positions are fixed.
type fuzzyKey struct {
	key   []byte
	fixed []bool
}

// FuzzyRowFilter keeps the rows that match any of several fuzzy keys:
// HBase's FuzzyRowFilter, forward and reversed. A row matches a key when
// the row's bytes equal the key's at every fixed position the two share:
// only the first min(len(row), len(key)) bytes are compared, so a row
// shorter than the key can match, and bytes after the key are free.
//
// A row that matches no key answers FilterSeekNextUsingHint; the hint is
// the nearest row in scan order that could match one (each key's candidate
// kept in a priority queue, as HBase's RowTracker), and when no key can
// match any later row the scan ends (FilterAllRemaining). FilterRow drops
// the row too, so that the filter also works where the hint is not
// followed (HBASE-26967). The hints are HBase's getNextForFuzzyRule,
// including HBASE-28634's adjustment of reversed hints; see
// nextForFuzzyRule for where reversed hints differ from HBase's. Like
// HBase's, the hints assume rows at least as long as the keys: a shorter
// row that matches is returned only if the scan reaches it without a seek.
type FuzzyRowFilter struct {
	FilterBase
	keys      []FuzzyKey // as given, masks in the 0/1 form
	fuzzy     []fuzzyKey
	lastFound int // the key the last matching row matched, -1 for none
	filterRow bool
	done      bool

	tracker     rowTracker
	initialized bool
	hint        encoding.Key
}

// NewFuzzyRowFilter returns a filter keeping the rows that match one of
// keys. A key and its mask must have the same length and mask bytes must
// be 0 or 1 (or HBase's preprocessed 0xFF and 2); otherwise the error is
// marked ErrBadFilter. HBase accepts other mask bytes and then matches
// bits of them; nothing sends such masks.
func NewFuzzyRowFilter(keys []FuzzyKey) (*FuzzyRowFilter, error) {
	f := &FuzzyRowFilter{lastFound: -1}
	for i, k := range keys {
		if len(k.Key) != len(k.Mask) {
			return nil, badFilterf("FuzzyRowFilter: fuzzy pair lengths do not match: key %d bytes, mask %d (pair %d)",
				len(k.Key), len(k.Mask), i)
		}
		fk := fuzzyKey{key: make([]byte, len(k.Key)), fixed: make([]bool, len(k.Key))}
		mask := make([]byte, len(k.Mask))
		for j, m := range k.Mask {
			switch m {
			case 0, 0xFF:
				fk.fixed[j], fk.key[j] = true, k.Key[j]
			case 1, 2:
				mask[j] = 1
			default:
				return nil, badFilterf("FuzzyRowFilter: mask byte %d of pair %d is %#x, not 0 (fixed) or 1 (free)", j, i, m)
			}
		}
		f.keys = append(f.keys, FuzzyKey{Key: append([]byte(nil), k.Key...), Mask: mask})
		f.fuzzy = append(f.fuzzy, fk)
	}
	f.tracker.f = f
	return f, nil
}

// Keys returns the fuzzy keys, masks in the 0/1 form; the caller must not
// modify them.
func (f *FuzzyRowFilter) Keys() []FuzzyKey { return f.keys }

// FilterCell includes the cells of a row that matches a key, trying first
// the key the last matching row matched.
func (f *FuzzyRowFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	start := max(f.lastFound, 0)
	for i := start; i < start+len(f.fuzzy); i++ {
		idx := i % len(f.fuzzy)
		if f.fuzzy[idx].matches(kv.Row) {
			f.lastFound = idx
			return FilterInclude, nil
		}
	}
	f.lastFound = -1
	f.filterRow = true
	return FilterSeekNextUsingHint, nil
}

// matches is HBase's satisfies(...) == YES.
func (k *fuzzyKey) matches(row []byte) bool {
	n := min(len(row), len(k.key))
	for i := 0; i < n; i++ {
		if k.fixed[i] && row[i] != k.key[i] {
			return false
		}
	}
	return true
}

// FilterRow drops a row that matched no key.
func (f *FuzzyRowFilter) FilterRow() bool { return f.filterRow }

// Reset starts a new row.
func (f *FuzzyRowFilter) Reset() { f.filterRow = false }

// FilterAllRemaining reports whether no later row can match.
func (f *FuzzyRowFilter) FilterAllRemaining() bool { return f.done }

// NextCellHint returns the first key of the nearest row that may match, in
// scan order; nil, and the filter done, when there is none. It advances the
// filter's candidates past kv's row. The key is shared and must not be
// modified.
func (f *FuzzyRowFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	if !f.tracker.update(kv.Row) {
		f.done = true
		return nil
	}
	f.hint = encoding.FirstOnRow(f.hint[:0], f.tracker.next())
	return f.hint
}

// rowTracker keeps, for each fuzzy key that can still match, the next row
// in scan order that could match it: HBase's FuzzyRowFilter.RowTracker.
type rowTracker struct {
	f     *FuzzyRowFilter
	rows  []candidate // a heap, nearest first
	stale []int       // update's buffer
}

type candidate struct {
	row []byte
	key int
}

func (t *rowTracker) Len() int { return len(t.rows) }
func (t *rowTracker) Less(i, j int) bool {
	c := bytes.Compare(t.rows[i].row, t.rows[j].row)
	if t.f.reversed {
		return c > 0
	}
	return c < 0
}
func (t *rowTracker) Swap(i, j int) { t.rows[i], t.rows[j] = t.rows[j], t.rows[i] }
func (t *rowTracker) Push(x any)    { t.rows = append(t.rows, x.(candidate)) }
func (t *rowTracker) Pop() any {
	n := len(t.rows) - 1
	c := t.rows[n]
	t.rows = t.rows[:n]
	return c
}

// update replaces the candidates that row has reached by the keys' next
// candidates after row; at the first call it computes every key's. It
// reports whether any candidate is left.
func (t *rowTracker) update(row []byte) bool {
	f := t.f
	if !f.initialized {
		for i := range f.fuzzy {
			t.add(row, i)
		}
		f.initialized = true
		return len(t.rows) > 0
	}
	// Take out every candidate row has reached, then recompute them: a
	// reversed candidate adjusted up to row itself is not ahead of row
	// either, and recomputing it at once, as HBase's loop does, would
	// never end. Such a hint is not followed (the scanner steps on), and
	// the next row recomputes it.
	t.stale = t.stale[:0]
	for len(t.rows) > 0 && !t.before(row, t.rows[0].row) {
		t.stale = append(t.stale, heap.Pop(t).(candidate).key)
	}
	for _, key := range t.stale {
		t.add(row, key)
	}
	return len(t.rows) > 0
}

// before reports whether row comes before next in scan order.
func (t *rowTracker) before(row, next []byte) bool {
	c := bytes.Compare(row, next)
	if t.f.reversed {
		return c > 0
	}
	return c < 0
}

func (t *rowTracker) add(row []byte, key int) {
	if next := nextForFuzzyRule(t.f.reversed, row, &t.f.fuzzy[key]); next != nil {
		heap.Push(t, candidate{row: next, key: key})
	}
}

func (t *rowTracker) next() []byte { return t.rows[0].row }

// nextForFuzzyRule is HBase's getNextForFuzzyRule: the nearest row after
// row in scan order (before it, reversed) that can match k, nil if none.
// It takes k's fixed bytes, and row's bytes at the free positions up to the
// first fixed byte where row differs; if that does not already move past
// row, it steps the last free byte that can step and resets the free bytes
// after it to the smallest (largest, reversed) value. Trailing free bytes
// are trimmed, and a reversed candidate gets its last byte below 0xFF
// increased, so that a backward seek to it lands on the candidate's own
// rows too.
//
// The free bytes after the first differing fixed byte are the smallest
// value forward, as HBase's; reversed they are 0xFF, where HBase's code
// leaves them 0 (the key's free bytes, zeroed) and its hint can then skip
// matching rows: "a?c" asked from row "b" would seek below "a\x00d", past
// "a5c".
//
// row fails k (FilterCell asked first), so a fixed byte within row
// differs: the loop stops there and never reads past row.
func nextForFuzzyRule(reversed bool, row []byte, k *fuzzyKey) []byte {
	free := func(i int) bool { return i >= len(k.key) || !k.fixed[i] }
	isMax := func(b byte) bool { return (!reversed && b == 0xFF) || (reversed && b == 0) }
	result := make([]byte, max(len(row), len(k.key)))
	copy(result, k.key)
	if reversed {
		// Free bytes at their largest, within the key and after it: a
		// candidate below row must be the largest one.
		for i := range result {
			if free(i) {
				result[i] = 0xFF
			}
		}
	}
	toInc := -1
	increased := false
	for i := 0; i < len(result); i++ {
		if i >= len(row) {
			break // defensive: row matched k up to here, which FilterCell rules out
		}
		if free(i) {
			result[i] = row[i]
			if !isMax(row[i]) {
				toInc = i
			}
			continue
		}
		// A fixed byte.
		if (!reversed && row[i] < k.key[i]) || (reversed && row[i] > k.key[i]) {
			increased = true // already past row
			break
		}
		if row[i] != k.key[i] {
			break // before row: only a free byte before it can help
		}
	}
	if !increased {
		if toInc < 0 {
			return nil
		}
		if reversed {
			result[toInc]--
		} else {
			result[toInc]++
		}
		for i := toInc + 1; i < len(result); i++ {
			if free(i) {
				result[i] = 0
				if reversed {
					result[i] = 0xFF
				}
			}
		}
	}
	// Trim the free bytes after the last fixed one (and after toInc).
	off := len(result) - 1
	if len(k.key) < len(result) {
		off = len(k.key) - 1
	}
	for ; off >= 0; off-- {
		if k.fixed[off] {
			break
		}
	}
	off = max(off, toInc)
	result = result[:off+1]
	if reversed {
		// HBase's PrivateCellUtil.increaseLastNonMaxByte (HBASE-28634).
		for i := len(result) - 1; i >= 0; i-- {
			if result[i] != 0xFF {
				result[i]++
				break
			}
		}
	}
	return result
}
