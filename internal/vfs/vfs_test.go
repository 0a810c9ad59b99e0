package vfs

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefault(t *testing.T) {
	fs := Default
	dir := filepath.Join(t.TempDir(), "a", "b")
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	for _, name := range []string{"c", "a", "b"} {
		f, err := fs.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		_, err = f.Write([]byte("hello " + name))
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	}
	require.NoError(t, SyncDir(fs, dir))
	names, err := fs.List(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, names)

	require.NoError(t, fs.Truncate(filepath.Join(dir, "a"), 5))
	require.NoError(t, fs.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "d")))
	f, err := fs.Open(filepath.Join(dir, "d"))
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(5), st.Size())
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 1)
	require.Equal(t, io.EOF, err)
	require.Equal(t, "ello", string(buf[:n]))
	require.NoError(t, f.Close())

	// A link is a second name of the same file: it outlives the first.
	require.NoError(t, fs.Link(filepath.Join(dir, "d"), filepath.Join(dir, "e")))
	require.Error(t, fs.Link(filepath.Join(dir, "d"), filepath.Join(dir, "e")), "the new name exists")
	require.NoError(t, fs.Remove(filepath.Join(dir, "d")))
	_, err = fs.Open(filepath.Join(dir, "d"))
	require.ErrorIs(t, err, os.ErrNotExist)
	b, err := ReadFile(fs, filepath.Join(dir, "e"))
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
}

func TestHelpers(t *testing.T) {
	fs := Default
	root := filepath.Join(t.TempDir(), "r")
	require.NoError(t, fs.MkdirAll(filepath.Join(root, "x", "y"), 0o755))
	require.NoError(t, WriteFile(fs, filepath.Join(root, "a"), []byte("alpha")))
	require.NoError(t, WriteFile(fs, filepath.Join(root, "x", "y", "b"), nil))
	b, err := ReadFile(fs, filepath.Join(root, "a"))
	require.NoError(t, err)
	require.Equal(t, "alpha", string(b))
	b, err = ReadFile(fs, filepath.Join(root, "x", "y", "b"))
	require.NoError(t, err)
	require.Empty(t, b)
	st, err := fs.Stat(filepath.Join(root, "x"))
	require.NoError(t, err)
	require.True(t, st.IsDir())
	_, err = fs.Stat(filepath.Join(root, "nope"))
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, RemoveAll(fs, root))
	_, err = fs.Stat(root)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, RemoveAll(fs, root), "a missing path is not an error")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "desc")
	require.NoError(t, WriteFileAtomic(Default, p, []byte("one")))
	require.NoError(t, WriteFileAtomic(Default, p, []byte("two")))
	b, err := ReadFile(Default, p)
	require.NoError(t, err)
	require.Equal(t, "two", string(b))
	names, err := Default.List(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"desc"}, names, "no temporary file left behind")
}
