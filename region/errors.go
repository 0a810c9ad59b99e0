package region

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// ErrInvalidArgument marks errors for requests that can never succeed as
// given: an empty or oversized row, a negative timestamp, an Increment of a
// cell that is not 8 bytes, a family option out of range (HBase's
// DoNotRetryIOException and its argument subclasses). Retrying them is
// pointless.
var ErrInvalidArgument = errors.New("region: invalid argument")

// ErrCorruption marks errors caused by damaged data on disk: a store file
// whose checksums or structure do not hold, an unreadable .regioninfo, a WAL
// record that fails its checksum before the log's tail (HBase's
// CorruptHFileException). It is the same mark the hfile, wal and encoding
// packages use, so errors.Is(err, ErrCorruption) holds for theirs too.
var ErrCorruption = encoding.ErrCorruption

// invalidArgf returns a new error marked ErrInvalidArgument.
func invalidArgf(format string, args ...any) error {
	return errors.Mark(errors.Newf(format, args...), ErrInvalidArgument)
}
