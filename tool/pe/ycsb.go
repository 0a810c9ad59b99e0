package pe

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/region"
)

// The YCSB core workloads A to F (YCSB's workloads/workloada..workloadf),
// run over the table a sequentialWrite with the same --rows and NCLIENTS
// wrote: the record count is rows × NCLIENTS, a record is a row and its
// fields are the table's family × column cells (so one field by default).
// Each client runs --rows operations. As in YCSB's CoreWorkload, reads read
// every field, updates write one field picked at random, inserts write
// every field, and scans read every field of each row.
//
// Inserts add rows after the record count, numbered in insertion order.
// Reads, updates and scans only pick rows whose insert has completed, and
// every row below them too (YCSB's AcknowledgedCounterGenerator), so every
// read must find its row.

// ycsbOp is a YCSB operation type.
type ycsbOp int

const (
	ycsbRead ycsbOp = iota
	ycsbUpdate
	ycsbInsert
	ycsbScan
	ycsbReadModifyWrite
)

// ycsbOpNames are YCSB's names for its measurements.
var ycsbOpNames = [...]string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}

// ycsbWorkload is the part of a YCSB workload file pe follows.
type ycsbWorkload struct {
	// mix is the operation proportions, in the order operations are picked.
	mix []ycsbShare
	// latest is requestdistribution=latest; otherwise zipfian.
	latest bool
	// maxScanLength is maxscanlength, with scanlengthdistribution=uniform.
	maxScanLength int64
}

type ycsbShare struct {
	op ycsbOp
	p  float64
}

// The core workloads, as YCSB's workload files define them.
var (
	ycsbA = ycsbWorkload{mix: []ycsbShare{{ycsbRead, 0.5}, {ycsbUpdate, 0.5}}}
	ycsbB = ycsbWorkload{mix: []ycsbShare{{ycsbRead, 0.95}, {ycsbUpdate, 0.05}}}
	ycsbC = ycsbWorkload{mix: []ycsbShare{{ycsbRead, 1}}}
	ycsbD = ycsbWorkload{mix: []ycsbShare{{ycsbRead, 0.95}, {ycsbInsert, 0.05}}, latest: true}
	ycsbE = ycsbWorkload{mix: []ycsbShare{{ycsbScan, 0.95}, {ycsbInsert, 0.05}}, maxScanLength: 100}
	ycsbF = ycsbWorkload{mix: []ycsbShare{{ycsbRead, 0.5}, {ycsbReadModifyWrite, 0.5}}}
)

func (w *ycsbWorkload) kinds() []string {
	names := make([]string, len(w.mix))
	for i, s := range w.mix {
		names[i] = ycsbOpNames[s.op]
	}
	return names
}

func (w *ycsbWorkload) proportion(op ycsbOp) float64 {
	for _, s := range w.mix {
		if s.op == op {
			return s.p
		}
	}
	return 0
}

func ycsbCommand(name, usage string, w *ycsbWorkload) peCommand {
	writes := w.proportion(ycsbUpdate)+w.proportion(ycsbInsert)+w.proportion(ycsbReadModifyWrite) > 0
	return peCommand{name: name, usage: usage, read: true, write: writes, pick: pickNone,
		op: (*peClient).ycsbOp, countsRows: true, workload: w}
}

// ycsbState is what the clients of a workload share.
type ycsbState struct {
	w           *ycsbWorkload
	t           *peTable
	recordCount int64
	clients     int64

	// zipf draws ranks for requestdistribution=zipfian, scrambled over
	// zipf.n items: the record count plus twice the expected inserts, as
	// YCSB sizes it; rows not inserted yet are drawn again.
	zipf *zipfian
	// latest draws recency ranks for requestdistribution=latest over the
	// acknowledged rows; it grows with them.
	latest atomic.Pointer[zipfian]
	growMu sync.Mutex

	nextInsert atomic.Int64 // the row number of the next insert
	acked      atomic.Int64 // rows [0, acked) are all written
	ackMu      sync.Mutex
	pending    map[int64]struct{} // rows inserted above acked
}

// newYCSBState prepares workload w over t's table for clients clients of
// limit operations each (-1: until --duration).
func newYCSBState(w *ycsbWorkload, t *peTable, clients int, limit int64) *ycsbState {
	s := &ycsbState{w: w, t: t, recordCount: t.tableRows, clients: int64(clients), pending: map[int64]struct{}{}}
	s.nextInsert.Store(s.recordCount)
	s.acked.Store(s.recordCount)
	if w.latest {
		s.latest.Store(newZipfian(s.recordCount))
	} else {
		n := s.recordCount
		if p := w.proportion(ycsbInsert); p > 0 && limit > 0 {
			n += int64(float64(limit) * float64(clients) * p * 2)
		}
		s.zipf = newZipfian(n)
	}
	return s
}

// nextKey picks the row of a read, update or scan.
func (s *ycsbState) nextKey(rng *rand.Rand) int64 {
	if s.w.latest {
		return s.latestKey(rng)
	}
	keys := scrambledZipfianKeys{z: s.zipf}
	for {
		if k := keys.next(rng); k < s.acked.Load() {
			return k
		}
	}
}

// latestKey is YCSB's SkewedLatestGenerator: Zipfian over recency, rank 0
// the last row inserted. Inserted rows are newer than the table's, whose
// recency follows from how sequentialWrite wrote them (latestRow).
func (s *ycsbState) latestKey(rng *rand.Rand) int64 {
	n := s.acked.Load()
	z := s.latest.Load()
	if z.n < n {
		s.growMu.Lock()
		if z = s.latest.Load(); z.n < n {
			z = z.grow(n)
			s.latest.Store(z)
		}
		s.growMu.Unlock()
	}
	// z.n rows are acknowledged: n, or more if another client grew z.
	r := z.next(rng)
	inserted := z.n - s.recordCount
	if r < inserted {
		return z.n - 1 - r
	}
	return latestRow(r-inserted, s.recordCount, s.t.rows, s.clients)
}

// ack marks row as inserted and advances acked over every row below which
// all are.
func (s *ycsbState) ack(row int64) {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	s.pending[row] = struct{}{}
	a := s.acked.Load()
	for {
		if _, ok := s.pending[a]; !ok {
			break
		}
		delete(s.pending, a)
		a++
	}
	s.acked.Store(a)
}

// ycsbOp performs one operation of the workload, picked by its mix.
func (c *peClient) ycsbOp(int64) (time.Duration, error) {
	s := c.t.ycsb
	u := c.rng.Float64()
	k := len(s.w.mix) - 1
	for i, share := range s.w.mix {
		if u < share.p {
			k = i
			break
		}
		u -= share.p
	}
	c.kind = k
	op := s.w.mix[k].op
	switch op {
	case ycsbInsert:
		row := s.nextInsert.Add(1) - 1
		took, err := c.put(row)
		if err != nil {
			return took, errors.Wrapf(err, "INSERT of row %s", peRowKey(row))
		}
		s.ack(row)
		return took, nil
	case ycsbScan:
		return c.ycsbScan()
	}
	row := s.nextKey(c.rng)
	var (
		took time.Duration
		err  error
	)
	switch op {
	case ycsbRead:
		took, err = c.get(row)
		c.rowsRead++
	case ycsbUpdate:
		p := c.updateOneField(row)
		start := now()
		err = c.t.r.Put(p)
		took = now() - start
	case ycsbReadModifyWrite:
		g, p := c.newGet(row), c.updateOneField(row)
		start := now()
		var res *region.Result
		if res, err = c.t.r.Get(g); err == nil {
			if err = c.checkGet(res); err == nil {
				err = c.t.r.Put(p)
			}
		}
		took = now() - start
		c.rowsRead++
	}
	if err != nil {
		return took, errors.Wrapf(err, "%s of row %s", ycsbOpNames[op], peRowKey(row))
	}
	return took, nil
}

// updateOneField returns a Put of a new value for one field of the row,
// picked at random (YCSB's writeallfields=false).
func (c *peClient) updateOneField(row int64) *region.Put {
	col := c.t.columns[c.rng.IntN(len(c.t.columns))]
	p := region.NewPut(peRowKey(row)).Add(col.Family, col.Qualifier, peValue(c.rng, c.t.valueSize))
	p.Durability = c.t.durability
	return p
}

// ycsbScan scans 1..maxScanLength rows (uniform) from a row picked by the
// request distribution. The rows acknowledged when it starts must all be
// there; rows inserted meanwhile may or may not be.
func (c *peClient) ycsbScan() (time.Duration, error) {
	s := c.t.ycsb
	row := s.nextKey(c.rng)
	length := 1 + c.rng.Int64N(s.w.maxScanLength)
	acked := s.acked.Load()
	scan := &region.Scan{StartRow: peRowKey(row), Limit: int(length), Columns: c.t.columns, NoCacheBlocks: !c.t.cacheBlocks}
	results := c.results[:0]
	defer func() { clear(results); c.results = results[:0] }()
	start := now()
	sc, err := c.t.r.NewScanner(scan)
	if err != nil {
		return now() - start, errors.Wrapf(err, "SCAN from row %s", scan.StartRow)
	}
	for {
		res, err := sc.Next()
		if err != nil {
			sc.Close()
			return now() - start, errors.Wrapf(err, "SCAN from row %s", scan.StartRow)
		}
		if res == nil {
			break
		}
		results = append(results, res)
	}
	sc.Close()
	took := now() - start
	c.rowsRead += int64(len(results))

	want := min(length, acked-row)
	if int64(len(results)) > length {
		return took, errors.Newf("SCAN of %d rows from row %s returned %d", length, scan.StartRow, len(results))
	}
	prev := row - 1
	for i, res := range results {
		if int64(i) < want {
			if err := c.checkRow(&res.Result, row+int64(i), false); err != nil {
				return took, errors.Wrapf(err, "SCAN of %d rows from row %s", length, scan.StartRow)
			}
			prev = row + int64(i)
			continue
		}
		got, ok := peRowNumber(res.Cells[0].Row)
		if !ok || got <= prev {
			return took, errors.Newf("SCAN from row %s returned row %q after row %s", scan.StartRow, res.Cells[0].Row, peRowKey(prev))
		}
		prev = got
	}
	if int64(len(results)) < want {
		return took, errors.Wrapf(errMiss, "SCAN of %d rows from row %s: row %s", length, scan.StartRow, peRowKey(row+int64(len(results))))
	}
	return took, nil
}
