// Package errorfs is a fault-injecting vfs.FS for tests: it wraps another FS
// (usually vfs.Default) and makes chosen operations fail the way disks fail.
//
// Faults are described by Rules. A rule selects operations by kind (Op, a
// mask), by path (a substring and/or a predicate), by the byte range they
// touch (reads and writes), and by count (let the first After matching
// operations through, then inject at most Limit faults, each with a given
// probability drawn from the FS's seeded source). It injects one of three
// faults:
//
//   - Fail: the operation fails, without doing anything, with Err
//     (syscall.EIO if nil; use syscall.ENOSPC for a full disk). The error is
//     an *Error that unwraps to Err, so errors.Is(err, syscall.ENOSPC) holds
//     through any wrapping.
//   - ShortWrite: a write writes the first half of its bytes to the file
//     and then fails with Err, as a write that ran out of space does.
//   - BitFlip: a read succeeds but one bit of what it returns is flipped,
//     as silent media corruption would do; the file itself is not changed.
//
// Examples:
//
//	fs := errorfs.New(vfs.Default, 1)
//	// The 3rd fsync of a WAL segment fails with EIO.
//	fs.Add(errorfs.Rule{Ops: errorfs.OpSync, PathContains: ".wal", After: 2, Limit: 1})
//	// The disk is full: every create and write under the store fails.
//	full := fs.Add(errorfs.Rule{Ops: errorfs.OpCreate | errorfs.OpWrite, PathContains: "/f/", Err: syscall.ENOSPC})
//	full.Remove() // space is back
//	// Reads of byte 100 of any .hfile see bit 3 flipped.
//	fs.Add(errorfs.Rule{Ops: errorfs.OpRead, PathContains: ".hfile", Lo: 100, Hi: 101, Kind: errorfs.BitFlip, Bit: 3})
//
// Injection is deterministic for a given sequence of operations: counts are
// per rule, and probabilities come from a source seeded by New's seed (with
// concurrent callers the order of operations, and so the outcome, depends
// on scheduling). The whole FS can be switched off and on at run time
// (SetEnabled), and so can each rule; both are atomic and safe to flip
// while other goroutines use the FS. Injected counts every fault injected,
// for reports.
package errorfs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs"
)

// Op is a set of filesystem operations.
type Op uint32

// The operations a Rule can select.
const (
	OpCreate   Op = 1 << iota // FS.Create
	OpOpen                    // FS.Open
	OpOpenDir                 // FS.OpenDir
	OpRemove                  // FS.Remove
	OpRename                  // FS.Rename (matched on either name)
	OpTruncate                // FS.Truncate
	OpList                    // FS.List
	OpMkdir                   // FS.MkdirAll
	OpStat                    // FS.Stat and File.Stat
	OpWrite                   // File.Write
	OpSync                    // File.Sync, of files and of directories
	OpRead                    // File.ReadAt
	OpClose                   // File.Close (the file is closed all the same)
	OpLink                    // FS.Link (matched on either name)

	// OpAll is every operation.
	OpAll = OpCreate | OpOpen | OpOpenDir | OpRemove | OpRename | OpTruncate | OpList | OpMkdir |
		OpStat | OpWrite | OpSync | OpRead | OpClose | OpLink
)

var opNames = []string{"create", "open", "opendir", "remove", "rename", "truncate", "list", "mkdir",
	"stat", "write", "sync", "read", "close", "link"}

// String returns the names of the operations in o, joined by "|".
func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Kind is the kind of fault a Rule injects.
type Kind uint8

const (
	// Fail fails the operation with Rule.Err before it does anything.
	Fail Kind = iota
	// ShortWrite makes a File.Write write the first half of its bytes
	// (rounded down) and fail with Rule.Err. On other operations it acts
	// as Fail.
	ShortWrite
	// BitFlip flips bit Rule.Bit of the first byte a File.ReadAt returns
	// inside [Rule.Lo, Rule.Hi); the read itself succeeds. It applies to
	// OpRead only.
	BitFlip
)

func (k Kind) String() string {
	switch k {
	case Fail:
		return "fail"
	case ShortWrite:
		return "short write"
	case BitFlip:
		return "bit flip"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Rule says which operations to fault and how. The zero values of its
// selectors select everything; Ops must not be zero.
type Rule struct {
	// Ops are the operations the rule applies to.
	Ops Op
	// PathContains, if not empty, restricts the rule to paths containing
	// it (for OpRename and OpLink, either the old or the new name).
	PathContains string
	// PathMatch, if not nil, restricts the rule to paths it accepts.
	PathMatch func(path string) bool
	// Lo and Hi restrict OpRead and OpWrite to operations touching a byte
	// of the file in [Lo, Hi); Hi == 0 means no upper bound. Writes are
	// sequential, so a write's range is [bytes written so far, + len).
	// Other operations ignore them.
	Lo, Hi int64
	// After lets the first After matching operations through: the first
	// fault can be at the (After+1)th.
	After int64
	// Limit is the most faults the rule injects; 0 means no limit. The Nth
	// matching operation alone is After: N-1, Limit: 1; every operation
	// after the Nth is After: N.
	Limit int64
	// Probability, if in (0, 1), is the chance that an operation past
	// After (and under Limit) is faulted, drawn from the FS's seeded
	// source. 0 means always.
	Probability float64
	// Kind is the fault.
	Kind Kind
	// Err is the error of Fail and ShortWrite faults; syscall.EIO if nil.
	Err error
	// Bit is the bit (0-7) a BitFlip flips.
	Bit uint8
}

// Error is the error of an injected fault. It unwraps to the rule's Err.
type Error struct {
	Op   Op
	Path string
	Off  int64 // for reads and writes, the file offset of the operation
	Err  error
}

func (e *Error) Error() string {
	if e.Op == OpRead || e.Op == OpWrite {
		return fmt.Sprintf("errorfs: injected %s fault: %s at offset %d: %v", e.Op, e.Path, e.Off, e.Err)
	}
	return fmt.Sprintf("errorfs: injected %s fault: %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the underlying error (syscall.EIO, syscall.ENOSPC, ...).
func (e *Error) Unwrap() error { return e.Err }

// IsInjected reports whether err is, or wraps, an injected fault.
func IsInjected(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Event records one injected fault.
type Event struct {
	Op   Op
	Kind Kind
	Path string
	Off  int64
}

func (e Event) String() string {
	return fmt.Sprintf("%s %s %s@%d", e.Kind, e.Op, e.Path, e.Off)
}

// maxEvents bounds the events an FS remembers.
const maxEvents = 1024

// Fault is a rule added to an FS, with its counters. Its methods are safe
// for concurrent use.
type Fault struct {
	rule     Rule
	fs       *FS
	disabled atomic.Bool

	mu       sync.Mutex
	matched  int64
	injected int64
}

// Matched returns how many operations the rule selected (including those
// let through by After, Limit or Probability).
func (f *Fault) Matched() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matched
}

// Injected returns how many faults the rule injected.
func (f *Fault) Injected() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// SetEnabled switches the rule on or off; a disabled rule neither counts
// nor injects.
func (f *Fault) SetEnabled(on bool) { f.disabled.Store(!on) }

// Remove removes the rule from its FS.
func (f *Fault) Remove() { f.fs.remove(f) }

// FS is a fault-injecting vfs.FS. It is safe for concurrent use.
type FS struct {
	inner    vfs.FS
	enabled  atomic.Bool
	faults   atomic.Pointer[[]*Fault]
	injected atomic.Int64

	mu     sync.Mutex // guards rng, events and changes to faults
	rng    *rand.Rand
	events []Event
}

var _ vfs.FS = (*FS)(nil)

// New returns an FS wrapping inner, enabled and without rules. seed seeds
// the source of Rule.Probability.
func New(inner vfs.FS, seed uint64) *FS {
	fs := &FS{inner: inner, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	fs.enabled.Store(true)
	fs.faults.Store(&[]*Fault{})
	return fs
}

// Add adds a rule and returns it as a Fault, to count, switch or remove.
// Rules are checked in the order they were added; the first that injects
// wins.
func (fs *FS) Add(r Rule) *Fault {
	if r.Ops == 0 {
		panic(errors.AssertionFailedf("errorfs: a rule must select operations"))
	}
	if r.Kind == BitFlip && r.Ops&^OpRead != 0 {
		panic(errors.AssertionFailedf("errorfs: a BitFlip rule applies to OpRead only"))
	}
	f := &Fault{rule: r, fs: fs}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	old := *fs.faults.Load()
	next := append(old[:len(old):len(old)], f)
	fs.faults.Store(&next)
	return f
}

func (fs *FS) remove(f *Fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var next []*Fault
	for _, g := range *fs.faults.Load() {
		if g != f {
			next = append(next, g)
		}
	}
	fs.faults.Store(&next)
}

// Clear removes every rule.
func (fs *FS) Clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.faults.Store(&[]*Fault{})
}

// SetEnabled switches fault injection on or off for the whole FS. While it
// is off, rules neither count nor inject: the FS is its inner FS.
func (fs *FS) SetEnabled(on bool) { fs.enabled.Store(on) }

// Enabled reports whether injection is on.
func (fs *FS) Enabled() bool { return fs.enabled.Load() }

// Injected returns the number of faults injected since New.
func (fs *FS) Injected() int64 { return fs.injected.Load() }

// Events returns the faults injected, oldest first (at most the last 1024).
func (fs *FS) Events() []Event {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]Event(nil), fs.events...)
}

// Inner returns the wrapped FS.
func (fs *FS) Inner() vfs.FS { return fs.inner }

// pick returns the first rule that injects a fault of one of kinds into op
// on path, touching [lo, hi) (hi < 0: no range), or nil.
func (fs *FS) pick(op Op, path, path2 string, lo, hi int64, kinds ...Kind) *Fault {
	if !fs.enabled.Load() {
		return nil
	}
	for _, f := range *fs.faults.Load() {
		if f.disabled.Load() || f.rule.Ops&op == 0 || !hasKind(kinds, f.rule.Kind) || !f.selects(path, path2, lo, hi) {
			continue
		}
		if fs.decide(f) {
			off := max(lo, 0)
			if f.rule.Kind == BitFlip {
				off = max(lo, f.rule.Lo) // the byte flipped
			}
			fs.record(Event{Op: op, Kind: f.rule.Kind, Path: path, Off: off})
			return f
		}
	}
	return nil
}

func hasKind(kinds []Kind, k Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func (f *Fault) selects(path, path2 string, lo, hi int64) bool {
	r := &f.rule
	matchPath := func(p string) bool {
		return p != "" && (r.PathContains == "" || strings.Contains(p, r.PathContains)) &&
			(r.PathMatch == nil || r.PathMatch(p))
	}
	if !matchPath(path) && !matchPath(path2) {
		return false
	}
	if hi >= 0 { // a read or write of [lo, hi)
		if hi <= lo || hi <= r.Lo || (r.Hi > 0 && lo >= r.Hi) {
			return false
		}
	}
	return true
}

// decide counts a matching operation against f and reports whether to
// inject.
func (fs *FS) decide(f *Fault) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.matched++
	if f.matched <= f.rule.After || (f.rule.Limit > 0 && f.injected >= f.rule.Limit) {
		return false
	}
	if p := f.rule.Probability; p > 0 && p < 1 {
		fs.mu.Lock()
		x := fs.rng.Float64()
		fs.mu.Unlock()
		if x >= p {
			return false
		}
	}
	f.injected++
	return true
}

func (fs *FS) record(e Event) {
	fs.injected.Add(1)
	fs.mu.Lock()
	if len(fs.events) == maxEvents {
		copy(fs.events, fs.events[1:])
		fs.events = fs.events[:maxEvents-1]
	}
	fs.events = append(fs.events, e)
	fs.mu.Unlock()
}

func (f *Fault) err(op Op, path string, off int64) error {
	e := f.rule.Err
	if e == nil {
		e = syscall.EIO
	}
	return &Error{Op: op, Path: path, Off: off, Err: e}
}

// check returns the injected error for an operation without a byte range.
func (fs *FS) check(op Op, path string) error {
	return fs.check2(op, path, "")
}

func (fs *FS) check2(op Op, path, path2 string) error {
	if f := fs.pick(op, path, path2, 0, -1, Fail, ShortWrite); f != nil {
		return f.err(op, path, 0)
	}
	return nil
}

// Create implements vfs.FS.
func (fs *FS) Create(name string) (vfs.File, error) {
	if err := fs.check(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := fs.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// Open implements vfs.FS.
func (fs *FS) Open(name string) (vfs.File, error) {
	if err := fs.check(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := fs.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// OpenDir implements vfs.FS.
func (fs *FS) OpenDir(name string) (vfs.File, error) {
	if err := fs.check(OpOpenDir, name); err != nil {
		return nil, err
	}
	f, err := fs.inner.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	if err := fs.check(OpRemove, name); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

// Rename implements vfs.FS.
func (fs *FS) Rename(oldname, newname string) error {
	if err := fs.check2(OpRename, oldname, newname); err != nil {
		return err
	}
	return fs.inner.Rename(oldname, newname)
}

// Link implements vfs.FS.
func (fs *FS) Link(oldname, newname string) error {
	if err := fs.check2(OpLink, oldname, newname); err != nil {
		return err
	}
	return fs.inner.Link(oldname, newname)
}

// Truncate implements vfs.FS.
func (fs *FS) Truncate(name string, size int64) error {
	if err := fs.check(OpTruncate, name); err != nil {
		return err
	}
	return fs.inner.Truncate(name, size)
}

// List implements vfs.FS.
func (fs *FS) List(dir string) ([]string, error) {
	if err := fs.check(OpList, dir); err != nil {
		return nil, err
	}
	return fs.inner.List(dir)
}

// MkdirAll implements vfs.FS.
func (fs *FS) MkdirAll(dir string, perm os.FileMode) error {
	if err := fs.check(OpMkdir, dir); err != nil {
		return err
	}
	return fs.inner.MkdirAll(dir, perm)
}

// Stat implements vfs.FS.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	if err := fs.check(OpStat, name); err != nil {
		return nil, err
	}
	return fs.inner.Stat(name)
}

// file wraps a File of the inner FS.
type file struct {
	vfs.File
	fs   *FS
	path string
	pos  atomic.Int64 // bytes written (writes are sequential)
}

func (f *file) Write(p []byte) (int, error) {
	off := f.pos.Load()
	if g := f.fs.pick(OpWrite, f.path, "", off, off+int64(len(p)), Fail, ShortWrite); g != nil {
		n := 0
		if g.rule.Kind == ShortWrite {
			n, _ = f.File.Write(p[:len(p)/2])
			f.pos.Add(int64(n))
		}
		return n, g.err(OpWrite, f.path, off)
	}
	n, err := f.File.Write(p)
	f.pos.Add(int64(n))
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if g := f.fs.pick(OpRead, f.path, "", off, off+int64(len(p)), Fail, ShortWrite); g != nil {
		return 0, g.err(OpRead, f.path, off)
	}
	n, err := f.File.ReadAt(p, off)
	if n > 0 {
		if g := f.fs.pick(OpRead, f.path, "", off, off+int64(n), BitFlip); g != nil {
			i := max(g.rule.Lo-off, 0)
			p[i] ^= 1 << (g.rule.Bit & 7)
		}
	}
	return n, err
}

func (f *file) Sync() error {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *file) Stat() (os.FileInfo, error) {
	if err := f.fs.check(OpStat, f.path); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func (f *file) Close() error {
	err := f.File.Close()
	if ierr := f.fs.check(OpClose, f.path); ierr != nil {
		return ierr
	}
	return err
}
