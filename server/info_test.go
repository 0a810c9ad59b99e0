package server

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/stretchr/testify/require"
)

func httpGetStatus(t *testing.T, u string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err, u)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, u)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

type jmxDoc struct {
	Beans []map[string]any `json:"beans"`
}

func fetchJMX(t *testing.T, s *Server, query string) (int, jmxDoc) {
	t.Helper()
	code, ctype, body := httpGetStatus(t, "http://"+s.InfoAddr()+"/jmx"+query)
	require.Contains(t, ctype, "application/json", body)
	var doc jmxDoc
	require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
	return code, doc
}

func bean(t *testing.T, doc jmxDoc, name string) map[string]any {
	t.Helper()
	for _, b := range doc.Beans {
		if b["name"] == name {
			return b
		}
	}
	t.Fatalf("no bean %s in %d beans", name, len(doc.Beans))
	return nil
}

func beanNames(doc jmxDoc) []string {
	var out []string
	for _, b := range doc.Beans {
		out = append(out, b["name"].(string))
	}
	return out
}

// num reads a numeric attribute (JSON numbers decode as float64).
func num(t *testing.T, b map[string]any, attr string) float64 {
	t.Helper()
	v, ok := b[attr]
	require.True(t, ok, "bean %s has no attribute %s", b["name"], attr)
	f, ok := v.(float64)
	require.True(t, ok, "%s.%s is %T, not a number", b["name"], attr, v)
	return f
}

// infoTable creates table jmx_t with regions [,m) and [m,), writes puts
// rows, reads gets rows, and flushes the table's regions; it returns the
// table's regions as meta lists them.
func infoTable(t *testing.T, s *Server, puts, gets int) []*hbasepb.RegionInfo {
	t.Helper()
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "jmx_t", "m")
	regions := metaRegions(t, c, "jmx_t")
	require.Len(t, regions, 2)
	for i := 0; i < puts; i++ {
		row := fmt.Sprintf("%c-row", 'a'+i%26)
		mp, cb := putCells(row, [2]string{"q", "value-" + row})
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, row)), Mutation: mp},
			&hbasepb.MutateResponse{}, cb)
	}
	for i := 0; i < gets; i++ {
		row := fmt.Sprintf("%c-row", 'a'+i%26)
		_, ok := getValue(t, c, regions, row, "q")
		require.True(t, ok, row)
	}
	tbl := s.tableByName(TableName{"default", "jmx_t"})
	require.NotNil(t, tbl)
	for _, hr := range tbl.regions {
		require.NoError(t, hr.r.Load().Flush())
	}
	return regions
}

// TestJMX reads /jmx as a monitoring tool does: Hadoop's JMXJsonServlet
// JSON with HBase's bean and attribute names, whose values are the
// server's state after the writes and reads of infoTable.
func TestJMX(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	const puts, gets = 20, 7
	regions := infoTable(t, s, puts, gets)

	code, doc := fetchJMX(t, s, "")
	require.Equal(t, http.StatusOK, code)
	for _, b := range doc.Beans {
		require.NotEmpty(t, b["modelerType"], "every bean has a modelerType: %v", b["name"])
	}
	srv := bean(t, doc, "Hadoop:service=HBase,name=RegionServer,sub=Server")
	require.Equal(t, "RegionServer,sub=Server", srv["modelerType"])
	require.Equal(t, s.ServerName(), srv["tag.serverName"])
	require.Equal(t, s.clusterID, srv["tag.clusterId"])
	require.Equal(t, "regionserver", srv["tag.Context"])
	require.Equal(t, float64(s.startCode), num(t, srv, "regionServerStartTime"))
	// hbase:meta, hbase:namespace and the table's two regions.
	require.Equal(t, 4.0, num(t, srv, "regionCount"))
	require.Equal(t, 2.0+1+2, num(t, srv, "storeCount"), "meta has 2 families, namespace 1, jmx_t 1 per region")
	require.Equal(t, float64(puts), num(t, srv, "writeRequestCount")-writesOfSystemTables(s))
	require.Equal(t, float64(gets), num(t, srv, "readRequestCount")-readsOfSystemTables(s))
	require.Equal(t, num(t, srv, "readRequestCount")+num(t, srv, "writeRequestCount"), num(t, srv, "totalRequestCount"))
	require.Equal(t, float64(gets), num(t, srv, "rpcGetRequestCount"))
	require.Equal(t, float64(puts), num(t, srv, "rpcMutateRequestCount"))

	// The figures agree with the regions themselves.
	var storeFiles, storeFileSize, memstore int64
	for _, hr := range s.regions {
		st := hr.r.Load().Stats()
		storeFiles += int64(st.StoreFiles)
		storeFileSize += st.StoreFileSize
		memstore += st.MemStoreSize
	}
	require.GreaterOrEqual(t, storeFiles, int64(2), "each table region flushed a file")
	require.Equal(t, float64(storeFiles), num(t, srv, "storeFileCount"))
	require.Equal(t, float64(storeFileSize), num(t, srv, "storeFileSize"))
	require.Equal(t, float64(memstore), num(t, srv, "memStoreSize"))
	require.Greater(t, num(t, srv, "hlogFileCount"), 0.0)
	cs := s.cache.Stats()
	require.Equal(t, float64(cs.Count), num(t, srv, "blockCacheCount"))
	require.Equal(t, float64(cs.MissCount), num(t, srv, "blockCacheMissCount"))
	require.Contains(t, srv, "blockCacheHitCount")
	require.Contains(t, srv, "blockCacheEvictionCount")
	require.Contains(t, srv, "blockCacheSize")

	// sub=Regions: HBase's per-region names, with each region's counts.
	rb := bean(t, doc, "Hadoop:service=HBase,name=RegionServer,sub=Regions")
	require.Equal(t, "RegionServer,sub=Regions", rb["modelerType"])
	var regionWrites, regionReads float64
	for _, ri := range regions {
		info, err := regionInfoFromPB(ri)
		require.NoError(t, err)
		p := "Namespace_default_table_jmx_t_region_" + info.EncodedName() + "_metric_"
		hr := s.encoded[info.EncodedName()]
		require.Equal(t, float64(hr.writes.Load()), num(t, rb, p+"writeRequestCount"))
		require.Equal(t, float64(hr.reads.Load()), num(t, rb, p+"readRequestCount"))
		require.Equal(t, 1.0, num(t, rb, p+"storeCount"))
		require.Equal(t, float64(hr.r.Load().Stats().StoreFiles), num(t, rb, p+"storeFileCount"))
		regionWrites += num(t, rb, p+"writeRequestCount")
		regionReads += num(t, rb, p+"readRequestCount")
	}
	require.Equal(t, float64(puts), regionWrites)
	require.Equal(t, float64(gets), regionReads)
	require.Contains(t, rb, "Namespace_hbase_table_meta_region_1588230740_metric_storeFileCount")

	tb := bean(t, doc, "Hadoop:service=HBase,name=RegionServer,sub=Tables")
	require.Equal(t, 2.0, num(t, tb, "Namespace_default_table_jmx_t_metric_regionCount"))
	require.Equal(t, float64(puts), num(t, tb, "Namespace_default_table_jmx_t_metric_writeRequestCount"))
	require.Equal(t, float64(puts+gets), num(t, tb, "Namespace_default_table_jmx_t_metric_totalRequestCount"))

	wb := bean(t, doc, "Hadoop:service=HBase,name=RegionServer,sub=WAL")
	require.GreaterOrEqual(t, num(t, wb, "appendCount"), float64(puts))
	require.Greater(t, num(t, wb, "writtenBytes"), 0.0)

	ib := bean(t, doc, "Hadoop:service=HBase,name=RegionServer,sub=IPC")
	require.GreaterOrEqual(t, num(t, ib, "numOpenConnections"), 2.0, "the test's two connections")
	calls := num(t, ib, "ProcessCallTime_num_ops")
	require.GreaterOrEqual(t, calls, float64(puts+gets))
	require.LessOrEqual(t, num(t, ib, "ProcessCallTime_median"), num(t, ib, "ProcessCallTime_99th_percentile"))
	require.LessOrEqual(t, num(t, ib, "ProcessCallTime_min"), num(t, ib, "ProcessCallTime_max"))

	mb := bean(t, doc, "Hadoop:service=HBase,name=Master,sub=Server")
	require.Equal(t, s.ServerName(), mb["tag.liveRegionServers"])
	require.Equal(t, 1.0, num(t, mb, "numRegionServers"))
	require.Equal(t, "true", mb["tag.isActiveMaster"])

	jvm := bean(t, doc, "Hadoop:service=HBase,name=JvmMetrics")
	require.Greater(t, num(t, jvm, "MemHeapUsedM"), 0.0)
	osb := bean(t, doc, "java.lang:type=OperatingSystem")
	require.Greater(t, num(t, osb, "OpenFileDescriptorCount"), 0.0)
}

func writesOfSystemTables(s *Server) float64 {
	return systemCount(s, func(hr *hostedRegion) int64 { return hr.writes.Load() })
}
func readsOfSystemTables(s *Server) float64 {
	return systemCount(s, func(hr *hostedRegion) int64 { return hr.reads.Load() })
}

func systemCount(s *Server, f func(*hostedRegion) int64) float64 {
	var n int64
	for _, hr := range s.regions {
		if hr.info.Table.System() {
			n += f(hr)
		}
	}
	return float64(n)
}

// TestJMXQuery: ?qry= takes JMX's ObjectName patterns, ?get= one
// attribute or those matching regular expressions, as Hadoop's servlet.
func TestJMXQuery(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	infoTable(t, s, 3, 1)
	q := func(v string) string { return url.QueryEscape(v) }

	_, all := fetchJMX(t, s, "")
	_, all2 := fetchJMX(t, s, "?qry="+q("*:*"))
	require.Equal(t, beanNames(all), beanNames(all2))

	_, rs := fetchJMX(t, s, "?qry="+q("Hadoop:service=HBase,name=RegionServer,sub=*"))
	require.ElementsMatch(t, []string{
		"Hadoop:service=HBase,name=RegionServer,sub=Server", "Hadoop:service=HBase,name=RegionServer,sub=Regions",
		"Hadoop:service=HBase,name=RegionServer,sub=Tables", "Hadoop:service=HBase,name=RegionServer,sub=WAL",
		"Hadoop:service=HBase,name=RegionServer,sub=IPC"}, beanNames(rs))
	_, hadoop := fetchJMX(t, s, "?qry="+q("Hadoop:*"))
	require.Contains(t, beanNames(hadoop), "Hadoop:service=HBase,name=Master,sub=Server")
	require.Contains(t, beanNames(hadoop), "Hadoop:service=HBase,name=JvmMetrics")
	require.NotContains(t, beanNames(hadoop), "java.lang:type=Runtime")
	// Property order does not matter; without ",*" the list must be whole.
	_, one := fetchJMX(t, s, "?qry="+q("Hadoop:sub=Server,name=RegionServer,service=HBase"))
	require.Equal(t, []string{"Hadoop:service=HBase,name=RegionServer,sub=Server"}, beanNames(one))
	_, none := fetchJMX(t, s, "?qry="+q("Hadoop:service=HBase,name=RegionServer"))
	require.Empty(t, none.Beans)
	_, some := fetchJMX(t, s, "?qry="+q("Hadoop:service=HBase,name=RegionServer,*"))
	require.Len(t, some.Beans, 5)
	_, jl := fetchJMX(t, s, "?qry="+q("java.lan?:type=*"))
	require.ElementsMatch(t, []string{"java.lang:type=Runtime", "java.lang:type=OperatingSystem"}, beanNames(jl))

	for _, bad := range []string{"nocolon", "Hadoop:", "Hadoop:service", "Hadoop:a=1,a=2"} {
		code, _, body := httpGetStatus(t, "http://"+s.InfoAddr()+"/jmx?qry="+q(bad))
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", bad, body)
	}

	code, got := fetchJMX(t, s, "?get="+q("Hadoop:service=HBase,name=RegionServer,sub=Server::regionCount"))
	require.Equal(t, http.StatusOK, code)
	require.Len(t, got.Beans, 1)
	require.Equal(t, map[string]any{"name": "Hadoop:service=HBase,name=RegionServer,sub=Server",
		"modelerType": "RegionServer,sub=Server", "regionCount": 4.0}, got.Beans[0])
	_, re := fetchJMX(t, s, "?get="+q("Hadoop:service=HBase,name=RegionServer,sub=Tables::[a-zA-Z_0-9]*memStoreSize,[a-zA-Z_0-9]*storeFileSize"))
	require.Contains(t, re.Beans[0], "Namespace_default_table_jmx_t_metric_memStoreSize")
	require.Contains(t, re.Beans[0], "Namespace_default_table_jmx_t_metric_storeFileSize")
	require.NotContains(t, re.Beans[0], "Namespace_default_table_jmx_t_metric_regionCount")
	code, missing := fetchJMX(t, s, "?get="+q("Hadoop:service=HBase,name=RegionServer,sub=Server::noSuchAttribute"))
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "ERROR", missing.Beans[0]["result"])
	code, _, body := httpGetStatus(t, "http://"+s.InfoAddr()+"/jmx?get=nocolons")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "query format is not as expected.")

	_, desc := fetchJMX(t, s, "?description=true&get="+q("Hadoop:service=HBase,name=RegionServer,sub=Server::regionCount"))
	require.Equal(t, map[string]any{"description": "Number of regions", "value": 4.0}, desc.Beans[0]["regionCount"])

	code, ctype, body := httpGetStatus(t, "http://"+s.InfoAddr()+"/jmx?callback=cb_1&qry="+q("Hadoop:service=HBase,name=Master,*"))
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, ctype, "application/javascript")
	require.True(t, strings.HasPrefix(body, "cb_1(") && strings.HasSuffix(body, ");"), body)
	var doc jmxDoc
	require.NoError(t, json.Unmarshal([]byte(body[len("cb_1("):len(body)-2]), &doc))
	require.Len(t, doc.Beans, 1)
	code, _, _ = httpGetStatus(t, "http://"+s.InfoAddr()+"/jmx?callback="+q("alert(1)"))
	require.NotEqual(t, http.StatusOK, code)
}

func TestObjectNamePattern(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"*:*", "a:b=c", true},
		{"a:*", "a:b=c,d=e", true},
		{"a:b=c", "a:b=c,d=e", false},
		{"a:b=c,*", "a:b=c,d=e", true},
		{"a:d=e,b=c", "a:b=c,d=e", true},
		{"a:b=?", "a:b=c", true},
		{"a:b=??", "a:b=c", false},
		{"a*:b=*x", "abc:b=yyx", true},
		{"a*:b=*x", "abc:b=yyxz", false},
		{"?:b=c", "ab:b=c", false},
	} {
		p, err := parseObjectNamePattern(c.pat)
		require.NoError(t, err, c.pat)
		require.Equal(t, c.want, p.match(c.name), "%s ~ %s", c.pat, c.name)
	}
}

// TestInfoPages: every page answers, as HTML (or XML, JSON, text) that
// names what it shows; the browser test checks what they render.
func TestInfoPages(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		require.NoError(t, c.Set("hbase.hregion.memstore.flush.size", "4194304"))
	})
	infoTable(t, s, 5, 2)
	base := "http://" + s.InfoAddr()
	for _, p := range []string{"/", "/rs-status", "/master-status", "/table.jsp?name=jmx_t", "/table?name=jmx_t", "/conf?format=html"} {
		code, ctype, body := httpGetStatus(t, base+p)
		require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		require.Contains(t, ctype, "text/html", p)
		require.Contains(t, body, s.ServerName(), p)
	}
	_, _, rs := httpGetStatus(t, base+"/rs-status")
	require.Contains(t, rs, "jmx_t")
	require.Contains(t, rs, `href="/table.jsp?name=jmx_t"`)

	code, _, body := httpGetStatus(t, base+"/table.jsp?name=nosuch")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "Table nosuch not found.")
	code, _, _ = httpGetStatus(t, base+"/table.jsp")
	require.Equal(t, http.StatusBadRequest, code)
	code, _, _ = httpGetStatus(t, base+"/nosuchpage")
	require.Equal(t, http.StatusNotFound, code)

	// /conf: Hadoop's configuration XML, loadable as an hbase-site.xml.
	code, ctype, body := httpGetStatus(t, base+"/conf")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, ctype, "text/xml")
	var conf struct {
		Properties []struct {
			Name   string `xml:"name"`
			Value  string `xml:"value"`
			Source string `xml:"source"`
		} `xml:"property"`
	}
	require.NoError(t, xml.Unmarshal([]byte(body), &conf))
	found := map[string]string{}
	for _, p := range conf.Properties {
		found[p.Name] = p.Value + "/" + p.Source
	}
	require.Equal(t, "4194304/set", found["hbase.hregion.memstore.flush.size"])
	require.Equal(t, s.cfg.DataDir+"/set", found["hbase.rootdir"])
	require.Equal(t, "LRU/default", found["hfile.block.cache.policy"])
	_, _, body = httpGetStatus(t, base+"/conf?format=json")
	var cj struct {
		Properties []struct {
			Key, Value, Resource string
			IsFinal              bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &cj))
	require.Len(t, cj.Properties, len(conf.Properties))
	code, _, body = httpGetStatus(t, base+"/conf?name=hbase.hregion.memstore.flush.size")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 1, strings.Count(body, "<property>"), body)
	require.Contains(t, body, "<value>4194304</value>")
	code, _, _ = httpGetStatus(t, base+"/conf?name=no.such.property")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = httpGetStatus(t, base+"/conf?format=yaml")
	require.Equal(t, http.StatusBadRequest, code)

	_, ctype, body = httpGetStatus(t, base+"/dump")
	require.Contains(t, ctype, "text/plain")
	for _, want := range []string{"RegionServer status for " + s.ServerName(), "Version Info:", "jmx_t,", "Stacks:",
		"goroutine ", "RS Configuration:", "<name>hbase.rootdir</name>"} {
		require.Contains(t, body, want)
	}
	_, _, body = httpGetStatus(t, base+"/stacks")
	require.Contains(t, body, "goroutine ")
	_, _, body = httpGetStatus(t, base+"/metrics")
	require.Contains(t, body, "hbase_regionserver_regionCount 4")
}

// TestInfoPagesUnderTraffic renders the pages and /jmx while writes,
// flushes and a table's creation go on: under -race, what the pages read
// must be read safely.
func TestInfoPagesUnderTraffic(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	regions := infoTable(t, s, 1, 0)
	c := dial(t, s, ClientService)
	m := dial(t, s, MasterService)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		tbl := s.tableByName(TableName{"default", "jmx_t"})
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			row := fmt.Sprintf("%c-%d", 'a'+i%26, i)
			mp, cb := putCells(row, [2]string{"q", "v"})
			if _, err := c.Call(t.Context(), "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, row)), Mutation: mp}, cb,
				&hbasepb.MutateResponse{}); err != nil {
				done <- err
				return
			}
			if i%50 == 0 {
				if err := tbl.regions[i%2].r.Load().Flush(); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	createTable(t, m, "traffic_t", "k")
	base := "http://" + s.InfoAddr()
	for i := 0; i < 10; i++ {
		for _, p := range []string{"/", "/master-status", "/table.jsp?name=jmx_t", "/jmx", "/dump"} {
			code, _, body := httpGetStatus(t, base+p)
			require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		}
	}
	close(stop)
	require.NoError(t, <-done)
}
