package blockcache

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testBlock is a Value that claims size bytes without holding them.
type testBlock struct {
	size int64
	id   int
}

func (b *testBlock) MemSize() int64 { return b.size }

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time          { return f.t }
func (f *fakeClock) advance(d time.Duration) { f.t = f.t.Add(d) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testOptions returns options for a cache of size bytes, one shard, quiet.
func testOptions(size int64) Options {
	o := DefaultOptions()
	o.Size = size
	o.Shards = 1
	o.Logger = quiet
	// The tests drive the eviction themselves, as the eviction goroutine
	// would; TestInlineEviction covers inserts that evict.
	o.EvictionThread = true
	return o
}

// newTestLRU returns a cache without its eviction goroutine: the test calls
// runEviction / evictionStep itself.
func newTestLRU(t testing.TB, o Options) *LRU[*testBlock] {
	t.Helper()
	c, err := newLRU[*testBlock](o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// block returns a value whose charge in c is exactly charge bytes.
func block(c *LRU[*testBlock], charge int64, id int) *testBlock {
	return &testBlock{size: charge - c.entryOverhead, id: id}
}

// checkInvariants verifies every shard's lists, maps and byte counts, and
// the global size, against each other.
func checkInvariants(t testing.TB, c *LRU[*testBlock]) {
	t.Helper()
	var total int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n, data := 0, 0
		for p := range s.lists {
			var bytes int64
			l := &s.lists[p]
			for e := l.root.next; e != &l.root; e = e.next {
				require.Equal(t, priority(p), e.prio)
				require.Same(t, e, s.m[e.key], "listed entry not in map")
				require.Equal(t, e.value.MemSize()+c.entryOverhead+e.extra, e.charge)
				require.Same(t, e, e.next.prev)
				bytes += e.charge
				n++
				if e.kind == KindData {
					data++
				}
			}
			require.Equal(t, bytes, s.bytes[p], "shard %d %s bytes", i, priority(p))
			total += bytes
		}
		require.Equal(t, len(s.m), n, "shard %d: map and lists disagree", i)
		require.EqualValues(t, n, s.count)
		require.EqualValues(t, data, s.data)
		s.mu.Unlock()
	}
	require.Equal(t, total, c.size.Load(), "global size")
}
