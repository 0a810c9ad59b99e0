package encoding

import "github.com/cockroachdb/errors"

// ErrCorruption marks errors caused by bytes that do not decode: a bad
// checksum, an impossible length, a truncated block. It survives wrapping;
// test for it with IsCorruption.
var ErrCorruption = errors.New("regionkv: corruption")

// CorruptionErrorf formats an error and marks it as corruption.
func CorruptionErrorf(format string, args ...interface{}) error {
	return errors.Mark(errors.Newf(format, args...), ErrCorruption)
}

// MarkCorruption marks err as corruption, keeping its message and chain.
func MarkCorruption(err error) error {
	if err == nil {
		return nil
	}
	return errors.Mark(err, ErrCorruption)
}

// IsCorruption reports whether err, or anything it wraps, is marked as corruption.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }
