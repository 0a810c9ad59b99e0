package region

// syncWALForFlush makes every WAL entry appended so far durable before a
// flush writes store files, as HBase's flush does (HRegion syncs unflushed
// WAL changes first, HBASE-8208). The snapshot being flushed may hold
// SYNC_WAL and ASYNC_WAL writes that are not fsync'd: without this, a power
// loss after one family's file was published but before the next one's (or
// after a flush that failed half way) leaves the first family with writes
// that the other, replaying the WAL, lost: a batch over both families half
// applied. Found by TestPowerLoss/SYNC_WAL.
//
// A broken WAL is reset instead (Reset cuts the failed entries, none of
// them in a memstore, and fsyncs what is left). If the WAL fails, the flush
// goes on all the same: its fsync'd store files are then the one durable
// copy of the snapshot that can be made, and the flush reports the WAL's
// error when it rolls the WAL (rollWAL).
func (r *Region) syncWALForFlush() {
	if !r.walBroken.Load() {
		if r.wal.SyncAll() == nil {
			return
		}
		r.noteWALError()
		if !r.walBroken.Load() {
			return
		}
	}
	if err := r.resetWAL(); err != nil {
		r.log.Warn("region: flushing with a WAL that cannot be synced", "region", r.dir, "err", err)
	}
}
