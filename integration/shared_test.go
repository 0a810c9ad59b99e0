package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// The shared server: one regionsrv process that every test which does not
// restart it or need special settings uses, each with its own tables. It
// is started by the first test that asks for it and stopped after all
// tests.
var (
	sharedDir  string
	sharedOnce sync.Once
	sharedProc *serverProc
	sharedErr  error
	// sharedFailed is set when the shared server misbehaves outside a
	// test: it did not stop cleanly on SIGTERM (a data race under -race
	// makes its exit status 66).
	sharedFailed bool
)

// mainTB reports the shared server's failures as an error from
// sharedServer instead of failing the test that happened to start it.
type mainTB struct{}

type mainTBFailure struct{ msg string }

func (mainTB) Helper()                           {}
func (mainTB) Fatal(args ...any)                 { panic(mainTBFailure{fmt.Sprint(args...)}) }
func (mainTB) Fatalf(format string, args ...any) { panic(mainTBFailure{fmt.Sprintf(format, args...)}) }
func (mainTB) Errorf(format string, args ...any) {
	sharedFailed = true
	fmt.Fprintf(os.Stderr, "FAIL: shared regionsrv: "+format+"\n", args...)
}

// sharedServer returns the shared regionsrv, starting it if needed.
func sharedServer(t *testing.T) *serverProc {
	t.Helper()
	sharedOnce.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				f, ok := r.(mainTBFailure)
				if !ok {
					panic(r)
				}
				sharedErr = fmt.Errorf("%s", f.msg)
			}
		}()
		if err := os.MkdirAll(sharedDir, 0o755); err != nil {
			sharedErr = err
			return
		}
		p := newServerProc(mainTB{}, sharedDir, "/hbase-shared")
		p.start()
		sharedProc = p
	})
	if sharedErr != nil {
		t.Fatalf("shared regionsrv: %v", sharedErr)
	}
	return sharedProc
}

// stopShared stops the shared server gracefully and reports whether all
// went well.
func stopShared() bool {
	if sharedProc != nil {
		sharedProc.stop()
	}
	return !sharedFailed
}

// sharedClient returns a client of the shared server, closed when t ends.
func sharedClient(t *testing.T) *client.Client {
	t.Helper()
	return newClient(t, sharedServer(t))
}

// newClient returns a client that finds p through ZooKeeper, closed when
// t ends.
func newClient(t *testing.T, p *serverProc, mod ...func(*client.Options)) *client.Client {
	t.Helper()
	o := client.Options{ZKQuorum: zk.Addr(), ZKRoot: p.root, Timeout: 20 * time.Second}
	for _, f := range mod {
		f(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(ctx, o)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testCtx returns a context bounded by d, canceled when t ends.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// fam returns family descriptors of the given names without attributes.
func fams(names ...string) []client.Family {
	out := make([]client.Family, len(names))
	for i, n := range names {
		out[i] = client.Family{Name: n}
	}
	return out
}

// createTable creates a table on c, failing t on error. A table of that
// name is dropped first.
func createTable(t *testing.T, c *client.Client, td client.TableDescriptor, splits ...string) {
	t.Helper()
	var keys [][]byte
	for _, s := range splits {
		keys = append(keys, []byte(s))
	}
	ctx := testCtx(t, 30*time.Second)
	err := c.CreateTable(ctx, td, keys)
	if client.IsException(err, "TableExistsException") {
		// Left by an earlier run on the shared server (go test -count).
		if err := c.DisableTable(ctx, td.Name); err != nil && !client.IsException(err, "TableNotEnabledException") {
			t.Fatalf("disable table %s: %v", td.Name, err)
		}
		if err := c.DeleteTable(ctx, td.Name); err != nil {
			t.Fatalf("delete table %s: %v", td.Name, err)
		}
		err = c.CreateTable(ctx, td, keys)
	}
	if err != nil {
		t.Fatalf("create table %s: %v", td.Name, err)
	}
}

// put writes family:qualifier=value in row, failing t on error.
func put(t *testing.T, c *client.Client, table, row, family, qualifier, value string) {
	t.Helper()
	m := client.NewPut(table, []byte(row)).Add([]byte(family), []byte(qualifier), []byte(value))
	if _, err := c.Mutate(testCtx(t, 30*time.Second), m); err != nil {
		t.Fatalf("put %s/%s/%s:%s: %v", table, row, family, qualifier, err)
	}
}

// mutate applies m, failing t on error.
func mutate(t *testing.T, c *client.Client, m *client.Mutation) *client.Result {
	t.Helper()
	res, err := c.Mutate(testCtx(t, 30*time.Second), m)
	if err != nil {
		t.Fatalf("mutate %v of %s/%q: %v", m.Type, m.Table, m.Row, err)
	}
	return res
}

// get reads a row, failing t on error.
func get(t *testing.T, c *client.Client, g *client.Get) *client.Result {
	t.Helper()
	res, err := c.Get(testCtx(t, 30*time.Second), g)
	if err != nil {
		t.Fatalf("get %s/%q: %v", g.Table, g.Row, err)
	}
	return res
}

// scanAll returns every result of s, failing t on error.
func scanAll(t *testing.T, c *client.Client, s *client.Scan) []*client.Result {
	t.Helper()
	res, _ := scanAllMetrics(t, c, s)
	return res
}

func scanAllMetrics(t *testing.T, c *client.Client, s *client.Scan) ([]*client.Result, map[string]int64) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	sc := c.Scan(s)
	defer sc.Close()
	var out []*client.Result
	for {
		r, err := sc.Next(ctx)
		if err == io.EOF {
			return out, sc.Metrics()
		}
		if err != nil {
			t.Fatalf("scan of %s: %v", s.Table, err)
		}
		out = append(out, r)
	}
}

// rowKeys returns the row keys of results.
func rowKeys(rs []*client.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Row())
	}
	return out
}

// cellStrings renders cells as "row/family:qualifier@ts=value" (the
// timestamp only if withTS).
func cellStrings(cells []*client.Cell, withTS bool) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		if withTS {
			out[i] = fmt.Sprintf("%s/%s:%s@%d=%s", c.Row, c.Family, c.Qualifier, c.Timestamp, c.Value)
		} else {
			out[i] = fmt.Sprintf("%s/%s:%s=%s", c.Row, c.Family, c.Qualifier, c.Value)
		}
	}
	return out
}

// equalStrings fails t unless got equals want.
func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d items %q, want %d items %q", what, len(got), truncate(got), len(want), truncate(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: item %d is %q, want %q\ngot  %q\nwant %q", what, i, got[i], want[i], truncate(got), truncate(want))
		}
	}
}

func truncate(s []string) []string {
	if len(s) > 20 {
		return append(s[:20:20], fmt.Sprintf("... (%d more)", len(s)-20))
	}
	return s
}

// httpGet returns the body of a GET of url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

// scrape reads p's /metrics and returns the samples without labels.
func scrape(t *testing.T, p *serverProc) map[string]float64 {
	t.Helper()
	body := httpGet(t, "http://"+p.info+"/metrics")
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "{") {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[name] = v
	}
	return out
}
