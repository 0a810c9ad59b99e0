package pe

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
)

// runPEJSON runs `regionsrv pe --json ARGS...`, requires exit 0 and returns
// the parsed last line and the whole stdout.
func runPEJSON(t *testing.T, args ...string) (peJSON, string) {
	t.Helper()
	code, out, errOut := runCmd(append([]string{"pe", "--json"}, args...)...)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", errOut, out)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var res peJSON
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res), out)
	require.NotNil(t, res.BlockCache, "blockCache key missing: %s", lines[len(lines)-1])
	return res, out
}

// withPERegion opens the region pe wrote in dir (families from its stored
// descriptor), calls fn and closes it, before any later pe run opens dir.
func withPERegion(t *testing.T, dir string, fn func(r *region.Region)) {
	t.Helper()
	r, err := region.Open(dir, region.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	fn(r)
}

func getCell(t *testing.T, r *region.Region, row int64, family, qualifier string) []byte {
	t.Helper()
	res, err := r.Get(region.NewGet(peRowKey(row)).AddColumn([]byte(family), []byte(qualifier)))
	require.NoError(t, err)
	return res.Value([]byte(family), []byte(qualifier))
}

func TestPECommands(t *testing.T) {
	// Without --dir, pe works in a temporary directory and removes it.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, cmd := range []string{"sequentialWrite", "randomWrite", "increment", "append", "checkAndPut"} {
		t.Run(cmd, func(t *testing.T) {
			res, out := runPEJSON(t, "--rows", "200", "--valueSize", "100", cmd, "2")
			require.Equal(t, cmd, res.Command)
			require.Equal(t, 2, res.Clients)
			require.EqualValues(t, 400, res.Ops)
			require.Greater(t, res.Seconds, 0.0)
			require.Greater(t, res.OpsPerSec, 0.0)
			require.Greater(t, res.LatencyUs.P50, 0.0)
			require.LessOrEqual(t, res.LatencyUs.P50, res.LatencyUs.P99)
			require.LessOrEqual(t, res.LatencyUs.P99, res.LatencyUs.Max)
			require.Contains(t, out, cmd+": 2 clients, 400 ops in ")
			require.Contains(t, out, "flush: ")
			require.Contains(t, out, "region: {")
		})
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "pe left its temporary directory behind")
}

func TestPEWriteThenRandomRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	shape := []string{"--dir", dir, "--rows", "200", "--valueSize", "50", "--families", "2", "--columns", "3"}
	w, _ := runPEJSON(t, append(shape, "--blockEncoding", "FAST_DIFF", "--compress", "GZ", "--bloomFilter", "ROWCOL",
		"--writeToWAL=false", "-Dhbase.hregion.memstore.flush.size=65536", "sequentialWrite", "2")...)
	require.EqualValues(t, 400, w.Ops)

	// Every read finds its row, now read from the HFiles.
	for _, dist := range []string{"uniform", "zipfian", "latest"} {
		r, _ := runPEJSON(t, append(shape, "--requestDistribution", dist, "randomRead", "2")...)
		require.Equal(t, "randomRead", r.Command)
		require.EqualValues(t, 400, r.Ops, dist)
	}

	// The table holds exactly rows × clients rows, every column of every
	// family with a value of --valueSize letters.
	withPERegion(t, dir, func(reg *region.Region) {
		for row := int64(0); row < 400; row++ {
			for _, f := range []string{"info0", "info1"} {
				for _, q := range []string{"0", "1", "2"} {
					v := getCell(t, reg, row, f, q)
					require.Len(t, v, 50, "row %d %s:%s", row, f, q)
					require.Equal(t, -1, bytes.IndexFunc(v, func(r rune) bool { return r < 'A' || r > 'Z' }))
				}
			}
		}
		require.Nil(t, getCell(t, reg, 400, "info0", "0"))
	})

	// Reading beyond the table misses: the run fails.
	code, _, errOut := runCmd(append([]string{"pe"}, append(shape, "--keySpace", "800", "randomRead", "2")...)...)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "regionsrv pe: randomRead: ")
	require.Contains(t, errOut, "not found")
	require.Contains(t, errOut, "reads missed; was the table written with the same --rows")

	// A read command on an empty table says what to do.
	code, _, errOut = runCmd("pe", "--rows", "10", "randomRead", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no table to read: give the --dir of an earlier write run")
	code, _, errOut = runCmd("pe", "--dir", filepath.Join(t.TempDir(), "empty"), "--rows", "10", "randomRead", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is empty: run a write command")
}

func TestPEDuration(t *testing.T) {
	// An explicit --rows bounds the run, and --duration ends it sooner.
	res, out := runPEJSON(t, "--rows", "100000000", "--valueSize", "10", "--duration", "300ms", "randomWrite", "2")
	require.Less(t, res.Ops, int64(200000000))
	require.Greater(t, res.Ops, int64(0))
	require.GreaterOrEqual(t, res.Seconds, 0.3)
	require.Less(t, res.Seconds, 5.0)
	require.Contains(t, out, "(--duration 300ms reached)")

	// Without --rows, the clients run until --duration.
	res, _ = runPEJSON(t, "--duration", "200ms", "--keySpace", "100", "increment", "3")
	require.Greater(t, res.Ops, int64(0))
	require.GreaterOrEqual(t, res.Seconds, 0.2)
	require.Less(t, res.Seconds, 5.0)
}

// counters returns the IncrementTest counters of rows [0, n) of family.
func counters(t *testing.T, r *region.Region, n int64, family string) []int64 {
	t.Helper()
	out := make([]int64, n)
	for row := int64(0); row < n; row++ {
		if v := getCell(t, r, row, family, "IncrementTest"); v != nil {
			require.Len(t, v, 8)
			out[row] = int64(binary.BigEndian.Uint64(v))
		}
	}
	return out
}

func TestPEReadModifyWrite(t *testing.T) {
	// Without --keySpace every client walks rows [0, rows): each counter is
	// incremented once per client, in every family.
	dir := filepath.Join(t.TempDir(), "inc")
	res, _ := runPEJSON(t, "--dir", dir, "--rows", "50", "--families", "2", "increment", "3")
	require.EqualValues(t, 150, res.Ops)
	withPERegion(t, dir, func(reg *region.Region) {
		for _, f := range []string{"info0", "info1"} {
			got := counters(t, reg, 51, f)
			for row := 0; row < 50; row++ {
				require.EqualValues(t, 3, got[row], "%s row %d", f, row)
			}
			require.Zero(t, got[50])
		}
	})

	// append: the row key, once per client.
	dir = filepath.Join(t.TempDir(), "app")
	runPEJSON(t, "--dir", dir, "--rows", "20", "append", "3")
	withPERegion(t, dir, func(reg *region.Region) {
		for row := int64(0); row < 20; row++ {
			require.Equal(t, bytes.Repeat(peRowKey(row), 3), getCell(t, reg, row, "info0", "AppendTest"))
		}
	})

	// checkAndPut: the row key, in info0 only.
	dir = filepath.Join(t.TempDir(), "cap")
	runPEJSON(t, "--dir", dir, "--rows", "20", "--families", "2", "checkAndPut", "2")
	withPERegion(t, dir, func(reg *region.Region) {
		for row := int64(0); row < 20; row++ {
			require.Equal(t, peRowKey(row), getCell(t, reg, row, "info0", "CheckAndPutTest"))
			require.Nil(t, getCell(t, reg, row, "info1", "CheckAndPutTest"))
		}
	})
}

func TestPEKeySpace(t *testing.T) {
	// increment with --keySpace picks rows at random among the first 20:
	// every increment lands there, and the counters add up to the ops.
	for _, dist := range []string{"uniform", "zipfian", "latest"} {
		dir := filepath.Join(t.TempDir(), dist)
		res, _ := runPEJSON(t, "--dir", dir, "--rows", "100", "--keySpace", "20", "--requestDistribution", dist, "increment", "2")
		require.EqualValues(t, 200, res.Ops)
		withPERegion(t, dir, func(reg *region.Region) {
			got := counters(t, reg, 200, "info0")
			var sum int64
			for row, c := range got {
				if row >= 20 {
					require.Zero(t, c, "%s: row %d is outside the key space", dist, row)
				}
				sum += c
			}
			require.EqualValues(t, 200, sum, dist)
		})
	}

	// randomWrite likewise.
	dir := filepath.Join(t.TempDir(), "w")
	runPEJSON(t, "--dir", dir, "--rows", "100", "--valueSize", "10", "--keySpace", "10", "randomWrite", "1")
	withPERegion(t, dir, func(reg *region.Region) {
		found := 0
		for row := int64(0); row < 100; row++ {
			if getCell(t, reg, row, "info0", "0") != nil {
				require.Less(t, row, int64(10))
				found++
			}
		}
		require.Positive(t, found)
	})
}

func TestPEBadOptions(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"sequentialWrite"},
		{"sequentialWrite", "2", "extra"},
		{"bogusCommand", "1"},
		{"sequentialWrite", "0"},
		{"sequentialWrite", "two"},
		{"--rows", "0", "sequentialWrite", "1"},
		{"--valueSize", "-1", "sequentialWrite", "1"},
		{"--families", "0", "sequentialWrite", "1"},
		{"--columns", "0", "sequentialWrite", "1"},
		{"--blockEncoding", "BOGUS", "sequentialWrite", "1"},
		{"--compress", "LZO", "sequentialWrite", "1"},
		{"--bloomFilter", "ROWPREFIX_FIXED_LENGTH", "sequentialWrite", "1"},
		{"--requestDistribution", "pareto", "randomRead", "1"},
		{"--keySpace", "-5", "randomRead", "1"},
		{"--keySpace", "10", "sequentialWrite", "1"},
		{"--duration", "-1s", "randomWrite", "1"},
		{"--duration", "soon", "randomWrite", "1"},
		{"-D", "no.such.property=1", "sequentialWrite", "1"},
		{"-D", "novalue", "sequentialWrite", "1"},
		{"--noSuchOption", "sequentialWrite", "1"},
		{"--caching", "0", "scan", "1"},
		{"--keySpace", "10", "scan", "1"},
		{"--requestDistribution", "zipfian", "reverseScan", "1"},
		{"--keySpace", "10", "workloada", "1"},
		{"--requestDistribution", "latest", "workloadd", "1"},
		{"--keySpace", "10", "filterScan", "1"},
	} {
		code, out, errOut := runCmd(append([]string{"pe"}, args...)...)
		require.Equal(t, 2, code, "%q: %s", args, errOut)
		require.Empty(t, out, "%q", args)
		// The problem, then one line pointing to --help, not the usage.
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		require.Len(t, lines, 2, "%q: %s", args, errOut)
		require.True(t, strings.HasPrefix(lines[0], "regionsrv pe: "), "%q: %s", args, errOut)
		require.Equal(t, "Run 'regionsrv pe --help' for usage.", lines[1], "%q", args)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "regionsrv pe: want COMMAND NCLIENTS, got no arguments\n"},
		{[]string{"sequentialWrite"}, "regionsrv pe: want COMMAND NCLIENTS, got 1 argument: sequentialWrite\n"},
		{[]string{"a", "b", "c"}, "regionsrv pe: want COMMAND NCLIENTS, got 3 arguments: a b c\n"},
		{[]string{"--rows", "x", "scan", "1"}, "regionsrv pe: invalid value \"x\" for flag -rows: parse error\n"},
	} {
		_, _, errOut := runCmd(append([]string{"pe"}, c.args...)...)
		require.Equal(t, c.want+"Run 'regionsrv pe --help' for usage.\n", errOut, "%q", c.args)
	}
	for _, help := range []string{"--help", "-help"} {
		code, _, errOut := runCmd("pe", help)
		require.Equal(t, 0, code)
		require.Contains(t, errOut, "usage: regionsrv pe [options] COMMAND NCLIENTS")
		require.Contains(t, errOut, "  -rows int")
	}
	code, _, errOut := runCmd("pe", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "checkAndPut")
	for _, cmd := range []string{"sequentialRead", "scan", "reverseScan", "scanRange10", "scanRange100", "scanRange1000", "workloada", "workloadf"} {
		require.Contains(t, errOut, "  "+cmd+" ")
	}
}

func TestPERowKeysAndDistributions(t *testing.T) {
	require.Equal(t, "00000000000000000000000000", string(peRowKey(0)))
	require.Equal(t, "00000000000000000001048575", string(peRowKey(1048575)))
	v := peValue(rand.New(rand.NewPCG(1, 2)), 20)
	require.Len(t, v, 20)
	require.Equal(t, bytes.Repeat(v[:1], 8), v[:8])

	rng := rand.New(rand.NewPCG(3, 4))
	const n, draws = 1000, 100000
	hits := func(c peKeyChooser) []int {
		h := make([]int, n)
		for i := 0; i < draws; i++ {
			k := c.next(rng)
			require.True(t, k >= 0 && k < n, "key %d out of range", k)
			h[k]++
		}
		return h
	}
	// Zipfian: the hottest row gets far more than its uniform share (100),
	// and rank 0 is hotter than rank 1.
	z := newZipfian(n)
	ranks := make([]int, n)
	for i := 0; i < draws; i++ {
		ranks[z.next(rng)]++
	}
	require.Greater(t, ranks[0], 10*draws/n)
	require.Greater(t, ranks[0], ranks[1])

	c, err := newKeyChooser("zipfian", n, 500, 2)
	require.NoError(t, err)
	h := hits(c)
	hot := 0
	for k := range h {
		if h[k] > h[hot] {
			hot = k
		}
	}
	require.Greater(t, h[hot], 10*draws/n)

	// latest: the last rows of each client's range are the hottest.
	c, err = newKeyChooser("latest", n, 500, 2)
	require.NoError(t, err)
	h = hits(c)
	require.Greater(t, h[499], 10*draws/n)
	require.Greater(t, h[999], 10*draws/n)
	require.Less(t, h[0]+h[500], 2*draws/n)

	c, err = newKeyChooser("uniform", n, 500, 2)
	require.NoError(t, err)
	h = hits(c)
	for k := range h {
		require.Less(t, h[k], 3*draws/n)
	}
}

// writePETable writes a table of rows × clients rows of --valueSize 20 in
// dir with sequentialWrite, in several store files.
func writePETable(t *testing.T, dir string, rows, clients int) {
	t.Helper()
	w, _ := runPEJSON(t, "--dir", dir, "--rows", strconv.Itoa(rows), "--valueSize", "20", "--writeToWAL=false",
		"-Dhbase.hregion.memstore.flush.size=16384", "sequentialWrite", strconv.Itoa(clients))
	require.EqualValues(t, rows*clients, w.Ops)
}

// testClient returns client id of command cmd over r, as a pe run with
// --rows rows and NCLIENTS clients would set it up.
func testClient(r *region.Region, cmd string, rows int64, clients, id int) *peClient {
	t := &peTable{r: embeddedStore{r}, cmd: lookupPECommand(cmd), families: [][]byte{[]byte("info0")}, qualifiers: [][]byte{[]byte("0")},
		valueSize: 20, rows: rows, tableRows: rows * int64(clients), cacheBlocks: true}
	t.columns = []region.Column{{Family: t.families[0], Qualifier: t.qualifiers[0]}}
	return &peClient{t: t, id: int64(id), rng: rand.New(rand.NewPCG(1, uint64(id)))}
}

func TestPEReadCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	writePETable(t, dir, 300, 2)
	shape := []string{"--dir", dir, "--rows", "300"}

	// One op per row; scan and reverseScan check every row they get against
	// the row they expect next: client i's rows in increasing order for
	// scan, in decreasing order for reverseScan.
	for _, cmd := range []string{"sequentialRead", "scan", "reverseScan"} {
		res, out := runPEJSON(t, append(shape, "--caching", "100", cmd, "2")...)
		require.Equal(t, cmd, res.Command)
		require.EqualValues(t, 600, res.Ops, cmd)
		require.Nil(t, res.Rows, cmd)
		require.Nil(t, res.OpsByType, cmd)
		require.NotContains(t, out, "flush: ", "%s is not a write command", cmd)
	}
	res, _ := runPEJSON(t, append(shape, "--rows", "100", "--cacheBlocks=false", "reverseScan", "1")...)
	require.EqualValues(t, 100, res.Ops)

	// filterScan: one op per whole-table scan, which returns nothing.
	res, _ = runPEJSON(t, append(shape, "--rows", "20", "filterScan", "2")...)
	require.Equal(t, "filterScan", res.Command)
	require.EqualValues(t, 40, res.Ops)
	var warn strings.Builder
	o, _ := parsePEOptions([]string{"filterScan", "1"}, &warn)
	require.NotNil(t, o)
	require.Contains(t, warn.String(), "warning: --rows not given: each client runs 100000 filterScan operations, each a scan of the whole table")
	warn.Reset()
	_, _ = parsePEOptions([]string{"--rows=20", "filterScan", "1"}, &warn)
	require.Empty(t, warn.String())

	// Driven by hand: scan and reverseScan return the same rows, in
	// opposite order, and the check rejects any other order.
	withPERegion(t, dir, func(reg *region.Region) {
		for id := 0; id < 2; id++ {
			fwd, rev := testClient(reg, "scan", 300, 2, id), testClient(reg, "reverseScan", 300, 2, id)
			for n := int64(0); n < 300; n++ {
				fr, rr := fwd.row(n), rev.row(n)
				require.Equal(t, int64(id)*300+n, fr)
				require.Equal(t, int64(id)*300+299-n, rr)
				_, err := fwd.scanNext(fr)
				require.NoError(t, err)
				_, err = rev.scanNext(rr)
				require.NoError(t, err)
			}
			fwd.close()
			rev.close()
		}
		c := testClient(reg, "scan", 300, 2, 1)
		_, err := c.scanNext(300)
		require.NoError(t, err)
		_, err = c.scanNext(302) // the scanner is at 301: 302 is not next
		require.ErrorContains(t, err, "returned row 00000000000000000000000301, out of order")
		c.close()
		c = testClient(reg, "reverseScan", 300, 2, 0)
		_, err = c.scanNext(298) // a reversed scan of client 0 starts at 299
		require.ErrorContains(t, err, "out of order")
		c.close()
		// filterScan's filter is applied: a row whose info0:0 is the value
		// the client looks for is found, and fails the run.
		c = testClient(reg, "filterScan", 300, 2, 1)
		value := peValue(rand.New(rand.NewPCG(1, 1)), 20)
		for i := range value {
			value[i] |= 0x20
		}
		require.NoError(t, reg.Put(region.NewPut(peRowKey(650)).Add([]byte("info0"), []byte("0"), value)))
		_, err = c.filterScan(0)
		require.ErrorContains(t, err, `the filter matched 1 rows, from row "00000000000000000000000650"`)
		_, err = c.filterScan(0) // a fresh value: no match
		require.NoError(t, err)
		require.NoError(t, reg.Delete(region.NewDelete(peRowKey(650))))
		// A row missing from the range fails the scan where it should be.
		require.NoError(t, reg.Delete(region.NewDelete(peRowKey(123))))
		require.NoError(t, reg.Flush())
	})
	for _, cmd := range []string{"scan", "reverseScan", "sequentialRead"} {
		code, _, errOut := runCmd(append([]string{"pe"}, append(shape, cmd, "2")...)...)
		require.Equal(t, 1, code, "%s: %s", cmd, errOut)
		require.Contains(t, errOut, "client 0, row 00000000000000000000000123: ", cmd)
		require.Contains(t, errOut, "not found", cmd)
	}
}

func TestPEScanRange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	writePETable(t, dir, 300, 2)
	shape := []string{"--dir", dir, "--rows", "300"}
	for _, n := range []int64{10, 100, 1000} {
		cmd := "scanRange" + strconv.FormatInt(n, 10)
		// From row 0: every scan returns min(n, 600) rows.
		res, out := runPEJSON(t, append(shape, "--rows", "20", "--keySpace", "1", cmd, "2")...)
		require.EqualValues(t, 40, res.Ops, cmd)
		require.NotNil(t, res.Rows, cmd)
		require.EqualValues(t, 40*min(n, 600), *res.Rows, cmd)
		require.Contains(t, out, "rows read: ", cmd)
		// From random rows: each scan returns min(n, 600-start) >= 1 rows,
		// every one checked.
		res, _ = runPEJSON(t, append(shape, "--rows", "100", cmd, "2")...)
		require.EqualValues(t, 200, res.Ops, cmd)
		require.GreaterOrEqual(t, *res.Rows, int64(200), cmd)
		require.LessOrEqual(t, *res.Rows, 200*min(n, 600), cmd)
		if n == 10 {
			require.Greater(t, *res.Rows, int64(200*9), "most scans of 10 rows start more than 10 rows before the end")
		}
	}
	// Scans that start at the last row return it alone; beyond the table,
	// they miss.
	res, _ := runPEJSON(t, append(shape, "--rows", "10", "--keySpace", "600", "--requestDistribution", "latest", "scanRange100", "1")...)
	require.GreaterOrEqual(t, *res.Rows, int64(10))
	code, _, errOut := runCmd(append([]string{"pe"}, append(shape, "--keySpace", "2000", "scanRange10", "2")...)...)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "not found")
}

func TestPEWorkloads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	writePETable(t, dir, 300, 2)
	shape := []string{"--dir", dir, "--rows", "300", "--valueSize", "20"}
	kinds := map[string]map[string]float64{
		"workloada": {"READ": 0.5, "UPDATE": 0.5},
		"workloadb": {"READ": 0.95, "UPDATE": 0.05},
		"workloadc": {"READ": 1},
		"workloadd": {"READ": 0.95, "INSERT": 0.05},
		"workloade": {"SCAN": 0.95, "INSERT": 0.05},
		"workloadf": {"READ": 0.5, "READ-MODIFY-WRITE": 0.5},
	}
	inserted := int64(0)
	for _, w := range []string{"workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf"} {
		res, out := runPEJSON(t, append(shape, w, "2")...)
		require.Equal(t, w, res.Command)
		require.EqualValues(t, 600, res.Ops, w)
		require.Len(t, res.OpsByType, len(kinds[w]), w)
		var sum int64
		for k, p := range kinds[w] {
			got, ok := res.OpsByType[k]
			require.True(t, ok, "%s: no %s in %v", w, k, res.OpsByType)
			sum += got.Ops
			// The mix is drawn at random: within a generous margin of 600p.
			require.InDelta(t, 600*p, float64(got.Ops), 60, "%s %s", w, k)
			if got.Ops > 0 {
				require.Greater(t, got.LatencyUs.Max, 0.0, "%s %s", w, k)
				require.LessOrEqual(t, got.LatencyUs.P50, got.LatencyUs.Max, "%s %s", w, k)
			}
			require.Contains(t, out, "  "+k+": ", w)
		}
		require.EqualValues(t, 600, sum, w)
		require.NotNil(t, res.Rows, w)
		switch w {
		case "workloade":
			require.Greater(t, *res.Rows, 5*res.OpsByType["SCAN"].Ops, "scans of 1..100 rows average about 50")
			inserted = max(inserted, res.OpsByType["INSERT"].Ops)
		case "workloadd":
			inserted = res.OpsByType["INSERT"].Ops
		case "workloadc":
			require.EqualValues(t, 600, *res.Rows)
			require.NotContains(t, out, "flush: ", "workloadc only reads")
		}
	}
	// Inserts appended rows after the table's 600, in order.
	require.Positive(t, inserted)
	withPERegion(t, dir, func(reg *region.Region) {
		for row := int64(600); row < 600+inserted; row++ {
			require.Len(t, getCell(t, reg, row, "info0", "0"), 20, "inserted row %d", row)
		}
		require.Nil(t, getCell(t, reg, 600+inserted, "info0", "0"))
	})
}

func TestPEYCSBKeys(t *testing.T) {
	// latest over a growing set of rows: inserted rows are the hottest,
	// then the table's last-written rows; nothing beyond acked is drawn.
	tbl := &peTable{rows: 500, tableRows: 1000}
	s := newYCSBState(&ycsbD, tbl, 2, 100)
	rng := rand.New(rand.NewPCG(5, 6))
	for row := int64(1000); row < 1010; row++ {
		s.ack(row)
	}
	s.ack(1011) // 1010 is not done yet: 1011 must not be drawn
	require.EqualValues(t, 1010, s.acked.Load())
	hits := map[int64]int{}
	for i := 0; i < 100000; i++ {
		k := s.latestKey(rng)
		require.True(t, k >= 0 && k < 1010, "key %d", k)
		hits[k]++
	}
	require.Greater(t, hits[1009], hits[1000])
	require.Greater(t, hits[1000], hits[999])
	require.Greater(t, hits[999]+hits[499], 10*100000/1010)
	s.ack(1010)
	require.EqualValues(t, 1012, s.acked.Load())

	// The grown Zipfian matches one built at its size.
	z := newZipfian(1000).grow(1234)
	want := newZipfian(1234)
	require.InDelta(t, want.zetan, z.zetan, 1e-9)
	require.InDelta(t, want.eta, z.eta, 1e-12)

	// zipfian with inserts: draws stay below acked.
	s = newYCSBState(&ycsbE, tbl, 2, 1000)
	require.EqualValues(t, 1000+200, s.zipf.n)
	for i := 0; i < 10000; i++ {
		require.Less(t, s.nextKey(rng), int64(1000))
	}
}

// TestPEBlockCache: reads go through the block cache, its metrics reach the
// JSON line, and -D hfile.block.cache.* configures it (0 turns it off).
func TestPEBlockCache(t *testing.T) {
	dir := t.TempDir()
	writePETable(t, dir, 300, 1)
	j, _ := runPEJSON(t, "--dir", dir, "--rows", "300", "--json", "-D", "hfile.block.cache.size=4m",
		"-D", "hfile.block.cache.policy=AdaptiveLRU", "randomRead", "1")
	require.Greater(t, j.BlockCache["blockCacheHitCount"], float64(0), "%v", j.BlockCache)
	require.Greater(t, j.BlockCache["blockCacheCount"], float64(0))
	require.EqualValues(t, 4<<20, j.BlockCache["blockCacheMaxSize"])
	j, _ = runPEJSON(t, "--dir", dir, "--rows", "300", "--json", "-D", "hfile.block.cache.size=0", "randomRead", "1")
	require.Empty(t, j.BlockCache)
	var o, e bytes.Buffer
	require.Equal(t, 2, run([]string{"pe", "-D", "hfile.block.cache.policy=Nope", "randomRead", "1"}, &o, &e))
}

// TestPEProgressFirstFrame: the progress bar's rate is counted from when
// the bar is made, so its first frame divides by the time the clients
// ran, not by the microseconds between the frame's start and its drawing
// (which showed millions of ops/s).
func TestPEProgressFirstFrame(t *testing.T) {
	var buf bytes.Buffer
	bar := newProgressBar(&buf, "randomRead", -1)
	made := time.Now()
	time.Sleep(20 * time.Millisecond)
	const ops = 1000
	before := time.Now()
	require.NoError(t, bar.Set64(ops))
	m := regexp.MustCompile(`(\d+) ops/s`).FindStringSubmatch(bar.String())
	require.NotNil(t, m, "no rate in %q", bar.String())
	rate, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	// The bar started before made and drew after before, so its rate is
	// at most ops over the time between them (the bar rounds to whole
	// ops/s, hence the +1).
	require.LessOrEqual(t, rate, ops/before.Sub(made).Seconds()+1, bar.String())
	require.Greater(t, rate, 0.0)
}

// TestPEOverwriteRunLeavesSettledStore: a randomWrite over a small key
// space flushes many times; the run ends with the compactions its last
// flush asks for, which leave the store well under twice its live rows.
func TestPEOverwriteRunLeavesSettledStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	s, _ := runPEJSON(t, "--dir", dir, "--rows", "500", "--valueSize", "200", "sequentialWrite", "1")
	require.NotNil(t, s.StoreFiles)
	require.Equal(t, 1, s.StoreFiles.AfterFlush)
	require.Zero(t, s.StoreFiles.Compactions)
	live := s.StoreFiles.AfterCompactBytes
	w, out := runPEJSON(t, "--dir", dir, "--rows", "10000", "--keySpace", "500", "--valueSize", "200", "--seed", "7",
		"-Dhbase.hregion.memstore.flush.size=524288", "randomWrite", "1")
	require.NotNil(t, w.StoreFiles)
	require.LessOrEqual(t, w.StoreFiles.AfterCompaction, 2, out)
	require.Less(t, w.StoreFiles.AfterCompactBytes, 2*live, out)
	if w.StoreFiles.Compactions > 0 {
		require.Contains(t, out, "compactions after the flush: ")
	}
	withPERegion(t, dir, func(r *region.Region) {
		require.Equal(t, w.StoreFiles.AfterCompaction, len(r.Store("info0").Files()))
		for row := int64(0); row < 500; row++ {
			require.Len(t, getCell(t, r, row, "info0", "0"), 200)
		}
	})
}
