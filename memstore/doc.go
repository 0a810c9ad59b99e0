// Package memstore holds a store's recent writes in memory, sorted, until a
// flush writes them to an HFile. Every method of MemStore and Segment is safe
// for concurrent use by any number of goroutines: writers serialize on a short
// per-segment mutex held only for the B-tree insert, and readers take it only
// for short reads of the tree between writes. A SegmentScanner is not safe for concurrent
// use; each goroutine opens its own. Cells are copied on Add and never changed
// afterwards, so a *encoding.KeyValue returned by a scanner, and every slice
// in it, stays valid and unchanged for as long as the caller keeps it, even
// after the scanner is closed and the segment flushed and cleared. The
// exception is a cell Upsert added: once a later upsert removes it, its
// memory is reused when no read that oldest accounts for can hold it, so a
// read copies what it keeps of a cell before it stops being accounted for.
// Callers must not modify returned cells.
//
// MemStore is HBase's DefaultMemStore: a mutable active Segment plus, while a
// flush runs, an immutable snapshot Segment. Segment is HBase's Segment with
// its CellSet, and the arena that cells are copied into is HBase's
// MemStoreLAB.
//
// # Usage
//
// The write path adds cells that already carry their sequence id; the read
// path opens one scanner per segment at its MVCC read point and merges them
// with the store files' scanners:
//
//	ms := memstore.New(encoding.InnerStoreComparer)
//	delta := ms.Add(&kv) // kv is copied; delta feeds the region's memstore size
//
//	for _, s := range ms.Scanners(readPoint) {
//		defer s.Close()
//		for kv := s.SeekGE(key); kv != nil; kv = s.Next() { ... }
//	}
//
// A flush takes a snapshot, writes it and clears it; writes go on into a new
// active segment meanwhile, and readers see both segments:
//
//	snap := ms.Snapshot()
//	s := snap.Segment.NewScanner(math.MaxUint64)
//	for kv := s.SeekToFirst(); kv != nil; kv = s.Next() { w.Append(kv) }
//	s.Close()
//	// ... publish the new file in the store, then
//	err := ms.ClearSnapshot(snap.ID)
//
// # Order and visibility
//
// A segment orders cells by its encoding.Comparer in full, sequence ids
// included: cells with the same key and different sequence ids coexist,
// newest sequence id first. Adding a cell equal to one already present (same
// key and same sequence id) replaces it, as HBase's CellSet does.
//
// A scanner sees a consistent snapshot of its segment: exactly the cells
// whose Add returned before the scanner was opened (and possibly some whose
// Add was in progress), restricted to those with a sequence id at or below
// the scanner's read point. Cells added later are never seen, whatever their
// sequence id. The one exception is a cell replaced by an equal one after
// the scanner was opened: the scanner sees it once, in either form. With
// MVCC in use this is the same as HBase's weakly consistent CellSet
// iteration filtered by the read point, because every write at or below a
// read point has finished its memstore insert before the read point passed
// it; the snapshot makes it hold without relying on that.
//
// # Concurrency scheme
//
// The B-tree holds one item per column (row, family, qualifier), and each
// column a list of its cells in the segment's order. A new column is a
// B-tree insert; a cell for a column that has one already, as in
// read-modify-write loops (Increment, Append, or a Get and a Put) and
// overwrites, goes into the column's list and leaves the tree unchanged.
// The tree so stays the size of the number of columns however many versions
// accumulate before a flush, a Get finds a column's newest cell without
// stepping over older ones, and a version added after a reader cloned the
// tree copies no nodes. Measured with BenchmarkReadAfterWrite (100k rows,
// about 50 versions each by the end; the least of four runs alternating with
// a tree of cells): 1.8 to 1.1 µs per Get+Add, and 2.3 to 1.7 µs in
// parallel. An Add of a new row costs about 5% more, for the column header.
//
// google/btree is not safe for concurrent writes, or for reads concurrent
// with writes. Each Segment keeps its B-tree under a mutex that writers take
// for the insert. Every Add numbers its cell with the segment's write count,
// stored in the cell's list node, and publishes the count when the cell is
// in; a scanner notes the count when it is opened (an atomic load, no lock)
// and skips cells numbered above it. An Upsert to a column the segment has
// (an Increment's, under its row's lock) takes no mutex and no number: it
// is the column's only writer, and no read point reaches its cell's
// sequence id before it returns, so the scanners opened before it cannot see
// the cell anyway. With two processors incrementing counters of different
// rows, the mutex and the shared counters it guarded were most of what the
// processors' caches passed back and forth.
//
// Cells are never removed from a segment but by Upsert, which removes only
// puts that no read in progress or to come returns (a newer put hides them
// from every read point in use, in a family of one version), so any later
// state of the tree, so filtered, is the snapshot at the open: a scanner may
// read its cells from whichever tree is cheapest at each refill, and still
// see one consistent snapshot. A column's list is read
// without the mutex: a writer fills a node before publishing it with an
// atomic store, and a node Upsert unlinks keeps its own link, so that a reader
// on it goes on down the list.
//
// A refill reads either the live tree, holding the mutex, or a copy-on-write
// Clone, without it. Cloning is O(1) (it only gives both trees fresh
// ownership contexts) and the clone never changes, but the first write after
// it copies the root-to-leaf path of nodes the clone shares: about 4 nodes of
// up to 63 items, several KiB, which costs as much as ten seeks or more. In a
// read-modify-write loop (HBase's Increment, or a Get and a Put on the same
// row) a clone per Get made each Put copy a path, and read-after-write four
// times slower. So a seek, and the refill after it, read the live tree when
// no clone is cached; a scanner that goes further (a scan) clones, and so
// does the ninth refill since the last write, so that readers in a run
// without writes stop taking the mutex. Clones are cached: every refill
// between two writes uses the same one, and a burst of writes with no clone
// in between pays no copying at all. A frozen (snapshot) segment's tree is
// read directly. An open scanner keeps its clone's nodes alive, so a scanner
// left open during heavy writes holds on to the nodes the writer has since
// copied; close scanners promptly.
//
// google/btree iterates only with callbacks (Ascend*, Descend*) and has no
// cursor, so a scanner collects a run of consecutive visible cells per
// descent (4 after a seek, growing to 256 as a scan goes on) and serves Next,
// Prev and short forward seeks (HBase's reseek) from that run. Going forward
// it takes at most 1 cell of one column after a seek and 4 after that,
// stops there, and goes on down that column's list at the next refill
// without a descent: a Get of a counter with 60 versions reads its newest
// and not a run of list nodes, and seeking past the column skips the list
// whole. A seek that stops so in its first column goes on, in the same
// iteration, past the rest of the list to collect the cells after the
// column, so that a seek past the column, or a walk to its end, needs no
// second descent; ColumnGoesOn tells a store scanner about to leave the
// column to seek rather than step down the list. BenchmarkGetPutParallel
// (the peer harness's locked Get and Put on 10k counters, 60 versions each
// by the end), one goroutine, alternated: 4.0-4.6 µs per Get and Put
// before, 2.9-3.8 after. A seek collects 4 cells rather than 8 because each costs a cache
// miss on a large segment and a Get needs 2 (its row's cell and the next
// row's); on 1M rows that took SeekGE from 12-27% slower than the tree of
// cells to as fast. A refill of the live tree holds the writers' mutex for
// one descent and a collection of at most 16 cells, not much longer than
// an insert does.
//
// # Memory
//
// Cell bytes (row, family, qualifier, value, tags) are copied into an arena
// of chunks that start at 64 KiB and double up to 2 MiB, like HBase's
// MemStoreLAB (hbase.hregion.memstore.mslab.chunksize); cells over 256 KiB
// (hbase.hregion.memstore.mslab.max.allocation) get their own allocation. The
// KeyValue structs, and the columns and list nodes, are cut from slabs of up
// to 1024. A space in an arena is reserved with an atomic add, so the copy
// happens outside the segment's mutex. Chunks are not recycled: they are garbage once the segment
// and every cell a caller still holds are gone. Adding a cell therefore
// allocates nothing in the steady state apart from the B-tree's own node
// growth.
//
// A B-tree item is not just the column pointer: it also holds a cell of the
// column, the row's length and 8 bytes of the row, so that most comparisons
// during a descent read no cell at all (rows that differ early, or short rows
// that end within those 8 bytes). The 8 bytes are those after
// the segment's skip prefix: once a segment holds 64 cells, and if no reader
// has taken a copy of its tree yet, it takes the common prefix of its
// smallest and largest rows as the prefix that the inline bytes follow, so
// that rows with a long common prefix (YCSB's user%010d, pe's zero-padded
// digits) are told apart inline too; later rows without that prefix compare
// by their whole rows. On a million cells the inline bytes halve SeekGE's time
// for random rows, and the skip prefix halves an Add's time for YCSB's and
// pe's rows (2.1 to 1.1 µs, BenchmarkMemStoreAdd), at 32 bytes per item
// instead of 8. The hbase:meta comparer, which does not
// order rows bytewise, compares the cells only.
package memstore
