package encoding

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Type is HBase's KeyValue.Type: the byte at the end of every key. The values
// are HBase's on-disk codes.
type Type uint8

// HBase's type codes. They are part of the on-disk format.
const (
	TypeMinimum             Type = 0
	TypePut                 Type = 4
	TypeDelete              Type = 8
	TypeDeleteFamilyVersion Type = 10
	TypeDeleteColumn        Type = 12
	TypeDeleteFamily        Type = 14
	TypeMaximum             Type = 255
)

// String returns HBase's name for the type.
func (t Type) String() string {
	switch t {
	case TypeMinimum:
		return "Minimum"
	case TypePut:
		return "Put"
	case TypeDelete:
		return "Delete"
	case TypeDeleteFamilyVersion:
		return "DeleteFamilyVersion"
	case TypeDeleteColumn:
		return "DeleteColumn"
	case TypeDeleteFamily:
		return "DeleteFamily"
	case TypeMaximum:
		return "Maximum"
	}
	return fmt.Sprintf("UNKNOWN(%d)", uint8(t))
}

// IsDelete reports whether t is one of the four delete marker types.
func (t Type) IsDelete() bool {
	return t == TypeDelete || t == TypeDeleteFamilyVersion || t == TypeDeleteColumn || t == TypeDeleteFamily
}

// SeqNum is a cell's sequence id (HBase's mvcc version / memstoreTS).
type SeqNum uint64

// Timestamps with special meaning, as HBase's HConstants.
const (
	LatestTimestamp int64 = math.MaxInt64 // "now", replaced by the server on write
	OldestTimestamp int64 = math.MinInt64
)

// Sizes of the fixed parts of a key.
const (
	RowLenSize        = 2
	FamLenSize        = 1
	TimestampSize     = 8
	TypeSize          = 1
	KeyInfraSize      = RowLenSize + FamLenSize + TimestampSize + TypeSize // 12
	MaxRowLen         = math.MaxInt16
	MaxFamilyLen      = math.MaxInt8
	TimestampTypeSize = TimestampSize + TypeSize
)

// KeyValue is HBase's Cell: the unit of data. Slices may alias a block or a
// request buffer; see each producer's documentation for their lifetime.
type KeyValue struct {
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64
	Type      Type
	SeqNum    SeqNum
	Value     []byte
	Tags      []byte // serialized tags region, HBase layout; nil if none
}

// KeyLen returns the length of kv's serialized key.
func (kv *KeyValue) KeyLen() int {
	return KeyInfraSize + len(kv.Row) + len(kv.Family) + len(kv.Qualifier)
}

// AppendKey appends kv's serialized key to dst.
func (kv *KeyValue) AppendKey(dst []byte) []byte {
	return AppendKey(dst, kv.Row, kv.Family, kv.Qualifier, kv.Timestamp, kv.Type)
}

// Key returns kv's serialized key in a new slice.
func (kv *KeyValue) Key() Key { return Key(kv.AppendKey(make([]byte, 0, kv.KeyLen()))) }

// Validate checks the limits HBase puts on a cell.
func (kv *KeyValue) Validate() error {
	if len(kv.Row) > MaxRowLen {
		return fmt.Errorf("row length %d > %d", len(kv.Row), MaxRowLen)
	}
	if len(kv.Family) > MaxFamilyLen {
		return fmt.Errorf("family length %d > %d", len(kv.Family), MaxFamilyLen)
	}
	return nil
}

// Clone returns a deep copy of kv in one allocation.
func (kv *KeyValue) Clone() *KeyValue {
	n := len(kv.Row) + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + len(kv.Tags)
	c := &KeyValue{}
	*c, _ = kv.CopyInto(make([]byte, 0, n))
	return c
}

// CopyInto returns a copy of kv whose slices are appended to buf, and buf
// extended; nil slices stay nil. Readers that copy many cells into one
// buffer use it (size buf first: a cell split by a reallocation is still
// correct, but holds on to both arrays).
func (kv *KeyValue) CopyInto(buf []byte) (KeyValue, []byte) {
	var c KeyValue
	buf = kv.CopyTo(&c, buf)
	return c, buf
}

// CopyTo is CopyInto writing the copy to *dst, which must not be kv.
func (kv *KeyValue) CopyTo(dst *KeyValue, buf []byte) []byte {
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		s := len(buf)
		buf = append(buf, b...)
		return buf[s:len(buf):len(buf)]
	}
	dst.Timestamp, dst.Type, dst.SeqNum = kv.Timestamp, kv.Type, kv.SeqNum
	dst.Row, dst.Family, dst.Qualifier = take(kv.Row), take(kv.Family), take(kv.Qualifier)
	dst.Value, dst.Tags = take(kv.Value), take(kv.Tags)
	return buf
}

// CopyFilledTo is CopyTo for a cell that key filled (Key.Fill): the row,
// family and qualifier, which lie together in key with only the family's
// length byte between them, are copied in one move, and the family's
// length byte with them; buf then grows by FilledCopySize(kv) bytes.
func (kv *KeyValue) CopyFilledTo(dst *KeyValue, key Key, buf []byte) []byte {
	names := key[RowLenSize : len(key)-TimestampTypeSize]
	s := len(buf)
	buf = append(append(buf, names...), kv.Value...)
	m := buf[s:]
	fs := len(kv.Row) + FamLenSize
	fe, qe := fs+len(kv.Family), len(names)
	dst.Row, dst.Family, dst.Qualifier = m[:fs-FamLenSize:fs-FamLenSize], m[fs:fe:fe], m[fe:qe:qe]
	dst.Value = m[qe:len(m):len(m)]
	if kv.Value == nil {
		dst.Value = nil
	}
	dst.Timestamp, dst.Type, dst.SeqNum, dst.Tags = kv.Timestamp, kv.Type, kv.SeqNum, nil
	if kv.Tags != nil {
		p := len(buf)
		buf = append(buf, kv.Tags...)
		dst.Tags = buf[p:len(buf):len(buf)]
	}
	return buf
}

// FilledCopySize is how many bytes CopyFilledTo takes for kv.
func FilledCopySize(kv *KeyValue) int {
	return len(kv.Row) + FamLenSize + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + len(kv.Tags)
}

// String formats kv as HBase's KeyValue.toString: row/family:qualifier/ts/Type/vlen=N/seqid=N.
func (kv *KeyValue) String() string {
	var sb strings.Builder
	sb.WriteString(FormatBytes(kv.Row))
	sb.WriteByte('/')
	sb.WriteString(FormatBytes(kv.Family))
	sb.WriteByte(':')
	sb.WriteString(FormatBytes(kv.Qualifier))
	fmt.Fprintf(&sb, "/%s/%s/vlen=%d/seqid=%d", FormatTimestamp(kv.Timestamp), kv.Type, len(kv.Value), kv.SeqNum)
	return sb.String()
}

// FormatTimestamp prints a timestamp as HBase does, LATEST_TIMESTAMP by name.
func FormatTimestamp(ts int64) string {
	if ts == LatestTimestamp {
		return "LATEST_TIMESTAMP"
	}
	return fmt.Sprint(ts)
}

// FormatBytes prints b as HBase's Bytes.toStringBinary: printable ASCII as is,
// everything else as \xNN.
func FormatBytes(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= ' ' && c <= '~' && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02X", c)
		}
	}
	return sb.String()
}

// AppendKey appends a serialized key built from its parts.
func AppendKey(dst, row, family, qualifier []byte, ts int64, t Type) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(row)))
	dst = append(dst, row...)
	dst = append(dst, byte(len(family)))
	dst = append(dst, family...)
	dst = append(dst, qualifier...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	return append(dst, byte(t))
}

// Key is a serialized key. Accessors assume a key that passed ParseKey (or was
// built by AppendKey); they do not re-check lengths.
type Key []byte

// ParseKey checks that b is a well-formed key and returns it as a Key.
func ParseKey(b []byte) (Key, error) {
	if len(b) < KeyInfraSize {
		return nil, CorruptionErrorf("key of %d bytes is shorter than %d", len(b), KeyInfraSize)
	}
	rl := int(binary.BigEndian.Uint16(b))
	if rl > MaxRowLen || RowLenSize+rl+FamLenSize > len(b)-TimestampTypeSize {
		return nil, CorruptionErrorf("key of %d bytes has row length %d", len(b), rl)
	}
	fl := int(b[RowLenSize+rl])
	if RowLenSize+rl+FamLenSize+fl > len(b)-TimestampTypeSize {
		return nil, CorruptionErrorf("key of %d bytes has row length %d and family length %d", len(b), rl, fl)
	}
	return Key(b), nil
}

// RowLen returns the row length.
func (k Key) RowLen() int { return int(binary.BigEndian.Uint16(k)) }

// Row returns the row bytes.
func (k Key) Row() []byte { rl := k.RowLen(); return k[RowLenSize : RowLenSize+rl : RowLenSize+rl] }

// FamilyLen returns the family length.
func (k Key) FamilyLen() int { return int(k[RowLenSize+k.RowLen()]) }

// Family returns the family bytes.
func (k Key) Family() []byte {
	s := RowLenSize + k.RowLen() + FamLenSize
	e := s + int(k[s-1])
	return k[s:e:e]
}

// Qualifier returns the qualifier bytes.
func (k Key) Qualifier() []byte {
	rl := k.RowLen()
	s := RowLenSize + rl + FamLenSize + int(k[RowLenSize+rl])
	e := len(k) - TimestampTypeSize
	return k[s:e:e]
}

// Timestamp returns the timestamp.
func (k Key) Timestamp() int64 { return int64(binary.BigEndian.Uint64(k[len(k)-TimestampTypeSize:])) }

// Type returns the type byte.
func (k Key) Type() Type { return Type(k[len(k)-1]) }

// IsLastOnRow reports whether k is a "last on row" fake key: empty family and
// qualifier and type Minimum. Such keys sort after every real key of the row.
func (k Key) IsLastOnRow() bool {
	return k.Type() == TypeMinimum && len(k) == KeyInfraSize+k.RowLen()
}

// String formats the key as HBase's KeyValue.keyToString.
func (k Key) String() string {
	if _, err := ParseKey(k); err != nil {
		return fmt.Sprintf("<malformed key %x>", []byte(k))
	}
	return FormatBytes(k.Row()) + "/" + FormatBytes(k.Family()) + ":" + FormatBytes(k.Qualifier()) +
		"/" + FormatTimestamp(k.Timestamp()) + "/" + k.Type().String()
}

// KeyValue returns a KeyValue whose slices alias k, with the given value.
func (k Key) KeyValue(value []byte) KeyValue {
	var kv KeyValue
	k.Fill(&kv, value)
	return kv
}

// Fill sets kv's row, family, qualifier, timestamp and type from k (the
// slices alias k) and its value to value, reading k's lengths once; it
// leaves Tags and SeqNum alone. Readers that turn every cell of a block into
// a KeyValue use it instead of KeyValue, which builds and copies a struct.
func (k Key) Fill(kv *KeyValue, value []byte) {
	rl := int(binary.BigEndian.Uint16(k))
	fs := RowLenSize + rl + FamLenSize
	fe := fs + int(k[fs-1])
	qe := len(k) - TimestampTypeSize
	kv.Row = k[RowLenSize : RowLenSize+rl : RowLenSize+rl]
	kv.Family = k[fs:fe:fe]
	kv.Qualifier = k[fe:qe:qe]
	kv.Timestamp = int64(binary.BigEndian.Uint64(k[qe:]))
	kv.Type = Type(k[len(k)-1])
	kv.Value = value
}

// FirstOnRow is the smallest key of row: empty family and qualifier,
// LATEST_TIMESTAMP, type Maximum.
func FirstOnRow(dst, row []byte) Key {
	return AppendKey(dst, row, nil, nil, LatestTimestamp, TypeMaximum)
}

// LastOnRow is a key greater than every real key of row.
func LastOnRow(dst, row []byte) Key {
	return AppendKey(dst, row, nil, nil, OldestTimestamp, TypeMinimum)
}

// FirstOnRowCol is the smallest key of the column row/family:qualifier.
func FirstOnRowCol(dst, row, family, qualifier []byte) Key {
	return AppendKey(dst, row, family, qualifier, LatestTimestamp, TypeMaximum)
}

// LastOnRowCol is a key greater than every real key of the column.
func LastOnRowCol(dst, row, family, qualifier []byte) Key {
	return AppendKey(dst, row, family, qualifier, OldestTimestamp, TypeMinimum)
}
