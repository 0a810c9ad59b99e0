package encoding

// Two integer encodings appear in HBase's formats:
//
//   - Hadoop's VLong/VInt (WritableUtils.writeVLong): one byte for values in
//     [-112, 127]; otherwise a length byte (which also carries the sign) and
//     1..8 big-endian bytes. Used for the mvcc timestamp of cells and for
//     lengths written by Bytes.writeByteArray.
//   - HBase's "compressed int" (ByteBufferUtils.putCompressedInt): unsigned
//     base-128, least-significant group first, high bit set on every byte but
//     the last. Used by PREFIX and FAST_DIFF.

// VLongLen returns the number of bytes AppendVLong writes for v.
func VLongLen(v int64) int {
	if v >= -112 && v <= 127 {
		return 1
	}
	if v < 0 {
		v = ^v
	}
	n := 0
	for u := uint64(v); u != 0; u >>= 8 {
		n++
	}
	return n + 1
}

// AppendVLong appends v in Hadoop's VLong encoding.
func AppendVLong(dst []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(dst, byte(int8(v)))
	}
	first := int64(-112)
	if v < 0 {
		v = ^v
		first = -120
	}
	n := 0
	for u := uint64(v); u != 0; u >>= 8 {
		n++
	}
	dst = append(dst, byte(int8(first-int64(n))))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(uint64(v)>>(uint(i)*8)))
	}
	return dst
}

// DecodeVLong decodes a Hadoop VLong from the start of b. It returns the value
// and the number of bytes read, or n <= 0 if b is too short.
func DecodeVLong(b []byte) (v int64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	first := int8(b[0])
	if first >= -112 {
		return int64(first), 1
	}
	neg := first < -120
	var size int
	if neg {
		size = int(-119 - int(first))
	} else {
		size = int(-111 - int(first))
	}
	if len(b) < size {
		return 0, -1
	}
	var u uint64
	for i := 1; i < size; i++ {
		u = u<<8 | uint64(b[i])
	}
	if neg {
		return ^int64(u), size
	}
	return int64(u), size
}

// CompressedIntLen returns the number of bytes AppendCompressedInt writes for v.
func CompressedIntLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// AppendCompressedInt appends v as HBase's compressed int.
func AppendCompressedInt(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// DecodeCompressedInt decodes a compressed int from the start of b. It returns
// n <= 0 if b is truncated or the encoding is longer than five bytes, which
// HBase's reader rejects too.
func DecodeCompressedInt(b []byte) (v uint32, n int) {
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, -1
}
