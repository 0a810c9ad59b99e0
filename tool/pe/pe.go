package pe

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/tool/internal/cli"
	"github.com/regionkv/regionkv/wal"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Main runs `regionsrv pe` with args (the arguments after "pe"): it
// prints the summary (and the --json line) to stdout, and the progress bar,
// warnings and errors to stderr. It returns the exit status: 0; 1 if an
// operation failed (which stops the run); 2 for bad options; 130 if ctx was
// cancelled during the run, after printing the summary of what was done (the
// binary cancels it on SIGINT, and 130 is how a shell reports one).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code := parsePEOptions(args, stderr)
	if o == nil {
		return code
	}
	res, err := o.run(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "regionsrv pe: %s: %v\n", o.cmd.name, err)
		return 1
	}
	res.print(stdout, o.json)
	if res.interrupted {
		fmt.Fprintln(stderr, "regionsrv pe: interrupted")
		return 130
	}
	return 0
}

// peDefaultRows is the default --rows. HBase's is 1048576 (a gigabyte of
// 1000-byte values per client); ours is a tenth of that, so a laptop run
// with a few clients takes seconds and a few hundred megabytes.
const peDefaultRows = 100_000

// peMaxLatency caps the latency histograms; slower operations count as this.
const peMaxLatency = time.Hour

// peOptions are the parsed options of one pe run.
type peOptions struct {
	cmd          *peCommand
	clients      int
	rows         int64 // per client
	rowsSet      bool  // --rows was given
	valueSize    int
	families     []region.FamilyOptions
	columns      int
	durability   wal.Durability
	config       [][2]string // -D key=value, in order
	duration     time.Duration
	keySpace     int64
	distribution string
	caching      int  // --caching: accepted for HBase compatibility
	cacheBlocks  bool // --cacheBlocks: scans offer the blocks they read to the block cache
	json         bool
	seed         uint64
	dir          string
	cpuProfile   string
	memProfile   string
	zk           string // run against this cluster instead of an embedded region
	presplit     int
	flagSet      map[string]bool      // the flags given
	famTemplate  region.FamilyOptions // the family flags, before naming
}

// parsePEOptions parses pe's arguments. It returns nil and the exit code
// when the run should not start (2 for bad usage, 0 for -h).
func parsePEOptions(args []string, stderr io.Writer) (*peOptions, int) {
	fs := flag.NewFlagSet("pe", flag.ContinueOnError)
	// The flag package reports a bad flag and calls Usage, as it does for
	// -h; the problem and a pointer to --help are printed below instead
	// of the whole usage.
	fs.SetOutput(io.Discard)
	rows := fs.Int64("rows", peDefaultRows, "rows per client; the table holds rows × NCLIENTS rows (HBase's default: 1048576)")
	valueSize := fs.Int("valueSize", 1000, "bytes per value")
	blockEncoding := fs.String("blockEncoding", "NONE", "DATA_BLOCK_ENCODING of the families: NONE, PREFIX or FAST_DIFF")
	compress := fs.String("compress", "NONE", "COMPRESSION of the families: NONE, GZ, SNAPPY or ZSTD")
	families := fs.Int("families", 1, "number of column families, named info0, info1, ...")
	columns := fs.Int("columns", 1, "columns per family, qualifiers 0, 1, ...")
	writeToWAL := fs.Bool("writeToWAL", true, "log writes to the WAL; false writes with SKIP_WAL (-D hbase.wal.durability=... sets the level otherwise)")
	bloomFilter := fs.String("bloomFilter", "ROW", "BLOOMFILTER of the families: NONE, ROW or ROWCOL")
	inMemory := fs.Bool("inmemory", false, "IN_MEMORY of the families: in-memory priority in the block cache")
	var defines hbaseconf.Defines
	fs.Var(&defines, "D", "HBase configuration `key=value` for the region (repeatable), e.g. -D hbase.hregion.memstore.flush.size=67108864")
	duration := fs.Duration("duration", 0, "stop after this long (e.g. 10s); without an explicit --rows, clients run until then")
	keySpace := fs.Int64("keySpace", 0, "random commands pick among rows [0, keySpace) (default: rows × NCLIENTS); increment, append and checkAndPut pick at random among them")
	distribution := fs.String("requestDistribution", distUniform, "how random commands pick rows: uniform, zipfian (YCSB's, over the key space) or latest (zipfian, most recently written rows first)")
	caching := fs.Int("caching", 30, "scan caching (rows per RPC in HBase); accepted for compatibility: embedded scans have no RPCs to batch")
	cacheBlocks := fs.Bool("cacheBlocks", true, "scans offer the data blocks they read to the block cache (HBase's Scan.setCacheBlocks)")
	jsonOut := fs.Bool("json", false, "print one JSON object with the results on the last line")
	seed := fs.Uint64("seed", 0, "random seed for row choice and values (default: from the clock; printed in the summary)")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the clients' run (not the open or final flush) to this `file`, for go tool pprof")
	memProfile := fs.String("memprofile", "", "write a Go allocation profile (allocs: every allocation since the process started, sampled) to this `file` at the end of the clients' run, for go tool pprof")
	zk := fs.String("zk", "", "run against the cluster registered in ZooKeeper at `host:port` (table "+peTableName+", created by write commands) instead of an embedded region")
	presplit := fs.Int("presplit", 0, "with --zk: create "+peTableName+" pre-split into this many regions")
	dir := fs.String("dir", "", "region directory; reused by later runs (default: a temporary directory, removed at the end)")
	fs.Bool("nomapred", true, "accepted for compatibility with hbase pe --nomapred: pe always runs its clients in-process")
	fs.Usage = func() {}
	bad := func(format string, args ...any) (*peOptions, int) {
		fmt.Fprintf(stderr, "regionsrv pe: "+format+"\n", args...)
		fmt.Fprintln(stderr, "Run 'regionsrv pe --help' for usage.")
		return nil, 2
	}

	// Options may come before or after COMMAND NCLIENTS.
	var positional []string
	for rest := hbaseconf.ExpandDefines(args); ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				peUsage(stderr, fs)
				return nil, 0
			}
			return bad("%v", err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		positional, rest = append(positional, rest[0]), rest[1:]
	}
	if len(positional) != 2 {
		return bad("want COMMAND NCLIENTS, got %s", cli.DescribeArgs(positional))
	}
	o := &peOptions{
		cmd: lookupPECommand(positional[0]), rows: *rows, valueSize: *valueSize, columns: *columns,
		duration: *duration, keySpace: *keySpace, distribution: strings.ToLower(*distribution),
		caching: *caching, cacheBlocks: *cacheBlocks, json: *jsonOut, seed: *seed, dir: *dir, config: defines,
		cpuProfile: *cpuProfile, memProfile: *memProfile, zk: *zk, presplit: *presplit,
	}
	if o.cmd == nil {
		return bad("unknown command %q", positional[0])
	}
	var err error
	if o.clients, err = strconv.Atoi(positional[1]); err != nil || o.clients < 1 {
		return bad("NCLIENTS must be a positive integer, got %q", positional[1])
	}
	o.flagSet = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.flagSet[f.Name] = true })
	o.rowsSet = o.flagSet["rows"]
	if o.cmd.name == "metaWrite" && o.zk != "" {
		// The server opens a real region per meta row: keep the default
		// small and refuse what it cannot hold.
		if !o.rowsSet {
			o.rows = max(peMetaDefaultRemoteRegions/int64(o.clients), 1)
		}
		if o.rows*int64(o.clients) > peMetaMaxRemoteRegions {
			return bad("metaWrite with --zk creates one server region per meta row: at most %d (--rows × NCLIENTS)", peMetaMaxRemoteRegions)
		}
	}
	switch {
	case o.rows < 1:
		return bad("--rows must be at least 1")
	case o.rows > math.MaxInt64/int64(o.clients):
		return bad("--rows × NCLIENTS overflows")
	case o.valueSize < 1:
		return bad("--valueSize must be at least 1")
	case *families < 1 || *families > 100:
		return bad("--families must be 1..100")
	case o.columns < 1:
		return bad("--columns must be at least 1")
	case o.duration < 0:
		return bad("--duration must not be negative")
	case o.keySpace < 0:
		return bad("--keySpace must not be negative")
	case o.caching < 1:
		return bad("--caching must be at least 1")
	case o.cmd.workload != nil && (o.keySpace != 0 || o.distribution != distUniform):
		return bad("%s sets its own request distribution and works on the rows × NCLIENTS rows of the table: --keySpace and --requestDistribution do not apply", o.cmd.name)
	case o.cmd.pick != pickRandom && o.cmd.pick != pickOverlapping && (o.keySpace != 0 || o.distribution != distUniform):
		return bad("--keySpace and --requestDistribution apply to random commands, not %s", o.cmd.name)
	}
	if o.cmd.warnDefaultRows && !o.rowsSet && o.duration == 0 {
		fmt.Fprintf(stderr, "regionsrv pe: warning: --rows not given: each client runs %d %s operations, each a scan of the whole table; this could take a very long time\n",
			o.rows, o.cmd.name)
	}
	if _, err := newKeyChooser(o.distribution, 1, 1, 1); err != nil {
		return bad("--requestDistribution: %v", err)
	}
	fam := region.FamilyOptions{InMemory: *inMemory}
	if fam.Encoding, err = encoding.ParseDataBlockEncoding(*blockEncoding); err == nil {
		_, err = encoding.NewBlockEncoder(fam.Encoding, encoding.BlockFormat{})
	}
	if err != nil {
		return bad("--blockEncoding: %v", err)
	}
	if fam.Compression, err = hfile.ParseCompression(*compress); err == nil {
		err = fam.Compression.Supported()
	}
	if err != nil {
		return bad("--compress: %v", err)
	}
	if fam.BloomFilter, err = region.ParseBloomFilter(*bloomFilter); err != nil {
		return bad("--bloomFilter: %v", err)
	}
	o.famTemplate = fam
	for i := 0; i < *families; i++ {
		f := fam
		f.Name = peFamilyName(i)
		o.families = append(o.families, f)
	}
	o.durability = wal.UseDefault
	if !*writeToWAL {
		o.durability = wal.SkipWAL
	}
	var scratch region.Options
	bc := blockcache.DefaultOptions()
	for _, kv := range o.config {
		if err := applyConfig(&scratch, &bc, kv[0], kv[1]); err != nil {
			return bad("-D %s=%s: %v", kv[0], kv[1], err)
		}
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	return o, 0
}

func peUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: regionsrv pe [options] COMMAND NCLIENTS")
	fmt.Fprintln(w, "Runs NCLIENTS concurrent clients of COMMAND against an embedded region (like `hbase pe --nomapred`).")
	fmt.Fprintln(w, "commands:")
	for _, c := range peCommands {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "options:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// applyConfig gives one -D property to the component the registry says
// reads it: the region or the block cache. pe runs no server, so the
// server's properties are refused rather than ignored.
func applyConfig(ro *region.Options, bc *blockcache.Options, key, value string) error {
	p, ok := hbaseconf.Lookup(key)
	if !ok {
		return errors.Newf("unknown property %q", key)
	}
	switch p.Component {
	case hbaseconf.Region:
		return ro.SetConfig(key, value)
	case hbaseconf.BlockCache:
		return bc.SetConfig(key, value)
	}
	return errors.Newf("property %q is read by %s, which pe does not run", key, p.Component)
}

// regionOptions returns the options to open TestTable's region with.
func (o *peOptions) regionOptions() region.Options {
	ro := region.Options{Table: "TestTable", Families: o.families}
	var bc blockcache.Options
	for _, kv := range o.config {
		_ = applyConfig(&ro, &bc, kv[0], kv[1]) // validated by parsePEOptions
	}
	return ro
}

// blockCacheOptions returns the block cache's options: HBase's defaults
// (hfile.block.cache.size 0.4 of the memory budget) and the -D settings.
func (o *peOptions) blockCacheOptions() blockcache.Options {
	bc := blockcache.DefaultOptions()
	var ro region.Options
	for _, kv := range o.config {
		_ = applyConfig(&ro, &bc, kv[0], kv[1]) // validated by parsePEOptions
	}
	return bc
}

// peResult is what a run measured.
type peResult struct {
	command string
	clients int
	ops     int64
	elapsed time.Duration
	flush   time.Duration // the final flush of write commands
	// The compactions that flush asked for, run before closing, and the
	// store files before and after them.
	compactions             int
	compact                 time.Duration
	filesBefore, filesAfter int
	bytesBefore, bytesAfter int64
	hist                    *hdrhistogram.Histogram
	stats                   region.Stats
	blockCache              map[string]float64 // the block cache's metrics, nil without one
	seed                    uint64
	stopped                 string // why the run ended before its rows were done, if it did
	interrupted             bool
	rows                    int64          // rows the operations read (scan commands)
	countsRows              bool           // the command reports rows read
	remote                  bool           // ran against a server (--zk): no region stats
	kinds                   []peKindResult // per operation type (YCSB workloads)
	// Go heap allocation during the clients' run (all goroutines, the
	// block cache's included): objects, bytes, and GC cycles.
	mallocs, allocBytes uint64
	gcCycles            uint32
}

// peKindResult is the latency of one operation type of a command that
// mixes several.
type peKindResult struct {
	name string
	hist *hdrhistogram.Histogram
}

// run opens the region, runs the clients and flushes.
func (o *peOptions) run(ctx context.Context, stderr io.Writer) (res *peResult, err error) {
	var (
		store  peStore
		remote *remoteStore
		r      *region.Region
		cache  *region.Cache
		closed bool
	)
	if o.zk != "" {
		rs, c, err := openRemote(ctx, o.zk, o, stderr)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		rs.timeout = max(rs.timeout, 2*o.duration)
		if o.cmd.meta && o.cmd.write {
			return o.runRemoteMetaWrite(ctx, rs)
		}
		store = rs
		remote = rs
	} else {
		dir := o.dir
		if dir == "" {
			if dir, err = os.MkdirTemp("", "regionsrv-pe-"); err != nil {
				return nil, err
			}
			defer os.RemoveAll(dir)
		}
		ro := o.regionOptions()
		if o.cmd.meta {
			ro = o.metaRegionOptions()
		}
		if o.cmd.read {
			// Read the table as it was written: keep its stored family settings.
			if _, err := os.Stat(filepath.Join(dir, ".regioninfo")); err == nil {
				ro.Families = nil
			}
		}
		if bc := o.blockCacheOptions(); bc.CacheSize() > 0 {
			c, err := region.NewCacheWithOptions(bc)
			if err != nil {
				return nil, errors.Wrap(err, "block cache")
			}
			defer c.Close()
			cache = c
			ro.Cache = c
		}
		if r, err = region.Open(dir, ro); err != nil {
			return nil, errors.Wrapf(err, "opening the region in %s", dir)
		}
		defer func() {
			if !closed {
				_ = r.Close() // the run already failed; report that error
			}
		}()
		if o.cmd.read {
			if st := r.Stats(); st.StoreFiles == 0 && st.MemStoreSize == 0 {
				if o.dir == "" {
					return nil, errors.New("no table to read: give the --dir of an earlier write run (e.g. sequentialWrite with the same --rows and NCLIENTS)")
				}
				return nil, errors.Newf("the table in %s is empty: run a write command (e.g. sequentialWrite) with the same --dir, --rows and NCLIENTS first", dir)
			}
		}
		store = embeddedStore{r}
	}
	t := &peTable{
		r: store, cmd: o.cmd, valueSize: o.valueSize, durability: o.durability, rows: o.rows,
		tableRows: o.rows * int64(o.clients), cacheBlocks: o.cacheBlocks,
		randomCAS: o.keySpace != 0 || o.distribution != distUniform,
	}
	for _, f := range o.families {
		t.families = append(t.families, []byte(f.Name))
	}
	for i := 0; i < o.columns; i++ {
		t.qualifiers = append(t.qualifiers, []byte(strconv.Itoa(i)))
	}
	for _, f := range t.families {
		for _, q := range t.qualifiers {
			t.columns = append(t.columns, region.Column{Family: f, Qualifier: q})
		}
	}
	keySpace := o.keySpace
	if keySpace == 0 {
		keySpace = o.rows * int64(o.clients)
	}
	if o.cmd.meta {
		if t.meta, err = o.openMeta(ctx, r, remote); err != nil {
			return nil, err
		}
		if o.keySpace == 0 && t.meta.regions > 0 {
			keySpace = t.meta.regions // look up the regions there are
		}
	}
	if t.keys, err = newKeyChooser(o.distribution, keySpace, o.rows, o.clients); err != nil {
		return nil, err
	}

	res = &peResult{command: o.cmd.name, clients: o.clients, seed: o.seed}
	limit := o.rows // operations per client; -1 runs until --duration
	if o.duration > 0 && !o.rowsSet {
		limit = -1
	}
	if o.cmd.workload != nil {
		t.ycsb = newYCSBState(o.cmd.workload, t, o.clients, limit)
	}
	clients := make([]*peWorker, o.clients)
	for i := range clients {
		clients[i] = &peWorker{
			peClient: peClient{t: t, id: int64(i), rng: rand.New(rand.NewPCG(o.seed, uint64(i)))},
			hist:     newPEHistogram(),
		}
		for range o.cmd.kinds() {
			clients[i].kindHists = append(clients[i].kindHists, newPEHistogram())
		}
	}
	var (
		stop     atomic.Bool
		misses   atomic.Int64
		errOnce  sync.Once
		firstErr error
		why      atomic.Pointer[string]
	)
	halt := func(reason string) {
		why.CompareAndSwap(nil, &reason)
		stop.Store(true)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-runCtx.Done()
		if ctx.Err() != nil {
			halt("interrupted")
		}
	}()

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, errors.Wrap(err, "--cpuprofile")
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Wrap(err, "--cpuprofile")
		}
		defer pprof.StopCPUProfile() // if the run fails; stopped below otherwise
	}
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	if o.duration > 0 {
		timer := time.AfterFunc(o.duration, func() { halt("--duration " + o.duration.String() + " reached") })
		defer timer.Stop()
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.run(limit, &stop, &misses); err != nil {
				errOnce.Do(func() { firstErr = err })
				halt("error")
			}
		}()
	}
	progressDone := o.progress(stderr, clients, limit)
	wg.Wait()
	res.elapsed = time.Since(start)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	res.mallocs, res.allocBytes, res.gcCycles = ms1.Mallocs-ms0.Mallocs, ms1.TotalAlloc-ms0.TotalAlloc, ms1.NumGC-ms0.NumGC
	progressDone()
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if o.memProfile != "" {
		if err := writeAllocsProfile(o.memProfile); err != nil {
			return nil, errors.Wrap(err, "--memprofile")
		}
	}

	for _, c := range clients {
		res.ops += c.ops.Load()
		res.rows += c.rowsRead
	}
	if firstErr != nil {
		if errors.Is(firstErr, errMiss) && o.cmd.meta {
			return nil, errors.Newf("%v (%d of %d lookups found no region containing the key; was hbase:meta written by metaWrite, and is --keySpace at most its region count?)",
				firstErr, misses.Load(), res.ops+misses.Load())
		}
		if errors.Is(firstErr, errMiss) {
			return nil, errors.Newf("%v (%d of %d reads missed; was the table written with the same --rows, NCLIENTS, --families and --columns?)",
				firstErr, misses.Load(), res.ops+misses.Load())
		}
		return nil, firstErr
	}
	if p := why.Load(); p != nil {
		res.stopped = *p
		res.interrupted = *p == "interrupted"
	}
	res.hist = clients[0].hist
	for _, c := range clients[1:] {
		res.hist.Merge(c.hist)
	}
	for k, name := range o.cmd.kinds() {
		h := clients[0].kindHists[k]
		for _, c := range clients[1:] {
			h.Merge(c.kindHists[k])
		}
		res.kinds = append(res.kinds, peKindResult{name: name, hist: h})
	}
	res.countsRows = o.cmd.countsRows
	if r == nil {
		// A server flushes on its own schedule and owns its block cache.
		res.remote = true
		return res, nil
	}
	if o.cmd.write {
		flushStart := time.Now()
		if err := r.Flush(); err != nil {
			return nil, errors.Wrap(err, "flushing")
		}
		res.flush = time.Since(flushStart)
		// What a server would do next: run the compactions the flush asks
		// for, so that the next run on --dir starts from the files a
		// running server would settle on, and does not compact while it
		// measures.
		st := r.Stats()
		res.filesBefore, res.bytesBefore = st.StoreFiles, st.StoreFileSize
		compactStart := time.Now()
		done, err := r.CompactNeeded()
		if err != nil {
			return nil, errors.Wrap(err, "compacting after the flush")
		}
		res.compactions, res.compact = len(done), time.Since(compactStart)
	}
	res.stats = r.Stats()
	res.filesAfter, res.bytesAfter = res.stats.StoreFiles, res.stats.StoreFileSize
	if cache != nil {
		res.blockCache = cache.Stats().Map()
	}
	closed = true
	if err := r.Close(); err != nil {
		return nil, errors.Wrap(err, "closing the region")
	}
	return res, nil
}

// writeAllocsProfile writes the allocs profile to path.
func writeAllocsProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newPEHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(peMaxLatency), 3) }

// peWorker is a client with its measurements.
type peWorker struct {
	peClient
	ops       atomic.Int64 // read by the progress bar
	hist      *hdrhistogram.Histogram
	kindHists []*hdrhistogram.Histogram // per operation type, for commands with several (cmd.kinds)
}

// run performs up to limit operations (limit < 0: until stopped).
func (w *peWorker) run(limit int64, stop *atomic.Bool, misses *atomic.Int64) error {
	defer w.close()
	for n := int64(0); limit < 0 || n < limit; n++ {
		if stop.Load() {
			return nil
		}
		row := w.row(n)
		w.kind = 0
		took, err := w.t.cmd.op(&w.peClient, row)
		if err != nil {
			if errors.Is(err, errMiss) {
				misses.Add(1)
			}
			switch {
			case w.t.cmd.pick == pickNone: // the operation names its rows
				return errors.Wrapf(err, "client %d", w.id)
			case w.t.meta != nil:
				return errors.Wrapf(err, "client %d, region %d (key %s)", w.id, row, peMetaKey(row, w.t.meta.width))
			}
			return errors.Wrapf(err, "client %d, row %s", w.id, peRowKey(row))
		}
		ns := min(max(took.Nanoseconds(), 1), int64(peMaxLatency))
		_ = w.hist.RecordValue(ns)
		if w.kindHists != nil {
			_ = w.kindHists[w.kind].RecordValue(ns)
		}
		w.ops.Add(1)
	}
	return nil
}

// progress draws a progress bar on stderr while the clients run, if stderr
// is a terminal. The returned function stops and clears it.
func (o *peOptions) progress(stderr io.Writer, clients []*peWorker, limit int64) func() {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	total := int64(-1)
	if limit >= 0 {
		total = limit * int64(len(clients))
	}
	bar := newProgressBar(stderr, o.cmd.name, total)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				_ = bar.Clear()
				_ = bar.Exit()
				return
			case <-tick.C:
				var n int64
				for _, c := range clients {
					n += c.ops.Load()
				}
				_ = bar.Set64(n)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// newProgressBar returns pe's progress bar of total operations (-1:
// unknown), started now: its rate is the operations since this call over
// the time since, from the first frame on. (Started by its first frame, it
// would divide the operations done before that frame by the microseconds
// the frame takes.)
func newProgressBar(w io.Writer, name string, total int64) *progressbar.ProgressBar {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("ops"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	bar.StartWithoutRender()
	return bar
}

// peJSON is the --json line; its keys are part of pe's stable interface
// (docs/design.md, "Command line").
type peJSON struct {
	Command    string         `json:"command"`
	Clients    int            `json:"clients"`
	Ops        int64          `json:"ops"`
	Seconds    float64        `json:"seconds"`
	OpsPerSec  float64        `json:"opsPerSec"`
	LatencyUs  peLatency      `json:"latencyUs"`
	BlockCache map[string]any `json:"blockCache"` // the block cache's metrics; empty without a cache
	// Rows is the number of rows the operations read, for commands whose
	// operation is a whole scan (scanRange*, filterScan, YCSB workloads).
	Rows *int64 `json:"rows,omitempty"`
	// OpsByType breaks the operations of a command that mixes several
	// types down by type, named as YCSB names them (READ, UPDATE, INSERT,
	// SCAN, READ-MODIFY-WRITE).
	OpsByType map[string]peKindJSON `json:"opsByType,omitempty"`
	// AllocsPerOp and AllocBytesPerOp are the Go heap allocations of the
	// whole process during the run (runtime.MemStats), per operation;
	// GCCycles counts the garbage collections during the run.
	AllocsPerOp     float64 `json:"allocsPerOp"`
	AllocBytesPerOp float64 `json:"allocBytesPerOp"`
	GCCycles        uint32  `json:"gcCycles"`
	// StoreFiles is what an embedded write command left: the store files
	// after its final flush and after the compactions that flush asked for.
	StoreFiles *peStoreFilesJSON `json:"storeFiles,omitempty"`
}

// peStoreFilesJSON is the store files a write command left.
type peStoreFilesJSON struct {
	AfterFlush        int     `json:"afterFlush"`
	AfterFlushBytes   int64   `json:"afterFlushBytes"`
	Compactions       int     `json:"compactions"`
	CompactionSeconds float64 `json:"compactionSeconds"`
	AfterCompaction   int     `json:"afterCompaction"`
	AfterCompactBytes int64   `json:"afterCompactionBytes"`
}

// peKindJSON is one operation type of a mixed command.
type peKindJSON struct {
	Ops       int64     `json:"ops"`
	OpsPerSec float64   `json:"opsPerSec"`
	LatencyUs peLatency `json:"latencyUs"`
}

// peLatency holds latency percentiles in microseconds.
type peLatency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func (r *peResult) latency() peLatency { return histLatency(r.hist) }

func histLatency(h *hdrhistogram.Histogram) peLatency {
	us := func(ns int64) float64 { return math.Round(float64(ns)/100) / 10 }
	if h.TotalCount() == 0 {
		return peLatency{}
	}
	return peLatency{
		P50: us(h.ValueAtPercentile(50)), P95: us(h.ValueAtPercentile(95)),
		P99: us(h.ValueAtPercentile(99)), P999: us(h.ValueAtPercentile(99.9)),
		Max: us(h.Max()),
	}
}

func (r *peResult) opsPerSec() float64 { return r.rate(r.ops) }

// perOp returns n per operation, rounded to 0.1 (0 without operations).
func (r *peResult) perOp(n uint64) float64 {
	if r.ops <= 0 {
		return 0
	}
	return math.Round(float64(n)/float64(r.ops)*10) / 10
}

// rate returns n per second of the run, rounded to 0.1.
func (r *peResult) rate(n int64) float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return math.Round(float64(n)/r.elapsed.Seconds()*10) / 10
}

// print writes the summary and, with asJSON, the JSON line last.
func (r *peResult) print(w io.Writer, asJSON bool) {
	lat := r.latency()
	fmt.Fprintf(w, "%s: %d clients, %d ops in %.3fs: %.1f ops/s", r.command, r.clients, r.ops, r.elapsed.Seconds(), r.opsPerSec())
	if r.stopped != "" {
		fmt.Fprintf(w, " (%s)", r.stopped)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "latency µs: p50 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", lat.P50, lat.P95, lat.P99, lat.P999, lat.Max)
	for _, k := range r.kinds {
		kl := histLatency(k.hist)
		fmt.Fprintf(w, "  %-19s %d ops, %.1f ops/s; latency µs: p50 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
			k.name+":", k.hist.TotalCount(), r.rate(k.hist.TotalCount()), kl.P50, kl.P95, kl.P99, kl.P999, kl.Max)
	}
	if r.countsRows {
		avg := 0.0
		if r.ops > 0 {
			avg = float64(r.rows) / float64(r.ops)
		}
		fmt.Fprintf(w, "rows read: %d (%.1f per op, %.1f rows/s)\n", r.rows, avg, r.rate(r.rows))
	}
	if r.flush > 0 {
		fmt.Fprintf(w, "flush: %.3fs\n", r.flush.Seconds())
		if r.compactions > 0 {
			fmt.Fprintf(w, "compactions after the flush: %d in %.3fs; store files %d (%d bytes) → %d (%d bytes)\n",
				r.compactions, r.compact.Seconds(), r.filesBefore, r.bytesBefore, r.filesAfter, r.bytesAfter)
		}
	}
	allocs, bytes := r.perOp(r.mallocs), r.perOp(r.allocBytes)
	fmt.Fprintf(w, "go heap: %.1f allocations, %.0f bytes per op; %d GC cycles\n", allocs, bytes, r.gcCycles)
	if !r.remote {
		fmt.Fprintf(w, "region: %+v\n", r.stats)
	}
	if r.blockCache != nil {
		bc := r.blockCache
		fmt.Fprintf(w, "block cache: hits %.0f, misses %.0f, hit ratio %.3f, evictions %.0f, size %.0f bytes in %.0f blocks, caching %.0f%% of data blocks\n",
			bc["blockCacheHitCount"], bc["blockCacheMissCount"], bc["blockCacheHitRatio"], bc["blockCacheEvictionCount"],
			bc["blockCacheSize"], bc["blockCacheCount"], bc["cacheDataBlockPercent"])
	}
	fmt.Fprintf(w, "seed: %d\n", r.seed)
	if !asJSON {
		return
	}
	j := peJSON{
		Command: r.command, Clients: r.clients, Ops: r.ops,
		Seconds: math.Round(r.elapsed.Seconds()*1e6) / 1e6, OpsPerSec: r.opsPerSec(),
		LatencyUs: lat, BlockCache: map[string]any{},
		AllocsPerOp: allocs, AllocBytesPerOp: bytes, GCCycles: r.gcCycles,
	}
	for k, v := range r.blockCache {
		j.BlockCache[k] = v
	}
	if r.flush > 0 {
		j.StoreFiles = &peStoreFilesJSON{AfterFlush: r.filesBefore, AfterFlushBytes: r.bytesBefore,
			Compactions: r.compactions, CompactionSeconds: math.Round(r.compact.Seconds()*1e6) / 1e6,
			AfterCompaction: r.filesAfter, AfterCompactBytes: r.bytesAfter}
	}
	if r.countsRows {
		j.Rows = &r.rows
	}
	if len(r.kinds) > 0 {
		j.OpsByType = map[string]peKindJSON{}
		for _, k := range r.kinds {
			j.OpsByType[k.name] = peKindJSON{Ops: k.hist.TotalCount(), OpsPerSec: r.rate(k.hist.TotalCount()), LatencyUs: histLatency(k.hist)}
		}
	}
	b, err := json.Marshal(j)
	if err != nil { // cannot happen: every field marshals
		panic(errors.AssertionFailedf("pe: marshalling the result: %v", err))
	}
	fmt.Fprintln(w, string(b))
}
