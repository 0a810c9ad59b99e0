package hfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// trailerFixture is a file whose trailer the tests below damage.
type trailerFixture struct {
	name string
	file []byte
}

// trailerFixtures returns files covering every shape of trailer: empty, one
// data block, multi-level indexes (two levels uncompressed, three levels
// GZ), blooms of both kinds over several chunks with a meta block, and
// HBase's own file.
func trailerFixtures(t testing.TB) []trailerFixture {
	rng := rand.New(rand.NewPCG(3, 14))
	hbase, err := os.ReadFile("testdata/v3-gz-rowbloom-25cells.hfile")
	require.NoError(t, err)
	var blooms bytes.Buffer
	w, err := NewWriter(&blooms, WriterOptions{BlockSize: 256, Encoding: encoding.EncodingFastDiff, Compression: CompressionSnappy,
		BloomType: BloomRowCol, BloomBlockSize: 64})
	require.NoError(t, err)
	for _, kv := range randomCells(rng, 300, false) {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.AppendMetaBlock("meta1", []byte("meta block payload")))
	require.NoError(t, w.Close())
	fs := []trailerFixture{
		{"empty", buildFile(t, nil, WriterOptions{BloomType: BloomRow})},
		{"one-block", buildFile(t, randomCells(rng, 20, false), WriterOptions{})},
		{"two-level", buildFile(t, randomCells(rng, 600, false), WriterOptions{BlockSize: 256, IndexBlockMaxSize: 256, BloomType: BloomRow})},
		{"three-level", buildFile(t, randomCells(rng, 1500, true), WriterOptions{BlockSize: 128, IndexBlockMaxSize: 128, IndexMinEntries: 2,
			Compression: CompressionGZ, Encoding: encoding.EncodingPrefix, IncludesTags: true})},
		{"blooms", blooms.Bytes()},
		{"hbase", hbase},
	}
	levels := map[string]uint32{"empty": 1, "one-block": 1, "two-level": 2, "three-level": 3, "hbase": 1}
	for _, f := range fs {
		r, err := Open(bytes.NewReader(f.file), int64(len(f.file)), f.name, ReaderOptions{})
		require.NoError(t, err, f.name)
		if want, ok := levels[f.name]; ok && want < 3 {
			require.Equal(t, want, r.Trailer().NumDataIndexLevels, f.name)
		} else if ok {
			require.GreaterOrEqual(t, r.Trailer().NumDataIndexLevels, want, f.name)
		}
		if f.name == "blooms" {
			gb, db := r.Blooms()
			require.Greater(t, len(gb.Chunks), 1)
			require.NotNil(t, db)
		}
		require.NoError(t, r.Verify(), f.name)
	}
	return fs
}

// trailerSnapshot reads everything a reader can tell: every cell by a scan,
// and for every row the bloom's answer, a seek to the row and the cells it
// finds, and a seek to the cell before the row. Two readers of the same
// cells give the same string.
func trailerSnapshot(r *Reader) (string, error) {
	var sb []byte
	it := r.NewIterator(true)
	defer it.Close()
	var kv encoding.KeyValue
	// Raw bytes, length-prefixed: formatting cells costs more than reading
	// them, and the test compares thousands of snapshots.
	field := func(b []byte) { sb = append(binary.AppendUvarint(sb, uint64(len(b))), b...) }
	cell := func() {
		it.KeyValue(&kv)
		field(it.Key())
		field(kv.Value)
		field(kv.Tags)
		sb = binary.AppendUvarint(sb, uint64(kv.SeqNum))
	}
	var rows [][]byte
	ok, err := it.First()
	for ; ok && err == nil; ok, err = it.Next() {
		cell()
		if n := len(rows); n == 0 || !bytes.Equal(rows[n-1], kv.Row) {
			rows = append(rows, bytes.Clone(kv.Row))
		}
	}
	if err != nil {
		return "", err
	}
	for _, row := range rows {
		may, err := r.MayContainRow(row)
		if err != nil {
			return "", err
		}
		sb = append(sb, "row"...)
		field(row)
		sb = strconv.AppendBool(sb, may)
		res, err := it.SeekTo(encoding.FirstOnRow(nil, row))
		if err != nil {
			return "", err
		}
		ok := true
		switch res {
		case encoding.SeekBefore:
			ok, err = it.Next()
		case encoding.SeekPrecedesFile:
			ok, err = it.First()
		}
		for ; ok && err == nil && bytes.Equal(it.Key().Row(), row); ok, err = it.Next() {
			cell()
		}
		if err != nil {
			return "", err
		}
		if ok, err := it.SeekBefore(encoding.FirstOnRow(nil, row)); err != nil {
			return "", err
		} else if ok {
			sb = append(sb, "before"...)
			cell()
		}
	}
	return string(sb), nil
}

// openSnapshot opens b and takes its snapshot.
func openSnapshot(b []byte) (string, error) {
	r, err := Open(bytes.NewReader(b), int64(len(b)), "flipped", ReaderOptions{Cache: newMapCache()})
	if err != nil {
		return "", err
	}
	return trailerSnapshot(r)
}

// trailerLayout names the trailer region each byte of a trailer belongs to:
// magic, length, a field's name, padding or version.
func trailerLayout(t testing.TB, tr []byte) []string {
	out := make([]string, len(tr))
	for i := range out {
		switch {
		case i < 8:
			out[i] = "magic"
		case i >= TrailerSize-4:
			out[i] = "version"
		default:
			out[i] = "padding"
		}
	}
	l, n := protowire.ConsumeVarint(tr[8:])
	require.Positive(t, n)
	for i := 8; i < 8+n; i++ {
		out[i] = "length"
	}
	pos := 8 + n
	pb := tr[pos : pos+int(l)]
	for len(pb) > 0 {
		num, typ, m := protowire.ConsumeTag(pb)
		require.Positive(t, m)
		v := protowire.ConsumeFieldValue(num, typ, pb[m:])
		require.Positive(t, v)
		for i := pos; i < pos+m+v; i++ {
			out[i] = trailerFields[num].name
		}
		pos += m + v
		pb = pb[m+v:]
	}
	return out
}

// TestTrailerBitFlips flips every bit of the trailer of every fixture, one
// at a time: each flip must be refused with a corruption error, or leave
// every cell readable exactly as before (scan, bloom, seek to and before
// every row). The trailer has no checksum, so nothing else stands between a
// flipped bit and cells that silently vanish.
func TestTrailerBitFlips(t *testing.T) {
	var total, refused, harmless int
	for _, f := range trailerFixtures(t) {
		want, err := openSnapshot(f.file)
		require.NoError(t, err)
		layout := trailerLayout(t, f.file[len(f.file)-TrailerSize:])
		harmlessBy := map[string]int{}
		b := bytes.Clone(f.file)
		base := len(b) - TrailerSize
		var n, nRefused int
		for i := 0; i < TrailerSize; i++ {
			if testing.Short() && layout[i] == "padding" && i%509 != 0 {
				continue // each refused flip costs an error's stack trace
			}
			for bit := 0; bit < 8; bit++ {
				b[base+i] ^= 1 << bit
				got, err := openSnapshot(b)
				b[base+i] ^= 1 << bit
				n++
				if err != nil {
					require.True(t, encoding.IsCorruption(err), "%s: flip of bit %d of trailer byte %d (%s): not a corruption error: %v",
						f.name, bit, i, layout[i], err)
					require.Contains(t, err.Error(), "flipped", "the error names the file")
					nRefused++
					continue
				}
				require.Equal(t, want, got, "%s: flip of bit %d of trailer byte %d (%s) changed what the file reads", f.name, bit, i, layout[i])
				harmlessBy[layout[i]]++
			}
		}
		t.Logf("%-11s %5d flips: %5d refused, %4d harmless %v", f.name, n, nRefused, n-nRefused, sortedCounts(harmlessBy))
		total += n
		refused += nRefused
		harmless += n - nRefused
	}
	t.Logf("all: %d flips, %d refused, %d harmless", total, refused, harmless)
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, " %s=%d", k, m[k])
	}
	return strings.TrimSpace(sb.String())
}

// withTrailer returns file with its trailer replaced by t's encoding.
func withTrailer(file []byte, t *Trailer) []byte {
	b := bytes.Clone(file)
	copy(b[len(b)-TrailerSize:], t.encode())
	return b
}

func fileTrailer(t testing.TB, file []byte) *Trailer {
	tr, err := decodeTrailer(file[len(file)-TrailerSize:], int64(len(file)))
	require.NoError(t, err)
	return tr
}

// TestTrailerFieldMutations sets each trailer field in turn to its value
// +1, -1, 0 and its maximum: the file must be refused, or read exactly as
// before.
func TestTrailerFieldMutations(t *testing.T) {
	type mutation struct {
		field string
		set   func(tr *Trailer, m int)
	}
	// m: 0 = +1, 1 = -1, 2 = 0, 3 = max.
	u64 := func(v *uint64, m int) {
		*v = [...]uint64{*v + 1, *v - 1, 0, math.MaxUint64}[m]
	}
	u32 := func(v *uint32, m int) {
		*v = [...]uint32{*v + 1, *v - 1, 0, math.MaxUint32}[m]
	}
	i64 := func(v *int64, m int) {
		*v = [...]int64{*v + 1, *v - 1, 0, math.MaxInt64}[m]
	}
	muts := []mutation{
		{"file_info_offset", func(tr *Trailer, m int) { u64(&tr.FileInfoOffset, m) }},
		{"load_on_open_data_offset", func(tr *Trailer, m int) { u64(&tr.LoadOnOpenDataOffset, m) }},
		{"uncompressed_data_index_size", func(tr *Trailer, m int) { u64(&tr.UncompressedDataIndexSize, m) }},
		{"total_uncompressed_bytes", func(tr *Trailer, m int) { u64(&tr.TotalUncompressedBytes, m) }},
		{"data_index_count", func(tr *Trailer, m int) { u32(&tr.DataIndexCount, m) }},
		{"meta_index_count", func(tr *Trailer, m int) { u32(&tr.MetaIndexCount, m) }},
		{"entry_count", func(tr *Trailer, m int) { u64(&tr.EntryCount, m) }},
		{"num_data_index_levels", func(tr *Trailer, m int) { u32(&tr.NumDataIndexLevels, m) }},
		{"first_data_block_offset", func(tr *Trailer, m int) { i64(&tr.FirstDataBlockOffset, m) }},
		{"last_data_block_offset", func(tr *Trailer, m int) { i64(&tr.LastDataBlockOffset, m) }},
		{"compression_codec", func(tr *Trailer, m int) {
			o := tr.CompressionCodec.Ordinal()
			tr.CompressionCodec = CompressionOfOrdinal([...]uint32{o + 1, o - 1, 0, math.MaxUint32}[m])
		}},
		{"comparator_class_name", func(tr *Trailer, m int) {
			tr.ComparatorClassName = [...]string{tr.ComparatorClassName + "x", encoding.MetaComparer.Name, "", strings.Repeat("x", 3000)}[m]
		}},
	}
	var total, refused int
	for _, f := range trailerFixtures(t) {
		want, err := openSnapshot(f.file)
		require.NoError(t, err)
		orig := fileTrailer(t, f.file)
		// The encoder reproduces the writer's trailer byte for byte, and
		// HBase's too.
		require.Equal(t, f.file[len(f.file)-TrailerSize:], orig.encode(), f.name)
		var harmless []string
		for _, mu := range muts {
			for m := 0; m < 4; m++ {
				tr := *orig
				mu.set(&tr, m)
				if bytes.Equal(tr.encode(), orig.encode()) {
					continue // e.g. 0 of a field that is 0
				}
				total++
				var got string
				err := func() (err error) {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("encode: %v", p) // a trailer too large to write
						}
					}()
					got, err = openSnapshot(withTrailer(f.file, &tr))
					return err
				}()
				if err != nil {
					if strings.HasPrefix(err.Error(), "encode:") {
						total--
						continue
					}
					require.True(t, encoding.IsCorruption(err), "%s: %s mutation %d: not a corruption error: %v", f.name, mu.field, m, err)
					refused++
					continue
				}
				require.Equal(t, want, got, "%s: %s mutation %d changed what the file reads", f.name, mu.field, m)
				harmless = append(harmless, fmt.Sprintf("%s%s", mu.field, [...]string{"+1", "-1", "=0", "=max"}[m]))
			}
		}
		t.Logf("%-11s harmless: %v", f.name, harmless)
	}
	t.Logf("%d mutations, %d refused, %d harmless", total, refused, total-refused)
}

// TestTrailerWireTypes covers the protobuf framing: a known field with
// another wire type is corruption, not an unknown field to skip; a repeated
// or missing field is corruption; an unknown field of a newer HBase is
// skipped.
func TestTrailerWireTypes(t *testing.T) {
	file := trailerFixtures(t)[2].file // two-level
	orig := fileTrailer(t, file)
	want, err := openSnapshot(file)
	require.NoError(t, err)
	tr := file[len(file)-TrailerSize:]
	l, n := protowire.ConsumeVarint(tr[8:])
	msg := bytes.Clone(tr[8+n : 8+n+int(l)])
	rebuild := func(pb []byte) []byte {
		out := make([]byte, TrailerSize)
		copy(out, trailerMagic)
		b := protowire.AppendVarint(out[:8], uint64(len(pb)))
		b = append(b, pb...)
		_ = b
		copy(out[TrailerSize-4:], tr[TrailerSize-4:])
		f := bytes.Clone(file)
		copy(f[len(f)-TrailerSize:], out)
		return f
	}
	// Re-encoding the message as it is reads the same.
	got, err := openSnapshot(rebuild(msg))
	require.NoError(t, err)
	require.Equal(t, want, got)

	// entry_count (7) as a fixed64: known field, wrong wire type. A
	// reader that skipped it would see an entry count of 0.
	var pb []byte
	rest := msg
	for len(rest) > 0 {
		num, typ, m := protowire.ConsumeTag(rest)
		v := protowire.ConsumeFieldValue(num, typ, rest[m:])
		if num == 7 {
			pb = protowire.AppendTag(pb, 7, protowire.Fixed64Type)
			pb = protowire.AppendFixed64(pb, orig.EntryCount)
		} else {
			pb = append(pb, rest[:m+v]...)
		}
		rest = rest[m+v:]
	}
	_, err = openSnapshot(rebuild(pb))
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "entry_count")

	// Missing and repeated fields.
	for _, c := range []struct {
		name string
		pb   []byte
		msg  string
	}{
		{"without entry_count", dropField(msg, 7), "field 7 (entry_count) missing"},
		{"without data_index_count", dropField(msg, 5), "field 5 (data_index_count) missing"},
		{"without compression", dropField(msg, 12), "field 12 (compression_codec) missing"},
		{"repeated data_index_count", protowire.AppendVarint(protowire.AppendTag(bytes.Clone(msg), 5, protowire.VarintType), 0),
			"field 5 (data_index_count) repeated"},
		{"group", protowire.AppendTag(bytes.Clone(msg), 30, protowire.StartGroupType), "group"},
	} {
		_, err := openSnapshot(rebuild(c.pb))
		require.True(t, encoding.IsCorruption(err), "%s: %v", c.name, err)
		require.Contains(t, err.Error(), c.msg, c.name)
	}

	// Unknown fields, as a newer HBase might write, are skipped.
	ext := protowire.AppendVarint(protowire.AppendTag(bytes.Clone(msg), 40, protowire.VarintType), 7)
	ext = protowire.AppendBytes(protowire.AppendTag(ext, 41, protowire.BytesType), []byte("future"))
	ext = protowire.AppendBytes(protowire.AppendTag(ext, 14, protowire.BytesType), []byte("namespace"))
	got, err = openSnapshot(rebuild(ext))
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Non-zero padding: the length prefix cannot be trusted.
	f := bytes.Clone(file)
	f[len(f)-100] = 1
	_, err = openSnapshot(f)
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "after the")
}

func dropField(msg []byte, drop protowire.Number) []byte {
	var pb []byte
	for len(msg) > 0 {
		num, typ, m := protowire.ConsumeTag(msg)
		v := protowire.ConsumeFieldValue(num, typ, msg[m:])
		if num != drop {
			pb = append(pb, msg[:m+v]...)
		}
		msg = msg[m+v:]
	}
	return pb
}

// TestTrailerIssueCases are the cases of the issue: a trailer whose counts
// read 0 must not pass for an empty file, and a last data block offset one
// block early must not end scans a block early.
func TestTrailerIssueCases(t *testing.T) {
	fx := trailerFixtures(t)
	for _, f := range fx[1:] {
		orig := fileTrailer(t, f.file)
		empty := *orig
		empty.EntryCount, empty.DataIndexCount, empty.NumDataIndexLevels = 0, 0, 0
		_, err := openSnapshot(withTrailer(f.file, &empty))
		require.True(t, encoding.IsCorruption(err), "%s: %v", f.name, err)

		r, err := Open(bytes.NewReader(f.file), int64(len(f.file)), f.name, ReaderOptions{})
		require.NoError(t, err)
		if n, err := r.DataBlockCount(); err == nil && n > 1 {
			// The data block before the last: the last but one index entry.
			early := *orig
			it := r.NewIterator(false)
			ok, err := it.First()
			require.NoError(t, err)
			var offs []int64
			for ; ok; ok, err = it.Next() {
				if o := it.BlockOffset(); len(offs) == 0 || offs[len(offs)-1] != o {
					offs = append(offs, o)
				}
			}
			require.NoError(t, err)
			early.LastDataBlockOffset = offs[len(offs)-2]
			_, err = Open(bytes.NewReader(withTrailer(f.file, &early)), int64(len(f.file)), "early", ReaderOptions{})
			require.True(t, encoding.IsCorruption(err), "%s: %v", f.name, err)
			require.Contains(t, err.Error(), "last_data_block_offset")
			require.Contains(t, err.Error(), "hfile early")
		}

		// A wrong entry count that open cannot see is caught by the first
		// full scan.
		more := *orig
		more.EntryCount++
		r, err = Open(bytes.NewReader(withTrailer(f.file, &more)), int64(len(f.file)), "more", ReaderOptions{})
		require.NoError(t, err)
		it := r.NewIterator(false)
		ok, err := it.First()
		for ; ok; ok, err = it.Next() {
		}
		require.True(t, encoding.IsCorruption(err), "%s: %v", f.name, err)
		require.Contains(t, err.Error(), "entry_count")
		require.Error(t, r.Verify())
	}
}

// TestLoadOnOpenChecksums: the load-on-open blocks are verified on open, so
// a flipped bit in any of them fails Open (or, in a bloom meta, only
// disables the bloom: see TestCorruptBloomChunk).
func TestLoadOnOpenChecksums(t *testing.T) {
	for _, f := range trailerFixtures(t) {
		tr := fileTrailer(t, f.file)
		rng := rand.New(rand.NewPCG(9, uint64(len(f.file))))
		start, end := int(tr.LoadOnOpenDataOffset), len(f.file)-TrailerSize
		for i := 0; i < 200; i++ {
			b := bytes.Clone(f.file)
			b[start+rng.IntN(end-start)] ^= 1 << rng.IntN(8)
			_, err := Open(bytes.NewReader(b), int64(len(b)), f.name, ReaderOptions{})
			require.True(t, encoding.IsCorruption(err), "%s: %v", f.name, err)
		}
	}
}
