package encoding

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"
)

// encodedHeaderSize is the part of an encoded (PREFIX, FAST_DIFF) payload
// before the first cell: the 2-byte encoding id and the 4-byte unencoded size.
const encodedHeaderSize = 2 + 4

// errSeekerNotInitialized is returned when a seeker is used before a
// successful Init. It is a bug in the caller, not bad data.
var errSeekerNotInitialized = errors.AssertionFailedf("encoding: seeker used without a successful Init")

// cellState is one decoded cell of the current block: HBase's SeekerState,
// kept for every cell decoded since Init (see seeker). All fields are
// offsets, 32-bit because a block payload is at most MaxInt32 bytes (an
// HFile block's on-disk size is an int32): the key is in seeker.keys for
// encoded blocks (its bytes are spread over several cells) and in the
// payload for NONE blocks; value and tags are always in the payload.
type cellState struct {
	keyOff  int32
	keyLen  int32
	offset  int32 // start of the cell in the payload
	next    int32 // start of the following cell
	valOff  int32
	valLen  int32
	tagsOff int32
	tagsLen int32
	seq     SeqNum
	// rowRel is how the cell's row relates to the previous cell's, in
	// block order, where the decoder saw it for free (FAST_DIFF's common
	// prefix): rowSame, rowNew, or rowUnknown, when the row must be
	// compared. Reverse scans step over rows with it.
	rowRel uint8
}

// Values of cellState.rowRel.
const (
	rowUnknown uint8 = iota
	rowSame
	rowNew
)

// seeker implements Seeker for NONE, PREFIX, FAST_DIFF and ROW_INDEX_V1
// (whose cells are NONE's). They differ only in how one cell is decoded
// given the previous one (and ROW_INDEX_V1 in its row index), so the position
// logic (Rewind, Next, SeekToKeyInBlock, SeekBeforeKey) is shared and decode
// switches on the encoding.
//
// Cells are decoded in order, and the state of every decoded cell is kept
// until the next Init: cells[i] is cell first+i of the block, and the keys
// of encoded blocks are appended to keys. Decoding always extends that run
// of cells, so moving to a cell already decoded, forwards or backwards,
// never decodes again: Rewind and stepping back are O(1), and a seek
// binary-searches the decoded cells before decoding more. This makes
// HBase's seekBefore, which reverse scans call once per row, O(log n)
// instead of a decode from the start of the block.
//
// Both buffers are reused from block to block, so a seeker allocates only
// while a block has more cells, or more key bytes, than any before it. The
// keys are capped (see maxKeyBytes): a block whose keys add up to more,
// which takes long keys sharing long prefixes, drops the cells before the
// current one (first > 0) and a seek before them decodes again from the
// start of the block, as every seek did before cells were kept.
type seeker struct {
	enc   DataBlockEncoding
	f     BlockFormat
	cmp   *Comparer
	data  []byte // nil until a successful Init
	start int    // offset of the first cell
	cells []cellState
	keys  []byte // keys of cells, encoded blocks only
	first int    // index in the block of cells[0]
	pos   int    // index in cells of the current cell
	key   Key    // the current cell's key
	// firstKey is a copy of the block's first key, which cells may no
	// longer hold; with firstInIdx it is not set, and the index's first
	// sample is the block's first key (see InitSeek).
	firstKey   []byte
	firstInIdx bool
	// keyBudget, if positive, overrides maxKeyBytes (tests).
	keyBudget int
	// idx, if set by InitIndexed, lets a seek skip ahead to the sample
	// before its target instead of decoding every cell on the way.
	idx *RestartIndex
	// back is scratch for extendBack.
	back []cellState
	// rowOffsets is a ROW_INDEX_V1 block's row index (see rowindex.go).
	rowOffsets []byte
	// rec is the index RecordRestartIndex builds, while recording.
	rec       restartRecorder
	recording bool
}

// keysInData reports whether keys are read from the payload (NONE-format
// cells) rather than rebuilt into s.keys.
func (s *seeker) keysInData() bool { return s.enc == EncodingNone || s.enc == EncodingRowIndexV1 }

// minKeyBudget is the least maxKeyBytes, so that small blocks never drop
// cells.
const minKeyBudget = 64 << 10

// maxKeyBytes is how many bytes of keys a seeker keeps for the current
// block before it drops the cells before the current one. Typical blocks
// need less than their payload size.
func (s *seeker) maxKeyBytes() int {
	if s.keyBudget > 0 {
		return s.keyBudget
	}
	return max(2*len(s.data), minKeyBudget)
}

var _ Seeker = (*seeker)(nil)

func newSeeker(enc DataBlockEncoding, f BlockFormat, cmp *Comparer) *seeker {
	return &seeker{enc: enc, f: f, cmp: cmp}
}

// Init implements Seeker.
func (s *seeker) Init(payload []byte) error {
	s.forget()
	start := 0
	if len(payload) > math.MaxInt32 {
		return CorruptionErrorf("encoding: %s block of %d bytes is larger than a block can be", s.enc, len(payload))
	}
	if s.enc == EncodingRowIndexV1 {
		if err := s.initRowIndex(payload); err != nil {
			return err
		}
		payload, start = s.data, s.start
		s.data = nil
	} else if s.enc != EncodingNone {
		if len(payload) < encodedHeaderSize {
			return CorruptionErrorf("encoding: %s block of %d bytes is shorter than its %d-byte header",
				s.enc, len(payload), encodedHeaderSize)
		}
		if id := DataBlockEncoding(binary.BigEndian.Uint16(payload)); id != s.enc {
			return CorruptionErrorf("encoding: block has encoding id %d, want %d (%s)", uint16(id), uint16(s.enc), s.enc)
		}
		if size := int32(binary.BigEndian.Uint32(payload[2:])); size < 0 {
			return CorruptionErrorf("encoding: %s block has negative unencoded size %d", s.enc, size)
		}
		start = encodedHeaderSize
	}
	if len(payload) <= start {
		// HBase never writes a data block without cells, and a seeker has
		// to stand on a cell.
		return CorruptionErrorf("encoding: %s block has no cells", s.enc)
	}
	s.data, s.start = payload, start
	if err := s.Rewind(); err != nil {
		s.data = nil
		return err
	}
	return nil
}

// forget drops the seeker's block, keeping its buffers.
func (s *seeker) forget() {
	s.data, s.key, s.idx, s.rowOffsets = nil, nil, nil, nil
	s.recording, s.rec.done, s.firstInIdx = false, nil, false
	s.cells, s.keys, s.first, s.pos = s.cells[:0], s.keys[:0], 0, 0
}

// Rewind implements Seeker.
func (s *seeker) Rewind() error {
	if s.data == nil {
		return errSeekerNotInitialized
	}
	if len(s.cells) > 0 && s.first == 0 {
		s.setPos(0)
		return nil
	}
	s.cells, s.keys, s.first, s.pos = s.cells[:0], s.keys[:0], 0, 0
	if err := s.decodeNext(); err != nil {
		s.data, s.key = nil, nil
		return err
	}
	return nil
}

// Next implements Seeker.
func (s *seeker) Next() (bool, error) {
	if s.data == nil {
		return false, errSeekerNotInitialized
	}
	if s.pos+1 < len(s.cells) {
		s.setPos(s.pos + 1)
	} else {
		if int(s.cells[s.pos].next) >= len(s.data) {
			if s.recording {
				s.finishRecording()
			}
			return false, nil
		}
		if err := s.decodeNext(); err != nil {
			s.recording = false
			return false, err
		}
	}
	if s.recording {
		s.recordStep()
	}
	return true, nil
}

// setPos makes cells[i] the current cell.
func (s *seeker) setPos(i int) {
	s.pos = i
	s.key = s.keyAt(i)
}

// keyAt returns the key of cells[i].
func (s *seeker) keyAt(i int) Key { return s.cellKey(&s.cells[i]) }

// cellKey returns the key of c, nil if c is nil.
func (s *seeker) cellKey(c *cellState) Key {
	if c == nil {
		return nil
	}
	src := s.keys
	if s.keysInData() {
		src = s.data
	}
	e := c.keyOff + c.keyLen
	return Key(src[c.keyOff:e:e])
}

// decodeNext decodes the first cell not yet decoded, which follows the last
// decoded one (or is the block's first), records it and makes it current.
// On error nothing changes.
//
// REQUIRES: s.data != nil, and the current cell is the last decoded one.
func (s *seeker) decodeNext() error {
	n := len(s.cells)
	if n > 1 && len(s.keys) > s.maxKeyBytes() {
		s.dropBefore()
		n = 1
	}
	off := s.start
	if n > 0 {
		off = int(s.cells[n-1].next)
		if s.enc == EncodingFastDiff && !noFastDiffCommon && n < cap(s.cells) {
			// The usual FAST_DIFF cell, decoded straight into its slot
			// (which decodeFastDiffCommon sets whole).
			s.cells = s.cells[:n+1]
			dst := &s.cells[n]
			dst.rowRel = rowUnknown
			if s.decodeFastDiffCommon(dst, &s.cells[n-1], off) {
				s.pos = n
				s.key = Key(s.keys[dst.keyOff : dst.keyOff+dst.keyLen : dst.keyOff+dst.keyLen])
				return nil
			}
			s.cells = s.cells[:n]
		}
	}
	s.cells = append(s.cells, cellState{})
	var ref *cellState
	if n > 0 {
		ref = &s.cells[n-1]
	}
	if err := s.decode(&s.cells[n], ref, off); err != nil {
		s.cells = s.cells[:n]
		return err
	}
	s.setPos(n)
	if n == 0 && s.first == 0 {
		s.firstKey = append(s.firstKey[:0], s.key...)
	}
	return nil
}

// dropBefore forgets every decoded cell but the last, which is current,
// and moves its key to the start of keys.
//
// REQUIRES: the current cell is the last decoded one.
func (s *seeker) dropBefore() {
	n := len(s.cells)
	last := s.cells[n-1]
	if !s.keysInData() {
		k := s.keyAt(n - 1)
		s.keys = s.keys[:copy(s.keys, k)]
		last.keyOff = 0
	}
	s.cells[0] = last
	s.cells = s.cells[:1]
	s.first += n - 1
	s.setPos(0)
}

// SeekToKeyInBlock implements Seeker. It is HBase's
// BufferedEncodedSeeker.seekToKeyInBlock: scan forward until the current key
// is >= key, and step back once when the answer is the cell before. Cells
// already decoded are searched (galloping, then binary search) rather than
// scanned.
//
// REQUIRES: key is a well-formed key (see ParseKey).
func (s *seeker) SeekToKeyInBlock(key Key, before bool) (int, error) {
	if s.data == nil {
		return 0, errSeekerNotInitialized
	}
	return s.seekFrom(key, before, false)
}

// seekFrom is SeekToKeyInBlock; jumped says the seek has been placed on
// the sample before key already (InitSeek).
func (s *seeker) seekFrom(key Key, before, jumped bool) (int, error) {
	// Look-back is only meaningful for cells this seek has passed over;
	// a cell before the starting position may be arbitrarily far from key.
	// start is the cell's offset in the payload, which stays its identity
	// when decoding drops cells or an index jump renumbers them.
	start := s.cells[s.pos].offset
	for {
		c := s.cmp.CompareKeys(key, s.key)
		if c == 0 && !before {
			return SeekExact, nil
		}
		if c <= 0 {
			if s.cells[s.pos].offset == start {
				return SeekPrecedesBlock, nil
			}
			if s.pos == 0 {
				// Only a jump leaves nothing decoded before the current
				// cell, and it jumps to a cell the index holds as < key:
				// the block's keys are out of order.
				return 0, s.corruptf(int(s.cells[0].offset), "a seek jumped to a cell that is not before its key: keys out of order")
			}
			s.setPos(s.pos - 1)
			return SeekBefore, nil
		}
		if s.pos+1 < len(s.cells) {
			s.setPos(s.searchForward(key))
			continue
		}
		if int(s.cells[s.pos].next) >= len(s.data) {
			// Every cell is < key: stay on the last one.
			return SeekBefore, nil
		}
		if s.idx != nil && !jumped {
			// Every decoded cell is < key: skip to the last sample < key.
			jumped = true
			if s.jumpAhead(key) {
				continue
			}
		}
		if s.rowOffsets != nil && !jumped {
			// Or to the last row starting < key.
			jumped = true
			moved, err := s.jumpRow(key)
			if err != nil {
				return 0, err
			}
			if moved {
				continue
			}
		}
		if err := s.decodeNext(); err != nil {
			return 0, err
		}
	}
}

// searchForward returns the first decoded cell after the current one whose
// key is >= key, or the last decoded cell if every one is < key. It gallops
// from the current cell, so a target k cells ahead costs O(log k)
// comparisons.
//
// REQUIRES: the current key < key, and a decoded cell follows the current one.
func (s *seeker) searchForward(key Key) int {
	p := s.pos
	lo, hi := p, len(s.cells) // key(lo) < key; hi is len or key(hi) >= key
	for step := 1; p+step < hi; step *= 2 {
		if s.cmp.CompareKeys(key, s.keyAt(p+step)) <= 0 {
			hi = p + step
			break
		}
		lo = p + step
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if s.cmp.CompareKeys(key, s.keyAt(m)) <= 0 {
			hi = m
		} else {
			lo = m
		}
	}
	if hi == len(s.cells) {
		return lo
	}
	return hi
}

// SeekBeforeKey implements Seeker.
func (s *seeker) SeekBeforeKey(key Key) (int, error) {
	if s.data == nil {
		return 0, errSeekerNotInitialized
	}
	if s.cmp.CompareKeys(key, s.key) > 0 {
		// The answer is here or ahead.
		return s.SeekToKeyInBlock(key, true)
	}
	// The answer is before the current cell, so it has been decoded (or
	// is before the kept cells): gallop back, then binary-search.
	for s.idx != nil && s.first > 0 && s.cmp.CompareKeys(key, s.keyAt(0)) <= 0 {
		if _, err := s.extendBack(); err != nil {
			return 0, err
		}
	}
	p := s.pos
	lo, hi := -1, p // lo is -1 or key(lo) < key; key(hi) >= key
	for step := 1; p-step >= 0; step *= 2 {
		if s.cmp.CompareKeys(key, s.keyAt(p-step)) > 0 {
			lo = p - step
			break
		}
		hi = p - step
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if s.cmp.CompareKeys(key, s.keyAt(m)) > 0 {
			lo = m
		} else {
			hi = m
		}
	}
	if lo < 0 {
		if s.first > 0 {
			// The answer may be among the dropped cells.
			if err := s.Rewind(); err != nil {
				return 0, err
			}
			return s.SeekToKeyInBlock(key, true)
		}
		s.setPos(0)
		return SeekPrecedesBlock, nil
	}
	s.setPos(lo)
	return SeekBefore, nil
}

// FirstKey implements Seeker.
func (s *seeker) FirstKey() Key {
	if s.data == nil {
		return nil
	}
	if s.firstInIdx {
		return s.sampleKey(0)
	}
	return Key(s.firstKey[:len(s.firstKey):len(s.firstKey)])
}

// Key implements Seeker.
func (s *seeker) Key() Key {
	if s.data == nil {
		return nil
	}
	return s.key
}

// Value implements Seeker.
func (s *seeker) Value() []byte {
	if s.data == nil {
		return nil
	}
	c := &s.cells[s.pos]
	e := c.valOff + c.valLen
	return s.data[c.valOff:e:e]
}

// Tags implements Seeker.
func (s *seeker) Tags() []byte {
	if s.data == nil {
		return nil
	}
	c := &s.cells[s.pos]
	if c.tagsLen == 0 {
		return nil
	}
	e := c.tagsOff + c.tagsLen
	return s.data[c.tagsOff:e:e]
}

// SeqNum implements Seeker.
func (s *seeker) SeqNum() SeqNum {
	if s.data == nil {
		return 0
	}
	return s.cells[s.pos].seq
}

// Cell implements Seeker.
func (s *seeker) Cell(kv *KeyValue) {
	if s.data == nil {
		*kv = KeyValue{}
		return
	}
	c := &s.cells[s.pos]
	e := c.valOff + c.valLen
	s.key.Fill(kv, s.data[c.valOff:e:e])
	kv.Tags = nil
	if c.tagsLen != 0 {
		e := c.tagsOff + c.tagsLen
		kv.Tags = s.data[c.tagsOff:e:e]
	}
	kv.SeqNum = c.seq
}

// Offset implements Seeker.
func (s *seeker) Offset() int {
	if s.data == nil {
		return 0
	}
	return int(s.cells[s.pos].offset)
}

// decode decodes the cell at off into dst. ref is the cell immediately
// before it (nil for the first cell); encoded formats take their shared key
// prefix, and FAST_DIFF also lengths, type and value, from it. Encoded
// formats append the key to s.keys, and only on success.
func (s *seeker) decode(dst, ref *cellState, off int) error {
	dst.rowRel = rowUnknown
	switch s.enc {
	case EncodingNone, EncodingRowIndexV1:
		return s.decodeNone(dst, off)
	case EncodingPrefix:
		return s.decodePrefix(dst, ref, off)
	case EncodingFastDiff:
		return s.decodeFastDiff(dst, ref, off)
	}
	return errors.AssertionFailedf("encoding: no decoder for %s", s.enc)
}

// commitKey records k, which was appended to s.keys starting at base, as
// dst's key and keeps it in s.keys.
func (s *seeker) commitKey(dst *cellState, k []byte, base int) {
	dst.keyOff, dst.keyLen = int32(base), int32(len(k)-base)
	s.keys = k
}

// decodeSuffix reads what PREFIX and FAST_DIFF append after every cell
// (BufferedDataBlockEncoder.afterEncodingKeyValue): the tags length as a
// compressed int and the raw tags if the file has tags, then the mvcc as a
// Hadoop VLong if the file has it. It returns the offset after the cell.
func (s *seeker) decodeSuffix(dst *cellState, p int) (int, error) {
	d := s.data
	dst.tagsOff, dst.tagsLen = int32(p), 0
	if s.f.IncludesTags {
		tl, q, ok := readCompressedInt(d, p)
		if !ok {
			return 0, s.corruptf(p, "bad tags length")
		}
		if tl > len(d)-q {
			return 0, s.corruptf(p, "tags length %d overruns the block (%d bytes left)", tl, len(d)-q)
		}
		dst.tagsOff, dst.tagsLen = int32(q), int32(tl)
		p = q + tl
	}
	dst.seq = 0
	if s.f.IncludesMvcc {
		seq, q, err := s.readSeqNum(p)
		if err != nil {
			return 0, err
		}
		dst.seq, p = seq, q
	}
	return p, nil
}

// readSeqNum reads the mvcc Hadoop VLong at p.
func (s *seeker) readSeqNum(p int) (SeqNum, int, error) {
	v, n := DecodeVLong(s.data[p:])
	if n <= 0 {
		return 0, 0, s.corruptf(p, "truncated mvcc")
	}
	if v < 0 {
		// Sequence ids are never negative; HBase writes them as a signed long.
		return 0, 0, s.corruptf(p, "negative mvcc %d", v)
	}
	return SeqNum(v), p + n, nil
}

// corruptf returns a corruption error naming the encoding and the offset in
// the payload, so that the bad bytes can be found.
func (s *seeker) corruptf(off int, format string, args ...interface{}) error {
	return errors.Wrapf(CorruptionErrorf(format, args...), "encoding: %s cell at payload offset %d", s.enc, off)
}

// parseKey checks a decoded key, marking failures with the cell's offset.
func (s *seeker) parseKey(b []byte, off int) (Key, error) {
	k, err := ParseKey(b)
	if err != nil {
		return nil, errors.Wrapf(err, "encoding: %s cell at payload offset %d", s.enc, off)
	}
	return k, nil
}

// readCompressedInt reads a compressed int at d[p:]. It returns the value
// and the offset after it; ok is false if the encoding is truncated, longer
// than five bytes or above MaxInt32 (HBase reads these into a Java int).
// REQUIRES: p <= len(d).
func readCompressedInt(d []byte, p int) (v, next int, ok bool) {
	u, n := DecodeCompressedInt(d[p:])
	if n <= 0 || u > math.MaxInt32 {
		return 0, p, false
	}
	return int(u), p + n, true
}
