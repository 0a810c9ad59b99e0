package ipc

import (
	"sync/atomic"
	"testing"
	"time"
)

// Tests check that goroutines go away when connections do; idle workers
// should not make them wait seconds for that.
func init() { workerIdle = 20 * time.Millisecond }

// TestWorkerPoolReuses checks that sequential calls run on one worker and
// that idle workers exit.
func TestWorkerPoolReuses(t *testing.T) {
	p := &workerPool{work: make(chan func())}
	var started atomic.Int32
	done := make(chan struct{})
	for i := 0; i < 100; i++ {
		p.run(func() {
			started.Add(1)
			done <- struct{}{}
		})
		<-done
		// Let the worker get back to waiting for work.
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
			select {
			case p.work <- func() { done <- struct{}{} }:
				<-done
				goto next
			default:
				time.Sleep(time.Millisecond)
			}
		}
		t.Fatal("no idle worker took the next call")
	next:
	}
	if got := started.Load(); got != 100 {
		t.Fatalf("ran %d calls, want 100", got)
	}
	time.Sleep(5 * workerIdle)
	select {
	case p.work <- func() {}:
		t.Fatal("a worker was still waiting after its idle timeout")
	default:
	}
}
