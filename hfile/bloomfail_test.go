package hfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// rewriteBlock replaces, in an uncompressed file, the payload of the block
// at off with what mutate makes of it (the same length), and recomputes the
// block's checksums, so that the change passes every checksum.
func rewriteBlock(t testing.TB, file []byte, off int64, mutate func(payload []byte)) {
	t.Helper()
	h, err := decodeHeader(file[off:], off)
	require.NoError(t, err)
	raw := file[off : off+int64(h.onDiskSize())]
	mutate(raw[HeaderSize:h.onDiskDataSizeWithHdr])
	sums := appendChecksums(nil, raw[:h.onDiskDataSizeWithHdr], h.checksumType, int(h.bytesPerChecksum))
	copy(raw[h.onDiskDataSizeWithHdr:], sums)
}

// bloomFailFile writes rows row00000.. (cells for even rows only, with a
// DeleteFamily marker on every fourth), with small bloom chunks.
func bloomFailFile(t testing.TB, bt BloomType) (file []byte, kvs []*encoding.KeyValue) {
	for i := 0; i < 2000; i += 2 {
		row := []byte(fmt.Sprintf("row%05d", i))
		if i%4 == 0 {
			kvs = append(kvs, &encoding.KeyValue{Row: row, Family: []byte("f"), Timestamp: 5, Type: encoding.TypeDeleteFamily, SeqNum: 1})
		}
		kvs = append(kvs, &encoding.KeyValue{Row: row, Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 3, Type: encoding.TypePut,
			SeqNum: 2, Value: []byte(fmt.Sprintf("value %d", i))})
	}
	return buildFile(t, kvs, WriterOptions{BlockSize: 512, BloomType: bt, BloomBlockSize: 128}), kvs
}

// getRow reads the cells of row as a Get does: a seek, then cells until
// the row ends.
func getRow(t testing.TB, r *Reader, row []byte) []string {
	it := r.NewIterator(false)
	defer it.Close()
	res, err := it.SeekTo(encoding.FirstOnRow(nil, row))
	require.NoError(t, err)
	ok := true
	switch res {
	case encoding.SeekBefore:
		ok, err = it.Next()
	case encoding.SeekPrecedesFile:
		ok, err = it.First()
	}
	var out []string
	var kv encoding.KeyValue
	for ; ok && bytes.Equal(it.Key().Row(), row); ok, err = it.Next() {
		it.KeyValue(&kv)
		out = append(out, kv.String()+"="+string(kv.Value))
	}
	require.NoError(t, err)
	return out
}

// TestCorruptBloomChunk: a bloom chunk that fails its checksum no longer
// fails lookups. The filter is logged once, counted, and answers "may
// contain" from then on; Gets of rows in and not in the file, and scans
// (which step over the chunk), return what they would without the damage.
func TestCorruptBloomChunk(t *testing.T) {
	for _, c := range []struct {
		bt BloomType
		df bool // damage the delete-family bloom instead
	}{{BloomRow, false}, {BloomRowCol, false}, {BloomRow, true}} {
		t.Run(fmt.Sprintf("%s/df=%t", c.bt, c.df), func(t *testing.T) {
			file, kvs := bloomFailFile(t, c.bt)
			want := map[string][]string{}
			for _, kv := range kvs {
				want[string(kv.Row)] = append(want[string(kv.Row)], kv.String()+"="+string(kv.Value))
			}
			r0 := openBytes(t, file, nil)
			gb, db := r0.Blooms()
			f := gb
			if c.df {
				f = db
			}
			require.Greater(t, len(f.Chunks), 2)
			damaged := f.Chunks[1]
			file[damaged.Offset+HeaderSize+2] ^= 0x20

			var logs bytes.Buffer
			before := BloomErrors()
			r, err := Open(bytes.NewReader(file), int64(len(file)), "damaged", ReaderOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			filtered := 0
			for i := 0; i < 2000; i++ {
				row := []byte(fmt.Sprintf("row%05d", i))
				var may bool
				switch {
				case c.df:
					may, err = r.MayContainDeleteFamily(row)
				case c.bt == BloomRowCol:
					may, err = r.MayContainRowCol(row, []byte("f"), []byte("q"))
				default:
					may, err = r.MayContainRow(row)
				}
				require.NoError(t, err, "row %s", row)
				present := i%2 == 0 && (!c.df || i%4 == 0)
				if present {
					require.True(t, may, "row %s is in the file", row)
				} else if !may {
					filtered++
				}
				require.Equal(t, want[string(row)], getRow(t, r, row), "row %s", row)
			}
			require.Positive(t, filtered, "the undamaged chunks still filter")
			require.Equal(t, 1, strings.Count(logs.String(), "bloom filter unreadable"), logs.String())
			require.Contains(t, logs.String(), "level=WARN")
			require.Contains(t, logs.String(), "damaged")
			require.Contains(t, logs.String(), "checksum mismatch")
			require.EqualValues(t, 1, r.BloomErrors())
			require.Equal(t, before+1, BloomErrors())

			// A scan steps over the damaged chunk.
			r2, err := Open(bytes.NewReader(file), int64(len(file)), "damaged", ReaderOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			it := r2.NewIterator(false)
			n := 0
			ok, err := it.First()
			for ; ok; ok, err = it.Next() {
				n++
			}
			require.NoError(t, err)
			require.Equal(t, len(kvs), n)
			require.EqualValues(t, 1, r2.BloomErrors(), "the scan found the damaged chunk")
			// Verify reports it.
			require.True(t, encoding.IsCorruption(r2.Verify()))
		})
	}
}

// TestBloomMetaUnparseable: a bloom meta whose checksum verifies but whose
// content does not parse is ignored (and counted), as HBase ignores it,
// instead of failing Open.
func TestBloomMetaUnparseable(t *testing.T) {
	file, kvs := bloomFailFile(t, BloomRow)
	r0 := openBytes(t, file, nil)
	end := r0.Size() - TrailerSize
	var metaOff int64 = -1
	for off := int64(r0.Trailer().FileInfoOffset); off < end; {
		h, err := decodeHeader(file[off:], off)
		require.NoError(t, err)
		if h.typ == BlockGeneralBloomMeta {
			metaOff = off
		}
		off += int64(h.onDiskSize())
	}
	require.NotEqual(t, int64(-1), metaOff)
	rewriteBlock(t, file, metaOff, func(p []byte) { binary.BigEndian.PutUint32(p[12:], 0) }) // hash count 0
	var logs bytes.Buffer
	before := BloomErrors()
	r, err := Open(bytes.NewReader(file), int64(len(file)), "meta", ReaderOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	gb, _ := r.Blooms()
	require.Nil(t, gb)
	require.EqualValues(t, 1, r.BloomErrors())
	require.Equal(t, before+1, BloomErrors())
	require.Contains(t, logs.String(), "hash count 0")
	for _, kv := range kvs[:50] {
		ok, err := r.MayContainRow(kv.Row)
		require.NoError(t, err)
		require.True(t, ok)
	}
}

// TestMayContainAllocs: the bloom lookups through the Reader stay
// allocation-free (a point read makes several per file).
func TestMayContainAllocs(t *testing.T) {
	file, _ := bloomFailFile(t, BloomRowCol)
	r := openBytes(t, file, newMapCache())
	row, absent := []byte("row00010"), []byte("row00011")
	allocs := testing.AllocsPerRun(200, func() {
		_, _ = r.MayContainRowCol(row, []byte("f"), []byte("q"))
		_, _ = r.MayContainRowCol(absent, []byte("f"), []byte("q"))
		_, _ = r.MayContainDeleteFamily(row)
	})
	require.Zero(t, allocs)
}
