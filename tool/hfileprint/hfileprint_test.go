package hfileprint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

const (
	hbaseFile   = "../../hfile/testdata/v3-gz-rowbloom-25cells.hfile"
	corruptFile = "../../hfile/testdata/v3-gz-corrupt-block.hfile"
)

// runCmd runs `regionsrv ARGS...`, whose first argument is "hfile".
func runCmd(args ...string) (code int, stdout, stderr string) {
	if args[0] != "hfile" {
		panic("hfileprint tests: no command " + args[0])
	}
	var o, e bytes.Buffer
	code = Main(args[1:], &o, &e)
	return code, o.String(), e.String()
}

func TestHFilePrintCells(t *testing.T) {
	code, out, errOut := runCmd("hfile", "-p", hbaseFile)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 26)
	require.Equal(t, "K: aaa/cf:/1740407086032/Put/vlen=3/seqid=2 V: aaa", lines[0])
	require.Equal(t, "K: aay/cf:/1740407086033/Put/vlen=3/seqid=26 V: aay", lines[24])
	require.Equal(t, "Scanned kv count -> 25", lines[25])

	code, out, _ = runCmd("hfile", "-e", hbaseFile)
	require.Equal(t, 0, code)
	require.Contains(t, out, "K: aab/cf:/1740407086032/Put/vlen=3/seqid=3\n")
	require.NotContains(t, out, " V: ")
}

func TestHFileMetaIndexHeadersStats(t *testing.T) {
	code, out, errOut := runCmd("hfile", "-m", "-b", "-h", "-s", "-k", hbaseFile)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"entryCount=25", "compressionCodec=GZ", "comparatorClassName=org.apache.hadoop.hbase.InnerStoreCellComparator",
		"majorVersion=3, minorVersion=3",
		"    BLOOM_FILTER_TYPE = ROW\n", "    MAX_MEMSTORE_TS_KEY = 26\n", "    hfile.LASTKEY = aay/cf:/1740407086033/Put\n",
		"    TIMERANGE = 1740407086032....1740407086033\n",
		"Bloom filter:\n    BloomSize: 32\n    No of Keys in bloom: 25\n",
		"Delete Family Bloom filter:\n    Not present\n",
		"blockType=DATA, offset=0, onDiskSizeWithoutHeader=181, uncompressedSizeWithoutHeader=725, prevBlockOffset=-1, checksumType=CRC32C",
		"blockType=BLOOM_CHUNK, offset=214", "blockType=ROOT_INDEX, offset=386", "blockType=GENERAL_BLOOM_META, offset=819",
		"  key=aaa/cf:/1740407086032/Put\n    offset=0, dataSize=214\n",
		"Key length: count=25, min=17, max=17",
		"Key of biggest row: aaa\n",
	} {
		require.Contains(t, out, want)
	}
}

func TestHFileCorruptFile(t *testing.T) {
	code, _, errOut := runCmd("hfile", "-p", corruptFile)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "v3-gz-corrupt-block.hfile")
	require.Contains(t, errOut, "offset 0")
	require.Contains(t, errOut, "checksum mismatch")

	code, _, errOut = runCmd("hfile", "-h", corruptFile)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "offset 0")

	// Not an HFile at all.
	junk := filepath.Join(t.TempDir(), "junk")
	require.NoError(t, os.WriteFile(junk, bytes.Repeat([]byte{7}, 5000), 0o644))
	code, _, errOut = runCmd("hfile", "-p", junk)
	require.Equal(t, 1, code)
	require.Equal(t, "regionsrv hfile: "+junk+": not an HFile: no HFile trailer (magic \"TRABLK\\\"$\" and a version) in its last 4096 bytes\n", errOut)
	short := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(short, []byte("hello"), 0o644))
	code, _, errOut = runCmd("hfile", short)
	require.Equal(t, 1, code)
	require.Equal(t, "regionsrv hfile: "+short+": not an HFile: its 5 bytes are fewer than an HFile trailer's 4096\n", errOut)
}

// TestHFileSummaryAndCheck: without flags the printer says what the file
// is; -k on a good file says that it passed.
func TestHFileSummaryAndCheck(t *testing.T) {
	code, out, errOut := runCmd("hfile", hbaseFile)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	require.Equal(t, hbaseFile+": HFile v3.3, 5000 bytes\n"+
		"  cells: 25, compression: GZ, data block encoding: NONE, bloom filter: ROW\n"+
		"  data index: 1 level(s), 1 root entries; comparator: org.apache.hadoop.hbase.InnerStoreCellComparator\n"+
		"  first key: aaa/cf:/1740407086032/Put\n"+
		"  last key: aay/cf:/1740407086033/Put\n"+
		"(-m prints the metadata, -p the cells, -k checks the file; --help lists every flag)\n", out)

	code, out, errOut = runCmd("hfile", "-k", hbaseFile)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "OK: "+hbaseFile+": 25 cells in order; the index, the block chain and the entry count are consistent\n", out)
}

func TestHFileRowOrderCheck(t *testing.T) {
	// Write a meta-ordered file and read it back with the order check: the
	// meta comparator's order is not byte order, and -k must use the file's.
	path := filepath.Join(t.TempDir(), "meta.hfile")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, hfile.WriterOptions{Comparer: encoding.MetaComparer})
	require.NoError(t, err)
	for _, row := range []string{"t1,,1.a.", "t1,\x03,2.b.", "t1,a,3.c."} {
		require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte(row), Family: []byte("info"), Qualifier: []byte("regioninfo"), Type: encoding.TypePut}))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	code, out, errOut := runCmd("hfile", "-k", "-p", path)
	require.Equal(t, 0, code, errOut+out)
	require.NotContains(t, out, "WARNING")

	// Relabel the same file as byte-ordered (the two class names have the
	// same length): now "t1,\x03,..." sorts before "t1,,..." and -k must
	// report it and fail.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte("org.apache.hadoop.hbase.MetaCellComparator"), []byte("org.apache.hadoop.hbase.CellComparatorImpl"), 1)
	bad := filepath.Join(t.TempDir(), "relabelled.hfile")
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	code, out, errOut = runCmd("hfile", "-k", bad)
	require.Equal(t, 1, code)
	require.Contains(t, out, "WARNING, previous row is greater than current row")
	require.Contains(t, errOut, "1 out-of-order keys")
}

// TestHFileUsage: a bad command line gets the problem and one line
// pointing to --help; --help prints the usage and exits 0; errors are
// prefixed once.
func TestHFileUsage(t *testing.T) {
	const hint = "Run 'regionsrv hfile --help' for usage.\n"
	code, out, errOut := runCmd("hfile")
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Equal(t, "regionsrv hfile: want one path, got no arguments\n"+hint, errOut)
	code, _, errOut = runCmd("hfile", "a", "b")
	require.Equal(t, 2, code)
	require.Equal(t, "regionsrv hfile: want one path, got 2 arguments: a b\n"+hint, errOut)
	code, _, errOut = runCmd("hfile", "-x", hbaseFile)
	require.Equal(t, 2, code)
	require.Equal(t, "regionsrv hfile: flag provided but not defined: -x\n"+hint, errOut)
	for _, help := range []string{"--help", "-help"} {
		code, out, errOut = runCmd("hfile", help)
		require.Equal(t, 0, code, help)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errOut, "usage: regionsrv hfile [-p] [-m] [-s] [-b] [-h] [-k] [-e] FILE\n"), errOut)
		require.Contains(t, errOut, "  -k\t")
	}
	code, _, errOut = runCmd("hfile", "-p", "/nonexistent/file")
	require.Equal(t, 1, code)
	require.Equal(t, "regionsrv hfile: open /nonexistent/file: no such file or directory\n", errOut)
}

// trailerField returns the offset and length, in file b, of the value of
// trailer field num (a varint).
func trailerField(t *testing.T, b []byte, num protowire.Number) (tagAt, valueAt, valueLen int) {
	t.Helper()
	base := len(b) - hfile.TrailerSize
	l, n := protowire.ConsumeVarint(b[base+8:])
	pos := base + 8 + n
	pb := b[pos : pos+int(l)]
	for len(pb) > 0 {
		got, typ, m := protowire.ConsumeTag(pb)
		v := protowire.ConsumeFieldValue(got, typ, pb[m:])
		require.Positive(t, v)
		if got == num {
			return pos, pos + m, v
		}
		pos += m + v
		pb = pb[m+v:]
	}
	t.Fatalf("no trailer field %d", num)
	return 0, 0, 0
}

// TestHFileDamagedTrailer: -h and -k fail, with the reason, on files whose
// trailer is damaged, including damage that Open cannot see.
func TestHFileDamagedTrailer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.hfile")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, hfile.WriterOptions{BlockSize: 256})
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte(fmt.Sprintf("row%04d", i)), Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: 1, Type: encoding.TypePut, Value: []byte("value")}))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	code, _, errOut := runCmd("hfile", "-h", "-k", path)
	require.Equal(t, 0, code, errOut)

	damage := func(name string, fn func(b []byte)) string {
		b := bytes.Clone(good)
		fn(b)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	// entry_count's tag turned into a fixed64: read as a varint-less
	// field, the count would be 0 and the file empty.
	wireType := damage("wiretype.hfile", func(b []byte) {
		tag, _, _ := trailerField(t, b, 7)
		b[tag] ^= 1
	})
	// last_data_block_offset one lower: scans would stop a block early.
	lastBlock := damage("lastblock.hfile", func(b []byte) {
		_, v, _ := trailerField(t, b, 10)
		b[v]--
	})
	// entry_count one higher: only a full read can tell.
	count := damage("count.hfile", func(b []byte) {
		_, v, _ := trailerField(t, b, 7)
		b[v]++
	})
	for _, c := range []struct {
		path, why string
	}{{wireType, "entry_count"}, {lastBlock, "last_data_block_offset"}, {count, "entry_count"}} {
		for _, flag := range []string{"-h", "-k"} {
			code, out, errOut := runCmd("hfile", flag, c.path)
			require.Equal(t, 1, code, "%s %s: %s", flag, c.path, out)
			require.Contains(t, errOut, c.why, flag)
			require.Contains(t, errOut, filepath.Base(c.path), flag)
		}
	}
}
