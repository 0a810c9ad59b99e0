package filter

import (
	"bytes"
	"math/rand/v2"

	"github.com/regionkv/regionkv/encoding"
)

// InclusiveStopFilter ends the scan after a stop row, which it includes:
// HBase's InclusiveStopFilter (a scan's own stop row is exclusive unless
// asked otherwise). In a reversed scan it ends the scan below the stop
// row. A nil stop row (HBase's null) is an error at the first row.
type InclusiveStopFilter struct {
	FilterBase
	stopRow []byte
	done    bool
}

// NewInclusiveStopFilter returns a filter ending the scan after stopRow.
func NewInclusiveStopFilter(stopRow []byte) *InclusiveStopFilter {
	return &InclusiveStopFilter{stopRow: stopRow}
}

// StopRow returns the stop row.
func (f *InclusiveStopFilter) StopRow() []byte { return f.stopRow }

// FilterRowKey drops the rows past the stop row, which ends the scan.
func (f *InclusiveStopFilter) FilterRowKey(row []byte) (bool, error) {
	if f.done {
		return true, nil
	}
	if f.stopRow == nil {
		// HBase fails here too (a NullPointerException), not when decoding.
		return false, badFilterf("InclusiveStopFilter: no stop row")
	}
	cmp := bytes.Compare(row, f.stopRow)
	f.done = (!f.reversed && cmp > 0) || (f.reversed && cmp < 0)
	return f.done, nil
}

// FilterCell includes the cells of the rows up to the stop row.
func (f *InclusiveStopFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	if f.done {
		return FilterNextRow, nil
	}
	return FilterInclude, nil
}

// FilterAllRemaining reports whether the scan is past the stop row.
func (f *InclusiveStopFilter) FilterAllRemaining() bool { return f.done }

// RandomRowFilter keeps each row with a probability: HBase's
// RandomRowFilter. A chance below 0 keeps no row and one above 1 every
// row; otherwise a row is kept when a uniform draw in [0, 1) is below the
// chance, so 0 (and NaN) keeps none and 1 all. The dice are rolled in
// FilterRowKey.
type RandomRowFilter struct {
	FilterBase
	chance       float32
	filterOutRow bool
	dice         func() float32 // uniform in [0, 1): math/rand/v2's, or a test's
}

// NewRandomRowFilter returns a filter keeping rows with probability chance.
func NewRandomRowFilter(chance float32) *RandomRowFilter {
	return &RandomRowFilter{chance: chance, dice: rand.Float32}
}

// Chance returns the probability of keeping a row.
func (f *RandomRowFilter) Chance() float32 { return f.chance }

// FilterRowKey rolls the dice for the row.
func (f *RandomRowFilter) FilterRowKey([]byte) (bool, error) {
	switch {
	case f.chance < 0:
		f.filterOutRow = true
	case f.chance > 1:
		f.filterOutRow = false
	default:
		f.filterOutRow = !(f.dice() < f.chance)
	}
	return f.filterOutRow, nil
}

// FilterCell skips the rest of a row that lost.
func (f *RandomRowFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	if f.filterOutRow {
		return FilterNextRow, nil
	}
	return FilterInclude, nil
}

// FilterRow drops a row that lost.
func (f *RandomRowFilter) FilterRow() bool { return f.filterOutRow }

// HasFilterRow returns true, as HBase's.
func (f *RandomRowFilter) HasFilterRow() bool { return true }

// Reset starts a new row.
func (f *RandomRowFilter) Reset() { f.filterOutRow = false }
