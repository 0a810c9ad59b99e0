package region

import "github.com/regionkv/regionkv/wal"

// WALSegments describes the region's WAL segments, oldest first, the active
// one last (each region has a WAL of its own): what the server's status
// pages and /jmx report as its WAL files.
func (r *Region) WALSegments() []wal.SegmentInfo { return r.wal.Segments() }
