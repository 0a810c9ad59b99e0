// Package wal is the region's write-ahead log: HBase's WAL (FSHLog) with
// its WALKeyImpl (Key) and WALEdit (Edit). A Writer appends entries to
// segment files in a directory, batching concurrent writers into one write
// and one fsync (group commit), and honours HBase's durability levels;
// Replay (or a Reader) reads the entries back on region open, telling a tail
// torn by a crash from corruption.
//
// # Usage
//
// The region owns one WAL directory and one sequence space (the write
// numbers of its mvcc.Control, mv below). On open it replays, then opens the
// writer:
//
//	stats, err := wal.Replay(dir, flushedSeq, func(k *wal.Key, e *wal.Edit) error {
//		return memstore.Add(e.Cells) // each cell's SeqNum is k.SeqNum
//	})
//	mv.AdvanceTo(max(flushedSeq, stats.MaxSeq))
//	w, err := wal.Open(dir, wal.Options{})
//
// Each write encodes its entry first, outside every lock, with the sequence
// id it expects; then takes its sequence id and its place in the log in one
// step, by appending inside mv.BeginWith; then waits for the durability it
// needs outside every lock:
//
//	key.SeqNum = mv.WritePoint() + 1 // most likely the id it gets
//	if err := entry.Prepare(&key, &edit); err != nil { // a wal.PreparedEntry
//		return err
//	}
//	var txid uint64
//	var err error
//	we := mv.BeginWith(func(seq uint64) {
//		txid, err = w.AppendPrepared(&entry, seq) // copies into a buffer; never waits for I/O
//	})
//	if err == nil {
//		err = w.Sync(txid, durability) // group commit
//	}
//	if err != nil {
//		mv.Complete(we) // not acknowledged; see Writer.Sync for what that means
//		return err
//	}
//	memstore.Add(cells stamped with we.WriteNumber())
//	mv.CompleteAndWait(we)
//
// Because BeginWith hands out write numbers and runs the action under one
// lock, sequence ids increase strictly along the log, and a replay that
// stops anywhere has applied a prefix of the region's writes. (Append, which
// encodes under the writer's lock, works in place of Prepare and
// AppendPrepared, at the cost of a longer critical section.) SkipWAL writes
// take mv.Begin and do not call Append. After a flush has made everything
// up to flushedSeq durable in store files, the region calls
// w.Prune(flushedSeq); it may call w.Roll() at any time.
//
// # Concurrency
//
// All Writer methods are safe for concurrent use. Append holds the writer's
// mutex only to copy the entry into the pending buffer. Sync commits in
// groups, leader-based: a caller that finds no I/O in progress leads a
// round, taking the whole pending buffer, writing it with one write, and
// fsyncing once if any waiting caller asked for FSyncWAL; then it wakes
// every waiting caller. Callers arriving meanwhile wait; when the round ends
// those it did not cover wake, and the first of them leads the next round
// for all of them. So with N writers waiting there is one write and at most
// one fsync per round, not per writer, and a lone writer writes its own
// entry without any goroutine switch (with a dedicated syncer goroutine, the
// hand-off to it and back cost more than the write on two processors). A
// flush goroutine does the I/O no caller waits for: AsyncWAL entries wait in
// the buffer for the next round anyone leads, or for
// Options.AsyncFlushInterval, when it writes them; it serves Roll and Close.
// At most one goroutine does I/O at a time. A Reader is not safe for
// concurrent use.
//
// On a mapped segment (Linux) a copy into the mapping is the write, so
// AppendPrepared frames its record straight into the segment whenever the
// file is free and nothing appended before is unwritten: the entry is
// written when AppendPrepared returns, and a SyncWAL Sync of it returns
// without taking the mutex. Rounds then carry only what cannot go that way
// (records re-framed for a longer sequence id, records that would cross
// into the next mapped chunk, and everything while a record is pending),
// and they still hand full segments to the flush goroutine to roll. Every
// eighth of a roll, the flush goroutine starts the writeback of what is
// written (sync_file_range, not an fsync) with the segment free for
// appends, so that the roll's fsync finds little left.
//
// # Failure
//
// A failed write, fsync or roll is returned to every caller waiting on it
// and to every later call: the writer is broken, never acknowledging an
// entry it could not make durable, and no later fsync is taken to cover
// bytes an earlier one failed on. Writer.Reset revives it once the cause is
// gone: it truncates the active segment to its last successful write (so
// the failed entries, none of them acknowledged, are not replayed) and
// starts a new segment; Writer.Err tells whether it is broken. Without a
// Reset, a failed entry's outcome is unknown (closing and reopening the WAL
// may replay it), as in HBase, which rolls the WAL on a failed sync and
// aborts the region server when it cannot.
//
// # Segment files
//
// Segments are named by a 19-digit zero-padded segment number and ".wal"
// (0000000000000000001.wal, ...), numbered from 1 in the order they were
// created, so a sorted directory listing is log order. Open always starts a
// new segment; a roll starts the next one after fsyncing and closing the
// active one, so every segment but the last is complete and durable. A
// segment is:
//
//	+-----------+--------------+-------------------------+---------+---------+-----
//	| "RKWL" 4B | version 4B=1 | record: WALHeader proto | record: | record: | ...
//	|           |  big-endian  |                         | entry   | entry   |
//	+-----------+--------------+-------------------------+---------+---------+-----
//
// There is no trailer: the end of the file is the end of the log. The
// WALHeader carries HBase's field numbers: has_compression (1) = false,
// has_tag_compression (3) = false, writer_cls_name (4) = WriterClassName,
// cell_codec_cls_name (5) = CellCodecClassName, has_value_compression (6) =
// false. A reader refuses compression and any other codec.
//
// Each record is framed by internal/record:
//
//	+----------+----------+--------- ... ---------+
//	| len (4B) | crc (4B) | payload (len bytes)   |
//	+----------+----------+--------- ... ---------+
//
// len is big-endian, 1 to 256 MiB (zero never frames a record, so zeroed
// bytes never parse as one). crc is CRC-32C over the 4 len bytes and the
// payload, masked as LevelDB does (rotate right 15, add 0xa282ead8).
//
// An entry's payload is HBase's WAL entry (HBase's own PWAL files have the
// same entries, unframed):
//
//	varint length | WALKey protobuf | cell × following_kv_count
//
// WALKey uses WAL.proto's field numbers: encoded_region_name (1),
// table_name (2), log_sequence_number (3), write_time (4, ms),
// following_kv_count (7), orig_sequence_number (11, only if non-zero);
// other fields are skipped on read. Each cell is in KeyValueCodecWithTags
// form (encoding.AppendCellBlock):
//
//	totalLen (4B) | keyLen (4B) | valueLen (4B) | key | value | [tagsLen (2B) | tags]
//
// with no sequence id: log_sequence_number applies to every cell.
//
// # Torn tails and corruption
//
// A record is bad if the file ends inside it, its length is 0 or too large,
// its checksum does not match, or (for the header) the magic is wrong. What
// a bad record means depends on where it is:
//
//   - In the last segment, it is a torn tail if no intact entry record
//     starts anywhere after it in the file (every later byte offset is
//     tried: a record whose length fits, whose checksum matches and whose
//     payload decodes as an entry). A crash leaves exactly that: a record
//     cut short, or a zeroed or garbage tail where the filesystem had
//     extended the file but not written the data. Replay stops there
//     without an error and reports TornTail, the offset and the bytes
//     dropped. Nothing acknowledged can be lost this way: an acknowledged
//     SyncWAL entry was written whole before the crash and an acknowledged
//     FSyncWAL entry was also fsync'd.
//   - If an intact entry follows it, it is corruption: bytes that had been
//     written were damaged later. So is any bad record in a segment that is
//     not the last (it was fsync'd before the next segment was created),
//     and any record whose frame is intact but whose payload does not
//     decode (it was written that way). These are errors marked as
//     corruption (encoding.IsCorruption) that name the file and the offset
//     of the bad record; replay does not skip them.
//
// The limits of the rule: damage to the last record of the last segment
// cannot be told from a tear and is dropped as one; and after power loss, a
// filesystem that persisted a later block of unsynced appends but not an
// earlier one produces "bad record, then intact record" in bytes that were
// never fsync'd, which reads as corruption although it is a torn tail
// (Pebble records the synced offset in each record to tell these apart; we
// do not, yet). A cell value that happens to contain a whole framed entry
// could likewise make a torn tail look like corruption.
//
// Open repairs a torn last segment before it starts a new one (truncating it
// to its last intact record, or removing it if its header is torn), so that
// the torn segment does not become a non-last segment with a bad record.
package wal
