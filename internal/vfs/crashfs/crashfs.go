// Package crashfs is an in-memory vfs.FS that can lose power: it remembers
// what each file and directory has made durable, and Crash returns the
// filesystem a power cut would leave behind, with a random choice of what
// had not been synced. Tests run a store on it, cut the power at a chosen
// operation (in the middle of a WAL write, a flush or a compaction), reopen
// the store on the image and check what survived. It also fails chosen
// operations with EIO, for error-injection sweeps.
//
// Usage:
//
//	fs := crashfs.New()
//	fs.MkdirAll(dir, 0o755)
//	fs.SyncAll()                         // the test's own setup is durable
//	fs.CrashAt(n, crashfs.Mutating, rng) // the nth write, sync, create, ... cuts the power
//	// ... run the store until <-fs.Crashed() ...
//	img := fs.Image() // what the disk held; fs fails every call from now on
//	// ... close the store (it fails fast), open it again on img ...
//
// An FS is safe for concurrent use (one mutex serialises every call); a
// File is as safe as vfs.File promises.
//
// # The crash model
//
// Files. A file's content is durable up to its last File.Sync (of any
// handle of the file: a file opened with Open can be synced too). What was
// done to it since (writes, which append, and truncations) is kept in
// order: after a crash the file holds its synced content with the first k of
// those changes applied, for a random k, and, when the next change is a
// write, a random prefix of that write's bytes. With probability 1/4, the
// bytes from a random point in the unsynced part to the end are zeros
// instead: a filesystem that extended the file (its size reached the disk)
// but not the data. Synced bytes are never changed. Sizes are part of the
// content: a Truncate is durable only once the file is synced.
//
// Directories. Creating a file (Create of a new name), linking one (Link:
// a second name of the same file, sharing its content), making a directory
// (each level MkdirAll adds), removing an entry and renaming one are
// directory operations. An operation is durable once every directory it
// touches was synced (vfs.SyncDir: FS.OpenDir, then File.Sync) after it: a
// rename within a directory touches one, a rename across directories both,
// and is durable only when both were synced after it (the filesystem may
// write the two directories apart). Syncing a file never makes its directory
// entry durable. At a crash every operation that is not durable is kept or
// lost at random (probability 1/2 each), and the operations are replayed in
// the order they were made, durable ones always kept, onto the durable
// namespace. An operation that depends on one that was lost is lost too,
// whether durable or not: a remove or rename whose source entry is not
// there (because its create, or the rename that put it there, was lost) does
// nothing, and a create, link or mkdir whose name is still taken (because
// the remove or rename that freed it was lost) does nothing. A link made
// durable keeps its file even if the file's first name was lost (the file
// itself exists once a name of it does). Entries made in a
// directory whose own creation was lost are unreachable. So a program keeps
// a file only if every directory operation that led to its name was made
// durable, all the way from a directory that already was.
//
// What the model does not do: it does not reorder changes within a file
// (after a crash a file holds a prefix of its history, never a later write
// without an earlier one), it does not tear a directory operation (a rename
// never leaves its file under both names, or under neither), and it does
// not lose synced data. Real filesystems are usually kinder (ext4 commits a
// whole journal on fsync); the model assumes only what POSIX promises.
//
// # Failures
//
// FailAt makes the nth operation of chosen kinds fail once, with EIO and
// without doing anything (a *errorfs.Error, so errorfs.IsInjected holds);
// Injected says whether it fired, and where. CrashAt (CrashWhere, to count
// only some paths) cuts the power at the nth operation of chosen kinds: the
// image is taken (a write in progress is applied first, so it may survive in
// part) and that operation and every later one, of every handle, fails with
// ErrPowerOff, as after Freeze. Ops counts operations, to size a sweep.
package crashfs

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/internal/vfs/errorfs"
)

// Op is a set of operations, as errorfs names them.
type Op = errorfs.Op

// Mutating is every operation that changes what is on disk: the operations
// at which a power cut is interesting.
const Mutating = errorfs.OpCreate | errorfs.OpRemove | errorfs.OpRename | errorfs.OpTruncate |
	errorfs.OpMkdir | errorfs.OpWrite | errorfs.OpSync | errorfs.OpLink

// ErrPowerOff is in the chain of every error of an FS after a crash (Crash,
// CrashAt) or Freeze. It wraps syscall.EIO, which is what a program sees of
// a disk that went away.
var ErrPowerOff = errors.Wrap(syscall.EIO, "crashfs: the power is off")

// node is a file or a directory.
type node struct {
	dir     bool
	modTime time.Time

	// Directories: the entries now, and as the durable namespace has them
	// (every directory operation up to the first one that is not durable;
	// see FS.pending). syncedThrough is the number of the last directory
	// operation made before the directory's last sync.
	children      map[string]*node
	durable       map[string]*node
	syncedThrough uint64

	// Files: the content now, the content at the last sync, and what was
	// done since, in order. synced, and the data of every change, are
	// never modified once taken (data only grows by append, and a
	// truncation copies), so they share data's memory.
	data    []byte
	synced  []byte
	changes []change
}

// change is one unsynced change to a file: a write of data, or (with
// truncate set) a truncation to size.
type change struct {
	data     []byte
	truncate bool
	size     int64
}

type dirOpKind uint8

const (
	opMkdir dirOpKind = iota
	opCreate
	opRemove
	opRename
	opLink
)

// dirOp is a directory operation that is not durable yet, or follows one
// that is not: entry from/fromName (the entry made, or removed, or the
// rename's source) and for a rename to/toName.
type dirOp struct {
	seq      uint64
	kind     dirOpKind
	from     *node
	fromName string
	to       *node
	toName   string
	n        *node
}

func (op *dirOp) durable() bool {
	return op.from.syncedThrough >= op.seq && (op.to == nil || op.to.syncedThrough >= op.seq)
}

// FS is the crashable filesystem. The zero value is not usable; call New.
type FS struct {
	mu   sync.Mutex
	root *node
	// seq numbers directory operations; pending holds those not folded
	// into the durable namespace yet, oldest first.
	seq     uint64
	pending []*dirOp

	off      bool // the power is off: every call fails
	counts   int64
	injected int64  // FailAt failures injected
	failOp   string // the last one's operation and path
	fail     *trigger
	crash    *trigger
	crashed  chan struct{}
	image    *FS
	crashOp  string
}

// trigger fires at the nth operation of ops.
type trigger struct {
	ops   Op
	match func(path string) bool // nil: every path
	n     int64
	rng   *rand.Rand
}

var _ vfs.FS = (*FS)(nil)

// New returns an empty FS: just the root directory, durable.
func New() *FS {
	return &FS{root: newDir(), crashed: make(chan struct{})}
}

func newDir() *node {
	return &node{dir: true, children: map[string]*node{}, durable: map[string]*node{}, modTime: time.Now()}
}

// FailAt makes the nth operation (n ≥ 1, counting from this call) of the
// kinds in ops fail once with EIO, without doing anything. It replaces an
// earlier FailAt that has not fired.
func (fs *FS) FailAt(n int64, ops Op) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fail = &trigger{ops: ops, n: n}
}

// CrashAt cuts the power at the nth operation (n ≥ 1, counting from this
// call) of the kinds in ops, choosing what survives with rng (see Crash and
// Image). It replaces an earlier CrashAt or CrashWhere that has not fired.
func (fs *FS) CrashAt(n int64, ops Op, rng *rand.Rand) {
	fs.CrashWhere(n, ops, nil, rng)
}

// CrashWhere is CrashAt counting only the operations on paths that match
// accepts (for a rename, the old name): to cut the power in a flush rather
// than in the WAL, say.
func (fs *FS) CrashWhere(n int64, ops Op, match func(path string) bool, rng *rand.Rand) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.crash = &trigger{ops: ops, match: match, n: n, rng: rng}
}

// Crashed is closed when the power is cut by CrashAt or Crash.
func (fs *FS) Crashed() <-chan struct{} { return fs.crashed }

// Image returns what the disk held when the power was cut, or nil before.
// It is a new FS, every file and directory of it durable; the caller owns
// it.
func (fs *FS) Image() *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.image
}

// CrashedAt describes the operation at which CrashAt cut the power ("" if
// it has not, or Crash did).
func (fs *FS) CrashedAt() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.crashOp
}

// Ops returns the number of operations made since New (every call of FS
// and File counts, failed ones too, except those made with the power off).
func (fs *FS) Ops() int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.counts
}

// Injected returns how many failures FailAt injected, and the operation and
// path of the last one ("write /a/b").
func (fs *FS) Injected() (int64, string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.injected, fs.failOp
}

// Crash cuts the power now: it returns the image (as CrashClone) and
// freezes fs (as Freeze).
func (fs *FS) Crash(rng *rand.Rand) *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.powerOffLocked(rng, "")
	return fs.image
}

// CrashClone returns the image a power cut now would leave, with rng
// choosing what of the unsynced state survives; fs goes on unchanged.
func (fs *FS) CrashClone(rng *rand.Rand) *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.crashCloneLocked(rng)
}

// Freeze turns the power off without taking an image: every later call, of
// the FS and of its open files, fails with ErrPowerOff. A store's Close then
// fails fast and changes nothing.
func (fs *FS) Freeze() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.off {
		fs.off = true
		close(fs.crashed)
	}
}

// SyncAll makes everything durable, as sync(2) followed by a sync of every
// directory would: tests call it after their setup.
func (fs *FS) SyncAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, op := range fs.pending {
		op.from.syncedThrough = fs.seq
		if op.to != nil {
			op.to.syncedThrough = fs.seq
		}
	}
	var walk func(n *node)
	walk = func(n *node) {
		if !n.dir {
			n.syncFile()
			return
		}
		n.syncedThrough = fs.seq
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(fs.root)
	fs.foldLocked()
}

func (fs *FS) powerOffLocked(rng *rand.Rand, at string) {
	if fs.off {
		return
	}
	fs.image = fs.crashCloneLocked(rng)
	fs.crashOp = at
	fs.off = true
	close(fs.crashed)
}

// enterLocked starts operation op on path: it fails if the power is off or
// the operation is to fail, and cuts the power if it is the one to. A write
// chosen to be cut is let through with cut set: the caller applies it and
// then cuts the power (cutLocked), so that the write may survive in part.
func (fs *FS) enterLocked(op Op, path string) (cut bool, _ error) {
	if fs.off {
		return false, offError(op, path)
	}
	fs.counts++
	if t := fs.fail; t != nil && t.ops&op != 0 {
		if t.n--; t.n <= 0 {
			fs.fail = nil
			fs.injected++
			fs.failOp = op.String() + " " + path
			return false, &errorfs.Error{Op: op, Path: path, Err: syscall.EIO}
		}
	}
	if t := fs.crash; t != nil && t.ops&op != 0 && (t.match == nil || t.match(path)) {
		if t.n--; t.n <= 0 {
			if op == errorfs.OpWrite {
				return true, nil
			}
			return false, fs.cutLocked(op, path)
		}
	}
	return false, nil
}

// cutLocked cuts the power at op on path, as CrashAt asked, and returns the
// operation's error.
func (fs *FS) cutLocked(op Op, path string) error {
	t := fs.crash
	fs.crash = nil
	fs.powerOffLocked(t.rng, op.String()+" "+path)
	return offError(op, path)
}

func offError(op Op, path string) error {
	return &errorfs.Error{Op: op, Path: path, Err: ErrPowerOff}
}

// split returns the components of a cleaned path ("/a/b" -> a, b).
func split(name string) []string {
	name = filepath.ToSlash(filepath.Clean(name))
	name = strings.Trim(name, "/")
	if name == "" || name == "." {
		return nil
	}
	return strings.Split(name, "/")
}

func notExist(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: os.ErrNotExist}
}

// lookupLocked returns the node at name, or nil.
func (fs *FS) lookupLocked(name string) *node {
	n := fs.root
	for _, c := range split(name) {
		if !n.dir {
			return nil
		}
		if n = n.children[c]; n == nil {
			return nil
		}
	}
	return n
}

// parentLocked returns the directory that holds name and name's last
// component.
func (fs *FS) parentLocked(op, name string) (*node, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", &os.PathError{Op: op, Path: name, Err: syscall.EINVAL}
	}
	dir := fs.root
	for _, c := range parts[:len(parts)-1] {
		next := dir.children[c]
		if next == nil {
			return nil, "", notExist(op, name)
		}
		if !next.dir {
			return nil, "", &os.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		dir = next
	}
	return dir, parts[len(parts)-1], nil
}

func (fs *FS) logLocked(op *dirOp) {
	fs.seq++
	op.seq = fs.seq
	fs.pending = append(fs.pending, op)
}

// foldLocked applies the durable operations at the head of pending to the
// durable namespace. Every operation before them was applied, so each
// applies exactly as it did to the live namespace.
func (fs *FS) foldLocked() {
	i := 0
	for ; i < len(fs.pending) && fs.pending[i].durable(); i++ {
		op := fs.pending[i]
		switch op.kind {
		case opMkdir, opCreate, opLink:
			op.from.durable[op.fromName] = op.n
		case opRemove:
			delete(op.from.durable, op.fromName)
		case opRename:
			delete(op.from.durable, op.fromName)
			op.to.durable[op.toName] = op.n
		}
	}
	clear(fs.pending[:i])
	fs.pending = fs.pending[i:]
}

func (n *node) syncFile() {
	n.synced = n.data[:len(n.data):len(n.data)]
	n.changes = nil
}

// crashCloneLocked builds the image: the durable namespace, the pending
// operations replayed with a random choice for each that is not durable,
// and every reachable file's content as a crash leaves it.
func (fs *FS) crashCloneLocked(rng *rand.Rand) *FS {
	img := map[*node]map[string]*node{}
	entries := func(d *node) map[string]*node {
		m, ok := img[d]
		if !ok {
			m = make(map[string]*node, len(d.durable))
			for k, v := range d.durable {
				m[k] = v
			}
			img[d] = m
		}
		return m
	}
	for _, op := range fs.pending {
		if !op.durable() && rng.IntN(2) == 0 {
			continue // lost
		}
		from := entries(op.from)
		switch op.kind {
		case opMkdir, opCreate, opLink:
			if from[op.fromName] == nil {
				from[op.fromName] = op.n
			}
		case opRemove:
			if from[op.fromName] == op.n {
				delete(from, op.fromName)
			}
		case opRename:
			if from[op.fromName] == op.n {
				delete(from, op.fromName)
				entries(op.to)[op.toName] = op.n
			}
		}
	}
	out := &FS{crashed: make(chan struct{})}
	// A file with several names (Link) is one file in the image too.
	built := map[*node]*node{}
	var build func(n *node) *node
	build = func(n *node) *node {
		if !n.dir {
			if b := built[n]; b != nil {
				return b
			}
			data := n.crashContent(rng)
			b := &node{modTime: n.modTime, data: data, synced: data}
			built[n] = b
			return b
		}
		d := newDir()
		d.modTime = n.modTime
		for name, c := range entries(n) {
			cc := build(c)
			d.children[name] = cc
			d.durable[name] = cc
		}
		return d
	}
	out.root = build(fs.root)
	return out
}

// crashContent returns what a crash leaves of the file (see the package
// comment). The result must not be modified (it may be n.synced).
func (n *node) crashContent(rng *rand.Rand) []byte {
	if len(n.changes) == 0 {
		return n.synced
	}
	c := append([]byte(nil), n.synced...)
	dirtyFrom := len(c) // bytes from here on were written after the sync
	k := rng.IntN(len(n.changes) + 1)
	for i, ch := range n.changes {
		if i > k {
			break
		}
		switch {
		case ch.truncate:
			if i == k {
				break // not applied
			}
			if int(ch.size) <= len(c) {
				c = c[:ch.size]
			} else {
				c = append(c, make([]byte, int(ch.size)-len(c))...)
			}
		default:
			data := ch.data
			if i == k {
				data = data[:rng.IntN(len(data)+1)] // the write in progress, in part
			}
			dirtyFrom = min(dirtyFrom, len(c))
			c = append(c, data...)
		}
	}
	if len(c) > dirtyFrom && rng.IntN(4) == 0 {
		clear(c[dirtyFrom+rng.IntN(len(c)-dirtyFrom):])
	}
	return c[:len(c):len(c)]
}

// Create implements vfs.FS. A name that exists is truncated, which changes
// the file, not its directory.
func (fs *FS) Create(name string) (vfs.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpCreate, name); err != nil {
		return nil, err
	}
	dir, base, err := fs.parentLocked("create", name)
	if err != nil {
		return nil, err
	}
	if n := dir.children[base]; n != nil {
		if n.dir {
			return nil, &os.PathError{Op: "create", Path: name, Err: syscall.EISDIR}
		}
		n.truncate(0)
		return &file{fs: fs, n: n, path: name, write: true}, nil
	}
	n := &node{modTime: time.Now()}
	dir.children[base] = n
	dir.modTime = n.modTime
	fs.logLocked(&dirOp{kind: opCreate, from: dir, fromName: base, n: n})
	return &file{fs: fs, n: n, path: name, write: true}, nil
}

// Open implements vfs.FS.
func (fs *FS) Open(name string) (vfs.File, error) {
	return fs.open(errorfs.OpOpen, "open", name)
}

// OpenDir implements vfs.FS.
func (fs *FS) OpenDir(name string) (vfs.File, error) {
	return fs.open(errorfs.OpOpenDir, "opendir", name)
}

func (fs *FS) open(op Op, opName, name string) (vfs.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(op, name); err != nil {
		return nil, err
	}
	n := fs.lookupLocked(name)
	if n == nil {
		return nil, notExist(opName, name)
	}
	if op == errorfs.OpOpenDir && !n.dir {
		return nil, &os.PathError{Op: opName, Path: name, Err: syscall.ENOTDIR}
	}
	return &file{fs: fs, n: n, path: name}, nil
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpRemove, name); err != nil {
		return err
	}
	dir, base, err := fs.parentLocked("remove", name)
	if err != nil {
		return err
	}
	n := dir.children[base]
	if n == nil {
		return notExist("remove", name)
	}
	if n.dir && len(n.children) > 0 {
		return &os.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	dir.modTime = time.Now()
	fs.logLocked(&dirOp{kind: opRemove, from: dir, fromName: base, n: n})
	return nil
}

// Rename implements vfs.FS.
func (fs *FS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpRename, oldname); err != nil {
		return err
	}
	from, fromBase, err := fs.parentLocked("rename", oldname)
	if err != nil {
		return err
	}
	n := from.children[fromBase]
	if n == nil {
		return notExist("rename", oldname)
	}
	to, toBase, err := fs.parentLocked("rename", newname)
	if err != nil {
		return err
	}
	if from == to && fromBase == toBase {
		return nil
	}
	if old := to.children[toBase]; old != nil && old.dir && (!n.dir || len(old.children) > 0) {
		return &os.PathError{Op: "rename", Path: newname, Err: syscall.EEXIST}
	}
	for d := to; n.dir && d != nil; d = fs.parentOfLocked(d) {
		if d == n {
			return &os.PathError{Op: "rename", Path: newname, Err: syscall.EINVAL}
		}
	}
	delete(from.children, fromBase)
	to.children[toBase] = n
	from.modTime, to.modTime = time.Now(), time.Now()
	fs.logLocked(&dirOp{kind: opRename, from: from, fromName: fromBase, to: to, toName: toBase, n: n})
	return nil
}

// parentOfLocked returns the live parent of directory d, nil for the root
// (or a directory no longer linked).
func (fs *FS) parentOfLocked(d *node) *node {
	var find func(p *node) *node
	find = func(p *node) *node {
		for _, c := range p.children {
			if c == d {
				return p
			}
			if c.dir {
				if q := find(c); q != nil {
					return q
				}
			}
		}
		return nil
	}
	return find(fs.root)
}

// Link implements vfs.FS: newname becomes a second name of oldname's file,
// a directory operation of newname's directory (durable once it is
// synced, as a create is).
func (fs *FS) Link(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpLink, oldname); err != nil {
		return err
	}
	n := fs.lookupLocked(oldname)
	if n == nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	if n.dir {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	dir, base, err := fs.parentLocked("link", newname)
	if err != nil {
		return err
	}
	if dir.children[base] != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EEXIST}
	}
	dir.children[base] = n
	dir.modTime = time.Now()
	fs.logLocked(&dirOp{kind: opLink, from: dir, fromName: base, n: n})
	return nil
}

// Truncate implements vfs.FS.
func (fs *FS) Truncate(name string, size int64) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpTruncate, name); err != nil {
		return err
	}
	if size < 0 {
		return &os.PathError{Op: "truncate", Path: name, Err: syscall.EINVAL}
	}
	n := fs.lookupLocked(name)
	if n == nil {
		return notExist("truncate", name)
	}
	if n.dir {
		return &os.PathError{Op: "truncate", Path: name, Err: syscall.EISDIR}
	}
	n.truncate(size)
	return nil
}

// truncate sets the file's size, copying its data so that what synced and
// earlier changes share is never written over.
func (n *node) truncate(size int64) {
	d := make([]byte, size)
	copy(d, n.data)
	n.data = d
	n.changes = append(n.changes, change{truncate: true, size: size})
	n.modTime = time.Now()
}

// List implements vfs.FS.
func (fs *FS) List(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpList, dir); err != nil {
		return nil, err
	}
	n := fs.lookupLocked(dir)
	if n == nil {
		return nil, notExist("list", dir)
	}
	if !n.dir {
		return nil, &os.PathError{Op: "list", Path: dir, Err: syscall.ENOTDIR}
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// MkdirAll implements vfs.FS. Each directory it makes is a directory
// operation of its parent.
func (fs *FS) MkdirAll(dir string, perm os.FileMode) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpMkdir, dir); err != nil {
		return err
	}
	n := fs.root
	for _, c := range split(dir) {
		next := n.children[c]
		if next == nil {
			next = newDir()
			n.children[c] = next
			n.modTime = next.modTime
			fs.logLocked(&dirOp{kind: opMkdir, from: n, fromName: c, n: next})
		} else if !next.dir {
			return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		n = next
	}
	return nil
}

// Stat implements vfs.FS.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.enterLocked(errorfs.OpStat, name); err != nil {
		return nil, err
	}
	n := fs.lookupLocked(name)
	if n == nil {
		return nil, notExist("stat", name)
	}
	return n.info(name), nil
}

func (n *node) info(name string) os.FileInfo {
	return fileInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir, modTime: n.modTime}
}

type fileInfo struct {
	name    string
	size    int64
	dir     bool
	modTime time.Time
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) ModTime() time.Time { return fi.modTime }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }
func (fi fileInfo) Mode() os.FileMode {
	if fi.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}

// String describes the live tree: one line per entry, with file sizes (and
// synced sizes), for test failures.
func (fs *FS) String() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var b strings.Builder
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		names := make([]string, 0, len(n.children))
		for name := range n.children {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			c := n.children[name]
			p := path + "/" + name
			if c.dir {
				b.WriteString(p + "/\n")
				walk(c, p)
				continue
			}
			b.WriteString(p + " " + strconv.Itoa(len(c.data)) + " (synced " + strconv.Itoa(len(c.synced)) + ")\n")
		}
	}
	walk(fs.root, "")
	return b.String()
}

// file is an open file or directory.
type file struct {
	fs     *FS
	n      *node
	path   string
	write  bool
	closed bool
}

func (f *file) checkLocked(op Op) error {
	if _, err := f.fs.enterLocked(op, f.path); err != nil {
		return err
	}
	if f.closed {
		return &os.PathError{Op: op.String(), Path: f.path, Err: os.ErrClosed}
	}
	return nil
}

func (f *file) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	cut, err := f.fs.enterLocked(errorfs.OpWrite, f.path)
	if err != nil {
		return 0, err
	}
	switch {
	case f.closed:
		err = &os.PathError{Op: "write", Path: f.path, Err: os.ErrClosed}
	case !f.write || f.n.dir:
		err = &os.PathError{Op: "write", Path: f.path, Err: syscall.EBADF}
	case len(p) > 0:
		n := f.n
		start := len(n.data)
		n.data = append(n.data, p...)
		n.changes = append(n.changes, change{data: n.data[start:len(n.data):len(n.data)]})
		n.modTime = time.Now()
	}
	if cut {
		return 0, f.fs.cutLocked(errorfs.OpWrite, f.path)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked(errorfs.OpRead); err != nil {
		return 0, err
	}
	if f.n.dir {
		return 0, &os.PathError{Op: "read", Path: f.path, Err: syscall.EISDIR}
	}
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.path, Err: syscall.EINVAL}
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Sync makes the file's content durable, or, for a directory, every
// operation made in it so far (see the package comment).
func (f *file) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked(errorfs.OpSync); err != nil {
		return err
	}
	if f.n.dir {
		f.n.syncedThrough = f.fs.seq
		f.fs.foldLocked()
		return nil
	}
	f.n.syncFile()
	return nil
}

func (f *file) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked(errorfs.OpStat); err != nil {
		return nil, err
	}
	return f.n.info(f.path), nil
}

// Close closes the file; it is closed even when Close fails.
func (f *file) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	err := f.checkLocked(errorfs.OpClose)
	f.closed = true
	return err
}
