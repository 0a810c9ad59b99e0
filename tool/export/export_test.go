package export

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/testutil"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// hbaseStoreFileName is HBase's StoreFileInfo pattern for a store file
// that is not a reference, a link or a bulk-loaded file renamed with its
// sequence id: hex digits only (ours: 32 of them).
var hbaseStoreFileName = regexp.MustCompile(`^[0-9a-f]{32}$`)

type cluster struct {
	zk   *zkserver.Server
	srv  *server.Server
	dir  string
	root string
	c    *client.Client
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	zk, err := zkserver.Start(context.Background(), zkserver.Config{Dir: t.TempDir()})
	if err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { zk.Stop() })
	cl := &cluster{zk: zk, dir: t.TempDir(), root: "/hbase-export"}
	cl.srv, err = server.Start(server.Config{DataDir: cl.dir, Port: server.FreePort, InfoPort: -1, ZKQuorum: zk.Addr(),
		ZKRoot: cl.root, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { cl.srv.Shutdown(context.Background()) })
	cl.c, err = client.New(context.Background(), client.Options{ZKQuorum: zk.Addr(), ZKRoot: cl.root})
	require.NoError(t, err)
	t.Cleanup(func() { cl.c.Close() })
	return cl
}

func (cl *cluster) export(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// cellString is a cell as the export must keep it: key, type and value.
func cellString(kv *encoding.KeyValue) string {
	return fmt.Sprintf("%s/%s:%s/%d/%d=%s", encoding.FormatBytes(kv.Row), kv.Family, kv.Qualifier, kv.Timestamp, kv.Type, kv.Value)
}

// tableCells returns every version of every cell of the table, sorted.
func tableCells(t *testing.T, c *client.Client, table string) []string {
	t.Helper()
	sc := c.Scan(&client.Scan{Table: table, MaxVersions: 100})
	defer sc.Close()
	var out []string
	for {
		r, err := sc.Next(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		for _, kv := range r.Cells {
			out = append(out, cellString(kv))
		}
	}
	sort.Strings(out)
	return out
}

// exportedCells reads every exported file with our reader, checks each
// file's rows fall in its region, and returns the cells, sorted.
func exportedCells(t *testing.T, res *Result) []string {
	t.Helper()
	var out []string
	for _, f := range res.Files {
		require.Regexp(t, hbaseStoreFileName, filepath.Base(f.Path))
		require.Equal(t, f.Family, filepath.Base(filepath.Dir(f.Path)))
		r, err := hfile.OpenFile(f.Path, hfile.ReaderOptions{})
		require.NoError(t, err, f.Path)
		require.NoError(t, r.Verify(), f.Path)
		it := r.NewIterator(false)
		rg := res.Regions[f.Region]
		n := int64(0)
		ok, err := it.First()
		for ; ok && err == nil; ok, err = it.Next() {
			var kv encoding.KeyValue
			it.KeyValue(&kv)
			kv.SeqNum = it.SeqNum()
			require.True(t, bytes.Compare(kv.Row, rg.StartKey) >= 0 && (len(rg.EndKey) == 0 || bytes.Compare(kv.Row, rg.EndKey) < 0),
				"%s: row %q outside its region [%q, %q)", f.Path, kv.Row, rg.StartKey, rg.EndKey)
			require.Equal(t, f.Family, string(kv.Family))
			require.Zero(t, kv.SeqNum)
			out = append(out, cellString(&kv))
			n++
		}
		require.NoError(t, err)
		it.Close()
		require.Equal(t, f.Cells, n)
		require.Equal(t, "BULKLOAD_TIMESTAMP", func() string {
			if _, ok := r.FileInfo()["BULKLOAD_TIMESTAMP"]; ok {
				return "BULKLOAD_TIMESTAMP"
			}
			return ""
		}(), "file info of HBase's bulk load output")
		require.NoError(t, r.Close())
	}
	sort.Strings(out)
	return out
}

// TestExport exports a table over RPC (with a temporary snapshot) and
// from a data directory (an existing snapshot), and checks the files with
// our reader and the independent inspector: HBase's names and layout, one
// file or more per region and family and none across a region boundary,
// every version of every live cell and nothing else, and a create.rb with
// the descriptor and split keys.
func TestExport(t *testing.T) {
	cl := startCluster(t)
	ctx := context.Background()
	td := client.TableDescriptor{Name: "ex", Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3", "COMPRESSION": "GZ", "BLOOMFILTER": "ROWCOL",
			"BLOCKSIZE": "8192", "COLOR": "it's blue"}, Configuration: map[string]string{"hbase.hstore.blockingStoreFiles": "20"}},
		{Name: "g"}}}
	splitBinary := []byte("r\x00\x01'key")
	require.NoError(t, cl.c.CreateTable(ctx, td, [][]byte{[]byte("g"), splitBinary}))
	var ms []*client.Mutation
	for i := range 600 {
		row := []byte(fmt.Sprintf("%c%04d", "aghmrz"[i%6], i))
		m := client.NewPut("ex", row).
			AddAt([]byte("cf"), []byte("q"), 1000, []byte("old")).
			AddAt([]byte("cf"), []byte("q"), 2000, []byte(strings.Repeat("v", 50))).
			Add([]byte("g"), []byte("x"), []byte(strconv.Itoa(i)))
		ms = append(ms, m)
	}
	ms = append(ms, client.NewPut("ex", splitBinary).Add([]byte("cf"), []byte("q"), []byte("on the boundary")))
	for _, m := range ms {
		_, err := cl.c.Mutate(ctx, m)
		require.NoError(t, err)
	}
	// Deletes: they and what they mask must not be exported.
	_, err := cl.c.Mutate(ctx, client.NewDelete("ex", []byte("a0000")))
	require.NoError(t, err)
	_, err = cl.c.Mutate(ctx, client.NewDelete("ex", []byte("g0001")).DeleteColumn([]byte("cf"), []byte("q"), 2000))
	require.NoError(t, err)
	require.NoError(t, cl.c.FlushTable(ctx, "ex"))
	want := tableCells(t, cl.c, "ex")
	require.Greater(t, len(want), 1700)

	// Over RPC, with a temporary snapshot.
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := cl.export(t, "--zk", cl.zk.Addr(), "-D", "zookeeper.znode.parent="+cl.root,
		"--table", "ex", "--out", out, "--max-file-size", "2048")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "exported ex from snapshot export-ex-")
	require.Contains(t, stdout, "hbase completebulkload "+out+" ex")
	snaps, err := cl.c.ListSnapshots(ctx)
	require.NoError(t, err)
	require.Empty(t, snaps, "the temporary snapshot is deleted")
	tables, err := cl.c.ListTableNames(ctx, "", false, "")
	require.NoError(t, err)
	require.Equal(t, []string{"ex"}, tables, "the temporary table is dropped")

	res := checkLayout(t, out)
	require.Equal(t, want, exportedCells(t, res))
	require.Len(t, res.Regions, 3)
	perRegion := map[string]int{}
	for _, f := range res.Files {
		perRegion[fmt.Sprint(f.Region, f.Family)]++
	}
	for _, k := range []string{"0cf", "0g", "1cf", "1g", "2cf", "2g"} {
		require.Greater(t, perRegion[k], 1, "%s: a region's family past --max-file-size goes on in more files", k)
	}
	script := readFile(t, filepath.Join(out, "create.rb"))
	require.Contains(t, script, "create 'ex',\n  {NAME => 'cf', BLOCKSIZE => '8192', BLOOMFILTER => 'ROWCOL', COMPRESSION => 'GZ', VERSIONS => '3', "+
		"METADATA => {'COLOR' => 'it\\'s blue'}, CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}},\n  {NAME => 'g'}")
	require.Contains(t, script, "SPLITS => ['g', 'r\\x00\\x01\\x27key']\nexit\n")
	require.Equal(t, "g\nr\\x00\\x01\\x27key\n", readFile(t, filepath.Join(out, "splits.txt")))
	inspect(t, res)

	// From the data directory, of a snapshot taken before more writes.
	require.NoError(t, cl.c.Snapshot(ctx, "ex", "s1", nil))
	_, err = cl.c.Mutate(ctx, client.NewPut("ex", []byte("after")).Add([]byte("g"), []byte("x"), []byte("later")))
	require.NoError(t, err)
	out2 := filepath.Join(t.TempDir(), "out2")
	code, _, stderr = cl.export(t, "--dir", cl.dir, "--snapshot", "s1", "--table", "ex", "--out", out2)
	require.Equal(t, 0, code, stderr)
	res2 := checkLayout(t, out2)
	require.Equal(t, want, exportedCells(t, res2))
	for _, f := range res2.Files {
		_, err := os.Stat(f.Path)
		require.NoError(t, err)
	}
	require.Equal(t, 3*2, len(res2.Files), "one file per region and family below the default size")
	snaps, err = cl.c.ListSnapshots(ctx)
	require.NoError(t, err)
	require.Len(t, snaps, 1, "an export of a given snapshot keeps it")

	// Refusals.
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--dir", cl.dir, "--table", "ex", "--out", filepath.Join(t.TempDir(), "x")}, 1, "needs a snapshot"},
		{[]string{"--dir", cl.dir, "--snapshot", "s1", "--table", "other", "--out", filepath.Join(t.TempDir(), "x")}, 1, "is of table ex"},
		{[]string{"--dir", cl.dir, "--snapshot", "nope", "--table", "ex", "--out", filepath.Join(t.TempDir(), "x")}, 1, "SnapshotDoesNotExistException"},
		{[]string{"--dir", cl.dir, "--snapshot", "s1", "--table", "ex", "--out", out2}, 1, "is not empty"},
		{[]string{"--zk", cl.zk.Addr(), "-D", "zookeeper.znode.parent=" + cl.root, "--table", "nope", "--out", filepath.Join(t.TempDir(), "x")}, 1, "SnapshotCreationException"},
		{[]string{"--table", "ex"}, 2, "--table and --out are required"},
		{[]string{"--dir", cl.dir, "--zk", "h:1", "--table", "ex", "--out", "x"}, 2, "not both"},
		{[]string{"-D", "nope=1", "--table", "ex", "--out", "x"}, 2, "export reads only"},
	} {
		code, _, stderr := cl.export(t, c.args...)
		require.Equal(t, c.code, code, "%q: %s", c.args, stderr)
		require.Contains(t, stderr, c.msg, "%q", c.args)
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(out), "x"))
	require.True(t, os.IsNotExist(err))
}

// checkLayout checks completebulkload's layout in dir and returns what it
// holds as a Result: the regions from splits.txt, the files read back.
func checkLayout(t *testing.T, dir string) *Result {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	res := &Result{Regions: []Region{{}}}
	for _, line := range strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(dir, "splits.txt")), "\n"), "\n") {
		if line == "" {
			continue
		}
		k := unbinary(t, line)
		res.Regions[len(res.Regions)-1].EndKey = k
		res.Regions = append(res.Regions, Region{StartKey: k})
	}
	for _, e := range entries {
		if !e.IsDir() {
			require.Contains(t, []string{"create.rb", "splits.txt"}, e.Name())
			continue
		}
		require.NotEqual(t, tmpDirName, e.Name(), "the temporary directory is removed")
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		for _, f := range files {
			p := filepath.Join(dir, e.Name(), f.Name())
			r, err := hfile.OpenFile(p, hfile.ReaderOptions{})
			require.NoError(t, err)
			first, last := r.FirstKey().Row(), r.LastKey().Row()
			cells := int64(r.Trailer().EntryCount)
			require.NoError(t, r.Close())
			region := -1
			for i, rg := range res.Regions {
				if bytes.Compare(first, rg.StartKey) >= 0 && (len(rg.EndKey) == 0 || bytes.Compare(first, rg.EndKey) < 0) {
					region = i
				}
			}
			require.GreaterOrEqual(t, region, 0)
			rg := res.Regions[region]
			require.True(t, len(rg.EndKey) == 0 || bytes.Compare(last, rg.EndKey) < 0, "%s straddles a region boundary", p)
			res.Files = append(res.Files, File{Path: p, Family: e.Name(), Region: region, Cells: cells})
		}
	}
	return res
}

// unbinary is HBase's Bytes.toBytesBinary.
func unbinary(t *testing.T, s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			require.NoError(t, err)
			out = append(out, byte(n))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// inspect checks every exported file with shared/tools/hfile_inspect.py,
// a reader written from the format description that shares no code with
// ours: HFile v3, every block's checksum right, the cells counted, and the
// cells it prints in order and in the file's region.
func inspect(t *testing.T, res *Result) {
	tool := filepath.Join(testutil.SharedDir(t), "tools", "hfile_inspect.py")
	blockRe := regexp.MustCompile(`(?m)^block @(\d+) (\S+) .* crc_ok=(\w+)$`)
	cellsRe := regexp.MustCompile(`cells in block: (\d+)`)
	kvRe := regexp.MustCompile(`kv row=b'([^']*)' fam=b'(\w+)'`)
	for _, f := range res.Files {
		out, err := exec.Command("python3", tool, f.Path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		text := string(out)
		require.Contains(t, text, "major 3 minor 3", f.Path)
		require.Contains(t, text, "includesTags True includesMvcc True", f.Path)
		blocks := blockRe.FindAllStringSubmatch(text, -1)
		require.NotEmpty(t, blocks)
		for _, b := range blocks {
			require.Equal(t, "True", b[3], "%s: block at %s", f.Path, b[1])
		}
		total := int64(0)
		for _, m := range cellsRe.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[1])
			total += int64(n)
		}
		require.Equal(t, f.Cells, total, f.Path)
		rg := res.Regions[f.Region]
		for _, m := range kvRe.FindAllStringSubmatch(text, -1) {
			require.Equal(t, f.Family, m[2])
			row := pyBytes(m[1])
			require.True(t, bytes.Compare(row, rg.StartKey) >= 0 && (len(rg.EndKey) == 0 || bytes.Compare(row, rg.EndKey) < 0),
				"%s: the inspector reads row %q outside its region", f.Path, row)
		}
	}
}

// pyBytes decodes the inside of a Python bytes literal as the inspector
// prints rows (\xNN escapes; our rows hold no quotes).
func pyBytes(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			n, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			out = append(out, byte(n))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}
