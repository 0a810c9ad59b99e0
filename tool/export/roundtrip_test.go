package export

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/server"
	"github.com/regionkv/regionkv/tool/bulkload"
	"github.com/regionkv/regionkv/tool/shell"
	"github.com/stretchr/testify/require"
)

// TestExportBulkLoadRoundTrip moves a table between two servers the way
// the README tells an HBase user to: regionsrv export on the first, the
// exported create.rb run by the shell on the second (HBase's shell
// language), then completebulkload's layout loaded with regionsrv
// bulkload. Every version of every cell scans the same on both; so it does
// in a table split at other keys, whose load splits the files.
func TestExportBulkLoadRoundTrip(t *testing.T) {
	cl := startCluster(t)
	ctx := context.Background()
	td := client.TableDescriptor{Name: "mv", Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3", "COMPRESSION": "SNAPPY", "BLOOMFILTER": "ROWCOL",
			"DATA_BLOCK_ENCODING": "FAST_DIFF"}},
		{Name: "g", Attributes: map[string]string{"VERSIONS": "1", "COMPRESSION": "GZ"}}}}
	require.NoError(t, cl.c.CreateTable(ctx, td, [][]byte{[]byte("h"), []byte("p\x00\xff")}))
	for i := range 900 {
		row := []byte(fmt.Sprintf("%c%04d", "bhmpz"[i%5], i))
		if i%50 == 0 {
			row = append([]byte("p\x00"), byte(i))
		}
		m := client.NewPut("mv", row).
			AddAt([]byte("cf"), []byte("a"), 100, []byte("v100")).
			AddAt([]byte("cf"), []byte("a"), 200, []byte("v200")).
			AddAt([]byte("cf"), []byte("a"), 300, []byte(strings.Repeat("x", i%40))).
			AddAt([]byte("cf"), []byte("a"), 400, []byte("v400")).
			AddAt([]byte("g"), []byte(fmt.Sprint("q", i%3)), 500, []byte(fmt.Sprint(i)))
		_, err := cl.c.Mutate(ctx, m)
		require.NoError(t, err)
		if i%7 == 0 {
			_, err = cl.c.Mutate(ctx, client.NewDelete("mv", row).DeleteColumn([]byte("cf"), []byte("a"), 400))
			require.NoError(t, err)
		}
	}
	require.NoError(t, cl.c.FlushTable(ctx, "mv"))
	_, err := cl.c.Mutate(ctx, client.NewPut("mv", []byte("z-memstore")).Add([]byte("g"), []byte("q"), []byte("only in the memstore")))
	require.NoError(t, err)
	want := tableCells(t, cl.c, "mv")

	out := filepath.Join(t.TempDir(), "mv-export")
	code, _, stderr := cl.export(t, "--zk", cl.zk.Addr(), "-D", "zookeeper.znode.parent="+cl.root, "--table", "mv", "--out", out)
	require.Equal(t, 0, code, stderr)

	// The second server, on the same ZooKeeper under another root.
	rootB := "/hbase-export-b"
	srvB, err := server.Start(server.Config{DataDir: t.TempDir(), Port: server.FreePort, InfoPort: -1, ZKQuorum: cl.zk.Addr(),
		ZKRoot: rootB, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer srvB.Shutdown(context.Background())
	cB, err := client.New(ctx, client.Options{ZKQuorum: cl.zk.Addr(), ZKRoot: rootB})
	require.NoError(t, err)
	defer cB.Close()

	// create.rb, as `hbase shell -n create.rb` would run it.
	var sout, serr bytes.Buffer
	code = shell.Main(ctx, []string{"--zk", cl.zk.Addr(), "-D", "zookeeper.znode.parent=" + rootB, "-n",
		filepath.Join(out, "create.rb")}, strings.NewReader(""), &sout, &serr)
	require.Equal(t, 0, code, "create.rb: %s%s", serr.String(), sout.String())
	tdB, err := cB.TableDescriptor(ctx, "mv")
	require.NoError(t, err)
	for _, f := range tdB.Families {
		for _, g := range td.Families {
			if f.Name == g.Name {
				for k, v := range g.Attributes {
					require.Equal(t, v, f.Attributes[k], "%s: %s", f.Name, k)
				}
			}
		}
	}
	regions, err := cB.Regions(ctx, "mv")
	require.NoError(t, err)
	require.Len(t, regions, 3)
	require.Equal(t, []byte("p\x00\xff"), regions[2].StartKey, "the split keys, binary ones too")

	res, err := bulkload.Run(ctx, cB, bulkload.Options{Dir: out, Table: "mv", Copy: true})
	require.NoError(t, err)
	require.Zero(t, res.Splits, "no exported file straddles a region of the table create.rb makes")
	require.Equal(t, want, tableCells(t, cB, "mv"), "the table scans the same on both servers")

	// Into a table split elsewhere: the load splits the files.
	require.NoError(t, cB.CreateTable(ctx, client.TableDescriptor{Name: "mv2", Families: tdB.Families}, [][]byte{[]byte("c"), []byte("n")}))
	res, err = bulkload.Run(ctx, cB, bulkload.Options{Dir: out, Table: "mv2", Copy: true})
	require.NoError(t, err)
	require.Greater(t, res.Splits, 0)
	want2 := strings.Join(want, "\n")
	require.Equal(t, want2, strings.Join(tableCells(t, cB, "mv2"), "\n"))
}
