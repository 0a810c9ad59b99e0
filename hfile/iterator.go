package hfile

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// Iterator walks the cells of one HFile: HBase's HFileScanner. It is
// positioned by SeekTo, SeekBefore, Reseek or First, then moved with Next.
//
// Slices returned by Key, Value and Tags are valid until the iterator moves,
// or is closed. (Data blocks the block cache does not take are pooled, and
// reused once the iterator is done with them: see pool.go.) Close the
// iterator when done with it. An Iterator is not safe for concurrent use;
// many may share one Reader.
type Iterator struct {
	r           *Reader
	cacheBlocks bool
	seeker      encoding.Seeker
	blk         *Block
	// other is the data block that was current before blk: a reverse scan
	// steps back and forth between two blocks at a boundary, and without a
	// block cache each visit would read and decompress the block again.
	other *Block
	// otherSeeker holds other decoded, if otherDecoded: going back to other
	// swaps the seekers instead of decoding it again, and keeps the cells it
	// had decoded for stepping back. otherAtEnd is set while the iterator
	// reached blk by Next from other, whose seeker is then on its last cell.
	otherSeeker  encoding.Seeker
	otherDecoded bool
	otherAtEnd   bool
	// nextIndexed is the index key of the block after blk, nil if blk is
	// the last block, or another key that every cell after blk is >= and
	// no cell of blk is above; it lets Reseek and SeekBefore stay in the
	// current block. nextKnown is false when the iterator reached blk by
	// Next and does not know it. nextBuf holds a copy of such a key.
	nextIndexed []byte
	nextKnown   bool
	// nextLazy, while nextPending, is where nextIndexed is to be read from
	// (see nextKey); resolveNext reads it.
	nextLazy    nextKey
	nextPending bool
	nextBuf     []byte
	keyBuf      []byte // SeekBeforeRow's seek key
	rowBuf      []byte // and row
	positioned  bool
	err         error
	closed      bool
	// counted is true while the iterator has moved only by First and Next,
	// and cells counts the cells it has been on since First: a full scan
	// checks its count against the trailer's entry_count at the end.
	counted bool
	cells   uint64
}

// errClosed is the error of an iterator used after Close.
var errClosed = errors.New("hfile: iterator closed")

// Close releases the data blocks the iterator holds, and with them every
// slice it returned. The iterator is unusable afterwards. Close is
// idempotent.
func (it *Iterator) Close() {
	if it.closed {
		return
	}
	it.closed = true
	it.positioned = false
	it.err = errClosed
	if it.other != it.blk {
		it.other.release()
	}
	it.blk.release()
	it.blk, it.other, it.nextIndexed, it.nextLazy, it.nextPending = nil, nil, nil, nextKey{}, false
	if it.seeker != nil {
		it.r.seekers.Put(it.seeker)
		it.seeker = closedSeeker{}
	}
	if it.otherSeeker != nil {
		it.r.seekers.Put(it.otherSeeker)
		it.otherSeeker, it.otherDecoded, it.otherAtEnd = nil, false, false
	}
}

// closedSeeker stands in for a closed iterator's seeker, which another
// iterator may be using now: it holds nothing and fails every positioning.
type closedSeeker struct{}

var _ encoding.Seeker = closedSeeker{}

func (closedSeeker) Init([]byte) error                                { return errClosed }
func (closedSeeker) Rewind() error                                    { return errClosed }
func (closedSeeker) Next() (bool, error)                              { return false, errClosed }
func (closedSeeker) SeekToKeyInBlock(encoding.Key, bool) (int, error) { return 0, errClosed }
func (closedSeeker) SeekBeforeKey(encoding.Key) (int, error)          { return 0, errClosed }
func (closedSeeker) FirstKey() encoding.Key                           { return nil }
func (closedSeeker) Key() encoding.Key                                { return nil }
func (closedSeeker) Value() []byte                                    { return nil }
func (closedSeeker) Tags() []byte                                     { return nil }
func (closedSeeker) SeqNum() encoding.SeqNum                          { return 0 }
func (closedSeeker) Cell(kv *encoding.KeyValue)                       { *kv = encoding.KeyValue{} }
func (closedSeeker) Offset() int                                      { return 0 }
func (closedSeeker) InitIndexed([]byte, *encoding.RestartIndex) error { return errClosed }
func (closedSeeker) InitSeek([]byte, *encoding.RestartIndex, encoding.Key, bool) (int, error) {
	return 0, errClosed
}
func (closedSeeker) RecordRestartIndex()                      {}
func (closedSeeker) TakeRestartIndex() *encoding.RestartIndex { return nil }
func (closedSeeker) BuildRestartIndex() (*encoding.RestartIndex, error) {
	return nil, errClosed
}
func (closedSeeker) SeekBeforeRow([]byte) (int, error) { return encoding.RowUnknown, errClosed }
func (closedSeeker) NextStartsRow() (bool, bool)       { return false, false }
func (closedSeeker) StartsRow() (bool, bool)           { return false, false }

// NewIterator returns an unpositioned iterator. With cacheBlocks, data blocks
// it reads are offered to the block cache (index and bloom blocks always are).
func (r *Reader) NewIterator(cacheBlocks bool) *Iterator {
	it := &Iterator{}
	r.InitIterator(it, cacheBlocks)
	return it
}

// InitIterator makes *it a new unpositioned iterator of r, as NewIterator
// returns, reusing its memory: a point read keeps its iterators in a
// reusable struct instead of allocating them. it must be zero or closed.
func (r *Reader) InitIterator(it *Iterator, cacheBlocks bool) {
	nextBuf, keyBuf, rowBuf := it.nextBuf[:0], it.keyBuf[:0], it.rowBuf[:0]
	*it = Iterator{r: r, cacheBlocks: cacheBlocks, nextBuf: nextBuf, keyBuf: keyBuf, rowBuf: rowBuf}
	it.seeker, it.err = r.getSeeker()
}

// getSeeker returns a seeker for r's blocks, from the pool if it has one.
// Its state is stale until its first Init, which comes before any other use
// (setBlock).
func (r *Reader) getSeeker() (encoding.Seeker, error) {
	if s, ok := r.seekers.Get().(encoding.Seeker); ok {
		return s, nil
	}
	return encoding.NewSeeker(r.encoding, r.format, r.cmp)
}

// Err returns the error that stopped the iterator, if any.
func (it *Iterator) Err() error { return it.err }

// Valid reports whether the iterator is on a cell.
func (it *Iterator) Valid() bool { return it.positioned && it.err == nil }

// Key returns the current key.
func (it *Iterator) Key() encoding.Key { return it.seeker.Key() }

// Value returns the current value.
func (it *Iterator) Value() []byte { return it.seeker.Value() }

// Tags returns the current serialized tags, nil if none.
func (it *Iterator) Tags() []byte { return it.seeker.Tags() }

// SeqNum returns the current cell's sequence id; 0 when the file records
// none (HBase's MAX_MEMSTORE_TS_KEY of 0 means every cell reads as 0).
func (it *Iterator) SeqNum() encoding.SeqNum {
	if !it.r.decodeMvcc {
		return 0
	}
	return it.seeker.SeqNum()
}

// KeyValue fills kv with the current cell; its slices alias the block.
func (it *Iterator) KeyValue(kv *encoding.KeyValue) {
	it.seeker.Cell(kv)
	if !it.r.decodeMvcc {
		kv.SeqNum = 0
	}
}

// BlockOffset returns the offset of the current data block.
func (it *Iterator) BlockOffset() int64 {
	if it.blk == nil {
		return -1
	}
	return it.blk.Offset
}

func (it *Iterator) fail(err error) error {
	it.err = err
	it.positioned = false
	return err
}

// setBlock makes b the current block, positioned on its first cell.
func (it *Iterator) setBlock(b *Block) error {
	if it.blk == b {
		if err := it.seeker.Rewind(); err != nil {
			return it.fail(it.wrapBlockErr(err, b))
		}
		return nil
	}
	it.otherAtEnd = false
	if b == it.other && it.otherDecoded {
		// Back to the previous block, which its seeker holds decoded.
		it.seeker, it.otherSeeker = it.otherSeeker, it.seeker
		it.other, it.blk, it.nextIndexed, it.nextKnown, it.nextPending = it.blk, b, nil, false, false
		if err := it.seeker.Rewind(); err != nil {
			it.otherDecoded = false
			return it.fail(it.wrapBlockErr(err, b))
		}
		return nil
	}
	if err := it.swapSeekers(b); err != nil {
		return err
	}
	idx := b.restarts.Load()
	if err := it.seeker.InitIndexed(b.Data, idx); err != nil {
		return it.dropNew(b, it.wrapBlockErr(err, b))
	}
	if idx == nil && b.state != blockPooled && !b.churn.Load() {
		// A cached block: if this iterator reads it through, its index
		// comes nearly free (see Reader.dataBlock and FullCache).
		it.seeker.RecordRestartIndex()
	}
	it.install(b)
	return nil
}

// setBlockAt is setBlock for a seek to key. A block decoded anew that has
// its RestartIndex is not positioned on its first cell: the seek starts at
// the sample before key (Seeker.InitSeek), which for a Get in a cached
// block spares the cold cache lines of the block's header and first cells;
// seeked then says the seeker is at key's SeekToKeyInBlock result res.
// Otherwise it is setBlock, and the caller seeks.
func (it *Iterator) setBlockAt(b *Block, key encoding.Key) (res int, seeked bool, err error) {
	idx := b.restarts.Load()
	if idx == nil || it.blk == b || (b == it.other && it.otherDecoded) {
		return 0, false, it.setBlock(b)
	}
	it.otherAtEnd = false
	if err := it.swapSeekers(b); err != nil {
		return 0, false, err
	}
	if res, err = it.seeker.InitSeek(b.Data, idx, key, false); err != nil {
		return 0, false, it.dropNew(b, it.wrapBlockErr(err, b))
	}
	it.install(b)
	return res, true, nil
}

// swapSeekers makes the current block's seeker the previous block's, for
// setBlock to decode b, a block neither holds, with the other one.
func (it *Iterator) swapSeekers(b *Block) error {
	if it.blk != nil {
		if it.otherSeeker == nil {
			s, err := it.r.getSeeker()
			if err != nil {
				if b != it.other {
					b.release()
				}
				return it.fail(err)
			}
			it.otherSeeker = s
		}
		it.seeker, it.otherSeeker = it.otherSeeker, it.seeker
	}
	it.otherDecoded = it.blk != nil
	return nil
}

// dropNew fails the iterator with err, raised decoding b, which it has not
// made current: b is released unless it is the previous block.
func (it *Iterator) dropNew(b *Block, err error) error {
	err = it.fail(err)
	if b != it.other {
		b.release()
	}
	return err
}

// install makes b, decoded by the seeker, the current block. The caller
// sets what it knows of the next block. The previous block stays (reverse
// scans step back to it); the one before is dropped.
func (it *Iterator) install(b *Block) {
	dropped := it.other
	it.other, it.blk, it.nextIndexed, it.nextKnown, it.nextPending = it.blk, b, nil, false, false
	if dropped != nil && dropped != b && dropped != it.other {
		dropped.release()
	}
}

// dataBlock returns the data block at off: the current or the previous
// one if it is either, else from the reader.
func (it *Iterator) dataBlock(off int64, size int) (*Block, error) {
	if it.blk != nil && it.blk.Offset == off {
		return it.blk, nil
	}
	if it.other != nil && it.other.Offset == off {
		return it.other, nil
	}
	return it.r.dataBlock(off, size, it.cacheBlocks)
}

func (it *Iterator) wrapBlockErr(err error, b *Block) error {
	return errors.Wrapf(encoding.MarkCorruption(err), "hfile %s: data block at offset %d", it.r.name, b.Offset)
}

// First positions on the first cell; false if the file is empty.
func (it *Iterator) First() (bool, error) {
	if it.err != nil {
		return false, it.err
	}
	t := it.r.trailer
	it.positioned = false
	if t.EntryCount == 0 || t.FirstDataBlockOffset < 0 || it.r.dataIndex.len() == 0 {
		return false, nil
	}
	ri := it.r.dataIndex
	// The first leaf entry (or root entry) gives the first block's size.
	off, size, next, found, err := it.r.lookupDataBlock(encoding.Key(ri.keys[0]))
	if err != nil {
		return false, it.fail(err)
	}
	if !found || off != t.FirstDataBlockOffset {
		return false, it.fail(it.r.corruptf(off, "index does not start at the first data block %d", t.FirstDataBlockOffset))
	}
	b, err := it.dataBlock(off, size)
	if err != nil {
		return false, it.fail(err)
	}
	if err := it.setBlock(b); err != nil {
		return false, err
	}
	it.setNext(next)
	it.positioned = true
	it.counted, it.cells = true, 1
	return true, nil
}

// SeekTo positions at key: it returns encoding.SeekExact when on a cell
// equal to key (ignoring sequence ids), encoding.SeekBefore when on the last
// cell before key (which may be the last cell of the file), and
// encoding.SeekPrecedesFile, unpositioned, when key sorts before every cell.
// Because index keys may be shortened separators, it can also return
// encoding.SeekPrecedesBlock: positioned on the first cell of a block, which
// is the first cell after key.
func (it *Iterator) SeekTo(key encoding.Key) (int, error) {
	if it.err != nil {
		return 0, it.err
	}
	it.positioned, it.counted = false, false
	off, size, next, found, err := it.r.lookupDataBlock(key)
	if err != nil {
		return 0, it.fail(err)
	}
	if !found {
		return encoding.SeekPrecedesFile, nil
	}
	return it.loadAndSeek(off, size, next, key, true, nil)
}

// SeekToRow is SeekTo for a point read of p.Row, key being a key of that
// row: it asks the file's blooms (Reader.MayContainGet) only when the data
// block key falls in is not cached. A bloom check saves a block read; a
// cached block needs none, and seeking in it costs about what the bloom
// check does, which for a row the file holds is wasted. skipped reports
// that the blooms ruled the row out: the iterator is then unpositioned.
//
// A store with one file and nothing in its memstore is where this pays:
// with several files, or rows written since the flush, the blooms of the
// files without the row save their index lookups too.
func (it *Iterator) SeekToRow(key encoding.Key, p *RowProbe) (res int, skipped bool, err error) {
	if it.err != nil {
		return 0, false, it.err
	}
	it.positioned, it.counted = false, false
	off, size, next, found, err := it.r.lookupDataBlock(key)
	if err != nil {
		return 0, false, it.fail(err)
	}
	// A read that does not ask the bloom (the file has none, or it does not
	// pay: bloomGate) need not look the block up in the cache without
	// counting a miss before reading it either: dataBlock's one lookup,
	// which counts, does.
	var b *Block
	asks := it.r.asksBloom()
	if found && asks {
		if b, err = it.cachedBlock(off); err != nil {
			return 0, false, it.fail(err)
		}
	}
	if b == nil && asks {
		ok, err := it.r.mayContainGet(p)
		if err != nil {
			return 0, false, it.fail(err)
		}
		if !ok {
			return 0, true, nil
		}
	}
	if !found {
		// key precedes the first index key; the row's cells may still
		// start the file.
		return encoding.SeekPrecedesFile, false, nil
	}
	res, err = it.loadAndSeek(off, size, next, key, true, b)
	return res, false, err
}

// cachedBlock returns the data block at off if the iterator holds it or the
// cache does, else nil; a block not cached is not counted as a miss.
func (it *Iterator) cachedBlock(off int64) (*Block, error) {
	switch {
	case it.blk != nil && it.blk.Offset == off:
		return it.blk, nil
	case it.other != nil && it.other.Offset == off:
		return it.other, nil
	}
	return it.r.cachedDataBlock(off)
}

// loadAndSeek seeks to key in the data block at off: b, if it is not nil
// (a block cachedBlock returned), else the block dataBlock loads.
func (it *Iterator) loadAndSeek(off int64, size int, next nextKey, key encoding.Key, rewind bool, b *Block) (int, error) {
	res, seeked := 0, false
	if it.blk == nil || it.blk.Offset != off {
		var err error
		if b == nil {
			b, err = it.dataBlock(off, size)
		}
		if err != nil {
			return 0, it.fail(err)
		}
		if res, seeked, err = it.setBlockAt(b, key); err != nil {
			return 0, err
		}
	} else if rewind {
		if err := it.seeker.Rewind(); err != nil {
			return 0, it.fail(it.wrapBlockErr(err, it.blk))
		}
	}
	it.setNext(next)
	if !seeked {
		var err error
		if res, err = it.seeker.SeekToKeyInBlock(key, false); err != nil {
			return 0, it.fail(it.wrapBlockErr(err, it.blk))
		}
	}
	it.positioned = true
	return res, nil
}

// Reseek moves forward to key, which must not precede the current position
// by more than the current cell; it is cheaper than SeekTo because it stays
// in the current block when it can. Results are as for SeekTo.
func (it *Iterator) Reseek(key encoding.Key) (int, error) {
	if it.err != nil {
		return 0, it.err
	}
	if it.positioned {
		c := it.r.cmp.CompareKeys(key, it.seeker.Key())
		if c <= 0 {
			if c == 0 {
				return encoding.SeekExact, nil
			}
			return encoding.SeekPrecedesBlock, nil
		}
		it.resolveNext()
		if !it.nextKnown {
			it.learnNextIndexed()
		}
		if it.nextKnown && (it.nextIndexed == nil || it.r.cmp.CompareKeys(key, it.nextIndexed) < 0) {
			it.counted = false
			res, err := it.seeker.SeekToKeyInBlock(key, false)
			if err != nil {
				return 0, it.fail(it.wrapBlockErr(err, it.blk))
			}
			return res, nil
		}
	}
	return it.SeekTo(key)
}

// setNext records next, from lookupDataBlock, as the index key of the block
// after the current one.
func (it *Iterator) setNext(next nextKey) {
	if next.a == nil {
		it.nextIndexed, it.nextKnown, it.nextPending = next.key, true, false
		return
	}
	it.nextIndexed, it.nextKnown, it.nextLazy, it.nextPending = nil, true, next, true
}

// resolveNext reads the pending next key, if any. An entry that does not
// parse leaves it unknown: Reseek then walks the index, which reports it.
func (it *Iterator) resolveNext() {
	if !it.nextPending {
		return
	}
	k, ok := it.nextLazy.get()
	it.nextLazy, it.nextPending = nextKey{}, false
	if !ok {
		it.nextIndexed, it.nextKnown = nil, false
		return
	}
	it.nextIndexed = k
}

// learnNextIndexed finds the index key of the block after the current one,
// which an iterator that reached the block by Next does not know, with one
// index walk by the block's first key: without it every Reseek in the
// block (a scan's move to the next column or row) would walk the index.
func (it *Iterator) learnNextIndexed() {
	off, _, next, found, err := it.r.lookupDataBlock(it.seeker.FirstKey())
	if err != nil || !found || off != it.blk.Offset {
		return // leave it unknown: Reseek falls back to SeekTo
	}
	nk, ok := next.get()
	if !ok {
		return
	}
	if nk != nil {
		it.nextBuf = append(it.nextBuf[:0], nk...)
		nk = it.nextBuf
	}
	it.nextIndexed, it.nextKnown, it.nextPending = nk, true, false
}

// SeekBefore positions on the last cell strictly before key. It returns
// false, unpositioned, if there is none.
//
// When the answer is in the current block, as it is for most steps of a
// reverse scan, it skips the index and moves back over the cells the block's
// seeker has kept, in O(log n) comparisons (see encoding.Seeker.SeekBeforeKey).
func (it *Iterator) SeekBefore(key encoding.Key) (bool, error) {
	if it.err != nil {
		return false, it.err
	}
	it.positioned, it.counted = false, false
	if it.beforeInBlock(key) {
		res, err := it.seeker.SeekBeforeKey(key)
		if err != nil {
			return false, it.fail(it.wrapBlockErr(err, it.blk))
		}
		if res != encoding.SeekBefore {
			return false, it.fail(it.r.corruptf(it.blk.Offset, "block has no cell before %s", key))
		}
		it.positioned = true
		return true, nil
	}
	off, size, next, found, err := it.r.lookupDataBlock(key)
	if err != nil {
		return false, it.fail(err)
	}
	if !found {
		return false, nil
	}
	b, err := it.dataBlock(off, size)
	if err != nil {
		return false, it.fail(err)
	}
	if err := it.setBlock(b); err != nil {
		return false, err
	}
	it.setNext(next)
	if it.r.cmp.CompareKeys(it.seeker.Key(), key) >= 0 {
		// Everything in this block is >= key: the answer is the last cell
		// of the previous data block, found through the header.
		if b.PrevOffset < 0 {
			return false, nil
		}
		if b.PrevOffset >= b.Offset {
			return false, it.fail(it.r.corruptf(b.Offset, "previous block offset %d is not before the block", b.PrevOffset))
		}
		pb, err := it.dataBlock(b.PrevOffset, -1)
		if err != nil {
			return false, it.fail(err)
		}
		if err := it.setBlock(pb); err != nil {
			return false, err
		}
		// Every cell of pb sorts before b's index key, which is <= key,
		// and every cell from b on is >= key. Copy key: the caller may
		// reuse it.
		it.nextBuf = append(it.nextBuf[:0], key...)
		it.nextIndexed, it.nextKnown, it.nextPending = it.nextBuf, true, false
	}
	res, err := it.seeker.SeekToKeyInBlock(key, true)
	if err != nil {
		return false, it.fail(it.wrapBlockErr(err, it.blk))
	}
	if res == encoding.SeekPrecedesBlock {
		return false, it.fail(it.r.corruptf(it.blk.Offset, "block has no cell before %s", key))
	}
	it.positioned = true
	return true, nil
}

// SeekBeforeRow moves back to the first cell of the last row before row
// when the current block, or the one before it, shows where that row starts
// (see encoding.Seeker.SeekBeforeRow), and reports whether it did. If not,
// the caller steps back with SeekBefore; the iterator may have moved to the
// block before. The search starts at the current cell, whose row may be row
// or after it (or before it: then that row is the one).
//
// A row that the current block cannot place is looked for in the block
// before, which the block's header names: that costs no index walk, and
// the iterator keeps both blocks decoded, so a reverse scan crosses a block
// boundary with one block load instead of several seeks.
func (it *Iterator) SeekBeforeRow(row []byte) (bool, error) {
	if it.err != nil {
		return false, it.err
	}
	if !it.positioned {
		return false, nil
	}
	res, err := it.seeker.SeekBeforeRow(row)
	if err != nil {
		return false, it.fail(it.wrapBlockErr(err, it.blk))
	}
	it.counted = false
	switch res {
	case encoding.RowFound:
		return true, nil
	case encoding.RowBeforeBlock:
		// Every cell of this block is in row or after it: the row before
		// ends in the block before.
		if it.otherAtEnd {
			// At hand, its seeker on its last cell: a reverse scan whose
			// forward step (to see that a row ended) crossed into this
			// block steps back into it without a seek.
			it.backToOther()
		} else if ok, err := it.prevBlockBefore(row); err != nil || !ok {
			return false, err
		}
		res, err = it.seeker.SeekBeforeRow(row)
		if err != nil {
			return false, it.fail(it.wrapBlockErr(err, it.blk))
		}
		return res == encoding.RowFound, nil
	case encoding.RowAtBlockStart:
		return it.rowFromBlockStart()
	}
	return false, nil
}

// NextStartsRow reports whether the cell Next would move to is in another
// row, without moving, when that cell is in the current block and already
// decoded (as it is after a step back, which decodes the cells that
// follow); ok is false otherwise.
func (it *Iterator) NextStartsRow() (starts, ok bool) {
	if it.err != nil || !it.positioned {
		return false, false
	}
	return it.seeker.NextStartsRow()
}

// StartsRow reports whether the current cell is in another row than the
// cell before it, when the block's decoder knows without comparing rows; ok
// is false otherwise, and at a block's first cell.
func (it *Iterator) StartsRow() (starts, ok bool) {
	if it.err != nil || !it.positioned {
		return false, false
	}
	return it.seeker.StartsRow()
}

// backToOther makes the previous block, whose seeker is on its last cell,
// the current one. Every cell from the block left on is >= its first key,
// and none of the block before is.
func (it *Iterator) backToOther() {
	it.nextBuf = append(it.nextBuf[:0], it.seeker.FirstKey()...)
	it.seeker, it.otherSeeker = it.otherSeeker, it.seeker
	it.blk, it.other = it.other, it.blk
	it.nextIndexed, it.nextKnown, it.nextPending, it.otherAtEnd = it.nextBuf, true, false, false
}

// prevBlockBefore moves to the block before the current one, on its last
// cell before row; false if there is no such block, or every cell of it is
// in row (or after: the caller's seek sorts out a corrupt file).
func (it *Iterator) prevBlockBefore(row []byte) (bool, error) {
	b := it.blk
	if b.PrevOffset < 0 {
		return false, nil
	}
	if b.PrevOffset >= b.Offset {
		return false, it.fail(it.r.corruptf(b.Offset, "previous block offset %d is not before the block", b.PrevOffset))
	}
	first := append(it.nextBuf[:0], it.seeker.FirstKey()...)
	pb, err := it.dataBlock(b.PrevOffset, -1)
	if err != nil {
		return false, it.fail(err)
	}
	if err := it.setBlock(pb); err != nil {
		return false, err
	}
	it.nextBuf, it.nextIndexed, it.nextKnown, it.nextPending = first, first, true, false
	it.keyBuf = encoding.FirstOnRow(it.keyBuf[:0], row)
	res, err := it.seeker.SeekToKeyInBlock(it.keyBuf, true)
	if err != nil {
		return false, it.fail(it.wrapBlockErr(err, it.blk))
	}
	return res != encoding.SeekPrecedesBlock, nil
}

// rowFromBlockStart finishes SeekBeforeRow when the row before row, R,
// starts at the current block's first cell, or in the block before if it
// goes on from there: the block before tells.
func (it *Iterator) rowFromBlockStart() (bool, error) {
	if it.blk.PrevOffset < 0 {
		// The file's first block: R starts here.
		if err := it.seeker.Rewind(); err != nil {
			return false, it.fail(it.wrapBlockErr(err, it.blk))
		}
		return true, nil
	}
	cur := it.blk
	r := append(it.rowBuf[:0], it.seeker.FirstKey().Row()...)
	it.rowBuf = r
	// On the last cell before R in the block before; the cell after it, if
	// the block has one, is R's first.
	if ok, err := it.prevBlockBefore(r); err != nil || !ok {
		return false, err
	}
	more, err := it.seeker.Next()
	if err != nil {
		return false, it.fail(it.wrapBlockErr(err, it.blk))
	}
	if more {
		return true, nil
	}
	// The block before ends before R: back to R's first cell, the first
	// of the block just left, whose row the block before does not reach.
	if err := it.setBlock(cur); err != nil {
		return false, err
	}
	it.otherAtEnd = true // the block before's seeker is on its last cell
	return true, nil
}

// beforeInBlock reports whether the last cell before key is in the current
// block: the block's first cell is < key, and no cell after the block is.
func (it *Iterator) beforeInBlock(key encoding.Key) bool {
	it.resolveNext()
	if it.blk == nil || !it.nextKnown {
		return false
	}
	if it.nextIndexed != nil && it.r.cmp.CompareKeys(key, it.nextIndexed) > 0 {
		return false
	}
	return it.r.cmp.CompareKeys(it.seeker.FirstKey(), key) < 0
}

// Next moves to the next cell; false at the end of the file.
//
// Moving to the next data block, it checks what the trailer has no checksum
// for: that the block follows the current one (its prevBlockOffset), that
// the scan ends exactly at last_data_block_offset, and, at the end of a scan
// from First, that it met entry_count cells.
func (it *Iterator) Next() (bool, error) {
	if it.err != nil {
		return false, it.err
	}
	if !it.positioned {
		return false, nil
	}
	ok, err := it.seeker.Next()
	if err != nil {
		return false, it.fail(it.wrapBlockErr(err, it.blk))
	}
	if ok {
		it.cells++
		return true, nil
	}
	if idx := it.seeker.TakeRestartIndex(); idx != nil {
		it.r.attachRestartIndex(it.blk, idx)
	}
	// Next data block, skipping inline index and bloom blocks.
	off := it.blk.Offset + int64(it.blk.OnDiskSize)
	size := it.blk.NextOnDiskSize
	t := it.r.trailer
	last := t.LastDataBlockOffset
	for {
		if off > last {
			if it.blk.Offset != last {
				return false, it.fail(it.r.corruptf(off, "scan went past last_data_block_offset %d from the data block at offset %d",
					last, it.blk.Offset))
			}
			if it.counted && it.cells != t.EntryCount {
				return false, it.fail(it.r.corruptf(it.blk.Offset, "scan found %d cells, trailer entry_count is %d", it.cells, t.EntryCount))
			}
			it.positioned = false
			return false, nil
		}
		b := it.other
		if b == nil || b.Offset != off {
			var err error
			if b, err = it.r.iterBlock(off, size, it.cacheBlocks); err != nil {
				// A damaged bloom chunk holds no cells: step over it,
				// as its size is known from the bloom meta.
				if skip := it.r.skipBloomChunk(off, err); skip > 0 {
					off, size = off+skip, -1
					continue
				}
				return false, it.fail(err)
			}
		}
		if !b.Type.IsData() {
			// Never pooled (iterBlock): nothing to release.
			off, size = off+int64(b.OnDiskSize), b.NextOnDiskSize
			continue
		}
		err := it.r.checkDataBlock(b, off)
		if err == nil && b.PrevOffset != it.blk.Offset {
			err = it.r.corruptf(off, "data block follows the one at offset %d, but its previous block offset is %d", it.blk.Offset, b.PrevOffset)
		}
		if err != nil {
			if b != it.other {
				b.release()
			}
			return false, it.fail(err)
		}
		if err := it.setBlock(b); err != nil {
			return false, err
		}
		it.otherAtEnd = it.otherDecoded // the seeker Next left is on its last cell
		it.cells++
		// The next block's index key is unknown without an index walk, so
		// Reseek past this block falls back to SeekTo, except in the last
		// block, which has no next.
		it.nextIndexed, it.nextKnown, it.nextPending = nil, off == last, false
		return true, nil
	}
}
