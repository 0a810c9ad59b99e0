package memstore

import (
	"unsafe"

	"github.com/regionkv/regionkv/encoding"
)

// cellPool recycles the own cells (see ownCell) that upserts unlink, so that
// a counter's Increment reuses the memory of the version it replaced, which
// is still in the processor's caches, rather than allocating 256 bytes the
// garbage collector must later find dead. It lives in Segment.mu.
//
// A cell unlinked from its column's list may still be read by a read that
// reached it before the unlink; it is reused only once every such read is
// done. Reads register their read points with whoever answers the upserts'
// oldest(), and the read point never reaches the sequence id of a write in
// progress: an upsert's cell is numbered after every read point held while it
// unlinks. So a cell that an upsert of sequence id S unlinked is free once
// oldest(S) answers S or more: every read registered then began after the
// unlink, when the cell was no longer reachable.
//
// Unlinked cells wait in a batch (open) stamped with the newest sequence id
// of the upserts that unlinked them; when no other batch waits, open is
// sealed and the next upserts ask oldest whether it is free. A read that
// keeps the read point from passing the stamp (a long scan) stops the
// recycling, not the upserts: cells beyond the bounds below go to the
// garbage collector as before.
type cellPool struct {
	free         []*ownCell
	open, sealed []*ownCell
	openStamp    encoding.SeqNum
	sealedStamp  encoding.SeqNum
}

// maxPooledCells bounds each of a pool's lists, so that a segment holds at
// most 3*maxPooledCells*256 bytes it does not count in its size.
const maxPooledCells = 256

// ownCellOf returns the ownCell whose node v is. REQUIRES: v.recycle.
func ownCellOf(v *version) *ownCell {
	// v is oc.c.col.v0, at offset 0 of oc.
	return (*ownCell)(unsafe.Pointer(v))
}

// file adds oc, which an upsert of sequence id seq unlinked, to the open
// batch. REQUIRES: s.mu held.
func (p *cellPool) file(oc *ownCell, seq encoding.SeqNum) {
	if len(p.open) >= maxPooledCells {
		return // the garbage collector's
	}
	p.open = append(p.open, oc)
	p.openStamp = max(p.openStamp, seq)
}

// advance frees the sealed batch if no read can hold its cells any more, and
// seals the open batch when none is sealed. REQUIRES: s.mu held.
func (p *cellPool) advance(oldest func(need encoding.SeqNum) (encoding.SeqNum, bool)) {
	if len(p.sealed) > 0 {
		rp, ok := oldest(p.sealedStamp)
		if !ok || rp < p.sealedStamp {
			return
		}
		if len(p.free) == 0 {
			p.free, p.sealed = p.sealed, p.free
		} else {
			n := min(len(p.sealed), maxPooledCells-len(p.free))
			p.free = append(p.free, p.sealed[:n]...)
			clear(p.sealed)
		}
		p.sealed = p.sealed[:0]
	}
	if len(p.open) > 0 {
		p.open, p.sealed = p.sealed, p.open
		p.sealedStamp, p.openStamp = p.openStamp, 0
	}
}

// take returns a free cell, zeroed, or nil. REQUIRES: s.mu held.
func (p *cellPool) take() *ownCell {
	n := len(p.free)
	if n == 0 {
		return nil
	}
	oc := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	*oc = ownCell{}
	return oc
}

// drop lets the garbage collector have every pooled cell, for a segment that
// takes no more upserts. REQUIRES: s.mu held.
func (p *cellPool) drop() { *p = cellPool{} }
