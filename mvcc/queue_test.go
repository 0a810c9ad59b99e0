package mvcc

// entryQueue is the FIFO of write entries of the pre-HBASE-15213 baseline in
// control_bench_test.go (Control keeps its entries in an entryRing): a ring
// buffer whose size is a power of two. It grows as needed and never shrinks: its size is bounded by the
// largest number of writes ever in flight at once, which is about the number
// of handler goroutines. It is not safe for concurrent use.
type entryQueue struct {
	buf  []*WriteEntry
	head int // index in buf of the front entry
	n    int // number of entries
}

const minQueueSize = 16

func (q *entryQueue) len() int { return q.n }

// at returns the i-th entry from the front. REQUIRES: 0 ≤ i < q.len().
func (q *entryQueue) at(i int) *WriteEntry {
	return q.buf[(q.head+i)&(len(q.buf)-1)]
}

func (q *entryQueue) pushBack(e *WriteEntry) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

// popFront removes and returns the front entry. REQUIRES: q.len() > 0.
func (q *entryQueue) popFront() *WriteEntry {
	e := q.buf[q.head]
	q.buf[q.head] = nil // let the entry be collected
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return e
}

func (q *entryQueue) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = minQueueSize
	}
	buf := make([]*WriteEntry, size)
	for i := 0; i < q.n; i++ {
		buf[i] = q.at(i)
	}
	q.buf, q.head = buf, 0
}
