package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	} {
		code, out, errOut := runCmd(append([]string{"pe"}, args...)...)
		require.Equal(t, 2, code, "%q: %s", args, errOut)
		require.Empty(t, out, "%q", args)
		require.Contains(t, errOut, "usage: regionsrv pe [options] COMMAND NCLIENTS", "%q", args)
	}
	code, _, errOut := runCmd("pe", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "checkAndPut")
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
