package mvcc

import (
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/testutil"
)

// checkNoLeaks records the goroutines alive now and returns a function that
// fails t if, within a few seconds, goroutines started since are still alive.
// Use it as: defer checkNoLeaks(t)().
func checkNoLeaks(t *testing.T) func() {
	t.Helper()
	before := goroutines()
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			var leaked []string
			for id, stack := range goroutines() {
				if _, ok := before[id]; !ok {
					leaked = append(leaked, stack)
				}
			}
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines leaked:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// goroutines returns the stacks of all user goroutines, keyed by the
// "goroutine N" line.
func goroutines() map[string]string {
	m := make(map[string]string)
	for _, g := range testutil.GoroutineStacks() {
		id, _, _ := strings.Cut(g, " [")
		m[id] = g
	}
	return m
}
