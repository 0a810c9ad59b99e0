package hfile

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// Defaults. Neither is HBase's; both are settings HBase has and reads back.
const (
	// DefaultBlockSize is 4 KiB where HBase's is 64 KiB, as Pebble's and
	// LevelDB's. A point read that misses the block cache reads, checksums
	// and decompresses a whole block, and a cache of a tenth of the data
	// holds 16 times more of the hot spots in 4 KiB blocks. Measured with
	// the peer harness (1M 14-byte keys, 100-byte values, FAST_DIFF +
	// SNAPPY, one file), 64 KiB -> 4 KiB: random reads with a cache of 10%
	// of the data 11.5k -> 93k Gets/s, all cached 39k -> 126k, scans 0.50M
	// -> 1.07M rows/s; the file grows by 3% (106.3 -> 109.2 MiB: block
	// headers, checksums and index entries).
	// Families that are only scanned can still ask for 64 KiB (BLOCKSIZE).
	DefaultBlockSize = 4 << 10
	// DefaultIndexBlockMaxSize is 16 KiB where HBase's is 128 KiB, which
	// HBase sizes for 64 KiB data blocks: with 4 KiB blocks a 128 KiB leaf
	// index block holds about 3,000 entries, so every point read's binary
	// search makes a dozen probes into cold memory, and a leaf evicted from
	// a small cache costs a 128 KiB read and decompression to bring back.
	// Measured with a 300k-row table (4 KiB FAST_DIFF + SNAPPY blocks, cache
	// a tenth of the data, Gets in CPU per read, paired runs): 128 KiB ->
	// 16 KiB leaf index and bloom chunks: 8.4-10.4 -> 7.3-9.7 µs, 750 -> 430
	// bytes allocated per read (less re-reading of evicted index and bloom
	// blocks).
	DefaultIndexBlockMaxSize = 16 << 10
)

// WriterOptions configures a Writer. The zero value of every field means
// HBase's default.
type WriterOptions struct {
	// BlockSize is the target uncompressed size of a data block (HBase's
	// BLOCKSIZE); blocks close once they reach it. Default
	// DefaultBlockSize (4 KiB; HBase's is 64 KiB).
	BlockSize int
	// Encoding is the data block encoding. Default NONE.
	Encoding encoding.DataBlockEncoding
	// Compression applies to every block's payload. The zero value is LZO's
	// ordinal, which cannot be written; it means NONE.
	Compression Compression
	// ChecksumType defaults to CRC32C; BytesPerChecksum to 16 KiB.
	ChecksumType     ChecksumType
	BytesPerChecksum int
	// IndexBlockMaxSize is hfile.index.block.max.size: when the root index
	// would exceed it, leaf (and then intermediate) levels are written.
	IndexBlockMaxSize int
	// IndexMinEntries is hfile.index.block.min.entries (default 16).
	IndexMinEntries int
	// Comparer orders the cells; default encoding.InnerStoreComparer.
	Comparer *encoding.Comparer
	// ExcludeMvcc leaves out the per-cell memstore timestamp (HBase includes
	// it by default).
	ExcludeMvcc bool
	// IncludesTags makes every cell carry a tags length (and tags).
	IncludesTags bool
	// BloomType selects the general bloom filter: NONE, ROW or ROWCOL.
	BloomType BloomType
	// BloomErrorRate is io.storefile.bloom.error.rate (default 0.01).
	BloomErrorRate float64
	// BloomBlockSize is io.storefile.bloom.block.size (default DefaultBloomChunkSize).
	BloomBlockSize int
	// DisableDeleteFamilyBloom turns off the delete-family bloom, which HBase
	// writes by default when the file holds DeleteFamily markers.
	DisableDeleteFamilyBloom bool
	// CreateTime is stored as hfile.CREATE_TIME_TS; default now.
	CreateTime time.Time
}

func (o *WriterOptions) withDefaults() WriterOptions {
	r := *o
	if r.BlockSize <= 0 {
		r.BlockSize = DefaultBlockSize
	}
	if r.ChecksumType == ChecksumNull {
		r.ChecksumType = ChecksumCRC32C
	}
	if r.BytesPerChecksum <= 0 {
		r.BytesPerChecksum = DefaultBytesPerChecksum
	}
	if r.IndexBlockMaxSize <= 0 {
		r.IndexBlockMaxSize = DefaultIndexBlockMaxSize
	}
	if r.IndexMinEntries <= 0 {
		r.IndexMinEntries = defaultMinIndexKeys
	}
	if r.Comparer == nil {
		r.Comparer = encoding.InnerStoreComparer
	}
	if r.CreateTime.IsZero() {
		r.CreateTime = time.Now()
	}
	return r
}

// Writer writes an HFile v3. Append cells in comparer order, then Close.
// It writes sequentially to an io.Writer and never seeks; the caller syncs
// and closes the underlying file. A Writer is not safe for concurrent use.
type Writer struct {
	w    io.Writer
	opts WriterOptions
	cmp  *encoding.Comparer
	enc  encoding.BlockEncoder

	off        int64
	prevOffset [numBlockTypes]int64
	err        error
	closed     bool

	// Current data block.
	blockFirstKey []byte
	lastKey       []byte // key of the last appended cell
	prevBlockLast []byte // last key of the previous data block
	firstDataOff  int64
	lastDataOff   int64
	dataBlocks    int64

	// Data index.
	inline    indexChunk // entries of the current (leaf-level) chunk
	leaves    indexChunk // one entry per written leaf block
	idxSize   uint64     // uncompressed data index bytes
	totalUnc  uint64
	leafCount int

	bloom          *BloomWriter
	dfBloom        *BloomWriter
	bloomKey       []byte
	lastBloomKey   []byte
	lastDFBloomRow []byte

	metaNames  []string
	metaBlocks map[string][]byte
	fileInfo   FileInfo

	// Statistics for the file info.
	entries       uint64
	totalKeyLen   uint64
	totalValueLen uint64
	maxSeq        encoding.SeqNum
	maxTagsLen    int
	biggestLen    int64
	biggestKey    []byte
	minTS, maxTS  int64
	earliestPut   int64
	deleteFamily  int64

	hdrBuf  [HeaderSize]byte
	scratch []byte
	comp    []byte
}

// NewWriter returns a Writer that writes an HFile to w.
func NewWriter(w io.Writer, o WriterOptions) (*Writer, error) {
	opts := o.withDefaults()
	if opts.BytesPerChecksum < minBytesPerChecksum {
		return nil, errors.Newf("hfile: bytesPerChecksum %d < %d", opts.BytesPerChecksum, minBytesPerChecksum)
	}
	if err := opts.Compression.Supported(); err != nil {
		return nil, err
	}
	enc, err := encoding.NewBlockEncoder(opts.Encoding, encoding.BlockFormat{IncludesMvcc: !opts.ExcludeMvcc, IncludesTags: opts.IncludesTags})
	if err != nil {
		return nil, err
	}
	wr := &Writer{
		w: w, opts: opts, cmp: opts.Comparer, enc: enc,
		firstDataOff: -1, lastDataOff: -1,
		metaBlocks: map[string][]byte{}, fileInfo: FileInfo{},
		minTS: math.MaxInt64, maxTS: math.MinInt64, earliestPut: math.MaxInt64,
	}
	for i := range wr.prevOffset {
		wr.prevOffset[i] = -1
	}
	if opts.BloomType != BloomNone {
		if wr.bloom, err = NewBloomWriter(opts.BloomType, opts.BloomErrorRate, opts.BloomBlockSize); err != nil {
			return nil, err
		}
	}
	if !opts.DisableDeleteFamilyBloom {
		if wr.dfBloom, err = NewBloomWriter(BloomRow, opts.BloomErrorRate, opts.BloomBlockSize); err != nil {
			return nil, err
		}
	}
	return wr, nil
}

// Append adds a cell. Cells must come in comparer order (equal keys, which
// differ only in sequence id, newest first).
func (w *Writer) Append(kv *encoding.KeyValue) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("hfile: append after close")
	}
	if err := kv.Validate(); err != nil {
		return errors.Wrap(err, "hfile: append")
	}
	if !w.opts.IncludesTags && len(kv.Tags) > 0 {
		return errors.New("hfile: cell has tags but the writer excludes them")
	}
	w.scratch = kv.AppendKey(w.scratch[:0])
	key := encoding.Key(w.scratch)
	sameKey := false
	if w.lastKey != nil {
		c := w.cmp.CompareKeys(encoding.Key(w.lastKey), key)
		if c > 0 {
			return errors.Newf("hfile: added a key not lexically larger than previous: current %s, previous %s",
				key, encoding.Key(w.lastKey))
		}
		sameKey = c == 0
	}
	// Identical keys never straddle a block boundary.
	if !sameKey && w.enc.Count() > 0 &&
		(w.enc.UnencodedSize() >= w.opts.BlockSize || w.enc.EncodedSize() >= w.opts.BlockSize) {
		if err := w.finishDataBlock(); err != nil {
			return w.setErr(err)
		}
	}
	if w.enc.Count() == 0 {
		w.blockFirstKey = append(w.blockFirstKey[:0], key...)
	}
	w.enc.Add(kv)
	if err := w.addToBlooms(kv, key); err != nil {
		return w.setErr(err)
	}

	w.lastKey = append(w.lastKey[:0], key...)
	w.entries++
	w.totalKeyLen += uint64(len(key))
	w.totalValueLen += uint64(len(kv.Value))
	if kv.SeqNum > w.maxSeq {
		w.maxSeq = kv.SeqNum
	}
	if len(kv.Tags) > w.maxTagsLen {
		w.maxTagsLen = len(kv.Tags)
	}
	cellLen := int64(4 + 8 + len(key) + len(kv.Value))
	if len(kv.Tags) > 0 {
		cellLen += int64(2 + len(kv.Tags))
	}
	if cellLen > w.biggestLen {
		w.biggestLen = cellLen
		w.biggestKey = append(w.biggestKey[:0], key...)
	}
	w.minTS = min(w.minTS, kv.Timestamp)
	w.maxTS = max(w.maxTS, kv.Timestamp)
	if kv.Type == encoding.TypePut {
		w.earliestPut = min(w.earliestPut, kv.Timestamp)
	}
	return nil
}

func (w *Writer) addToBlooms(kv *encoding.KeyValue, key encoding.Key) error {
	if w.bloom != nil {
		switch w.opts.BloomType {
		case BloomRow:
			w.bloomKey = append(w.bloomKey[:0], kv.Row...)
		case BloomRowCol:
			w.bloomKey = RowColBloomKey(w.bloomKey[:0], kv.Row, kv.Qualifier)
		}
		// Like HBase, a key goes into the bloom once, when it changes.
		if w.lastBloomKey == nil || !bytes.Equal(w.bloomKey, w.lastBloomKey) {
			w.bloom.Add(w.bloomKey)
			w.lastBloomKey = append(w.lastBloomKey[:0], w.bloomKey...)
			if w.lastBloomKey == nil {
				w.lastBloomKey = []byte{}
			}
		}
	}
	if kv.Type == encoding.TypeDeleteFamily || kv.Type == encoding.TypeDeleteFamilyVersion {
		w.deleteFamily++
		if w.dfBloom != nil && (w.lastDFBloomRow == nil || !bytes.Equal(w.lastDFBloomRow, kv.Row)) {
			w.dfBloom.Add(kv.Row)
			w.lastDFBloomRow = append(w.lastDFBloomRow[:0], kv.Row...)
			if w.lastDFBloomRow == nil {
				w.lastDFBloomRow = []byte{}
			}
		}
	}
	return nil
}

func (w *Writer) setErr(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// AppendMetaBlock adds a named meta block (METABLKc), written at close in
// name order.
func (w *Writer) AppendMetaBlock(name string, data []byte) error {
	if _, ok := w.metaBlocks[name]; ok {
		return errors.Newf("hfile: duplicate meta block %q", name)
	}
	w.metaNames = append(w.metaNames, name)
	w.metaBlocks[name] = append([]byte(nil), data...)
	return nil
}

// SetFileInfo adds a file info entry. Keys starting with "hfile." are
// reserved for the writer.
func (w *Writer) SetFileInfo(key string, value []byte) error {
	if strings.HasPrefix(key, "hfile.") {
		return errors.Newf("hfile: file info key %q is reserved", key)
	}
	w.fileInfo[key] = append([]byte(nil), value...)
	return nil
}

// writeBlock compresses payload, frames it with a header and checksums,
// writes it and returns its offset and on-disk size.
func (w *Writer) writeBlock(t BlockType, payload []byte) (int64, int32, error) {
	// HBase's total_uncompressed_bytes leaves out the root data index block.
	if !(t == BlockRootIndex && w.prevOffset[BlockRootIndex] < 0) {
		w.totalUnc += uint64(HeaderSize + len(payload))
	}
	var err error
	w.comp, err = w.opts.Compression.Compress(append(w.comp[:0], w.hdrBuf[:]...), payload)
	if err != nil {
		return 0, 0, errors.Wrapf(err, "hfile: compressing %s block", t)
	}
	dataLen := len(w.comp)
	nsums := numChecksumChunks(dataLen, w.opts.BytesPerChecksum)
	typeID := t
	if t == BlockEncodedData {
		typeID = BlockData
	}
	h := header{
		typ:                     t,
		onDiskSizeWithoutHeader: int32(dataLen - HeaderSize + 4*nsums),
		uncompressedSize:        int32(len(payload)),
		prevOffset:              w.prevOffset[typeID],
		checksumType:            w.opts.ChecksumType,
		bytesPerChecksum:        int32(w.opts.BytesPerChecksum),
		onDiskDataSizeWithHdr:   int32(dataLen),
	}
	h.encode(w.comp[:HeaderSize])
	w.comp = appendChecksums(w.comp, w.comp[:dataLen], w.opts.ChecksumType, w.opts.BytesPerChecksum)
	off := w.off
	if _, err := w.w.Write(w.comp); err != nil {
		return 0, 0, errors.Wrapf(err, "hfile: writing %s block at offset %d", t, off)
	}
	w.off += int64(len(w.comp))
	w.prevOffset[typeID] = off
	return off, int32(len(w.comp)), nil
}

func (w *Writer) finishDataBlock() error {
	payload := w.enc.Finish()
	t := BlockData
	if w.opts.Encoding != encoding.EncodingNone {
		t = BlockEncodedData
	}
	off, size, err := w.writeBlock(t, payload)
	if err != nil {
		return err
	}
	if w.firstDataOff < 0 {
		w.firstDataOff = off
	}
	w.lastDataOff = off
	indexKey := w.blockFirstKey
	if w.prevBlockLast != nil {
		indexKey = midpointKey(w.cmp, w.prevBlockLast, w.blockFirstKey)
	}
	w.dataBlocks++
	w.inline.add(indexKey, off, size, w.dataBlocks)
	w.prevBlockLast = append(w.prevBlockLast[:0], w.lastKey...)
	w.enc.Reset()
	return w.writeInlineBlocks(false)
}

// writeInlineBlocks writes the leaf index and bloom chunks that are due; they
// sit between data blocks in the scanned section, as HBase's inline blocks do.
func (w *Writer) writeInlineBlocks(closing bool) error {
	if n := w.inline.numEntries(); n > 0 {
		due := w.inline.nonRootSize() >= w.opts.IndexBlockMaxSize
		// At close, a file that never needed a leaf keeps a single-level index.
		if closing {
			due = w.leafCount > 0
		}
		if due {
			payload := w.inline.appendNonRoot(nil)
			off, size, err := w.writeBlock(BlockLeafIndex, payload)
			if err != nil {
				return err
			}
			w.idxSize += uint64(len(payload))
			w.leaves.add(w.inline.keys[0], off, size, w.inline.subEntries[n-1])
			w.leafCount++
			w.inline.reset()
		}
	}
	for _, b := range [...]*BloomWriter{w.bloom, w.dfBloom} {
		// One data block can fill more than one chunk.
		for b != nil && (b.ReadyChunk() || (closing && b.PendingKeys() > 0)) {
			if err := w.writeBloomChunk(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *Writer) writeBloomChunk(b *BloomWriter) error {
	payload, firstKey := b.FinishChunk()
	off, size, err := w.writeBlock(BlockBloomChunk, payload)
	if err != nil {
		return err
	}
	b.AddChunkIndex(off, size, firstKey)
	return nil
}

// Close finishes the file: the last data block, remaining inline blocks, meta
// blocks, the index levels, the load-on-open section and the trailer. It
// does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("hfile: writer closed twice")
	}
	w.closed = true
	if err := w.close(); err != nil {
		return w.setErr(err)
	}
	return nil
}

func (w *Writer) close() error {
	if w.enc.Count() > 0 {
		if err := w.finishDataBlock(); err != nil {
			return err
		}
	}
	if err := w.writeInlineBlocks(true); err != nil {
		return err
	}
	// Meta blocks, sorted by name.
	sort.Strings(w.metaNames)
	var metaIndex indexChunk
	for _, name := range w.metaNames {
		off, size, err := w.writeBlock(BlockMeta, w.metaBlocks[name])
		if err != nil {
			return err
		}
		metaIndex.add([]byte(name), off, size, 0)
	}
	// Data index: single level, or leaves plus as many intermediate levels
	// as it takes to keep the root under the configured size.
	levels := 1
	root := w.inline
	var midKey []byte
	if w.leafCount > 0 {
		levels = 2
		root = w.leaves
		midKey = root.appendMidKeyMetadata(nil)
	}
	for root.rootSize() > w.opts.IndexBlockMaxSize && root.numEntries() > w.opts.IndexMinEntries && levels < maxIndexLevels {
		parent, err := w.writeIntermediateLevel(&root)
		if err != nil {
			return err
		}
		root = parent
		levels++
	}
	rootPayload := root.appendRoot(nil)
	rootPayload = append(rootPayload, midKey...)
	w.idxSize += uint64(len(rootPayload))
	loadOnOpen, _, err := w.writeBlock(BlockRootIndex, rootPayload)
	if err != nil {
		return err
	}
	if _, _, err := w.writeBlock(BlockRootIndex, metaIndex.appendRoot(nil)); err != nil {
		return err
	}
	w.fillFileInfo()
	fileInfoOff, _, err := w.writeBlock(BlockFileInfo, w.fileInfo.encode())
	if err != nil {
		return err
	}
	// Bloom metas: general first, then delete-family, each only if it has keys.
	for _, m := range [...]struct {
		b *BloomWriter
		t BlockType
	}{{w.bloom, BlockGeneralBloomMeta}, {w.dfBloom, BlockDeleteFamilyBloomMeta}} {
		if m.b == nil || m.b.KeyCount() == 0 {
			continue
		}
		payload, err := m.b.MetaPayload()
		if err != nil {
			return err
		}
		if _, _, err := w.writeBlock(m.t, payload); err != nil {
			return err
		}
	}
	t := Trailer{
		FileInfoOffset:            uint64(fileInfoOff),
		LoadOnOpenDataOffset:      uint64(loadOnOpen),
		UncompressedDataIndexSize: w.idxSize,
		TotalUncompressedBytes:    w.totalUnc + TrailerSize,
		DataIndexCount:            uint32(root.numEntries()),
		MetaIndexCount:            uint32(metaIndex.numEntries()),
		EntryCount:                w.entries,
		NumDataIndexLevels:        uint32(levels),
		FirstDataBlockOffset:      w.firstDataOff,
		LastDataBlockOffset:       w.lastDataOff,
		ComparatorClassName:       w.cmp.Name,
		CompressionCodec:          w.opts.Compression,
	}
	if w.cmp == encoding.DefaultComparer {
		// Inside a store HBase names the inner-store comparator.
		t.ComparatorClassName = encoding.InnerStoreComparer.Name
	}
	if _, err := w.w.Write(t.encode()); err != nil {
		return errors.Wrap(err, "hfile: writing trailer")
	}
	w.off += TrailerSize
	return nil
}

func (w *Writer) writeIntermediateLevel(level *indexChunk) (indexChunk, error) {
	var parent, cur indexChunk
	flush := func() error {
		payload := cur.appendNonRoot(nil)
		off, size, err := w.writeBlock(BlockIntermediateIndex, payload)
		if err != nil {
			return err
		}
		w.idxSize += uint64(len(payload))
		parent.add(cur.keys[0], off, size, cur.subEntries[len(cur.subEntries)-1])
		cur.reset()
		return nil
	}
	for i := range level.keys {
		cur.add(level.keys[i], level.offsets[i], level.sizes[i], level.subEntries[i])
		if cur.numEntries() >= w.opts.IndexMinEntries && cur.nonRootSize() >= w.opts.IndexBlockMaxSize {
			if err := flush(); err != nil {
				return parent, err
			}
		}
	}
	if cur.numEntries() > 0 {
		if err := flush(); err != nil {
			return parent, err
		}
	}
	return parent, nil
}

func (w *Writer) fillFileInfo() {
	fi := FileInfo{}
	if w.entries > 0 {
		fi[FileInfoLastKey] = append([]byte(nil), w.lastKey...)
		fi.SetInt32(FileInfoAvgKeyLen, int32(w.totalKeyLen/w.entries))
		fi.SetInt32(FileInfoAvgValueLen, int32(w.totalValueLen/w.entries))
		fi[FileInfoKeyOfBiggestCell] = append([]byte(nil), w.biggestKey...)
		fi.SetInt64(FileInfoLenOfBiggestCell, w.biggestLen)
	} else {
		fi.SetInt32(FileInfoAvgKeyLen, 0)
		fi.SetInt32(FileInfoAvgValueLen, 0)
	}
	fi.SetInt64(FileInfoCreateTime, w.opts.CreateTime.UnixMilli())
	if w.opts.IncludesTags {
		fi.SetInt32(FileInfoMaxTagsLen, int32(w.maxTagsLen))
		fi.SetBool(FileInfoTagsCompressed, false)
	}
	if !w.opts.ExcludeMvcc {
		fi.SetInt64(FileInfoMaxMemstoreTS, int64(w.maxSeq))
		fi.SetInt32(FileInfoKeyValueVersion, 1)
	}
	if w.opts.Encoding != encoding.EncodingNone {
		fi[FileInfoDataBlockEnc] = []byte(w.opts.Encoding.String())
	}
	// Store-level entries the writer can derive from the cells; the store
	// may override them with SetFileInfo.
	store := FileInfo{}
	if w.entries > 0 {
		store[FileInfoTimeRange] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(w.minTS)), uint64(w.maxTS))
	}
	store.SetInt64(FileInfoEarliestPutTS, w.earliestPut)
	store[FileInfoBloomType] = []byte(w.opts.BloomType.String())
	if w.bloom != nil && w.lastBloomKey != nil {
		store[FileInfoLastBloomKey] = append([]byte(nil), w.lastBloomKey...)
	}
	store.SetInt64(FileInfoDeleteFamilyCnt, w.deleteFamily)
	for k, v := range store {
		if _, ok := w.fileInfo[k]; !ok {
			fi[k] = v
		}
	}
	for k, v := range w.fileInfo {
		fi[k] = v
	}
	w.fileInfo = fi
}

// EntryCount returns the number of cells appended so far.
func (w *Writer) EntryCount() uint64 { return w.entries }

// Size returns the bytes written so far (the file size after Close).
func (w *Writer) Size() int64 { return w.off }

// midpointKey returns a short key k with left < k <= right, HBase's
// getMidpoint: the index then holds short separators instead of full keys
// ("faked" keys, minor version 3). For hbase:meta it returns right.
func midpointKey(cmp *encoding.Comparer, left, right encoding.Key) []byte {
	if cmp.IsMeta() {
		return append([]byte(nil), right...)
	}
	lr, rr := left.Row(), right.Row()
	if c := bytes.Compare(lr, rr); c < 0 {
		return encoding.FirstOnRow(nil, separator(lr, rr))
	} else if c > 0 {
		return append([]byte(nil), right...)
	}
	lf, rf := left.Family(), right.Family()
	if c := bytes.Compare(lf, rf); c < 0 {
		return encoding.AppendKey(nil, rr, separator(lf, rf), nil, encoding.LatestTimestamp, encoding.TypeMaximum)
	} else if c > 0 {
		return append([]byte(nil), right...)
	}
	lq, rq := left.Qualifier(), right.Qualifier()
	if bytes.Compare(lq, rq) < 0 {
		return encoding.FirstOnRowCol(nil, rr, rf, separator(lq, rq))
	}
	return append([]byte(nil), right...)
}

// separator returns a short s with left < s <= right, for left < right.
func separator(left, right []byte) []byte {
	d := 0
	for d < len(left) && left[d] == right[d] {
		d++
	}
	if d == len(left) {
		s := append([]byte(nil), right[:d+1]...)
		s[d] = 0
		return s
	}
	s := append([]byte(nil), left[:d+1]...)
	s[d]++
	return s
}
