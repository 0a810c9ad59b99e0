package hfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// TestIndependentInspector checks a file we write (NONE encoding, GZ) with
// shared/tools/hfile_inspect.py, a reader written from the format
// description and sharing no code with ours: every block's CRC32C must
// verify, every payload must decompress to its header's size, and the
// cells it decodes must be ours.
func TestIndependentInspector(t *testing.T) {
	tool := filepath.Join(testutil.SharedDir(t), "tools", "hfile_inspect.py")
	rng := rand.New(rand.NewPCG(7, 7))
	kvs := peCells(rng, 3000)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compression: CompressionGZ, BlockSize: 8192, BloomType: BloomRow})
	require.NoError(t, err)
	for _, kv := range kvs {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.Close())
	path := filepath.Join(t.TempDir(), "ours.hfile")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	out, err := exec.Command("python3", tool, path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	text := string(out)
	require.Contains(t, text, "includesTags False includesMvcc True")
	require.Contains(t, text, "major 3 minor 3")

	blockRe := regexp.MustCompile(`(?m)^block @(\d+) (\S+) .* crc_ok=(\w+)$`)
	blocks := blockRe.FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, blocks)
	types := map[string]int{}
	for _, b := range blocks {
		require.Equal(t, "True", b[3], "block at %s", b[1])
		types[b[2]]++
	}
	require.Greater(t, types["DATABLK*"], 10)
	require.Equal(t, 2, types["IDXROOT2"])
	require.Equal(t, 1, types["FILEINF2"])
	require.Equal(t, 1, types["BLMFMET2"])
	require.GreaterOrEqual(t, types["BLMFBLK2"], 1)

	total := 0
	for _, m := range regexp.MustCompile(`cells in block: (\d+)`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	require.Equal(t, len(kvs), total)

	// The inspector prints the first three cells of each block; each must be
	// one of ours, in order.
	kvRe := regexp.MustCompile(`kv row=b'(\d+)' fam=b'info' qual=b'0' ts=(\d+) type=4 vlen=100 tags=0 mvcc=(\d+)`)
	seen := kvRe.FindAllStringSubmatch(text, -1)
	require.GreaterOrEqual(t, len(seen), 3*types["DATABLK*"]-2)
	last := -1
	for _, m := range seen {
		i, _ := strconv.Atoi(m[1])
		require.Greater(t, i, last)
		last = i
		require.Equal(t, strconv.FormatInt(kvs[i].Timestamp, 10), m[2])
		require.Equal(t, strconv.FormatUint(uint64(kvs[i].SeqNum), 10), m[3])
	}
	rootLine := regexp.MustCompile(`root index entries: \[\((\d+), (\d+), b'\\x00\\x1a(\d+)`).FindStringSubmatch(text)
	require.NotNil(t, rootLine, "root index line in:\n%s", firstLines(text, 40))
	require.Equal(t, "0", rootLine[1])
	// The inspector prints the first 24 bytes of the key: 2 of row length, 22 of row.
	require.Equal(t, string(kvs[0].Row[:22]), rootLine[3])
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}
