package encoding

import (
	"bytes"
	"encoding/binary"
)

// FAST_DIFF (HBase's FastDiffDeltaEncoder): after the 6-byte header, each
// cell starts with a flag byte
//
//	bits 0-2  number of leading timestamp bytes shared with the previous cell (0..7)
//	bit 3     0x08 same key length as the previous cell
//	bit 4     0x10 same value length
//	bit 5     0x20 same type
//	bit 6     0x40 same value (value omitted)
//
// followed by
//
//	[keyLen (ci)] [valueLen (ci)] common (ci) keyPart tsSuffix [type] [value] [tagsLen (ci) tags] [mvcc]
//
// The first cell of a block has flag 0, common 0 and the whole key as
// keyPart. For later cells common counts shared bytes of rowLen, row, famLen,
// family and qualifier only. If the row differs (common < 2+rowLen), keyPart
// is the rest of rowLen+row followed by the whole qualifier, and the family is
// not written at all: the decoder copies it from the previous key. Otherwise
// keyPart is the rest of the qualifier. tsSuffix is the timestamp bytes after
// the shared ones.
const (
	fastDiffTimestampMask  = 0x07
	fastDiffSameKeyLength  = 0x08
	fastDiffSameValueLen   = 0x10
	fastDiffSameType       = 0x20
	fastDiffSameValue      = 0x40
	fastDiffUnusedFlagBits = 0x80
)

// fastDiffEncoder writes FAST_DIFF blocks.
type fastDiffEncoder struct {
	encoderBase
	cur, prev []byte // serialized keys of the cell being added and the one before
	// The previous cell's value, found where it was last written in buf:
	// a value omitted as "same value" equals the one written before it.
	prevValOff, prevValLen int
}

var _ BlockEncoder = (*fastDiffEncoder)(nil)

func (e *fastDiffEncoder) Encoding() DataBlockEncoding { return EncodingFastDiff }

func (e *fastDiffEncoder) Reset() {
	e.buf = appendEncodedHeader(e.buf[:0], EncodingFastDiff)
	e.count, e.unencoded = 0, 0
	e.prevValOff, e.prevValLen = 0, 0
}

// Add implements BlockEncoder.
//
// REQUIRES: the same as prefixEncoder.Add, including one family per block:
// FAST_DIFF never writes the family of a cell after the first.
func (e *fastDiffEncoder) Add(kv *KeyValue) {
	k := kv.AppendKey(e.cur[:0])
	e.cur = k
	v := kv.Value
	b := e.buf
	if e.count == 0 {
		b = append(b, 0)
		b = AppendCompressedInt(b, uint32(len(k)))
		b = AppendCompressedInt(b, uint32(len(v)))
		b = AppendCompressedInt(b, 0)
		b = append(b, k...)
		e.prevValOff = len(b)
		b = append(b, v...)
	} else {
		pk := Key(e.prev)
		checkSameFamily(kv, pk)
		common := commonKeyPrefix(k, pk, false)
		ts := k[len(k)-TimestampTypeSize : len(k)-TypeSize]
		pts := pk[len(pk)-TimestampTypeSize : len(pk)-TypeSize]
		// At least one timestamp byte is always written.
		tsCommon := commonPrefixLen(ts[:TimestampSize-1], pts[:TimestampSize-1])
		flag := byte(tsCommon)
		if len(k) == len(pk) {
			flag |= fastDiffSameKeyLength
		}
		if len(v) == e.prevValLen {
			flag |= fastDiffSameValueLen
			if bytes.Equal(v, e.buf[e.prevValOff:e.prevValOff+e.prevValLen]) {
				flag |= fastDiffSameValue
			}
		}
		sameType := k[len(k)-1] == pk[len(pk)-1]
		if sameType {
			flag |= fastDiffSameType
		}
		b = append(b, flag)
		if flag&fastDiffSameKeyLength == 0 {
			b = AppendCompressedInt(b, uint32(len(k)))
		}
		if flag&fastDiffSameValueLen == 0 {
			b = AppendCompressedInt(b, uint32(len(v)))
		}
		b = AppendCompressedInt(b, uint32(common))
		if rowEnd := RowLenSize + len(kv.Row); common < rowEnd {
			b = append(b, k[common:rowEnd]...)
			b = append(b, kv.Qualifier...)
		} else {
			// Rows are equal, so common covers the family too.
			b = append(b, k[common:len(k)-TimestampTypeSize]...)
		}
		b = append(b, ts[tsCommon:]...)
		if !sameType {
			b = append(b, k[len(k)-1])
		}
		if flag&fastDiffSameValue == 0 {
			e.prevValOff = len(b)
			b = append(b, v...)
		}
	}
	e.prevValLen = len(v)
	e.buf = appendEncodedSuffix(b, e.f, kv)
	e.cur, e.prev = e.prev, e.cur
	e.count++
	e.unencoded += noneSize(e.f, kv)
}

func (e *fastDiffEncoder) Finish() []byte { return finishEncoded(e.buf, e.unencoded) }

// decodeFastDiff decodes the FAST_DIFF cell at off; ref is the previous cell.
// The key is built field by field from the previous key and the stream;
// every read is bounds-checked and the result must pass ParseKey.
func (s *seeker) decodeFastDiff(dst, ref *cellState, off int) error {
	if !noFastDiffCommon && s.decodeFastDiffCommon(dst, ref, off) {
		return nil
	}
	d := s.data
	if off >= len(d) {
		return s.corruptf(off, "truncated flag")
	}
	flag := d[off]
	p := off + 1
	if flag&fastDiffUnusedFlagBits != 0 || (ref == nil && flag != 0) {
		return s.corruptf(off, "bad flag %#02x", flag)
	}
	var kl, vl, common int
	ok := true
	pk := s.cellKey(ref)
	if flag&fastDiffSameKeyLength != 0 {
		kl = len(pk)
	} else if kl, p, ok = readCompressedInt(d, p); !ok {
		return s.corruptf(off, "bad key length")
	}
	if flag&fastDiffSameValueLen != 0 {
		vl = int(ref.valLen)
	} else if vl, p, ok = readCompressedInt(d, p); !ok {
		return s.corruptf(off, "bad value length")
	}
	if common, p, ok = readCompressedInt(d, p); !ok {
		return s.corruptf(off, "bad common prefix length")
	}
	// The key goes after the keys decoded before it; pk is one of them, so
	// appending leaves it intact (or copies it, on growth). len(k)-base is
	// the length of the key so far.
	base := len(s.keys)
	k := s.keys
	// need checks that n bytes can be read at p.
	need := func(n int) bool { return n >= 0 && n <= len(d)-p }
	if ref == nil {
		if common != 0 {
			return s.corruptf(off, "first cell has common prefix %d", common)
		}
		if !need(kl) {
			return s.corruptf(off, "key of %d bytes overruns the block (%d bytes left)", kl, len(d)-p)
		}
		k = append(k, d[p:p+kl]...)
		p += kl
	} else {
		pQualEnd := len(pk) - TimestampTypeSize
		if kl < KeyInfraSize {
			return s.corruptf(off, "key length %d < %d", kl, KeyInfraSize)
		}
		if common > pQualEnd || common > kl-TimestampTypeSize {
			return s.corruptf(off, "common prefix %d beyond the qualifier (key lengths %d, previous %d)",
				common, kl, len(pk))
		}
		prevRowEnd := RowLenSize + pk.RowLen()
		prevFamily := pk[prevRowEnd : prevRowEnd+FamLenSize+pk.FamilyLen()]
		k = append(k, pk[:common]...)
		if common < prevRowEnd {
			// The row differs: the rest of rowLen+row, then the whole
			// qualifier; the family is the previous cell's.
			rowEnd := prevRowEnd
			if common < RowLenSize {
				if !need(RowLenSize - common) {
					return s.corruptf(off, "truncated row length")
				}
				k = append(k, d[p:p+RowLenSize-common]...)
				p += RowLenSize - common
				rowEnd = RowLenSize + int(binary.BigEndian.Uint16(k[base:]))
			}
			n := rowEnd - (len(k) - base)
			if !need(n) {
				return s.corruptf(off, "row of %d bytes overruns the block (%d bytes left)", rowEnd-RowLenSize, len(d)-p)
			}
			k = append(k, d[p:p+n]...)
			p += n
			k = append(k, prevFamily...)
		}
		n := kl - TimestampTypeSize - (len(k) - base)
		if !need(n) {
			return s.corruptf(off, "qualifier of %d bytes for key length %d overruns the block (%d bytes left)",
				n, kl, len(d)-p)
		}
		k = append(k, d[p:p+n]...)
		p += n
		tsCommon := int(flag & fastDiffTimestampMask)
		k = append(k, pk[pQualEnd:pQualEnd+tsCommon]...)
		n = TimestampSize - tsCommon
		if !need(n) {
			return s.corruptf(off, "truncated timestamp")
		}
		k = append(k, d[p:p+n]...)
		p += n
		if flag&fastDiffSameType != 0 {
			k = append(k, pk[len(pk)-1])
		} else {
			if !need(1) {
				return s.corruptf(off, "truncated type")
			}
			k = append(k, d[p])
			p++
		}
	}
	if _, err := s.parseKey(k[base:len(k):len(k)], off); err != nil {
		return err
	}
	if flag&fastDiffSameValue != 0 {
		if vl != int(ref.valLen) {
			return s.corruptf(off, "same-value flag with value length %d, previous %d", vl, ref.valLen)
		}
		dst.valOff, dst.valLen = ref.valOff, ref.valLen
	} else {
		if !need(vl) {
			return s.corruptf(off, "value length %d overruns the block (%d bytes left)", vl, len(d)-p)
		}
		dst.valOff, dst.valLen = int32(p), int32(vl)
		p += vl
	}
	p, err := s.decodeSuffix(dst, p)
	if err != nil {
		return err
	}
	s.commitKey(dst, k, base)
	dst.offset, dst.next = int32(off), int32(p)
	return nil
}

// noFastDiffCommon turns decodeFastDiffCommon off, so that tests can hold
// it against the general decoder.
var noFastDiffCommon = false

// decodeFastDiffCommon decodes, as decodeFastDiff does, the usual FAST_DIFF
// cell: one after another (ref != nil) that shares at least the row length
// with it, whose lengths take at most two bytes each and whose file has no
// tags. It reads each length once, builds the key in place with a copy per
// field and checks it without parsing it again, and reads the mvcc itself:
// 72 against 82 ns per cell of the peer harness's (BenchmarkDecodeHarnessBlock;
// about 63 since keys as long as the previous one start as its copy),
// and a cell is decoded for every row a scan reads and for half a block on
// a Get's cache miss. It reports false for any other cell and any cell that
// does not check out, having changed nothing of s but bytes past
// len(s.keys), and perhaps fields of dst, all of which decodeFastDiff then
// sets or discards with the cell: the two agree on every input
// (FuzzFastDiffCommon).
func (s *seeker) decodeFastDiffCommon(dst, ref *cellState, off int) bool {
	d := s.data
	if ref == nil || s.f.IncludesTags || off >= len(d) {
		return false
	}
	flag := d[off]
	if flag&fastDiffUnusedFlagBits != 0 {
		return false
	}
	pk := s.keys[ref.keyOff : ref.keyOff+ref.keyLen]
	p := off + 1
	kl, vl := len(pk), int(ref.valLen)
	var ok bool
	if flag&fastDiffSameKeyLength == 0 {
		if kl, p, ok = shortCompressedInt(d, p); !ok {
			return false
		}
	}
	if flag&fastDiffSameValueLen == 0 {
		if vl, p, ok = shortCompressedInt(d, p); !ok {
			return false
		}
	}
	common := 0
	if common, p, ok = shortCompressedInt(d, p); !ok {
		return false
	}
	pQualEnd := len(pk) - TimestampTypeSize
	// A valid cell takes at most len(pk) key bytes from pk and the rest
	// from the stream, which bounds kl before s.keys grows by it.
	if kl < KeyInfraSize || kl > len(pk)+len(d)-p || common < RowLenSize || common > pQualEnd ||
		common > kl-TimestampTypeSize {
		return false
	}
	prevRowEnd := RowLenSize + int(binary.BigEndian.Uint16(pk))
	base := len(s.keys)
	keys := s.keys
	if cap(keys)-base < kl {
		keys = append(keys[:cap(keys)], make([]byte, kl)...)
	}
	keys = keys[:base+kl]
	k := keys[base:]
	// A key as long as pk's (the usual) starts as a copy of pk: what it
	// shares with pk is then in place, and only the stream's bytes are
	// copied after it, one memmove fewer per shared field.
	same := kl == len(pk)
	pos := common
	if same {
		copy(k, pk)
	} else {
		copy(k, pk[:common])
	}
	if common < prevRowEnd {
		// The row differs (its length does not): the rest of it from the
		// stream, then the previous cell's family, whole.
		n := prevRowEnd - common
		if n > len(d)-p {
			return false
		}
		copy(k[pos:prevRowEnd], d[p:p+n])
		p += n
		famEnd := prevRowEnd + FamLenSize + int(pk[prevRowEnd])
		if famEnd > kl-TimestampTypeSize {
			return false
		}
		if !same {
			copy(k[prevRowEnd:famEnd], pk[prevRowEnd:famEnd])
		}
		pos = famEnd
	}
	// The rest of family and qualifier (same row) or the qualifier; then
	// the timestamp's new bytes after those it shares, and the type.
	tsCommon := int(flag & fastDiffTimestampMask)
	n := kl - TimestampTypeSize - pos
	m := TimestampSize - tsCommon
	typ := 0
	if flag&fastDiffSameType == 0 {
		typ = 1
	}
	if n < 0 || n+m+typ > len(d)-p {
		return false
	}
	copy(k[pos:pos+n], d[p:p+n])
	p += n
	pos += n
	if !same {
		// (With same, pos is pQualEnd.)
		copy(k[pos:pos+tsCommon], pk[pQualEnd:pQualEnd+tsCommon])
	}
	copy(k[pos+tsCommon:pos+TimestampSize], d[p:p+m])
	p += m
	if typ == 0 {
		k[kl-1] = pk[len(pk)-1]
	} else {
		k[kl-1] = d[p]
		p++
	}
	// What ParseKey checks: the row's length is pk's, so only the family
	// (from the stream when the row is the same) can overrun.
	if prevRowEnd+FamLenSize+int(k[prevRowEnd]) > kl-TimestampTypeSize {
		return false
	}
	if flag&fastDiffSameValue != 0 {
		if vl != int(ref.valLen) {
			return false
		}
		dst.valOff, dst.valLen = ref.valOff, ref.valLen
	} else {
		if vl > len(d)-p {
			return false
		}
		dst.valOff, dst.valLen = int32(p), int32(vl)
		p += vl
	}
	dst.tagsOff, dst.tagsLen, dst.seq = int32(p), 0, 0
	if s.f.IncludesMvcc {
		// A Hadoop VLong: one byte for -112..127, else a length byte and
		// up to 8 big-endian bytes; a negative one is corrupt.
		if p >= len(d) {
			return false
		}
		first := int8(d[p])
		p++
		switch {
		case first >= 0:
			dst.seq = SeqNum(first)
		case first < -120 || first >= -112:
			return false // negative
		default:
			size := int(-112 - int(first))
			if size > len(d)-p {
				return false
			}
			var u uint64
			for _, c := range d[p : p+size] {
				u = u<<8 | uint64(c)
			}
			if int64(u) < 0 {
				return false
			}
			dst.seq = SeqNum(u)
			p += size
		}
	}
	s.commitKey(dst, keys, base)
	dst.offset, dst.next = int32(off), int32(p)
	// The row length is pk's: the row is pk's when the shared prefix
	// covers it, and another when the first byte after the prefix differs
	// (an encoder need not share all it could: then it is compared).
	switch {
	case common >= prevRowEnd:
		dst.rowRel = rowSame
	case k[common] != pk[common]:
		dst.rowRel = rowNew
	}
	return true
}

// shortCompressedInt reads a compressed int of one or two bytes at d[p:];
// ok is false for a longer or truncated one, which readCompressedInt reads.
func shortCompressedInt(d []byte, p int) (v, next int, ok bool) {
	if p < len(d) {
		if b := d[p]; b < 0x80 {
			return int(b), p + 1, true
		} else if p+1 < len(d) && d[p+1] < 0x80 {
			return int(b&0x7f) | int(d[p+1])<<7, p + 2, true
		}
	}
	return 0, p, false
}
