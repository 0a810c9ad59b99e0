package region

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/memstore"
)

// MemstoreLimit is memory shared by the memstores of several regions:
// HBase's global memstore limit (hbase.regionserver.global.memstore.size
// and .lower.limit). When the regions' memstores together pass Lower, the
// largest region is flushed, then the next largest, until they are below
// it again; writes block while they are above Upper, and fail with
// ErrRegionTooBusy if that lasts longer than the region's BlockingWait.
//
// A region takes part when opened with Options.MemstoreLimit. One
// MemstoreLimit serves any number of regions; its creator closes it after
// them. It is safe for concurrent use.
type MemstoreLimit struct {
	upper, lower int64
	used         atomic.Int64
	flushes      atomic.Int64

	mu      sync.Mutex
	regions map[*Region]struct{}
	freed   chan struct{} // closed and replaced whenever used drops
	closed  bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// DefaultMemstoreLowerFraction is hbase.regionserver.global.memstore.size.lower.limit:
// the flusher starts at this fraction of the upper limit.
const DefaultMemstoreLowerFraction = 0.95

// NewMemstoreLimit returns a limit of upper bytes whose flushes start at
// lowerFraction of it (DefaultMemstoreLowerFraction if not in (0, 1]).
func NewMemstoreLimit(upper int64, lowerFraction float64) (*MemstoreLimit, error) {
	if upper <= 0 {
		return nil, invalidArgf("region: global memstore limit %d must be positive", upper)
	}
	if lowerFraction <= 0 || lowerFraction > 1 {
		lowerFraction = DefaultMemstoreLowerFraction
	}
	m := &MemstoreLimit{upper: upper, lower: int64(float64(upper) * lowerFraction),
		regions: map[*Region]struct{}{}, freed: make(chan struct{}),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go m.flusher()
	return m, nil
}

// MemstoreLimitStats are a MemstoreLimit's sizes and counters.
type MemstoreLimitStats struct {
	Used, Lower, Upper int64
	// Flushes counts the flushes the limit asked for.
	Flushes int64
	Regions int
}

// Stats returns the limit's sizes and counters.
func (m *MemstoreLimit) Stats() MemstoreLimitStats {
	m.mu.Lock()
	n := len(m.regions)
	m.mu.Unlock()
	return MemstoreLimitStats{Used: m.used.Load(), Lower: m.lower, Upper: m.upper, Flushes: m.flushes.Load(), Regions: n}
}

// Close stops the limit's flusher. Regions still open keep counting but are
// no longer flushed for it. Close is idempotent.
func (m *MemstoreLimit) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	m.mu.Unlock()
	<-m.done
}

func (m *MemstoreLimit) register(r *Region) {
	m.mu.Lock()
	m.regions[r] = struct{}{}
	m.mu.Unlock()
}

// unregister drops r and what its memstores still count.
func (m *MemstoreLimit) unregister(r *Region) {
	m.mu.Lock()
	delete(m.regions, r)
	m.mu.Unlock()
	m.add(-r.memHeap.Load())
}

func (m *MemstoreLimit) add(delta int64) {
	used := m.used.Add(delta)
	if delta < 0 {
		m.mu.Lock()
		close(m.freed)
		m.freed = make(chan struct{})
		m.mu.Unlock()
	}
	if delta > 0 && used > m.lower {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

func (m *MemstoreLimit) freedChan() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freed
}

// flusher flushes the largest region while the regions are above the lower
// limit, one flush at a time, as HBase's MemStoreFlusher does.
func (m *MemstoreLimit) flusher() {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		case <-m.wake:
		}
		tried := map[*Region]bool{}
		for m.used.Load() > m.lower {
			r := m.largest(tried)
			if r == nil {
				break
			}
			tried[r] = true
			m.flushes.Add(1)
			if err := r.Flush(); err != nil && !r.closed.Load() {
				r.log.Error("region: flush for the global memstore limit failed", "region", r.dir, "err", err)
			}
			select {
			case <-m.stop:
				return
			default:
			}
		}
	}
}

// largest returns the open region with the most memstore bytes not in
// skip, nil if none has any.
func (m *MemstoreLimit) largest(skip map[*Region]bool) *Region {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *Region
	var size int64
	for r := range m.regions {
		if s := r.memHeap.Load(); !skip[r] && s > size && !r.closed.Load() {
			best, size = r, s
		}
	}
	return best
}

// wait blocks while the regions are above the upper limit, for up to d.
func (m *MemstoreLimit) wait(ctx context.Context, r *Region, d time.Duration) error {
	if m.used.Load() <= m.upper {
		return nil
	}
	r.stats.blockedWrites.Add(1)
	select {
	case m.wake <- struct{}{}:
	default:
	}
	d = waitLimit(ctx, d)
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for m.used.Load() > m.upper {
		if r.closed.Load() {
			return ErrClosed
		}
		ch := m.freedChan()
		if m.used.Load() <= m.upper {
			break
		}
		select {
		case <-ch:
		case <-deadline.C:
			return errors.Wrapf(ErrRegionTooBusy, "above global memstore limit: %d bytes in memstores, limit %d, after waiting %s (region %s)",
				m.used.Load(), m.upper, d, r.dir)
		case <-ctx.Done():
			return errors.Wrapf(ErrRegionTooBusy, "above global memstore limit: %d bytes in memstores, limit %d (region %s): %v",
				m.used.Load(), m.upper, r.dir, context.Cause(ctx))
		}
	}
	return nil
}

// addMemSize accounts a change of the region's memstores, globally too
// (the global limit counts heap sizes, as HBase's does). A change of
// nothing, as a counter's upsert usually is, writes nothing: the counters
// are shared by every writer's processor.
func (r *Region) addMemSize(d memstore.Size) {
	if d.DataSize == 0 && d.HeapSize == 0 {
		return
	}
	r.memSize.Add(d.DataSize)
	r.memHeap.Add(d.HeapSize)
	if m := r.opts.MemstoreLimit; m != nil {
		m.add(d.HeapSize)
	}
}
