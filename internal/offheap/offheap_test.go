package offheap

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestAllocDistinct fills more than a chunk and checks that every buffer
// has the class's size, that no two overlap, and that what is written to
// one is read back after the others are written.
func TestAllocDistinct(t *testing.T) {
	c := NewClass(3456)
	n := 2*int(c.perChunk) + 7
	bufs := make([][]byte, n)
	hs := make([]Handle, n)
	seen := map[uintptr]bool{}
	for i := range bufs {
		bufs[i], hs[i] = c.Alloc()
		if len(bufs[i]) != 3456 || cap(bufs[i]) != 3456 {
			t.Fatalf("buffer %d: len %d cap %d", i, len(bufs[i]), cap(bufs[i]))
		}
		a := addr(bufs[i])
		if seen[a] {
			t.Fatalf("buffer %d handed out twice", i)
		}
		seen[a] = true
		for j := range bufs[i] {
			bufs[i][j] = byte(i)
		}
	}
	for i, b := range bufs {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, len(b))) {
			t.Fatalf("buffer %d overwritten by another", i)
		}
	}
	for _, h := range hs {
		c.Free(h)
	}
}

// TestReuseAndRelease checks that a freed buffer is handed out again, that
// emptied chunks stay resident up to warmChunks and have their pages
// released beyond, and that another class then reuses a released chunk
// instead of mapping more.
func TestReuseAndRelease(t *testing.T) {
	c := NewClass(64 << 10) // 32 per chunk
	b1, h1 := c.Alloc()
	c.Free(h1)
	b2, h2 := c.Alloc()
	if addr(b1) != addr(b2) {
		t.Fatalf("a freed buffer was not reused")
	}
	c.Free(h2)

	before := ReadStats()
	chunks.mu.Lock()
	warm0 := len(chunks.warm)
	chunks.mu.Unlock()
	k := warmChunks + 3
	var hs []Handle
	for i := 0; i < k*int(c.perChunk); i++ {
		_, h := c.Alloc()
		hs = append(hs, h)
	}
	// The warm chunks are taken first, then new or released ones.
	if got, want := ReadStats().Chunks-before.Chunks, int64(k-warm0)*ChunkSize; got != want {
		t.Fatalf("%d full chunks: chunk memory grew by %d, want %d", k, got, want)
	}
	if got := ReadStats().InUse - before.InUse; got != int64(len(hs))*64<<10 {
		t.Fatalf("in use grew by %d, want %d", got, len(hs)*64<<10)
	}
	rand.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
	for _, h := range hs {
		c.Free(h)
	}
	after := ReadStats()
	if got, want := after.Chunks-before.Chunks, int64(warmChunks-warm0)*ChunkSize; got != want {
		t.Fatalf("all freed: chunk memory %d above the start, want %d (the warm chunks)", got, want)
	}
	if after.InUse != before.InUse {
		t.Fatalf("all freed: in use %d, was %d", after.InUse, before.InUse)
	}
	chunks.mu.Lock()
	warm, released := len(chunks.warm), len(chunks.released)
	chunks.mu.Unlock()
	if warm != warmChunks || released < k-warmChunks {
		t.Fatalf("all freed: %d warm and %d released chunks, want %d and at least %d", warm, released, warmChunks, k-warmChunks)
	}

	// Other classes take the warm chunks, then released ones: nothing new
	// is mapped.
	d := NewClass(1000)
	var ds []Handle
	for i := 0; i < (warmChunks+1)*int(d.perChunk); i++ {
		_, h := d.Alloc()
		ds = append(ds, h)
	}
	if got := ReadStats(); got.Mapped != after.Mapped {
		t.Fatalf("a new class mapped %d more bytes with released chunks available", got.Mapped-after.Mapped)
	}
	for _, h := range ds {
		d.Free(h)
	}
}

func TestFreeForeignHandlePanics(t *testing.T) {
	a, b := NewClass(4096), NewClass(8192)
	_, h := a.Alloc()
	defer a.Free(h)
	defer func() {
		if recover() == nil {
			t.Fatal("freeing another class's buffer did not panic")
		}
	}()
	b.Free(h)
}

func TestNewClassBounds(t *testing.T) {
	for _, size := range []int{0, -1, MaxSize + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("NewClass(%d) did not panic", size)
				}
			}()
			NewClass(size)
		}()
	}
	if c := NewClass(MaxSize); c.perChunk != 8 {
		t.Fatalf("MaxSize class holds %d per chunk, want 8", c.perChunk)
	}
}

// TestConcurrent has goroutines allocate, write, check and free buffers of
// two classes at once; under the race detector it also checks the locking.
func TestConcurrent(t *testing.T) {
	classes := []*Class{NewClass(3456), NewClass(70 << 10)}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			type held struct {
				c   *Class
				b   []byte
				h   Handle
				tag byte
			}
			var mine []held
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < 3000; i++ {
				if len(mine) > 0 && rng.IntN(2) == 0 {
					k := rng.IntN(len(mine))
					x := mine[k]
					if x.b[0] != x.tag || x.b[len(x.b)-1] != x.tag {
						t.Errorf("goroutine %d: a held buffer was overwritten", g)
						return
					}
					x.c.Free(x.h)
					mine[k] = mine[len(mine)-1]
					mine = mine[:len(mine)-1]
					continue
				}
				c := classes[rng.IntN(len(classes))]
				b, h := c.Alloc()
				tag := byte(g*31 + i)
				b[0], b[len(b)-1] = tag, tag
				mine = append(mine, held{c, b, h, tag})
			}
			for _, x := range mine {
				x.c.Free(x.h)
			}
		}(g)
	}
	wg.Wait()
}

func BenchmarkAllocFree(b *testing.B) {
	c := NewClass(3456)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, h := c.Alloc()
		c.Free(h)
	}
}
