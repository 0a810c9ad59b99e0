package server

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chromium returns Debian's chromium (what .ci/run installs), skipping the
// test without it unless REGIONKV_REQUIRE_CHROMIUM is set, which makes a
// missing browser a failure (CI sets it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REGIONKV_REQUIRE_CHROMIUM") != "" {
		t.Fatal("REGIONKV_REQUIRE_CHROMIUM is set but no chromium is installed (apt-get install chromium)")
	}
	t.Skip("skipping: no chromium (apt-get install chromium); set REGIONKV_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// dumpDOM loads url in headless chromium and returns the DOM it built.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	// Generous: a cold browser start on a loaded 2-core machine is slow;
	// this waits for the page, it does not time it.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium %s: %s", url, stderr.String())
	dom := string(out)
	require.Contains(t, dom, "<html", "chromium rendered nothing for %s: %s", url, stderr.String())
	return dom
}

// preText returns the text of the first <pre> of a DOM: how chromium shows
// a JSON or text response.
func preText(t *testing.T, dom string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre[^>]*>(.*?)</pre>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "no <pre> in %s", dom)
	return html.UnescapeString(m[1])
}

// cell returns the text of the element with the given id.
func cell(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<td[^>]* id="` + regexp.QuoteMeta(id) + `"[^>]*>(.*?)</td>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "no #%s in the page", id)
	return html.UnescapeString(m[1])
}

// TestInfoPagesInBrowser loads every info page in a real browser and
// checks what it renders: the server's attributes, the table with its
// regions and store files, the configuration, and /jmx's JSON.
func TestInfoPagesInBrowser(t *testing.T) {
	browser := chromium(t)
	s := testServer(t, t.TempDir(), nil)
	regions := infoTable(t, s, 8, 3)
	base := "http://" + s.InfoAddr()

	// / and /rs-status are one page, as are /table.jsp and /table: with
	// -short (the race run) the browser loads one of each.
	twins := func(a, b string) []string {
		if testing.Short() {
			return []string{a}
		}
		return []string{a, b}
	}
	for _, p := range twins("/", "/rs-status") {
		dom := dumpDOM(t, browser, base+p)
		require.Contains(t, dom, "<title>RegionKV: "+s.ServerName()+"</title>", p)
		require.Equal(t, s.ServerName(), cell(t, dom, "server-name"))
		require.Equal(t, "(none: not registered in ZooKeeper)", cell(t, dom, "zk-quorum"))
		require.Equal(t, "4", cell(t, dom, "region-count"))
		require.Equal(t, "8", cell(t, dom, "write-requests"), "only jmx_t was written to")
		require.Equal(t, "LRU", cell(t, dom, "cache-policy"))
		require.Equal(t, "100%", cell(t, dom, "cache-admission"))
		require.Regexp(t, `^RegionKV `, cell(t, dom, "version"))
		// The table's two regions, split at "m", with their store files.
		require.Contains(t, dom, `<a href="/table.jsp?name=jmx_t">jmx_t</a> (ENABLED, 2 regions)`)
		require.Regexp(t, `<td class="key">\(empty\)</td><td class="key">m</td>`, dom)
		require.Regexp(t, `<td class="key">m</td><td class="key">\(empty\)</td>`, dom)
		require.Regexp(t, `<div class="storefile">cf/[0-9a-f]+(\.hfile)? \([0-9.]+ (B|KB)\)</div>`, dom)
		require.Contains(t, dom, "<tbody>", "the browser built the tables' DOM")
	}

	dom := dumpDOM(t, browser, base+"/master-status")
	require.Regexp(t, `<tr data-table="jmx_t"><td>default</td><td><a href="/table.jsp\?name=jmx_t">jmx_t</a></td><td>ENABLED</td><td class="num">2</td>`, dom)
	require.Contains(t, dom, `<p id="namespaces">default, hbase</p>`)

	for _, p := range twins("/table.jsp?name=jmx_t", "/table?name=jmx_t") {
		dom = dumpDOM(t, browser, base+p)
		require.Contains(t, dom, `<span id="table-name">jmx_t</span>`, p)
		require.Equal(t, "ENABLED", cell(t, dom, "table-state"))
		require.Equal(t, "2 (2 online)", cell(t, dom, "table-regions"))
		require.Contains(t, dom, "<code>VERSIONS =&gt; '3'</code>", "the family's schema")
		for _, ri := range regions {
			info, err := regionInfoFromPB(ri)
			require.NoError(t, err)
			require.Contains(t, dom, `<tr data-region="`+info.EncodedName()+`"><td>`+html.EscapeString(string(info.RegionName()))+`</td>`)
		}
		require.Regexp(t, `<td>cf</td><td><code>[0-9a-f]+(\.hfile)?</code></td>`, dom, "the store files")
	}
	dom = dumpDOM(t, browser, base+"/table.jsp?name=nosuch")
	require.Contains(t, dom, `<p class="error" id="error">Table nosuch not found.</p>`)

	dom = dumpDOM(t, browser, base+"/conf?format=html")
	require.Regexp(t, `<tr data-name="hbase.rootdir"><td><code>hbase.rootdir</code></td><td><code>`+regexp.QuoteMeta(s.cfg.DataDir)+`</code></td><td>set</td>`, dom)
	dom = dumpDOM(t, browser, base+"/conf")
	require.Contains(t, dom, "hbase.hregion.memstore.flush.size", "the XML, as the browser shows it")

	dom = dumpDOM(t, browser, base+"/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server")
	var doc jmxDoc
	require.NoError(t, json.Unmarshal([]byte(preText(t, dom)), &doc))
	require.Len(t, doc.Beans, 1)
	require.Equal(t, 4.0, doc.Beans[0]["regionCount"])
	require.Equal(t, s.ServerName(), doc.Beans[0]["tag.serverName"])

	dom = dumpDOM(t, browser, base+"/dump")
	require.Contains(t, preText(t, dom), "RegionServer status for "+s.ServerName())
	dom = dumpDOM(t, browser, base+"/stacks")
	require.Contains(t, preText(t, dom), "goroutine ")
}
