package hfile

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"

	"github.com/regionkv/regionkv/encoding"
)

// Index blocks come in two formats (HBase's HFileBlockIndex):
//
// Root format (IDXROOT2 payloads, the meta index and bloom chunk indexes),
// repeated count times, where count is kept elsewhere (trailer, bloom meta):
//
//	offset int64 | onDiskSize int32 | key (Hadoop vint length + bytes)
//
// followed, for a multi-level data index only, by 16 bytes of mid-key
// metadata: midLeafBlockOffset int64, midLeafBlockOnDiskSize int32,
// midKeyEntry int32.
//
// Non-root format (IDXLEAF2 and IDXINTE2 payloads):
//
//	numEntries int32 | secondary index int32 × (numEntries+1) | entries
//
// where each entry is offset int64 | onDiskSize int32 | key bytes, and the
// secondary index holds each entry's start relative to the end of the
// secondary index (its last element is the total size of the entries), so a
// reader can binary-search without decoding every entry.

const (
	entryOverhead       = 12 // offset + onDiskSize
	midKeyMetadataSize  = 16
	maxIndexLevels      = 16
	defaultMinIndexKeys = 16
)

// rootIndex is a decoded root-format index. Keys alias the block payload.
type rootIndex struct {
	offsets []int64
	sizes   []int32
	keys    [][]byte

	hasMidKey         bool
	midLeafOffset     int64
	midLeafOnDiskSize int32
	midKeyEntry       int32
}

// decodeRootIndex decodes count root-format entries from b, then, if
// withMidKey, the 16 bytes of mid-key metadata; nothing may follow.
func decodeRootIndex(b []byte, count int, withMidKey bool) (*rootIndex, error) {
	if count < 0 || count > len(b)/(entryOverhead+1) {
		return nil, encoding.CorruptionErrorf("root index: %d entries cannot fit in %d bytes", count, len(b))
	}
	ri := &rootIndex{offsets: make([]int64, count), sizes: make([]int32, count), keys: make([][]byte, count)}
	p := 0
	for i := 0; i < count; i++ {
		if len(b)-p < entryOverhead+1 {
			return nil, encoding.CorruptionErrorf("root index: entry %d truncated", i)
		}
		ri.offsets[i] = int64(binary.BigEndian.Uint64(b[p:]))
		ri.sizes[i] = int32(binary.BigEndian.Uint32(b[p+8:]))
		p += entryOverhead
		l, n := encoding.DecodeVLong(b[p:])
		if n <= 0 || l < 0 || l > int64(len(b)-p-n) {
			return nil, encoding.CorruptionErrorf("root index: entry %d has a bad key length", i)
		}
		p += n
		ri.keys[i] = b[p : p+int(l) : p+int(l)]
		p += int(l)
		if ri.offsets[i] < 0 || ri.sizes[i] < HeaderSize {
			return nil, encoding.CorruptionErrorf("root index: entry %d points at offset %d size %d", i, ri.offsets[i], ri.sizes[i])
		}
	}
	// The count comes from the trailer, which has no checksum: HBase
	// writes exactly the entries and, for a multi-level index, the mid-key
	// metadata, so any other number of bytes left means a wrong count.
	want := 0
	if withMidKey {
		want = midKeyMetadataSize
	}
	if len(b)-p != want {
		return nil, encoding.CorruptionErrorf("root index: %d bytes left after %d entries, want %d", len(b)-p, count, want)
	}
	if withMidKey {
		ri.hasMidKey = true
		ri.midLeafOffset = int64(binary.BigEndian.Uint64(b[p:]))
		ri.midLeafOnDiskSize = int32(binary.BigEndian.Uint32(b[p+8:]))
		ri.midKeyEntry = int32(binary.BigEndian.Uint32(b[p+12:]))
	}
	return ri, nil
}

// search returns the largest i with keys[i] <= key, or -1 if key precedes
// every entry.
func (ri *rootIndex) search(key []byte, cmp func(a, b []byte) int) int {
	lo, hi := 0, len(ri.keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmp(ri.keys[m], key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func (ri *rootIndex) len() int { return len(ri.keys) }

// nonRootIndex is a view of a non-root index block payload.
type nonRootIndex struct {
	b []byte
	n int
}

func parseNonRootIndex(b []byte, off int64) (nonRootIndex, error) {
	if len(b) < 4 {
		return nonRootIndex{}, encoding.CorruptionErrorf("index block at offset %d: %d bytes", off, len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n <= 0 || int64(n) > int64(len(b)-8)/4 {
		return nonRootIndex{}, encoding.CorruptionErrorf("index block at offset %d: %d entries in %d bytes", off, n, len(b))
	}
	x := nonRootIndex{b: b, n: n}
	entriesLen := int(int32(binary.BigEndian.Uint32(b[4+4*n:])))
	if entriesLen < 0 || entriesLen > len(b)-x.entriesStart() {
		return nonRootIndex{}, encoding.CorruptionErrorf("index block at offset %d: entries size %d", off, entriesLen)
	}
	return x, nil
}

func (x nonRootIndex) entriesStart() int { return 4 + 4*(x.n+1) }

// entry returns entry i, or ok=false if the secondary index is inconsistent.
func (x nonRootIndex) entry(i int) (offset int64, size int32, key []byte, ok bool) {
	s := int(int32(binary.BigEndian.Uint32(x.b[4+4*i:])))
	e := int(int32(binary.BigEndian.Uint32(x.b[4+4*(i+1):])))
	base := x.entriesStart()
	if s < 0 || e < s+entryOverhead || base+e > len(x.b) {
		return 0, 0, nil, false
	}
	p := base + s
	offset = int64(binary.BigEndian.Uint64(x.b[p:]))
	size = int32(binary.BigEndian.Uint32(x.b[p+8:]))
	key = x.b[p+entryOverhead : base+e : base+e]
	return offset, size, key, true
}

// search returns the largest i with key(i) <= key, or -1.
func (x nonRootIndex) search(key []byte, cmp func(a, b []byte) int) (int, bool) {
	return x.searchRange(0, x.n, key, cmp)
}

// searchRange is search among entries [lo, hi), knowing that those before
// lo are <= key and those from hi on are > key.
func (x nonRootIndex) searchRange(lo, hi int, key []byte, cmp func(a, b []byte) int) (int, bool) {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		_, _, k, ok := x.entry(m)
		if !ok {
			return 0, false
		}
		if cmp(k, key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1, true
}

// indexAccel speeds up the search of an index: a cached non-root index
// block, whose binary search otherwise reads an entry and compares whole
// keys at every step, two cache misses each across the block, or the data
// index's root. It orders the entries' rows by words (rowWords), with each
// entry's offset and size beside them, so that a search reads words and
// takes its answer from the entries, never touching the block. Words keep
// byte order, so it serves the byte-ordered row comparers, not hbase:meta's.
//
// An entry whose word equals the key's is compared in full, unless its key
// is the first key on its row (what the writer's midpoint keys nearly always
// are: see midpointKey) and the word holds the whole row of both: every key
// of that row is at or after it.
type indexAccel struct {
	rowWords
	ents []accelEntry
	// pins, of an intermediate index block, are the blocks under it, as
	// readerPins.leaves are the root's.
	pins []atomic.Pointer[Block]
	// The entries' keys: a non-root block's (x), or the root's (keys).
	x    nonRootIndex
	keys [][]byte
}

// accelEntry is one entry of an indexAccel, but for its word.
type accelEntry struct {
	off  int64
	size int32
	// firstOnRow is the length of the entry's row if its key is the
	// first key on the row and the row ends within prefix and word,
	// else -1.
	firstOnRow int32
}

// memSize returns the bytes a holds, for cache accounting.
func (a *indexAccel) memSize() int64 {
	return int64(8*len(a.words) + 16*len(a.ents) + 8*len(a.pins) + 128)
}

// rowWords orders sorted rows by words: the prefix all of them share, and
// for each row the 8 bytes after it (rowWord), in an array of their own.
// Rows whose words differ are ordered by them, since the words of
// zero-padded rows keep the rows' byte order (strictly, when they differ),
// so a search reads words alone until it reaches the rows whose word equals
// the probe's. 8-byte words put several to a cache line, so a search's
// last steps, the ones that miss the processor's caches, touch few lines.
// The index accelerator and a ROW bloom's chunk search use it.
type rowWords struct {
	// prefix is held in prefixBuf when it fits: it is read by every
	// search, and the memory it comes from is cold.
	prefix    []byte
	prefixBuf [32]byte
	words     []uint64
}

// set computes w from the n rows row returns, in byte order.
func (w *rowWords) set(n int, row func(i int) []byte) {
	var prefix []byte
	if n > 0 {
		prefix = row(0)
	}
	for i := 1; i < n; i++ {
		r, k := row(i), 0
		for k < len(prefix) && k < len(r) && prefix[k] == r[k] {
			k++
		}
		prefix = prefix[:k]
	}
	if len(prefix) <= len(w.prefixBuf) {
		w.prefix = w.prefixBuf[:len(prefix):len(prefix)]
	} else {
		w.prefix = make([]byte, len(prefix))
	}
	copy(w.prefix, prefix)
	w.words = make([]uint64, n)
	for i := range w.words {
		w.words[i] = rowWord(row(i), len(prefix))
	}
}

// span returns the rows [lo, hi) whose word equals row's: every row before
// lo sorts before row, every row from hi on after it, and those between
// need comparing in full. A row without the prefix gets an empty span at
// 0 or at the end.
func (w *rowWords) span(row []byte) (lo, hi int) {
	if !bytes.HasPrefix(row, w.prefix) {
		// Every row has the prefix: all of them are after row, or all
		// before it.
		if bytes.Compare(row, w.prefix) < 0 {
			return 0, 0
		}
		return len(w.words), len(w.words)
	}
	x := rowWord(row, len(w.prefix))
	words := w.words
	lo, hi = 0, len(words)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if words[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(words) || words[lo] != x {
		return lo, lo
	}
	hi = len(words)
	for i := lo + 1; i < hi; {
		m := int(uint(i+hi) >> 1)
		if words[m] == x {
			i = m + 1
		} else {
			hi = m
		}
	}
	return lo, hi
}

// rowWord returns the 8 bytes of row from p on, big-endian, zero padded.
func rowWord(row []byte, p int) uint64 {
	var w [8]byte
	if p < len(row) {
		copy(w[:], row[p:])
	}
	return binary.BigEndian.Uint64(w[:])
}

// keyRow returns the row of key, false if key is malformed.
func keyRow(k []byte) ([]byte, bool) {
	if len(k) < encoding.RowLenSize {
		return nil, false
	}
	rl := int(binary.BigEndian.Uint16(k))
	if encoding.RowLenSize+rl > len(k) {
		return nil, false
	}
	return k[encoding.RowLenSize : encoding.RowLenSize+rl], true
}

// isFirstOnRow reports whether k, whose row is rl bytes, is the first key
// on its row: no family or qualifier, the latest timestamp, type Maximum.
func isFirstOnRow(k []byte, rl int) bool {
	p := encoding.RowLenSize + rl
	return len(k) == p+encoding.FamLenSize+encoding.TimestampSize+encoding.TypeSize && k[p] == 0 &&
		int64(binary.BigEndian.Uint64(k[p+1:])) == encoding.LatestTimestamp && encoding.Type(k[p+9]) == encoding.TypeMaximum
}

// buildIndexAccel returns x's indexAccel, nil if an entry is malformed
// (the plain search then reports it). It reads keys from x, which an index
// block keeps for its life (index blocks are never pooled).
func buildIndexAccel(x nonRootIndex) *indexAccel {
	ents := make([]accelEntry, x.n)
	for i := range ents {
		off, size, _, ok := x.entry(i)
		if !ok {
			return nil
		}
		ents[i].off, ents[i].size = off, size
	}
	return fillIndexAccel(&indexAccel{x: x, ents: ents}, func(i int) []byte {
		_, _, k, _ := x.entry(i)
		return k
	})
}

// buildRootAccel returns ri's indexAccel, nil if a key is malformed.
func buildRootAccel(ri *rootIndex) *indexAccel {
	if ri.len() == 0 {
		return nil
	}
	ents := make([]accelEntry, ri.len())
	for i := range ents {
		ents[i].off, ents[i].size = ri.offsets[i], ri.sizes[i]
	}
	return fillIndexAccel(&indexAccel{keys: ri.keys, ents: ents}, func(i int) []byte { return ri.keys[i] })
}

// fillIndexAccel sets a's prefix, words and firstOnRow from the n keys
// key returns; nil if a key is malformed.
func fillIndexAccel(a *indexAccel, key func(i int) []byte) *indexAccel {
	malformed := false
	a.set(len(a.ents), func(i int) []byte {
		r, ok := keyRow(key(i))
		malformed = malformed || !ok
		return r
	})
	if malformed {
		return nil
	}
	for i := range a.ents {
		k := key(i)
		r, _ := keyRow(k)
		e := &a.ents[i]
		e.firstOnRow = -1
		if len(r) <= len(a.prefix)+8 && isFirstOnRow(k, len(r)) {
			e.firstOnRow = int32(len(r))
		}
	}
	return a
}

// keyAt returns entry i's key, false if the entry is malformed.
func (a *indexAccel) keyAt(i int) ([]byte, bool) {
	if a.keys != nil {
		return a.keys[i], true
	}
	_, _, k, ok := a.x.entry(i)
	return k, ok
}

// search returns the largest i with key(i) <= key, or -1, as the plain
// searches do; ok is false if an entry it had to compare in full is
// malformed.
func (a *indexAccel) search(key []byte, cmp func(a, b []byte) int) (int, bool) {
	row, wellFormed := keyRow(key)
	if !wellFormed {
		return a.searchKeys(key, cmp, 0, len(a.ents))
	}
	lo, hi := a.span(row)
	if lo < hi && len(row) <= len(a.prefix)+8 {
		// The word holds the key's whole row: an entry that is the first
		// key on that row is at or before the key, as is every entry
		// before it.
		for lo < hi && int(a.ents[lo].firstOnRow) == len(row) {
			lo++
		}
	}
	return a.searchKeys(key, cmp, lo, hi)
}

// searchKeys is search within entries [lo, hi), all of them known to be
// after the entries before lo and before those from hi on, by whole keys.
func (a *indexAccel) searchKeys(key []byte, cmp func(a, b []byte) int, lo, hi int) (int, bool) {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, ok := a.keyAt(m)
		if !ok {
			return 0, false
		}
		if cmp(k, key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1, true
}

// indexChunk accumulates index entries for one index block being written.
type indexChunk struct {
	offsets []int64
	sizes   []int32
	keys    [][]byte
	// subEntries[i] is the cumulative number of data blocks under entries 0..i.
	subEntries []int64
	keyBytes   int
	rootVints  int
}

func (c *indexChunk) add(key []byte, offset int64, size int32, cumSubEntries int64) {
	c.keys = append(c.keys, append([]byte(nil), key...))
	c.offsets = append(c.offsets, offset)
	c.sizes = append(c.sizes, size)
	c.subEntries = append(c.subEntries, cumSubEntries)
	c.keyBytes += len(key)
	c.rootVints += encoding.VLongLen(int64(len(key)))
}

func (c *indexChunk) numEntries() int { return len(c.keys) }

func (c *indexChunk) reset() { *c = indexChunk{} }

func (c *indexChunk) nonRootSize() int {
	return 4 + 4*(len(c.keys)+1) + entryOverhead*len(c.keys) + c.keyBytes
}

func (c *indexChunk) rootSize() int {
	return entryOverhead*len(c.keys) + c.rootVints + c.keyBytes
}

func (c *indexChunk) appendRoot(dst []byte) []byte {
	for i, k := range c.keys {
		dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[i]))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[i]))
		dst = encoding.AppendVLong(dst, int64(len(k)))
		dst = append(dst, k...)
	}
	return dst
}

func (c *indexChunk) appendNonRoot(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.keys)))
	pos := 0
	for _, k := range c.keys {
		dst = binary.BigEndian.AppendUint32(dst, uint32(pos))
		pos += entryOverhead + len(k)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(pos))
	for i, k := range c.keys {
		dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[i]))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[i]))
		dst = append(dst, k...)
	}
	return dst
}

// appendMidKeyMetadata appends the mid-key metadata of a root chunk whose
// entries point at leaf blocks: the leaf holding data block (n-1)/2 and the
// position of that block's entry inside the leaf.
func (c *indexChunk) appendMidKeyMetadata(dst []byte) []byte {
	total := c.subEntries[len(c.subEntries)-1]
	mid := (total - 1) / 2
	i := 0
	for c.subEntries[i] <= mid {
		i++
	}
	var before int64
	if i > 0 {
		before = c.subEntries[i-1]
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[i]))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[i]))
	return binary.BigEndian.AppendUint32(dst, uint32(mid-before))
}
