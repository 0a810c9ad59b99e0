// Package scanner merges the sources of one store (the memstore's segments
// and the store files) into the cells a read should see: HBase's
// KeyValueScanner, StoreFileScanner, KeyValueHeap, StoreScanner and
// ScanQueryMatcher.
//
// The filters themselves (HBase's Filter classes and comparators) live in
// package filter; the QueryMatcher hands each cell a read may see to the
// read's filter, and the StoreScanner follows its seek hints and copies
// what its TransformCell returns.
//
// Every scanner reads at an MVCC read point fixed when it is opened: cells
// with a larger sequence id are invisible, so a scan sees one consistent
// snapshot while writes, flushes and compactions go on.
//
// A KeyValueScanner's current cell (Peek) is valid until the scanner moves;
// a StoreScanner copies the cells it returns. None of the types here is safe
// for concurrent use.
package scanner
