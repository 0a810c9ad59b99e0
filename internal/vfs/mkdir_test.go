package vfs_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/stretchr/testify/require"
)

// TestMkdirAllSync: the directories MkdirAllSync makes survive a power loss
// (each synced into its parent); those MkdirAll makes may not.
func TestMkdirAllSync(t *testing.T) {
	exists := func(fs vfs.FS, dir string) bool {
		st, err := fs.Stat(dir)
		return err == nil && st.IsDir()
	}
	fs := crashfs.New()
	require.NoError(t, fs.MkdirAll("/base", 0o755))
	fs.SyncAll()
	require.NoError(t, fs.MkdirAll("/base/plain/x", 0o755))
	require.NoError(t, vfs.MkdirAllSync(fs, "/base/durable/x", 0o755))
	require.NoError(t, vfs.MkdirAllSync(fs, "/base/durable/x", 0o755), "existing directories are fine")
	lost := 0
	for i := range uint64(100) {
		img := fs.CrashClone(rand.New(rand.NewPCG(i, 0)))
		require.True(t, exists(img, "/base/durable/x"), "image %d", i)
		if !exists(img, "/base/plain/x") {
			lost++
		}
	}
	require.Positive(t, lost, "plain MkdirAll is undone by some power losses")

	// On the OS filesystem.
	dir := filepath.Join(t.TempDir(), "a", "b")
	require.NoError(t, vfs.MkdirAllSync(vfs.Default, dir, 0o755))
	require.True(t, exists(vfs.Default, dir))
	require.Error(t, vfs.MkdirAllSync(vfs.Default, filepath.Join(dir, "\x00bad"), 0o755))
}
