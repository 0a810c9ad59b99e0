package mvcc

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
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
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	m := make(map[string]string)
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		id, _, _ := bytes.Cut(g, []byte(" ["))
		m[string(id)] = string(g)
	}
	return m
}
