package bulkload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/zkserver"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// cluster is a ZooKeeper and a server, shared by the package's tests
// (each uses tables of its own), started on first use and stopped by
// TestMain.
type cluster struct {
	zk  *zkserver.Server
	srv *server.Server
	c   *client.Client
	dir string
}

var shared struct {
	once sync.Once
	cl   *cluster
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cl := shared.cl; cl != nil {
		cl.c.Close()
		cl.srv.Shutdown(context.Background())
		cl.zk.Stop()
		os.RemoveAll(cl.dir)
	}
	os.Exit(code)
}

// startCluster returns the shared cluster. Without ZooKeeper the test is
// skipped, or fails if REGIONKV_REQUIRE_ZOOKEEPER is set.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	shared.once.Do(func() {
		cl := &cluster{}
		if cl.dir, shared.err = os.MkdirTemp("", "regionkv-bulkload-test-"); shared.err != nil {
			return
		}
		if cl.zk, shared.err = zkserver.Start(context.Background(), zkserver.Config{Dir: filepath.Join(cl.dir, "zk")}); shared.err != nil {
			return
		}
		cfg := server.Config{DataDir: filepath.Join(cl.dir, "data"), Port: server.FreePort, InfoPort: -1,
			ZKQuorum: cl.zk.Addr(), Logger: slog.New(slog.DiscardHandler)}
		// Tests copy the store files they list and count them: no
		// background compaction may merge or remove them meanwhile
		// (explicit ones still run). Raising hbase.hstore.compaction.min
		// was not enough: the overwrite rule (region/overwrite.go) compacts
		// a store whose newer files supersede a third of its bytes
		// whatever the file count, and TestBulkLoadStoreFilesBetweenServers,
		// which rewrites its rows twice, once lost a file between listing
		// and reading it.
		cfg.Region.DisableAutoCompaction = true
		cl.srv, shared.err = server.Start(cfg)
		if shared.err != nil {
			cl.zk.Stop()
			return
		}
		cl.c, shared.err = client.New(context.Background(), client.Options{ZKQuorum: cl.zk.Addr(), Timeout: 20 * time.Second})
		if shared.err != nil {
			cl.srv.Shutdown(context.Background())
			cl.zk.Stop()
			return
		}
		shared.cl = cl
	})
	if shared.err != nil {
		if os.Getenv("REGIONKV_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(shared.err)
		}
		t.Skip(shared.err)
	}
	return shared.cl
}

// uniqueTable returns base, or base with a number after it if a test of
// this process already used it: the server is shared, also across
// repeated runs (go test -count=2), and a table can be created once.
func uniqueTable(base string) string {
	tableNames.Lock()
	defer tableNames.Unlock()
	if tableNames.used == nil {
		tableNames.used = map[string]int{}
	}
	n := tableNames.used[base]
	tableNames.used[base] = n + 1
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s_%d", base, n+1)
}

var tableNames struct {
	sync.Mutex
	used map[string]int
}

func (cl *cluster) createTable(t *testing.T, name string, splits ...string) {
	t.Helper()
	var keys [][]byte
	for _, s := range splits {
		keys = append(keys, []byte(s))
	}
	require.NoError(t, cl.c.CreateTable(context.Background(), client.TableDescriptor{Name: name, Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"BLOCKSIZE": "1024"}}, {Name: "cf2"}}}, keys))
}

// value reads row's family:q.
func (cl *cluster) value(t *testing.T, table, row, family string) string {
	t.Helper()
	res, err := cl.c.Get(context.Background(), &client.Get{Table: table, Row: []byte(row)})
	require.NoError(t, err)
	for _, c := range res.Cells {
		if string(c.Family) == family {
			return string(c.Value)
		}
	}
	return ""
}

// writeFile writes q=<prefix><row> at ts 1 for each row to path, with o.
func writeFile(t *testing.T, path, family, prefix string, rows []string, o hfile.WriterOptions) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, o)
	require.NoError(t, err)
	for _, row := range rows {
		kv := encoding.KeyValue{Row: []byte(row), Family: []byte(family), Qualifier: []byte("q"), Timestamp: 1,
			Type: encoding.TypePut, Value: []byte(prefix + row)}
		if o.IncludesTags {
			kv.Tags = []byte{0, 2, 8, 'x'} // one tag: length 2, type 8, "x"
		}
		require.NoError(t, w.Append(&kv))
	}
	require.NoError(t, w.SetFileInfo("BULKLOAD_TIMESTAMP", []byte("12345678")))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

func rows(from, to byte, n int) []string {
	var out []string
	for c := from; c <= to; c++ {
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("%c%03d", c, i))
		}
	}
	return out
}

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBulkLoadSplitsAtRegionBoundaries(t *testing.T) {
	cl := startCluster(t)
	tbl := uniqueTable("t")
	cl.createTable(t, tbl, "g", "p")
	dir := t.TempDir()
	// One file straddling both boundaries (split twice), one that fits.
	big := filepath.Join(dir, "cf", "big")
	writeFile(t, big, "cf", "big-", rows('a', 'z', 20), hfile.WriterOptions{Compression: hfile.CompressionGZ,
		Encoding: encoding.EncodingFastDiff, BloomType: hfile.BloomRowCol, IncludesTags: true})
	small := filepath.Join(dir, "cf2", "small")
	writeFile(t, small, "cf2", "small-", rows('c', 'e', 5), hfile.WriterOptions{})
	// What HBase's tool skips.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cf", "_logs"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cf", "junk"), []byte("not an hfile"), 0o644))

	code, out, errOut := runMain(t, "--zk", cl.zk.Addr(), "-v", dir, tbl)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "loaded 4 files")
	require.Contains(t, out, "split 2 files at region boundaries")
	require.Contains(t, errOut, "not an HFile; skipped")
	for _, r := range rows('a', 'z', 20) {
		require.Equal(t, "big-"+r, cl.value(t, tbl, r, "cf"), r)
	}
	require.Equal(t, "small-d004", cl.value(t, tbl, "d004", "cf2"))
	_, err := os.Stat(small)
	require.True(t, os.IsNotExist(err), "a loaded file moves into its store")
	_, err = os.Stat(big)
	require.NoError(t, err, "a split file stays (its halves were loaded)")
	_, err = os.Stat(filepath.Join(dir, "cf", ".tmp"))
	require.True(t, os.IsNotExist(err), "the halves' directory is removed")
	// Each region got its share: every region has store files now.
	regions, err := cl.c.Regions(context.Background(), tbl)
	require.NoError(t, err)
	for _, r := range regions {
		files, err := cl.c.StoreFiles(context.Background(), r.Name, "cf")
		require.NoError(t, err)
		require.Len(t, files, 1, "region %s", r.Name)
	}
}

// TestBulkLoadHBaseFile splits a file HBase wrote (GZ, ROW bloom) at a
// boundary of a pre-split table.
func TestBulkLoadHBaseFile(t *testing.T) {
	cl := startCluster(t)
	tbl := uniqueTable("h")
	require.NoError(t, cl.c.CreateTable(context.Background(), client.TableDescriptor{Name: tbl, Families: []client.Family{{Name: "cf"}}},
		[][]byte{[]byte("aam")}))
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "..", "hfile", "testdata", "v3-gz-rowbloom-25cells.hfile"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cf", "0123456789abcdef0123456789abcdef"), b, 0o644))
	code, out, errOut := runMain(t, "--zk", cl.zk.Addr(), "--copy", dir, tbl)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "loaded 2 files")
	for i := 0; i < 25; i++ {
		row := "aa" + string(rune('a'+i))
		require.Equal(t, row, cl.value(t, tbl, row, "cf"), row)
	}
	_, err = os.Stat(filepath.Join(dir, "cf", "0123456789abcdef0123456789abcdef"))
	require.NoError(t, err, "--copy leaves the files")
}

// TestBulkLoadRetriesWhenRegionsChange: the first lookup sees the table as
// one region (as if it split after the lookup): the server refuses the
// straddling files (loaded=false), and the tool looks again, splits and
// loads.
func TestBulkLoadRetriesWhenRegionsChange(t *testing.T) {
	cl := startCluster(t)
	tbl := uniqueTable("r")
	cl.createTable(t, tbl, "m")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cf", "f"), "cf", "v-", rows('a', 'z', 3), hfile.WriterOptions{})
	writeFile(t, filepath.Join(dir, "cf2", "f"), "cf2", "w-", rows('k', 'o', 3), hfile.WriterOptions{})
	stale := func(regions []client.RegionInfo, pass int) []client.RegionInfo {
		if pass > 0 {
			return regions
		}
		one := regions[0]
		one.EndKey = nil
		return []client.RegionInfo{one}
	}
	regionsHook = stale
	defer func() { regionsHook = nil }()
	res, err := Run(context.Background(), cl.c, Options{Dir: dir, Table: tbl})
	require.NoError(t, err)
	require.Equal(t, 2, res.Passes)
	require.Equal(t, 2, res.Splits)
	require.Equal(t, 4, res.Files)
	require.Equal(t, "v-y002", cl.value(t, tbl, "y002", "cf"))
	require.Equal(t, "w-l001", cl.value(t, tbl, "l001", "cf2"))

	// A view that never gets right: the retries run out.
	writeFile(t, filepath.Join(dir, "cf", "g"), "cf", "x-", rows('a', 'z', 1), hfile.WriterOptions{})
	regionsHook = func(regions []client.RegionInfo, pass int) []client.RegionInfo { return stale(regions, 0) }
	_, err = Run(context.Background(), cl.c, Options{Dir: dir, Table: tbl, Retries: 2})
	require.ErrorContains(t, err, "after 3 lookups")
	require.Equal(t, "v-a000", cl.value(t, tbl, "a000", "cf"), "nothing of the failed run was loaded")
}

func TestBulkLoadRefusals(t *testing.T) {
	cl := startCluster(t)
	tbl := uniqueTable("u")
	cl.createTable(t, tbl)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cf", "f"), "cf", "v-", rows('a', 'c', 2), hfile.WriterOptions{})
	writeFile(t, filepath.Join(dir, "other", "f"), "other", "v-", rows('a', 'c', 2), hfile.WriterOptions{})
	code, _, errOut := runMain(t, "--zk", cl.zk.Addr(), dir, tbl)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "unmatched family names in the files to load: [other]")
	require.Equal(t, "", cl.value(t, tbl, "a000", "cf"))
	code, _, errOut = runMain(t, "--zk", cl.zk.Addr(), "-Dignore.unmatched.families=yes", dir, tbl)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "v-a000", cl.value(t, tbl, "a000", "cf"))

	code, _, errOut = runMain(t, "--zk", cl.zk.Addr(), dir, "nosuch")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "table nosuch does not exist")
	code, _, errOut = runMain(t, "--zk", cl.zk.Addr(), "-D", "bogus=1", dir, tbl)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown property "bogus"`)
	code, _, errOut = runMain(t, "--zk", cl.zk.Addr(), "-D", "create.table=yes", dir, tbl)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "does not create tables")
	code, _, errOut = runMain(t, "--zk", cl.zk.Addr(), dir)
	require.Equal(t, 2, code)
	require.Equal(t, "regionsrv bulkload: want DIR TABLE, got 1 argument: "+dir+"\nRun 'regionsrv bulkload --help' for usage.\n", errOut)
	// An empty directory loads nothing, as HBase's tool: a warning.
	code, out, errOut := runMain(t, "--zk", cl.zk.Addr(), t.TempDir(), tbl)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "no files to load")
	require.Contains(t, out, "loaded 0 files")
}

func TestSplitHFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, "cf", "v-", rows('a', 'f', 50), hfile.WriterOptions{Compression: hfile.CompressionSnappy,
		Encoding: encoding.EncodingPrefix, BloomType: hfile.BloomRowCol, IncludesTags: true})
	bottom, top := filepath.Join(dir, "b"), filepath.Join(dir, "t")
	require.NoError(t, SplitHFile(src, []byte("c010"), bottom, top, 2048))
	var all []string
	for _, p := range []string{bottom, top} {
		r, err := hfile.OpenFile(p, hfile.ReaderOptions{})
		require.NoError(t, err)
		require.NoError(t, r.Verify())
		require.Equal(t, hfile.CompressionSnappy, r.Trailer().CompressionCodec, p)
		require.Equal(t, encoding.EncodingPrefix, r.Encoding(), p)
		require.Equal(t, hfile.BloomRowCol, r.BloomType(), p)
		require.True(t, r.Format().IncludesTags, p)
		require.Equal(t, "12345678", string(r.FileInfo()["BULKLOAD_TIMESTAMP"]), "file info is kept")
		it := r.NewIterator(false)
		var kv encoding.KeyValue
		ok, err := it.First()
		for ; ok && err == nil; ok, err = it.Next() {
			it.KeyValue(&kv)
			if p == bottom {
				require.Less(t, string(kv.Row), "c010")
			} else {
				require.GreaterOrEqual(t, string(kv.Row), "c010")
			}
			require.Equal(t, []byte{0, 2, 8, 'x'}, kv.Tags)
			all = append(all, string(kv.Row))
		}
		require.NoError(t, err)
		it.Close()
		// The half's own last bloom key, not the whole file's.
		last := r.LastKey().Row()
		ok, err = r.MayContainRowCol(last, []byte("cf"), []byte("q"))
		require.NoError(t, err)
		require.True(t, ok)
		r.Close()
	}
	require.Equal(t, rows('a', 'f', 50), all)
	require.ErrorContains(t, SplitHFile(src, []byte("a"), bottom, top, 0), "bottom half empty")
	_, err := os.Stat(bottom)
	require.True(t, os.IsNotExist(err), "a failed split leaves no halves")
}

// scanAll returns every version of every cell of table, one string each.
func scanAll(t *testing.T, c *client.Client, table string) []string {
	t.Helper()
	sc := c.Scan(&client.Scan{Table: table, MaxVersions: 10})
	defer sc.Close()
	var out []string
	for {
		res, err := sc.Next(context.Background())
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		for _, kv := range res.Cells {
			out = append(out, fmt.Sprintf("%s/%s:%s/%d/%s", kv.Row, kv.Family, kv.Qualifier, kv.Timestamp, kv.Value))
		}
	}
}

// TestBulkLoadStoreFilesBetweenServers moves a table between two servers
// by their store files, as `regionsrv export` then `regionsrv bulkload`
// do: server A's flushed files (versions and delete markers among them,
// several per store) loaded into a table of server B split elsewhere give
// identical scans.
func TestBulkLoadStoreFilesBetweenServers(t *testing.T) {
	cl := startCluster(t) // A
	src := uniqueTable("src")
	cfgB := server.Config{DataDir: t.TempDir(), Port: server.FreePort, InfoPort: -1, ZKQuorum: cl.zk.Addr(), ZKRoot: "/b",
		Logger: slog.New(slog.DiscardHandler)}
	srvB, err := server.Start(cfgB)
	require.NoError(t, err)
	defer srvB.Shutdown(context.Background())
	cB, err := client.New(context.Background(), client.Options{ZKQuorum: cl.zk.Addr(), ZKRoot: "/b", Timeout: 20 * time.Second})
	require.NoError(t, err)
	defer cB.Close()
	ctx := context.Background()
	fams := []client.Family{{Name: "cf", Attributes: map[string]string{"VERSIONS": "3", "COMPRESSION": "GZ"}},
		{Name: "cf2", Attributes: map[string]string{"DATA_BLOCK_ENCODING": "FAST_DIFF"}}}
	require.NoError(t, cl.c.CreateTable(ctx, client.TableDescriptor{Name: src, Families: fams}, [][]byte{[]byte("h"), []byte("q")}))
	require.NoError(t, cB.CreateTable(ctx, client.TableDescriptor{Name: "dst", Families: fams},
		[][]byte{[]byte("d"), []byte("m"), []byte("t")}))
	all := rows('a', 'z', 8)
	for gen := int64(1); gen <= 3; gen++ {
		for i, row := range all {
			m := client.NewPut(src, []byte(row)).AddAt([]byte("cf"), []byte("q"), 1000*gen, []byte(fmt.Sprintf("%s-v%d", row, gen)))
			if gen == 1 || i%3 == 0 {
				m.AddAt([]byte("cf2"), []byte(fmt.Sprintf("c%d", i%4)), 1000*gen, []byte(row))
			}
			_, err := cl.c.Mutate(ctx, m)
			require.NoError(t, err)
		}
		if gen == 2 {
			for i, row := range all {
				if i%7 == 0 {
					_, err := cl.c.Mutate(ctx, client.NewDelete(src, []byte(row)).DeleteColumns([]byte("cf"), []byte("q"), 1500))
					require.NoError(t, err)
				}
				if i%11 == 0 {
					_, err := cl.c.Mutate(ctx, client.NewDelete(src, []byte(row)).DeleteFamily([]byte("cf2"), 2500))
					require.NoError(t, err)
				}
			}
		}
		require.NoError(t, cl.c.FlushTable(ctx, src))
	}
	want := scanAll(t, cl.c, src)
	require.NotEmpty(t, want)

	dir := t.TempDir()
	regions, err := cl.c.Regions(ctx, src)
	require.NoError(t, err)
	n := 0
	for _, r := range regions {
		for _, fam := range []string{"cf", "cf2"} {
			files, err := cl.c.StoreFiles(ctx, r.Name, fam)
			require.NoError(t, err)
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Join(dir, fam), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, fam, filepath.Base(f)), b, 0o644))
				n++
			}
		}
	}
	require.Greater(t, n, 6, "several files per store")
	res, err := Run(ctx, cB, Options{Dir: dir, Table: "dst"})
	require.NoError(t, err)
	require.Positive(t, res.Splits)
	require.Equal(t, want, scanAll(t, cB, "dst"))
	// And after B restarts and compacts.
	require.NoError(t, srvB.Shutdown(ctx))
	srvB, err = server.Start(cfgB)
	require.NoError(t, err)
	defer srvB.Shutdown(ctx)
	cB.Close() // the restarted server listens on another port
	cB, err = client.New(ctx, client.Options{ZKQuorum: cl.zk.Addr(), ZKRoot: "/b", Timeout: 20 * time.Second})
	require.NoError(t, err)
	regionsB, err := cB.Regions(ctx, "dst")
	require.NoError(t, err)
	for _, r := range regionsB {
		require.NoError(t, cB.CompactRegion(ctx, r.Name, true))
	}
	require.Eventually(t, func() bool {
		st, err := cB.TableCompactionState(ctx, "dst")
		return err == nil && st == client.CompactionNone
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, want, scanAll(t, cB, "dst"))
}
