package encoding

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// RestartInterval is the number of cells between two samples of a
// RestartIndex. A point seek then decodes fewer than this many cells after
// a binary search of the samples, where a linear seek decodes half the block
// on average (a 4 KiB block of 14-byte rows and 100-byte values holds about
// 37 cells). Each FAST_DIFF cell decoded is a dependent read of the cell's
// header and of its memstore timestamp after the value, about 150 ns on a
// block in main memory, while the samples' keys sit together and compare in
// a few ns each: so 4, not 16. The index costs about 70 bytes per sample
// (700 for such a block, which the block cache charges to it). Measured on
// a 300k-row table of those cells, every block cached, CPU per Get, median
// of 6 alternating runs: 5,902 ns with 16, 5,457 with 8, 4,913 with 4.
const RestartInterval = 4

// RestartIndex is a sampled index of one data block: the decoded state of
// every RestartInterval-th cell, with its key. PREFIX and FAST_DIFF cells
// can only be decoded from the cell before them, so without it a seek
// decodes from the start of the block (HBase's BufferedEncodedSeeker does
// the same). The bytes on disk stay HBase's; the index lives in memory
// beside a cached block, and a seeker given it (Seeker.InitIndexed) starts
// decoding at the last sample before its target.
//
// An index is immutable once built and may be shared by any number of
// seekers, on the same payload it was built from.
type RestartIndex struct {
	// cells[i] is the state of cell i*RestartInterval. For encoded blocks
	// keyOff points into keys; for NONE into the payload.
	cells []cellState
	keys  []byte
	none  bool
	// rowPrefix is the prefix the samples' rows share, and rowWin[i] the
	// 8 bytes of sample i's row after it (zero-padded, big-endian), so
	// that a seek's binary search reads one or two cache lines of words
	// rather than a cell state and a key per probe, both cold when the
	// block is (see jumpAhead). Nil when fewer than two samples.
	rowPrefix []byte
	rowWin    []uint64
	// size is the bytes of the one allocation a finished index lives in
	// (see trimmed); every index a seeker hands out is finished.
	size int
}

// MemSize returns the bytes the index keeps alive, for cache accounting:
// its allocation and the allocation's header, if any.
func (x *RestartIndex) MemSize() int64 {
	if x == nil {
		return 0
	}
	return int64(x.size) + 8
}

// Len returns the number of samples.
func (x *RestartIndex) Len() int {
	if x == nil {
		return 0
	}
	return len(x.cells)
}

// BuildRestartIndex implements Seeker.
func (s *seeker) BuildRestartIndex() (*RestartIndex, error) {
	if s.data == nil {
		return nil, errSeekerNotInitialized
	}
	if err := s.Rewind(); err != nil {
		return nil, err
	}
	x := &RestartIndex{none: s.enc == EncodingNone}
	for i := 0; ; i++ {
		if i%RestartInterval == 0 {
			s.sample(x)
		}
		ok, err := s.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
	}
	if err := s.Rewind(); err != nil {
		return nil, err
	}
	return x.trimmed(s.data), nil
}

// sample appends the current cell to x as its next sample.
func (s *seeker) sample(x *RestartIndex) {
	c := s.cells[s.pos]
	if !x.none {
		c.keyOff = int32(len(x.keys))
		x.keys = append(x.keys, s.key...)
	}
	x.cells = append(x.cells, c)
}

// trimmed returns a copy of x whose slices hold only what x uses: an index
// outlives the buffers it was built in. data is the block's payload, which
// holds the keys of a NONE block's samples.
//
// The copy is one allocation that the collector sees as free of pointers:
// the struct first, then the row windows, the cell states, the keys and the
// row prefix. Its slices point into the allocation itself, which the
// pointer to the struct keeps alive, so the collector has nothing to follow
// in it. A block cache holding tens of thousands of indexed blocks had
// three objects per index, two of them to scan, and marking them was a
// large part of each collection.
func (x *RestartIndex) trimmed(data []byte) *RestartIndex {
	n := len(x.cells)
	src := x.keys
	if x.none {
		src = data
	}
	row := func(i int) []byte {
		c := &x.cells[i]
		return Key(src[c.keyOff : c.keyOff+c.keyLen]).Row()
	}
	p, wins := 0, 0
	if n >= 2 {
		// Samples are in key order, so the first and last rows' common
		// prefix is every sample's.
		first, last := row(0), row(n-1)
		for p < len(first) && p < len(last) && first[p] == last[p] {
			p++
		}
		wins = n
	}
	const (
		head     = (unsafe.Sizeof(RestartIndex{}) + 7) &^ 7
		cellSize = unsafe.Sizeof(cellState{})
	)
	winsAt := head
	cellsAt := winsAt + 8*uintptr(wins)
	keysAt := cellsAt + cellSize*uintptr(n)
	nk := len(x.keys)
	total := keysAt + uintptr(nk+p)
	words := make([]uint64, (total+7)/8) // 8-aligned, and no pointers
	base := unsafe.Pointer(unsafe.SliceData(words))
	t := (*RestartIndex)(base)
	t.none, t.size = x.none, 8*len(words)
	if n > 0 {
		t.cells = unsafe.Slice((*cellState)(unsafe.Add(base, cellsAt)), n)
		copy(t.cells, x.cells)
	}
	var kb []byte
	if nk+p > 0 {
		// (Not for none: the pointer would be just past the allocation,
		// at whatever object follows it.)
		kb = unsafe.Slice((*byte)(unsafe.Add(base, keysAt)), nk+p)
	}
	t.keys = kb[:nk:nk]
	copy(t.keys, x.keys)
	if n >= 2 {
		t.rowPrefix = kb[nk : nk+p : nk+p]
		copy(t.rowPrefix, row(0)[:p])
		t.rowWin = unsafe.Slice((*uint64)(unsafe.Add(base, winsAt)), wins)
		for i := range t.rowWin {
			t.rowWin[i] = rowWindow(row(i), p)
		}
	}
	return t
}

// rowWindow returns the 8 bytes of row after its first p, zero-padded, as
// a big-endian word. Two rows that share their first p bytes and whose
// windows differ compare as their windows do: where the windows first
// differ, either both rows have that byte, or the shorter row ends there
// and the longer one's byte is not zero, so it is the greater. Equal
// windows tell nothing.
func rowWindow(row []byte, p int) uint64 {
	var b [8]byte
	copy(b[:], row[min(p, len(row)):])
	return binary.BigEndian.Uint64(b[:])
}

// restartRecorder is a RestartIndex being built by a seeker's Next (see
// Seeker.RecordRestartIndex): a scan that reads a cached block through
// leaves it indexed for the point reads after it, which would otherwise
// decode the whole block once more to build the index.
type restartRecorder struct {
	x    RestartIndex  // samples so far; reused from block to block
	next int           // the next cell to sample
	done *RestartIndex // the finished index, until taken
}

// RecordRestartIndex implements Seeker.
func (s *seeker) RecordRestartIndex() {
	s.recording, s.rec.done = false, nil
	if s.data == nil || s.idx != nil || s.rowOffsets != nil || s.first+s.pos != 0 || len(s.cells) == 0 {
		return
	}
	s.rec.x = RestartIndex{cells: s.rec.x.cells[:0], keys: s.rec.x.keys[:0], none: s.enc == EncodingNone}
	s.rec.next = 0
	s.recording = true
	s.recordStep()
}

// recordStep samples the current cell if it is the next to sample, and
// stops recording if a seek went past that.
func (s *seeker) recordStep() {
	i := s.first + s.pos
	switch {
	case i < s.rec.next:
		return // before the next sample, or back after a step back
	case i > s.rec.next:
		s.recording = false // a seek skipped the sample
		return
	}
	s.sample(&s.rec.x)
	s.rec.next += RestartInterval
}

// finishRecording makes the recorded samples the block's index, copied out
// of the recorder's buffers, which the next block reuses.
func (s *seeker) finishRecording() {
	s.recording = false
	if last := s.first + s.pos; len(s.rec.x.cells) != last/RestartInterval+1 {
		return // a seek went past the last samples to the end
	}
	s.rec.done = s.rec.x.trimmed(s.data)
}

// TakeRestartIndex implements Seeker.
func (s *seeker) TakeRestartIndex() *RestartIndex {
	x := s.rec.done
	s.rec.done = nil
	return x
}

// InitIndexed implements Seeker.
func (s *seeker) InitIndexed(payload []byte, idx *RestartIndex) error {
	if err := s.Init(payload); err != nil {
		return err
	}
	if s.fits(idx) {
		s.idx = idx
	}
	return nil
}

// fits reports whether idx can index the seeker's blocks: not for
// ROW_INDEX_V1 blocks, which have their own index.
func (s *seeker) fits(idx *RestartIndex) bool {
	return idx != nil && len(idx.cells) > 0 && s.enc != EncodingRowIndexV1 && idx.none == (s.enc == EncodingNone)
}

// sampleKey returns the key of sample j of s.idx.
func (s *seeker) sampleKey(j int) Key {
	c := &s.idx.cells[j]
	src := s.idx.keys
	if s.idx.none {
		src = s.data
	}
	e := c.keyOff + c.keyLen
	return Key(src[c.keyOff:e:e])
}

// jumpAhead moves to the last sample whose key is < key if that lies
// beyond the current cell, dropping the decoded cells (as dropBefore does),
// so that the forward scan of a seek starts there.
//
// It reports whether it moved.
//
// REQUIRES: s.idx != nil, and the current cell is the last decoded one.
func (s *seeker) jumpAhead(key Key) bool {
	j := s.searchSamples(key) - 1
	if j < 0 || j*RestartInterval <= s.first+s.pos {
		return false
	}
	s.jumpTo(j)
	return true
}

// jumpTo makes sample j the only decoded cell, and current.
func (s *seeker) jumpTo(j int) {
	c := s.idx.cells[j]
	s.prefetchAfter(&c)
	if !s.idx.none {
		s.keys = append(s.keys[:0], s.sampleKey(j)...)
		c.keyOff = 0
	}
	s.cells = append(s.cells[:0], c)
	s.first = j * RestartInterval
	s.setPos(0)
}

// prefetchAfter asks for the cache lines of the cells a seek that starts
// at sample c is about to decode, and of c's value, in case c is the cell
// sought. A seek in a cached block then waits for its cold lines together
// rather than one after another as it decodes, which the hardware
// prefetchers do not foresee in a run of a few cells. In a driver doing
// random Gets on a fully cached 1M-row table shaped like the peer
// harness's (its randread at 200%), uniform keys ran about 8% faster with
// it and zipfian ones about 3%, 5 alternations; within the harness's own
// runs the gain is inside their spread.
func (s *seeker) prefetchAfter(c *cellState) {
	d := s.data
	for o, end := max(int(c.next), 0), min(int(c.next)+prefetchSpan, len(d)); o < end; o += cacheLine {
		prefetch(&d[o])
	}
	if v := int(c.valOff); v >= 0 && v < len(d) {
		prefetch(&d[v])
	}
}

// prefetchSpan is how many bytes after a sample prefetchAfter asks for:
// about three cells with 100-byte values, as many as a seek decodes past a
// sample with RestartInterval 4. (320 did better than 192 and 448.)
const prefetchSpan = 320

// cacheLine is the processor's cache line size, as prefetch sees it (and
// golang.org/x/sys/cpu pads for it).
const cacheLine = int(unsafe.Sizeof(cpu.CacheLinePad{}))

// InitSeek implements Seeker. With an index it does not read the block's
// header, checked when the index was built from the same payload, nor
// decode its first cell: it starts at the last sample before key, or
// rewinds if key is not after the first. A seek in a cached block then
// reads only the cache lines of the cells it passes, not those of the
// block's start as well.
func (s *seeker) InitSeek(payload []byte, idx *RestartIndex, key Key, before bool) (int, error) {
	if !s.fits(idx) {
		if err := s.InitIndexed(payload, idx); err != nil {
			return 0, err
		}
		return s.SeekToKeyInBlock(key, before)
	}
	s.forget()
	s.data, s.start, s.idx, s.firstInIdx = payload, 0, idx, true
	if s.enc != EncodingNone {
		s.start = encodedHeaderSize
	}
	j := s.searchSamples(key) - 1
	if j < 0 {
		if err := s.Rewind(); err != nil {
			return 0, err
		}
		return s.seekFrom(key, before, false)
	}
	s.jumpTo(j)
	return s.seekFrom(key, before, true)
}

// searchSamples returns the first sample whose key is >= key, or the
// number of samples. Where the comparator orders rows bytewise (all but
// hbase:meta's) and key's row has the samples' common row prefix, the row
// windows decide every sample whose window differs from key's: a greater
// window is a greater row, so a greater key, and a smaller one a smaller
// key. Only the samples with key's window are compared in full.
func (s *seeker) searchSamples(key Key) int {
	x := s.idx
	n := len(x.cells)
	lo, hi := 0, n
	if x.rowWin != nil && s.cmp.kind != kindMeta {
		if row := key.Row(); bytes.HasPrefix(row, x.rowPrefix) {
			w := rowWindow(row, len(x.rowPrefix))
			lo, _ = slices.BinarySearch(x.rowWin, w)
			hi = lo
			for hi < n && x.rowWin[hi] == w {
				hi++
			}
		}
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return s.cmp.CompareKeys(s.sampleKey(lo+i), key) >= 0 })
}

// extendBack decodes the sample runs before the first kept cell, at least
// as many cells as are kept, and puts them in front of the kept ones, so
// that a reverse scan, which steps back a row at a time, decodes each cell
// of the block once: without it, every step before the kept cells would
// start again from a sample and drop what it decoded. It reports whether it
// extended.
//
// REQUIRES: s.idx != nil.
func (s *seeker) extendBack() (bool, error) {
	if s.first == 0 {
		return false, nil
	}
	j := (s.first - 1) / RestartInterval
	if j >= len(s.idx.cells) {
		return false, nil
	}
	// Decode at least as many cells as are kept (from an earlier sample),
	// so that the kept cells move up front O(log n) times per block
	// rather than once per sample run.
	j = min(j, max(0, s.first-len(s.cells))/RestartInterval)
	run := s.back[:0]
	c := s.idx.cells[j]
	if !s.idx.none {
		k := s.sampleKey(j)
		c.keyOff = int32(len(s.keys))
		s.keys = append(s.keys, k...)
	}
	run = append(run, c)
	for len(run) < s.first-j*RestartInterval {
		run = append(run, cellState{})
		n := len(run)
		if err := s.decode(&run[n-1], &run[n-2], int(run[n-2].next)); err != nil {
			s.back = run[:0]
			return false, err
		}
	}
	if run[len(run)-1].next != s.cells[0].offset {
		s.back = run[:0]
		return false, s.corruptf(int(s.cells[0].offset), "restart index sample %d does not lead to cell %d", j, s.first)
	}
	s.cells = append(s.cells, run...) // room for the run
	copy(s.cells[len(run):], s.cells[:len(s.cells)-len(run)])
	copy(s.cells, run)
	s.back = run[:0]
	s.first = j * RestartInterval
	s.setPos(s.pos + len(run))
	return true, nil
}

// growBack extends the kept cells backwards with the restart index (see
// extendBack) and returns i, an index into them, shifted to the same cell;
// ok is false when there is nothing before them to add.
func (s *seeker) growBack(i int) (_ int, ok bool, _ error) {
	if s.idx == nil {
		return i, false, nil
	}
	n := len(s.cells)
	if ok, err := s.extendBack(); err != nil || !ok {
		return i, false, err
	}
	return i + len(s.cells) - n, true, nil
}

// SeekBeforeRow implements Seeker. It walks back over the kept cells
// comparing rows only, which costs a few row comparisons per row where
// SeekBeforeKey and a forward seek cost a dozen key comparisons.
func (s *seeker) SeekBeforeRow(row []byte) (int, error) {
	if s.data == nil {
		return RowUnknown, errSeekerNotInitialized
	}
	// The last kept cell of a row before row... (c is how cells[i]'s row
	// compares with row; a step to a cell known to share its row keeps it,
	// and a step out of row itself reaches a row before it.)
	i := s.pos
	for c := s.cmp.CompareRows(s.keyAt(i).Row(), row); c >= 0; {
		if i == 0 {
			var ok bool
			var err error
			if i, ok, err = s.growBack(i); err != nil || !ok {
				return s.atFirstKept(RowBeforeBlock), err
			}
		}
		rel := s.cells[i].rowRel
		i--
		switch {
		case rel == rowSame:
		case rel == rowNew && c == 0:
			c = -1
		default:
			c = s.cmp.CompareRows(s.keyAt(i).Row(), row)
		}
	}
	// ...and that row's first cell, which must not be the block's first:
	// the row may begin in the block before.
	r := s.keyAt(i).Row()
	j := i
	for {
		if j == 0 {
			var ok bool
			var err error
			if j, ok, err = s.growBack(j); err != nil || !ok {
				return s.atFirstKept(RowAtBlockStart), err
			}
		}
		if rel := s.cells[j].rowRel; rel == rowNew ||
			rel == rowUnknown && s.cmp.CompareRows(s.keyAt(j-1).Row(), r) != 0 {
			break
		}
		j--
	}
	s.setPos(j)
	return RowFound, nil
}

// NextStartsRow implements Seeker.
func (s *seeker) NextStartsRow() (starts, ok bool) {
	if s.data == nil || s.pos+1 >= len(s.cells) {
		return false, false
	}
	switch s.cells[s.pos+1].rowRel {
	case rowSame:
		return false, true
	case rowNew:
		return true, true
	}
	return s.cmp.CompareRows(s.keyAt(s.pos+1).Row(), s.key.Row()) != 0, true
}

// StartsRow implements Seeker.
func (s *seeker) StartsRow() (starts, ok bool) {
	if s.data == nil || s.pos >= len(s.cells) {
		return false, false
	}
	switch s.cells[s.pos].rowRel {
	case rowSame:
		return false, true
	case rowNew:
		return true, true
	}
	return false, false
}

// atFirstKept is what SeekBeforeRow returns when it reached the first kept
// cell: res if that is the block's first cell, else RowUnknown.
func (s *seeker) atFirstKept(res int) int {
	if s.first == 0 {
		return res
	}
	return RowUnknown
}
