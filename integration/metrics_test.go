package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
)

// TestMetricsEndpoint reads /metrics on the info port: Prometheus text
// with hbase_regionserver_* metrics whose request counts follow traffic.
func TestMetricsEndpoint(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	const tbl = "metrics_t"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")}, "m")

	body := httpGet(t, "http://"+p.info+"/metrics")
	for _, want := range []string{
		"# TYPE hbase_regionserver_readRequestCount counter",
		"# TYPE hbase_regionserver_writeRequestCount counter",
		"# TYPE hbase_regionserver_totalRequestCount counter",
		"# TYPE hbase_regionserver_regionCount gauge",
		"# TYPE hbase_regionserver_memStoreSize gauge",
		"# TYPE hbase_regionserver_call_seconds histogram",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("/metrics:\n%s", body)
	}

	// Locate the table's regions first: the hbase:meta scan is a read
	// request too.
	get(t, c, &client.Get{Table: tbl, Row: []byte("warm-up")})
	before := scrape(t, p)
	const puts, gets = 12, 30
	for i := 0; i < puts; i++ {
		put(t, c, tbl, fmt.Sprintf("%c-row", 'a'+i*2), "cf", "q", "v")
	}
	for i := 0; i < gets; i++ {
		get(t, c, &client.Get{Table: tbl, Row: []byte(fmt.Sprintf("%c-row", 'a'+i%puts*2))})
	}
	after := scrape(t, p)
	delta := func(name string) float64 { return after[name] - before[name] }
	if d := delta("hbase_regionserver_writeRequestCount"); d != puts {
		t.Errorf("writeRequestCount moved by %v after %d puts", d, puts)
	}
	if d := delta("hbase_regionserver_readRequestCount"); d != gets {
		t.Errorf("readRequestCount moved by %v after %d gets", d, gets)
	}
	if d := delta("hbase_regionserver_totalRequestCount"); d != puts+gets {
		t.Errorf("totalRequestCount moved by %v after %d requests", d, puts+gets)
	}
	if d := delta("hbase_regionserver_memStoreSize"); d <= 0 {
		t.Errorf("memStoreSize moved by %v after %d puts", d, puts)
	}
	if after["hbase_regionserver_regionCount"] < 4 || after["hbase_regionserver_tableCount"] < 3 {
		t.Errorf("regionCount %v, tableCount %v", after["hbase_regionserver_regionCount"], after["hbase_regionserver_tableCount"])
	}
	if after["hbase_regionserver_numOpenConnections"] < 1 {
		t.Errorf("numOpenConnections %v with a client connected", after["hbase_regionserver_numOpenConnections"])
	}
	// The latency histogram counts the calls by method.
	count := func(body, method string) float64 {
		var v float64
		prefix := `hbase_regionserver_call_seconds_count{method="` + method + `"} `
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, prefix) {
				fmt.Sscan(strings.TrimPrefix(line, prefix), &v)
			}
		}
		return v
	}
	afterBody := httpGet(t, "http://"+p.info+"/metrics")
	if d := count(afterBody, "Get") - count(body, "Get"); d < gets {
		t.Errorf("call_seconds_count{method=Get} moved by %v after %d gets", d, gets)
	}
	if d := count(afterBody, "Mutate") - count(body, "Mutate"); d < puts {
		t.Errorf("call_seconds_count{method=Mutate} moved by %v after %d puts", d, puts)
	}
}
