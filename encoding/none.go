package encoding

import "encoding/binary"

// NONE: the payload is the cells one after another, each
//
//	+--------------+----------------+-----+-------+----------------+------+------------+
//	| keyLen (4B)  | valueLen (4B)  | key | value | [tagsLen (2B)  | tags]| [mvcc]     |
//	+--------------+----------------+-----+-------+----------------+------+------------+
//
// The tags part is there iff the file includes tags (even for a cell without
// tags, which then has tagsLen 0), and the mvcc, a Hadoop VLong, iff the file
// includes mvcc (HFileReaderImpl.readKeyValueLen). There is no block header:
// HFile tells a NONE block by its DATABLK* magic.

// encoderBase holds what every encoder tracks besides its cell format.
type encoderBase struct {
	f         BlockFormat
	buf       []byte
	count     int
	unencoded int
}

// Count implements BlockEncoder.
func (e *encoderBase) Count() int { return e.count }

// UnencodedSize implements BlockEncoder.
func (e *encoderBase) UnencodedSize() int { return e.unencoded }

// EncodedSize implements BlockEncoder.
func (e *encoderBase) EncodedSize() int { return len(e.buf) }

// noneSize returns the size of kv in a NONE block of format f. HBase writes
// this sum into every encoded block so that readers can size buffers.
func noneSize(f BlockFormat, kv *KeyValue) int {
	n := 8 + kv.KeyLen() + len(kv.Value)
	if f.IncludesTags {
		n += 2 + len(kv.Tags)
	}
	if f.IncludesMvcc {
		n += VLongLen(int64(kv.SeqNum))
	}
	return n
}

// noneEncoder writes NONE blocks (HBase's NoneEncoder).
type noneEncoder struct {
	encoderBase
}

var _ BlockEncoder = (*noneEncoder)(nil)

func (e *noneEncoder) Encoding() DataBlockEncoding { return EncodingNone }

func (e *noneEncoder) Reset() {
	e.buf = e.buf[:0]
	e.count, e.unencoded = 0, 0
}

// Add implements BlockEncoder. Tags are dropped if the format has none.
//
// REQUIRES: kv.Validate() == nil, len(kv.Tags) <= 65535, kv.SeqNum <= MaxInt64.
func (e *noneEncoder) Add(kv *KeyValue) {
	start := len(e.buf)
	b := binary.BigEndian.AppendUint32(e.buf, uint32(kv.KeyLen()))
	b = binary.BigEndian.AppendUint32(b, uint32(len(kv.Value)))
	b = kv.AppendKey(b)
	b = append(b, kv.Value...)
	if e.f.IncludesTags {
		b = binary.BigEndian.AppendUint16(b, uint16(len(kv.Tags)))
		b = append(b, kv.Tags...)
	}
	if e.f.IncludesMvcc {
		b = AppendVLong(b, int64(kv.SeqNum))
	}
	e.buf = b
	e.count++
	e.unencoded += len(b) - start
}

func (e *noneEncoder) Finish() []byte { return e.buf }

// decodeNone decodes the NONE cell at off. The key stays in the payload.
func (s *seeker) decodeNone(dst *cellState, off int) error {
	d := s.data
	if len(d)-off < 8 {
		return s.corruptf(off, "%d bytes left, need 8 for the key and value lengths", len(d)-off)
	}
	kl := int32(binary.BigEndian.Uint32(d[off:]))
	vl := int32(binary.BigEndian.Uint32(d[off+4:]))
	p := off + 8
	if kl < 0 || int(kl) > len(d)-p {
		return s.corruptf(off, "key length %d out of range (%d bytes left)", kl, len(d)-p)
	}
	if _, err := s.parseKey(d[p:p+int(kl):p+int(kl)], off); err != nil {
		return err
	}
	dst.keyOff, dst.keyLen = int32(p), kl
	p += int(kl)
	if vl < 0 || int(vl) > len(d)-p {
		return s.corruptf(off, "value length %d out of range (%d bytes left)", vl, len(d)-p)
	}
	dst.valOff, dst.valLen = int32(p), vl
	p += int(vl)
	dst.tagsOff, dst.tagsLen = int32(p), 0
	if s.f.IncludesTags {
		if len(d)-p < 2 {
			return s.corruptf(off, "truncated tags length")
		}
		tl := int(binary.BigEndian.Uint16(d[p:]))
		p += 2
		if tl > len(d)-p {
			return s.corruptf(off, "tags length %d overruns the block (%d bytes left)", tl, len(d)-p)
		}
		dst.tagsOff, dst.tagsLen = int32(p), int32(tl)
		p += tl
	}
	dst.seq = 0
	if s.f.IncludesMvcc {
		seq, q, err := s.readSeqNum(p)
		if err != nil {
			return err
		}
		dst.seq, p = seq, q
	}
	dst.offset, dst.next = int32(off), int32(p)
	return nil
}
