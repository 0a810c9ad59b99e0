package wal

import (
	"strings"

	"github.com/cockroachdb/errors"
)

// Durability is HBase's Durability enum: how durable a write must be before
// it is acknowledged. The values are HBase's (they travel in
// MutationProto.durability) and must not change.
type Durability int32

const (
	// UseDefault defers to the table's durability. The region resolves it;
	// the WAL treats it as SyncWAL.
	UseDefault Durability = 0
	// SkipWAL: the write is not logged at all. The region does not call
	// Append; Sync returns at once. The write is lost on any crash before
	// its memstore is flushed.
	SkipWAL Durability = 1
	// AsyncWAL: the entry is appended to the WAL's buffer and Sync returns
	// without waiting; the flush goroutine writes it out within
	// Options.AsyncFlushInterval (or a Sync caller sooner, with its own
	// entries). A process crash can lose the last interval's writes.
	AsyncWAL Durability = 2
	// SyncWAL (the default): Sync returns once the entry has been written to
	// the operating system (file.Write returned), so it survives a crash of
	// the process, not of the machine. HBase's hflush.
	SyncWAL Durability = 3
	// FSyncWAL: Sync returns once the entry has been written and the
	// segment fsync'd, so it survives power loss. HBase's hsync.
	FSyncWAL Durability = 4
)

var durabilityNames = [...]string{"USE_DEFAULT", "SKIP_WAL", "ASYNC_WAL", "SYNC_WAL", "FSYNC_WAL"}

// String returns HBase's name for d.
func (d Durability) String() string {
	if d >= 0 && int(d) < len(durabilityNames) {
		return durabilityNames[d]
	}
	return "UNKNOWN_DURABILITY"
}

// ParseDurability parses HBase's name for a durability (case-insensitive),
// as found in table descriptors and configuration.
func ParseDurability(s string) (Durability, error) {
	for i, n := range durabilityNames {
		if strings.EqualFold(s, n) {
			return Durability(i), nil
		}
	}
	return 0, errors.Newf("wal: unknown durability %q", s)
}
