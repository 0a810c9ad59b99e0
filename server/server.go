package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/wal"
	"google.golang.org/protobuf/proto"
)

// Server is a region server that is also its own master: it hosts
// hbase:meta, hbase:namespace and every user region, and serves
// ClientService and MasterService on one port.
type Server struct {
	cfg   Config
	log   *slog.Logger
	cache *region.Cache // shared by every region; nil without one
	// fs is what every file of the server goes through (Config.FS).
	fs region.FS
	// memLimit is the global memstore limit the user regions share;
	// compactions the compaction capacity and rate every region shares.
	memLimit    *region.MemstoreLimit
	compactions *region.CompactionPool
	// fatal receives the error that leaves the server unable to serve
	// (its RPC listener failed); Run shuts down and exits on it.
	fatal     chan error
	rpc       *ipc.Server
	ln        net.Listener
	info      *http.Server
	infoLn    net.Listener
	zk        *zkRegistration
	lockFile  *os.File
	startCode uint64
	clusterID string
	metrics   *metrics

	mu      sync.RWMutex
	tables  map[string]*table        // by TableName.String()
	regions map[string]*hostedRegion // by region name
	encoded map[string]*hostedRegion // by encoded name
	meta    *hostedRegion

	ddl       sync.Mutex // serializes admin operations
	lastRegID uint64     // guarded by ddl
	// namespaces are hbase:namespace's rows, by name; guarded by mu,
	// changed under ddl too.
	namespaces map[string]*hbasepb.NamespaceDescriptor

	// lastMetaDelete is the timestamp of the newest delete marker the
	// server wrote to hbase:meta (see metaTime).
	lastMetaDelete atomic.Int64

	scanners *scannerLeases
	procs    procedures
	balancer atomic.Bool
	// The split and merge switches (SetSplitOrMergeEnabled).
	splitOn, mergeOn atomic.Bool
	splitPolicy      splitPolicy // hbase.regionserver.region.split.policy
	// parents are the split regions and merges the merged ones whose
	// parents' files may still be referenced, by region name; guarded by
	// ddl. pendingParents counts both, for the flush path to read.
	parents        map[string]*splitParent
	merges         map[string]*mergedRegion
	pendingParents atomic.Int64
	// splitReq carries regions to check for a split, janitorReq wakes the
	// janitor, to the background worker; stopBG stops it.
	splitReq   chan *hostedRegion
	janitorReq chan struct{}
	stopBG     chan struct{}
	closed     atomic.Bool
	wg         sync.WaitGroup
}

// table is a table's descriptor and regions.
type table struct {
	name TableName
	// desc is replaced whole by the alter operations (under Server.ddl)
	// and read by every request, so it is atomic.
	desc atomic.Pointer[tableDesc]
	// state is written by admin operations (under Server.ddl) and read by
	// every request that finds a closed region, so it is atomic.
	state   atomic.Int32    // hbasepb.TableState_State
	regions []*hostedRegion // sorted by start key
}

// tableDesc is a table's schema as clients gave it (what .tabledesc holds
// and GetTableDescriptors returns) and its families as the regions take
// them. Neither is modified once published.
type tableDesc struct {
	schema   *hbasepb.TableSchema
	families []region.FamilyOptions
}

func newTable(name TableName, schema *hbasepb.TableSchema, fams []region.FamilyOptions) *table {
	t := &table{name: name}
	t.desc.Store(&tableDesc{schema: schema, families: fams})
	return t
}

func (t *table) schema() *hbasepb.TableSchema { return t.desc.Load().schema }

func (t *table) families() []region.FamilyOptions { return t.desc.Load().families }

func (t *table) getState() hbasepb.TableState_State {
	return hbasepb.TableState_State(t.state.Load())
}

func (t *table) setState(st hbasepb.TableState_State) { t.state.Store(int32(st)) }

// hostedRegion is one region of a table, open or not.
type hostedRegion struct {
	info  RegionInfo
	name  []byte
	table *table
	dir   string
	// r is nil while the table is disabled, or while the region is
	// FAILED_OPEN: then openErr says why.
	r       atomic.Pointer[region.Region]
	openErr atomic.Pointer[string]
	// fresh is set on a region being created (a new table's, or one whose
	// creation a crash cut short, its table still ENABLING): only such a
	// region may be opened without its directory (region.Options.MustExist).
	// Read and written by openRegion, under Server.ddl or before serving.
	fresh bool
	// Request counters for metrics.
	reads, writes atomic.Int64
	// Compactions CompactRegion asked for that have not finished (they
	// run in the background, as HBase's do), for GetRegionInfo.
	minorRequested, majorRequested atomic.Int32
}

// failedOpen returns why hr did not open, "" if it is not FAILED_OPEN (or
// hr is nil).
func (hr *hostedRegion) failedOpen() string {
	if hr == nil {
		return ""
	}
	if why := hr.openErr.Load(); why != nil {
		return *why
	}
	return ""
}

var metaFamilies = []region.FamilyOptions{
	{Name: "info", MaxVersions: 3, InMemory: true, BlockSize: 8 << 10},
	{Name: "table", MaxVersions: 3, InMemory: true, BlockSize: 8 << 10},
}

var namespaceFamilies = []region.FamilyOptions{{Name: "info", MaxVersions: 10, InMemory: true}}

// Meta columns.
var (
	famInfo           = []byte("info")
	famTable          = []byte("table")
	colRegionInfo     = []byte("regioninfo")
	colServer         = []byte("server")
	colServerStart    = []byte("serverstartcode")
	colSeqnumOpen     = []byte("seqnumDuringOpen")
	colState          = []byte("state")
	colSn             = []byte("sn")
	colNamespaceDescr = []byte("d")
)

// Start opens the catalog and every enabled table in cfg.DataDir, listens,
// registers in ZooKeeper (if a quorum is configured) and serves until
// Shutdown.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if cfg.DataDir == "" {
		return nil, errors.New("server: no data directory (hbase.rootdir)")
	}
	s := &Server{cfg: cfg, log: cfg.Logger, tables: map[string]*table{}, regions: map[string]*hostedRegion{},
		encoded: map[string]*hostedRegion{}, namespaces: map[string]*hbasepb.NamespaceDescriptor{}, fatal: make(chan error, 1),
		parents: map[string]*splitParent{}, merges: map[string]*mergedRegion{},
		splitReq: make(chan *hostedRegion, 64), janitorReq: make(chan struct{}, 1), stopBG: make(chan struct{})}
	s.balancer.Store(true)
	ok := false
	defer func() {
		if !ok {
			s.closeAll()
		}
	}()
	// The lock is always on the operating system's filesystem; the data
	// goes through cfg.FS.
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, errors.Wrap(err, "server: creating data directory")
	}
	if err := s.lockDataDir(); err != nil {
		return nil, err
	}
	s.fs = cfg.FS
	if err := vfs.MkdirAllSync(s.fs, cfg.DataDir, 0o755); err != nil {
		return nil, errors.Wrap(err, "server: creating data directory")
	}
	if cfg.BlockCache.CacheSize() > 0 {
		c, err := region.NewCacheWithOptions(cfg.BlockCache)
		if err != nil {
			return nil, errors.Wrap(err, "server: block cache")
		}
		s.cache = c
	}
	limit := int64(cfg.GlobalMemstore * float64(cfg.BlockCache.Budget()))
	memLimit, err := region.NewMemstoreLimit(max(limit, 1<<20), cfg.GlobalMemstoreLower)
	if err != nil {
		return nil, errors.Wrap(err, "server: global memstore limit")
	}
	s.memLimit = memLimit
	rate := cfg.Region.CompactionThroughput
	if rate == 0 {
		rate = region.DefaultCompactionThroughput
	}
	s.compactions = region.NewCompactionPool(cfg.CompactionThreadsSmall+cfg.CompactionThreadsLarge, rate)
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, errors.Wrapf(err, "server: listening on hbase.regionserver.port %d", cfg.Port)
	}
	s.ln = ln
	s.cfg.Port = ln.Addr().(*net.TCPAddr).Port
	s.startCode = uint64(time.Now().UnixMilli())
	if err := s.loadClusterID(); err != nil {
		return nil, err
	}
	if s.splitPolicy, err = parseSplitPolicy(cfg.SplitPolicy); err != nil {
		return nil, errors.Wrap(err, "server: hbase.regionserver.region.split.policy")
	}
	if err := s.loadSwitches(); err != nil {
		return nil, err
	}
	if err := s.prepareSnapshots(); err != nil {
		return nil, err
	}
	if err := s.openCatalog(); err != nil {
		return nil, err
	}
	s.scanners = newScannerLeases(cfg.ScannerTimeout, s.log)
	s.metrics = newMetrics(s)
	s.rpc = &ipc.Server{Handler: s, MaxRequestSize: cfg.MaxRequestSize, Logger: s.log,
		MaxQueueBytes: cfg.MaxCallQueueBytes, IdleTimeout: 2 * cfg.ConnMaxIdle, IdleThreshold: cfg.IdleThreshold,
		MaxConnections: cfg.MaxConnections, WriteTimeout: cfg.WriteTimeout}
	if cfg.InfoPort >= 0 {
		if err := s.startInfoServer(); err != nil {
			return nil, err
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.rpc.Serve(ln); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			s.log.Error("server: RPC listener failed; the server cannot serve", "err", err)
			s.fatal <- errors.Wrap(err, "server: RPC listener failed")
		}
	}()
	if cfg.ZKQuorum != "" {
		zk, err := registerZK(s)
		if err != nil {
			return nil, err
		}
		s.zk = zk
	}
	ok = true
	s.wg.Add(1)
	go s.background()
	if s.pendingParents.Load() > 0 {
		s.wakeJanitor()
	}
	s.log.Info("region server started", "rpc", s.Addr(), "info", s.InfoAddr(), "zookeeper", cfg.ZKQuorum,
		"dataDir", cfg.DataDir, "tables", len(s.tables))
	return s, nil
}

// Addr returns the RPC address clients connect to.
func (s *Server) Addr() string { return net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)) }

// InfoAddr returns the HTTP address of /metrics, or "" if none.
func (s *Server) InfoAddr() string {
	if s.infoLn == nil {
		return ""
	}
	return s.infoLn.Addr().String()
}

// ServerName returns the server's name as HBase writes it: host,port,startcode.
func (s *Server) ServerName() string {
	return s.cfg.Host + "," + strconv.Itoa(s.cfg.Port) + "," + strconv.FormatUint(s.startCode, 10)
}

func (s *Server) serverNamePB() *hbasepb.ServerName {
	return &hbasepb.ServerName{HostName: proto.String(s.cfg.Host), Port: proto.Uint32(uint32(s.cfg.Port)),
		StartCode: proto.Uint64(s.startCode)}
}

func (s *Server) lockDataDir() error {
	f, err := os.OpenFile(filepath.Join(s.cfg.DataDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return errors.Wrap(err, "server: opening lock file")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return errors.Newf("server: data directory %s is in use by another server", s.cfg.DataDir)
	}
	s.lockFile = f
	return nil
}

// loadClusterID reads or creates the cluster id (HBase's hbase.id file).
func (s *Server) loadClusterID() error {
	p := filepath.Join(s.cfg.DataDir, "hbase.id")
	if b, err := vfs.ReadFile(s.fs, p); err == nil && len(b) > 0 {
		s.clusterID = string(bytes.TrimSpace(b))
		return nil
	}
	var id [16]byte
	binary.BigEndian.PutUint64(id[:], uint64(time.Now().UnixNano()))
	binary.BigEndian.PutUint64(id[8:], uint64(os.Getpid())<<32^uint64(time.Now().Nanosecond()))
	s.clusterID = formatUUID(id)
	return s.writeFileAtomic(p, []byte(s.clusterID+"\n"))
}

func formatUUID(b [16]byte) string {
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[c>>4], hexd[c&15])
	}
	return string(out)
}

// writeFileAtomic replaces p durably (see vfs.WriteFileAtomic).
func (s *Server) writeFileAtomic(p string, b []byte) error {
	return errors.Wrapf(vfs.WriteFileAtomic(s.fs, p, b), "server: writing %s", p)
}

// tableDir is where a table's regions and descriptor live.
func (s *Server) tableDir(t TableName) string {
	return filepath.Join(s.cfg.DataDir, "data", t.Namespace, t.Qualifier)
}

func (s *Server) regionOptions(hr *hostedRegion) region.Options {
	ri, fams := &hr.info, hr.table.families()
	o := s.cfg.Region
	o.Table = ri.Table.String()
	o.EncodedName = ri.EncodedName()
	o.StartKey, o.EndKey = ri.StartKey, ri.EndKey
	o.Families = fams
	// The table descriptor is the truth: a family it no longer has is
	// deleted from the region (finishing a DeleteColumn a crash cut short,
	// or one made while the table was disabled).
	o.DropFamilies = true
	o.Meta = ri.Table == MetaTableName
	// The data directory is HBase's layout: store files are named as
	// HBase's StoreFileInfo expects.
	o.HBaseFileNames = true
	o.Cache = s.cache
	o.CompactionPool = s.compactions
	o.FS = s.fs
	if o.Logger == nil {
		o.Logger = s.log
	}
	if !ri.Table.System() {
		// Catalog regions stay out of it: their writes are small, and a
		// full memstore must not block hbase:meta.
		o.MemstoreLimit = s.memLimit
		// After each flush and compaction: split? parents to clear?
		o.StoreFilesChanged = func() { s.storeFilesChanged(hr) }
	}
	if ri.Table.System() {
		// Catalog writes are small and must survive power loss.
		o.FlushSize = min(o.FlushSize, 16<<20)
		if o.FlushSize <= 0 {
			o.FlushSize = 16 << 20
		}
	}
	return o
}

// checkMetaDir refuses to start when hbase:meta's region directory, dir,
// is missing from a data directory that holds tables: a new, empty catalog
// would hide them, and a table created again under one of their names would
// clear its directory. A fresh data directory has no tables.
func (s *Server) checkMetaDir(dir string) error {
	if _, err := s.fs.Stat(dir); err == nil || !errors.Is(err, os.ErrNotExist) {
		return nil // there (or unreadable: opening it says so)
	}
	data := filepath.Join(s.cfg.DataDir, "data")
	namespaces, err := s.fs.List(data)
	if err != nil {
		return nil // no data directory yet
	}
	var tables []string
	for _, ns := range namespaces {
		names, err := s.fs.List(filepath.Join(data, ns))
		if err != nil {
			continue // not a directory
		}
		for _, t := range names {
			if ns == MetaTableName.Namespace && t == MetaTableName.Qualifier {
				continue
			}
			tables = append(tables, ns+":"+t)
		}
	}
	if len(tables) == 0 {
		return nil
	}
	sort.Strings(tables)
	return errors.Newf("server: hbase:meta's region directory %s is missing, but %s holds tables (%s): "+
		"refusing to start with an empty catalog, which would hide them; restore the directory", dir, data, strings.Join(tables, ", "))
}

// openCatalog opens hbase:meta, creates hbase:namespace on a fresh data
// directory, and loads every table and region that meta lists.
func (s *Server) openCatalog() error {
	metaInfo := RegionInfo{Table: MetaTableName, RegionID: 1}
	mt := newTable(MetaTableName, systemSchema(MetaTableName, metaFamilies...), metaFamilies)
	mt.setState(hbasepb.TableState_ENABLED)
	hr := &hostedRegion{info: metaInfo, name: metaInfo.RegionName(), table: mt,
		dir: filepath.Join(s.tableDir(MetaTableName), metaEncodedName)}
	if err := s.checkMetaDir(hr.dir); err != nil {
		return err
	}
	r, err := region.Open(hr.dir, s.regionOptions(hr))
	if err != nil {
		return errors.Wrap(err, "server: opening hbase:meta")
	}
	hr.r.Store(r)
	mt.regions = []*hostedRegion{hr}
	s.meta = hr
	s.addTableLocked(mt)

	tables, err := s.readMeta()
	if err != nil {
		return err
	}
	if _, ok := tables[NamespaceTableName.String()]; !ok {
		if err := s.createTable(context.Background(), systemSchema(NamespaceTableName, namespaceFamilies...), nil); err != nil {
			return errors.Wrap(err, "server: creating hbase:namespace")
		}
		for _, ns := range []string{defaultNamespace, systemNamespace} {
			if err := s.putNamespace(&hbasepb.NamespaceDescriptor{Name: []byte(ns)}); err != nil {
				return err
			}
		}
	}
	for _, t := range tables {
		if err := s.loadTable(t); err != nil {
			return err
		}
	}
	if err := s.removeOrphanTableDirs(); err != nil {
		return err
	}
	return s.loadNamespaces()
}

// metaTable is what readMeta finds of one table.
type metaTable struct {
	name    TableName
	state   hbasepb.TableState_State
	regions []RegionInfo // the regions that serve the table
	// Split parents, and merged regions whose parents' files may still be
	// referenced (for the janitor).
	parents []*splitParent
	merges  []*mergedRegion
}

// readMeta scans hbase:meta: table state rows and region rows.
func (s *Server) readMeta() (map[string]*metaTable, error) {
	sc, err := s.meta.r.Load().NewScanner(&region.Scan{})
	if err != nil {
		return nil, errors.Wrap(err, "server: scanning hbase:meta")
	}
	defer sc.Close()
	out := map[string]*metaTable{}
	get := func(name TableName) *metaTable {
		mt := out[name.String()]
		if mt == nil {
			mt = &metaTable{name: name}
			out[name.String()] = mt
		}
		return mt
	}
	for {
		res, err := sc.Next()
		if err != nil {
			return nil, errors.Wrap(err, "server: scanning hbase:meta")
		}
		if res == nil {
			break
		}
		if v := res.Value(famTable, colState); v != nil {
			var ts hbasepb.TableState
			t, err := ParseTableName(string(res.Cells[0].Row))
			if err != nil {
				return nil, errors.Wrapf(err, "server: hbase:meta row %q", res.Cells[0].Row)
			}
			if err := hbasepb.ParsePB(v, &ts); err != nil {
				return nil, errors.Wrapf(err, "server: hbase:meta table state of %s", t)
			}
			get(t).state = ts.GetState()
		}
		if v := res.Value(famInfo, colRegionInfo); v != nil {
			ri, err := metaRegionInfo(res.Cells[0].Row, "regioninfo", v)
			if err != nil {
				return nil, err
			}
			mt := get(ri.Table)
			if ri.Offline {
				// Not served. A split parent stays until the janitor
				// finds that its daughters no longer need its files.
				if ri.Split {
					p := &splitParent{info: ri}
					for i, col := range [][]byte{colSplitA, colSplitB} {
						v := res.Value(famInfo, col)
						if v == nil {
							return nil, errors.Newf("server: hbase:meta row %q: split parent without info:%s", res.Cells[0].Row, col)
						}
						if p.daughters[i], err = metaRegionInfo(res.Cells[0].Row, string(col), v); err != nil {
							return nil, err
						}
					}
					mt.parents = append(mt.parents, p)
				}
				continue
			}
			mt.regions = append(mt.regions, ri)
			var parents []RegionInfo
			for _, c := range res.Cells {
				if string(c.Family) != string(famInfo) || !strings.HasPrefix(string(c.Qualifier), mergeQualifierPrefix) {
					continue
				}
				p, err := metaRegionInfo(c.Row, string(c.Qualifier), c.Value)
				if err != nil {
					return nil, err
				}
				parents = append(parents, p)
			}
			if len(parents) > 0 {
				mt.merges = append(mt.merges, &mergedRegion{info: ri, parents: parents})
			}
		}
	}
	return out, nil
}

// metaRegionInfo decodes a RegionInfo column of a meta row.
func metaRegionInfo(row []byte, col string, v []byte) (RegionInfo, error) {
	var pb hbasepb.RegionInfo
	if err := hbasepb.ParsePB(v, &pb); err != nil {
		return RegionInfo{}, errors.Wrapf(err, "server: hbase:meta row %q: info:%s", row, col)
	}
	ri, err := regionInfoFromPB(&pb)
	if err != nil {
		return RegionInfo{}, errors.Wrapf(err, "server: hbase:meta row %q: info:%s", row, col)
	}
	return ri, nil
}

// removeOrphans removes the region directories of a table that no meta row
// names: those a split or merge (or a table creation) wrote before a crash
// cut it short of its meta write. Meta is the truth: without its row, such
// a directory was never a region of the table.
func (s *Server) removeOrphans(mt *metaTable) error {
	known := map[string]bool{}
	for i := range mt.regions {
		known[mt.regions[i].EncodedName()] = true
	}
	for _, p := range mt.parents {
		known[p.info.EncodedName()] = true
		known[p.daughters[0].EncodedName()] = true
		known[p.daughters[1].EncodedName()] = true
	}
	for _, m := range mt.merges {
		for i := range m.parents {
			known[m.parents[i].EncodedName()] = true
		}
	}
	dir := s.tableDir(mt.name)
	names, err := s.fs.List(dir)
	if err != nil {
		return errors.Wrapf(err, "server: listing %s", dir)
	}
	for _, name := range names {
		if known[name] || !isEncodedName(name) {
			continue
		}
		if st, err := s.fs.Stat(filepath.Join(dir, name)); err != nil || !st.IsDir() {
			continue
		}
		s.log.Info("removing a region directory no hbase:meta row names (a split, merge or create cut short)",
			"table", mt.name.String(), "dir", name)
		if err := vfs.RemoveAll(s.fs, filepath.Join(dir, name)); err != nil {
			return errors.Wrapf(err, "server: removing %s", filepath.Join(dir, name))
		}
	}
	return nil
}

// isEncodedName reports whether name is a user region's encoded name: 32
// lowercase hex digits.
func isEncodedName(name string) bool {
	if len(name) != 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// loadTable reads a table's descriptor and opens its regions if enabled.
func (s *Server) loadTable(mt *metaTable) error {
	if err := s.finishRestore(mt); err != nil {
		return err
	}
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.tableDir(mt.name), tableDescName))
	if err != nil {
		return errors.Wrapf(err, "server: reading the descriptor of %s", mt.name)
	}
	schema := &hbasepb.TableSchema{}
	if err := proto.Unmarshal(b, schema); err != nil {
		return errors.Wrapf(err, "server: decoding the descriptor of %s", mt.name)
	}
	fams, err := tableFamilies(schema)
	if err != nil {
		return errors.Wrapf(err, "server: descriptor of %s", mt.name)
	}
	t := newTable(mt.name, schema, fams)
	t.setState(mt.state)
	if err := s.removeOrphans(mt); err != nil {
		return err
	}
	for _, p := range mt.parents {
		s.parents[string(p.info.RegionName())] = p
		s.lastRegID = max(s.lastRegID, p.info.RegionID)
	}
	for _, m := range mt.merges {
		s.merges[string(m.info.RegionName())] = m
	}
	s.noteParents()
	sort.Slice(mt.regions, func(i, j int) bool { return bytes.Compare(mt.regions[i].StartKey, mt.regions[j].StartKey) < 0 })
	for _, ri := range mt.regions {
		hr := &hostedRegion{info: ri, name: ri.RegionName(), table: t,
			dir: filepath.Join(s.tableDir(mt.name), ri.EncodedName()),
			// A table still ENABLING at start was being created (or
			// enabled) when the server stopped: its regions may not be
			// on disk yet.
			fresh: t.getState() == hbasepb.TableState_ENABLING}
		t.regions = append(t.regions, hr)
		s.lastRegID = max(s.lastRegID, ri.RegionID)
	}
	switch t.getState() {
	case hbasepb.TableState_ENABLED, hbasepb.TableState_ENABLING:
		if err := s.openRegions(t); err != nil {
			return err
		}
		if t.getState() == hbasepb.TableState_ENABLING {
			if err := s.setTableState(t, hbasepb.TableState_ENABLED); err != nil {
				return err
			}
		}
	case hbasepb.TableState_DISABLING:
		if err := s.setTableState(t, hbasepb.TableState_DISABLED); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.addTableLocked(t)
	s.mu.Unlock()
	return nil
}

func (s *Server) addTableLocked(t *table) {
	s.tables[t.name.String()] = t
	for _, hr := range t.regions {
		s.regions[string(hr.name)] = hr
		s.encoded[hr.info.EncodedName()] = hr
	}
}

// openRegions opens every region of t and records them in meta as served
// here. A region that does not open (a damaged file, a failing disk) does
// not stop the others, nor the server: as HBase's assignment does, it is
// left FAILED_OPEN, in meta too, and every request for it answers why, until
// AssignRegion opens it (or the table is disabled). Only a failure to write
// meta is returned.
func (s *Server) openRegions(t *table) error {
	for _, hr := range t.regions {
		if hr.r.Load() != nil {
			continue
		}
		if err := s.openRegion(hr); err != nil && (!errors.Is(err, errFailedOpen) || t.name.System()) {
			return err // (the server cannot run without its system tables)
		}
	}
	return nil
}

// errFailedOpen marks openRegion's error for a region that did not open
// and is now FAILED_OPEN.
var errFailedOpen = errors.New("region failed to open")

// openRegion opens hr, not open, and records it in meta: OPEN here, or
// FAILED_OPEN with the reason kept in hr.openErr (the error is then marked
// errFailedOpen).
func (s *Server) openRegion(hr *hostedRegion) error {
	o := s.regionOptions(hr)
	o.MustExist = !hr.fresh
	r, err := region.Open(hr.dir, o)
	if err != nil {
		err = errors.Wrapf(err, "server: opening region %s of %s", hr.info.EncodedName(), hr.table.name)
		msg := err.Error()
		hr.openErr.Store(&msg)
		s.log.Error("region failed to open; it is FAILED_OPEN until AssignRegion opens it", "region", hr.info.EncodedName(),
			"table", hr.table.name.String(), "err", err)
		// Located here still, so that clients ask this server and hear why.
		if merr := s.metaPut(s.regionStatePut(hr, "FAILED_OPEN")); merr != nil {
			return merr
		}
		return errors.Mark(err, errFailedOpen)
	}
	hr.openErr.Store(nil)
	hr.fresh = false
	hr.r.Store(r)
	return s.putRegionLocation(hr, r.Stats().ReadPoint)
}

// closeRegions flushes and closes every region of t.
func (s *Server) closeRegions(t *table) error {
	var first error
	for _, hr := range t.regions {
		// A FAILED_OPEN region is closed with its table too (and retried
		// when it is enabled).
		r, failed := hr.r.Swap(nil), hr.openErr.Swap(nil) != nil
		if r == nil && !failed {
			continue
		}
		if r != nil {
			s.scanners.closeRegion(hr)
			if err := r.Close(); err != nil && first == nil {
				first = errors.Wrapf(err, "server: closing region %s of %s", hr.info.EncodedName(), t.name)
			}
		}
		if err := s.metaPut(region.NewPut(hr.name).Add(famInfo, colState, []byte("CLOSED"))); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Server) metaPut(p *region.Put) error {
	s.stampMetaPut(p)
	return errors.Wrap(s.meta.r.Load().Put(p), "server: writing hbase:meta")
}

// stampMetaPut makes p a put the catalog keeps: FSYNC_WAL, and stamped
// with metaTime.
func (s *Server) stampMetaPut(p *region.Put) {
	p.Durability = wal.FSyncWAL // the catalog must survive power loss
	ts := s.metaTime()
	for i := range p.Cells {
		if p.Cells[i].Timestamp == encoding.LatestTimestamp {
			p.Cells[i].Timestamp = ts
		}
	}
}

// metaTime returns the timestamp of a put to hbase:meta: the clock, once
// it has passed the server's newest delete marker in hbase:meta. A marker
// stamped T hides every put stamped T, so without the wait a row written
// again in the millisecond it was deleted (a table cloned or created under
// the name of one just deleted, whose region rows have the same keys)
// would stay hidden.
func (s *Server) metaTime() int64 {
	for {
		now := time.Now().UnixMilli()
		if now > s.lastMetaDelete.Load() {
			return now
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// metaDeleteRow returns a delete of a whole hbase:meta row (both
// families), FSYNC_WAL, and notes its timestamp for metaTime.
func (s *Server) metaDeleteRow(row []byte) *region.Delete {
	ts := time.Now().UnixMilli()
	for {
		last := s.lastMetaDelete.Load()
		if last >= ts || s.lastMetaDelete.CompareAndSwap(last, ts) {
			break
		}
	}
	d := region.NewDelete(row).AddFamily(famInfo, ts).AddFamily(famTable, ts)
	d.Durability = wal.FSyncWAL
	return d
}

// metaBatch applies puts (stamped as metaPut does) and deletes
// (metaDeleteRow's) to hbase:meta in one atomic batch.
func (s *Server) metaBatch(ms []region.Mutation) error {
	for _, m := range ms {
		if p, ok := m.(*region.Put); ok {
			s.stampMetaPut(p)
		}
	}
	return errors.Wrap(s.meta.r.Load().Batch(ms), "server: writing hbase:meta")
}

// metaRegionPut is the row HBase's MetaTableAccessor.addRegionsToMeta
// writes for a region that is not open: info:regioninfo, info:state CLOSED.
func (s *Server) metaRegionPut(hr *hostedRegion) *region.Put {
	return region.NewPut(hr.name).Add(famInfo, colRegionInfo, marshalPBUF(hr.info.PB())).
		Add(famInfo, colState, []byte("CLOSED"))
}

// metaTableStatePut is a table's state row.
func (s *Server) metaTableStatePut(t TableName, st hbasepb.TableState_State) *region.Put {
	return region.NewPut([]byte(t.String())).Add(famTable, colState, marshalPBUF(&hbasepb.TableState{State: st.Enum()}))
}

// putRegionLocation records that this server serves hr.
func (s *Server) putRegionLocation(hr *hostedRegion, seq uint64) error {
	return s.metaPut(s.regionStatePut(hr, "OPEN").
		Add(famInfo, colServerStart, binary.BigEndian.AppendUint64(nil, s.startCode)).
		Add(famInfo, colSeqnumOpen, binary.BigEndian.AppendUint64(nil, seq)))
}

// regionStatePut returns the put of hr's meta row that places it on this
// server in state.
func (s *Server) regionStatePut(hr *hostedRegion, state string) *region.Put {
	return region.NewPut(hr.name).
		Add(famInfo, colServer, []byte(s.cfg.Host+":"+strconv.Itoa(s.cfg.Port))).
		Add(famInfo, colSn, []byte(s.ServerName())).
		Add(famInfo, colState, []byte(state))
}

func (s *Server) setTableState(t *table, st hbasepb.TableState_State) error {
	t.setState(st)
	if t.name == MetaTableName {
		return nil
	}
	return s.metaPut(s.metaTableStatePut(t.name, st))
}

// putNamespace writes a namespace's row in hbase:namespace.
func (s *Server) putNamespace(d *hbasepb.NamespaceDescriptor) error {
	r, err := s.namespaceRegion()
	if err != nil {
		return err
	}
	p := region.NewPut(d.GetName()).Add(famInfo, colNamespaceDescr, marshalPBUF(d))
	p.Durability = wal.FSyncWAL
	return errors.Wrap(r.Put(p), "server: writing hbase:namespace")
}

func (s *Server) namespaceRegion() (*region.Region, error) {
	nsTable := s.tableByName(NamespaceTableName)
	if nsTable == nil {
		return nil, errors.New("server: hbase:namespace is not open")
	}
	regions := s.regionsOf(nsTable)
	if len(regions) == 0 || regions[0].r.Load() == nil {
		return nil, errors.New("server: hbase:namespace is not open")
	}
	return regions[0].r.Load(), nil
}

// regionsOf returns t's regions now, for callers that do not hold ddl
// (splits and merges change them under ddl and mu).
func (s *Server) regionsOf(t *table) []*hostedRegion {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*hostedRegion(nil), t.regions...)
}

func (s *Server) tableByName(t TableName) *table {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tables[t.String()]
}

// Fatal returns a channel that receives the error that stops the server
// from serving (its RPC listener failed for good). The server then answers
// nothing although it still looks registered: its owner should shut it down
// (which deregisters it) and exit, as Run does.
func (s *Server) Fatal() <-chan error { return s.fatal }

// Shutdown stops the server gracefully: it deregisters from ZooKeeper,
// stops accepting connections and calls, lets calls in flight finish (until
// ctx ends), closes scanners, flushes and closes every region.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.log.Info("region server shutting down")
	if s.zk != nil {
		s.zk.close()
	}
	var first error
	if s.rpc != nil {
		if err := s.rpc.Shutdown(ctx); err != nil {
			first = errors.Wrap(err, "server: waiting for calls in flight")
		}
	}
	if s.info != nil {
		s.info.Close()
	}
	close(s.stopBG)
	s.wg.Wait()
	if err := s.closeAll(); err != nil && first == nil {
		first = err
	}
	s.log.Info("region server stopped")
	return first
}

// closeAll closes whatever Start opened, flushing regions.
func (s *Server) closeAll() error {
	if s.info != nil {
		s.info.Close()
	}
	if s.ln != nil {
		s.ln.Close()
	}
	if s.scanners != nil {
		s.scanners.close()
	}
	var first error
	s.mu.Lock()
	tables := make([]*table, 0, len(s.tables))
	for _, t := range s.tables {
		if t.name != MetaTableName {
			tables = append(tables, t)
		}
	}
	s.mu.Unlock()
	for _, t := range tables {
		for _, hr := range s.regionsOf(t) {
			if r := hr.r.Swap(nil); r != nil {
				if err := r.Close(); err != nil && first == nil {
					first = errors.Wrapf(err, "server: closing region %s", hr.info.EncodedName())
				}
			}
		}
	}
	if s.meta != nil {
		if r := s.meta.r.Swap(nil); r != nil {
			if err := r.Close(); err != nil && first == nil {
				first = errors.Wrap(err, "server: closing hbase:meta")
			}
		}
	}
	if s.cache != nil {
		s.cache.Close()
	}
	if s.memLimit != nil {
		s.memLimit.Close()
	}
	if s.lockFile != nil {
		s.lockFile.Close()
	}
	return first
}
