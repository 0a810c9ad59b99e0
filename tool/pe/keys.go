package pe

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/cockroachdb/errors"
)

// peRowLength is the width of pe's row keys: HBase PerformanceEvaluation's
// ROW_LENGTH. Row number i is written as 26 zero-padded decimal digits, so
// row keys sort in row-number order.
const peRowLength = 26

// peRowKey returns row number i as pe's 26-byte row key (HBase PE's
// format(i)). The slice is new: the region may keep it.
func peRowKey(i int64) []byte {
	b := make([]byte, peRowLength)
	putRowKey(b, i)
	return b
}

// putRowKey writes row number i into b, which is peRowLength bytes long.
func putRowKey(b []byte, i int64) {
	for j := len(b) - 1; j >= 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
}

// peRowNumber parses a pe row key back into its row number; ok is false if
// key is not one.
func peRowNumber(key []byte) (n int64, ok bool) {
	if len(key) != peRowLength {
		return 0, false
	}
	for _, d := range key {
		if d < '0' || d > '9' || n > (math.MaxInt64-9)/10 {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// peValue returns n bytes of random upper-case letters in runs of eight, as
// HBase PE's generateData does: compressible about as much as HBase's.
func peValue(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	i := 0
	for ; i+8 < n; i += 8 {
		c := byte('A' + rng.IntN(26))
		for j := i; j < i+8; j++ {
			b[j] = c
		}
	}
	c := byte('A' + rng.IntN(26))
	for ; i < n; i++ {
		b[i] = c
	}
	return b
}

// Request distributions (--requestDistribution), named as YCSB names them.
const (
	distUniform = "uniform"
	distZipfian = "zipfian"
	distLatest  = "latest"
)

// peKeyChooser picks the row numbers of random commands. It is immutable and
// shared by every client; each client passes its own rng.
type peKeyChooser interface {
	next(rng *rand.Rand) int64
}

// newKeyChooser returns the chooser for distribution over keySpace rows.
// rows and clients describe the table's layout (client c of a
// sequentialWrite wrote rows [c*rows, (c+1)*rows) in order), which "latest"
// uses to find the most recently written rows.
func newKeyChooser(distribution string, keySpace, rows int64, clients int) (peKeyChooser, error) {
	switch strings.ToLower(distribution) {
	case distUniform:
		return uniformKeys{n: keySpace}, nil
	case distZipfian:
		return scrambledZipfianKeys{z: newZipfian(keySpace)}, nil
	case distLatest:
		return latestKeys{z: newZipfian(keySpace), rows: rows, clients: int64(clients)}, nil
	}
	return nil, errors.Newf("unknown request distribution %q (want uniform, zipfian or latest)", distribution)
}

// uniformKeys picks every row with the same probability, as HBase PE's
// getRandomRow does.
type uniformKeys struct{ n int64 }

func (u uniformKeys) next(rng *rand.Rand) int64 { return rng.Int64N(u.n) }

// scrambledZipfianKeys is YCSB's requestdistribution=zipfian
// (ScrambledZipfianGenerator): item ranks follow a Zipfian distribution and
// are then hashed, so the popular rows are spread over the key space instead
// of clustering at its start. Unlike YCSB, which draws from a fixed
// 10-billion-item Zipfian and folds it with a modulo to avoid computing
// zeta(n), we draw from a Zipfian over exactly n items.
type scrambledZipfianKeys struct{ z *zipfian }

func (s scrambledZipfianKeys) next(rng *rand.Rand) int64 {
	return int64(fnv64(uint64(s.z.next(rng))) % uint64(s.z.n))
}

// latestKeys is YCSB's requestdistribution=latest (SkewedLatestGenerator):
// Zipfian over recency, so rank 0 is the most recently written row. Recency
// is inferred from the table's layout: a sequentialWrite client writes its
// range in increasing order and all clients write at once, so rank r is
// client r%clients's row rows-1-r/clients. When the key space is not the
// whole table (--keySpace), the highest row numbers count as the newest.
type latestKeys struct {
	z             *zipfian
	rows, clients int64
}

func (l latestKeys) next(rng *rand.Rand) int64 {
	return latestRow(l.z.next(rng), l.z.n, l.rows, l.clients)
}

// latestRow returns the row of recency rank r (0: the newest) among n rows
// written as latestKeys describes.
func latestRow(r, n, rows, clients int64) int64 {
	if rows*clients != n {
		return n - 1 - r
	}
	return (r%clients)*rows + rows - 1 - r/clients
}

// zipfianConstant is YCSB's default Zipfian skew (theta).
const zipfianConstant = 0.99

// zipfian draws item ranks 0..n-1 where rank 0 is the most popular, with
// the algorithm YCSB's ZipfianGenerator uses (Gray et al., "Quickly
// generating billion-record synthetic databases", SIGMOD 1994). Building one
// costs O(n) for zeta(n); drawing is O(1).
type zipfian struct {
	n                        int64
	theta, alpha, zetan, eta float64
	halfPowTheta             float64 // 1 + 0.5^theta: the upper bound for rank 1
}

func newZipfian(n int64) *zipfian {
	z := &zipfian{n: n, theta: zipfianConstant, alpha: 1 / (1 - zipfianConstant)}
	z.zetan = zeta(n, z.theta)
	z.halfPowTheta = 1 + math.Pow(0.5, z.theta)
	if n > 1 {
		z.eta = (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - zeta(2, z.theta)/z.zetan)
	}
	return z
}

func zeta(n int64, theta float64) float64 { return zetaFrom(0, n, 0, theta) }

// zetaFrom extends sum = zeta(m) to zeta(n), n >= m, as YCSB's
// ZipfianGenerator does when its item count grows.
func zetaFrom(m, n int64, sum, theta float64) float64 {
	for i := m + 1; i <= n; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	return sum
}

// grow returns a zipfian over n >= z.n items, computing zeta(n) from
// zeta(z.n) in O(n - z.n).
func (z *zipfian) grow(n int64) *zipfian {
	if n <= z.n {
		return z
	}
	g := &zipfian{n: n, theta: z.theta, alpha: z.alpha, halfPowTheta: z.halfPowTheta}
	g.zetan = zetaFrom(z.n, n, z.zetan, z.theta)
	g.eta = (1 - math.Pow(2/float64(n), 1-g.theta)) / (1 - zeta(2, g.theta)/g.zetan)
	return g
}

func (z *zipfian) next(rng *rand.Rand) int64 {
	if z.n <= 1 {
		return 0
	}
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.halfPowTheta {
		return 1
	}
	r := int64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(max(r, 0), z.n-1)
}

// fnv64 is FNV-1a over the eight little-endian bytes of v, as YCSB's
// Utils.fnvhash64 scrambles ranks.
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}
	return h
}
