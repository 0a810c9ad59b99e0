// Package vfs is the filesystem seam: every file the region server reads or
// writes goes through an FS, so that tests can substitute one that counts,
// delays or fails operations (fault injection, errorfs) or that forgets
// whatever was not synced (power-loss simulation, crashfs). Default is the
// operating system's filesystem.
//
// The interface is deliberately small: what the WAL, the flush path and
// snapshots (hard links) need, nothing more. Paths are operating system
// paths (use path/filepath to build them).
//
// An FS is safe for concurrent use. A File is safe for concurrent ReadAt
// calls; Write, Sync and Close must not be called concurrently with each
// other (the WAL has one goroutine that owns its active file).
package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"
)

// File is an open file.
type File interface {
	io.Writer
	io.ReaderAt
	io.Closer
	// Sync makes everything written so far durable (fsync).
	Sync() error
	// Stat returns the file's metadata, among it its size.
	Stat() (os.FileInfo, error)
}

// FS is a filesystem.
type FS interface {
	// Create creates the named file for writing, truncating it if it exists.
	// Writes append: the file is written sequentially from offset 0.
	Create(name string) (File, error)
	// Open opens the named file for reading.
	Open(name string) (File, error)
	// OpenDir opens the named directory, only to Sync it (see SyncDir).
	OpenDir(name string) (File, error)
	// Remove removes the named file or empty directory.
	Remove(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// Link makes newname a hard link to the file oldname: a second name
	// of the same file, which lives until its last name is removed. It
	// fails if newname exists, and for directories. Like Create, it
	// changes newname's directory, which must be synced (SyncDir) for the
	// link to survive a power loss.
	Link(oldname, newname string) error
	// Truncate changes the named file's size. It does not sync.
	Truncate(name string, size int64) error
	// List returns the names of the entries of dir (not full paths), sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// Stat returns the named file's or directory's metadata. A missing
	// file's error satisfies errors.Is(err, os.ErrNotExist).
	Stat(name string) (os.FileInfo, error)
}

// ReadFile returns the whole content of the named file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "vfs: read %s", name)
	}
	return b, nil
}

// WriteFile creates (or truncates) the named file, writes data to it and
// syncs it. It does not sync the directory.
func WriteFile(fs FS, name string, data []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "vfs: write %s", name)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "vfs: sync %s", name)
	}
	return f.Close()
}

// WriteFileAtomic replaces the named file durably: it writes and syncs
// name+".tmp", renames it over name and syncs the directory, so a crash
// leaves either the old content or the new.
func WriteFileAtomic(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := WriteFile(fs, tmp, data); err != nil {
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		return errors.Wrapf(err, "vfs: publish %s", name)
	}
	return SyncDir(fs, filepath.Dir(name))
}

// RemoveAll removes path and, if it is a directory, everything in it. A
// missing path is not an error.
func RemoveAll(fs FS, path string) error {
	st, err := fs.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if st.IsDir() {
		names, err := fs.List(path)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := RemoveAll(fs, filepath.Join(path, n)); err != nil {
				return err
			}
		}
	}
	if err := fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// SyncDir makes dir's entries (files created, renamed or removed in it)
// durable, by opening the directory and syncing it.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return errors.Wrapf(err, "vfs: sync directory %s", dir)
	}
	return d.Close()
}

// MkdirAllSync is MkdirAll made durable: a new directory's entry lives in
// its parent, so after making dir (and any missing parents) it syncs the
// parent of each directory it made, top down. Without that a power loss can
// undo the mkdir and take everything later made and synced inside with it
// (found by region's power-loss test: a new region's store and WAL
// directories). Directories that existed cost a Stat each and no sync.
func MkdirAllSync(fs FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	var made []string // deepest first
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fs.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := SyncDir(fs, filepath.Dir(made[i])); err != nil {
			return err
		}
	}
	return nil
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

var _ FS = osFS{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, errors.WithStack(err)
	}
	return f, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.WithStack(err)
	}
	return f, nil
}

func (osFS) OpenDir(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.WithStack(err)
	}
	return f, nil
}

func (osFS) Remove(name string) error { return errors.WithStack(os.Remove(name)) }

func (osFS) Rename(oldname, newname string) error {
	return errors.WithStack(os.Rename(oldname, newname))
}

func (osFS) Link(oldname, newname string) error {
	return errors.WithStack(os.Link(oldname, newname))
}

func (osFS) Truncate(name string, size int64) error {
	return errors.WithStack(os.Truncate(name, size))
}

func (osFS) List(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, errors.WithStack(err)
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return nil, errors.WithStack(err)
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) Stat(name string) (os.FileInfo, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, errors.WithStack(err)
	}
	return st, nil
}

func (osFS) MkdirAll(dir string, perm os.FileMode) error {
	return errors.WithStack(os.MkdirAll(filepath.Clean(dir), perm))
}
