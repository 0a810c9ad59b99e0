// Package mvcc orders a region's writes and publishes them to readers. All
// methods of Control are safe for concurrent use by any number of goroutines;
// a WriteEntry belongs to the goroutine that began it until that goroutine
// completes it, and must be completed exactly once (completing it again is a
// harmless no-op). ReadPoint, WritePoint and Complete never block; Begin,
// BeginWith and AdvanceTo take a short internal lock; CompleteAndWait and
// Await may block until earlier writes complete. Every entry that is begun must be
// completed, also when the write fails (after its effects are undone):
// otherwise the read point stops at the entry before it and every later
// CompleteAndWait blocks forever.
//
// Control is HBase's MultiVersionConcurrencyControl (hbase-server,
// regionserver package), with the ordering fixed by HBASE-15213.
//
// # Usage
//
// A writer takes a write number, makes its write (WAL append and sync,
// memstore insert, every cell stamped with the number), then completes the
// entry and waits until the write is visible:
//
//	e := c.Begin()
//	if err := apply(e.WriteNumber()); err != nil {
//		undo(e.WriteNumber())
//		c.Complete(e) // never leave an entry pending
//		return err
//	}
//	c.CompleteAndWait(e)
//
// A writer that keeps memory from one write to the next can keep its entry
// there too and allocate none: BeginInto begins a write into it, and Finish,
// which is CompleteAndWait and then waits until no other goroutine refers to
// the entry, makes it ready for the next one.
//
// A reader takes c.ReadPoint() once and ignores every cell whose sequence
// number is above it. Every write with a number at or below the read point
// has completed, so a reader sees each write either whole or not at all.
//
// The write numbers are the region's sequence ids. On region open, before any
// write begins, AdvanceTo moves both points to the largest sequence id found
// in the store files and the replayed WAL.
//
// # Ordering
//
// Write numbers are handed out in increasing order and entries wait in a FIFO
// queue. The read point is the number of the last entry of the completed
// prefix of that queue: completion may happen in any order, but visibility is
// in write-number order. Complete records the entry's completion first and
// then, if the entry is next in line, retires the whole completed prefix of
// the queue, moving the read point past each entry in turn, whoever the
// entries belong to; if an earlier entry is still in flight it leaves its
// own to be retired by the Complete of that earlier one.
// CompleteAndWait waits only if its own entry is still beyond the read point
// after that, and returns as soon as any goroutine's Complete retires it; see
// Control for how waiters are woken and why.
//
// Before HBASE-15213 each writer instead waited until its own entry reached
// the head of the queue and only then removed it and advanced the read point,
// which serialized writers behind one another and woke every waiter on every
// advance. control_bench_test.go keeps that order as a baseline.
package mvcc
