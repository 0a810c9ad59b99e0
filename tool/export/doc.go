// Package export is `regionsrv export`: it writes a table's data, from a
// consistent snapshot, as HFiles in the layout of HBase's completebulkload
// (BulkLoadHFilesTool), with what an HBase cluster needs to create the
// table first, so that the data moves to an HBase cluster with HBase's own
// tools:
//
//	regionsrv export [--zk HOST:PORT | --dir DATA_DIR] --table T --out DIR [--snapshot S] [--max-file-size N]
//
// DIR then holds:
//
//	DIR/<family>/<hfile>   HFile v3, named as HBase names store files (32 lowercase hex digits)
//	DIR/create.rb          an `hbase shell` script: create 'T', {NAME => 'f', VERSIONS => '3', ...}, SPLITS => [...]
//	DIR/splits.txt         the table's split keys, one a line, as HBase's Bytes.toStringBinary writes them
//
// Each region of the snapshot gives one or more files per family (a new
// one past --max-file-size, at a row boundary, as HBase's
// HFileOutputFormat2 rolls at hbase.hregion.max.filesize), so no file
// straddles a region boundary of the table create.rb makes, and
// completebulkload loads each file whole. A file holds what a read of every
// version returns at the snapshot (HBase's major compaction view): every
// version up to the family's VERSIONS, no delete markers and no cells they
// mask, no expired cells; timestamps are kept. The files carry the family's
// block size, encoding, compression and bloom filter, and the file info of
// HBase's bulk load output (BULKLOAD_TIMESTAMP, MAJOR_COMPACTION_KEY), so
// the cluster assigns them a sequence id when it loads them.
//
// Two ways to read the snapshot:
//
//   - --zk (the default, 127.0.0.1:2181): over HBase's client protocol only,
//     so it works against an HBase cluster too. Without --snapshot it takes
//     one (FLUSH) and deletes it afterwards. It clones the snapshot into a
//     temporary table (which shares the snapshot's files on the server and
//     costs no copy), scans each of its regions with every version, and
//     drops the table at the end. Cells travel without tags, so a per-cell
//     TTL (HBase's Mutation.setTTL) is not exported; a family's TTL is.
//   - --dir DATA_DIR (with --snapshot): reads the snapshot's manifest and
//     files straight from the data directory of a server, running or
//     stopped (a snapshot's files never change). It hard-links (or, on
//     another filesystem, copies) them into DIR/.export-tmp, opens each
//     region there as an embedded region and scans it; cells keep their
//     tags.
//
// Main is the whole command line; cmd/regionsrv only dispatches to it.
// Run is the same for Go callers.
package export
