//go:build !linux

package hfile

import "os"

// MapFile returns f: store files are mapped on Linux only (see
// mapped_linux.go).
func MapFile(f *os.File, size int64) ReaderAtCloser { return f }
