package encoding

import (
	"bytes"
	"encoding/binary"

	"github.com/cockroachdb/errors"
)

// PREFIX (HBase's PrefixKeyDeltaEncoder): after the 6-byte header, each cell is
//
//	+-------------------+---------------+-------------+-----------+-------+--------------------+--------+
//	| keySuffixLen (ci) | valueLen (ci) | common (ci) | keySuffix | value | [tagsLen (ci) tags]| [mvcc] |
//	+-------------------+---------------+-------------+-----------+-------+--------------------+--------+
//
// where ci is a compressed int, common is the number of leading key bytes
// shared with the previous cell's key (0 for the first cell) and keySuffix is
// key[common:]. Decoding needs no knowledge of the key's fields: the key is
// the previous key's first common bytes followed by the suffix.

// prefixEncoder writes PREFIX blocks.
type prefixEncoder struct {
	encoderBase
	cur, prev []byte // serialized keys of the cell being added and the one before
}

var _ BlockEncoder = (*prefixEncoder)(nil)

func (e *prefixEncoder) Encoding() DataBlockEncoding { return EncodingPrefix }

func (e *prefixEncoder) Reset() {
	e.buf = appendEncodedHeader(e.buf[:0], EncodingPrefix)
	e.count, e.unencoded = 0, 0
}

// Add implements BlockEncoder.
//
// REQUIRES: kv.Validate() == nil, len(kv.Tags) <= 65535, kv.SeqNum <=
// MaxInt64, and every cell of the block has the same family (true of every
// HBase store). The format cannot express a family change: HBase leaves the
// family out of the comparison that finds the shared prefix, so Add panics
// with an assertion failure rather than write a block that decodes wrongly.
func (e *prefixEncoder) Add(kv *KeyValue) {
	e.cur = kv.AppendKey(e.cur[:0])
	common := 0
	if e.count > 0 {
		checkSameFamily(kv, e.prev)
		common = commonKeyPrefix(e.cur, e.prev, true)
	}
	b := AppendCompressedInt(e.buf, uint32(len(e.cur)-common))
	b = AppendCompressedInt(b, uint32(len(kv.Value)))
	b = AppendCompressedInt(b, uint32(common))
	b = append(b, e.cur[common:]...)
	b = append(b, kv.Value...)
	e.buf = appendEncodedSuffix(b, e.f, kv)
	e.cur, e.prev = e.prev, e.cur
	e.count++
	e.unencoded += noneSize(e.f, kv)
}

func (e *prefixEncoder) Finish() []byte { return finishEncoded(e.buf, e.unencoded) }

// appendEncodedHeader appends the encoding id and a placeholder for the
// unencoded size, which Finish fills in (HBase patches it the same way).
func appendEncodedHeader(dst []byte, enc DataBlockEncoding) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(enc))
	return append(dst, 0, 0, 0, 0)
}

// finishEncoded patches the unencoded size into an encoded payload.
func finishEncoded(buf []byte, unencoded int) []byte {
	if len(buf) < encodedHeaderSize {
		// Finish before Reset: the zero encoder has no header yet.
		panic(errors.AssertionFailedf("encoding: Finish called before Reset"))
	}
	binary.BigEndian.PutUint32(buf[2:], uint32(unencoded))
	return buf
}

// appendEncodedSuffix appends the per-cell suffix of PREFIX and FAST_DIFF:
// tags length as a compressed int and the tags, uncompressed (we never write
// TAGS_COMPRESSED files), then the mvcc as a Hadoop VLong.
func appendEncodedSuffix(b []byte, f BlockFormat, kv *KeyValue) []byte {
	if f.IncludesTags {
		b = AppendCompressedInt(b, uint32(len(kv.Tags)))
		b = append(b, kv.Tags...)
	}
	if f.IncludesMvcc {
		b = AppendVLong(b, int64(kv.SeqNum))
	}
	return b
}

// checkSameFamily panics if kv's family differs from the previous key's; see
// prefixEncoder.Add.
func checkSameFamily(kv *KeyValue, prev Key) {
	if !bytes.Equal(kv.Family, prev.Family()) {
		panic(errors.AssertionFailedf("encoding: family %q differs from the block's family %q",
			kv.Family, prev.Family()))
	}
}

// commonKeyPrefix returns how many leading bytes of the serialized key cur
// the encoders treat as shared with prev. It is HBase's
// PrivateCellUtil.findCommonPrefixInFlatKey(cur, prev, bypassFamily=true,
// withTsType): the result equals the true common prefix except that the
// family is assumed equal (the same store) and comparison stops at the first
// field that differs. With withTsType false (FAST_DIFF) it never extends
// into the timestamp.
func commonKeyPrefix(cur, prev Key, withTsType bool) int {
	crl, prl := cur.RowLen(), prev.RowLen()
	if crl != prl {
		// Only the 2-byte row lengths can be shared, and not both bytes.
		if cur[0] == prev[0] {
			return 1
		}
		return 0
	}
	n := commonPrefixLen(cur[RowLenSize:RowLenSize+crl], prev[RowLenSize:RowLenSize+prl])
	if n < crl {
		return RowLenSize + n
	}
	common := RowLenSize + crl + FamLenSize + cur.FamilyLen()
	cq, pq := cur.Qualifier(), prev.Qualifier()
	n = commonPrefixLen(cq, pq)
	common += n
	if !withTsType || n != len(cq) || n != len(pq) {
		return common
	}
	ct, pt := cur[len(cur)-TimestampTypeSize:], prev[len(prev)-TimestampTypeSize:]
	n = commonPrefixLen(ct[:TimestampSize], pt[:TimestampSize])
	common += n
	if n == TimestampSize && ct[TimestampSize] == pt[TimestampSize] {
		common++
	}
	return common
}

// commonPrefixLen returns the length of the longest common prefix of a and b.
func commonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// decodePrefix decodes the PREFIX cell at off; ref is the previous cell.
func (s *seeker) decodePrefix(dst, ref *cellState, off int) error {
	d := s.data
	suffix, p, ok := readCompressedInt(d, off)
	if !ok {
		return s.corruptf(off, "bad key length")
	}
	vl, p, ok := readCompressedInt(d, p)
	if !ok {
		return s.corruptf(off, "bad value length")
	}
	common, p, ok := readCompressedInt(d, p)
	if !ok {
		return s.corruptf(off, "bad common prefix length")
	}
	prevKey := s.cellKey(ref)
	if common > len(prevKey) {
		return s.corruptf(off, "common prefix %d longer than the previous key (%d bytes)", common, len(prevKey))
	}
	if suffix > len(d)-p {
		return s.corruptf(off, "key suffix of %d bytes overruns the block (%d bytes left)", suffix, len(d)-p)
	}
	// The key goes after the keys decoded before it; prevKey is one of
	// them, so appending leaves it intact (or copies it, on growth).
	base := len(s.keys)
	k := append(s.keys, prevKey[:common]...)
	k = append(k, d[p:p+suffix]...)
	if _, err := s.parseKey(k[base:len(k):len(k)], off); err != nil {
		return err
	}
	p += suffix
	if vl > len(d)-p {
		return s.corruptf(off, "value length %d overruns the block (%d bytes left)", vl, len(d)-p)
	}
	dst.valOff, dst.valLen = int32(p), int32(vl)
	p, err := s.decodeSuffix(dst, p+vl)
	if err != nil {
		return err
	}
	s.commitKey(dst, k, base)
	dst.offset, dst.next = int32(off), int32(p)
	return nil
}
