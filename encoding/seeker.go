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

// cellState is one decoded position in a block: HBase's SeekerState. The key
// is a private copy for encoded blocks (its bytes are spread over several
// cells) and aliases the payload for NONE blocks; value and tags are always
// offsets into the payload.
type cellState struct {
	key     Key
	buf     []byte // key storage owned by this slot (encoded blocks only)
	offset  int    // start of the cell in the payload
	next    int    // start of the following cell
	valOff  int
	valLen  int
	tagsOff int
	tagsLen int
	seq     SeqNum
	valid   bool
}

// seeker implements Seeker for NONE, PREFIX and FAST_DIFF. The three differ
// only in how one cell is decoded given the previous one, so the position
// logic (Rewind, Next, SeekToKeyInBlock) is shared and decode switches on the
// encoding.
//
// Two state slots give one step of look-back, which is all that HBase's
// seekBefore needs: advancing decodes the next cell into the slot that is
// not current, using the current cell as the reference for the shared
// prefix, and then swaps the slots. Moving back is therefore a swap and never
// re-decodes. Because each slot keeps its key buffer, a seek allocates only
// while keys grow past the largest seen so far.
type seeker struct {
	enc   DataBlockEncoding
	f     BlockFormat
	cmp   *Comparer
	data  []byte // nil until a successful Init
	start int    // offset of the first cell
	cur   *cellState
	prev  *cellState // valid only right after an advance
	slots [2]cellState
}

var _ Seeker = (*seeker)(nil)

func newSeeker(enc DataBlockEncoding, f BlockFormat, cmp *Comparer) *seeker {
	s := &seeker{enc: enc, f: f, cmp: cmp}
	s.cur, s.prev = &s.slots[0], &s.slots[1]
	return s
}

// Init implements Seeker.
func (s *seeker) Init(payload []byte) error {
	s.data = nil
	s.cur.valid, s.prev.valid = false, false
	start := 0
	if s.enc != EncodingNone {
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

// Rewind implements Seeker.
func (s *seeker) Rewind() error {
	if s.data == nil {
		return errSeekerNotInitialized
	}
	s.prev.valid = false
	if err := s.decode(s.cur, nil, s.start); err != nil {
		s.cur.valid = false
		s.data = nil
		return err
	}
	return nil
}

// Next implements Seeker.
func (s *seeker) Next() (bool, error) {
	if s.data == nil {
		return false, errSeekerNotInitialized
	}
	if s.cur.next >= len(s.data) {
		return false, nil
	}
	if err := s.advance(); err != nil {
		return false, err
	}
	return true, nil
}

// advance decodes the cell after the current one into the other slot and
// makes it current; the old current cell becomes the valid previous one. On
// error the current cell is unchanged and there is no previous cell.
func (s *seeker) advance() error {
	nxt := s.prev
	if err := s.decode(nxt, s.cur, s.cur.next); err != nil {
		nxt.valid = false
		return err
	}
	s.prev, s.cur = s.cur, nxt
	return nil
}

// SeekToKeyInBlock implements Seeker. It is HBase's
// BufferedEncodedSeeker.seekToKeyInBlock: scan forward until the current key
// is >= key, and step back once when the answer is the cell before.
//
// REQUIRES: key is a well-formed key (see ParseKey).
func (s *seeker) SeekToKeyInBlock(key Key, before bool) (int, error) {
	if s.data == nil {
		return 0, errSeekerNotInitialized
	}
	// Look-back is only meaningful for cells this seek has passed over;
	// a cell before the starting position may be arbitrarily far from key.
	s.prev.valid = false
	for {
		c := s.cmp.CompareKeys(key, s.cur.key)
		if c == 0 && !before {
			return SeekExact, nil
		}
		if c <= 0 {
			if !s.prev.valid {
				return SeekPrecedesBlock, nil
			}
			s.prev, s.cur = s.cur, s.prev
			s.prev.valid = false
			return SeekBefore, nil
		}
		if s.cur.next >= len(s.data) {
			// Every cell is < key: stay on the last one.
			return SeekBefore, nil
		}
		if err := s.advance(); err != nil {
			return 0, err
		}
	}
}

// Key implements Seeker.
func (s *seeker) Key() Key {
	if s.data == nil {
		return nil
	}
	return s.cur.key
}

// Value implements Seeker.
func (s *seeker) Value() []byte {
	if s.data == nil {
		return nil
	}
	e := s.cur.valOff + s.cur.valLen
	return s.data[s.cur.valOff:e:e]
}

// Tags implements Seeker.
func (s *seeker) Tags() []byte {
	if s.data == nil || s.cur.tagsLen == 0 {
		return nil
	}
	e := s.cur.tagsOff + s.cur.tagsLen
	return s.data[s.cur.tagsOff:e:e]
}

// SeqNum implements Seeker.
func (s *seeker) SeqNum() SeqNum {
	if s.data == nil {
		return 0
	}
	return s.cur.seq
}

// Offset implements Seeker.
func (s *seeker) Offset() int {
	if s.data == nil {
		return 0
	}
	return s.cur.offset
}

// decode decodes the cell at off into dst. ref is the cell immediately
// before it (nil for the first cell); encoded formats take their shared key
// prefix, and FAST_DIFF also lengths, type and value, from it.
func (s *seeker) decode(dst, ref *cellState, off int) error {
	switch s.enc {
	case EncodingNone:
		return s.decodeNone(dst, off)
	case EncodingPrefix:
		return s.decodePrefix(dst, ref, off)
	case EncodingFastDiff:
		return s.decodeFastDiff(dst, ref, off)
	}
	return errors.AssertionFailedf("encoding: no decoder for %s", s.enc)
}

// decodeSuffix reads what PREFIX and FAST_DIFF append after every cell
// (BufferedDataBlockEncoder.afterEncodingKeyValue): the tags length as a
// compressed int and the raw tags if the file has tags, then the mvcc as a
// Hadoop VLong if the file has it. It returns the offset after the cell.
func (s *seeker) decodeSuffix(dst *cellState, p int) (int, error) {
	d := s.data
	dst.tagsOff, dst.tagsLen = p, 0
	if s.f.IncludesTags {
		tl, q, ok := readCompressedInt(d, p)
		if !ok {
			return 0, s.corruptf(p, "bad tags length")
		}
		if tl > len(d)-q {
			return 0, s.corruptf(p, "tags length %d overruns the block (%d bytes left)", tl, len(d)-q)
		}
		dst.tagsOff, dst.tagsLen = q, tl
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
