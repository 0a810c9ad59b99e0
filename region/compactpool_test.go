package region

import (
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fillFiles(t *testing.T, r *Region, files, rows int) {
	t.Helper()
	for f := 0; f < files; f++ {
		for i := 0; i < rows; i++ {
			v := make([]byte, 400)
			rand.Read(v)
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%04d", i))).AddAt(fam, b("q"), int64(f+1), v)))
		}
		require.NoError(t, r.Flush())
	}
}

// TestCompactionPoolShared: regions sharing a pool of one worker compact
// one at a time, and their compactions together keep to the pool's rate.
func TestCompactionPoolShared(t *testing.T) {
	const rate = 400 << 10
	p := NewCompactionPool(1, rate)
	var regions []*Region
	for i := 0; i < 2; i++ {
		r := openTest(t, t.TempDir(), func(o *Options) { o.CompactionPool = p; o.DisableAutoCompaction = true })
		defer r.Close()
		fillFiles(t, r, 3, 300)
		regions = append(regions, r)
	}
	var maxRunning int64
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			maxRunning = max(maxRunning, p.Stats().Running)
			time.Sleep(time.Millisecond)
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	var written [2]int64
	for i, r := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.CompactStores(true)
			require.NoError(t, err)
			require.Len(t, res, 1)
			written[i] = res[0].OutputBytes
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	watch.Wait()
	require.EqualValues(t, 1, maxRunning, "one worker: one compaction at a time")
	require.EqualValues(t, 2, p.Stats().Completed)
	total := written[0] + written[1]
	// Both outputs at one shared rate take at least total/rate (less the
	// 10 ms the throttle lets a writer run ahead).
	minimum := time.Duration(float64(total)/rate*float64(time.Second)) - 50*time.Millisecond
	require.GreaterOrEqual(t, took, minimum, "%d bytes in %s at %d B/s", total, took, rate)
	for _, r := range regions {
		files := r.Store("f").Files()
		require.Len(t, files, 1)
		require.True(t, files[0].Major)
	}
}
