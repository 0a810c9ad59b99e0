package encoding

import (
	"fmt"

	"github.com/cockroachdb/errors"
)

// DataBlockEncoding is HBase's DataBlockEncoding: how cells are laid out
// inside a data block. The ids are written into encoded blocks and must never
// change.
type DataBlockEncoding uint16

// HBase's encoding ids.
const (
	EncodingNone       DataBlockEncoding = 0
	EncodingPrefix     DataBlockEncoding = 2
	EncodingDiff       DataBlockEncoding = 3
	EncodingFastDiff   DataBlockEncoding = 4
	EncodingRowIndexV1 DataBlockEncoding = 7
)

// String returns HBase's name, as stored in the DATA_BLOCK_ENCODING file info.
func (e DataBlockEncoding) String() string {
	switch e {
	case EncodingNone:
		return "NONE"
	case EncodingPrefix:
		return "PREFIX"
	case EncodingDiff:
		return "DIFF"
	case EncodingFastDiff:
		return "FAST_DIFF"
	case EncodingRowIndexV1:
		return "ROW_INDEX_V1"
	}
	return fmt.Sprintf("UNKNOWN(%d)", uint16(e))
}

// ParseDataBlockEncoding parses HBase's encoding name (case-insensitive).
func ParseDataBlockEncoding(name string) (DataBlockEncoding, error) {
	for _, e := range []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff, EncodingRowIndexV1} {
		if equalFold(e.String(), name) {
			return e, nil
		}
	}
	return 0, errors.Newf("unknown data block encoding %q", name)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// BlockFormat says which optional parts every cell of a file carries. It comes
// from the file info: MAX_TAGS_LEN present ⇒ IncludesTags, KEY_VALUE_VERSION 1
// ⇒ IncludesMvcc.
type BlockFormat struct {
	IncludesMvcc bool
	IncludesTags bool
}

// Seek results, as HBase's HFileScanner.seekTo/blockSeek return them.
const (
	SeekExact         = 0  // positioned on a cell equal to the key
	SeekBefore        = 1  // positioned on the last cell < key (or, with before, the last cell < key)
	SeekPrecedesFile  = -1 // key precedes the first cell of the file
	SeekPrecedesBlock = -2 // key precedes the first cell of the block (HBase's INDEX_KEY_MAGIC)
)

// Results of Seeker.SeekBeforeRow.
const (
	// RowFound: positioned on the first cell of the last row before row.
	RowFound = iota
	// RowBeforeBlock: every cell of the block is in row or after it, so the
	// last row before row ends in an earlier block. Not moved.
	RowBeforeBlock
	// RowAtBlockStart: the last row before row starts at the block's first
	// cell, or in an earlier block if it goes on from there. Not moved.
	RowAtBlockStart
	// RowUnknown: the cells the seeker has kept do not show where the row
	// is (it dropped the block's first cells). Not moved.
	RowUnknown
)

// BlockEncoder builds the uncompressed payload of one data block, the bytes
// that follow the 33-byte block header. A BlockEncoder is not safe for
// concurrent use.
type BlockEncoder interface {
	// Encoding returns the encoding this encoder writes.
	Encoding() DataBlockEncoding
	// Reset starts a new, empty block.
	Reset()
	// Add appends a cell. Cells must be added in comparer order. The encoder
	// copies what it needs; kv may be reused after Add returns.
	Add(kv *KeyValue)
	// Count returns the number of cells added since Reset.
	Count() int
	// UnencodedSize returns the size the block's cells take in NONE format.
	UnencodedSize() int
	// EncodedSize returns the current payload size.
	EncodedSize() int
	// Finish returns the payload: for NONE the cells; for the others the
	// 2-byte encoding id, the 4-byte unencoded size, then the cells. The slice
	// is valid until the next Reset.
	Finish() []byte
}

// Seeker positions within one data block payload (as BlockEncoder.Finish
// produces it and as HBase writes it). It is HBase's DataBlockEncoder.EncodedSeeker
// and, for NONE, the linear scan of HFileReaderImpl.blockSeek.
//
// Slices returned by Key, Value and Tags are valid until the next call that
// moves the seeker, or Init; FirstKey's until Init. A Seeker is not safe for concurrent use.
type Seeker interface {
	// Init sets the block payload and positions on its first cell. The
	// payload must stay unchanged while the seeker uses it. A payload that
	// does not decode returns an error marked as corruption.
	Init(payload []byte) error
	// Rewind positions on the first cell.
	Rewind() error
	// Next advances to the next cell; false at the end of the block (the
	// seeker then stays on the last cell).
	Next() (bool, error)
	// SeekToKeyInBlock moves forward from the current position (Rewind first
	// for a fresh seek) and returns SeekExact, SeekBefore (positioned on the
	// last cell < key, which may be the block's last cell) or
	// SeekPrecedesBlock (key < first cell seen; the seeker is on that cell).
	// With before, it positions on the last cell strictly < key; it returns
	// SeekPrecedesBlock if there is no such cell in the block.
	SeekToKeyInBlock(key Key, before bool) (int, error)
	// SeekBeforeKey positions on the last cell strictly < key wherever the
	// seeker is, and returns SeekBefore; if no cell of the block is < key it
	// returns SeekPrecedesBlock, positioned on the first cell. Cells decoded
	// since Init are kept, so moving back to one costs O(log n) comparisons
	// and no decoding: this is the step of a reverse scan.
	SeekBeforeKey(key Key) (int, error)
	// FirstKey returns the key of the block's first cell.
	FirstKey() Key
	// Key returns the current key (without copying the value).
	Key() Key
	// Value returns the current value.
	Value() []byte
	// Tags returns the current serialized tags region, or nil.
	Tags() []byte
	// SeqNum returns the current cell's mvcc/sequence id (0 if not included).
	SeqNum() SeqNum
	// Cell fills kv with the current cell, as Key, Value, Tags and SeqNum
	// give it, in one call; its slices are valid as theirs are.
	Cell(kv *KeyValue)
	// Offset returns the index of the current cell's start in the payload;
	// two positions in the same block are equal iff their offsets are.
	Offset() int
	// InitIndexed is Init with the block's RestartIndex, which seeks use
	// to skip ahead; idx must have been built from this payload (nil: none).
	InitIndexed(payload []byte, idx *RestartIndex) error
	// InitSeek is InitIndexed followed by SeekToKeyInBlock(key, before),
	// in one step so that the seek can start at the sample before key
	// without positioning on the block's first cell.
	InitSeek(payload []byte, idx *RestartIndex, key Key, before bool) (int, error)
	// BuildRestartIndex decodes the whole block the seeker was initialized
	// on and returns its RestartIndex, leaving the seeker on the first cell.
	BuildRestartIndex() (*RestartIndex, error)
	// RecordRestartIndex makes the seeker, initialized without an index and
	// on its block's first cell, build the block's RestartIndex as Next
	// steps through it; nothing is decoded for it beyond what Next decodes.
	// A seek that skips a sample abandons it.
	RecordRestartIndex()
	// TakeRestartIndex returns the index recording built once Next has
	// reached the end of the block, or nil, and forgets it.
	TakeRestartIndex() *RestartIndex
	// SeekBeforeRow moves back to the first cell of the last row before
	// row, the step of a reverse scan, and returns RowFound, if the block
	// shows where that row starts: among the cells decoded since Init (or,
	// with a RestartIndex, before them), and not at the block's first cell,
	// since a row may begin in the block before. Otherwise it does not move
	// and says why: RowBeforeBlock, RowAtBlockStart or RowUnknown. The
	// search starts at the current cell, which may be in row or before it.
	SeekBeforeRow(row []byte) (int, error)
	// NextStartsRow reports whether the cell after the current one is in
	// another row, without moving, if the seeker has decoded that cell
	// already (ok is false otherwise, and at the block's last cell). A
	// reverse scan asks it to see that a row ends here without stepping
	// forward and back.
	NextStartsRow() (starts, ok bool)
	// StartsRow reports whether the current cell is in another row than
	// the cell before it in the block, when the decoder saw that for free
	// (ok is false otherwise, and at the block's first cell). A forward
	// scan asks it to see that a row ended without comparing rows.
	StartsRow() (starts, ok bool)
}

// NewBlockEncoder returns an encoder for blocks of encoding enc and format f,
// ready for its first cell. NONE, PREFIX, FAST_DIFF and ROW_INDEX_V1 are
// supported; their output is byte for byte what HBase writes (with
// TAGS_COMPRESSED off).
func NewBlockEncoder(enc DataBlockEncoding, f BlockFormat) (BlockEncoder, error) {
	var e BlockEncoder
	switch enc {
	case EncodingNone:
		e = &noneEncoder{encoderBase: encoderBase{f: f}}
	case EncodingPrefix:
		e = &prefixEncoder{encoderBase: encoderBase{f: f}}
	case EncodingFastDiff:
		e = &fastDiffEncoder{encoderBase: encoderBase{f: f}}
	case EncodingRowIndexV1:
		e = &rowIndexEncoder{noneEncoder: noneEncoder{encoderBase: encoderBase{f: f}}}
	default:
		return nil, errUnsupportedEncoding(enc)
	}
	e.Reset()
	return e, nil
}

// NewSeeker returns a seeker for blocks of encoding enc and format f whose
// keys are ordered by cmp. Call Init before anything else.
func NewSeeker(enc DataBlockEncoding, f BlockFormat, cmp *Comparer) (Seeker, error) {
	switch enc {
	case EncodingNone, EncodingPrefix, EncodingFastDiff, EncodingRowIndexV1:
	default:
		return nil, errUnsupportedEncoding(enc)
	}
	if cmp == nil {
		return nil, errors.AssertionFailedf("encoding: NewSeeker needs a comparer")
	}
	return newSeeker(enc, f, cmp), nil
}

// ErrUnsupportedEncoding marks the error NewBlockEncoder and NewSeeker return
// for an encoding HBase has but we do not implement (DIFF, superseded by
// FAST_DIFF) or an unknown id. A file using one cannot be
// read, but that is not corruption. Test with errors.Is.
var ErrUnsupportedEncoding = errors.New("regionkv: unsupported data block encoding")

func errUnsupportedEncoding(enc DataBlockEncoding) error {
	return errors.Mark(errors.Newf("encoding: data block encoding %s is not supported (only NONE, PREFIX, FAST_DIFF and ROW_INDEX_V1 are)", enc),
		ErrUnsupportedEncoding)
}
