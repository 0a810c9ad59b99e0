// Package hfile reads and writes HBase's HFile v3, so that files written here
// can be bulk-loaded into HBase and files written by HBase can be read here.
//
// Use a Writer to write cells in comparer order, then Close; use Open or
// OpenFile to read, Reader.NewIterator to seek and scan, and
// Reader.MayContainRow / MayContainRowCol for bloom checks. A Reader is safe
// for concurrent use; Writers and Iterators are not.
//
// # File layout
//
//	+-----------------------------+ offset 0
//	| data block (DATABLK*/E)     | \
//	| ...                         |  | scanned section: data blocks, with
//	| leaf index block (IDXLEAF2) |  | inline leaf index blocks and bloom
//	| bloom chunk (BLMFBLK2)      |  | chunks written as they fill up
//	| data block                  | /
//	+-----------------------------+
//	| meta blocks (METABLKc)      | \ non-scanned section
//	| intermediate index blocks   | /
//	+-----------------------------+ <- trailer.LoadOnOpenDataOffset
//	| root data index (IDXROOT2)  | \
//	| meta index (IDXROOT2)       |  | load-on-open section, read when the
//	| file info (FILEINF2)        |  | file is opened
//	| bloom metas (BLMFMET2,      |  |
//	|   DFBLMET2)                 | /
//	+-----------------------------+ <- size - 4096
//	| trailer: TRABLK"$, varint-  |
//	| delimited FileTrailerProto, |
//	| zero padding, version int32 |
//	+-----------------------------+
//
// # Blocks
//
// Every block but the trailer is a 33-byte header, a payload and checksums:
//
//	magic(8) onDiskSizeWithoutHeader(4) uncompressedSizeWithoutHeader(4)
//	prevBlockOffset(8) checksumType(1) bytesPerChecksum(4) onDiskDataSizeWithHeader(4)
//	payload (compressed with the file's codec; the header never is)
//	one 4-byte checksum per bytesPerChecksum bytes of header+payload
//
// Index keys are serialized KeyValue keys; an index key for a data block may
// be a short separator between the previous block's last key and the block's
// first key rather than a real key (minor version 3), so a seek can land
// just before a block's first cell.
//
// # Block memory
//
// Blocks that a block cache takes (and index, bloom and meta blocks) are
// ordinary heap memory, immutable and shared. A data block that no cache
// will take (no cache, Iterator with cacheBlocks false, or refused by a
// DataBlockAdmitter's admission policy) is read into a pooled buffer that the
// Iterator owns and recycles once it has moved two blocks on, or on Close:
// so slices an Iterator returns are valid until it moves, and callers copy
// what they keep (see pool.go).
//
// Every read verifies checksums and bounds; bytes that do not decode are
// reported as errors marked with encoding.ErrCorruption that name the file
// and the block offset.
//
// The trailer is the one part without a checksum, so Open checks each of
// its fields against the checksummed load-on-open section (entry counts,
// index levels, the first and last data block offsets, section offsets and
// sizes; see check.go) and refuses a file where they disagree; a full scan
// also checks the cell count and the data blocks' chaining. Reader.Verify
// checks a whole file. A bloom filter that turns out unreadable is logged,
// counted (BloomErrors) and ignored: the file reads as if it had none.
package hfile
