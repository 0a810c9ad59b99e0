package encoding

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"
)

// ROW_INDEX_V1 (HBase's RowIndexCodecV1, HBASE-16213): after the 2-byte
// encoding id (and no unencoded size, unlike PREFIX and FAST_DIFF), the
// cells in NONE format, then a row index:
//
//	+------+----------------+-------------------------------+------------------+
//	| id   | cells (NONE)   | numRows (4B) rowOffset (4B)×n | cellsSize (4B)   |
//	+------+----------------+-------------------------------+------------------+
//
// rowOffset[i] is the offset of row i's first cell from the first cell, and
// cellsSize the length of the cells section. A seek binary-searches the rows
// by their first cell's key and scans only within the row, so it needs no
// restart index; the cost is 4 bytes per row on disk and no key compression.
const rowIndexTrailerSize = 4 + 4 // numRows and cellsSize, without the offsets

// rowIndexEncoder writes ROW_INDEX_V1 blocks (HBase's RowIndexEncoderV1).
type rowIndexEncoder struct {
	noneEncoder
	rows     []byte // the row offsets, 4 bytes each
	lastRow  []byte
	finished bool // Finish appended the row index to buf
}

var _ BlockEncoder = (*rowIndexEncoder)(nil)

func (e *rowIndexEncoder) Encoding() DataBlockEncoding { return EncodingRowIndexV1 }

func (e *rowIndexEncoder) Reset() {
	e.buf = binary.BigEndian.AppendUint16(e.buf[:0], uint16(EncodingRowIndexV1))
	e.count, e.unencoded = 0, 0
	e.rows, e.lastRow, e.finished = e.rows[:0], e.lastRow[:0], false
}

// Add implements BlockEncoder. Rows must come in order, as for every
// encoder; a new row starts a row index entry.
func (e *rowIndexEncoder) Add(kv *KeyValue) {
	if e.count == 0 || string(kv.Row) != string(e.lastRow) {
		e.rows = binary.BigEndian.AppendUint32(e.rows, uint32(len(e.buf)-2))
		e.lastRow = append(e.lastRow[:0], kv.Row...)
	}
	e.noneEncoder.Add(kv)
}

// EncodedSize implements BlockEncoder: the cells, the row index and its
// two counts.
func (e *rowIndexEncoder) EncodedSize() int {
	if e.finished {
		return len(e.buf)
	}
	return len(e.buf) + len(e.rows) + rowIndexTrailerSize
}

func (e *rowIndexEncoder) Finish() []byte {
	if len(e.buf) < 2 {
		panic(errors.AssertionFailedf("encoding: Finish called before Reset"))
	}
	if e.finished {
		return e.buf
	}
	e.finished = true
	cells := len(e.buf) - 2
	b := binary.BigEndian.AppendUint32(e.buf, uint32(len(e.rows)/4))
	b = append(b, e.rows...)
	e.buf = binary.BigEndian.AppendUint32(b, uint32(cells))
	return e.buf
}

// initRowIndex parses a ROW_INDEX_V1 payload: the cells section becomes
// s.data (so iteration ends with it) and the row offsets s.rowOffsets. The
// offsets must increase from 0 and lie in the cells section; whether they
// fall on cell boundaries is what the block's checksum vouches for.
func (s *seeker) initRowIndex(payload []byte) error {
	if len(payload) < 2+rowIndexTrailerSize {
		return CorruptionErrorf("encoding: ROW_INDEX_V1 block of %d bytes is shorter than its header and row index", len(payload))
	}
	if id := DataBlockEncoding(binary.BigEndian.Uint16(payload)); id != s.enc {
		return CorruptionErrorf("encoding: block has encoding id %d, want %d (%s)", uint16(id), uint16(s.enc), s.enc)
	}
	cells := int64(binary.BigEndian.Uint32(payload[len(payload)-4:]))
	if cells <= 0 || cells > int64(len(payload)-2-rowIndexTrailerSize) {
		return CorruptionErrorf("encoding: ROW_INDEX_V1 block says %d bytes of cells in a %d-byte block", cells, len(payload))
	}
	end := 2 + int(cells)
	rows := int64(binary.BigEndian.Uint32(payload[end:]))
	if rows <= 0 || rows*4 != int64(len(payload)-end-rowIndexTrailerSize) {
		return CorruptionErrorf("encoding: ROW_INDEX_V1 block has %d rows for a %d-byte row index", rows, len(payload)-end-rowIndexTrailerSize)
	}
	offs := payload[end+4 : len(payload)-4]
	prev := int64(-1)
	for i := 0; i < len(offs); i += 4 {
		o := int64(binary.BigEndian.Uint32(offs[i:]))
		if (i == 0 && o != 0) || o <= prev || o >= cells {
			return CorruptionErrorf("encoding: ROW_INDEX_V1 row %d at offset %d (previous %d, %d bytes of cells)", i/4, o, prev, cells)
		}
		prev = o
	}
	s.data, s.start, s.rowOffsets = payload[:end:end], 2, offs
	return nil
}

// rowAt returns the payload offset of row i's first cell.
func (s *seeker) rowAt(i int) int { return s.start + int(binary.BigEndian.Uint32(s.rowOffsets[4*i:])) }

// jumpRow moves to the first cell of the last row whose first cell's key
// is < key, if that lies beyond the current cell, as HBase's
// RowIndexSeekerV1 binary-searches its rows. It reports whether it moved.
//
// REQUIRES: s.rowOffsets != nil, and the current cell is the last decoded one.
func (s *seeker) jumpRow(key Key) (bool, error) {
	lo, hi := 0, len(s.rowOffsets)/4 // rows before lo start < key; from hi on, >= key
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, err := s.rowKeyAt(s.rowAt(m))
		if err != nil {
			return false, err
		}
		if s.cmp.CompareKeys(k, key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return false, nil
	}
	off := s.rowAt(lo - 1)
	if off <= int(s.cells[s.pos].offset) {
		return false, nil
	}
	var c cellState
	if err := s.decodeNone(&c, off); err != nil {
		return false, err
	}
	// The cell's number in the block is unknown: first only has to be
	// non-zero (cells before the kept ones exist), and never grows large.
	s.cells = append(s.cells[:0], c)
	s.first = rowJumped
	s.setPos(0)
	return true, nil
}

// rowJumped is s.first after a row index jump: cells before the kept ones
// exist, their number unknown.
const rowJumped = math.MaxInt32

// rowKeyAt returns the key of the NONE cell at off, checked.
func (s *seeker) rowKeyAt(off int) (Key, error) {
	d := s.data
	if len(d)-off < 8 {
		return nil, s.corruptf(off, "row index points past the cells")
	}
	kl := int(int32(binary.BigEndian.Uint32(d[off:])))
	if kl < 0 || kl > len(d)-off-8 {
		return nil, s.corruptf(off, "key length %d out of range", kl)
	}
	return s.parseKey(d[off+8:off+8+kl:off+8+kl], off)
}
