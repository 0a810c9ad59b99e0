package walprint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

// writeTestWAL writes three entries (sequence ids 1..3) into two segments.
func writeTestWAL(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	for seq := uint64(1); seq <= 3; seq++ {
		k := &wal.Key{EncodedRegionName: []byte("d41d8cd98f00b204"), TableName: []byte("ns:t1"), SeqNum: seq, WriteTime: 1700000000000}
		e := &wal.Edit{Cells: []encoding.KeyValue{
			{Row: []byte("row1"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 42, Type: encoding.TypePut, Value: []byte("v\x00\xff")},
			{Row: []byte("row\n2"), Family: []byte("f"), Qualifier: []byte("q2"), Timestamp: 43, Type: encoding.TypeDeleteColumn, Tags: []byte{0, 2, 1, 'x'}},
		}}
		txid, err := w.Append(k, e)
		require.NoError(t, err)
		require.NoError(t, w.Sync(txid, wal.SyncWAL))
		if seq == 2 {
			require.NoError(t, w.Roll())
		}
	}
	require.NoError(t, w.Close())
	return dir
}

func TestWALPrint(t *testing.T) {
	dir := writeTestWAL(t)
	code, out, errOut := runCmd("wal", dir)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, []string{
		"Segment: " + filepath.Join(dir, wal.SegmentName(1)),
		"Sequence=1 , table=ns:t1, region=d41d8cd98f00b204, at write timestamp=Tue Nov 14 22:13:20 UTC 2023",
		"Sequence=2 , table=ns:t1, region=d41d8cd98f00b204, at write timestamp=Tue Nov 14 22:13:20 UTC 2023",
		"Segment: " + filepath.Join(dir, wal.SegmentName(2)),
		"Sequence=3 , table=ns:t1, region=d41d8cd98f00b204, at write timestamp=Tue Nov 14 22:13:20 UTC 2023",
	}, lines[:5])
	require.Regexp(t, `^Summary: 3 entries, 6 cells, 2 segments, \d+ bytes, sequence ids 1..3$`, lines[5])

	seg := filepath.Join(dir, wal.SegmentName(1))
	code, out, errOut = runCmd("wal", "-p", seg)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Sequence=2 , table=ns:t1, region=d41d8cd98f00b204, at write timestamp=Tue Nov 14 22:13:20 UTC 2023\n"+
		"row=row1, column=f:q, timestamp=42, type=Put, value=v\\x00\\xFF\n"+
		"row=row\\x0A2, column=f:q2, timestamp=43, type=DeleteColumn, value=, tags=\\x00\\x02\\x01x\n")
	require.NotContains(t, out, "Segment:")
	require.Contains(t, out, "Summary: 2 entries, 4 cells, 1 segments")
}

func TestWALTornAndCorrupt(t *testing.T) {
	dir := writeTestWAL(t)
	seg1, seg2 := filepath.Join(dir, wal.SegmentName(1)), filepath.Join(dir, wal.SegmentName(2))
	data, err := os.ReadFile(seg2)
	require.NoError(t, err)

	// A torn tail: warning, exit 0.
	require.NoError(t, os.WriteFile(seg2, data[:len(data)-3], 0o644))
	code, out, errOut := runCmd("wal", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Summary: 2 entries")
	require.Contains(t, errOut, "warning: torn tail in "+seg2)
	require.Contains(t, errOut, "bytes dropped")

	// The same bytes in a segment that is not the last: corruption, exit 1.
	require.NoError(t, os.WriteFile(seg2, data, 0o644))
	data1, err := os.ReadFile(seg1)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(seg1, data1[:len(data1)-3], 0o644))
	code, _, errOut = runCmd("wal", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, seg1)
	require.Contains(t, errOut, "corrupt record at offset")

	// A flipped byte in the middle of a file: corruption naming the offset.
	flipped := append([]byte(nil), data1...)
	flipped[len(flipped)/3] ^= 1
	require.NoError(t, os.WriteFile(seg1, flipped, 0o644))
	code, _, errOut = runCmd("wal", seg1)
	require.Equal(t, 1, code)
	require.Regexp(t, `corrupt record at offset \d+, followed by an intact record at offset \d+`, errOut)

	code, _, _ = runCmd("wal")
	require.Equal(t, 2, code)
	code, _, errOut = runCmd("wal", filepath.Join(dir, "missing"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing")
}

// TestWALRegionDir: given a region's directory, wal reads its wal/; a
// directory without segments is a warning, not a silent empty summary.
func TestWALRegionDir(t *testing.T) {
	walDir := writeTestWAL(t)
	regionDir := filepath.Dir(walDir)
	require.NoError(t, os.Rename(walDir, filepath.Join(regionDir, "wal")))
	code, out, errOut := runCmd("wal", regionDir)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	require.True(t, strings.HasPrefix(out, "WAL directory: "+filepath.Join(regionDir, "wal")+"\n"), out)
	require.Contains(t, out, "Summary: 3 entries, 6 cells, 2 segments")

	empty := t.TempDir()
	code, out, errOut = runCmd("wal", empty)
	require.Equal(t, 0, code)
	require.Equal(t, "regionsrv wal: warning: no WAL segments (*.wal) in "+empty+"\n", errOut)
	require.Contains(t, out, "Summary: 0 entries")
}

func TestWALUsage(t *testing.T) {
	code, _, errOut := runCmd("wal")
	require.Equal(t, 2, code)
	require.Equal(t, "regionsrv wal: want one path, got no arguments\nRun 'regionsrv wal --help' for usage.\n", errOut)
	code, _, errOut = runCmd("wal", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "usage: regionsrv wal [-p] FILE|DIR\n")
}
