package region

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreMu: a read locks exactly one shard, which a writer then cannot
// take; consecutive read hints spread over every shard; a writer holds
// every shard, so no read gets in.
func TestStoreMu(t *testing.T) {
	var m storeMu
	used := make(map[int]bool)
	for range 4 * storeMuShards {
		h := newReadHint()
		m.RLock(h)
		held := -1
		for i := range m.shards {
			if m.shards[i].TryLock() {
				m.shards[i].Unlock()
				continue
			}
			require.Equal(t, -1, held, "hint %d read-locks more than one shard", h)
			held = i
		}
		require.NotEqual(t, -1, held, "hint %d read-locks no shard", h)
		used[held] = true
		m.RUnlock(h)
	}
	require.Len(t, used, storeMuShards, "reads use every shard")

	m.Lock()
	for i := range m.shards {
		require.False(t, m.shards[i].TryRLock(), "shard %d readable under the write lock", i)
	}
	m.Unlock()
	for i := range m.shards {
		require.True(t, m.shards[i].TryLock(), "shard %d left locked", i)
		m.shards[i].Unlock()
	}
}
