package hfile

import (
	"bytes"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/blockcodec"
)

// Cache is what a Reader needs of a block cache (the real one lives in
// package blockcache). Keys are a file id chosen by the caller and a block
// offset. Implementations must be safe for concurrent use.
type Cache interface {
	// GetBlock returns a cached block, or nil.
	GetBlock(file uint64, offset int64) *Block
	// CacheBlock offers a block to the cache, which may decline it.
	CacheBlock(file uint64, offset int64, b *Block, inMemory bool)
}

// DataBlockAdmitter is implemented by a Cache whose admission policy may
// refuse data blocks (HBase's LruAdaptiveBlockCache). The reader asks it on a
// miss, before reading: a data block the cache would refuse is not offered,
// and is read into pooled memory that the iterator reuses once it is done
// with the block, so that it costs neither cache work nor garbage.
type DataBlockAdmitter interface {
	// AdmitsDataBlock reports whether the cache would now take the data
	// block at (file, offset). It must be cheap and must not allocate.
	AdmitsDataBlock(file uint64, offset int64) bool
}

// DataBlockSkipper is implemented by a Cache whose admission policy can say,
// without a lock, that a data block is one it would not cache now
// (AdaptiveLRU while it caches only part of the data blocks). A point
// read's seek then reads such a block without looking it up, as if there
// were no cache: the cache keeps at most a copy admitted before, which ages
// out. SkipsDataBlock answers for the data block at (file, offset), and
// counts the read as a miss if count is set (the read's last question about
// the block); it must not allocate.
type DataBlockSkipper interface {
	SkipsDataBlock(file uint64, offset int64, count bool) bool
}

// RefCountingCache is implemented by a Cache that takes a reference on every
// block it caches and on every block GetBlock returns (Block.Ref, while the
// block is cached and under the cache's lock), and drops the cache's own with
// Block.Unref when the block leaves the cache. Data blocks read into such a
// cache live in pooled memory that the last holder recycles (see pool.go), so
// that eviction under a steady miss rate makes no garbage.
type RefCountingCache interface {
	// CountsBlockRefs reports whether the cache keeps these rules.
	CountsBlockRefs() bool
}

// OffHeapCache is implemented by a RefCountingCache that can say where the
// data blocks it shares should live: outside the Go heap (package offheap)
// if OffHeapBlocks reports true, else in Go buffers (see pool.go).
type OffHeapCache interface {
	OffHeapBlocks() bool
}

// FullCache is implemented by a Cache that can say whether it is full:
// whether a block it caches now pushes an older one out. An Iterator that
// reads a cached data block through records the block's RestartIndex on
// the way, which costs a scan about 5% (Iterator.setBlock), unless the
// block came from disk into a full cache and no lookup has found it since.
// Such a block, in a cache smaller than what is read, usually leaves
// before any seek wants it; one that lookups find cached twice gets its
// index then (see Reader.checkedDataBlock).
type FullCache interface {
	Full() bool
}

// CachePeeker is implemented by a Cache that can look a block up without
// counting a miss when it is not there: GetCachedBlock returns what GetBlock
// would, but a block not found counts nothing, because the caller may then
// decide not to read it (Iterator.SeekToRow asks the blooms only on a miss).
type CachePeeker interface {
	GetCachedBlock(file uint64, offset int64) *Block
}

// CacheRecharger is implemented by a Cache that can add to what a cached
// block counts against its size: a data block's restart index, built after
// the block was cached, is charged to it this way. RechargeBlock must do
// nothing if b is no longer cached at (file, offset).
type CacheRecharger interface {
	RechargeBlock(file uint64, offset int64, b *Block, delta int64)
}

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// Cache, if set, is consulted before every block read.
	Cache Cache
	// FileID identifies this file in the cache; it must be unique among the
	// files sharing the cache.
	FileID uint64
	// InMemory marks this file's blocks as in-memory priority in the cache.
	InMemory bool
	// Logger receives warnings (a bloom filter ignored as unreadable);
	// slog.Default() if nil.
	Logger *slog.Logger
}

// Reader reads an HFile. It is safe for concurrent use; each Iterator is
// not.
type Reader struct {
	f    io.ReaderAt
	c    io.Closer
	size int64
	name string
	opts ReaderOptions
	// admitter is opts.Cache as a DataBlockAdmitter, nil if it is not one;
	// peeker as a CachePeeker.
	admitter  DataBlockAdmitter
	skipper   DataBlockSkipper
	peeker    CachePeeker
	recharger CacheRecharger
	full      FullCache
	// shareBlocks is set if opts.Cache is a RefCountingCache: data blocks
	// read to be cached are then shared (see pool.go); offHeap if they are
	// shared in off-heap memory (OffHeapCache).
	shareBlocks, offHeap bool

	trailer    *Trailer
	cmp        *encoding.Comparer
	fileInfo   FileInfo
	format     encoding.BlockFormat
	encoding   encoding.DataBlockEncoding
	decodeMvcc bool
	dataIndex  *rootIndex
	rootAccel  *indexAccel // dataIndex's search aid; nil under hbase:meta's order
	// rootIndexSize is the payload size of the data root index block.
	rootIndexSize uint64
	metaIndex     *rootIndex
	bloom         *BloomFilter
	dfBloom       *BloomFilter
	// noDeleteFamily is set when the file info's DELETE_FAMILY_COUNT says
	// the file holds no DeleteFamily markers: read once at open, since
	// every Get asks (a map lookup each time was 1% of a Get).
	noDeleteFamily bool
	bloomType      BloomType
	lastKey        encoding.Key
	// maxTS is the greatest cell timestamp TIMERANGE records; hasMaxTS is
	// false without a readable one.
	maxTS    int64
	hasMaxTS bool

	// seekers holds the seekers of closed iterators. A seeker keeps the
	// cells it decoded in a slice that grows to a block's cell count; a new
	// one per Get grew it again every time (8% of a server's CPU in a
	// random-read profile).
	seekers sync.Pool

	// metaBlocks keeps, when the reader has no block cache, the non-root
	// index and bloom blocks it has read (offset -> *Block): every seek
	// walks the index and every Get reads a bloom chunk, and without a
	// cache each would read and parse a 128 KiB block from the file. They
	// are about 2% of a file, and HBase keeps them cached too.
	metaBlocks sync.Map

	// pins holds the index and bloom blocks point reads keep going back to
	// (see pin.go).
	pins readerPins

	// bloomBroken[i] is set once bloom i (generalBloom, deleteFamilyBloom)
	// failed to read; from then on it answers "may contain", as HBase's
	// StoreFileReader does once it sets a filter faulty. bloomErrors counts
	// the filters broken so.
	bloomBroken [2]atomic.Bool
	bloomErrors atomic.Int64
	// gate decides whether MayContainGet asks the general bloom.
	gate bloomGate

	// blocksRead counts the blocks read from the file, for tests and tools.
	// Every block read writes it, so it is striped: see stripedCount.
	blocksRead stripedCount
}

// stripedCount is a counter that concurrent readers of one file add to
// without sharing a cache line: each add goes to the stripe its block's
// offset picks, 128 bytes from the next (the adjacent-line prefetcher pulls
// pairs of lines). One shared counter cost 60 ns a block read with both
// cores reading (profile, 8 clients on 2 cores).
type stripedCount struct {
	_       [64]byte // off the line of what every read reads
	stripes [8]struct {
		n atomic.Int64
		_ [120]byte
	}
}

// add counts one for the block at off. Blocks 4 KiB apart or more land on
// different stripes in turn, so two cores reading different blocks rarely
// share one.
func (c *stripedCount) add(off int64) { c.stripes[(off>>12)&7].n.Add(1) }

// load returns the count: exact once the adds it should see have returned.
func (c *stripedCount) load() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}

// Indexes of Reader.bloomBroken.
const (
	generalBloom = iota
	deleteFamilyBloom
)

// bloomErrorsTotal is BloomErrors: every Reader's bloomErrors, summed.
var bloomErrorsTotal atomic.Int64

// BloomErrors returns how many bloom filters readers in this process have
// found unreadable (a chunk failing its checksum or not decoding, a meta
// that does not parse) and have ignored since, reading those files as if
// they had no bloom. Each filter of an open file counts once. The region
// server exports it as bloomFilterErrorCount.
func BloomErrors() int64 { return bloomErrorsTotal.Load() }

// ReaderAtCloser is a file as MapFile returns it: mapped, or the file.
type ReaderAtCloser interface {
	io.ReaderAt
	io.Closer
}

// OpenFile opens the HFile at path. Close closes the file.
func OpenFile(path string, opts ReaderOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "hfile")
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errors.Wrap(err, "hfile")
	}
	r, err := Open(f, st.Size(), path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.c = f
	return r, nil
}

// Open reads the trailer and the load-on-open section of an HFile of the
// given size. name is used in errors.
func Open(f io.ReaderAt, size int64, name string, opts ReaderOptions) (*Reader, error) {
	r := &Reader{f: f, size: size, name: name, opts: opts}
	r.admitter, _ = opts.Cache.(DataBlockAdmitter)
	r.skipper, _ = opts.Cache.(DataBlockSkipper)
	r.peeker, _ = opts.Cache.(CachePeeker)
	r.recharger, _ = opts.Cache.(CacheRecharger)
	r.full, _ = opts.Cache.(FullCache)
	if rc, ok := opts.Cache.(RefCountingCache); ok {
		r.shareBlocks = rc.CountsBlockRefs()
	}
	if oc, ok := opts.Cache.(OffHeapCache); ok {
		r.offHeap = r.shareBlocks && oc.OffHeapBlocks()
	}
	if err := r.open(); err != nil {
		return nil, errors.Wrapf(err, "hfile %s", name)
	}
	return r, nil
}

func (r *Reader) open() error {
	if r.size < TrailerSize {
		return notHFile("its %d bytes are fewer than an HFile trailer's %d", r.size, TrailerSize)
	}
	tb := make([]byte, TrailerSize)
	if _, err := r.f.ReadAt(tb, r.size-TrailerSize); err != nil {
		return errors.Wrap(err, "reading trailer")
	}
	t, err := decodeTrailer(tb, r.size)
	if err != nil {
		return err
	}
	r.trailer = t
	if r.cmp, err = encoding.ComparerByName(t.ComparatorClassName); err != nil {
		// As in HBase, whose reader reports a comparator it cannot load
		// as a corrupt file: a damaged name reads as an unknown class.
		return errors.Wrap(encoding.MarkCorruption(err), "trailer comparator_class_name")
	}
	if err := t.CompressionCodec.Supported(); err != nil {
		return r.checkUnsupportedCodec(err)
	}
	blocks, err := r.readLoadOnOpen()
	if err != nil {
		return err
	}
	roots := blocks[:2]
	if r.fileInfo, err = decodeFileInfo(blocks[2].Data); err != nil {
		return errors.Wrapf(err, "file info block at offset %d", blocks[2].Offset)
	}
	if r.dataIndex, err = decodeRootIndex(roots[0].Data, int(t.DataIndexCount), t.NumDataIndexLevels > 1); err != nil {
		return errors.Wrapf(err, "data index at offset %d", roots[0].Offset)
	}
	for i, k := range r.dataIndex.keys {
		if _, err := encoding.ParseKey(k); err != nil {
			return errors.Wrapf(err, "data index entry %d at offset %d", i, roots[0].Offset)
		}
	}
	if r.metaIndex, err = decodeRootIndex(roots[1].Data, int(t.MetaIndexCount), false); err != nil {
		return errors.Wrapf(err, "meta index at offset %d", roots[1].Offset)
	}
	if err := r.checkIndex(blocks); err != nil {
		return err
	}
	// The file info decides the cell layout.
	_, r.format.IncludesTags = r.fileInfo[FileInfoMaxTagsLen]
	if v, ok := r.fileInfo.Int32(FileInfoKeyValueVersion); ok && v == 1 {
		r.format.IncludesMvcc = true
		if ts, ok := r.fileInfo.Int64(FileInfoMaxMemstoreTS); ok && ts > 0 {
			r.decodeMvcc = true
		}
	}
	if tc, ok := r.fileInfo[FileInfoTagsCompressed]; ok && r.format.IncludesTags && len(tc) == 1 && tc[0] != 0 {
		if enc := r.fileInfo[FileInfoDataBlockEnc]; enc != nil && string(enc) != "NONE" {
			return errors.Newf("tag-compressed encoded blocks are not supported")
		}
	}
	r.encoding = encoding.EncodingNone
	if name, ok := r.fileInfo[FileInfoDataBlockEnc]; ok {
		if r.encoding, err = encoding.ParseDataBlockEncoding(string(name)); err != nil {
			return encoding.MarkCorruption(err)
		}
	}
	if _, err := encoding.NewSeeker(r.encoding, r.format, r.cmp); err != nil {
		return err
	}
	if lk, ok := r.fileInfo[FileInfoLastKey]; ok {
		if r.lastKey, err = encoding.ParseKey(lk); err != nil {
			return errors.Wrap(err, "file info LASTKEY")
		}
	}
	_, r.maxTS, r.hasMaxTS = r.fileInfo.TimeRange()
	if n, ok := r.fileInfo.Int64(FileInfoDeleteFamilyCnt); ok && n == 0 {
		r.noDeleteFamily = true
	}
	if bt, ok := r.fileInfo[FileInfoBloomType]; ok {
		if r.bloomType, err = ParseBloomType(string(bt)); err != nil {
			return encoding.MarkCorruption(err)
		}
	}
	for _, b := range blocks {
		switch b.Type {
		case BlockGeneralBloomMeta, BlockDeleteFamilyBloomMeta:
			f, err := ParseBloomMeta(b.Data)
			if errors.Is(err, ErrUnsupportedBloom) {
				// A valid filter we cannot evaluate (another hash, a newer
				// filter format): read the file without it.
				r.logger().Warn("hfile: ignoring bloom filter", "file", r.name, "offset", b.Offset, "err", err)
				continue
			}
			if err != nil {
				// Its checksum verified, yet it does not parse. A bloom
				// is only an optimization: like HBase, read the file
				// without it, but count it.
				i := generalBloom
				if b.Type == BlockDeleteFamilyBloomMeta {
					i = deleteFamilyBloom
				}
				r.bloomFailed(i, errors.Wrapf(err, "%s block at offset %d", b.Type, b.Offset))
				continue
			}
			if b.Type == BlockGeneralBloomMeta {
				r.bloom = f
			} else {
				r.dfBloom = f
			}
		}
	}
	if !r.cmp.IsMeta() {
		r.rootAccel = buildRootAccel(r.dataIndex)
	}
	r.initPins()
	return nil
}

// Close releases the file if the Reader opened it.
func (r *Reader) Close() error {
	if r.c != nil {
		return r.c.Close()
	}
	return nil
}

// Name returns the name given at open.
func (r *Reader) Name() string { return r.name }

// Size returns the file size.
func (r *Reader) Size() int64 { return r.size }

// Trailer returns the decoded trailer.
func (r *Reader) Trailer() *Trailer { return r.trailer }

// FileInfo returns the file info map; callers must not modify it.
func (r *Reader) FileInfo() FileInfo { return r.fileInfo }

// MaxTimestamp returns the greatest timestamp of the file's cells, delete
// markers included, as its TIMERANGE records it; false if the file has no
// readable TIMERANGE (then any timestamp may be in it).
func (r *Reader) MaxTimestamp() (int64, bool) { return r.maxTS, r.hasMaxTS }

// Comparer returns the comparer named in the trailer.
func (r *Reader) Comparer() *encoding.Comparer { return r.cmp }

// Encoding returns the data block encoding.
func (r *Reader) Encoding() encoding.DataBlockEncoding { return r.encoding }

// Format returns the cell layout (mvcc, tags).
func (r *Reader) Format() encoding.BlockFormat { return r.format }

// EntryCount returns the number of cells.
func (r *Reader) EntryCount() uint64 { return r.trailer.EntryCount }

// FirstKey returns the first key of the file, nil if empty. The first index
// key is always the first cell's real key.
func (r *Reader) FirstKey() encoding.Key {
	if r.dataIndex.len() == 0 {
		return nil
	}
	return encoding.Key(r.dataIndex.keys[0])
}

// LastKey returns the last key of the file (from the file info), nil if empty.
func (r *Reader) LastKey() encoding.Key { return r.lastKey }

// BloomType returns the general bloom type.
func (r *Reader) BloomType() BloomType { return r.bloomType }

// BlocksRead returns the number of blocks read from the file (cache misses).
func (r *Reader) BlocksRead() int64 { return r.blocksRead.load() }

// MetaBlock returns the payload of a named meta block, or nil.
func (r *Reader) MetaBlock(name string) ([]byte, error) {
	i := r.metaIndex.search([]byte(name), bytes.Compare)
	if i < 0 || string(r.metaIndex.keys[i]) != name {
		return nil, nil
	}
	b, err := r.readBlock(r.metaIndex.offsets[i], int(r.metaIndex.sizes[i]), true)
	if err != nil {
		return nil, err
	}
	if b.Type != BlockMeta {
		return nil, r.corruptf(b.Offset, "meta index points at a %s block", b.Type)
	}
	return b.Data, nil
}

func (r *Reader) corruptf(off int64, format string, args ...interface{}) error {
	return errors.Wrapf(encoding.CorruptionErrorf(format, args...), "hfile %s: block at offset %d", r.name, off)
}

// readBlock returns the block at off through the cache. onDiskSize is the
// block's size with header and checksums, or -1 if unknown.
func (r *Reader) readBlock(off int64, onDiskSize int, cacheIt bool) (*Block, error) {
	b, err := r.readBlockKeep(off, onDiskSize, cacheIt)
	if err != nil {
		return nil, errors.Wrapf(err, "hfile %s", r.name)
	}
	return b, nil
}

// readBlockKeep is readBlock without naming the file in errors (Open does).
func (r *Reader) readBlockKeep(off int64, onDiskSize int, cacheIt bool) (*Block, error) {
	b, _, err := r.readBlockHeld(off, onDiskSize, cacheIt)
	return b, err
}

// readBlockHeld is readBlockKeep that also reports whether the block came
// from where the reader keeps blocks: the cache (a hit), or without one the
// reader's own metaBlocks.
//
// Its callers want index, bloom, meta and file-level blocks, never a data
// block, and do not release what they get. A shared block in the cache is a
// data block (where a corrupt index or meta index points): it comes back as
// a heap copy, not held, and the cache's reference for it is dropped here,
// so that no caller keeps a pooled (perhaps off-heap) buffer for good or
// pins a block the cache may recycle.
func (r *Reader) readBlockHeld(off int64, onDiskSize int, cacheIt bool) (*Block, bool, error) {
	c := r.opts.Cache
	if c != nil {
		if b := c.GetBlock(r.opts.FileID, off); b != nil {
			if b.state == blockShared {
				hb := b.clone()
				b.release()
				return hb, false, nil
			}
			return b, true, nil
		}
	} else if b, ok := r.metaBlocks.Load(off); ok {
		return b.(*Block), true, nil
	}
	b, err := r.readBlockUncached(off, onDiskSize)
	if err != nil {
		return nil, false, err
	}
	switch {
	case c != nil && (cacheIt || !b.Type.IsData()):
		c.CacheBlock(r.opts.FileID, off, b, r.opts.InMemory)
	case c == nil && (b.Type.IsIndex() || b.Type == BlockBloomChunk):
		r.metaBlocks.Store(off, b)
	}
	return b, false, nil
}

// readBlockUncached reads, verifies and decompresses one block into fresh
// memory. When the size is known it also reads the next block's header, to
// learn that block's size without another read when scanning forward.
func (r *Reader) readBlockUncached(off int64, onDiskSize int) (*Block, error) {
	return r.readBlockMem(off, onDiskSize, memHeap)
}

// blockMem says where readBlockMem puts a block.
type blockMem uint8

const (
	memHeap   blockMem = iota // fresh memory, garbage collected
	memPooled                 // a pooled buffer the caller owns alone
	memShared                 // a pooled buffer, reference counted
)

// readBlockMem is readBlockUncached into the memory mem asks for when the
// block fits a pool class (see pool.go). A pooled block is the caller's: it
// must release it and must not let it reach the cache. A shared block holds
// one reference, the caller's; a RefCountingCache takes its own. A
// compressed block's on-disk bytes are read into a pooled scratch buffer
// either way, since they are dropped once decompressed, except that a
// SNAPPY block read into pooled memory may turn out to be stored (one
// literal), whose bytes then stay where they were read.
func (r *Reader) readBlockMem(off int64, onDiskSize int, mem blockMem) (_ *Block, err error) {
	// The read is a function of its own, with the buffers to give back in
	// st, so that this defer is open-coded: the compiler does not in a
	// function with as many returns as the read, and the runtime's deferred
	// calls cost 20 ns a block.
	var st blockReadState
	defer func() {
		st.scratch.release()
		if st.header != nil {
			headerBufs.Put(st.header)
		}
		if err != nil {
			st.b.release()
		}
	}()
	return r.readBlockInto(off, onDiskSize, mem, &st)
}

// blockReadState holds the pooled buffers readBlockInto took: b, the block
// holding raw (uncompressed files, and SNAPPY until decoded), released if
// the read fails; scratch, the buffer holding raw (compressed files), and
// header, the buffer for a header read alone, released either way.
type blockReadState struct {
	b, scratch *Block
	header     *[HeaderSize]byte
}

// readBlockInto is readBlockMem's read, with its pooled buffers in st.
func (r *Reader) readBlockInto(off int64, onDiskSize int, mem blockMem, st *blockReadState) (*Block, error) {
	limit := r.size - TrailerSize
	if off < 0 || off+HeaderSize > limit {
		return nil, encoding.CorruptionErrorf("block offset %d outside the file body (%d bytes)", off, limit)
	}
	compressed := r.trailer.CompressionCodec != CompressionNone
	// A SNAPPY block our writer could not shrink is one literal (see
	// blockcodec.SnappyStored), whose bytes are used where they were read:
	// raw goes into a block, as for an uncompressed file, and becomes
	// scratch only if it must be decoded after all. A block wanted in fresh
	// memory (memHeap) is read into scratch as before, and a literal is
	// copied out of it.
	inPlace := r.trailer.CompressionCodec == CompressionSnappy && mem != memHeap
	alloc := func(n int) []byte {
		if compressed && !inPlace {
			if st.scratch = getScratch(n); st.scratch != nil {
				return st.scratch.buf[:n]
			}
		} else if mem != memHeap {
			var ok bool
			if st.b, ok = getPooledBlock(n, mem == memShared && r.offHeap); ok {
				return st.b.buf[:n]
			}
		}
		return make([]byte, n)
	}
	var raw []byte
	if onDiskSize >= HeaderSize && off+int64(onDiskSize) <= limit {
		n := int64(onDiskSize) + HeaderSize
		if off+n > limit {
			n = int64(onDiskSize)
		}
		raw = alloc(int(n))
		if _, err := r.f.ReadAt(raw, off); err != nil {
			return nil, errors.Wrapf(err, "reading block at offset %d", off)
		}
	} else {
		st.header = headerBufs.Get().(*[HeaderSize]byte) // (a local would escape to ReadAt)
		hb := st.header[:]
		if _, err := r.f.ReadAt(hb, off); err != nil {
			return nil, errors.Wrapf(err, "reading block header at offset %d", off)
		}
		h, err := decodeHeader(hb, off)
		if err != nil {
			return nil, err
		}
		if off+int64(h.onDiskSize()) > limit {
			return nil, encoding.CorruptionErrorf("block at offset %d: size %d runs past the file body", off, h.onDiskSize())
		}
		raw = alloc(h.onDiskSize())
		copy(raw, hb)
		if _, err := r.f.ReadAt(raw[HeaderSize:], off+HeaderSize); err != nil {
			return nil, errors.Wrapf(err, "reading block at offset %d", off)
		}
	}
	r.blocksRead.add(off)
	h, err := decodeHeader(raw, off)
	if err != nil {
		return nil, err
	}
	if onDiskSize >= 0 && h.onDiskSize() != onDiskSize {
		return nil, encoding.CorruptionErrorf("block at offset %d: header says %d bytes on disk, index says %d", off, h.onDiskSize(), onDiskSize)
	}
	if len(raw) < h.onDiskSize() {
		return nil, encoding.CorruptionErrorf("block at offset %d: short read", off)
	}
	if err := verifyChecksums(raw, &h, off); err != nil {
		return nil, err
	}
	nextOnDiskSize := -1
	if len(raw) >= h.onDiskSize()+HeaderSize {
		if nh, err := decodeHeader(raw[h.onDiskSize():], off+int64(h.onDiskSize())); err == nil {
			nextOnDiskSize = nh.onDiskSize()
		}
	}
	payload := raw[HeaderSize:h.onDiskDataSizeWithHdr]
	var data []byte
	backing := 0
	if !compressed {
		if len(payload) != int(h.uncompressedSize) {
			return nil, encoding.CorruptionErrorf("block at offset %d: %d payload bytes, header says %d", off, len(payload), h.uncompressedSize)
		}
		data = payload[:len(payload):len(payload)]
		backing = cap(raw)
	} else if lit, ok := storedSnappy(r.trailer.CompressionCodec, payload, int(h.uncompressedSize)); ok {
		data, backing = lit, cap(raw)
		if st.scratch != nil {
			data = append(make([]byte, 0, len(lit)), lit...)
			backing = len(data)
		}
	} else {
		if int64(h.uncompressedSize) > maxBlockUncompressed {
			return nil, encoding.CorruptionErrorf("block at offset %d: uncompressed size %d too large", off, h.uncompressedSize)
		}
		if st.b != nil {
			// raw, read into a block in case it was stored, is only the
			// input now.
			st.scratch, st.b = st.b, nil
		}
		var dst []byte
		if mem != memHeap {
			var ok bool
			if st.b, ok = getPooledBlock(int(h.uncompressedSize), mem == memShared && r.offHeap); ok {
				dst = st.b.buf[:0]
			}
		}
		if dst == nil {
			dst = make([]byte, 0, h.uncompressedSize)
		}
		data, err = r.trailer.CompressionCodec.Decompress(dst, payload, int(h.uncompressedSize))
		if err != nil {
			return nil, errors.Wrapf(encoding.MarkCorruption(err), "block at offset %d (%s)", off, h.typ)
		}
		data = data[:len(data):len(data)]
		backing = cap(dst)
	}
	if st.b == nil {
		st.b = &Block{}
	} else if mem == memShared {
		st.b.state = blockShared
		st.b.refs.Store(1)
	}
	st.b.Type, st.b.Offset, st.b.PrevOffset, st.b.OnDiskSize, st.b.NextOnDiskSize = h.typ, off, h.prevOffset, h.onDiskSize(), nextOnDiskSize
	st.b.Data, st.b.backing = data, backing
	return st.b, nil
}

// storedSnappy returns, for a SNAPPY file, what blockcodec.SnappyStored
// does.
func storedSnappy(c Compression, payload []byte, n int) ([]byte, bool) {
	if c != CompressionSnappy {
		return nil, false
	}
	return blockcodec.SnappyStored(payload, n)
}

// headerBufs holds buffers for reading a block header alone.
var headerBufs = sync.Pool{New: func() any { return new([HeaderSize]byte) }}

// maxBlockUncompressed bounds the memory one corrupt header can make us
// allocate. HBase caps blocks at 10 × the block size; we allow any block
// up to 1 GiB.
const maxBlockUncompressed = 1 << 30

// iterBlock returns the block at off for an Iterator, which expects a data
// block: from the cache, or read from the file. A data block the cache will
// not take (no cache, !cacheIt, or refused by the cache's admission policy,
// asked before reading) is read into pooled memory and not offered to the
// cache; the iterator owns it and must release it. Any other block (an inline
// index or bloom block met by Next) is never pooled, and is always offered
// to the cache, as readBlock does.
func (r *Reader) iterBlock(off int64, onDiskSize int, cacheIt bool) (*Block, error) {
	b, _, err := r.iterBlockHit(off, onDiskSize, cacheIt)
	return b, err
}

// iterBlockHit is iterBlock that also reports whether the block came from
// the cache.
func (r *Reader) iterBlockHit(off int64, onDiskSize int, cacheIt bool) (*Block, bool, error) {
	b, hit, _, err := r.iterBlockLookup(off, onDiskSize, cacheIt, true)
	return b, hit, err
}

// iterBlockLookup is iterBlockHit, looking the block up in the cache only
// if lookup is set; a block not looked up is not offered to it either,
// unless it is not a data block. churned reports a hit on a block that was
// read into a full cache and not found there since (see FullCache).
func (r *Reader) iterBlockLookup(off int64, onDiskSize int, cacheIt, lookup bool) (_ *Block, hit, churned bool, _ error) {
	c := r.opts.Cache
	if c != nil && lookup {
		if b := c.GetBlock(r.opts.FileID, off); b != nil {
			return b, true, b.clearChurn(), nil
		}
	}
	keep := c != nil && cacheIt && lookup && (r.admitter == nil || r.admitter.AdmitsDataBlock(r.opts.FileID, off))
	mem := memPooled
	if keep {
		mem = memHeap
		if r.shareBlocks {
			mem = memShared
		}
	}
	b, err := r.readBlockMem(off, onDiskSize, mem)
	if err != nil {
		return nil, false, false, errors.Wrapf(err, "hfile %s", r.name)
	}
	if !b.Type.IsData() {
		if b.state != blockHeap {
			hb := b.clone()
			b.release()
			b = hb
		}
		keep = c != nil
	}
	if keep {
		if r.full != nil && b.Type.IsData() && r.full.Full() {
			b.churn.Store(true) // before other readers can see b
		}
		c.CacheBlock(r.opts.FileID, off, b, r.opts.InMemory)
	}
	return b, false, false, nil
}

// clone returns a heap copy of b.
func (b *Block) clone() *Block {
	data := append([]byte(nil), b.Data...)
	return &Block{Type: b.Type, Offset: b.Offset, PrevOffset: b.PrevOffset, OnDiskSize: b.OnDiskSize,
		NextOnDiskSize: b.NextOnDiskSize, Data: data, backing: cap(data)}
}

// dataBlock loads the data block at off for an Iterator (see iterBlock) and
// checks its type and encoding.
//
// A block found in the cache gets its RestartIndex here if it has none yet,
// so that this seek and every later one skips ahead in it (one read into a
// full cache, from its second hit: see checkedDataBlock). Building decodes
// the whole block once, which costs about two linear seeks; blocks seen only
// once (read on a miss) never pay it, and neither do scans, which reach
// blocks through Next.
//
// A block the cache says to skip (DataBlockSkipper) is read without a
// lookup, into pooled memory.
func (r *Reader) dataBlock(off int64, onDiskSize int, cacheIt bool) (*Block, error) {
	lookup := r.skipper == nil || !r.skipper.SkipsDataBlock(r.opts.FileID, off, true)
	b, hit, churned, err := r.iterBlockLookup(off, onDiskSize, cacheIt, lookup)
	if err != nil {
		return nil, err
	}
	return r.checkedDataBlock(b, off, hit && !churned)
}

// cachedDataBlock returns the data block at off as dataBlock does if the
// cache holds it, else nil, counting no miss (see CachePeeker): nil also
// when the cache cannot look a block up that way.
func (r *Reader) cachedDataBlock(off int64) (*Block, error) {
	if r.peeker == nil || r.skipper != nil && r.skipper.SkipsDataBlock(r.opts.FileID, off, false) {
		return nil, nil
	}
	b := r.peeker.GetCachedBlock(r.opts.FileID, off)
	if b == nil {
		return nil, nil
	}
	return r.checkedDataBlock(b, off, !b.clearChurn())
}

// checkedDataBlock checks b, the data block read at off or found in the
// cache, and gives it its RestartIndex if index is set (a cached block).
//
// A block read into a full cache is indexed from its second hit on, not
// its first (dataBlock passes index only then): most such blocks leave the
// cache after one hit or none, and building costs about two linear seeks,
// where the seek that skips it makes one. A reverse scan, which decodes the
// whole block it steps into anyway, no longer decodes it twice.
func (r *Reader) checkedDataBlock(b *Block, off int64, index bool) (*Block, error) {
	if err := r.checkDataBlock(b, off); err != nil {
		b.release()
		return nil, err
	}
	if index && b.restarts.Load() == nil && r.encoding != encoding.EncodingRowIndexV1 {
		// (A ROW_INDEX_V1 block carries its own index.)
		r.buildRestartIndex(b)
	}
	return b, nil
}

// buildRestartIndex builds b's RestartIndex with a pooled seeker. A block
// that does not decode gets none: the seek that follows reports the
// corruption with its offset.
func (r *Reader) buildRestartIndex(b *Block) {
	s, ok := r.seekers.Get().(encoding.Seeker)
	if !ok {
		var err error
		if s, err = encoding.NewSeeker(r.encoding, r.format, r.cmp); err != nil {
			return
		}
	}
	defer r.seekers.Put(s)
	if err := s.Init(b.Data); err != nil {
		return
	}
	if idx, err := s.BuildRestartIndex(); err == nil {
		r.attachRestartIndex(b, idx)
	}
}

// attachRestartIndex gives b, a cached data block, idx as its RestartIndex
// unless it has one already, and charges idx to the cache.
func (r *Reader) attachRestartIndex(b *Block, idx *encoding.RestartIndex) {
	if b.restarts.CompareAndSwap(nil, idx) && r.recharger != nil {
		r.recharger.RechargeBlock(r.opts.FileID, b.Offset, b, idx.MemSize())
	}
}

// checkDataBlock checks that b, read at off, is a data block of this file's
// encoding.
func (r *Reader) checkDataBlock(b *Block, off int64) error {
	if !b.Type.IsData() {
		return r.corruptf(off, "expected a data block, found %s", b.Type)
	}
	if (b.Type == BlockEncodedData) != (r.encoding != encoding.EncodingNone) {
		return r.corruptf(off, "%s block in a file with %s encoding", b.Type, r.encoding)
	}
	if b.Type == BlockEncodedData {
		if len(b.Data) < 2 || encoding.DataBlockEncoding(uint16(b.Data[0])<<8|uint16(b.Data[1])) != r.encoding {
			return r.corruptf(off, "encoded block does not carry encoding id %d", r.encoding)
		}
	}
	return nil
}

// compareKeys is the reader's key comparison as a plain function.
func (r *Reader) compareKeys(a, b []byte) int { return r.cmp.CompareKeys(a, b) }

// lookupDataBlock walks the index from the root to the data block that may
// hold key. It returns idx < 0 if key precedes the file. nextIndexed is the
// index key of the following block (nil if key is in the last block).
func (r *Reader) lookupDataBlock(key encoding.Key) (off int64, size int, nextIndexed nextKey, found bool, err error) {
	ri := r.dataIndex
	var i int
	if a := r.rootAccel; a != nil {
		i, _ = a.search(key, r.compareKeys) // (root keys were checked at open)
	} else {
		i = ri.search(key, r.compareKeys)
	}
	if i < 0 {
		return 0, 0, nextKey{}, false, nil
	}
	off, size = ri.offsets[i], int(ri.sizes[i])
	if i+1 < ri.len() {
		nextIndexed = nextKey{key: ri.keys[i+1]}
	}
	pins := r.pins.leaves
	for level := 1; level < int(r.trailer.NumDataIndexLevels); level++ {
		var b *Block
		var err error
		if pins != nil {
			b, err = r.pinnedBlock(&pins[i], off, size)
		} else {
			b, err = r.readBlock(off, size, true)
		}
		if err != nil {
			return 0, 0, nextKey{}, false, err
		}
		want := BlockIntermediateIndex
		if level == int(r.trailer.NumDataIndexLevels)-1 {
			want = BlockLeafIndex
		}
		if b.Type != want {
			return 0, 0, nextKey{}, false, r.corruptf(off, "index level %d: expected %s, found %s", level, want, b.Type)
		}
		var o int64
		var s int32
		var ok bool
		pins = nil
		a := b.accel.Load()
		if a == nil {
			x, err := parseNonRootIndex(b.Data, off)
			if err != nil {
				return 0, 0, nextKey{}, false, errors.Wrapf(err, "hfile %s", r.name)
			}
			if a = r.indexAccel(b, x); a == nil {
				if i, ok = x.search(key, r.compareKeys); ok && i >= 0 {
					o, s, _, ok = x.entry(i)
				}
				if ok && i >= 0 && i+1 < x.n {
					var nk []byte
					_, _, nk, ok = x.entry(i + 1)
					nextIndexed = nextKey{key: nk}
				}
			}
		}
		if a != nil {
			// The answer comes from the accelerator's entries; the next
			// entry's key is read from the block only if it is asked for.
			pins = a.pins
			if i, ok = a.search(key, r.compareKeys); ok && i >= 0 {
				o, s = a.ents[i].off, a.ents[i].size
				if i+1 < len(a.ents) {
					nextIndexed = nextKey{a: a, i: i + 1}
				}
			}
		}
		if ok && i < 0 {
			return 0, 0, nextKey{}, false, r.corruptf(off, "index block does not cover key %s", key)
		}
		if !ok || o < 0 || s < HeaderSize {
			return 0, 0, nextKey{}, false, r.corruptf(off, "malformed index block")
		}
		off, size = o, int(s)
	}
	return off, size, nextIndexed, true, nil
}

// nextKey is the index key of the block after one lookupDataBlock found,
// the key itself or an entry of a leaf's indexAccel to read it from when
// asked: most lookups (point reads) never ask, and reading it is a cache
// miss on the leaf block. The zero nextKey is no key (the last block).
type nextKey struct {
	key []byte
	a   *indexAccel
	i   int
}

// get returns the key, false if the entry holding it is malformed.
func (n nextKey) get() ([]byte, bool) {
	if n.a == nil {
		return n.key, true
	}
	return n.a.keyAt(n.i)
}

// indexAccelAfter is the lookup of an index block that builds its search
// aid: a block the cache drops again after a few lookups (a cache far too
// small for the index) never pays for one.
const indexAccelAfter = 16

// indexAccel returns the search aid of b, the non-root index block x,
// building it on the block's indexAccelAfter-th lookup; nil before, under hbase:meta's
// row order, which is not the rows' byte order, and for a block with a
// malformed entry.
func (r *Reader) indexAccel(b *Block, x nonRootIndex) *indexAccel {
	if a := b.accel.Load(); a != nil || r.cmp.IsMeta() {
		return a
	}
	if b.lookups.Add(1) < indexAccelAfter {
		return nil
	}
	a := buildIndexAccel(x)
	if a == nil {
		return nil
	}
	if b.Type == BlockIntermediateIndex && r.pins.leaves != nil {
		// The blocks under an intermediate block are pinned as the
		// root's are (see pin.go).
		a.pins = make([]atomic.Pointer[Block], len(a.ents))
	}
	if b.accel.CompareAndSwap(nil, a) {
		if r.recharger != nil && r.opts.Cache != nil {
			r.recharger.RechargeBlock(r.opts.FileID, b.Offset, b, a.memSize())
		}
		return a
	}
	return b.accel.Load()
}

// Blooms returns the general and delete-family bloom filters, nil if absent.
func (r *Reader) Blooms() (general, deleteFamily *BloomFilter) { return r.bloom, r.dfBloom }

func (r *Reader) loadBloomChunk(off int64, size int32) ([]byte, error) {
	b, err := r.readBlock(off, int(size), true)
	return r.bloomChunkData(b, off, err)
}

// bloomChunkData checks that b, read at off, is a bloom chunk.
func (r *Reader) bloomChunkData(b *Block, off int64, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if b.Type != BlockBloomChunk {
		return nil, r.corruptf(off, "bloom index points at a %s block", b.Type)
	}
	return b.Data, nil
}

// RowProbe is what a point read of one row asks a file's bloom filters:
// the row, and the family and qualifier when the read names one column
// (nil Qualifier: the whole row).
type RowProbe struct {
	Row, Family, Qualifier []byte

	// The bloom hashes of Row, once a file's ROW or delete-family bloom
	// has needed them: the next file's need not hash the row again.
	rowH1, rowH2 int32
	rowHashed    bool
}

// rowHashes returns the bloom hashes of p.Row.
func (p *RowProbe) rowHashes() (int32, int32) {
	if !p.rowHashed {
		p.rowH1, p.rowH2 = bloomHashes(p.Row)
		p.rowHashed = true
	}
	return p.rowH1, p.rowH2
}

// MayContainGet reports whether a point read of p could find anything in
// the file: cells of p's row (of its column, with a ROWCOL bloom and a
// qualifier), or a DeleteFamily marker of the row, which the delete-family
// bloom answers for. Errors are as MayContainRow's.
//
// The general bloom is asked only while it pays (see bloomGate): when
// nearly every read it answers finds its row anyway, most reads skip it and
// answer "may contain", as a file without a bloom does.
func (r *Reader) MayContainGet(p *RowProbe) (bool, error) {
	if !r.asksBloom() {
		return r.trailer.EntryCount != 0, nil
	}
	return r.mayContainGet(p)
}

// asksBloom reports whether a point read asks the file's general bloom: a
// file without one answers "may contain" alone, and a file with one asks
// it as its gate decides.
func (r *Reader) asksBloom() bool { return r.bloom != nil && r.gate.ask() }

// mayContainGet is MayContainGet for a read asksBloom let ask.
func (r *Reader) mayContainGet(p *RowProbe) (bool, error) {
	var ok bool
	var err error
	if p.Qualifier != nil && r.bloomType == BloomRowCol {
		ok, err = r.MayContainRowCol(p.Row, p.Family, p.Qualifier)
	} else {
		ok, err = r.mayContainRow(p)
	}
	if err == nil {
		r.gate.observe(ok)
	}
	if err != nil || ok {
		return ok, err
	}
	return r.mayContainDeleteFamily(p)
}

// bloomGate turns a file's general bloom off for point reads while it does
// not pay. Asking it costs a bloom chunk lookup in the block cache and its
// probes in cold memory, about 0.6 µs; only a "no" saves anything: a data
// block read on a miss (5 µs or more), or an index lookup and a seek. When
// reads look for rows the file holds (one store file, keys that exist: the
// usual point read), that is never. So every bloomWindow answers the gate
// counts the noes, and if they are fewer than one in bloomPaysEvery, below
// which asking costs more than the noes save, reads ask only one time in
// bloomSampleEvery until a window shows that it pays again. A row the file
// lacks then costs its read a block it did not need, nothing else: "may
// contain" is always a correct answer. Several files, most of which lack a
// given row, keep their blooms on.
//
// Every point read reads skipping, and the counters are written on other
// cores: skipping has a cache line of its own, and while the bloom is asked
// by every read only one answer in bloomObserveEvery, at random, is counted,
// so that the readers' cores do not pass the counters' line to and fro on
// every read (3.7% of a random read's CPU was spent loading skipping).
type bloomGate struct {
	_             [64]byte
	skipping      atomic.Bool
	_             [63]byte
	answers, noes atomic.Int64 // in the current window
}

const (
	bloomWindow       = 1024
	bloomPaysEvery    = 32
	bloomSampleEvery  = 16
	bloomObserveEvery = 8
)

// ask reports whether this read asks the bloom. While skipping, the sample
// is drawn from the runtime's per-thread generator, so that reads on
// several cores share no counter.
func (g *bloomGate) ask() bool {
	return !g.skipping.Load() || rand.Uint32()%bloomSampleEvery == 0
}

// observe counts an answer of the bloom (while skipping, every answer of
// the sampled reads; else one in bloomObserveEvery), and closes the window
// when full.
func (g *bloomGate) observe(mayContain bool) {
	if !g.skipping.Load() && rand.Uint32()%bloomObserveEvery != 0 {
		return
	}
	if !mayContain {
		g.noes.Add(1)
	}
	if n := g.answers.Add(1); n >= bloomWindow && g.answers.CompareAndSwap(n, 0) {
		g.skipping.Store(g.noes.Swap(0)*bloomPaysEvery < n)
	}
}

// MayContainRow reports whether the file may hold cells of row. It is false
// only when the file certainly has none (empty file, or a ROW bloom says so).
//
// A bloom chunk that cannot be read (a checksum or format error) does not
// fail the lookup: the filter is logged once at Warn, counted (BloomErrors)
// and ignored from then on, so the file answers "may contain", as HBase does
// with a faulty bloom. Errors are returned only for a malformed probe.
func (r *Reader) MayContainRow(row []byte) (bool, error) {
	return r.mayContainRow(&RowProbe{Row: row})
}

// mayContainRow is MayContainRow for p.Row.
func (r *Reader) mayContainRow(p *RowProbe) (bool, error) {
	if r.trailer.EntryCount == 0 {
		return false, nil
	}
	if r.bloom == nil || r.bloomType != BloomRow || r.bloomBroken[generalBloom].Load() {
		return true, nil
	}
	h1, h2 := p.rowHashes()
	ok, err := r.bloom.mayContainHashed(p.Row, h1, h2, &r.pins.general)
	if err != nil {
		return r.bloomError(generalBloom, err)
	}
	return ok, nil
}

// MayContainRowCol reports whether the file may hold cells of the column
// row/family:qualifier, using a ROWCOL bloom or, failing that, a ROW bloom.
// Bloom read errors are handled as in MayContainRow.
func (r *Reader) MayContainRowCol(row, family, qualifier []byte) (bool, error) {
	if r.trailer.EntryCount == 0 {
		return false, nil
	}
	if r.bloom == nil || r.bloomType != BloomRowCol {
		return r.MayContainRow(row)
	}
	if r.bloomBroken[generalBloom].Load() {
		return true, nil
	}
	var buf [128]byte
	ok, err := r.bloom.mayContain(RowColBloomKey(buf[:0], row, qualifier), &r.pins.general)
	if err != nil {
		return r.bloomError(generalBloom, err)
	}
	return ok, nil
}

// MayContainDeleteFamily reports whether the file may hold DeleteFamily or
// DeleteFamilyVersion markers for row. Bloom read errors are handled as in
// MayContainRow.
func (r *Reader) MayContainDeleteFamily(row []byte) (bool, error) {
	return r.mayContainDeleteFamily(&RowProbe{Row: row})
}

// mayContainDeleteFamily is MayContainDeleteFamily for p.Row.
func (r *Reader) mayContainDeleteFamily(p *RowProbe) (bool, error) {
	if r.noDeleteFamily {
		return false, nil
	}
	if r.dfBloom == nil || r.bloomBroken[deleteFamilyBloom].Load() {
		return true, nil
	}
	h1, h2 := p.rowHashes()
	ok, err := r.dfBloom.mayContainHashed(p.Row, h1, h2, &r.pins.deleteFamily)
	if err != nil {
		return r.bloomError(deleteFamilyBloom, err)
	}
	return ok, nil
}

// bloomError handles an error of bloom i's lookup: a bad probe is the
// caller's, anything else breaks the filter and answers "may contain".
func (r *Reader) bloomError(i int, err error) (bool, error) {
	if errors.Is(err, errBadBloomProbe) {
		return false, err
	}
	r.bloomFailed(i, err)
	return true, nil
}

// bloomFailed marks bloom i broken, and the first time logs why and counts
// it.
func (r *Reader) bloomFailed(i int, err error) {
	if !r.bloomBroken[i].CompareAndSwap(false, true) {
		return
	}
	r.bloomErrors.Add(1)
	bloomErrorsTotal.Add(1)
	which := "general"
	if i == deleteFamilyBloom {
		which = "delete-family"
	}
	r.logger().Warn("hfile: bloom filter unreadable, reading the file without it", "file", r.name, "bloom", which, "err", err.Error())
}

// BloomErrors returns how many of this file's bloom filters (0 to 2) were
// found unreadable and are ignored (see MayContainRow).
func (r *Reader) BloomErrors() int64 { return r.bloomErrors.Load() }

// skipBloomChunk reports, for a block at off that failed to read with err,
// its on-disk size if it is a chunk of one of the file's blooms (which a
// scan does not need), breaking that bloom; 0 otherwise.
func (r *Reader) skipBloomChunk(off int64, err error) int64 {
	for i, f := range [...]*BloomFilter{generalBloom: r.bloom, deleteFamilyBloom: r.dfBloom} {
		if f == nil {
			continue
		}
		for _, c := range f.Chunks {
			if c.Offset == off {
				r.bloomFailed(i, err)
				return int64(c.OnDiskSize)
			}
		}
	}
	return 0
}

func (r *Reader) logger() *slog.Logger {
	if r.opts.Logger != nil {
		return r.opts.Logger
	}
	return slog.Default()
}
