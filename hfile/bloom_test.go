package hfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// fixtureBloomChunk is the 32-byte bit array of the fixture's only bloom
// chunk (BLMFBLK2 at offset 214, gunzipped): HBase's ROW bloom of the rows
// aaa..aay, folded down from a 128 KiB chunk.
const fixtureBloomChunk = "5410e8b0696b0c6d3a76b8ea798d7846def2e4ead2a12aa02fc0e2c35be01f27"

// fixtureRows returns aaa, aab, ..., aay.
func fixtureRows() [][]byte {
	rows := make([][]byte, 25)
	for i := range rows {
		rows[i] = []byte{'a', 'a', 'a' + byte(i)}
	}
	return rows
}

// fixtureBlockLoader loads bloom chunks from an HFile image the way the
// reader does: header at offset, GZ payload up to onDiskDataSizeWithHeader.
func fixtureBlockLoader(t testing.TB, file []byte, loads *int) BloomChunkLoader {
	return func(offset int64, onDiskSize int32) ([]byte, error) {
		*loads++
		if got := int32(33 + binary.BigEndian.Uint32(file[offset+8:])); got != onDiskSize {
			t.Errorf("chunk at %d: index says %d bytes on disk, header %d", offset, onDiskSize, got)
		}
		if magic := string(file[offset : offset+8]); magic != "BLMFBLK2" {
			t.Errorf("chunk at %d is a %s block", offset, magic)
		}
		payload, size := codecFixtureBlock(t, file, int(offset))
		return CompressionGZ.Decompress(nil, payload, size)
	}
}

func TestBloomTypeNames(t *testing.T) {
	for _, bt := range []BloomType{BloomNone, BloomRow, BloomRowCol} {
		for _, name := range []string{bt.String(), string(bytes.ToLower([]byte(bt.String())))} {
			if got, err := ParseBloomType(name); err != nil || got != bt {
				t.Errorf("ParseBloomType(%q) = %v, %v", name, got, err)
			}
		}
	}
	if got := BloomRowCol.String(); got != "ROWCOL" {
		t.Errorf("BloomRowCol = %q", got)
	}
	if _, err := ParseBloomType("ROWPREFIX_FIXED_LENGTH"); !errors.Is(err, ErrUnsupportedBloom) {
		t.Errorf("ROWPREFIX_FIXED_LENGTH: %v", err)
	}
	if _, err := ParseBloomType("ROWS"); err == nil {
		t.Error("ParseBloomType(ROWS) succeeded")
	}
}

func TestBloomSizing(t *testing.T) {
	// Expected values: BloomFilterUtil's formulas evaluated in Python with
	// the error rates HBase passes (float32 0.01; for ROWCOL float32 of
	// 1-sqrt(1-0.01)), for HBase's default chunk of 128 KiB and for ours of
	// 16 KiB (0: the default).
	for _, tc := range []struct {
		bt    BloomType
		chunk int
		want  bloomSizing
	}{
		{BloomRow, 128 << 10, bloomSizing{byteSize: 131072, maxKeys: 109306, hashCount: 7}},
		{BloomRowCol, 128 << 10, bloomSizing{byteSize: 131072, maxKeys: 95069, hashCount: 8}},
		{BloomRow, 0, bloomSizing{byteSize: 16384, maxKeys: 13663, hashCount: 7}},
		{BloomRowCol, 0, bloomSizing{byteSize: 16384, maxKeys: 11883, hashCount: 8}},
	} {
		w, err := NewBloomWriter(tc.bt, 0, tc.chunk)
		if err != nil {
			t.Fatal(err)
		}
		if w.sizing != tc.want {
			t.Errorf("%s sizing %+v, want %+v", tc.bt, w.sizing, tc.want)
		}
	}
	// Chunk sizes round up to a multiple of 2^7 bytes.
	if s, err := computeBloomSizing(1000, 0.01, 7); err != nil || s.byteSize != 1024 {
		t.Errorf("1000-byte chunk: %+v, %v", s, err)
	}
	for _, tc := range []struct {
		bt   BloomType
		rate float64
		size int
	}{{BloomNone, 0, 0}, {BloomRow, 1, 0}, {BloomRow, -0.1, 0}, {BloomRow, 0, -1}} {
		if _, err := NewBloomWriter(tc.bt, tc.rate, tc.size); err == nil {
			t.Errorf("NewBloomWriter(%s, %g, %d) succeeded", tc.bt, tc.rate, tc.size)
		}
	}
}

// TestBloomReadFixture reads HBase's bloom from the fixture file.
func TestBloomReadFixture(t *testing.T) {
	file := readCodecFixture(t, codecFixtureName)
	if magic := string(file[819:827]); magic != "BLMFMET2" {
		t.Fatalf("block at 819 is %s", magic)
	}
	payload, size := codecFixtureBlock(t, file, 819)
	meta, err := CompressionGZ.Decompress(nil, payload, size)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseBloomMeta(meta)
	if err != nil {
		t.Fatal(err)
	}
	if f.TotalByteSize != 32 || f.HashCount != 7 || f.HashType != 1 || f.TotalKeyCount != 25 ||
		f.TotalMaxKeys != 26 || f.Comparator != "" || len(f.Chunks) != 1 {
		t.Fatalf("meta %+v", f)
	}
	if c := f.Chunks[0]; c.Offset != 214 || c.OnDiskSize != 92 || string(c.FirstKey) != "aaa" {
		t.Fatalf("chunk %+v", c)
	}

	var loads int
	load := fixtureBlockLoader(t, file, &loads)
	for _, row := range fixtureRows() {
		if ok, err := f.MayContain(row, load); err != nil || !ok {
			t.Errorf("row %s: %v, %v", row, ok, err)
		}
	}
	// Rows before the first chunk key are absent without reading a chunk.
	loads = 0
	for _, row := range []string{"", "a", "aa", "aa`"} {
		if ok, err := f.MayContain([]byte(row), load); err != nil || ok {
			t.Errorf("row %q: %v, %v", row, ok, err)
		}
	}
	if loads != 0 {
		t.Errorf("%d chunk loads for keys before the first chunk", loads)
	}
	// Most other rows are rejected (32 bytes for 25 keys is a poor filter,
	// so only sanity-check).
	absent := 0
	for i := range 1000 {
		if ok, _ := f.MayContain(fmt.Appendf(nil, "b%04d", i), load); !ok {
			absent++
		}
	}
	if absent < 500 {
		t.Errorf("only %d of 1000 absent rows rejected", absent)
	}
}

// TestBloomWriteMatchesFixture writes the fixture's 25 rows with HBase's
// default settings and expects HBase's bytes: the 128 KiB chunk (109306 max
// keys, 7 hashes) folds 12 times to 32 bytes / 26 max keys, because folding
// continues while the size is even and the chunk is at most half full, which
// a power-of-two chunk allows well past maxFold. No key-count hint is
// involved: HBase ignores it for compound blooms.
func TestBloomWriteMatchesFixture(t *testing.T) {
	file := readCodecFixture(t, codecFixtureName)
	payload, size := codecFixtureBlock(t, file, 819)
	wantMeta, err := CompressionGZ.Decompress(nil, payload, size)
	if err != nil {
		t.Fatal(err)
	}

	w, err := NewBloomWriter(BloomRow, 0.01, 128<<10)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range fixtureRows() {
		w.Add(row)
		if w.ReadyChunk() {
			t.Fatal("chunk ready after", string(row))
		}
	}
	if w.PendingKeys() != 25 || w.KeyCount() != 25 {
		t.Fatalf("pending %d, count %d", w.PendingKeys(), w.KeyCount())
	}
	if _, err := w.MetaPayload(); err == nil {
		t.Fatal("MetaPayload with an unwritten chunk succeeded")
	}
	chunk, firstKey := w.FinishChunk()
	if got := hex.EncodeToString(chunk); got != fixtureBloomChunk {
		t.Errorf("chunk %s\nwant  %s", got, fixtureBloomChunk)
	}
	if string(firstKey) != "aaa" {
		t.Errorf("first key %q", firstKey)
	}
	if p, k := w.FinishChunk(); p != nil || k != nil || w.PendingKeys() != 0 {
		t.Fatal("second chunk from 25 keys")
	}
	if _, err := w.MetaPayload(); err == nil {
		t.Fatal("MetaPayload with an unindexed chunk succeeded")
	}
	w.AddChunkIndex(214, 92, firstKey)
	meta, err := w.MetaPayload()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(meta, wantMeta) {
		t.Errorf("meta %x\nwant %x", meta, wantMeta)
	}
}

// bloomTestFile simulates the file writer: keys go in, a chunk is written
// at every "data block" boundary when ready, the rest at close.
type bloomTestFile struct {
	chunks map[int64][]byte
	next   int64
}

func writeBloomTestFile(t testing.TB, w *BloomWriter, keys [][]byte, keysPerBlock int) (*bloomTestFile, *BloomFilter) {
	t.Helper()
	f := &bloomTestFile{chunks: map[int64][]byte{}, next: 1000}
	flush := func(closing bool) {
		for w.ReadyChunk() || (closing && w.PendingKeys() > 0) {
			payload, firstKey := w.FinishChunk()
			if payload == nil {
				t.Fatal("FinishChunk returned nothing while a chunk was due")
			}
			size := int32(33 + len(payload) + 4)
			f.chunks[f.next] = payload
			w.AddChunkIndex(f.next, size, firstKey)
			f.next += int64(size) + 5000
		}
	}
	for i, k := range keys {
		w.Add(k)
		if (i+1)%keysPerBlock == 0 {
			flush(false)
		}
	}
	flush(true)
	meta, err := w.MetaPayload()
	if err != nil {
		t.Fatal(err)
	}
	bf, err := ParseBloomMeta(meta)
	if err != nil {
		t.Fatal(err)
	}
	return f, bf
}

func (f *bloomTestFile) load(offset int64, onDiskSize int32) ([]byte, error) {
	c, ok := f.chunks[offset]
	if !ok || onDiskSize != int32(33+len(c)+4) {
		return nil, errors.Newf("no chunk at %d/%d", offset, onDiskSize)
	}
	return c, nil
}

// checkBloomRates asserts no false negatives and a false positive rate
// below 3% (the target is 1%).
func checkBloomRates(t *testing.T, bf *BloomFilter, f *bloomTestFile, present, absent [][]byte) {
	t.Helper()
	for _, k := range present {
		if ok, err := bf.MayContain(k, f.load); err != nil || !ok {
			t.Fatalf("false negative for %q: %v", k, err)
		}
	}
	fp := 0
	for _, k := range absent {
		ok, err := bf.MayContain(k, f.load)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			fp++
		}
	}
	rate := float64(fp) / float64(len(absent))
	t.Logf("%d chunks, %d bytes: false positive rate %.4f", len(bf.Chunks), bf.TotalByteSize, rate)
	if rate > 0.03 {
		t.Errorf("false positive rate %.4f", rate)
	}
}

func TestBloomManyChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct {
		name         string
		chunkSize    int
		keys         int
		keysPerBlock int
	}{
		// HBase's default chunk: 109306 keys each, so two chunks, the
		// second partial and folded.
		{"default-chunk", 0, 150_000, 1000},
		// Small chunks, with data blocks holding more keys than a chunk,
		// so several chunks are ready at once.
		{"small-chunks", 1024, 20_000, 2500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := make([][]byte, tc.keys)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "row-%09d-%x", i, rng.Uint32())
			}
			absent := make([][]byte, 20_000)
			for i := range absent {
				absent[i] = fmt.Appendf(nil, "row-%09d-%x!", rng.IntN(tc.keys), rng.Uint32())
			}
			w, err := NewBloomWriter(BloomRow, 0, tc.chunkSize)
			if err != nil {
				t.Fatal(err)
			}
			f, bf := writeBloomTestFile(t, w, keys, tc.keysPerBlock)
			maxKeys := w.sizing.maxKeys
			if want := (tc.keys + maxKeys - 1) / maxKeys; len(bf.Chunks) != want {
				t.Errorf("%d chunks, want %d", len(bf.Chunks), want)
			}
			if bf.TotalKeyCount != int64(tc.keys) || bf.HashCount != int32(w.sizing.hashCount) {
				t.Errorf("meta %+v", bf)
			}
			var bytesTotal int64
			for i, c := range bf.Chunks {
				if !bytes.Equal(c.FirstKey, keys[i*maxKeys]) {
					t.Errorf("chunk %d first key %q, want %q", i, c.FirstKey, keys[i*maxKeys])
				}
				bytesTotal += int64(len(f.chunks[c.Offset]))
			}
			if bytesTotal != bf.TotalByteSize {
				t.Errorf("chunks hold %d bytes, meta says %d", bytesTotal, bf.TotalByteSize)
			}
			checkBloomRates(t, bf, f, keys, absent)
		})
	}
}

func TestBloomRowCol(t *testing.T) {
	if got, want := RowColBloomKey([]byte("pre"), []byte("row1"), []byte("q")),
		"pre\x00\x04row1\x00q\x7f\xff\xff\xff\xff\xff\xff\xff\xff"; string(got) != want {
		t.Fatalf("RowColBloomKey = %q, want %q", got, want)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	var keys, absent [][]byte
	for r := range 3000 {
		row := fmt.Appendf(nil, "user%06d", r*7)
		for q := range 1 + rng.IntN(5) {
			keys = append(keys, RowColBloomKey(nil, row, fmt.Appendf(nil, "c%d", q)))
		}
		absent = append(absent,
			RowColBloomKey(nil, row, []byte("missing")),
			RowColBloomKey(nil, fmt.Appendf(nil, "user%06d", r*7+3), []byte("c0")))
	}
	w, err := NewBloomWriter(BloomRowCol, 0, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f, bf := writeBloomTestFile(t, w, keys, 100)
	if bf.Comparator != "org.apache.hadoop.hbase.CellComparatorImpl" || bf.keyCmp == nil {
		t.Fatalf("comparator %q", bf.Comparator)
	}
	if len(bf.Chunks) < 3 {
		t.Fatalf("only %d chunks", len(bf.Chunks))
	}
	checkBloomRates(t, bf, f, keys, absent)
	// A row before the first chunk, with any qualifier, is absent.
	if ok, err := bf.MayContain(RowColBloomKey(nil, []byte("a"), []byte("zzz")), f.load); err != nil || ok {
		t.Errorf("key before first chunk: %v, %v", ok, err)
	}
	// A probe that is not a key is refused, not a panic.
	if _, err := bf.MayContain([]byte("xy"), f.load); err == nil {
		t.Error("malformed ROWCOL probe accepted")
	}
}

// TestBloomFold checks that a folded chunk answers exactly like the chunk it
// was folded from, for every key.
func TestBloomFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	s, err := computeBloomSizing(4096, 0.01, 7)
	if err != nil {
		t.Fatal(err)
	}
	bits := make([]byte, s.byteSize)
	keys := make([][]byte, 200)
	for i := range keys {
		keys[i] = randomBytes(rng, 1+rng.IntN(40))
		setBloomBits(bits, s.hashCount, keys[i])
	}
	folded, maxKeys := foldBloom(bits, len(keys), s.maxKeys)
	if len(folded) >= len(bits) || maxKeys < len(keys) || maxKeys > 4*len(keys) {
		t.Fatalf("folded %d -> %d bytes, max keys %d -> %d", len(bits), len(folded), s.maxKeys, maxKeys)
	}
	for range 5000 {
		k := randomBytes(rng, 1+rng.IntN(40))
		if bloomContains(bits, s.hashCount, k) && !bloomContains(folded, s.hashCount, k) {
			t.Fatalf("fold lost %x", k)
		}
	}
	for _, k := range keys {
		if !bloomContains(folded, s.hashCount, k) {
			t.Fatalf("fold lost key %x", k)
		}
	}
	// A full chunk does not fold.
	if f, m := foldBloom(bits, s.maxKeys, s.maxKeys); len(f) != len(bits) || m != s.maxKeys {
		t.Errorf("full chunk folded to %d bytes", len(f))
	}
}

func TestParseBloomMetaCorrupt(t *testing.T) {
	w, err := NewBloomWriter(BloomRowCol, 0, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for i := range 3000 {
		keys = append(keys, RowColBloomKey(nil, fmt.Appendf(nil, "r%05d", i), []byte("q")))
	}
	_, _ = writeBloomTestFile(t, w, keys, 500)
	meta, err := w.MetaPayload()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(meta) {
		if _, err := ParseBloomMeta(meta[:n]); !encoding.IsCorruption(err) && !(n >= 4 && errors.Is(err, ErrUnsupportedBloom)) {
			t.Fatalf("truncated to %d of %d: %v", n, len(meta), err)
		}
	}
	patch := func(off int, v ...byte) []byte {
		b := append([]byte(nil), meta...)
		copy(b[off:], v)
		return b
	}
	for name, tc := range map[string]struct {
		b           []byte
		unsupported bool
	}{
		"version 4":          {patch(0, 0, 0, 0, 4), true},
		"jenkins hash":       {patch(16, 0, 0, 0, 0), true},
		"murmur3 hash":       {patch(16, 0, 0, 0, 2), true},
		"zero hash count":    {patch(12, 0, 0, 0, 0), false},
		"huge hash count":    {patch(12, 0x7f, 0, 0, 0), false},
		"negative chunks":    {patch(36, 0xff, 0xff, 0xff, 0xff), false},
		"too many chunks":    {patch(36, 0, 1, 0, 0), false},
		"negative keys":      {patch(20, 0xff), false},
		"unknown comparator": {patch(41, 'X'), true},
		"comparator length":  {patch(40, 0x7f), false},
		"chunk key order":    {swapFirstChunkKeys(t, meta), false},
	} {
		_, err := ParseBloomMeta(tc.b)
		if tc.unsupported {
			if !errors.Is(err, ErrUnsupportedBloom) || encoding.IsCorruption(err) {
				t.Errorf("%s: %v", name, err)
			}
		} else if !encoding.IsCorruption(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseBloomMeta(meta); err != nil {
		t.Fatal(err)
	}
}

// swapFirstChunkKeys rewrites meta with the first two chunk keys swapped
// (they have equal lengths), so the index is out of order.
func swapFirstChunkKeys(t *testing.T, meta []byte) []byte {
	f, err := ParseBloomMeta(meta)
	if err != nil || len(f.Chunks) < 2 {
		t.Fatalf("need two chunks: %v", err)
	}
	b := append([]byte(nil), meta...)
	k0, k1 := f.Chunks[0].FirstKey, f.Chunks[1].FirstKey
	i0 := bytes.Index(b, k0)
	i1 := bytes.Index(b, k1)
	copy(b[i0:], k1)
	copy(b[i1:], k0)
	return b
}

func TestBloomMayContainAllocs(t *testing.T) {
	w, err := NewBloomWriter(BloomRow, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	f, bf := writeBloomTestFile(t, w, keys, 1)
	load := f.load
	key := []byte("b")
	allocs := testing.AllocsPerRun(100, func() {
		if ok, err := bf.MayContain(key, load); !ok || err != nil {
			t.Fatal(ok, err)
		}
	})
	if allocs != 0 {
		t.Errorf("MayContain allocates %.1f times per call", allocs)
	}
}

func BenchmarkBloomMayContain(b *testing.B) {
	w, err := NewBloomWriter(BloomRow, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 200_000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "row-%09d", i)
	}
	f, bf := writeBloomTestFile(b, w, keys, 1000)
	load := f.load
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := bf.MayContain(keys[i%len(keys)], load); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBloomAdd(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "row-%09d", i)
	}
	w, err := NewBloomWriter(BloomRow, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Add(keys[i%len(keys)])
		if w.ReadyChunk() {
			_, k := w.FinishChunk()
			w.AddChunkIndex(int64(i), 100, k)
		}
	}
}

// bloomContains reports whether key's bits are all set in bits.
func bloomContains(bits []byte, hashCount int, key []byte) bool {
	h1, h2 := bloomHashes(key)
	return bloomContainsHashes(bits, hashCount, h1, h2)
}
