package errorfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	crdberrors "github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// script runs one operation of every kind against fs in dir, in a fixed
// order, and returns each one's error by name.
func script(t *testing.T, fs vfs.FS, dir string) map[string]error {
	t.Helper()
	errs := map[string]error{}
	a, b := filepath.Join(dir, "a.data"), filepath.Join(dir, "b.data")
	errs["mkdir"] = fs.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	f, err := fs.Create(a)
	errs["create"] = err
	if err == nil {
		_, errs["write"] = f.Write([]byte("0123456789"))
		errs["sync"] = f.Sync()
		_, errs["fstat"] = f.Stat()
		errs["close"] = f.Close()
	}
	g, err := fs.Open(a)
	errs["open"] = err
	if err == nil {
		buf := make([]byte, 4)
		_, errs["read"] = g.ReadAt(buf, 2)
		errs["close2"] = g.Close()
	}
	d, err := fs.OpenDir(dir)
	errs["opendir"] = err
	if err == nil {
		errs["dirsync"] = d.Sync()
		errs["close3"] = d.Close()
	}
	_, errs["list"] = fs.List(dir)
	_, errs["stat"] = fs.Stat(a)
	errs["truncate"] = fs.Truncate(a, 5)
	errs["rename"] = fs.Rename(a, b)
	errs["link"] = fs.Link(b, filepath.Join(dir, "c.data"))
	errs["remove"] = fs.Remove(b)
	return errs
}

func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rules  []Rule
		failed []string // the operations of script that must fail
		errno  error    // what they fail with
	}{
		{name: "none", rules: nil},
		{name: "create ENOSPC", rules: []Rule{{Ops: OpCreate, Err: syscall.ENOSPC}},
			failed: []string{"create"}, errno: syscall.ENOSPC},
		{name: "write", rules: []Rule{{Ops: OpWrite}}, failed: []string{"write"}, errno: syscall.EIO},
		{name: "sync: files and directories", rules: []Rule{{Ops: OpSync}}, failed: []string{"sync", "dirsync"}, errno: syscall.EIO},
		{name: "sync: files only, by path", rules: []Rule{{Ops: OpSync, PathContains: ".data"}}, failed: []string{"sync"}, errno: syscall.EIO},
		{name: "sync: by predicate", rules: []Rule{{Ops: OpSync, PathMatch: func(p string) bool { return filepath.Ext(p) == "" }}},
			failed: []string{"dirsync"}, errno: syscall.EIO},
		{name: "read", rules: []Rule{{Ops: OpRead}}, failed: []string{"read"}, errno: syscall.EIO},
		{name: "read outside the range", rules: []Rule{{Ops: OpRead, Lo: 6, Hi: 100}}},
		{name: "read inside the range", rules: []Rule{{Ops: OpRead, Lo: 5, Hi: 6}}, failed: []string{"read"}, errno: syscall.EIO},
		{name: "rename, by new name", rules: []Rule{{Ops: OpRename, PathContains: "b.data"}}, failed: []string{"rename"}, errno: syscall.EIO},
		{name: "remove", rules: []Rule{{Ops: OpRemove}}, failed: []string{"remove"}, errno: syscall.EIO},
		{name: "mkdir list opendir", rules: []Rule{{Ops: OpMkdir | OpList | OpOpenDir}}, failed: []string{"mkdir", "list", "opendir"}, errno: syscall.EIO},
		{name: "stat truncate close", rules: []Rule{{Ops: OpStat | OpTruncate | OpClose}}, failed: []string{"stat", "fstat", "truncate", "close", "close2", "close3"}, errno: syscall.EIO},
		{name: "open", rules: []Rule{{Ops: OpOpen, Err: syscall.ENOSPC}}, failed: []string{"open"}, errno: syscall.ENOSPC},
		{name: "the 2nd sync only", rules: []Rule{{Ops: OpSync, After: 1, Limit: 1}}, failed: []string{"dirsync"}, errno: syscall.EIO},
		{name: "every op after the 1st", rules: []Rule{{Ops: OpAll, After: 1}},
			failed: []string{"create", "open", "opendir", "list", "stat", "truncate", "rename", "link", "remove"}, errno: syscall.EIO},
		{name: "link, by new name", rules: []Rule{{Ops: OpLink, PathContains: "c.data"}}, failed: []string{"link"}, errno: syscall.EIO},
		{name: "probability 0 means always", rules: []Rule{{Ops: OpList, Probability: 0}}, failed: []string{"list"}, errno: syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := New(vfs.Default, 1)
			var faults []*Fault
			for _, r := range tc.rules {
				faults = append(faults, fs.Add(r))
			}
			errs := script(t, fs, dir)
			want := map[string]bool{}
			for _, n := range tc.failed {
				want[n] = true
			}
			var injected int64
			for name, err := range errs {
				if want[name] {
					require.Error(t, err, name)
					require.True(t, IsInjected(err), "%s: %v", name, err)
					require.ErrorIs(t, err, tc.errno, name)
					// Through cockroachdb/errors wrapping too.
					require.True(t, crdberrors.Is(crdberrors.Wrap(err, "ctx"), tc.errno), name)
					injected++
				} else if err != nil {
					require.False(t, IsInjected(err), "%s failed unexpectedly: %v", name, err)
				}
			}
			require.Equal(t, injected, fs.Injected())
			require.Len(t, fs.Events(), int(injected))
			var perRule int64
			for _, f := range faults {
				perRule += f.Injected()
			}
			require.Equal(t, injected, perRule)
		})
	}
}

func TestShortWrite(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, 1)
	// The write that reaches byte 10 of the file is cut short.
	fs.Add(Rule{Ops: OpWrite, Lo: 10, Hi: 11, Kind: ShortWrite, Err: syscall.ENOSPC})
	path := filepath.Join(dir, "f")
	f, err := fs.Create(path)
	require.NoError(t, err)
	n, err := f.Write([]byte("01234567"))
	require.NoError(t, err)
	require.Equal(t, 8, n)
	n, err = f.Write([]byte("abcdefgh"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 4, n)
	n, err = f.Write([]byte("XY")) // past the range
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "01234567abcdXY", string(b))
	require.Equal(t, []Event{{Op: OpWrite, Kind: ShortWrite, Path: path, Off: 8}}, fs.Events())
}

func TestBitFlip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	data := []byte("abcdefghijklmnop")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	for _, tc := range []struct {
		name    string
		rule    Rule
		off     int64
		n       int
		flipped int64 // file offset of the flipped byte, -1 for none
	}{
		{name: "whole file, first byte read", rule: Rule{Ops: OpRead, Kind: BitFlip}, off: 3, n: 4, flipped: 3},
		{name: "in range", rule: Rule{Ops: OpRead, Kind: BitFlip, Lo: 5, Hi: 6, Bit: 7}, off: 0, n: 16, flipped: 5},
		{name: "read before the range", rule: Rule{Ops: OpRead, Kind: BitFlip, Lo: 10, Hi: 12}, off: 0, n: 10, flipped: -1},
		{name: "read after the range", rule: Rule{Ops: OpRead, Kind: BitFlip, Lo: 10, Hi: 12}, off: 12, n: 4, flipped: -1},
		{name: "read overlapping the range", rule: Rule{Ops: OpRead, Kind: BitFlip, Lo: 10, Hi: 12}, off: 11, n: 4, flipped: 11},
		{name: "other path", rule: Rule{Ops: OpRead, Kind: BitFlip, PathContains: "nope"}, off: 0, n: 4, flipped: -1},
		{name: "short read at EOF", rule: Rule{Ops: OpRead, Kind: BitFlip, Lo: 15}, off: 14, n: 8, flipped: 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := New(vfs.Default, 1)
			fs.Add(tc.rule)
			f, err := fs.Open(path)
			require.NoError(t, err)
			defer f.Close()
			buf := make([]byte, tc.n)
			n, err := f.ReadAt(buf, tc.off)
			if err != io.EOF {
				require.NoError(t, err)
			}
			want := append([]byte(nil), data[tc.off:tc.off+int64(n)]...)
			if tc.flipped >= 0 {
				want[tc.flipped-tc.off] ^= 1 << tc.rule.Bit
				require.EqualValues(t, 1, fs.Injected())
				require.Equal(t, tc.flipped, fs.Events()[0].Off)
			} else {
				require.Zero(t, fs.Injected())
			}
			require.Equal(t, want, buf[:n])
			// The file is intact.
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, data, b)
		})
	}
}

func TestCountsAndSwitches(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, 1)
	list := func() error { _, err := fs.List(dir); return err }

	// The 3rd, 4th and 5th matching ops fail, then no more.
	f := fs.Add(Rule{Ops: OpList, After: 2, Limit: 3})
	var got []bool
	for i := 0; i < 7; i++ {
		got = append(got, list() != nil)
	}
	require.Equal(t, []bool{false, false, true, true, true, false, false}, got)
	require.EqualValues(t, 7, f.Matched())
	require.EqualValues(t, 3, f.Injected())
	f.Remove()
	require.NoError(t, list())

	// Switched off, a rule neither counts nor injects.
	g := fs.Add(Rule{Ops: OpList, After: 1})
	fs.SetEnabled(false)
	require.False(t, fs.Enabled())
	for i := 0; i < 3; i++ {
		require.NoError(t, list())
	}
	require.Zero(t, g.Matched())
	fs.SetEnabled(true)
	require.NoError(t, list())
	require.Error(t, list())
	g.SetEnabled(false)
	require.NoError(t, list())
	g.SetEnabled(true)
	require.Error(t, list())
	fs.Clear()
	require.NoError(t, list())
	require.EqualValues(t, 5, fs.Injected())
}

func TestProbabilityIsSeeded(t *testing.T) {
	dir := t.TempDir()
	run := func(seed uint64) []bool {
		fs := New(vfs.Default, seed)
		fs.Add(Rule{Ops: OpStat, Probability: 0.3})
		var out []bool
		for i := 0; i < 200; i++ {
			_, err := fs.Stat(dir)
			out = append(out, err != nil)
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	n := 0
	for _, x := range a {
		if x {
			n++
		}
	}
	require.InDelta(t, 60, n, 25)
}

func TestConcurrentSwitching(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, 1)
	fs.Add(Rule{Ops: OpStat, Err: syscall.ENOSPC})
	var wg sync.WaitGroup
	var failures sync.Map
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if _, err := fs.Stat(dir); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Errorf("unexpected %v", err)
					}
					failures.Store(i, true)
				}
			}
		}()
	}
	for i := 0; i < 100; i++ {
		fs.SetEnabled(i%2 == 0)
	}
	wg.Wait()
	var n int64
	failures.Range(func(any, any) bool { n++; return true })
	require.LessOrEqual(t, n, fs.Injected())
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Op: OpRead, Path: "/x/y.hfile", Off: 42, Err: syscall.EIO}
	require.Equal(t, "errorfs: injected read fault: /x/y.hfile at offset 42: input/output error", e.Error())
	e = &Error{Op: OpCreate, Path: "/x", Err: syscall.ENOSPC}
	require.Equal(t, "errorfs: injected create fault: /x: no space left on device", e.Error())
	require.Equal(t, "create|sync", (OpCreate | OpSync).String())
	require.Equal(t, "none", Op(0).String())
	require.Panics(t, func() { New(vfs.Default, 1).Add(Rule{}) })
	require.Panics(t, func() { New(vfs.Default, 1).Add(Rule{Ops: OpWrite, Kind: BitFlip}) })
}
