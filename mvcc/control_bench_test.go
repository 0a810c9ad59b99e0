package mvcc

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// writeOrder is what the benchmark drives: begin, then complete and wait.
type writeOrder interface {
	Begin() *WriteEntry
	CompleteAndWait(e *WriteEntry)
}

var _ writeOrder = (*Control)(nil)
var _ writeOrder = (*oldControl)(nil)

// oldControl is the write order before HBASE-15213, kept only as a benchmark
// baseline. A writer waits until its own entry is at the head of the queue,
// and only then marks it completed, removes it and advances the read point.
// Completion is recorded after the wait, so no writer ever retires another's
// entry: writers finish strictly one after another, and since every advance
// must wake the single writer now at the head, each advance broadcasts to all
// waiters, most of which go back to sleep.
type oldControl struct {
	readPoint  atomic.Uint64
	writePoint atomic.Uint64
	mu         struct {
		sync.Mutex
		queue entryQueue
		// headChanged is broadcast whenever the head of the queue is removed.
		headChanged sync.Cond
	}
}

func newOldControl() *oldControl {
	o := &oldControl{}
	o.mu.headChanged.L = &o.mu.Mutex
	return o
}

func (o *oldControl) Begin() *WriteEntry {
	o.mu.Lock()
	e := &WriteEntry{writeNumber: o.writePoint.Load() + 1}
	o.mu.queue.pushBack(e)
	o.writePoint.Store(e.writeNumber)
	o.mu.Unlock()
	return e
}

func (o *oldControl) CompleteAndWait(e *WriteEntry) {
	o.mu.Lock()
	for o.mu.queue.at(0) != e {
		o.mu.headChanged.Wait()
	}
	e.completed = true
	// Retire the completed prefix; with this order that is e alone.
	for o.mu.queue.len() > 0 && o.mu.queue.at(0).completed {
		o.readPoint.Store(o.mu.queue.popFront().writeNumber)
	}
	o.mu.headChanged.Broadcast()
	o.mu.Unlock()
}

// walAppend stands in for the WAL append between begin and complete: it
// frames an edit of random size (16 bytes to 1 KiB) stamped with the write
// number and checksums it, and one time in eight yields the processor, as a
// handler does while it waits for a WAL sync. It does no I/O, so the
// benchmark measures the ordering, not a disk.
//
// The variation matters: it makes writers finish out of write-number order,
// as real handlers do. With identical work and no yields, one goroutine can
// run hundreds of operations in its time slice with no other write in flight
// (or goroutines run in lockstep in begin order), the N writers do not
// really overlap, and short calibration runs miss the contention that long
// runs see.
func walAppend(buf []byte, rng *rand.Rand, writeNumber uint64) uint32 {
	n := 16 + rng.IntN(len(buf)-15)
	binary.BigEndian.PutUint64(buf, writeNumber)
	sum := crc32.Checksum(buf[:n], crcTable)
	if rng.IntN(8) == 0 {
		runtime.Gosched()
	}
	return sum
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// BenchmarkControl runs N writer goroutines at once, each doing begin, a
// simulated WAL append, complete-and-wait, until b.N operations are done in
// total, under the current order (order=new, Control) and the
// pre-HBASE-15213 order (order=old). It reports throughput as ops/s.
func BenchmarkControl(b *testing.B) {
	orders := []struct {
		name string
		make func() writeOrder
	}{
		{"new", func() writeOrder { return New(0) }},
		{"old", func() writeOrder { return newOldControl() }},
	}
	for _, order := range orders {
		for _, writers := range []int{1, 4, 16, 64, 256} {
			b.Run(fmt.Sprintf("order=%s/writers=%d", order.name, writers), func(b *testing.B) {
				benchmarkOrder(b, order.make(), writers)
			})
		}
	}
}

func benchmarkOrder(b *testing.B, c writeOrder, writers int) {
	b.ReportAllocs()
	var next atomic.Int64
	var sink atomic.Uint32
	var start, wg sync.WaitGroup
	start.Add(1)
	wg.Add(writers)
	for w := 0; w < writers; w++ {
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			buf := make([]byte, 1024)
			var sum uint32
			start.Wait()
			for next.Add(1) <= int64(b.N) {
				e := c.Begin()
				sum += walAppend(buf, rng, e.WriteNumber())
				c.CompleteAndWait(e)
			}
			sink.Add(sum)
		}(uint64(w))
	}
	b.ResetTimer()
	start.Done()
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
