// Package bulkload is `regionsrv bulkload`, HBase's completebulkload
// (BulkLoadHFilesTool): it loads a directory of HFiles in the layout
// HBase's HFileOutputFormat2 writes, DIR/<family>/<hfile>, into a table of
// a running server.
//
//	regionsrv bulkload [--zk HOST:PORT] [--copy] [-D key=value ...] DIR TABLE
//
// Like HBase's tool it looks the table's regions up, splits every file
// whose rows straddle a region boundary into a bottom and a top half
// (recursively, written under DIR/<family>/.tmp with the file's own
// compression, data block encoding and bloom filter, and its file info),
// loads each region's files in one BulkLoadHFile call (atomically across
// the region's families), and when a region split meanwhile (the server
// answers that the files do not fit) looks the regions up again and
// retries those files. Loaded files are moved into the stores (--copy, or
// -D always.copy.files=true, copies them instead). Files and family
// directories whose names start with "_" or "." are skipped, as are files
// that are not HFiles.
//
// The table must exist (HBase's -Dcreate.table=no); a family directory the
// table has no family for is an error unless -D ignore.unmatched.families=yes.
// hbase.bulkload.retries.number (default 10, 0 for no limit) bounds the
// retries, hbase.loadincremental.threads.max (default the number of CPUs)
// the regions loaded at once.
//
// Run is the tool as a function, for programs that hold a client.
package bulkload

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/tool/internal/cli"
)

// Options configure Run.
type Options struct {
	// Dir holds the files: Dir/<family>/<hfile>.
	Dir   string
	Table string
	// Copy leaves the files in Dir (the server copies them); otherwise
	// they move into the stores.
	Copy bool
	// IgnoreUnmatchedFamilies skips family directories the table has no
	// family for, instead of failing.
	IgnoreUnmatchedFamilies bool
	// Retries bounds the passes after the first (a region split between
	// the lookup and the load): 0 means HBase's default, 10; negative, no
	// limit.
	Retries int
	// Threads is how many regions load at once (default: the CPUs).
	Threads int
	// Logger receives progress (a line per region loaded, per file split);
	// nothing if nil.
	Logger *slog.Logger
}

// Result says what Run did.
type Result struct {
	Files   int   // files loaded (halves of split files count, the files split do not)
	Bytes   int64 // their size
	Regions int   // region loads
	Splits  int   // files split at a region boundary
	Passes  int   // lookups of the regions (1 if no region split meanwhile)
}

// The properties Main takes with -D, as HBase's tool names them.
const (
	propCopy      = "always.copy.files"
	propIgnore    = "ignore.unmatched.families"
	propCreate    = "create.table"
	propRetries   = "hbase.bulkload.retries.number"
	propThreads   = "hbase.loadincremental.threads.max"
	defaultPasses = 10
)

// Main is `regionsrv bulkload`.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("bulkload", "[--zk HOST:PORT] [--copy] [-D key=value ...] DIR TABLE", stderr)
	zk := fs.String("zk", "127.0.0.1:2181", "the ZooKeeper quorum the server registered in (`host:port`)")
	copyFiles := fs.Bool("copy", false, "copy the files into the table, leaving them in DIR (default: move them)")
	verbose := fs.Bool("v", false, "log every region load and file split")
	var defines hbaseconf.Defines
	fs.Var(&defines, "D", "a property `key=value` (repeatable): "+strings.Join([]string{propCopy, propIgnore, propCreate, propRetries, propThreads}, ", "))
	if exit, ok := fs.Parse(hbaseconf.ExpandDefines(args)); !ok {
		return exit
	}
	if fs.NArg() != 2 {
		return fs.UsageError("want DIR TABLE, got %s", cli.DescribeArgs(fs.Args()))
	}
	o := Options{Dir: fs.Arg(0), Table: fs.Arg(1), Copy: *copyFiles}
	for _, kv := range defines {
		if err := o.set(kv[0], kv[1]); err != nil {
			return fs.UsageError("%v", err)
		}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	c, err := client.New(ctx, client.Options{ZKQuorum: *zk})
	if err != nil {
		return fs.Fail(errors.Wrapf(err, "connecting to the cluster at %s", *zk))
	}
	defer c.Close()
	start := time.Now()
	res, err := Run(ctx, c, o)
	if err != nil {
		return fs.Fail(err)
	}
	fmt.Fprintf(stdout, "loaded %d files (%d bytes) into %s in %d region loads; split %d files at region boundaries; %d lookups of the regions; took %s\n",
		res.Files, res.Bytes, o.Table, res.Regions, res.Splits, res.Passes, time.Since(start).Round(time.Millisecond))
	return cli.ExitOK
}

func (o *Options) set(key, value string) error {
	yes := func() (bool, error) {
		switch strings.ToLower(value) {
		case "yes", "true":
			return true, nil
		case "no", "false":
			return false, nil
		}
		return false, errors.Newf("-D %s=%s: want yes or no", key, value)
	}
	var err error
	switch key {
	case propCopy:
		o.Copy, err = yes()
	case propIgnore:
		o.IgnoreUnmatchedFamilies, err = yes()
	case propCreate:
		var create bool
		if create, err = yes(); err == nil && create {
			err = errors.Newf("-D %s=yes: the tool does not create tables; create %s first", key, o.Table)
		}
	case propRetries, propThreads:
		var n int
		if n, err = strconv.Atoi(value); err != nil || n < 0 {
			return errors.Newf("-D %s=%s: want a count", key, value)
		}
		if key == propThreads {
			o.Threads = n
		} else if o.Retries = n; n == 0 {
			o.Retries = -1 // HBase's 0: retry until done
		}
	default:
		return errors.Newf("unknown property %q (known: %s, %s, %s, %s, %s)", key, propCopy, propIgnore, propCreate, propRetries, propThreads)
	}
	return err
}

// item is one file to load into a family.
type item struct {
	family string
	path   string
}

// Run loads o.Dir into o.Table through c (see the package comment).
func Run(ctx context.Context, c *client.Client, o Options) (Result, error) {
	var res Result
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.Retries == 0 {
		o.Retries = defaultPasses
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return res, errors.Wrap(err, "bulkload")
	}
	td, err := c.TableDescriptor(ctx, o.Table)
	if err != nil {
		if client.IsException(err, "TableNotFoundException") {
			return res, errors.Newf("bulkload: table %s does not exist; create it (with its families and split keys) first", o.Table)
		}
		return res, err
	}
	blockSizes := map[string]int{}
	for _, f := range td.Families {
		blockSizes[f.Name] = hfile.DefaultBlockSize
		if v, err := strconv.Atoi(f.Attributes["BLOCKSIZE"]); err == nil && v > 0 {
			blockSizes[f.Name] = v
		}
	}
	queue, err := discover(dir, blockSizes, o)
	if err != nil {
		return res, err
	}
	if len(queue) == 0 {
		o.Logger.Warn("bulkload: no files to load: does the directory hold <family>/<hfile>?", "dir", dir)
		return res, nil
	}
	l := &loader{c: c, o: o, table: o.Table, blockSizes: blockSizes, res: &res}
	defer l.removeTmp()
	token, err := c.PrepareBulkLoad(ctx, o.Table)
	if err != nil {
		return res, errors.Wrap(err, "bulkload: preparing")
	}
	l.token = token
	defer func() {
		if err := c.CleanupBulkLoad(context.WithoutCancel(ctx), o.Table, token); err != nil {
			o.Logger.Warn("bulkload: cleaning up the staging directory", "token", token, "err", err)
		}
	}()
	for pass := 0; len(queue) > 0; pass++ {
		if pass > 0 {
			if o.Retries > 0 && pass > o.Retries {
				return res, errors.Newf("bulkload: %d files still do not fit the regions of %s after %d lookups; giving up (retry, or raise %s)",
					len(queue), o.Table, pass, propRetries)
			}
			o.Logger.Info("bulkload: regions changed since the lookup; looking again", "files", len(queue), "pass", pass+1)
		}
		res.Passes++
		regions, err := c.Regions(ctx, o.Table)
		if err != nil {
			return res, errors.Wrap(err, "bulkload: looking up the regions")
		}
		if regionsHook != nil {
			regions = regionsHook(regions, pass)
		}
		if err := checkChain(o.Table, regions); err != nil {
			return res, err
		}
		groups, err := l.groupOrSplit(queue, regions)
		if err != nil {
			return res, err
		}
		if queue, err = l.load(ctx, groups); err != nil {
			return res, err
		}
	}
	return res, nil
}

// regionsHook, if set (by tests), replaces the regions a pass looks up: a
// stale view, as if a region split after the lookup.
var regionsHook func(regions []client.RegionInfo, pass int) []client.RegionInfo

// discover lists dir's families and files, checking the families against
// the table's.
func discover(dir string, families map[string]int, o Options) ([]item, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, errors.Wrap(err, "bulkload")
	}
	var queue []item
	var unmatched []string
	for _, e := range entries {
		if !e.IsDir() || skipped(e.Name()) {
			continue
		}
		if _, ok := families[e.Name()]; !ok {
			unmatched = append(unmatched, e.Name())
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, errors.Wrap(err, "bulkload")
		}
		for _, f := range files {
			if f.IsDir() || skipped(f.Name()) {
				continue
			}
			p := filepath.Join(dir, e.Name(), f.Name())
			if !isHFile(p) {
				o.Logger.Warn("bulkload: not an HFile; skipped", "file", p)
				continue
			}
			queue = append(queue, item{family: e.Name(), path: p})
		}
	}
	if len(unmatched) > 0 && !o.IgnoreUnmatchedFamilies {
		var valid []string
		for f := range families {
			valid = append(valid, f)
		}
		sort.Strings(valid)
		return nil, errors.Newf("bulkload: unmatched family names in the files to load: %v; the families of %s are %v (-D %s=yes skips them)",
			unmatched, o.Table, valid, propIgnore)
	}
	return queue, nil
}

// skipped reports names HBase's tool passes over: _SUCCESS, _logs, hidden
// files and the tool's own .tmp.
func skipped(name string) bool { return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") }

// isHFile reports whether path has an HFile's trailer (HBase's
// HFile.isHFileFormat).
func isHFile(path string) bool {
	r, err := hfile.OpenFile(path, hfile.ReaderOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// checkChain checks that the regions cover the table's rows without a hole
// or an overlap (HBase's tool refuses to load into such a table too).
func checkChain(table string, regions []client.RegionInfo) error {
	if len(regions) == 0 {
		return errors.Newf("bulkload: table %s has no regions in hbase:meta", table)
	}
	if len(regions[0].StartKey) != 0 {
		return errors.Newf("bulkload: the first region of %s starts at %q, not at the table's start: hbase:meta has a hole", table, regions[0].StartKey)
	}
	for i := 1; i < len(regions); i++ {
		if !bytes.Equal(regions[i-1].EndKey, regions[i].StartKey) {
			return errors.Newf("bulkload: regions of %s end at %q and start at %q: hbase:meta has a hole or an overlap",
				table, regions[i-1].EndKey, regions[i].StartKey)
		}
	}
	if last := regions[len(regions)-1]; len(last.EndKey) != 0 {
		return errors.Newf("bulkload: the last region of %s ends at %q: hbase:meta has a hole", table, last.EndKey)
	}
	return nil
}

// loader is one Run's state.
type loader struct {
	c          *client.Client
	o          Options
	table      string
	token      string
	blockSizes map[string]int
	res        *Result
	tmpDirs    map[string]bool // .tmp directories made for split halves
}

// group is the files of one region.
type group struct {
	region client.RegionInfo
	row    []byte // a row of the region's files, to locate it by
	items  []item
}

// groupOrSplit assigns every file to the region of its first row, splitting
// those whose rows go past that region's end (HBase's groupOrSplit; the top
// half is assigned in turn, and split again if it straddles the next
// boundary too).
func (l *loader) groupOrSplit(queue []item, regions []client.RegionInfo) ([]*group, error) {
	byRegion := map[int]*group{}
	work := append([]item(nil), queue...)
	for len(work) > 0 {
		it := work[len(work)-1]
		work = work[:len(work)-1]
		first, last, n, err := bounds(it.path)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			l.o.Logger.Info("bulkload: no cells; skipped", "file", it.path)
			continue
		}
		// The region holding the first row: the last one starting at or
		// before it.
		i := sort.Search(len(regions), func(i int) bool { return bytes.Compare(regions[i].StartKey, first) > 0 }) - 1
		if i < 0 {
			return nil, errors.Newf("bulkload: no region of %s holds row %q of %s", l.table, first, it.path)
		}
		end := regions[i].EndKey
		if len(end) == 0 || bytes.Compare(last, end) < 0 {
			g := byRegion[i]
			if g == nil {
				g = &group{region: regions[i], row: first}
				byRegion[i] = g
			}
			if bytes.Compare(first, g.row) < 0 {
				g.row = first
			}
			g.items = append(g.items, it)
			continue
		}
		bottom, top, err := l.split(it, end)
		if err != nil {
			return nil, err
		}
		l.res.Splits++
		work = append(work, top, bottom)
	}
	out := make([]*group, 0, len(byRegion))
	for _, g := range byRegion {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].region.StartKey, out[j].region.StartKey) < 0 })
	return out, nil
}

// bounds returns an HFile's first and last rows and its cell count.
func bounds(path string) (first, last []byte, n uint64, _ error) {
	r, err := hfile.OpenFile(path, hfile.ReaderOptions{})
	if err != nil {
		return nil, nil, 0, errors.Wrap(err, "bulkload")
	}
	defer r.Close()
	if r.EntryCount() == 0 || r.FirstKey() == nil || r.LastKey() == nil {
		return nil, nil, 0, nil
	}
	return append([]byte(nil), r.FirstKey().Row()...), append([]byte(nil), r.LastKey().Row()...), r.EntryCount(), nil
}

// split writes it's rows below key and from key on to two new files (HBase's
// splitStoreFile: <name>.bottom and <name>.top in the family's .tmp).
func (l *loader) split(it item, key []byte) (bottom, top item, _ error) {
	tmp := filepath.Join(filepath.Dir(it.path), ".tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return item{}, item{}, errors.Wrap(err, "bulkload: splitting")
	}
	if l.tmpDirs == nil {
		l.tmpDirs = map[string]bool{}
	}
	l.tmpDirs[tmp] = true
	name := randomName()
	bottom = item{family: it.family, path: filepath.Join(tmp, name+".bottom")}
	top = item{family: it.family, path: filepath.Join(tmp, name+".top")}
	if err := SplitHFile(it.path, key, bottom.path, top.path, l.blockSizes[it.family]); err != nil {
		return item{}, item{}, err
	}
	l.o.Logger.Info("bulkload: split a file at a region boundary", "file", it.path, "at", encoding.FormatBytes(key),
		"bottom", bottom.path, "top", top.path)
	return bottom, top, nil
}

func randomName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// load loads each group into its region, Threads at once. It returns the
// items to retry: those of regions that split or moved meanwhile.
func (l *loader) load(ctx context.Context, groups []*group) ([]item, error) {
	var (
		mu    sync.Mutex
		retry []item
		first error
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, l.o.Threads)
	for _, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func(g *group) {
			defer wg.Done()
			defer func() { <-sem }()
			files := make([]client.BulkLoadFile, len(g.items))
			var size int64
			for i, it := range g.items {
				files[i] = client.BulkLoadFile{Family: it.family, Path: it.path}
				if st, err := os.Stat(it.path); err == nil {
					size += st.Size()
				}
			}
			loaded, err := l.c.BulkLoadHFiles(ctx, l.table, g.row, files, client.BulkLoadOptions{Token: l.token, CopyFiles: l.o.Copy})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && loaded:
				l.res.Files += len(files)
				l.res.Bytes += size
				l.res.Regions++
				l.o.Logger.Info("bulkload: loaded", "region", string(g.region.Name), "files", len(files), "bytes", size)
			case err == nil || regionMoved(err):
				// Recoverable, as HBase's tool treats it: the region split
				// or moved since the lookup.
				l.o.Logger.Info("bulkload: the files no longer fit their region; they go back in the queue",
					"region", string(g.region.Name), "files", len(files), "err", err)
				retry = append(retry, g.items...)
			default:
				if first == nil {
					first = errors.Wrapf(err, "bulkload: loading %d files into region %s", len(files), g.region.Name)
				}
			}
		}(g)
	}
	wg.Wait()
	return retry, first
}

// regionMoved reports whether err says the region is not (or no longer)
// where the load went.
func regionMoved(err error) bool {
	for _, class := range []string{"NotServingRegionException", "WrongRegionException", "RegionMovedException", "RegionOpeningException"} {
		if client.IsException(err, class) {
			return true
		}
	}
	return false
}

// removeTmp removes the split halves' directories (the halves loaded moved
// into the stores).
func (l *loader) removeTmp() {
	for d := range l.tmpDirs {
		if err := os.RemoveAll(d); err != nil {
			l.o.Logger.Warn("bulkload: removing split files", "dir", d, "err", err)
		}
	}
}
