package server

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
)

// Defaults, as HBase's.
const (
	DefaultPort           = 16020
	DefaultInfoPort       = 16030
	DefaultZKClientPort   = 2181
	DefaultZKRoot         = "/hbase"
	DefaultScannerTimeout = 60 * time.Second
)

// FreePort, as Config.Port or Config.InfoPort, listens on a port the
// system picks (what setting the property to "0" does).
const FreePort = -2

// Config configures a Server. Set it with Set (HBase's property names), or
// directly; zero values mean the defaults.
type Config struct {
	// DataDir holds everything the server stores (hbase.rootdir).
	DataDir string
	// Host is the address to listen on and to advertise (127.0.0.1).
	Host string
	// Port is hbase.regionserver.port (DefaultPort if 0); InfoPort is
	// hbase.regionserver.info.port, the HTTP port of /metrics
	// (DefaultInfoPort if 0, none if -1). A zero left in either field means
	// the default, as an unset HBase property does; to listen on a free
	// port, Set the property to "0" (or use FreePort).
	Port, InfoPort int
	portSet        bool
	infoPortSet    bool
	// ZKQuorum is where to register ("host:port,..."); empty: no ZooKeeper.
	// It is built from hbase.zookeeper.quorum and
	// hbase.zookeeper.property.clientPort.
	ZKQuorum string
	// ZKClientPort is hbase.zookeeper.property.clientPort.
	ZKClientPort int
	// ZKRoot is zookeeper.znode.parent.
	ZKRoot string
	// ZKSessionTimeout is zookeeper.session.timeout.
	ZKSessionTimeout time.Duration
	// ScannerTimeout is hbase.client.scanner.timeout.period, the lease of an
	// idle scanner.
	ScannerTimeout time.Duration
	// MaxRequestSize is hbase.ipc.max.request.size.
	MaxRequestSize int
	// ScannerMaxResultSize is hbase.server.scanner.max.result.size, the most
	// bytes of cells one scan response carries.
	ScannerMaxResultSize int64
	// MaxCallQueueBytes is hbase.ipc.server.max.callqueue.size.
	MaxCallQueueBytes int64
	// ConnMaxIdle is hbase.ipc.client.connection.maxidletime: connections
	// quiet for twice as long are closed while more than IdleThreshold
	// (hbase.ipc.client.idlethreshold) are open.
	ConnMaxIdle   time.Duration
	IdleThreshold int
	// MaxConnections is regionkv.ipc.server.max.connections (0: three
	// quarters of the open-file limit); WriteTimeout is
	// regionkv.ipc.server.write.timeout.
	MaxConnections int
	WriteTimeout   time.Duration
	// GlobalMemstore is hbase.regionserver.global.memstore.size, a fraction
	// of the memory budget (regionkv.memory.budget) for every memstore of
	// the server together; GlobalMemstoreLower is its .lower.limit.
	GlobalMemstore      float64
	GlobalMemstoreLower float64
	// CompactionThreads is hbase.regionserver.thread.compaction.small plus
	// .large: the compactions running at once across every region. Their
	// writes share Region.CompactionThroughput
	// (hbase.hstore.compaction.throughput.higher.bound).
	CompactionThreadsSmall, CompactionThreadsLarge int
	// MaxFileSize is hbase.hregion.max.filesize: a region whose largest
	// store passes it splits (SplitPolicy decides, with the table's
	// MAX_FILESIZE and SPLIT_POLICY, which win).
	MaxFileSize int64
	// SplitPolicy is hbase.regionserver.region.split.policy, a
	// RegionSplitPolicy class name: SteppingSplitPolicy (the default),
	// ConstantSizeRegionSplitPolicy, IncreasingToUpperBoundRegionSplitPolicy
	// or DisabledRegionSplitPolicy.
	SplitPolicy string
	// Region is the template for every user region's options (flush size,
	// compaction, durability: the hbase.hregion.* and hbase.hstore.* keys).
	Region region.Options
	// BlockCache configures the block cache shared by every region
	// (hfile.block.cache.* keys).
	BlockCache blockcache.Options
	Logger     *slog.Logger
	// FS is the filesystem the server's files (table descriptors, the
	// cluster id, every region's files) go through; region.DefaultFS if
	// nil. The data directory's lock is always on the operating system's.
	FS region.FS

	zkQuorumHosts string
	bcInit        bool
	// settings are the properties Set took, for WriteConfigXML.
	settings hbaseconf.Settings
}

func (c *Config) initBlockCache() {
	if !c.bcInit {
		c.BlockCache = blockcache.DefaultOptions()
		c.bcInit = true
	}
}

// Set sets one configuration property by its HBase name. The registry
// (internal/hbaseconf) says which component reads it: the server's own are
// applied here, the block cache's to BlockCache, the region's to Region (the
// template of every user region). Keys it does not know are refused, so a
// typo is not silently ignored.
func (c *Config) Set(key, value string) error {
	p, ok := hbaseconf.Lookup(key)
	if !ok {
		return errors.Newf("server: unknown property %q", key)
	}
	var err error
	switch p.Component {
	case hbaseconf.Server:
		err = c.setServer(p, strings.TrimSpace(value))
	case hbaseconf.BlockCache:
		c.initBlockCache()
		err = c.BlockCache.SetConfig(key, value)
	case hbaseconf.Region:
		err = c.Region.SetConfig(key, value)
	case hbaseconf.Ignored:
		err = p.Check(value)
	default:
		err = errors.AssertionFailedf("server: property %q of unknown component %q", key, p.Component)
	}
	if err != nil {
		return err
	}
	return c.settings.Set(key, value)
}

func (c *Config) setServer(p *hbaseconf.Property, value string) error {
	atoi := func(dst *int) error {
		n, err := p.Int(value)
		*dst = int(n)
		return err
	}
	var err error
	switch p.Name {
	case "hbase.rootdir":
		c.DataDir = strings.TrimPrefix(value, "file://")
	case "hbase.regionserver.hostname":
		c.Host = value
	case "hbase.regionserver.port":
		err = atoi(&c.Port)
		c.portSet = true
	case "hbase.regionserver.info.port":
		err = atoi(&c.InfoPort)
		c.infoPortSet = true
	case "hbase.zookeeper.quorum":
		c.zkQuorumHosts = value
	case "hbase.zookeeper.property.clientPort":
		err = atoi(&c.ZKClientPort)
	case "zookeeper.znode.parent":
		c.ZKRoot = value
	case "zookeeper.session.timeout":
		c.ZKSessionTimeout, err = p.Millis(value)
	case "hbase.client.scanner.timeout.period":
		c.ScannerTimeout, err = p.Millis(value)
	case "hbase.ipc.max.request.size":
		err = atoi(&c.MaxRequestSize)
	case "hbase.server.scanner.max.result.size":
		c.ScannerMaxResultSize, err = p.Int(value)
	case "hbase.ipc.server.max.callqueue.size":
		c.MaxCallQueueBytes, err = p.Bytes(value)
	case "hbase.ipc.client.connection.maxidletime":
		c.ConnMaxIdle, err = p.Millis(value)
	case "hbase.ipc.client.idlethreshold":
		err = atoi(&c.IdleThreshold)
	case "regionkv.ipc.server.max.connections":
		err = atoi(&c.MaxConnections)
	case "regionkv.ipc.server.write.timeout":
		c.WriteTimeout, err = p.Millis(value)
	case "hbase.regionserver.thread.compaction.small":
		err = atoi(&c.CompactionThreadsSmall)
	case "hbase.regionserver.thread.compaction.large":
		err = atoi(&c.CompactionThreadsLarge)
	case "hbase.regionserver.global.memstore.size":
		c.GlobalMemstore, err = p.Float(value)
	case "hbase.regionserver.global.memstore.size.lower.limit":
		c.GlobalMemstoreLower, err = p.Float(value)
	case "hbase.hregion.max.filesize":
		c.MaxFileSize, err = p.Int(value)
		if err == nil && c.MaxFileSize <= 0 {
			err = errors.Newf("property %s=%q: must be positive", p.Name, value)
		}
	case "hbase.regionserver.region.split.policy":
		if _, err = parseSplitPolicy(value); err == nil {
			c.SplitPolicy = value
		}
	default:
		err = errors.AssertionFailedf("server: registered property %q not applied", p.Name)
	}
	return err
}

// LoadSiteXML sets every property of an hbase-site.xml file.
func (c *Config) LoadSiteXML(path string) error {
	props, err := hbaseconf.ReadSiteXML(path)
	if err != nil {
		return err
	}
	for _, kv := range props {
		if err := c.Set(kv[0], kv[1]); err != nil {
			return errors.Wrapf(err, "%s", path)
		}
	}
	return nil
}

// WriteConfigXML writes every property the server knows with its effective
// value (as set, else the default) in hbase-site.xml's format, as HBase's
// /conf page does: what `regionsrv serve --print-config` prints.
func (c *Config) WriteConfigXML(w io.Writer) error { return c.settings.WriteXML(w) }

// Quorum returns the ZooKeeper quorum the server registers in: ZKQuorum,
// else the one hbase.zookeeper.quorum and
// hbase.zookeeper.property.clientPort make; "" for none.
func (c *Config) Quorum() string { return c.withDefaults().ZKQuorum }

// ZooKeeperClientPort returns hbase.zookeeper.property.clientPort, or its
// default: the port a standalone server's ZooKeeper listens on.
func (c *Config) ZooKeeperClientPort() int { return c.withDefaults().ZKClientPort }

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	c.initBlockCache()
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if !c.portSet && c.Port == 0 {
		c.Port = DefaultPort
	}
	if !c.infoPortSet && c.InfoPort == 0 {
		c.InfoPort = DefaultInfoPort
	}
	if c.Port == FreePort {
		c.Port = 0
	}
	if c.InfoPort == FreePort {
		c.InfoPort = 0
	}
	if c.ZKClientPort == 0 {
		c.ZKClientPort = DefaultZKClientPort
	}
	if c.zkQuorumHosts != "" && c.ZKQuorum == "" {
		var hosts []string
		for _, h := range strings.Split(c.zkQuorumHosts, ",") {
			if h = strings.TrimSpace(h); h == "" {
				continue
			}
			if !strings.Contains(h, ":") {
				h += ":" + strconv.Itoa(c.ZKClientPort)
			}
			hosts = append(hosts, h)
		}
		c.ZKQuorum = strings.Join(hosts, ",")
	}
	if c.ZKRoot == "" {
		c.ZKRoot = DefaultZKRoot
	}
	if c.ZKSessionTimeout == 0 {
		c.ZKSessionTimeout = 30 * time.Second
	}
	if c.ScannerTimeout == 0 {
		c.ScannerTimeout = DefaultScannerTimeout
	}
	if c.MaxRequestSize <= 0 {
		c.MaxRequestSize = ipc.DefaultMaxRequestSize
	}
	if c.MaxCallQueueBytes <= 0 {
		c.MaxCallQueueBytes = ipc.DefaultMaxQueueBytes
	}
	if c.ConnMaxIdle <= 0 {
		c.ConnMaxIdle = 10 * time.Second
	}
	if c.IdleThreshold <= 0 {
		c.IdleThreshold = 4000
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = defaultMaxConnections()
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = time.Minute
	}
	if c.CompactionThreadsSmall <= 0 {
		c.CompactionThreadsSmall = 1
	}
	if c.CompactionThreadsLarge <= 0 {
		c.CompactionThreadsLarge = 1
	}
	if c.GlobalMemstore <= 0 || c.GlobalMemstore > 1 {
		c.GlobalMemstore = 0.4
	}
	if c.GlobalMemstoreLower <= 0 || c.GlobalMemstoreLower > 1 {
		c.GlobalMemstoreLower = region.DefaultMemstoreLowerFraction
	}
	if c.MaxFileSize <= 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.SplitPolicy == "" {
		c.SplitPolicy = DefaultSplitPolicy
	}
	if c.ScannerMaxResultSize == 0 {
		c.ScannerMaxResultSize = 100 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.FS == nil {
		c.FS = region.DefaultFS
	}
	return c
}
