package server

import (
	"encoding/xml"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/blockcache"
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
	// Region is the template for every user region's options (flush size,
	// compaction, durability: the hbase.hregion.* and hbase.hstore.* keys).
	Region region.Options
	// BlockCache configures the block cache shared by every region
	// (hfile.block.cache.* keys).
	BlockCache blockcache.Options
	Logger     *slog.Logger

	zkQuorumHosts string
	bcInit        bool
}

func (c *Config) initBlockCache() {
	if !c.bcInit {
		c.BlockCache = blockcache.DefaultOptions()
		c.bcInit = true
	}
}

// Set sets one configuration property by its HBase name. Keys the server
// does not know are refused, so a typo is not silently ignored.
func (c *Config) Set(key, value string) error {
	value = strings.TrimSpace(value)
	atoi := func() (int, error) {
		n, err := strconv.Atoi(value)
		return n, errors.Wrapf(err, "%s=%q", key, value)
	}
	ms := func() (time.Duration, error) {
		n, err := strconv.ParseInt(value, 10, 64)
		return time.Duration(n) * time.Millisecond, errors.Wrapf(err, "%s=%q (milliseconds)", key, value)
	}
	var err error
	switch key {
	case "hbase.rootdir":
		c.DataDir = strings.TrimPrefix(value, "file://")
	case "hbase.regionserver.hostname", "hbase.regionserver.ipc.address":
		c.Host = value
	case "hbase.regionserver.port", "hbase.master.port":
		c.Port, err = atoi()
		c.portSet = true
	case "hbase.regionserver.info.port", "hbase.master.info.port":
		c.InfoPort, err = atoi()
		c.infoPortSet = true
	case "hbase.zookeeper.quorum":
		c.zkQuorumHosts = value
	case "hbase.zookeeper.property.clientPort":
		c.ZKClientPort, err = atoi()
	case "zookeeper.znode.parent":
		c.ZKRoot = value
	case "zookeeper.session.timeout":
		c.ZKSessionTimeout, err = ms()
	case "hbase.client.scanner.timeout.period", "hbase.regionserver.lease.period":
		c.ScannerTimeout, err = ms()
	case "hbase.ipc.max.request.size":
		c.MaxRequestSize, err = atoi()
	case "hbase.server.scanner.max.result.size":
		var n int
		n, err = atoi()
		c.ScannerMaxResultSize = int64(n)
	case "hbase.cluster.distributed", "hbase.unsafe.stream.capability.enforce", "hbase.tmp.dir":
		// Accepted for hbase-site.xml compatibility; meaningless here.
	default:
		if blockcache.IsConfigKey(key) {
			c.initBlockCache()
			return c.BlockCache.SetConfig(key, value)
		}
		return c.Region.SetConfig(key, value)
	}
	return err
}

// LoadSiteXML sets every property of an hbase-site.xml file.
func (c *Config) LoadSiteXML(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return errors.Wrap(err, "reading configuration")
	}
	var doc struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return errors.Wrapf(err, "parsing %s", path)
	}
	for _, p := range doc.Properties {
		if err := c.Set(strings.TrimSpace(p.Name), p.Value); err != nil {
			return errors.Wrapf(err, "%s", path)
		}
	}
	return nil
}

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
	if c.ScannerMaxResultSize == 0 {
		c.ScannerMaxResultSize = 100 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
