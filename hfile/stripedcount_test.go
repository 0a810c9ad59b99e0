package hfile

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestStripedCount(t *testing.T) {
	var c stripedCount
	// Consecutive 4 KiB blocks use every stripe in turn.
	for k := range int64(len(c.stripes)) {
		c.add(k*4096 + 33)
	}
	for i := range c.stripes {
		require.EqualValues(t, 1, c.stripes[i].n.Load(), "stripe %d", i)
	}
	require.EqualValues(t, len(c.stripes), c.load())

	// Concurrent adds are all counted.
	const goroutines, adds = 4, 10_000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range adds {
				c.add(int64(g*adds+i) * 1500)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, len(c.stripes)+goroutines*adds, c.load())

	// Stripes are two cache lines apart, so neighbours share no line pair.
	require.GreaterOrEqual(t, unsafe.Sizeof(c.stripes[0]), uintptr(128))
}
