package server

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/regionkv/regionkv/hfile"
)

// /jmx is Hadoop's JMXJsonServlet as HBase serves it: {"beans":[...]},
// each bean an object with "name", "modelerType" and its attributes, under
// HBase's bean and attribute names (MetricsRegionServerSource,
// MetricsRegionAggregateSource, MetricsTableAggregateSource,
// MetricsWALSource, MetricsHBaseServerSource, MetricsMasterSource), so
// that the tools that scrape HBase's region servers read ours. As there:
// ?qry=OBJECTNAME-PATTERN picks beans (JMX's pattern syntax: "Hadoop:*",
// "Hadoop:service=HBase,name=RegionServer,sub=*"), ?get=BEAN::ATTRIBUTE one
// attribute (or those matching comma-separated regular expressions),
// ?description=true adds each attribute's description, and
// ?callback=NAME wraps the JSON for JSONP.
//
// The java.lang beans and JvmMetrics carry the Go runtime's figures under
// the JVM's names (the Go heap as the heap, garbage collections as GC).

type jmxAttr struct {
	name, desc string
	value      any
}

type jmxBean struct {
	name, modelerType string
	attrs             []jmxAttr
}

func (b *jmxBean) add(name, desc string, v any) {
	b.attrs = append(b.attrs, jmxAttr{name, desc, v})
}

// jmxBeans returns every bean, in a fixed order.
func (s *Server) jmxBeans() []*jmxBean {
	st := s.status(false)
	hostname := st.Hostname
	var beans []*jmxBean

	srv := &jmxBean{name: "Hadoop:service=HBase,name=RegionServer,sub=Server", modelerType: "RegionServer,sub=Server"}
	srv.add("tag.zookeeperQuorum", "Zookeeper Quorum", st.ZKQuorum)
	srv.add("tag.serverName", "Server Name", st.ServerName)
	srv.add("tag.clusterId", "Cluster Id", st.ClusterID)
	srv.add("tag.Context", "Metrics context", "regionserver")
	srv.add("tag.Hostname", "Local hostname", hostname)
	srv.add("regionServerStartTime", "RegionServer Start Time", st.Started.UnixMilli())
	srv.add("regionCount", "Number of regions", st.RegionCount)
	srv.add("storeCount", "Number of Stores", st.StoreCount)
	srv.add("hlogFileCount", "Number of WAL Files", st.WALFiles)
	srv.add("hlogFileSize", "Size of all WAL Files", st.WALSize)
	srv.add("storeFileCount", "Number of Store Files", st.StoreFileCount)
	srv.add("storeFileSize", "Size of storefiles being served.", st.StoreFileSize)
	srv.add("memStoreSize", "Size of the memstore", st.MemStore)
	avg := int64(0)
	if st.RegionCount > 0 {
		avg = (st.StoreFileSize + st.MemStore) / int64(st.RegionCount)
	}
	srv.add("averageRegionSize", "Average region size over the region server including memstore and storefile sizes.", avg)
	srv.add("totalRequestCount", "Total number of requests this RegionServer has answered.", st.Reads+st.Writes)
	srv.add("readRequestCount", "Number of read requests this region server has answered.", st.Reads)
	srv.add("writeRequestCount", "Number of mutation requests this region server has answered.", st.Writes)
	calls := s.metrics.callCounts()
	for _, m := range [][2]string{{"Get", "rpcGetRequestCount"}, {"Scan", "rpcScanRequestCount"},
		{"Multi", "rpcMultiRequestCount"}, {"Mutate", "rpcMutateRequestCount"}} {
		srv.add(m[1], "Number of rpc "+strings.ToLower(m[0])+" requests this region server has answered.", calls[m[0]])
	}
	srv.add("blockedRequestCount", "The number of blocked requests because of memstore size is larger than blockingMemStoreSize", st.BlockedWrites)
	srv.add("compactionQueueLength", "Length of the queue for compactions.", st.Compaction.Queued)
	srv.add("compactionsRunning", "Compactions running (ours).", st.Compaction.Running)
	srv.add("compactionsCompletedCount", "Compactions completed by the server's compaction pool (ours).", st.Compaction.Completed)
	srv.add("flushedMemstoreBytes", "Total number of bytes of cells in memstore from flush", st.FlushedBytes)
	srv.add("percentFilesLocal", "The percent of HFiles that are stored on the local hdfs data node.", 100.0)
	if st.HasMemLimit {
		srv.add("globalMemStoreLimit", "The global memstore limit (hbase.regionserver.global.memstore.size), bytes (ours).", st.MemLimit.Upper)
		srv.add("globalMemStoreLimitLowMark", "Where flushes for the global memstore limit start, bytes (ours).", st.MemLimit.Lower)
	}
	if st.HasCache {
		m := st.Cache.Map()
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			v := m[k]
			if v == math.Trunc(v) && k != "blockCacheHitRatio" && k != "blockCacheCountHitPercent" {
				srv.add(k, "Block cache: "+k, int64(v))
			} else {
				srv.add(k, "Block cache: "+k, v)
			}
		}
	}
	srv.add("walTornTailCount", "Torn last WAL records dropped when regions opened (ours).", st.WALTornTails)
	srv.add("bloomFilterErrorCount", "Store file bloom filters found unreadable and ignored since (ours).", hfile.BloomErrors())
	srv.add("openScannerCount", "Open client scanners (ours).", st.OpenScanners)
	beans = append(beans, srv)

	regions := &jmxBean{name: "Hadoop:service=HBase,name=RegionServer,sub=Regions", modelerType: "RegionServer,sub=Regions"}
	regions.add("tag.Context", "Metrics context", "regionserver")
	regions.add("tag.Hostname", "Local hostname", hostname)
	tables := &jmxBean{name: "Hadoop:service=HBase,name=RegionServer,sub=Tables", modelerType: "RegionServer,sub=Tables"}
	tables.add("tag.Context", "Metrics context", "regionserver")
	tables.add("tag.Hostname", "Local hostname", hostname)
	numRegions := 0
	for _, t := range st.Tables {
		tp := "Namespace_" + t.Namespace + "_table_" + t.Qualifier + "_metric_"
		stores := 0
		for _, r := range t.Regions {
			if !r.Online {
				continue
			}
			numRegions++
			stores += r.Stores
			p := "Namespace_" + t.Namespace + "_table_" + t.Qualifier + "_region_" + r.Encoded + "_metric_"
			regions.add(p+"storeCount", "Number of Stores", r.Stores)
			regions.add(p+"storeFileCount", "Number of Store Files", len(r.StoreFiles))
			regions.add(p+"memStoreSize", "Size of the memstore", r.MemStore)
			regions.add(p+"storeFileSize", "Size of storefiles being served.", r.StoreFileSize)
			regions.add(p+"compactionsCompletedCount", "Number of compactions that have completed.", r.Compactions)
			regions.add(p+"compactionsQueuedCount", "Number of compactions that are queued/running for this region", r.CompactionsPending)
			regions.add(p+"readRequestCount", "Number of read requests this region server has answered.", r.Reads)
			regions.add(p+"writeRequestCount", "Number of mutation requests this region server has answered.", r.Writes)
		}
		if t.OnlineRegions == 0 {
			continue
		}
		tables.add(tp+"regionCount", "Number of regions", t.OnlineRegions)
		tables.add(tp+"storeCount", "Number of Stores", stores)
		tables.add(tp+"storeFileCount", "Number of Store Files", t.StoreFileCount)
		tables.add(tp+"storeFileSize", "Size of storefiles being served.", t.StoreFileSize)
		tables.add(tp+"memStoreSize", "Size of the memstore", t.MemStore)
		tables.add(tp+"tableSize", "Total size of the table in the region server", t.StoreFileSize+t.MemStore)
		tables.add(tp+"readRequestCount", "Number of read requests this region server has answered.", t.Reads)
		tables.add(tp+"writeRequestCount", "Number of mutation requests this region server has answered.", t.Writes)
		tables.add(tp+"totalRequestCount", "Total number of requests this RegionServer has answered.", t.Reads+t.Writes)
	}
	regions.add("numRegions", "Number of regions in the metrics system", numRegions)
	tables.add("numTables", "Number of tables in the metrics system", len(st.Tables))
	beans = append(beans, regions, tables)

	w := &jmxBean{name: "Hadoop:service=HBase,name=RegionServer,sub=WAL", modelerType: "RegionServer,sub=WAL"}
	w.add("tag.Context", "Metrics context", "regionserver")
	w.add("tag.Hostname", "Local hostname", hostname)
	w.add("appendCount", "Number of appends to the write ahead log.", st.WALAppends)
	w.add("writtenBytes", "Size (in bytes) of the data written to the WAL.", st.WALBytes)
	w.add("rollRequest", "How many times a roll has been requested total", st.WALRolls)
	w.add("successfulLogRolls", "Number of successful log rolls requests", st.WALRolls)
	w.add("syncCount", "WAL segment fsyncs (ours).", st.WALSyncs)
	beans = append(beans, w)

	ipcBean := &jmxBean{name: "Hadoop:service=HBase,name=RegionServer,sub=IPC", modelerType: "RegionServer,sub=IPC"}
	ipcBean.add("tag.Context", "Metrics context", "regionserver")
	ipcBean.add("tag.Hostname", "Local hostname", hostname)
	if s.rpc != nil {
		rs := s.rpc.Stats()
		ipcBean.add("numOpenConnections", "Number of open connections.", rs.OpenConnections)
		ipcBean.add("numActiveHandler", "Total number of active rpc handlers.", rs.CallsInFlight)
		ipcBean.add("queueSize", "Number of bytes in the call queues; request has been read and parsed and is waiting to run or is currently being executed.", rs.QueuedBytes)
		ipcBean.add("exceptions.callQueueTooBig", "Call queue is full", rs.QueueRejected)
	}
	ipcBean.add("exceptions", "Exceptions caused by requests", s.metrics.failureCount())
	s.metrics.addCallTimes(ipcBean, "ProcessCallTime", "Processing call time.")
	beans = append(beans, ipcBean)

	master := &jmxBean{name: "Hadoop:service=HBase,name=Master,sub=Server", modelerType: "Master,sub=Server"}
	master.add("tag.liveRegionServers", "Names of live RegionServers", st.ServerName)
	master.add("tag.deadRegionServers", "Names of dead RegionServers", "")
	master.add("tag.zookeeperQuorum", "ZooKeeper Quorum", st.ZKQuorum)
	master.add("tag.serverName", "Server Name", st.ServerName)
	master.add("tag.clusterId", "Cluster Id", st.ClusterID)
	master.add("tag.isActiveMaster", "Is Active Master", "true")
	master.add("tag.Context", "Metrics context", "master")
	master.add("tag.Hostname", "Local hostname", hostname)
	master.add("masterActiveTime", "Master Active Time", st.Started.UnixMilli())
	master.add("masterStartTime", "Master Start Time", st.Started.UnixMilli())
	master.add("averageLoad", "AverageLoad", float64(st.RegionCount))
	master.add("numRegionServers", "Number of RegionServers", 1)
	master.add("numDeadRegionServers", "Number of dead RegionServers", 0)
	master.add("clusterRequests", "Number of requests since last report.", st.Reads+st.Writes)
	beans = append(beans, master)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const mib = 1 << 20
	jvm := &jmxBean{name: "Hadoop:service=HBase,name=JvmMetrics", modelerType: "JvmMetrics"}
	jvm.add("tag.Context", "Metrics context", "jvm")
	jvm.add("tag.ProcessName", "Process name", "RegionServer")
	jvm.add("tag.SessionId", "Session ID", "")
	jvm.add("tag.Hostname", "Local hostname", hostname)
	jvm.add("MemNonHeapUsedM", "Non-heap memory used in MB (Go: runtime memory other than the heap)", float64(ms.Sys-ms.HeapSys)/mib)
	jvm.add("MemHeapUsedM", "Heap memory used in MB (Go: live and unswept heap objects)", float64(ms.HeapAlloc)/mib)
	jvm.add("MemHeapCommittedM", "Heap memory committed in MB (Go: heap memory held from the OS)", float64(ms.HeapSys-ms.HeapReleased)/mib)
	limit := debug.SetMemoryLimit(-1)
	maxM := -1.0
	if limit != math.MaxInt64 {
		maxM = float64(limit) / mib
	}
	jvm.add("MemHeapMaxM", "Max heap memory size in MB (Go: GOMEMLIMIT, -1 if none)", maxM)
	jvm.add("GcCount", "Total GC count", ms.NumGC)
	jvm.add("GcTimeMillis", "Total GC time in milliseconds (Go: stop-the-world pauses)", ms.PauseTotalNs/1e6)
	jvm.add("ThreadsRunnable", "Number of threads in RUNNABLE state (Go: goroutines)", runtime.NumGoroutine())
	beans = append(beans, jvm)

	rt := &jmxBean{name: "java.lang:type=Runtime", modelerType: "sun.management.RuntimeImpl"}
	rt.add("Name", "pid@hostname", strconv.Itoa(os.Getpid())+"@"+hostname)
	rt.add("VmName", "Virtual machine name", "Go")
	rt.add("VmVersion", "Virtual machine version", runtime.Version())
	rt.add("StartTime", "Start time in milliseconds since the epoch", processStart.UnixMilli())
	rt.add("Uptime", "Uptime in milliseconds", time.Since(processStart).Milliseconds())
	beans = append(beans, rt)

	osb := &jmxBean{name: "java.lang:type=OperatingSystem", modelerType: "com.sun.management.internal.OperatingSystemImpl"}
	osb.add("Name", "Operating system", runtime.GOOS)
	osb.add("Arch", "Architecture", runtime.GOARCH)
	osb.add("AvailableProcessors", "Processors available", runtime.NumCPU())
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		osb.add("OpenFileDescriptorCount", "Open file descriptors", len(fds))
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		osb.add("MaxFileDescriptorCount", "Open file descriptor limit", rl.Cur)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		osb.add("ProcessCpuTime", "CPU time used by the process, in nanoseconds", ru.Utime.Nano()+ru.Stime.Nano())
	}
	beans = append(beans, osb)
	return beans
}

var processStart = time.Now()

// callCounts returns the calls served, by method.
func (m *metrics) callCounts() map[string]uint64 {
	out := map[string]uint64{}
	for _, h := range collectMetrics(m.latency) {
		method := ""
		for _, l := range h.GetLabel() {
			if l.GetName() == "method" {
				method = l.GetValue()
			}
		}
		out[method] = h.GetHistogram().GetSampleCount()
	}
	return out
}

func (m *metrics) failureCount() uint64 {
	var n float64
	for _, c := range collectMetrics(m.failures) {
		n += c.GetCounter().GetValue()
	}
	return uint64(n)
}

// addCallTimes adds HBase's histogram attributes (NAME_num_ops, _mean,
// _25th_percentile ... _99.9th_percentile, in milliseconds) of every
// method's calls together. The percentiles are estimated from the /metrics
// histogram's buckets, interpolating within the bucket as Prometheus's
// histogram_quantile does; _min and _max are the bounds of the lowest and
// highest buckets holding a call.
func (m *metrics) addCallTimes(b *jmxBean, name, desc string) {
	var count uint64
	var sum float64
	var bounds []float64
	var cum []uint64
	for _, h := range collectMetrics(m.latency) {
		hg := h.GetHistogram()
		count += hg.GetSampleCount()
		sum += hg.GetSampleSum()
		for i, bk := range hg.GetBucket() {
			if i >= len(bounds) {
				bounds = append(bounds, bk.GetUpperBound())
				cum = append(cum, 0)
			}
			cum[i] += bk.GetCumulativeCount()
		}
	}
	b.add(name+"_num_ops", desc, count)
	if count == 0 {
		return
	}
	ms := func(sec float64) float64 { return math.Round(sec*1e6) / 1e3 }
	quantile := func(q float64) float64 {
		rank := q * float64(count)
		lower, prev := 0.0, uint64(0)
		for i, ub := range bounds {
			if float64(cum[i]) >= rank {
				in := cum[i] - prev
				if in == 0 {
					return ub
				}
				return lower + (ub-lower)*(rank-float64(prev))/float64(in)
			}
			lower, prev = ub, cum[i]
		}
		return lower // in the +Inf bucket: the highest finite bound
	}
	// _min and _max: the lower bound of the lowest bucket holding a call,
	// the upper bound of the highest (the highest finite one for +Inf).
	minB, maxB, seen, prev := 0.0, 0.0, false, uint64(0)
	for i, ub := range bounds {
		if cum[i] > prev {
			if !seen && i > 0 {
				minB = bounds[i-1]
			}
			seen = true
			maxB = ub
		}
		prev = cum[i]
	}
	if count > prev && len(bounds) > 0 {
		if !seen {
			minB = bounds[len(bounds)-1]
		}
		maxB = bounds[len(bounds)-1]
	}
	b.add(name+"_min", desc, ms(minB))
	b.add(name+"_max", desc, ms(maxB))
	b.add(name+"_mean", desc, ms(sum/float64(count)))
	for _, p := range []struct {
		suffix string
		q      float64
	}{{"_25th_percentile", .25}, {"_median", .5}, {"_75th_percentile", .75}, {"_90th_percentile", .9},
		{"_95th_percentile", .95}, {"_98th_percentile", .98}, {"_99th_percentile", .99}, {"_99.9th_percentile", .999}} {
		b.add(name+p.suffix, desc, ms(quantile(p.q)))
	}
}

func collectMetrics(c prometheus.Collector) []*dto.Metric {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	var out []*dto.Metric
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) == nil {
			out = append(out, &d)
		}
	}
	return out
}

var jsonpCallback = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func (s *Server) serveJMX(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cb := q.Get("callback")
	if cb != "" && !jsonpCallback.MatchString(cb) {
		http.Error(w, "'callback' must be alphanumeric", http.StatusInternalServerError)
		return
	}
	_, description := q["description"]
	description = description && q.Get("description") != ""
	status := http.StatusOK
	var out jsonObject
	if get, ok := q["get"]; ok {
		parts := strings.Split(get[0], "::")
		if len(parts) != 2 {
			out.add("result", "ERROR")
			out.add("message", "query format is not as expected.")
			status = http.StatusBadRequest
		} else if pat, err := parseObjectNamePattern(parts[0]); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		} else {
			var found bool
			out.add("beans", s.jmxJSON(pat, parts[1], description, &found))
			if !found {
				status = http.StatusBadRequest
			}
		}
	} else {
		qry := q.Get("qry")
		if qry == "" {
			qry = "*:*"
		}
		pat, err := parseObjectNamePattern(qry)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.add("beans", s.jmxJSON(pat, "", description, nil))
	}
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if cb != "" {
		w.Header().Set("Content-Type", "application/javascript; charset=utf8")
		body = append(append([]byte(cb+"("), body...), ");"...)
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf8")
	}
	w.WriteHeader(status)
	w.Write(body)
}

// jmxJSON returns the beans pat matches as JSON objects. With attr set
// (?get=), each carries only that attribute, or those whose names match
// one of its comma-separated regular expressions; *found reports whether
// every matched bean had one.
func (s *Server) jmxJSON(pat *objectNamePattern, attr string, description bool, found *bool) []jsonObject {
	var res []jsonObject
	if found != nil {
		*found = true
	}
	var attrRes []*regexp.Regexp
	if attr != "" {
		for _, p := range strings.Split(attr, ",") {
			if re, err := regexp.Compile("^(?:" + p + ")$"); err == nil {
				attrRes = append(attrRes, re)
			}
		}
	}
	for _, b := range s.jmxBeans() {
		if !pat.match(b.name) {
			continue
		}
		var o jsonObject
		o.add("name", b.name)
		o.add("modelerType", b.modelerType)
		n := 0
		for _, a := range b.attrs {
			if attr != "" && a.name != attr && !matchAny(attrRes, a.name) {
				continue
			}
			n++
			if description && a.desc != "" && a.desc != a.name {
				var d jsonObject
				d.add("description", a.desc)
				d.add("value", a.value)
				o.add(a.name, d)
			} else {
				o.add(a.name, a.value)
			}
		}
		if attr != "" && n == 0 {
			o.add("result", "ERROR")
			o.add("message", "No attribute with name "+attr+" was found.")
			*found = false
			res = append(res, o)
			return res
		}
		res = append(res, o)
	}
	if res == nil {
		res = []jsonObject{}
	}
	return res
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// jsonObject is a JSON object that keeps its members in order.
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) add(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		v := o.vals[i]
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			// As HBase's JSONBean: a number that is not finite is a string.
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// objectNamePattern is a JMX ObjectName pattern (javax.management.ObjectName):
// "domain:key=value,..." where the domain and the values may hold the
// wildcards * and ?, and a property list "*" or ending in ",*" matches
// names with more properties than it lists.
type objectNamePattern struct {
	domain   string
	props    map[string]string
	wildcard bool
}

type malformedObjectName string

func (e malformedObjectName) Error() string { return "malformed ObjectName: " + string(e) }

func parseObjectNamePattern(s string) (*objectNamePattern, error) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return nil, malformedObjectName("domain part must be followed by ':' in " + strconv.Quote(s))
	}
	p := &objectNamePattern{domain: s[:i], props: map[string]string{}}
	rest := s[i+1:]
	if rest == "" {
		return nil, malformedObjectName("key properties cannot be empty in " + strconv.Quote(s))
	}
	for _, kv := range strings.Split(rest, ",") {
		if kv == "*" {
			if p.wildcard {
				return nil, malformedObjectName("repeated '*' in " + strconv.Quote(s))
			}
			p.wildcard = true
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" || strings.ContainsAny(k, "*?") {
			return nil, malformedObjectName("bad key property " + strconv.Quote(kv) + " in " + strconv.Quote(s))
		}
		if _, dup := p.props[k]; dup {
			return nil, malformedObjectName("key " + strconv.Quote(k) + " repeated in " + strconv.Quote(s))
		}
		p.props[k] = v
	}
	return p, nil
}

func (p *objectNamePattern) match(name string) bool {
	i := strings.IndexByte(name, ':')
	if i < 0 || !glob(p.domain, name[:i]) {
		return false
	}
	props := map[string]string{}
	for _, kv := range strings.Split(name[i+1:], ",") {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	if !p.wildcard && len(props) != len(p.props) {
		return false
	}
	for k, pv := range p.props {
		v, ok := props[k]
		if !ok || !glob(pv, v) {
			return false
		}
	}
	return true
}

// glob matches s against a pattern of literal characters, * (any run) and
// ? (any one character), as JMX's domain and value patterns.
func glob(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for pat != "" && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if glob(pat, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}
