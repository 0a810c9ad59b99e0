package pe

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestPEMetaKey(t *testing.T) {
	require.Equal(t, "000042", string(peMetaKey(42, 6)))
	require.Equal(t, "100000", string(peMetaKey(100000, peMetaWidth(100000))))
	require.Equal(t, "7", string(peMetaKey(7, 1)))
	require.Equal(t, 3, peMetaWidth(100))
}

// TestPEMetaWrite checks the rows metaWrite writes against HBase's
// MetaTableAccessor format, decoded here independently of the server's
// helpers: row "TestTable,<start>,<id>.<md5 of TestTable,start,id>.", a
// PBUF RegionInfo of [key(n), key(n+1)), the location columns, all in the
// meta comparator's order, in an HFile that names HBase's meta comparator.
func TestPEMetaWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "meta")
	res, out := runPEJSON(t, "--dir", dir, "--rows", "60", "--seed", "3", "metaWrite", "2")
	require.EqualValues(t, 120, res.Ops)
	require.Contains(t, out, "flush: ")

	desc, err := os.ReadFile(filepath.Join(dir, ".regioninfo"))
	require.NoError(t, err)
	require.Contains(t, string(desc), `"meta": true`)
	files, err := filepath.Glob(filepath.Join(dir, "info", "*.hfile"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	code, trailer, errOut := runCmd("hfile", "-m", files[0])
	require.Equal(t, 0, code, errOut)
	require.Contains(t, trailer, "comparatorClassName=org.apache.hadoop.hbase.MetaCellComparator")

	withPERegion(t, dir, func(r *region.Region) {
		sc, err := r.NewScanner(&region.Scan{})
		require.NoError(t, err)
		defer sc.Close()
		info := []byte("info")
		for n := int64(0); ; n++ {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				require.EqualValues(t, 120, n)
				break
			}
			start, end := fmt.Sprintf("%03d", n), fmt.Sprintf("%03d", n+1)
			v := res.Value(info, []byte("regioninfo"))
			require.True(t, strings.HasPrefix(string(v), "PBUF"), "%q", v)
			var ri hbasepb.RegionInfo
			require.NoError(t, proto.Unmarshal(v[4:], &ri))
			require.Equal(t, "default", string(ri.GetTableName().GetNamespace()))
			require.Equal(t, "TestTable", string(ri.GetTableName().GetQualifier()))
			require.Equal(t, start, string(ri.GetStartKey()))
			require.Equal(t, end, string(ri.GetEndKey()))
			require.False(t, ri.GetOffline())
			require.False(t, ri.GetSplit())
			require.Zero(t, ri.GetReplicaId())
			prefix := fmt.Sprintf("TestTable,%s,%d", start, ri.GetRegionId())
			sum := md5.Sum([]byte(prefix))
			require.Equal(t, prefix+"."+hex.EncodeToString(sum[:])+".", string(res.Cells[0].Row))

			require.Equal(t, "localhost:60010", string(res.Value(info, []byte("server"))))
			require.Len(t, res.Value(info, []byte("serverstartcode")), 8)
			require.Equal(t, uint64(n), binary.BigEndian.Uint64(res.Value(info, []byte("seqnumDuringOpen"))))
			require.Equal(t, "CLOSED", string(res.Value(info, []byte("state"))))
		}
	})
}

// TestPEMetaRandomRead checks that the embedded lookups find the region
// that contains each key, and that a hole in meta, or a key past the last
// region, fails the run.
func TestPEMetaRandomRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "meta")
	runPEJSON(t, "--dir", dir, "--rows", "10", "metaWrite", "1")

	// Every key finds its own region.
	withPERegion(t, dir, func(r *region.Region) {
		m := embeddedMeta{r: r, table: "TestTable"}
		first, n, err := m.regions()
		require.NoError(t, err)
		require.EqualValues(t, 10, n)
		require.Equal(t, "00", string(first.StartKey))
		for i := int64(0); i < 10; i++ {
			reg, err := m.locateRegion(peMetaKey(i, 2))
			require.NoError(t, err)
			require.True(t, reg.found)
			require.Equal(t, string(peMetaKey(i, 2)), string(reg.start))
			require.Equal(t, string(peMetaKey(i+1, 2)), string(reg.end))
		}
		reg, err := m.locateRegion([]byte("0")) // below the first region
		require.NoError(t, err)
		require.False(t, reg.found)
	})

	// The default key space is the table's regions.
	res, out := runPEJSON(t, "--dir", dir, "--rows", "300", "--seed", "5", "metaRandomRead", "2")
	require.EqualValues(t, 600, res.Ops)
	require.Contains(t, out, "metaRandomRead: 2 clients, 600 ops")
	res, _ = runPEJSON(t, "--dir", dir, "--duration", "200ms", "metaRandomRead", "1")
	require.Greater(t, res.Ops, int64(0))

	// Key 10 is past the last region, [09, 10).
	code, _, errOut := runCmd("pe", "--dir", dir, "--rows", "300", "--seed", "5", "--keySpace", "11", "metaRandomRead", "1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `region 10 (key 10): row "10": hbase:meta has region "TestTable,09,`)

	// Without region 03 its keys land in region 02, which does not hold
	// them.
	withPERegion(t, dir, func(r *region.Region) {
		m := embeddedMeta{r: r, table: "TestTable"}
		reg, err := m.locateRegion([]byte("03"))
		require.NoError(t, err)
		require.NoError(t, r.Delete(&region.Delete{Row: reg.name}))
	})
	code, _, errOut = runCmd("pe", "--dir", dir, "--rows", "300", "--seed", "5", "--keySpace", "10", "metaRandomRead", "1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `key 03`)
	require.Contains(t, errOut, `which does not contain it`)
	require.Contains(t, errOut, "lookups found no region containing the key")

	// A directory without meta rows is refused with a hint.
	empty := filepath.Join(t.TempDir(), "data")
	runPEJSON(t, "--dir", empty, "--rows", "10", "sequentialWrite", "1")
	code, _, errOut = runCmd("pe", "--dir", empty, "--rows", "10", "metaRandomRead", "1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "run metaWrite")
}
