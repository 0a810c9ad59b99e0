package hfile

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/regionkv/regionkv/encoding"
	"google.golang.org/protobuf/encoding/protowire"
)

// File info keys, as HBase names them. Keys starting with "hfile." are
// reserved for the HFile layer; the others are written by the store layer.
const (
	FileInfoLastKey          = "hfile.LASTKEY"
	FileInfoAvgKeyLen        = "hfile.AVG_KEY_LEN"
	FileInfoAvgValueLen      = "hfile.AVG_VALUE_LEN"
	FileInfoCreateTime       = "hfile.CREATE_TIME_TS"
	FileInfoKeyOfBiggestCell = "hfile.KEY_OF_BIGGEST_CELL"
	FileInfoLenOfBiggestCell = "hfile.LEN_OF_BIGGEST_CELL"
	FileInfoMaxTagsLen       = "hfile.MAX_TAGS_LEN"
	FileInfoTagsCompressed   = "hfile.TAGS_COMPRESSED"
	FileInfoMaxMemstoreTS    = "MAX_MEMSTORE_TS_KEY"
	FileInfoKeyValueVersion  = "KEY_VALUE_VERSION"
	FileInfoDataBlockEnc     = "DATA_BLOCK_ENCODING"
	FileInfoMaxSeqID         = "MAX_SEQ_ID_KEY"
	FileInfoMajorCompaction  = "MAJOR_COMPACTION_KEY"
	FileInfoTimeRange        = "TIMERANGE"
	FileInfoEarliestPutTS    = "EARLIEST_PUT_TS"
	FileInfoBloomType        = "BLOOM_FILTER_TYPE"
	FileInfoLastBloomKey     = "LAST_BLOOM_KEY"
	FileInfoDeleteFamilyCnt  = "DELETE_FAMILY_COUNT"
)

// FileInfo is the file info block: a sorted map from key to raw value bytes.
type FileInfo map[string][]byte

// Int32 returns a 4-byte big-endian value.
func (fi FileInfo) Int32(k string) (int32, bool) {
	v, ok := fi[k]
	if !ok || len(v) != 4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(v)), true
}

// Int64 returns an 8-byte big-endian value.
func (fi FileInfo) Int64(k string) (int64, bool) {
	v, ok := fi[k]
	if !ok || len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// TimeRange returns the TIMERANGE entry: the least and greatest timestamp of
// the file's cells (HBase's TimeRangeTracker), in either of HBase's layouts:
// two 8-byte big-endian longs, the Writable form HBase 1 wrote and we write,
// or, from HBase 2, the PB magic and a TimeRangeTracker message (from = 1,
// to = 2, both uint64). ok is false if the entry is missing or unreadable, or
// its range is empty.
func (fi FileInfo) TimeRange() (minTS, maxTS int64, ok bool) {
	v, ok := fi[FileInfoTimeRange]
	if !ok {
		return 0, 0, false
	}
	if len(v) == 16 && !bytes.HasPrefix(v, []byte(encoding.PBMagic)) {
		minTS, maxTS = int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
		return minTS, maxTS, minTS <= maxTS
	}
	if !bytes.HasPrefix(v, []byte(encoding.PBMagic)) {
		return 0, 0, false
	}
	v = v[len(encoding.PBMagic):]
	var from, to uint64
	var haveFrom, haveTo bool
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 {
			return 0, 0, false
		}
		v = v[n:]
		if typ != protowire.VarintType {
			if n = protowire.ConsumeFieldValue(num, typ, v); n < 0 {
				return 0, 0, false
			}
			v = v[n:]
			continue
		}
		x, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return 0, 0, false
		}
		v = v[n:]
		switch num {
		case 1:
			from, haveFrom = x, true
		case 2:
			to, haveTo = x, true
		}
	}
	if !haveFrom || !haveTo {
		return 0, 0, false
	}
	minTS, maxTS = int64(from), int64(to)
	return minTS, maxTS, minTS <= maxTS
}

// SetInt32 stores v as 4 big-endian bytes.
func (fi FileInfo) SetInt32(k string, v int32) { fi[k] = binary.BigEndian.AppendUint32(nil, uint32(v)) }

// SetInt64 stores v as 8 big-endian bytes.
func (fi FileInfo) SetInt64(k string, v int64) { fi[k] = binary.BigEndian.AppendUint64(nil, uint64(v)) }

// SetBool stores v as HBase's Bytes.toBytes(boolean).
func (fi FileInfo) SetBool(k string, v bool) {
	b := byte(0)
	if v {
		b = 0xFF
	}
	fi[k] = []byte{b}
}

// Keys returns the keys in byte order.
func (fi FileInfo) Keys() []string {
	ks := make([]string, 0, len(fi))
	for k := range fi {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// encode returns the FILEINF2 payload: PBUF then a delimited FileInfoProto
// { repeated BytesBytesPair map_entry = 1 }, entries sorted by key.
func (fi FileInfo) encode() []byte {
	var msg []byte
	for _, k := range fi.Keys() {
		var pair []byte
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendString(pair, k)
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendBytes(pair, fi[k])
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendBytes(msg, pair)
	}
	out := append([]byte(encoding.PBMagic), protowire.AppendVarint(nil, uint64(len(msg)))...)
	return append(out, msg...)
}

func decodeFileInfo(b []byte) (FileInfo, error) {
	fi := FileInfo{}
	if !bytes.HasPrefix(b, []byte(encoding.PBMagic)) {
		return decodeWritableFileInfo(b)
	}
	b = b[len(encoding.PBMagic):]
	l, n := protowire.ConsumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil, encoding.CorruptionErrorf("file info: bad message length")
	}
	msg := b[n : n+int(l)]
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, encoding.CorruptionErrorf("file info: bad field tag")
		}
		msg = msg[n:]
		if num != 1 || typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return nil, encoding.CorruptionErrorf("file info: bad field %d", num)
			}
			msg = msg[n:]
			continue
		}
		pair, n := protowire.ConsumeBytes(msg)
		if n < 0 {
			return nil, encoding.CorruptionErrorf("file info: bad entry")
		}
		msg = msg[n:]
		var k, v []byte
		for len(pair) > 0 {
			pn, pt, n := protowire.ConsumeTag(pair)
			if n < 0 {
				return nil, encoding.CorruptionErrorf("file info: bad entry tag")
			}
			pair = pair[n:]
			if pt != protowire.BytesType {
				n = protowire.ConsumeFieldValue(pn, pt, pair)
				if n < 0 {
					return nil, encoding.CorruptionErrorf("file info: bad entry field")
				}
				pair = pair[n:]
				continue
			}
			x, n := protowire.ConsumeBytes(pair)
			if n < 0 {
				return nil, encoding.CorruptionErrorf("file info: bad entry bytes")
			}
			pair = pair[n:]
			switch pn {
			case 1:
				k = x
			case 2:
				v = x
			}
		}
		fi[string(k)] = append([]byte(nil), v...)
	}
	return fi, nil
}

// decodeWritableFileInfo reads the pre-protobuf form: int count, then per
// entry a vint-length key, one ignored type byte and a vint-length value.
func decodeWritableFileInfo(b []byte) (FileInfo, error) {
	fi := FileInfo{}
	if len(b) < 4 {
		return nil, encoding.CorruptionErrorf("file info: %d bytes", len(b))
	}
	cnt := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	readBytes := func() ([]byte, bool) {
		l, n := encoding.DecodeVLong(b)
		if n <= 0 || l < 0 || l > int64(len(b)-n) {
			return nil, false
		}
		x := b[n : n+int(l)]
		b = b[n+int(l):]
		return x, true
	}
	for i := int32(0); i < cnt; i++ {
		k, ok := readBytes()
		if !ok || len(b) < 1 {
			return nil, encoding.CorruptionErrorf("file info: bad entry %d", i)
		}
		b = b[1:]
		v, ok := readBytes()
		if !ok {
			return nil, encoding.CorruptionErrorf("file info: bad entry %d", i)
		}
		fi[string(k)] = append([]byte(nil), v...)
	}
	return fi, nil
}
