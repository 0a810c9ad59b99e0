package region

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// CompactionPool is compaction capacity shared by several regions: HBase's
// CompactSplit thread pools (hbase.regionserver.thread.compaction.small and
// .large) and one throughput limit for all of them
// (hbase.hstore.compaction.throughput.higher.bound applied server-wide).
// Regions opened with Options.CompactionPool run at most Workers
// compactions at once between them, background and explicit alike, and
// their compactions together write at most BytesPerSec.
//
// A CompactionPool needs no closing; it is safe for concurrent use.
type CompactionPool struct {
	slots    chan struct{}
	throttle sharedThrottle
	waiting  atomic.Int64
	running  atomic.Int64
	done     atomic.Int64
}

// NewCompactionPool returns a pool of workers concurrent compactions
// (at least 1) writing at most bytesPerSec together (<= 0: unlimited).
func NewCompactionPool(workers int, bytesPerSec int64) *CompactionPool {
	p := &CompactionPool{slots: make(chan struct{}, max(workers, 1))}
	p.throttle.bytesPerSec = bytesPerSec
	return p
}

// CompactionPoolStats are a pool's gauges and counters.
type CompactionPoolStats struct {
	// Queued compactions wait for a worker; Running ones have one.
	// Completed counts those that compacted something.
	Queued, Running int64
	Completed       int64
}

// Stats returns the pool's gauges and counters.
func (p *CompactionPool) Stats() CompactionPoolStats {
	return CompactionPoolStats{Queued: p.waiting.Load(), Running: p.running.Load(), Completed: p.done.Load()}
}

func (p *CompactionPool) acquire(ctx context.Context) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		p.running.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the slot back; compacted says whether the holder had
// anything to compact, for Completed.
func (p *CompactionPool) release(compacted bool) {
	p.running.Add(-1)
	if compacted {
		p.done.Add(1)
	}
	<-p.slots
}

// sharedThrottle paces the writes of every compaction of a pool against one
// rate: each write moves the time the next may go by its share, and a
// writer ahead of that time sleeps.
type sharedThrottle struct {
	bytesPerSec int64
	mu          sync.Mutex
	next        time.Time
}

func (t *sharedThrottle) wrote(ctx context.Context, n int) error {
	if t.bytesPerSec <= 0 {
		return nil
	}
	t.mu.Lock()
	now := time.Now()
	if t.next.Before(now) {
		t.next = now
	}
	t.next = t.next.Add(time.Duration(float64(n) / float64(t.bytesPerSec) * float64(time.Second)))
	ahead := t.next.Sub(now)
	t.mu.Unlock()
	if ahead < 10*time.Millisecond {
		return nil
	}
	timer := time.NewTimer(ahead)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
