//go:build !unix

package region

import "github.com/regionkv/regionkv/internal/vfs"

// sameDevice reports whether a rename can move the file at path into dir.
// Without a device number to compare, a bulk load copies.
func sameDevice(fs vfs.FS, path, dir string) bool { return false }
