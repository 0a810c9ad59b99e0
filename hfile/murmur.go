package hfile

import "encoding/binary"

// murmurHash is HBase's MurmurHash (hbase.hash.type "murmur", hash type id 1),
// the 32-bit MurmurHash2 that positions bits in bloom filter chunks.
//
// It follows the reference MurmurHash2 except for the one detail that makes
// it HBase's: the 1-3 tail bytes are mixed in as sign-extended Java bytes, so
// a tail byte >= 0x80 also flips the upper bits of h. Bloom chunks written by
// HBase depend on that, so it must not be "fixed".
//
// Arithmetic is done on uint32 so that it wraps like Java's int; the result is
// reinterpreted as Java's signed int because callers feed it back in as a seed
// and take signed remainders of it.
func murmurHash(data []byte, seed int32) int32 {
	const (
		m = 0x5bd1e995
		r = 24
	)
	h := uint32(seed) ^ uint32(len(data))

	n := len(data) &^ 3
	for i := 0; i < n; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}

	switch tail := data[n:]; len(tail) {
	case 3:
		h ^= uint32(int32(int8(tail[2])) << 16)
		fallthrough
	case 2:
		h ^= uint32(int32(int8(tail[1])) << 8)
		fallthrough
	case 1:
		h ^= uint32(int32(int8(tail[0])))
		h *= m
	}

	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}
