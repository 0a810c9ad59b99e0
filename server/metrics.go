package server

import (
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/offheap"
)

// metrics exports the server's state in Prometheus text format under names
// after HBase's region server metrics (Hadoop:service=HBase,
// name=RegionServer,sub=Server and sub=IPC), prefixed hbase_regionserver_.
type metrics struct {
	s        *Server
	reg      *prometheus.Registry
	latency  *prometheus.HistogramVec
	failures *prometheus.CounterVec
	// observers caches each method's latency series, so that a call does
	// not hash its labels; the map is read-only once built, and a series
	// is still created (and exported) only once its method is called.
	observers map[string]*lazyObserver
}

type lazyObserver struct {
	once sync.Once
	o    prometheus.Observer
}

const metricPrefix = "hbase_regionserver_"

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, reg: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    metricPrefix + "call_seconds",
		Help:    "RPC processing time by method (HBase's <Method>_* latency histograms).",
		Buckets: prometheus.ExponentialBuckets(25e-6, 2.5, 14),
	}, []string{"method"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricPrefix + "exceptions",
		Help: "Calls answered with an exception, by method.",
	}, []string{"method"})
	m.reg.MustRegister(m.latency, m.failures, (*serverCollector)(m), prometheus.NewGoCollector())
	m.observers = map[string]*lazyObserver{}
	for _, set := range []map[string]methodFunc{clientMethods, masterMethods, adminMethods, registryMethods} {
		for name := range set {
			m.observers[name] = &lazyObserver{}
		}
	}
	return m
}

func (m *metrics) observe(method string, d time.Duration, err error) {
	if m == nil {
		return
	}
	if lo := m.observers[method]; lo != nil {
		lo.once.Do(func() { lo.o = m.latency.WithLabelValues(method) })
		lo.o.Observe(d.Seconds())
	} else {
		m.latency.WithLabelValues(method).Observe(d.Seconds())
	}
	if err != nil {
		m.failures.WithLabelValues(method).Inc()
	}
}

// serverCollector reads the server's counters at scrape time.
type serverCollector metrics

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	// Unchecked collector: the set of metrics is produced at scrape time.
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	emit := func(name, help string, typ prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(metricPrefix+name, help, nil, nil), typ, v)
	}
	var memstore, storeFiles, storeFileSize, flushes, compactions, blocked, tornTails, tornBytes int64
	var reads, writes int64
	regions := 0
	s.mu.RLock()
	for _, hr := range s.regions {
		r := hr.r.Load()
		if r == nil {
			continue
		}
		regions++
		st := r.Stats()
		memstore += st.MemStoreSize
		storeFiles += int64(st.StoreFiles)
		storeFileSize += st.StoreFileSize
		flushes += st.Flushes
		compactions += st.Compactions
		blocked += st.BlockedWrites
		tornTails += st.WALTornTails
		tornBytes += st.WALTornBytes
		reads += hr.reads.Load()
		writes += hr.writes.Load()
	}
	tables := len(s.tables)
	s.mu.RUnlock()
	emit("regionCount", "Open regions.", prometheus.GaugeValue, float64(regions))
	emit("tableCount", "Tables, system tables included.", prometheus.GaugeValue, float64(tables))
	emit("memStoreSize", "Bytes in memstores.", prometheus.GaugeValue, float64(memstore))
	if s.compactions != nil {
		cs := s.compactions.Stats()
		emit("compactionQueueLength", "Compactions waiting for a compaction thread.", prometheus.GaugeValue, float64(cs.Queued))
		emit("compactionsRunning", "Compactions running.", prometheus.GaugeValue, float64(cs.Running))
		emit("compactionsCompletedCount", "Compactions completed by the server's compaction pool.", prometheus.CounterValue, float64(cs.Completed))
	}
	if s.memLimit != nil {
		ms := s.memLimit.Stats()
		emit("globalMemStoreLimit", "The global memstore limit (hbase.regionserver.global.memstore.size), bytes.", prometheus.GaugeValue, float64(ms.Upper))
		emit("globalMemStoreLimitLowMark", "Where flushes for the global memstore limit start, bytes.", prometheus.GaugeValue, float64(ms.Lower))
		emit("globalMemStoreFlushCount", "Flushes asked for by the global memstore limit.", prometheus.CounterValue, float64(ms.Flushes))
	}
	emit("storeFileCount", "Store files.", prometheus.GaugeValue, float64(storeFiles))
	emit("storeFileSize", "Bytes in store files.", prometheus.GaugeValue, float64(storeFileSize))
	emit("flushedCount", "Memstore flushes.", prometheus.CounterValue, float64(flushes))
	emit("walTornTailCount", "Torn last WAL records dropped when regions opened.", prometheus.CounterValue, float64(tornTails))
	emit("walTornTailBytes", "Bytes of torn last WAL records dropped when regions opened.", prometheus.CounterValue, float64(tornBytes))
	emit("compactedCount", "Compactions.", prometheus.CounterValue, float64(compactions))
	emit("blockedRequestCount", "Writes that waited for memstore space.", prometheus.CounterValue, float64(blocked))
	emit("readRequestCount", "Read requests.", prometheus.CounterValue, float64(reads))
	emit("writeRequestCount", "Write requests.", prometheus.CounterValue, float64(writes))
	emit("totalRequestCount", "Read and write requests.", prometheus.CounterValue, float64(reads+writes))
	// Not an HBase metric (HBase only logs a faulty bloom): store file
	// bloom filters found unreadable and ignored since, process-wide.
	emit("bloomFilterErrorCount", "Store file bloom filters found unreadable (checksum or format error) and ignored since.",
		prometheus.CounterValue, float64(hfile.BloomErrors()))
	// Not HBase's names (its ByteBuffAllocator counts pooled buffers): the
	// block memory outside the Go heap, which Go's own metrics do not show.
	oh := offheap.ReadStats()
	emit("offHeapMappedBytes", "Address space mapped for block memory outside the Go heap.", prometheus.GaugeValue, float64(oh.Mapped))
	emit("offHeapChunkBytes", "Block memory outside the Go heap held in chunks (an upper bound on what is resident).", prometheus.GaugeValue, float64(oh.Chunks))
	emit("offHeapUsedBytes", "Block memory outside the Go heap in use by blocks.", prometheus.GaugeValue, float64(oh.InUse))
	if s.scanners != nil {
		emit("openScannerCount", "Open client scanners.", prometheus.GaugeValue, float64(s.scanners.count()))
	}
	if s.rpc != nil {
		st := s.rpc.Stats()
		emit("numOpenConnections", "Open client connections.", prometheus.GaugeValue, float64(st.OpenConnections))
		emit("numActiveHandler", "Calls being processed.", prometheus.GaugeValue, float64(st.CallsInFlight))
		emit("badFrameCount", "Connections closed for a malformed frame.", prometheus.CounterValue, float64(st.BadFrames))
		// HBase's queueSize and exceptions.callQueueTooBig, and ours.
		emit("queueSize", "Bytes of requests being read or served.", prometheus.GaugeValue, float64(st.QueuedBytes))
		emit("exceptions_callQueueTooBig", "Requests refused with CallQueueTooBigException.", prometheus.CounterValue, float64(st.QueueRejected))
		emit("connectionsRefusedCount", "Connections closed over regionkv.ipc.server.max.connections.", prometheus.CounterValue, float64(st.ConnsRefused))
		emit("idleConnectionsClosedCount", "Idle connections closed.", prometheus.CounterValue, float64(st.IdleClosed))
		emit("acceptRetryCount", "Temporary accept errors retried.", prometheus.CounterValue, float64(st.AcceptRetries))
	}
	if s.cache != nil {
		for k, v := range s.cache.Stats().Map() {
			typ := prometheus.GaugeValue
			if len(k) > 5 && k[len(k)-5:] == "Count" && k != "blockCacheCount" && k != "blockCacheDataBlockCount" {
				typ = prometheus.CounterValue
			}
			emit(k, "Block cache: "+k+".", typ, v)
		}
	}
}

func (s *Server) startInfoServer() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.InfoPort)))
	if err != nil {
		return errors.Wrapf(err, "server: listening on hbase.regionserver.info.port %d", s.cfg.InfoPort)
	}
	s.infoLn = ln
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	// Go's profiler, as HBase's info server offers /prof and /stacks; it
	// listens on 127.0.0.1 unless configured otherwise.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.registerInfoHandlers(mux)
	s.info = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.info.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("server: info server failed", "err", err)
		}
	}()
	return nil
}
