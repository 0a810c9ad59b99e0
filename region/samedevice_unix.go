//go:build unix

package region

import (
	"path/filepath"
	"syscall"

	"github.com/regionkv/regionkv/internal/vfs"
)

// sameDevice reports whether a rename can move the file at path into dir:
// both are on one filesystem (device). A filesystem whose Stat does not
// say (an in-memory one) is one namespace.
func sameDevice(fs vfs.FS, path, dir string) bool {
	a, err := fs.Stat(filepath.Dir(path))
	if err != nil {
		return false
	}
	b, err := fs.Stat(dir)
	if err != nil {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	if !okA || !okB {
		return !okA && !okB
	}
	return sa.Dev == sb.Dev
}
