package hfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// Compound bloom filters (HBase's CompoundBloomFilterWriter,
// CompoundBloomFilter, BloomFilterChunk and BloomFilterUtil).
//
// A file's bloom filter is a sequence of chunks. Each chunk is a plain bloom
// filter over a run of consecutive keys, written as an inline BLMFBLK2 block
// (payload: the bit array, nothing else) between data blocks as soon as it is
// full, and a BLMFMET2 (general) or DFBLMET2 (delete family) block in the
// load-on-open section that describes them all:
//
//	version        int32 = 3
//	totalByteSize  int64   sum of the chunks' (folded) bit array sizes
//	hashCount      int32   probes per key, the same in every chunk
//	hashType       int32   1 = murmur, the only one implemented here
//	totalKeyCount  int64
//	totalMaxKeys   int64   sum of the chunks' (folded) capacities
//	numChunks      int32
//	comparator     vint length + class name; empty = raw byte order
//	numChunks × { offset int64, onDiskSize int32, vint length + first key }
//
// The chunk index is in root index format; a lookup picks the last chunk whose
// first key is <= the probe key, so only that chunk is ever read.
//
// Keys. A ROW bloom is fed each row once; a ROWCOL bloom each row+qualifier
// once, as the key RowColBloomKey builds. In both cases the chunk index key is
// the bloom key itself: for ROWCOL HBase indexes the serialized key of
// PrivateCellUtil.createFirstOnRowCol(cell), which has an *empty* family,
// LATEST_TIMESTAMP and type Maximum, and is therefore byte for byte the
// RowColBloomKey. Reads probe with the same family-less key, so index keys
// must not carry the family or HBase would pick the wrong chunk for a probe
// that equals a chunk's first key.
//
// Bit positions (Kirsch–Mitzenmacher double hashing, identical on both
// sides): h1 = murmur(key, 0), h2 = murmur(key, h1); probe i tests bit
// |(h1 + i·h2) rem bitCount| with int32 wraparound and Java's truncated
// remainder, bit b living in byte b>>3 under mask 1<<(b&7).

// BloomType is HBase's BloomType, the column family's BLOOMFILTER setting.
// Its String form is what the file info key BLOOM_FILTER_TYPE stores; the
// numeric values are HBase's enum ordinals but are not written anywhere.
type BloomType uint8

// Bloom filter types. HBase's ROWPREFIX_FIXED_LENGTH is not implemented.
const (
	BloomNone   BloomType = 0
	BloomRow    BloomType = 1
	BloomRowCol BloomType = 2
)

// String returns HBase's name for t: "NONE", "ROW" or "ROWCOL".
func (t BloomType) String() string {
	switch t {
	case BloomNone:
		return "NONE"
	case BloomRow:
		return "ROW"
	case BloomRowCol:
		return "ROWCOL"
	}
	return "UNKNOWN(" + strconv.Itoa(int(t)) + ")"
}

// ParseBloomType maps HBase's bloom type name, in any case, to a BloomType.
// HBase's ROWPREFIX_FIXED_LENGTH returns an error marked ErrUnsupportedBloom.
func ParseBloomType(name string) (BloomType, error) {
	for _, t := range [...]BloomType{BloomNone, BloomRow, BloomRowCol} {
		if strings.EqualFold(name, t.String()) {
			return t, nil
		}
	}
	if strings.EqualFold(name, "ROWPREFIX_FIXED_LENGTH") {
		return 0, errors.Mark(errors.Newf("hfile: bloom type %s is not supported", errors.Safe(name)), ErrUnsupportedBloom)
	}
	return 0, errors.Newf("hfile: unknown bloom type %q", name)
}

// ErrUnsupportedBloom marks bloom filters this package cannot evaluate: a
// meta version other than 3 (e.g. a newer HBase's ribbon filter), a hash type
// other than murmur, a comparator it does not know, or an unimplemented bloom
// type. The file is not corrupt; a reader can ignore the filter and treat
// every key as possibly present.
var ErrUnsupportedBloom = errors.New("hfile: unsupported bloom filter")

// errBadBloomProbe marks MayContain errors that are the probe key's fault,
// not the filter's.
var errBadBloomProbe = errors.New("hfile: bad bloom probe")

// Defaults, as HBase's BloomFilterFactory.
const (
	// DefaultBloomErrorRate is io.storefile.bloom.error.rate.
	DefaultBloomErrorRate = 0.01
	// DefaultBloomChunkSize is io.storefile.bloom.block.size, the size of a
	// chunk's bit array before folding: 16 KiB where HBase's is 128 KiB, for
	// the reason DefaultIndexBlockMaxSize is (a point read reads one chunk).
	DefaultBloomChunkSize = 16 << 10
	// bloomMaxFold is io.storefile.bloom.max.fold: chunk sizes are rounded up
	// to a multiple of 2^bloomMaxFold bytes so a sparse chunk can be halved
	// at least that many times.
	bloomMaxFold = 7
)

// On-disk constants of the bloom meta block.
const (
	bloomMetaVersion = 3
	bloomHashMurmur  = 1 // Hash.MURMUR_HASH
	// bloomMaxHashCount bounds hashCount when reading: a corrupt meta could
	// otherwise make each lookup probe billions of times. HBase derives it
	// from the error rate; even a 1e-15 rate needs only 50.
	bloomMaxHashCount = 255
	// rowColBloomComparator is what HBase writes for ROWCOL blooms
	// (BloomFilterFactory passes CellComparatorImpl.COMPARATOR); ROW blooms
	// write an empty name. All index keys of a store share one (empty)
	// family, so every cell comparator orders them alike.
	rowColBloomComparator = "org.apache.hadoop.hbase.CellComparatorImpl"
)

// RowColBloomKey appends the ROWCOL bloom key of row/qualifier to dst: HBase's
// RowColBloomHashKey, laid out as a KeyValue key with an empty family,
//
//	rowLen uint16 | row | 0x00 | qualifier | LATEST_TIMESTAMP (8 bytes) | 0xFF
//
// It is both the key that is hashed and the chunk index key, on write and on
// read.
func RowColBloomKey(dst, row, qualifier []byte) []byte {
	return encoding.AppendKey(dst, row, nil, qualifier, encoding.LatestTimestamp, encoding.TypeMaximum)
}

// bloomSizing is the geometry of a fresh (unfolded) chunk.
type bloomSizing struct {
	byteSize  int // bit array bytes, a multiple of 2^maxFold
	maxKeys   int // keys after which the chunk is full
	hashCount int
}

// computeBloomSizing is BloomFilterUtil.createBySize. errorRate must already
// be the value HBase computes with (float32 precision, ROWCOL-adjusted).
func computeBloomSizing(chunkByteSize int, errorRate float64, maxFold int) (bloomSizing, error) {
	// Round up to a multiple of 2^maxFold bytes so folding can halve it.
	byteSize := (int64(chunkByteSize)*8 + 7) / 8
	if mask := int64(1)<<maxFold - 1; byteSize&mask != 0 {
		byteSize = (byteSize>>maxFold + 1) << maxFold
	}
	if byteSize > math.MaxInt32 {
		return bloomSizing{}, errors.Newf("hfile: bloom chunk size %d too large", chunkByteSize)
	}
	bitSize := byteSize * 8
	// ln2 is a variable so that ln2*ln2 is rounded like Java's double
	// product rather than folded exactly at compile time.
	ln2 := math.Ln2
	idealMaxKeys := int64(float64(bitSize) * (ln2 * ln2 / -math.Log(errorRate)))
	if idealMaxKeys <= 0 {
		return bloomSizing{}, errors.Newf("hfile: bloom chunk of %d bytes holds no keys at error rate %g", byteSize, errorRate)
	}
	// HBase divides as longs here, then takes the ceiling.
	hashCount := int(math.Ceil(ln2 * float64(bitSize/idealMaxKeys)))
	// With byteSize rounded for folding and hashCount rounded up, re-derive
	// how many keys keep the false positive rate at errorRate.
	maxKeys := int64(-float64(bitSize) / float64(hashCount) *
		math.Log(1-math.Exp(math.Log(errorRate)/float64(hashCount))))
	if maxKeys <= 0 || maxKeys > math.MaxInt32 {
		return bloomSizing{}, errors.Newf("hfile: bad bloom sizing: %d bytes, error rate %g", byteSize, errorRate)
	}
	return bloomSizing{byteSize: int(byteSize), maxKeys: int(maxKeys), hashCount: hashCount}, nil
}

// BloomWriter builds a compound bloom filter while a file is written. It is
// HBase's CompoundBloomFilterWriter, and produces the same bytes for the same
// keys and settings.
//
// The file writer drives it:
//
//	w.Add(key)                      // per new row (ROW) or row+qualifier (ROWCOL)
//	// after each data block, and at close with closing=true:
//	for w.ReadyChunk() || (closing && w.PendingKeys() > 0) {
//		payload, firstKey := w.FinishChunk()
//		off, onDiskSize := write a BLMFBLK2 block with payload
//		w.AddChunkIndex(off, onDiskSize, firstKey)
//	}
//	meta, err := w.MetaPayload()    // BLMFMET2/DFBLMET2 payload, if KeyCount() > 0
//
// A full chunk is not written the moment it fills: like HBase, it waits for
// the next data block boundary, and keys that arrive meanwhile start a new
// chunk. So more than one chunk can be ready at a boundary; loop.
//
// A BloomWriter is not safe for concurrent use.
type BloomWriter struct {
	typ    BloomType
	sizing bloomSizing

	// The open chunk: a full-size bit array, reused from chunk to chunk.
	bits     []byte
	open     bool
	openKeys int
	openKey  []byte // first key of the open chunk

	ready     []bloomReadyChunk // folded, waiting for FinishChunk
	unindexed int               // returned by FinishChunk, not yet indexed

	keyCount      int64
	totalMaxKeys  int64
	totalByteSize int64
	numChunks     int32
	index         []byte // root-format chunk index entries so far
}

type bloomReadyChunk struct {
	bits     []byte
	firstKey []byte
	keys     int
}

// NewBloomWriter returns a writer for a ROW or ROWCOL bloom (a delete-family
// bloom is a ROW bloom fed with delete-family rows).
//
// errorRate is io.storefile.bloom.error.rate (0 means 0.01) and chunkByteSize
// io.storefile.bloom.block.size (0 means DefaultBloomChunkSize). Like HBase, a ROWCOL bloom
// targets 1-sqrt(1-errorRate) per lookup, because a ROWCOL query may do two
// lookups, and the rate is carried at float32 precision, as HBase's float
// parameter does, so chunk sizing matches HBase's exactly.
func NewBloomWriter(t BloomType, errorRate float64, chunkByteSize int) (*BloomWriter, error) {
	if t != BloomRow && t != BloomRowCol {
		return nil, errors.Newf("hfile: cannot write a %s bloom filter", t)
	}
	if errorRate == 0 {
		errorRate = DefaultBloomErrorRate
	}
	if !(errorRate > 0 && errorRate < 1) {
		return nil, errors.Newf("hfile: bloom error rate %g is not in (0, 1)", errorRate)
	}
	if chunkByteSize == 0 {
		chunkByteSize = DefaultBloomChunkSize
	}
	if chunkByteSize < 0 {
		return nil, errors.Newf("hfile: negative bloom chunk size %d", chunkByteSize)
	}
	rate := float64(float32(errorRate))
	if t == BloomRowCol {
		rate = float64(float32(1 - math.Sqrt(1-rate)))
	}
	sizing, err := computeBloomSizing(chunkByteSize, rate, bloomMaxFold)
	if err != nil {
		return nil, err
	}
	return &BloomWriter{typ: t, sizing: sizing}, nil
}

// Type returns the bloom type the writer was created for.
func (w *BloomWriter) Type() BloomType { return w.typ }

// Add adds a key: the row for ROW blooms, RowColBloomKey(row, qualifier) for
// ROWCOL. The key also becomes the chunk index key if it opens a chunk. Keys
// must come in file order, each distinct key once (a repeat is harmless for
// lookups but counts twice toward the chunk's capacity, as in HBase). key is
// not retained.
func (w *BloomWriter) Add(key []byte) {
	if w.open && w.openKeys >= w.sizing.maxKeys {
		w.closeChunk()
	}
	if !w.open {
		if w.bits == nil {
			w.bits = make([]byte, w.sizing.byteSize)
		} else {
			clear(w.bits)
		}
		w.open = true
		w.openKeys = 0
		w.openKey = append([]byte(nil), key...)
		w.numChunks++
	}
	setBloomBits(w.bits, w.sizing.hashCount, key)
	w.openKeys++
	w.keyCount++
}

// closeChunk folds the open chunk into the ready queue (HBase's
// enqueueReadyChunk plus compactBloom).
func (w *BloomWriter) closeChunk() {
	bits, maxKeys := foldBloom(w.bits, w.openKeys, w.sizing.maxKeys)
	w.ready = append(w.ready, bloomReadyChunk{bits: bits, firstKey: w.openKey, keys: w.openKeys})
	w.totalMaxKeys += int64(maxKeys)
	w.totalByteSize += int64(len(bits))
	w.open, w.openKeys, w.openKey = false, 0, nil
}

// foldBloom is BloomFilterChunk.compactBloom: while the chunk is at most half
// full and its size is even, halve it, ORing the upper half onto the lower.
// Probing a folded chunk takes positions modulo the smaller size, which
// selects exactly the bits that were ORed together, so no key is lost. It
// returns a new slice; bits is not modified.
func foldBloom(bits []byte, keys, maxKeys int) ([]byte, int) {
	size, pieces := len(bits), 1
	for size&1 == 0 && size > 0 && maxKeys > keys<<1 {
		size >>= 1
		maxKeys >>= 1
		pieces <<= 1
	}
	out := make([]byte, size)
	copy(out, bits[:size])
	for p := 1; p < pieces; p++ {
		piece := bits[p*size : (p+1)*size]
		for i := range out {
			out[i] |= piece[i]
		}
	}
	return out, maxKeys
}

// ReadyChunk reports whether a full chunk is waiting to be written. Call it
// after each data block.
func (w *BloomWriter) ReadyChunk() bool {
	return len(w.ready) > 0 || (w.open && w.openKeys >= w.sizing.maxKeys)
}

// PendingKeys returns how many added keys are in chunks FinishChunk has not
// yet returned. At close, finish chunks until it is 0.
func (w *BloomWriter) PendingKeys() int {
	n := w.openKeys
	for _, c := range w.ready {
		n += c.keys
	}
	return n
}

// FinishChunk returns the next chunk to write, folded: payload is the whole
// BLMFBLK2 payload and firstKey its chunk index key, to be handed back to
// AddChunkIndex. With no full chunk waiting it finishes the open chunk
// however few keys it has (what HBase does at close). Both are nil when no
// key is pending. The slices are owned by the caller afterwards.
func (w *BloomWriter) FinishChunk() (payload, firstKey []byte) {
	if len(w.ready) == 0 {
		if !w.open || w.openKeys == 0 {
			return nil, nil
		}
		w.closeChunk()
	}
	c := w.ready[0]
	w.ready[0] = bloomReadyChunk{}
	w.ready = w.ready[1:]
	w.unindexed++
	return c.bits, c.firstKey
}

// AddChunkIndex records where the chunk last returned by FinishChunk was
// written: the block's file offset, its on-disk size including header and
// checksums, and the firstKey FinishChunk returned. Chunks must be indexed in
// the order FinishChunk returned them.
func (w *BloomWriter) AddChunkIndex(offset int64, onDiskSize int32, firstKey []byte) {
	w.index = binary.BigEndian.AppendUint64(w.index, uint64(offset))
	w.index = binary.BigEndian.AppendUint32(w.index, uint32(onDiskSize))
	w.index = encoding.AppendVLong(w.index, int64(len(firstKey)))
	w.index = append(w.index, firstKey...)
	w.unindexed--
}

// KeyCount returns the number of keys added. HBase writes no bloom meta (and
// no BLOOM_FILTER_TYPE file info) for a filter without keys.
func (w *BloomWriter) KeyCount() int64 { return w.keyCount }

// MetaPayload returns the BLMFMET2 (or DFBLMET2) payload describing every
// chunk. All chunks must have been finished and indexed; otherwise the meta
// would not describe the file, and an error is returned.
func (w *BloomWriter) MetaPayload() ([]byte, error) {
	if w.PendingKeys() > 0 || w.unindexed != 0 {
		return nil, errors.AssertionFailedf("hfile: bloom meta requested with %d keys in unwritten chunks and %d unindexed chunks",
			w.PendingKeys(), w.unindexed)
	}
	var comparator string
	if w.typ == BloomRowCol {
		comparator = rowColBloomComparator
	}
	b := make([]byte, 0, 40+1+len(comparator)+len(w.index))
	b = binary.BigEndian.AppendUint32(b, bloomMetaVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(w.totalByteSize))
	b = binary.BigEndian.AppendUint32(b, uint32(w.sizing.hashCount))
	b = binary.BigEndian.AppendUint32(b, bloomHashMurmur)
	b = binary.BigEndian.AppendUint64(b, uint64(w.keyCount))
	b = binary.BigEndian.AppendUint64(b, uint64(w.totalMaxKeys))
	b = binary.BigEndian.AppendUint32(b, uint32(w.numChunks))
	b = encoding.AppendVLong(b, int64(len(comparator)))
	b = append(b, comparator...)
	return append(b, w.index...), nil
}

// BloomChunk locates one chunk of a compound bloom filter.
type BloomChunk struct {
	Offset     int64  // file offset of the BLMFBLK2 block
	OnDiskSize int32  // header + payload + checksums
	FirstKey   []byte // bloom key of the chunk's first key
}

// BloomFilter is a compound bloom filter read from a bloom meta block (HBase's
// CompoundBloomFilter). Its exported fields are the meta block's contents. It
// holds no chunk data: MayContain asks a loader for the chunk it needs, so
// chunks can live in the block cache.
//
// A BloomFilter is immutable and safe for concurrent use.
type BloomFilter struct {
	TotalByteSize int64
	HashCount     int32
	HashType      int32
	TotalKeyCount int64
	TotalMaxKeys  int64
	// Comparator is the class name that orders chunk keys; empty for ROW
	// (raw byte order).
	Comparator string
	Chunks     []BloomChunk

	// keyCmp is set when chunk keys are KeyValue keys (ROWCOL); nil means
	// raw byte order.
	keyCmp *encoding.Comparer
	// firstWords orders the chunks' first keys for chunkFor when they are
	// in raw byte order (ROW), as the index accelerator orders its rows,
	// so that a search reads one small array rather than following each
	// chunk's key into cold memory. Nil for ROWCOL.
	firstWords *rowWords
}

// BloomChunkLoader returns the bit array of the chunk block at offset: the
// BLMFBLK2 payload after checksum verification and decompression. The
// returned slice is only read, and not retained past the MayContain call.
type BloomChunkLoader func(offset int64, onDiskSize int32) ([]byte, error)

// rawBloomComparators are comparator names that mean raw byte order: what
// current HBase writes for ROW blooms (nothing) and what older versions
// wrote.
var rawBloomComparators = [...]string{
	"",
	"org.apache.hadoop.hbase.KeyValue$RawBytesComparator",
	"org.apache.hadoop.hbase.util.Bytes$ByteArrayComparator",
}

// ParseBloomMeta decodes a BLMFMET2 or DFBLMET2 payload. Malformed bytes give
// an error marked encoding.ErrCorruption; a well-formed filter this package
// cannot evaluate gives one marked ErrUnsupportedBloom. The result does not
// alias payload.
func ParseBloomMeta(payload []byte) (*BloomFilter, error) {
	const fixedLen = 4 + 8 + 4 + 4 + 8 + 8 + 4
	if len(payload) < 4 {
		return nil, encoding.CorruptionErrorf("hfile: bloom meta of %d bytes is truncated", len(payload))
	}
	if v := int32(binary.BigEndian.Uint32(payload)); v != bloomMetaVersion {
		return nil, errors.Mark(errors.Newf("hfile: bloom meta version %d, only %d is supported", v, bloomMetaVersion), ErrUnsupportedBloom)
	}
	if len(payload) < fixedLen {
		return nil, encoding.CorruptionErrorf("hfile: bloom meta of %d bytes is truncated", len(payload))
	}
	p := bytes.Clone(payload)
	f := &BloomFilter{
		TotalByteSize: int64(binary.BigEndian.Uint64(p[4:])),
		HashCount:     int32(binary.BigEndian.Uint32(p[12:])),
		HashType:      int32(binary.BigEndian.Uint32(p[16:])),
		TotalKeyCount: int64(binary.BigEndian.Uint64(p[20:])),
		TotalMaxKeys:  int64(binary.BigEndian.Uint64(p[28:])),
	}
	numChunks := int32(binary.BigEndian.Uint32(p[36:]))
	rest := p[fixedLen:]

	switch {
	case f.TotalByteSize < 0 || f.TotalKeyCount < 0 || f.TotalMaxKeys < 0:
		return nil, encoding.CorruptionErrorf("hfile: bloom meta has negative sizes (bytes %d, keys %d, max keys %d)",
			f.TotalByteSize, f.TotalKeyCount, f.TotalMaxKeys)
	case f.HashCount < 1 || f.HashCount > bloomMaxHashCount:
		return nil, encoding.CorruptionErrorf("hfile: bloom meta hash count %d", f.HashCount)
	// Each index entry takes at least 13 bytes; checking that first keeps a
	// corrupt count from sizing a huge slice.
	case numChunks < 0 || int64(numChunks) > int64(len(rest))/13:
		return nil, encoding.CorruptionErrorf("hfile: bloom meta claims %d chunks in %d bytes", numChunks, len(rest))
	}

	name, rest, err := readBloomByteArray(rest)
	if err != nil {
		return nil, errors.Wrap(err, "hfile: bloom meta comparator")
	}
	f.Comparator = string(name)

	f.Chunks = make([]BloomChunk, numChunks)
	for i := range f.Chunks {
		if len(rest) < 12 {
			return nil, encoding.CorruptionErrorf("hfile: bloom meta chunk %d of %d is truncated", i, numChunks)
		}
		c := &f.Chunks[i]
		c.Offset = int64(binary.BigEndian.Uint64(rest))
		c.OnDiskSize = int32(binary.BigEndian.Uint32(rest[8:]))
		if c.Offset < 0 || c.OnDiskSize <= 0 {
			return nil, encoding.CorruptionErrorf("hfile: bloom chunk %d at offset %d has on-disk size %d", i, c.Offset, c.OnDiskSize)
		}
		if c.FirstKey, rest, err = readBloomByteArray(rest[12:]); err != nil {
			return nil, errors.Wrapf(err, "hfile: bloom meta chunk %d key", i)
		}
	}
	// HBase ignores anything after the index, and so do we.

	// Fields that are well-formed but that we cannot evaluate.
	if f.HashType != bloomHashMurmur {
		return nil, errors.Mark(errors.Newf("hfile: bloom hash type %d, only murmur (%d) is supported", f.HashType, bloomHashMurmur), ErrUnsupportedBloom)
	}
	raw := false
	for _, n := range rawBloomComparators {
		raw = raw || f.Comparator == n
	}
	if !raw {
		if f.keyCmp, err = encoding.ComparerByName(f.Comparator); err != nil {
			return nil, errors.Mark(errors.Wrap(err, "hfile: bloom chunk index comparator"), ErrUnsupportedBloom)
		}
		for i := range f.Chunks {
			if _, err := encoding.ParseKey(f.Chunks[i].FirstKey); err != nil {
				return nil, errors.Wrapf(err, "hfile: bloom chunk %d first key", i)
			}
		}
	}
	for i := 1; i < len(f.Chunks); i++ {
		if f.compare(f.Chunks[i-1].FirstKey, f.Chunks[i].FirstKey) > 0 {
			return nil, encoding.CorruptionErrorf("hfile: bloom chunk %d first key sorts before chunk %d's", i, i-1)
		}
	}
	f.buildFirstWords()
	return f, nil
}

// buildFirstWords sets firstWords from the chunks of a raw byte order
// filter.
func (f *BloomFilter) buildFirstWords() {
	if f.keyCmp != nil || len(f.Chunks) == 0 {
		return
	}
	f.firstWords = new(rowWords)
	f.firstWords.set(len(f.Chunks), func(i int) []byte { return f.Chunks[i].FirstKey })
}

// readBloomByteArray reads a Bytes.writeByteArray field: a Hadoop vint length
// and that many bytes. The result aliases b.
func readBloomByteArray(b []byte) (field, rest []byte, err error) {
	n, l := encoding.DecodeVLong(b)
	if l <= 0 {
		return nil, nil, encoding.CorruptionErrorf("truncated length")
	}
	if n < 0 || n > int64(len(b)-l) {
		return nil, nil, encoding.CorruptionErrorf("length %d with %d bytes left", n, len(b)-l)
	}
	end := l + int(n)
	return b[l:end:end], b[end:], nil
}

func (f *BloomFilter) compare(a, b []byte) int {
	if f.keyCmp != nil {
		return f.keyCmp.CompareKeys(encoding.Key(a), encoding.Key(b))
	}
	return bytes.Compare(a, b)
}

// chunkFor returns the index of the last chunk whose first key is <= key, or
// -1 if key sorts before every chunk (and so cannot be in the filter).
func (f *BloomFilter) chunkFor(key []byte) int {
	lo, hi := 0, len(f.Chunks)
	if w := f.firstWords; w != nil && len(w.words) == len(f.Chunks) {
		// Only chunks whose word equals key's need their keys.
		lo, hi = w.span(key)
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.compare(f.Chunks[mid].FirstKey, key) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// MayContain reports whether key may have been added to the filter; false
// means it certainly was not. key is built as for BloomWriter.Add: the row
// for ROW (and delete-family) blooms, RowColBloomKey(row, qualifier) for
// ROWCOL. load is called for at most one chunk. MayContain itself does not
// allocate, so a loader that serves cached chunks makes lookups
// allocation-free.
func (f *BloomFilter) MayContain(key []byte, load BloomChunkLoader) (bool, error) {
	return f.mayContain(key, loaderChunks(load))
}

// bloomChunks loads chunk i of a filter, at offset with onDiskSize bytes,
// as a BloomChunkLoader does; the index lets a reader keep chunks by number.
type bloomChunks interface {
	bloomChunk(i int, offset int64, onDiskSize int32) ([]byte, error)
}

// loaderChunks is a BloomChunkLoader as bloomChunks.
type loaderChunks BloomChunkLoader

func (l loaderChunks) bloomChunk(_ int, offset int64, onDiskSize int32) ([]byte, error) {
	return l(offset, onDiskSize)
}

// mayContain is MayContain loading the chunk from load.
func (f *BloomFilter) mayContain(key []byte, load bloomChunks) (bool, error) {
	h1, h2 := bloomHashes(key)
	return f.mayContainHashed(key, h1, h2, load)
}

// mayContainHashed is mayContain with key's bloomHashes, which the filters
// of every file a read asks share.
func (f *BloomFilter) mayContainHashed(key []byte, h1, h2 int32, load bloomChunks) (bool, error) {
	if f.keyCmp != nil {
		// Key comparisons trust their input's lengths; do not let a caller's
		// malformed key turn into a panic.
		if _, err := encoding.ParseKey(key); err != nil {
			return false, errors.Mark(errors.Wrap(err, "hfile: ROWCOL bloom probe is not a key"), errBadBloomProbe)
		}
	}
	i := f.chunkFor(key)
	if i < 0 {
		return false, nil
	}
	c := &f.Chunks[i]
	bits, err := load.bloomChunk(i, c.Offset, c.OnDiskSize)
	if err != nil {
		return false, errors.Wrapf(err, "hfile: loading bloom chunk %d at offset %d", i, c.Offset)
	}
	if len(bits) == 0 || len(bits) > math.MaxInt32>>3 {
		return false, encoding.CorruptionErrorf("hfile: bloom chunk %d at offset %d has a %d-byte bit array", i, c.Offset, len(bits))
	}
	return bloomContainsHashes(bits, int(f.HashCount), h1, h2), nil
}

// bloomHashes returns the two hashes all probes of key derive from.
func bloomHashes(key []byte) (h1, h2 int32) {
	h1 = murmurHash(key, 0)
	return h1, murmurHash(key, h1)
}

// bloomBit returns the bit the probe with composite hash c selects in an
// array of bitCount bits: |c rem bitCount|, with Go's % truncating toward
// zero exactly like Java's. bloomMod computes the same faster.
func bloomBit(c int32, bitCount int64) int64 {
	pos := int64(c) % bitCount
	if pos < 0 {
		pos = -pos
	}
	return pos
}

// bloomMod is bloomBit for one bit array, by Lemire's "faster remainder by
// direct computation": two multiplications a probe in place of a 64-bit
// division, which took 25 of the 40 ns a 7-probe lookup of a present key
// cost. It is exact for every numerator and divisor below 2^32; a bit array
// is at most 2^31 bits (mayContainHashed checks), and the numerator |c| at
// most 2^31.
type bloomMod struct{ m, d uint64 }

func newBloomMod(bitCount int64) bloomMod {
	d := uint64(bitCount)
	return bloomMod{m: ^uint64(0)/d + 1, d: d}
}

func (b bloomMod) bit(c int32) uint64 {
	x := int64(c)
	sign := x >> 63
	hi, _ := bits.Mul64(b.m*uint64((x^sign)-sign), b.d)
	return hi
}

func setBloomBits(bits []byte, hashCount int, key []byte) {
	h1, h2 := bloomHashes(key)
	bitCount := int64(len(bits)) * 8
	c := h1
	if bitCount > math.MaxUint32 {
		for range hashCount {
			pos := bloomBit(c, bitCount)
			bits[pos>>3] |= 1 << (pos & 7)
			c += h2 // int32 wraparound, as in Java
		}
		return
	}
	mod := newBloomMod(bitCount)
	for range hashCount {
		pos := mod.bit(c)
		bits[pos>>3] |= 1 << (pos & 7)
		c += h2
	}
}

// bloomContainsHashes reports whether every bit a key of hashes h1 and h2
// selects is set in bits.
func bloomContainsHashes(bits []byte, hashCount int, h1, h2 int32) bool {
	mod := newBloomMod(int64(len(bits)) * 8)
	c := h1
	for range hashCount {
		pos := mod.bit(c)
		if bits[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
		c += h2
	}
	return true
}
