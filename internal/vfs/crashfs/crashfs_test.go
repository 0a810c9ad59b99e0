package crashfs

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/internal/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// images is how many crash images each model test draws: enough that every
// outcome of a coin or two shows up.
const images = 200

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 42)) }

func writeFile(t *testing.T, fs vfs.FS, name, data string, sync bool) vfs.File {
	t.Helper()
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	return f
}

// content returns the file's content in fs, or "<none>" if it does not
// exist.
func content(t *testing.T, fs vfs.FS, name string) string {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	require.NoError(t, err)
	return string(b)
}

// outcomes crashes fs images times and counts what f reports of each image.
func outcomes(t *testing.T, fs *FS, f func(img *FS) string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i := range images {
		seen[f(fs.CrashClone(rng(uint64(i))))]++
	}
	return seen
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestBasics runs the operations of vfs.FS and checks the live view, as
// vfs's own test does for the OS filesystem.
func TestBasics(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/a/b", 0o755))
	for _, name := range []string{"c", "a", "b"} {
		f := writeFile(t, fs, "/a/b/"+name, "hello "+name, true)
		require.NoError(t, f.Close())
	}
	require.NoError(t, vfs.SyncDir(fs, "/a/b"))
	names, err := fs.List("/a/b")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, names)

	require.NoError(t, fs.Truncate("/a/b/a", 5))
	require.NoError(t, fs.Rename("/a/b/a", "/a/b/d"))
	f, err := fs.Open("/a/b/d")
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(5), st.Size())
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 1)
	require.Equal(t, io.EOF, err)
	require.Equal(t, "ello", string(buf[:n]))
	_, err = f.Write([]byte("x"))
	require.Error(t, err, "a file opened with Open is read-only")
	require.NoError(t, f.Close())
	_, err = f.ReadAt(buf, 0)
	require.ErrorIs(t, err, os.ErrClosed)

	_, err = fs.Stat("/a/b/a")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = fs.Open("/a/nope")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorIs(t, fs.Remove("/a/nope"), os.ErrNotExist)
	require.ErrorIs(t, fs.Remove("/a"), syscall.ENOTEMPTY)
	st, err = fs.Stat("/a/b")
	require.NoError(t, err)
	require.True(t, st.IsDir())

	// An unlinked file stays readable through a handle opened before.
	g, err := fs.Open("/a/b/c")
	require.NoError(t, err)
	require.NoError(t, fs.Remove("/a/b/c"))
	n, err = g.ReadAt(buf[:7], 0)
	require.NoError(t, err)
	require.Equal(t, "hello c", string(buf[:n]))
	require.NoError(t, g.Close())

	// Create truncates an existing file.
	h := writeFile(t, fs, "/a/b/b", "new", false)
	require.NoError(t, h.Close())
	require.Equal(t, "new", content(t, fs, "/a/b/b"))

	require.NoError(t, vfs.RemoveAll(fs, "/a"))
	names, err = fs.List("/")
	require.NoError(t, err)
	require.Empty(t, names)
}

// TestSyncedDataSurvives: a file whose content and directory entry were
// synced is in every image, whole, whatever happened after to other files.
func TestSyncedDataSurvives(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/d", 0o755))
	fs.SyncAll()
	f := writeFile(t, fs, "/d/a", "durable", true)
	require.NoError(t, vfs.SyncDir(fs, "/d"))
	// Unsynced noise around it.
	_, err := f.Write([]byte("-more"))
	require.NoError(t, err)
	g := writeFile(t, fs, "/d/b", "unsynced", false)
	require.NoError(t, fs.Rename("/d/b", "/d/c"))
	seen := outcomes(t, fs, func(img *FS) string {
		c := content(t, img, "/d/a")
		require.True(t, strings.HasPrefix(c, "durable"), "synced content lost: %q", c)
		return c
	})
	require.Greater(t, seen["durable"], 0)
	require.Greater(t, seen["durable-more"], 0)
	require.NoError(t, f.Close())
	require.NoError(t, g.Close())
}

// TestUnsyncedWrites: of what was written after the last sync, an image
// keeps a prefix, sometimes with a zeroed tail; never anything else, and
// never less than what was synced.
func TestUnsyncedWrites(t *testing.T) {
	fs := New()
	f := writeFile(t, fs, "/f", "0123456789", true)
	fs.SyncAll()
	for _, w := range []string{"abcdefghij", "ABCDEFGHIJ"} {
		_, err := f.Write([]byte(w))
		require.NoError(t, err)
	}
	all := "0123456789abcdefghijABCDEFGHIJ"
	zeroed, partial := 0, 0
	seen := outcomes(t, fs, func(img *FS) string {
		c := content(t, img, "/f")
		require.True(t, strings.HasPrefix(c, "0123456789"), "synced bytes lost: %q", c)
		require.LessOrEqual(t, len(c), len(all))
		data := strings.TrimRight(c, "\x00")
		if len(data) < len(c) {
			zeroed++
		}
		require.True(t, strings.HasPrefix(all, data), "not a prefix of what was written: %q", c)
		if len(c) != 10 && len(c) != 20 && len(c) != 30 {
			partial++
		}
		return c
	})
	require.Greater(t, seen["0123456789"], 0, "the unsynced writes are sometimes all lost")
	require.Greater(t, seen[all], 0, "and sometimes all kept")
	require.Greater(t, zeroed, 0, "a zeroed tail shows up")
	require.Greater(t, partial, 0, "a write torn in the middle shows up")

	// Once synced, all of it is in every image.
	require.NoError(t, f.Sync())
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/f") })
	require.Equal(t, map[string]int{all: images}, seen)
}

// TestDirectoryEntriesNeedDirSync: a new file's entry survives only once its
// directory is synced; syncing the file is not enough.
func TestDirectoryEntriesNeedDirSync(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/d", 0o755))
	fs.SyncAll()
	f := writeFile(t, fs, "/d/x", "data", true)
	seen := outcomes(t, fs, func(img *FS) string { return content(t, img, "/d/x") })
	require.ElementsMatch(t, []string{"<none>", "data"}, keys(seen))

	require.NoError(t, vfs.SyncDir(fs, "/d"))
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/d/x") })
	require.Equal(t, map[string]int{"data": images}, seen)
	require.NoError(t, f.Close())

	// A removal is undone the same way.
	require.NoError(t, fs.Remove("/d/x"))
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/d/x") })
	require.ElementsMatch(t, []string{"<none>", "data"}, keys(seen))
	require.NoError(t, vfs.SyncDir(fs, "/d"))
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/d/x") })
	require.Equal(t, map[string]int{"<none>": images}, seen)
}

// TestNewDirectories: entries of a directory whose own creation was not made
// durable (its parent not synced) are lost with it, even if the directory
// itself was synced.
func TestNewDirectories(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/p", 0o755))
	fs.SyncAll()
	require.NoError(t, fs.MkdirAll("/p/q/r", 0o755))
	f := writeFile(t, fs, "/p/q/r/x", "data", true)
	require.NoError(t, vfs.SyncDir(fs, "/p/q/r"))
	seen := outcomes(t, fs, func(img *FS) string { return content(t, img, "/p/q/r/x") })
	require.ElementsMatch(t, []string{"<none>", "data"}, keys(seen))
	require.Less(t, seen["data"], images*2/5, "needs both mkdirs, each kept half the time")

	require.NoError(t, vfs.SyncDir(fs, "/p/q"))
	require.NoError(t, vfs.SyncDir(fs, "/p"))
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/p/q/r/x") })
	require.Equal(t, map[string]int{"data": images}, seen)
	require.NoError(t, f.Close())
}

// TestRenames: a rename is atomic in every image (the file has one name,
// old or new, never both or none); within a directory it is durable once the
// directory is synced, across directories once both are.
func TestRenames(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/a", 0o755))
	require.NoError(t, fs.MkdirAll("/b", 0o755))
	f := writeFile(t, fs, "/a/x", "data", true)
	require.NoError(t, f.Close())
	fs.SyncAll()
	where := func(img *FS) string {
		var at []string
		for _, p := range []string{"/a/x", "/a/y", "/b/x"} {
			if c := content(t, img, p); c != "<none>" {
				require.Equal(t, "data", c)
				at = append(at, p)
			}
		}
		return strings.Join(at, ",")
	}

	require.NoError(t, fs.Rename("/a/x", "/a/y"))
	require.ElementsMatch(t, []string{"/a/x", "/a/y"}, keys(outcomes(t, fs, where)))
	require.NoError(t, vfs.SyncDir(fs, "/a"))
	require.Equal(t, map[string]int{"/a/y": images}, outcomes(t, fs, where))

	require.NoError(t, fs.Rename("/a/y", "/b/x"))
	require.ElementsMatch(t, []string{"/a/y", "/b/x"}, keys(outcomes(t, fs, where)))
	require.NoError(t, vfs.SyncDir(fs, "/b"))
	require.ElementsMatch(t, []string{"/a/y", "/b/x"}, keys(outcomes(t, fs, where)),
		"syncing the target directory alone does not make a rename across directories durable")
	require.NoError(t, vfs.SyncDir(fs, "/a"))
	require.Equal(t, map[string]int{"/b/x": images}, outcomes(t, fs, where))
}

// TestRenameOverAndDependencies: a rename replacing a file is atomic; an
// operation that depends on a lost one is lost (a create whose name was
// freed by a lost remove, a rename of a file whose create was lost).
func TestRenameOverAndDependencies(t *testing.T) {
	fs := New()
	f := writeFile(t, fs, "/cur", "old", true)
	require.NoError(t, f.Close())
	fs.SyncAll()
	g := writeFile(t, fs, "/cur.tmp", "new", true)
	require.NoError(t, g.Close())
	require.NoError(t, fs.Rename("/cur.tmp", "/cur"))
	seen := outcomes(t, fs, func(img *FS) string { return content(t, img, "/cur") + " " + content(t, img, "/cur.tmp") })
	// The rename needs the create: "new <none>" comes from both kept,
	// "old new" from the create alone, "old <none>" from neither.
	require.ElementsMatch(t, []string{"new <none>", "old new", "old <none>"}, keys(seen))
	require.NoError(t, vfs.SyncDir(fs, "/"))
	require.Equal(t, map[string]int{"new <none>": images}, outcomes(t, fs, func(img *FS) string {
		return content(t, img, "/cur") + " " + content(t, img, "/cur.tmp")
	}))

	// remove then create of the same name: the create needs the remove.
	require.NoError(t, fs.Remove("/cur"))
	h := writeFile(t, fs, "/cur", "newer", true)
	require.NoError(t, h.Close())
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/cur") })
	require.ElementsMatch(t, []string{"new", "<none>", "newer"}, keys(seen))
}

// TestTruncate: a truncation is durable once the file is synced; before, an
// image has the old size or the new.
func TestTruncate(t *testing.T) {
	fs := New()
	f := writeFile(t, fs, "/f", "0123456789", true)
	require.NoError(t, f.Close())
	fs.SyncAll()
	require.NoError(t, fs.Truncate("/f", 4))
	seen := outcomes(t, fs, func(img *FS) string { return content(t, img, "/f") })
	require.ElementsMatch(t, []string{"0123456789", "0123"}, keys(seen))
	g, err := fs.Open("/f")
	require.NoError(t, err)
	require.NoError(t, g.Sync(), "a file opened for reading can be synced")
	require.NoError(t, g.Close())
	require.Equal(t, map[string]int{"0123": images}, outcomes(t, fs, func(img *FS) string { return content(t, img, "/f") }))

	// A truncation then writes: the old bytes past the cut are never mixed
	// with the new ones.
	require.NoError(t, fs.Truncate("/f", 2))
	h, err := fs.Create("/g")
	require.NoError(t, err)
	require.NoError(t, h.Close())
	seen = outcomes(t, fs, func(img *FS) string { return content(t, img, "/f") })
	require.ElementsMatch(t, []string{"0123", "01"}, keys(seen))
}

// TestImagesAreIndependent: an image is a filesystem of its own, all
// durable: changing it changes neither the original nor later images, and it
// crashes like any FS.
func TestImagesAreIndependent(t *testing.T) {
	fs := New()
	f := writeFile(t, fs, "/f", "abc", true)
	fs.SyncAll()
	img := fs.CrashClone(rng(1))
	g, err := img.Create("/f")
	require.NoError(t, err)
	_, err = g.Write([]byte("xyz"))
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.Equal(t, "abc", content(t, fs, "/f"))
	_, err = f.Write([]byte("def"))
	require.NoError(t, err)
	require.Equal(t, "xyz", content(t, img, "/f"))
	// img's write was not synced: its own crash may drop it (Create
	// truncated the durable file, which is not durable either).
	seen := outcomes(t, img, func(i *FS) string { return content(t, i, "/f") })
	for k := range seen {
		require.Contains(t, []string{"abc", "", "x", "xy", "xyz", "\x00", "\x00\x00", "\x00\x00\x00", "x\x00", "x\x00\x00", "xy\x00"}, k)
	}
	require.NoError(t, f.Close())
}

// TestFailAt: the nth operation fails once, with EIO, without effect.
func TestFailAt(t *testing.T) {
	fs := New()
	f := writeFile(t, fs, "/f", "abc", true)
	fs.FailAt(2, errorfs.OpWrite)
	_, err := f.Write([]byte("1"))
	require.NoError(t, err)
	_, err = f.Write([]byte("2"))
	require.ErrorIs(t, err, syscall.EIO)
	require.True(t, errorfs.IsInjected(err))
	_, err = f.Write([]byte("3"))
	require.NoError(t, err)
	require.Equal(t, "abc13", content(t, fs, "/f"))
	n, at := fs.Injected()
	require.Equal(t, int64(1), n)
	require.Equal(t, "write /f", at)

	before := fs.Ops()
	fs.FailAt(1, errorfs.OpAll)
	_, err = fs.Stat("/f")
	require.ErrorIs(t, err, syscall.EIO)
	_, err = fs.Stat("/f")
	require.NoError(t, err)
	require.Equal(t, before+2, fs.Ops())
	require.NoError(t, f.Close())
}

// TestCrashAt: the power goes at the nth mutating operation: that one and
// every later one fail with ErrPowerOff (EIO), reads included, and the image
// is what the disk held; a write cut may survive in part.
func TestCrashAt(t *testing.T) {
	partial := false
	for seed := range uint64(50) {
		fs := New()
		f := writeFile(t, fs, "/wal", "head", true)
		fs.SyncAll()
		fs.CrashAt(3, Mutating, rng(seed))
		_, err := f.Write([]byte("one"))
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		select {
		case <-fs.Crashed():
			t.Fatal("crashed too early")
		default:
		}
		_, err = f.Write([]byte("two"))
		require.ErrorIs(t, err, ErrPowerOff)
		require.ErrorIs(t, err, syscall.EIO)
		<-fs.Crashed()
		require.Equal(t, "write /wal", fs.CrashedAt())
		_, err = fs.Stat("/wal")
		require.ErrorIs(t, err, ErrPowerOff)
		require.ErrorIs(t, f.Close(), ErrPowerOff)
		img := fs.Image()
		require.NotNil(t, img)
		c := content(t, img, "/wal")
		require.True(t, strings.HasPrefix(c, "headone"), "%q", c)
		tail := strings.TrimRight(c[7:], "\x00")
		require.True(t, strings.HasPrefix("two", tail), "%q", c)
		partial = partial || len(c) == 8 || len(c) == 9
	}
	require.True(t, partial, "a write cut in the middle leaves part of it")

	// Crash, Freeze.
	fs := New()
	writeFile(t, fs, "/a", "x", false)
	img := fs.Crash(rng(1))
	require.NotNil(t, img)
	require.ErrorIs(t, fs.MkdirAll("/b", 0o755), ErrPowerOff)
	require.NoError(t, img.MkdirAll("/b", 0o755))
	fs2 := New()
	fs2.Freeze()
	_, err := fs2.List("/")
	require.ErrorIs(t, err, ErrPowerOff)
	require.Nil(t, fs2.Image())
}

// TestRandomAgainstModel drives random operations on a few files and
// directories, syncing some, and checks every image against what must and
// may survive: each synced file whose path was made durable has at least
// its synced content; nothing appears that was never there.
func TestRandomAgainstModel(t *testing.T) {
	checked := 0
	for seed := range uint64(20) {
		r := rng(seed)
		fs := New()
		require.NoError(t, fs.MkdirAll("/d", 0o755))
		fs.SyncAll()
		// durable: files whose entry and content are durable, with that
		// content (a prefix of the live one; writes only append here).
		durable := map[string]string{}
		live := map[string]string{}
		synced := map[string]string{} // files whose live content is synced
		dirty := false                // a directory operation since the last dir sync
		names := []string{"/d/a", "/d/b", "/d/c"}
		for step := 0; step < 60; step++ {
			name := names[r.IntN(len(names))]
			switch r.IntN(5) {
			case 0: // create or append, maybe synced
				var f vfs.File
				var err error
				if _, ok := live[name]; ok {
					// Append through a fresh handle: Create would
					// truncate, so reopen by rewriting the whole.
					f, err = fs.Create(name)
					require.NoError(t, err)
					delete(durable, name) // the truncation is not durable
					delete(synced, name)
				} else {
					f, err = fs.Create(name)
					require.NoError(t, err)
					dirty = true
				}
				v := fmt.Sprintf("v%d-%d", step, r.IntN(1000))
				_, err = f.Write([]byte(v))
				require.NoError(t, err)
				live[name] = v
				if r.IntN(2) == 0 {
					require.NoError(t, f.Sync())
					synced[name] = v
					if !dirty {
						durable[name] = v
					}
				}
				require.NoError(t, f.Close())
			case 1: // remove
				if _, ok := live[name]; ok {
					require.NoError(t, fs.Remove(name))
					delete(live, name)
					delete(durable, name)
					delete(synced, name)
					dirty = true
				}
			case 2: // rename
				to := names[r.IntN(len(names))]
				if _, ok := live[name]; ok && to != name {
					require.NoError(t, fs.Rename(name, to))
					live[to] = live[name]
					delete(live, name)
					delete(durable, name)
					delete(durable, to)
					delete(synced, to)
					if v, ok := synced[name]; ok {
						synced[to] = v
						delete(synced, name)
					}
					dirty = true
				}
			case 3: // directory sync: every live file synced so far is durable
				require.NoError(t, vfs.SyncDir(fs, "/d"))
				dirty = false
				for n, v := range synced {
					durable[n] = v
				}
			case 4:
				img := fs.CrashClone(r)
				for n, v := range durable {
					require.Equal(t, v, content(t, img, n), "seed %d step %d: %s lost\n%s", seed, step, n, fs)
					checked++
				}
				got, err := img.List("/d")
				require.NoError(t, err)
				for _, n := range got {
					c := content(t, img, "/d/"+n)
					require.True(t, c == "" || strings.HasPrefix(c, "v") || bytes.Count([]byte(c), []byte{0}) > 0,
						"seed %d: %s holds %q", seed, n, c)
				}
			}
		}
	}
	require.Greater(t, checked, 50, "durable files checked in images")
}

// TestLinks: a link is a second name of the same file; it is a directory
// operation of its directory, durable once that is synced, and an image
// keeps the names of one file one file (a write through one name is seen
// through the other), whichever names survive.
func TestLinks(t *testing.T) {
	fs := New()
	require.NoError(t, fs.MkdirAll("/a", 0o755))
	require.NoError(t, fs.MkdirAll("/snap", 0o755))
	f := writeFile(t, fs, "/a/x", "data", true)
	require.NoError(t, f.Close())
	fs.SyncAll()

	require.NoError(t, fs.Link("/a/x", "/snap/x"))
	require.Equal(t, "data", content(t, fs, "/snap/x"))
	err := fs.Link("/a/x", "/snap/x")
	require.True(t, errors.Is(err, syscall.EEXIST), "%v", err)
	err = fs.Link("/a/nope", "/snap/y")
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	err = fs.Link("/a", "/snap/dir")
	require.Error(t, err, "directories cannot be linked")
	_, err = fs.Stat("/snap/dir")
	require.True(t, errors.Is(err, os.ErrNotExist))

	where := func(img *FS) string { return content(t, img, "/a/x") + " " + content(t, img, "/snap/x") }
	require.ElementsMatch(t, []string{"data <none>", "data data"}, keys(outcomes(t, fs, where)))
	require.NoError(t, vfs.SyncDir(fs, "/a"))
	require.ElementsMatch(t, []string{"data <none>", "data data"}, keys(outcomes(t, fs, where)),
		"syncing the source's directory does not make the link durable")
	require.NoError(t, vfs.SyncDir(fs, "/snap"))
	require.Equal(t, map[string]int{"data data": images}, outcomes(t, fs, where))

	// Removing one name leaves the other; once durable, the file lives on
	// under the link alone.
	require.NoError(t, fs.Remove("/a/x"))
	require.Equal(t, "data", content(t, fs, "/snap/x"))
	require.ElementsMatch(t, []string{"data data", "<none> data"}, keys(outcomes(t, fs, where)))
	require.NoError(t, vfs.SyncDir(fs, "/a"))
	require.Equal(t, map[string]int{"<none> data": images}, outcomes(t, fs, where))

	// Two names of one file in an image are still one file.
	g := writeFile(t, fs, "/a/y", "one", true)
	require.NoError(t, g.Close())
	require.NoError(t, fs.Link("/a/y", "/a/z"))
	fs.SyncAll()
	img := fs.CrashClone(rng(1))
	h, err := img.Create("/a/y") // truncates the file, under both names
	require.NoError(t, err)
	_, err = h.Write([]byte("two"))
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.Equal(t, "two", content(t, img, "/a/z"))
	require.Equal(t, "one", content(t, fs, "/a/z"), "images are independent of the live FS")

	// A link to a file whose first name is not durable survives on its
	// own once its directory is synced: the file exists once a name of it
	// does.
	k := writeFile(t, fs, "/a/new", "fresh", true)
	require.NoError(t, k.Close())
	require.NoError(t, fs.Link("/a/new", "/snap/new"))
	require.NoError(t, vfs.SyncDir(fs, "/snap"))
	seen := outcomes(t, fs, func(img *FS) string { return content(t, img, "/a/new") + " " + content(t, img, "/snap/new") })
	require.ElementsMatch(t, []string{"fresh fresh", "<none> fresh"}, keys(seen))
}
