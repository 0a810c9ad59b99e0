package encoding

import "encoding/binary"

// Tag types HBase assigns (TagType.java). Part of the format.
const (
	TagTypeTTL byte = 8 // value: 8-byte big-endian time to live in milliseconds
)

// AppendTag appends one tag in HBase's layout: tagLen uint16 (type byte plus
// value), type, value.
func AppendTag(dst []byte, typ byte, value []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(1+len(value)))
	dst = append(dst, typ)
	return append(dst, value...)
}

// FindTag returns the value of the first tag of type typ in a serialized
// tags region, and whether there was one. Malformed regions find nothing.
func FindTag(tags []byte, typ byte) ([]byte, bool) {
	for len(tags) >= 3 {
		n := int(binary.BigEndian.Uint16(tags))
		if n < 1 || n > len(tags)-2 {
			return nil, false
		}
		if tags[2] == typ {
			return tags[3 : 2+n], true
		}
		tags = tags[2+n:]
	}
	return nil, false
}

// CellTTL returns a cell's TTL tag in milliseconds, if it has a valid one.
func CellTTL(tags []byte) (int64, bool) {
	v, ok := FindTag(tags, TagTypeTTL)
	if !ok || len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// Expired reports whether a cell is past its family TTL (oldestTS is the
// oldest live timestamp, math.MinInt64 for none) or its own TTL tag, at
// now (milliseconds).
func (kv *KeyValue) Expired(oldestTS, now int64) bool {
	if kv.Timestamp < oldestTS {
		return true
	}
	if len(kv.Tags) > 0 {
		if ttl, ok := CellTTL(kv.Tags); ok && ttl < 1<<62 && kv.Timestamp+ttl <= now {
			return true
		}
	}
	return false
}
