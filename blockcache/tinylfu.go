package blockcache

import "math/bits"

// sketch is a count-min sketch of 4-bit counters with periodic halving: the
// frequency estimate of TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A
// Highly Efficient Cache Admission Policy", 2017). Each shard owns one and
// touches it only under its mutex, so it needs no atomics; it is allocated
// once and never grows, so recording an access does not allocate.
type sketch struct {
	// rows holds sketchDepth rows of width counters each, 16 to a word,
	// row after row.
	rows  []uint64
	words uint64 // words per row
	mask  uint64 // width - 1 (width is a power of two)
	// adds counts increments since the last halving; the halving comes when
	// it reaches sampleFactor × the shard's block count, so a block's count
	// says how often it was read in the recent past, not since start.
	adds         int64
	sampleFactor int64
	halvings     int64
}

const (
	sketchDepth = 4
	counterMax  = 15
	// minSketchWidth keeps tiny shards from estimating by collisions.
	minSketchWidth = 64
	// minSample keeps a nearly empty shard from halving on every access.
	minSample = 64
	// oddBits keeps the low three bits of every 4-bit counter: the mask of
	// a halving's shifted word.
	oddBits = 0x7777777777777777
)

// newSketch returns a sketch of at least width counters per row.
func newSketch(width int64, sampleFactor int64) sketch {
	w := uint64(minSketchWidth)
	for int64(w) < width {
		w <<= 1
	}
	return sketch{
		rows:         make([]uint64, sketchDepth*w/16),
		words:        w / 16,
		mask:         w - 1,
		sampleFactor: max(sampleFactor, 1),
	}
}

// keyHash mixes a key into 64 bits (splitmix64's finalizer), independently
// of shardIndex's hash, whose high bits are the same for every key of a
// shard.
func keyHash(k Key) uint64 {
	h := uint64(k.Offset) ^ bits.RotateLeft64(k.File*0x9e3779b97f4a7c15, 32)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// slot returns the word index and shift of h's counter in row r: double
// hashing, the odd step making the rows' positions differ.
func (s *sketch) slot(h uint64, r int) (uint64, uint) {
	i := (h + uint64(r)*((h>>32)|1)) & s.mask
	return uint64(r)*s.words + i/16, uint(i%16) * 4
}

// estimate returns the smallest of k's counters: its frequency, possibly
// overestimated by collisions, never underestimated.
func (s *sketch) estimate(h uint64) uint64 {
	m := uint64(counterMax)
	for r := 0; r < sketchDepth; r++ {
		w, sh := s.slot(h, r)
		m = min(m, (s.rows[w]>>sh)&0xf)
	}
	return m
}

// add counts one access to h, incrementing only the counters at the
// minimum (conservative update, which keeps collisions from inflating
// counts that are already higher), and halves every counter once the sample
// is complete. blocks is the shard's block count, which sizes the sample.
func (s *sketch) add(h uint64, blocks int64) {
	m := s.estimate(h)
	if m < counterMax {
		for r := 0; r < sketchDepth; r++ {
			w, sh := s.slot(h, r)
			if (s.rows[w]>>sh)&0xf == m {
				s.rows[w] += 1 << sh
			}
		}
	}
	s.adds++
	if s.adds >= s.sampleFactor*max(blocks, minSample) {
		s.halve()
	}
}

// halve divides every counter by two: TinyLFU's reset, which ages out the
// past so a block once hot and now cold stops keeping others out.
func (s *sketch) halve() {
	for i, w := range s.rows {
		s.rows[i] = (w >> 1) & oddBits
	}
	s.adds /= 2
	s.halvings++
}
