package region

import (
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/scanner"
	"github.com/regionkv/regionkv/wal"
)

// FS is the filesystem seam a region reads and writes its files through
// (Options.FS): Create, Open, OpenDir, Remove, Rename, Link, Truncate,
// List, MkdirAll and Stat, with files that append, read at offsets, sync and
// stat. Its methods' contracts are those of the operating system's.
type FS = vfs.FS

// File is an open file of an FS.
type File = vfs.File

// DefaultFS is the operating system's filesystem.
var DefaultFS FS = vfs.Default

// Durability is HBase's Durability: how far a mutation's WAL entry gets
// before the call returns. The zero value, UseDefault, means the region's
// Options.Durability (SYNC_WAL unless set).
type Durability = wal.Durability

// The durability levels, weakest first after UseDefault.
const (
	UseDefault = wal.UseDefault // the region's default
	SkipWAL    = wal.SkipWAL    // not logged: lost in a crash before the next flush
	AsyncWAL   = wal.AsyncWAL   // logged soon after the call returns
	SyncWAL    = wal.SyncWAL    // written to the operating system: survives a killed process
	FSyncWAL   = wal.FSyncWAL   // fsync'd (group commit): survives power loss
)

// TimeRange is HBase's TimeRange, [Min, Max) in milliseconds, for Get,
// Scan and CheckAndMutate. The zero value means every timestamp.
type TimeRange = scanner.TimeRange

// AllTime covers every timestamp.
var AllTime = scanner.AllTime
