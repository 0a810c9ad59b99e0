//go:build !linux

package wal

import "github.com/regionkv/regionkv/internal/vfs"

// mapChunk is the allocation unit of a mapped segment (mapped_linux.go).
const mapChunk = 1 << 20

// mapSegment returns f: segments are mapped on Linux only, where fsync is
// known to write back what was stored through a mapping.
func mapSegment(f vfs.File, size int64) vfs.File { return f }
