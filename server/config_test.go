package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigSiteXML(t *testing.T) {
	site := filepath.Join(t.TempDir(), "hbase-site.xml")
	require.NoError(t, os.WriteFile(site, []byte(`<?xml version="1.0"?>
<configuration>
  <property><name>hbase.rootdir</name><value>file:///data/hbase</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>zk1, zk2:2182</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>2191</value></property>
  <property><name>zookeeper.znode.parent</name><value>/hbase-test</value></property>
  <property><name>hbase.client.scanner.timeout.period</name><value>5000</value></property>
  <property><name>hbase.regionserver.port</name><value>0</value></property>
  <property><name>hbase.hregion.memstore.flush.size</name><value>1048576</value></property>
  <property><name>hfile.block.cache.size</name><value>32m</value></property>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
</configuration>`), 0o644))
	var c Config
	require.NoError(t, c.LoadSiteXML(site))
	d := c.withDefaults()
	require.Equal(t, "/data/hbase", d.DataDir)
	require.Equal(t, "zk1:2191,zk2:2182", d.ZKQuorum, "hosts without a port take clientPort")
	require.Equal(t, "/hbase-test", d.ZKRoot)
	require.Equal(t, 5*time.Second, d.ScannerTimeout)
	require.Equal(t, 0, d.Port, "an explicit 0 picks a free port")
	require.Equal(t, DefaultInfoPort, d.InfoPort)
	require.EqualValues(t, 1<<20, d.Region.FlushSize)
	require.EqualValues(t, 32<<20, d.BlockCache.CacheSize())

	var unset Config
	require.Equal(t, DefaultPort, unset.withDefaults().Port, "an unset port is HBase's default")
	require.Equal(t, "", unset.withDefaults().ZKQuorum, "no quorum: no ZooKeeper")

	require.Error(t, c.Set("hbase.no.such.property", "1"), "a typo is refused, not ignored")
	require.Error(t, c.Set("hbase.regionserver.port", "x"))
	bad := filepath.Join(t.TempDir(), "bad.xml")
	require.NoError(t, os.WriteFile(bad, []byte("<configuration><property>"), 0o644))
	require.Error(t, c.LoadSiteXML(bad))
}
