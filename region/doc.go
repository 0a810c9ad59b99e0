// Package region is RegionKV's embedded store: one HBase region (HRegion) in
// a directory, with column families, versions, TTL, a write-ahead log,
// flushes to HFile v3 store files and compactions, used from Go with no
// server. The regionsrv server hosts its tables' regions with this package.
//
// # Opening
//
// Open takes a directory and Options. A new region needs its column
// families; a region reopened may leave Families empty to use those stored
// in <dir>/.regioninfo. Every zero value in Options and FamilyOptions means
// HBase's default:
//
//	r, err := region.Open(dir, region.Options{
//		Families: []region.FamilyOptions{{
//			Name:        "f",
//			MaxVersions: 3,                        // VERSIONS (default 1)
//			Compression: region.CompressionSnappy, // COMPRESSION (default NONE)
//			Encoding:    region.EncodingFastDiff,  // DATA_BLOCK_ENCODING (default NONE)
//			// BloomFilter: ROW unless set; BlockSize: 4 KiB unless set
//		}},
//		CacheSize: 256 << 20, // a block cache of the region's own
//	})
//	defer r.Close()
//
// Options.SetConfig applies HBase's property names
// (hbase.hregion.memstore.flush.size, hbase.hstore.compaction.min, ...), as
// an hbase-site.xml would. A directory is open in one Region at a time: a
// second Open, in this process or another, fails with ErrLocked.
//
// # Writing
//
// Put, Delete, Increment, Append, CheckAndMutate and Batch are HBase's
// mutations. Each is atomic for its row (Batch: for all its rows at once)
// and visible to readers all at once when it returns. A cell's timestamp is
// the region's clock unless the Put gives one (AddAt); a row keeps up to its
// family's MaxVersions versions of a column, newest first. Increment and
// Append read and write under the row's exclusive lock, so concurrent
// increments of a counter never lose one. The region does not retain a
// mutation or its slices after the call returns: they may be reused.
//
// Durability is per mutation or Options.Durability: SyncWAL (the default)
// has the WAL entry written to the operating system before the call returns
// (it survives the process being killed); FSyncWAL also fsyncs it, with
// group commit (it survives power loss); AsyncWAL writes it soon after;
// SkipWAL not at all (the edit is lost in a crash before the next flush).
//
// # Reading
//
// Get reads one row at the current read point; its Result is the caller's to
// keep. GetInto reads into a Result the caller reuses: the previous result's
// cells (and every slice in them) become invalid, so a loop of point reads
// allocates nothing. NewScanner opens a Scanner over a Scan (forward or
// Reversed, start and stop rows, columns, versions, time range, limits, a
// filter from package filter). A Scanner sees the snapshot of its creation
// while writes, flushes and compactions go on. Next returns results the
// caller may keep; NextInto reuses one ScanResult as GetInto does. Close
// every Scanner: it pins the store files it reads.
//
// # Flushes, compactions, the block cache
//
// Writes go to the memstores; when their heap size passes Options.FlushSize a background
// flush writes each to a new store file (Flush does it now) and drops the
// WAL segments it covers. Writes block (up to BlockingWait, then
// ErrRegionTooBusy) when the memstores reach BlockingMultiplier×FlushSize.
// Store files are merged in the background by HBase's exploring compaction
// policy; a compaction of every file of a store (major) drops deleted cells,
// expired cells and versions past MaxVersions. A minor one keeps delete
// markers and, as a flush does, drops the puts the files it merges hide
// (versions past MaxVersions, deleted cells), unless a file outside it may
// hold a version delete (Delete.AddColumn, AddFamilyVersion), which could
// mask a newer version and show an older one. A store whose files mostly
// rewrite each other (a small table under overwrites, estimated from a
// sample of each new file's keys probed against older files' blooms) is
// compacted whole, however few its files. Compact and CompactStores run one
// now, and CompactNeeded runs what the background compactor would;
// CompactStores says what it did. Stats reports counters and sizes.
//
// A family's TTL hides cells older than it. With MinVersions (HBase's
// MIN_VERSIONS) the newest MinVersions versions of a column that are not
// deleted outlive the TTL: a read counts the versions it sees (within its
// time range, newest first) and returns an expired one while the count is
// at most MinVersions. Flushes (counting in the flushed memstore alone) and
// major compactions drop the expired versions past that count, as HBase's
// do, so a read with an old time range finds fewer of them afterwards;
// minor compactions keep them.
//
// Store file blocks are read through a block cache when there is one:
// Options.Cache (a Cache shared by several regions, which its creator
// closes) or one of Options.CacheSize bytes that the region makes and closes
// itself. Stats().BlockCache has its counters.
//
// # Changing families
//
// AddFamily, DeleteFamily and ModifyFamily change an open region's column
// families in place, while reads, writes, flushes and compactions go on
// (HBase rewrites the table descriptor and reopens the regions instead). An
// added family is writable at once. A deleted one is gone when the call
// returns: its memstore is dropped, its directory removed, reads and writes
// of it fail with ErrNoSuchFamily, and neither a reopen nor a later
// AddFamily of the same name brings any of its data back (only a Scanner
// opened before keeps what it saw). ModifyFamily's VERSIONS, MIN_VERSIONS
// and TTL apply to reads at once; its block options (BLOCKSIZE,
// DATA_BLOCK_ENCODING, COMPRESSION, BLOOMFILTER, IN_MEMORY) to the store
// files written from then on. Each change is in .regioninfo, written
// atomically, before the call returns. Options.DropFamilies opens a region
// with exactly the families given, deleting the others. RollWAL starts a
// new WAL segment.
//
// # Splits and merges
//
// A region's owner (regionsrv) decides when it splits.
// SplitPoint returns HBase's best split row (the mid-key row of the largest
// file of the largest store). CreateReferences writes, for a closed parent,
// a new region directory of HBase Reference files: a daughter that reads
// the parent's files limited to the rows before or after the split row, or
// a merged region that reads several parents whole. Nothing is copied. Such
// a region opens with Open, serves at once, and compacts its references
// away in the background (HasReferences says when it is done; ReferencesTo
// tells, on disk, whether a parent's files are still needed). Close
// flushes once writes have stopped, so a closed region's files hold every
// write it acknowledged. Options.StoreFilesChanged tells the owner after
// each flush and compaction, to check its split policy.
//
// # Checkpoints
//
// Checkpoint(dir) writes a consistent, openable copy of the region into a
// new directory, as Pebble's Checkpoint does: it flushes the memstores (so
// the copy holds every write acknowledged before the call, and of the
// writes made during it each wholly or not at all) and hard-links the
// store files with the region's .regioninfo. Open(dir, Options{}) opens the
// copy as a region of its own; writes to either never reach the other.
// Store files are never changed once written, so the copy costs no space
// until the region's compactions remove their own names of the files it
// shares. dir must not exist and must be on the region's filesystem; a
// crash during the call leaves either the whole checkpoint or none.
//
//	if err := r.Checkpoint("/backups/region-2026-05-01"); err != nil { ... }
//	c, err := region.Open("/backups/region-2026-05-01", region.Options{})
//
// LinkStoreFiles is the step a checkpoint is made of, for callers that
// keep the list of files themselves (the server's table snapshots):
// it links the store files of every family into a directory, flushing first
// if asked, and returns them. LinkClosedStoreFiles does the same for a
// region that is not open; IsStoreFileName tells store files from other
// entries of a family's directory.
//
// # Bulk load
//
// BulkLoadHFiles makes HFiles written elsewhere (by HBase's
// HFileOutputFormat2, by an HBase region server, by `regionsrv bulkload`'s
// splits, by hfile.Writer) store files of the region, as HBase's
// HRegion.bulkLoadHFiles does:
//
//	_, err := r.BulkLoadHFiles(ctx, []region.BulkLoadFile{
//		{Family: "f", Path: "/data/out/f/part-0"},
//		{Family: "g", Path: "/data/out/g/part-0"},
//	}, region.BulkLoadOptions{})
//
// Every file is checked before anything changes: it must be an HFile (v3,
// or v2 as HBase 1 writes them; its own compression, encoding, bloom filter
// and block size, whatever the family's), read to its end without a bad
// checksum, with cells sorted, all of the family it goes into, and rows
// inside [Options.StartKey, Options.EndKey) (ErrWrongRegion, HBase's "Bulk
// load file ... does not fit inside region ...": split the file at the
// boundary). The family must exist (ErrNoSuchFamily); a file that cannot be
// a store file is ErrInvalidHFile, a damaged one ErrCorruption.
//
// Then the memstores are flushed and the load takes a sequence id N above
// every write before it and below every write after it; each file moves
// (or, with BulkLoadOptions.CopyFiles or from another filesystem, is
// copied) into its store as <32 hex digits>_SeqId_N_, HBase's name. A
// bulk-loaded file's cells keep their timestamps, and read as written at N
// whatever sequence ids the file records (HBase's BULKLOAD handling): where
// a loaded cell and another share row, column, timestamp and type, the one
// written later wins, the load's over what was there and writes after the
// load over the load's; delete markers mask by timestamp as always.
// Compactions keep N in the cells they rewrite. Readers see the whole load,
// in every family, or none of it; writes wait only while the files are
// published. Stats().BulkLoadedFiles counts the files. A BULK_LOAD marker
// (a BulkLoadDescriptor, as HBase writes) goes into the WAL; replay skips
// it.
//
// A load commits by writing <dir>/.bulkload, which names every file's
// source and destination, before the first file moves; Open moves in what a
// crash left out, so after a crash the load is there whole or, if the crash
// came before that record, not at all with every source file where it was.
// A load that fails in an open region undoes itself and leaves its files
// where they were.
//
// # Errors
//
// Errors carry where they happened (region, file, offset) and keep their
// causes; test for them with errors.Is:
//
//   - ErrInvalidArgument: a request that cannot succeed as given (an empty
//     row, a negative timestamp, an Increment of a cell that is not 8 bytes,
//     an unsupported family option). Do not retry.
//   - ErrNoSuchFamily: a mutation or read names an unknown family.
//   - ErrFamilyExists: AddFamily of a family the region has.
//   - ErrWrongRegion, ErrInvalidHFile: a bulk-loaded file does not fit the
//     region, or cannot be a store file (see Bulk load).
//   - ErrCorruption: data on disk is damaged (a store file's checksum or
//     structure, .regioninfo). A read of a damaged block fails with it
//     rather than return what the block seems to hold.
//   - ErrRegionTooBusy, ErrRowLockTimeout: the region is overloaded; retry
//     later.
//   - ErrWALFailed: the WAL could not be written (a full disk, say); the
//     write was not applied, reads go on, writes resume when it works again.
//   - ErrClosed, ErrLocked: the region is closed, or open elsewhere.
//
// # Crashes
//
// Open replays the WAL above what the store files hold, so every write
// acknowledged under SyncWAL survives a killed process and every one under
// FSyncWAL survives power loss. A flush or compaction interrupted by a crash
// leaves its inputs in place; Open removes its leftovers. Nothing
// acknowledged is lost, and nothing deleted comes back.
//
// # Concurrency
//
// A Region is safe for concurrent use by any number of goroutines; writes to
// different rows proceed in parallel (row locks are sharded), writes to one
// row are serialized. A Scanner, a Result and a ScanResult are not safe for
// concurrent use. A Cache is.
//
// # On disk
//
// A region's directory holds HBase's formats, so an HBase cluster can bulk
// load its store files:
//
//	<dir>/.regioninfo        the families and their options (JSON)
//	<dir>/<family>/<hex>.hfile        published store files (HFile v3), 32 hex digits
//	<dir>/<family>/<hex>              the same named as HBase names them, with Options.HBaseFileNames
//	<dir>/<family>/<file>.<parent>    a Reference to the store file <file> of the
//	                                  parent region <parent> (a split's or merge's
//	                                  region, until it compacts)
//	<dir>/<family>/<hex>_SeqId_<N>_   bulk-loaded store files, loaded at sequence id N
//	<dir>/.bulkload          a bulk load committing (see Bulk load)
//	<dir>/.tmp/              flushes, compactions and bulk load copies in progress; emptied on open
//	<dir>/wal/               write-ahead log segments
//	<dir>/.lock              held while the region is open
//
// Logs go to Options.Logger (log/slog), slog.Default() if nil.
package region
