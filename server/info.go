package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/region"
)

// The info port's pages, at HBase's paths: the region server's status
// (/rs-status, also at /), the master's (/master-status), one table's
// (/table.jsp?name=T, also /table), the effective configuration (/conf:
// XML as HBase's, ?format=json as Hadoop's ConfServlet, ?format=html ours),
// the JMX beans as JSON (/jmx, see jmx.go), a text dump (/dump) and the
// goroutine stacks (/stacks). The pages are plain server-rendered HTML.

//go:embed webui/*.html
var webuiFiles embed.FS

var webui = template.Must(template.New("").Funcs(template.FuncMap{
	"bytes":    formatSize,
	"key":      formatKey,
	"ms":       func(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") },
	"duration": formatUptime,
	"plural": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return strconv.Itoa(n) + " " + noun + "s"
	},
	"percent": func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"query":   func(s string) template.URL { return template.URL("name=" + url.QueryEscape(s)) },
}).ParseFS(webuiFiles, "webui/*.html"))

func (s *Server) registerInfoHandlers(mux *http.ServeMux) {
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		s.serveRSStatus(w, r)
	})
	mux.HandleFunc("/rs-status", s.serveRSStatus)
	mux.HandleFunc("/master-status", s.serveMasterStatus)
	mux.HandleFunc("/table.jsp", s.serveTable)
	mux.HandleFunc("/table", s.serveTable)
	mux.HandleFunc("/conf", s.serveConf)
	mux.HandleFunc("/jmx", s.serveJMX)
	mux.HandleFunc("/dump", s.serveDump)
	mux.HandleFunc("/stacks", serveStacks)
}

// Version is RegionKV's version: the module's version when built from a
// tagged module, else the VCS revision the binary was built from.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if v == "" || v == "(devel)" {
		if rev == "" {
			return "devel"
		}
		v = "devel"
	}
	if rev != "" {
		v += " (" + rev[:min(len(rev), 12)] + dirty + ")"
	}
	return v
}

// HBaseCompatVersion is the HBase version whose protocol and formats the
// server speaks.
const HBaseCompatVersion = "2.6"

// serverStatus is what the status pages show: a snapshot of the server.
type serverStatus struct {
	ServerName, Version, HBaseVersion, GoVersion string
	Hostname, RPCAddr, InfoAddr                  string
	ZKQuorum, ZKRoot, ClusterID, DataDir         string
	Started                                      time.Time
	Uptime                                       time.Duration
	Now                                          time.Time

	Tables                     []*tableStatus
	RegionCount, StoreCount    int
	StoreFileCount             int
	StoreFileSize, MemStore    int64
	Reads, Writes              int64
	Flushes, Compactions       int64
	BlockedWrites              int64
	FlushedBytes, WALTornTails int64
	OpenScanners, Connections  int
	HasCache                   bool
	CachePolicy                string
	Cache                      blockcache.Stats
	Compaction                 region.CompactionPoolStats
	MemLimit                   region.MemstoreLimitStats
	HasMemLimit                bool
	WALSegments                []walSegmentStatus
	WALFiles                   int
	WALSize                    int64
	WALAppends, WALSyncs       uint64
	WALRolls, WALBytes         uint64
	CompactionThreads          int
	HeapInUse, HeapSys, GCRuns uint64
	Goroutines                 int
}

type tableStatus struct {
	Name, Namespace, Qualifier string
	State                      string
	System                     bool
	Regions                    []*regionStatus
	OnlineRegions              int
	StoreFileCount             int
	StoreFileSize, MemStore    int64
	Reads, Writes              int64
	Families                   []familyStatus
}

type familyStatus struct {
	Name  string
	Attrs []string // "KEY => 'value'"
}

type regionStatus struct {
	Name, Encoded      string
	StartKey, EndKey   string
	Online             bool
	FailedOpen         string // why the region is FAILED_OPEN, if it is
	Server             string
	Stores             int
	StoreFiles         []storeFileStatus
	StoreFileSize      int64
	MemStore           int64
	Reads, Writes      int64
	Flushes            int64
	Compactions        int64
	Compacting         string
	CompactionsPending int32
	WALSegments        int
	WALSize            int64
	LastFlush          time.Time
}

type storeFileStatus struct {
	Family, Name string
	Size         int64
	Entries      uint64
	Major        bool
}

type walSegmentStatus struct {
	Region, Path string
	Size         int64
	MaxSeq       uint64
	Active       bool
}

// status takes a snapshot of the server for the pages and /jmx; withFiles
// lists every store file and WAL segment (the pages), which /jmx does not
// need.
func (s *Server) status(withFiles bool) *serverStatus {
	st := &serverStatus{
		ServerName: s.ServerName(), Version: Version(), HBaseVersion: HBaseCompatVersion, GoVersion: runtime.Version(),
		RPCAddr: s.Addr(), InfoAddr: s.InfoAddr(), ZKQuorum: s.cfg.ZKQuorum, ZKRoot: s.cfg.ZKRoot,
		ClusterID: s.clusterID, DataDir: s.cfg.DataDir,
		Started: time.UnixMilli(int64(s.startCode)), Now: time.Now(),
		CompactionThreads: s.cfg.CompactionThreadsSmall + s.cfg.CompactionThreadsLarge,
	}
	st.Hostname, _ = os.Hostname()
	st.Uptime = st.Now.Sub(st.Started)
	s.mu.RLock()
	tables := make([]*table, 0, len(s.tables))
	for _, t := range s.tables {
		tables = append(tables, t)
	}
	s.mu.RUnlock()
	sort.Slice(tables, func(i, j int) bool {
		// System tables first, as HBase's pages list them apart.
		if a, b := tables[i].name.System(), tables[j].name.System(); a != b {
			return a
		}
		return tables[i].name.String() < tables[j].name.String()
	})
	for _, t := range tables {
		ts := s.tableStatus(t, withFiles)
		st.Tables = append(st.Tables, ts)
		for _, rs := range ts.Regions {
			if !rs.Online {
				continue
			}
			st.RegionCount++
			st.StoreCount += rs.Stores
			st.StoreFileCount += len(rs.StoreFiles)
			st.StoreFileSize += rs.StoreFileSize
			st.MemStore += rs.MemStore
			st.Flushes += rs.Flushes
			st.Compactions += rs.Compactions
			st.WALFiles += rs.WALSegments
			st.WALSize += rs.WALSize
		}
		st.Reads += ts.Reads
		st.Writes += ts.Writes
	}
	for _, t := range tables {
		for _, hr := range s.regionsOf(t) { // splits change them under s.mu
			r := hr.r.Load()
			if r == nil {
				continue
			}
			rst := r.Stats()
			st.BlockedWrites += rst.BlockedWrites
			st.FlushedBytes += rst.FlushedBytes
			st.WALTornTails += rst.WALTornTails
			st.WALAppends += rst.WAL.Appends
			st.WALSyncs += rst.WAL.Syncs
			st.WALRolls += rst.WAL.Rolls
			st.WALBytes += rst.WAL.BytesWritten
			if withFiles {
				for _, seg := range r.WALSegments() {
					st.WALSegments = append(st.WALSegments, walSegmentStatus{Region: t.name.String() + "," + hr.info.EncodedName(),
						Path: relPath(s.cfg.DataDir, seg.Path), Size: seg.Size, MaxSeq: seg.MaxSeq, Active: seg.Active})
				}
			}
		}
	}
	if s.cache != nil {
		st.HasCache = true
		st.Cache = s.cache.Stats()
		st.CachePolicy = s.cfg.BlockCache.Policy.String()
	}
	if s.compactions != nil {
		st.Compaction = s.compactions.Stats()
	}
	if s.memLimit != nil {
		st.HasMemLimit = true
		st.MemLimit = s.memLimit.Stats()
	}
	if s.scanners != nil {
		st.OpenScanners = s.scanners.count()
	}
	if s.rpc != nil {
		st.Connections = int(s.rpc.Stats().OpenConnections)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st.HeapInUse, st.HeapSys, st.GCRuns = ms.HeapAlloc, ms.HeapSys, uint64(ms.NumGC)
	st.Goroutines = runtime.NumGoroutine()
	return st
}

func (s *Server) tableStatus(t *table, withFiles bool) *tableStatus {
	ts := &tableStatus{Name: t.name.String(), Namespace: t.name.Namespace, Qualifier: t.name.Qualifier,
		State: t.getState().String(), System: t.name.System()}
	for _, fo := range t.families() {
		fs := familyStatus{Name: fo.Name}
		for _, a := range familySchema(fo).GetAttributes() {
			fs.Attrs = append(fs.Attrs, string(a.GetFirst())+" => '"+string(a.GetSecond())+"'")
		}
		ts.Families = append(ts.Families, fs)
	}
	s.mu.RLock()
	regions := append([]*hostedRegion(nil), t.regions...)
	s.mu.RUnlock()
	for _, hr := range regions {
		rs := &regionStatus{Name: string(hr.name), Encoded: hr.info.EncodedName(),
			StartKey: encoding.FormatBytes(hr.info.StartKey), EndKey: encoding.FormatBytes(hr.info.EndKey),
			Reads: hr.reads.Load(), Writes: hr.writes.Load(),
			CompactionsPending: hr.minorRequested.Load() + hr.majorRequested.Load(), FailedOpen: hr.failedOpen()}
		if r := hr.r.Load(); r != nil {
			rs.Online = true
			rs.Server = s.ServerName()
			rst := r.Stats()
			rs.MemStore = rst.MemStoreSize
			rs.StoreFileSize = rst.StoreFileSize
			rs.Flushes, rs.Compactions = rst.Flushes, rst.Compactions
			rs.LastFlush = rst.LastFlush
			switch minor, major := r.Compacting(); {
			case major:
				rs.Compacting = "MAJOR"
			case minor:
				rs.Compacting = "MINOR"
			default:
				rs.Compacting = "NONE"
			}
			for _, fo := range r.Families() {
				st := r.Store(fo.Name)
				if st == nil {
					continue
				}
				rs.Stores++
				for _, f := range st.Files() {
					sf := storeFileStatus{Family: fo.Name, Name: filepath.Base(f.Path), Size: f.Reader.Size(), Major: f.Major}
					if withFiles {
						sf.Entries = f.Reader.Trailer().EntryCount
					}
					rs.StoreFiles = append(rs.StoreFiles, sf)
				}
			}
			for _, seg := range r.WALSegments() {
				rs.WALSegments++
				rs.WALSize += seg.Size
			}
			ts.OnlineRegions++
			ts.StoreFileCount += len(rs.StoreFiles)
			ts.StoreFileSize += rs.StoreFileSize
			ts.MemStore += rs.MemStore
		}
		ts.Reads += rs.Reads
		ts.Writes += rs.Writes
		ts.Regions = append(ts.Regions, rs)
	}
	return ts
}

func relPath(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func (s *Server) render(w http.ResponseWriter, name string, status int, data any) {
	var buf bytes.Buffer
	if err := webui.ExecuteTemplate(&buf, name, data); err != nil {
		s.log.Error("server: rendering info page", "page", name, "err", err)
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) serveRSStatus(w http.ResponseWriter, r *http.Request) {
	s.render(w, "rs-status.html", http.StatusOK, s.status(true))
}

func (s *Server) serveMasterStatus(w http.ResponseWriter, r *http.Request) {
	st := s.status(false)
	var ns []string
	s.mu.RLock()
	for n := range s.namespaces {
		ns = append(ns, n)
	}
	s.mu.RUnlock()
	sort.Strings(ns)
	s.render(w, "master-status.html", http.StatusOK, struct {
		*serverStatus
		Namespaces []string
	}{st, ns})
}

func (s *Server) serveTable(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	page := struct {
		*serverStatus
		Query string
		Table *tableStatus
		Error string
	}{serverStatus: s.status(false), Query: name}
	if name == "" {
		page.Error = "No table name given: use table.jsp?name=TABLE."
		s.render(w, "table.html", http.StatusBadRequest, page)
		return
	}
	tn, err := ParseTableName(name)
	var t *table
	if err == nil {
		t = s.tableByName(tn)
	}
	if t == nil {
		page.Error = fmt.Sprintf("Table %s not found.", name)
		if err != nil {
			page.Error = fmt.Sprintf("%q is not a table name: %v", name, err)
		}
		s.render(w, "table.html", http.StatusNotFound, page)
		return
	}
	page.Table = s.tableStatus(t, true)
	s.render(w, "table.html", http.StatusOK, page)
}

// effectiveSettings are the properties the server runs with: those set,
// with the data directory and quorum as they ended up (flags set them too).
func (s *Server) effectiveSettings() hbaseconf.Settings {
	set := s.cfg.settings.Clone()
	_ = set.Set("hbase.rootdir", s.cfg.DataDir)
	if s.cfg.ZKQuorum != "" {
		_ = set.Set("hbase.zookeeper.quorum", s.cfg.ZKQuorum)
	}
	return set
}

// serveConf is HBase's /conf (Hadoop's ConfServlet): the configuration as
// XML, or with format=json as {"properties":[{key, value, isFinal,
// resource}]}; name=KEY picks one property (404 if unknown). format=html
// is ours: the same as a table.
func (s *Server) serveConf(w http.ResponseWriter, r *http.Request) {
	set := s.effectiveSettings()
	entries := set.Effective()
	if name := r.URL.Query().Get("name"); name != "" {
		p, ok := hbaseconf.Lookup(name)
		if !ok {
			http.Error(w, "Property "+name+" not found", http.StatusNotFound)
			return
		}
		for _, e := range entries {
			if e.Name == p.Name {
				entries = []hbaseconf.Entry{e}
				break
			}
		}
	}
	switch format := r.URL.Query().Get("format"); format {
	case "", "xml":
		if len(entries) == 1 {
			// WriteXML writes every property; one is written by hand.
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			io.WriteString(w, confXMLOne(entries[0]))
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		if err := set.WriteXML(w); err != nil {
			s.log.Error("server: writing /conf", "err", err)
		}
	case "json":
		type prop struct {
			Key      string `json:"key"`
			Value    string `json:"value"`
			IsFinal  bool   `json:"isFinal"`
			Resource string `json:"resource"`
		}
		out := struct {
			Properties []prop `json:"properties"`
		}{}
		for _, e := range entries {
			out.Properties = append(out.Properties, prop{Key: e.Name, Value: e.Value, Resource: e.Source})
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	case "html":
		s.render(w, "conf.html", http.StatusOK, struct {
			*serverStatus
			Entries []hbaseconf.Entry
		}{s.status(false), entries})
	default:
		http.Error(w, "Bad format: "+format, http.StatusBadRequest)
	}
}

func confXMLOne(e hbaseconf.Entry) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n  <property>\n")
	for _, kv := range [][2]string{{"name", e.Name}, {"value", e.Value}, {"source", e.Source},
		{"description", e.Doc + " (read by " + string(e.Component) + ")"}} {
		b.WriteString("    <" + kv[0] + ">")
		template.HTMLEscape(&b, []byte(kv[1]))
		b.WriteString("</" + kv[0] + ">\n")
	}
	b.WriteString("  </property>\n</configuration>\n")
	return b.String()
}

// serveDump is HBase's /dump (RSDumpServlet): the server's state as text,
// for a bug report.
func (s *Server) serveDump(w http.ResponseWriter, r *http.Request) {
	st := s.status(true)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	line := strings.Repeat("=", 59)
	fmt.Fprintf(w, "RegionServer status for %s as of %s\n\n", st.ServerName, st.Now.Format(time.RFC3339))
	fmt.Fprintf(w, "Version Info:\n%s\nRegionKV %s, HBase %s protocol, %s\nStarted %s, up %s\n\n",
		line, st.Version, st.HBaseVersion, st.GoVersion, st.Started.Format(time.RFC3339), formatUptime(st.Uptime))
	fmt.Fprintf(w, "Server:\n%s\nrpc=%s info=%s zookeeper=%s%s clusterId=%s rootdir=%s\n", line,
		st.RPCAddr, st.InfoAddr, st.ZKQuorum, st.ZKRoot, st.ClusterID, st.DataDir)
	fmt.Fprintf(w, "regions=%d stores=%d storeFiles=%d storeFileSize=%d memStoreSize=%d readRequests=%d writeRequests=%d\n",
		st.RegionCount, st.StoreCount, st.StoreFileCount, st.StoreFileSize, st.MemStore, st.Reads, st.Writes)
	fmt.Fprintf(w, "compactions: queued=%d running=%d completed=%d threads=%d\n", st.Compaction.Queued,
		st.Compaction.Running, st.Compaction.Completed, st.CompactionThreads)
	if st.HasCache {
		fmt.Fprintf(w, "block cache: policy=%s size=%d max=%d blocks=%d hits=%d misses=%d evictions=%d cacheDataBlockPercent=%d\n",
			st.CachePolicy, st.Cache.Size, st.Cache.MaxSize, st.Cache.Count, st.Cache.HitCount, st.Cache.MissCount,
			st.Cache.EvictionCount, st.Cache.CacheDataBlockPercent)
	}
	fmt.Fprintf(w, "\nRegions:\n%s\n", line)
	for _, t := range st.Tables {
		for _, rs := range t.Regions {
			fmt.Fprintf(w, "%s state=%s online=%t start=%q end=%q storeFiles=%d storeFileSize=%d memStoreSize=%d reads=%d writes=%d compacting=%s\n",
				rs.Name, t.State, rs.Online, rs.StartKey, rs.EndKey, len(rs.StoreFiles), rs.StoreFileSize, rs.MemStore,
				rs.Reads, rs.Writes, rs.Compacting)
			if rs.FailedOpen != "" {
				fmt.Fprintf(w, "%s FAILED_OPEN: %s\n", rs.Name, rs.FailedOpen)
			}
		}
	}
	fmt.Fprintf(w, "\nWAL segments:\n%s\n", line)
	for _, seg := range st.WALSegments {
		fmt.Fprintf(w, "%s size=%d maxSeq=%d active=%t (%s)\n", seg.Path, seg.Size, seg.MaxSeq, seg.Active, seg.Region)
	}
	fmt.Fprintf(w, "\nStacks:\n%s\n%s\n", line, stacks())
	fmt.Fprintf(w, "RS Configuration:\n%s\n", line)
	set := s.effectiveSettings()
	_ = set.WriteXML(w)
}

// serveStacks is HBase's /stacks: every goroutine's stack.
func serveStacks(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(stacks())
}

func stacks() []byte {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// formatSize prints a byte count as HBase's pages do (StringUtils
// byteDesc): "0 B", "12.3 KB", "1.5 MB".
func formatSize(v any) string {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case uint64:
		n = int64(min(x, math.MaxInt64))
	case int:
		n = int64(x)
	default:
		return fmt.Sprint(v)
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + string(" KMGTP"[i]) + "B"
}

func formatKey(k string) string {
	if k == "" {
		return "(empty)"
	}
	return k
}

func formatUptime(d time.Duration) string {
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h, m, sec := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	return fmt.Sprintf("%dd %dh %dm %ds", days, h, m, sec)
}
