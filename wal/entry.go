package wal

import (
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"google.golang.org/protobuf/encoding/protowire"
)

// Key is HBase's WALKeyImpl: what an entry is about and when it was written.
// Its fields are those of HBase's WALKey protobuf message (WAL.proto) that
// RegionKV uses; other fields of entries written elsewhere are skipped.
type Key struct {
	// EncodedRegionName is the region's encoded name (field 1).
	EncodedRegionName []byte
	// TableName is the table's name, "namespace:qualifier" or just the
	// qualifier in the default namespace (field 2).
	TableName []byte
	// SeqNum is the region sequence id of every cell of the entry
	// (log_sequence_number, field 3), which is the mvcc write number.
	SeqNum uint64
	// WriteTime is when the entry was appended, in milliseconds since the
	// epoch (field 4). Append fills in the current time if it is zero.
	WriteTime int64
	// OrigSeqNum is the sequence id the entry had in the region it was
	// first written for, when it is being replayed into another region
	// (orig_sequence_number, field 11); 0 otherwise.
	OrigSeqNum uint64
}

// Edit is HBase's WALEdit: the cells of one mutation batch of one region,
// which share the entry's sequence id.
type Edit struct {
	// Cells to log. Their SeqNum fields are ignored on Append; on replay
	// each is set to the entry's Key.SeqNum.
	Cells []encoding.KeyValue
}

// WALKey field numbers, from HBase's WAL.proto. Part of the format.
const (
	fieldEncodedRegionName  protowire.Number = 1
	fieldTableName          protowire.Number = 2
	fieldLogSequenceNumber  protowire.Number = 3
	fieldWriteTime          protowire.Number = 4
	fieldFollowingKVCount   protowire.Number = 7
	fieldOrigSequenceNumber protowire.Number = 11
)

// validateEdit checks that every cell can be logged and read back.
func validateEdit(k *Key, e *Edit) error {
	if k == nil || e == nil {
		return errors.AssertionFailedf("wal: Append with a nil key or edit")
	}
	if k.SeqNum == 0 {
		// Replay applies only entries above a flushed sequence id, so an
		// entry numbered 0 would never be replayed.
		return errors.AssertionFailedf("wal: Append of an entry without a sequence id")
	}
	for i := range e.Cells {
		kv := &e.Cells[i]
		if err := kv.Validate(); err != nil {
			return errors.Wrapf(err, "wal: cell %d", i)
		}
		if len(kv.Tags) > 0xffff {
			return errors.Newf("wal: cell %d: tags length %d > 65535", i, len(kv.Tags))
		}
	}
	return nil
}

// keySize returns the size of k's WALKey message for an entry of n cells.
func keySize(k *Key, writeTime uint64, n int) int {
	s := protowire.SizeTag(fieldEncodedRegionName) + protowire.SizeBytes(len(k.EncodedRegionName)) +
		protowire.SizeTag(fieldTableName) + protowire.SizeBytes(len(k.TableName)) +
		protowire.SizeTag(fieldLogSequenceNumber) + protowire.SizeVarint(k.SeqNum) +
		protowire.SizeTag(fieldWriteTime) + protowire.SizeVarint(writeTime) +
		protowire.SizeTag(fieldFollowingKVCount) + protowire.SizeVarint(uint64(n))
	if k.OrigSeqNum != 0 {
		s += protowire.SizeTag(fieldOrigSequenceNumber) + protowire.SizeVarint(k.OrigSeqNum)
	}
	return s
}

// appendEntry appends the entry payload for k and e to dst: the WALKey as a
// delimited protobuf message, then the cells in KeyValueCodecWithTags form.
//
// REQUIRES: validateEdit(k, e) == nil.
func appendEntry(dst []byte, k *Key, e *Edit) []byte {
	dst, _ = appendEntryAt(dst, k, e)
	return dst
}

// appendEntryAt is appendEntry that also returns the offset in dst of the
// log_sequence_number varint, for PreparedEntry.
func appendEntryAt(dst []byte, k *Key, e *Edit) (_ []byte, seqOff int) {
	wt := uint64(k.WriteTime)
	if k.WriteTime == 0 {
		wt = uint64(time.Now().UnixMilli())
	}
	dst = protowire.AppendVarint(dst, uint64(keySize(k, wt, len(e.Cells))))
	dst = protowire.AppendTag(dst, fieldEncodedRegionName, protowire.BytesType)
	dst = protowire.AppendBytes(dst, k.EncodedRegionName)
	dst = protowire.AppendTag(dst, fieldTableName, protowire.BytesType)
	dst = protowire.AppendBytes(dst, k.TableName)
	dst = protowire.AppendTag(dst, fieldLogSequenceNumber, protowire.VarintType)
	seqOff = len(dst)
	dst = protowire.AppendVarint(dst, k.SeqNum)
	dst = protowire.AppendTag(dst, fieldWriteTime, protowire.VarintType)
	dst = protowire.AppendVarint(dst, wt)
	dst = protowire.AppendTag(dst, fieldFollowingKVCount, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(len(e.Cells)))
	if k.OrigSeqNum != 0 {
		dst = protowire.AppendTag(dst, fieldOrigSequenceNumber, protowire.VarintType)
		dst = protowire.AppendVarint(dst, k.OrigSeqNum)
	}
	for i := range e.Cells {
		dst = encoding.AppendCellBlock(dst, &e.Cells[i], true)
	}
	return dst, seqOff
}

// decodeEntry decodes an entry payload. The key's and the cells' slices
// alias payload. Errors are marked as corruption; the caller adds where.
func decodeEntry(payload []byte) (*Key, *Edit, error) {
	msgLen, n := protowire.ConsumeVarint(payload)
	if n < 0 {
		return nil, nil, encoding.CorruptionErrorf("WALKey length: %v", protowire.ParseError(n))
	}
	if msgLen > uint64(len(payload)-n) {
		return nil, nil, encoding.CorruptionErrorf("WALKey length %d exceeds the %d bytes of the entry", msgLen, len(payload)-n)
	}
	msg, cells := payload[n:n+int(msgLen)], payload[n+int(msgLen):]
	k := &Key{}
	var count uint64
	var seen [12]bool
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, nil, encoding.CorruptionErrorf("WALKey: %v", protowire.ParseError(n))
		}
		msg = msg[n:]
		want := protowire.Type(-1)
		switch num {
		case fieldEncodedRegionName, fieldTableName:
			want = protowire.BytesType
		case fieldLogSequenceNumber, fieldWriteTime, fieldFollowingKVCount, fieldOrigSequenceNumber:
			want = protowire.VarintType
		}
		if want >= 0 && typ != want {
			return nil, nil, encoding.CorruptionErrorf("WALKey field %d has wire type %d, want %d", num, typ, want)
		}
		switch want {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return nil, nil, encoding.CorruptionErrorf("WALKey field %d: %v", num, protowire.ParseError(n))
			}
			msg = msg[n:]
			v = v[:len(v):len(v)]
			if num == fieldEncodedRegionName {
				k.EncodedRegionName = v
			} else {
				k.TableName = v
			}
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(msg)
			if n < 0 {
				return nil, nil, encoding.CorruptionErrorf("WALKey field %d: %v", num, protowire.ParseError(n))
			}
			msg = msg[n:]
			switch num {
			case fieldLogSequenceNumber:
				k.SeqNum = v
			case fieldWriteTime:
				k.WriteTime = int64(v)
			case fieldFollowingKVCount:
				count = v
			case fieldOrigSequenceNumber:
				k.OrigSeqNum = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return nil, nil, encoding.CorruptionErrorf("WALKey field %d: %v", num, protowire.ParseError(n))
			}
			msg = msg[n:]
		}
		if int(num) < len(seen) {
			seen[num] = true
		}
	}
	for _, f := range []protowire.Number{fieldEncodedRegionName, fieldTableName, fieldLogSequenceNumber, fieldWriteTime} {
		if !seen[f] {
			return nil, nil, encoding.CorruptionErrorf("WALKey lacks required field %d", f)
		}
	}
	// Every cell takes at least 12 bytes, which bounds the allocation.
	if count > uint64(len(cells)/12) {
		return nil, nil, encoding.CorruptionErrorf("WALKey following_kv_count %d, but only %d bytes of cells", count, len(cells))
	}
	e := &Edit{}
	if count > 0 {
		e.Cells = make([]encoding.KeyValue, 0, count)
	}
	var it encoding.CellBlockIter
	it.Init(cells, true)
	for {
		var kv encoding.KeyValue
		ok, err := it.Next(&kv)
		if err != nil {
			return nil, nil, errors.Wrapf(err, "cell %d", len(e.Cells))
		}
		if !ok {
			break
		}
		if uint64(len(e.Cells)) == count {
			return nil, nil, encoding.CorruptionErrorf("more cells than following_kv_count %d", count)
		}
		kv.SeqNum = encoding.SeqNum(k.SeqNum)
		e.Cells = append(e.Cells, kv)
	}
	if uint64(len(e.Cells)) != count {
		return nil, nil, encoding.CorruptionErrorf("%d cells, but following_kv_count %d", len(e.Cells), count)
	}
	return k, e, nil
}
