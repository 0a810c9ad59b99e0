// Package hfileprint is `regionsrv hfile`, RegionKV's HFile printer,
// modelled on `hbase hfile` (HBase's HFilePrettyPrinter): it prints an
// HFile's cells, trailer and file info, block index and block headers, row
// statistics, and checks that its keys are in order and its structure is
// consistent.
//
//	regionsrv hfile [-p] [-m] [-s] [-b] [-h] [-k] [-e] FILE
//
// Main is the whole command line; cmd/regionsrv only dispatches to it.
// With -p, cells print as HBase prints them, one per line, non-printable
// bytes as \xNN:
//
//	K: row/family:qualifier/timestamp/Type/vlen=N/seqid=N V: value
package hfileprint

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/errors"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/tool/internal/cli"
)

// Main runs `regionsrv hfile` with args (the arguments after "hfile"),
// printing to stdout and reporting errors on stderr. It returns the exit
// status: 0; 1 if the file cannot be read, is corrupt (the error names the
// file and block offset) or, with -k, has keys out of order or fails
// hfile.Reader.Verify; 2 for a bad command line; 0 for --help (-h is the
// block headers flag). Without flags it prints a summary of the file, and
// -k ends with an "OK:" line when the file passes.
//
// Every flag opens the file first, and Open refuses a trailer that
// disagrees with the load-on-open section, so even -h fails on a damaged
// trailer. -k goes further than HBase's (which checks row order), and so
// does -h (which prints block headers): after the scan, or the headers, they
// run Verify, which reads every block and checks the index against the data
// blocks, the blocks' chaining and the cell count against the trailer.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("hfile", "[-p] [-m] [-s] [-b] [-h] [-k] [-e] FILE", stderr)
	printKV := fs.Bool("p", false, "print cells: K: row/family:qualifier/timestamp/Type/vlen=N/seqid=N V: value")
	printMeta := fs.Bool("m", false, "print the trailer, file info and bloom filter metadata")
	printStats := fs.Bool("s", false, "print statistics on key, value and row sizes")
	printIndex := fs.Bool("b", false, "print the block index")
	printHeaders := fs.Bool("h", false, "print the header of every block (verifies every checksum and the file's structure)")
	checkRows := fs.Bool("k", false, "check that rows are in order and the file's structure is consistent; exit 1 if not")
	keysOnly := fs.Bool("e", false, "print keys only")
	path, exit, ok := fs.ParsePath(args)
	if !ok {
		return exit
	}
	r, err := hfile.OpenFile(path, hfile.ReaderOptions{})
	if err != nil {
		return fs.Fail(err)
	}
	defer r.Close()
	p := &hfilePrinter{r: r, w: stdout}
	if !*printKV && !*printMeta && !*printStats && !*printIndex && !*printHeaders && !*checkRows && !*keysOnly {
		// No flag: say what the file is (HBase's printer prints nothing).
		p.summary()
		return cli.ExitOK
	}
	steps := []struct {
		on bool
		fn func() error
	}{
		{*printHeaders, p.headers},
		{*printMeta, p.meta},
		{*printIndex, p.index},
		{*printKV || *keysOnly || *checkRows || *printStats, func() error {
			return p.cells(*printKV || *keysOnly, *keysOnly, *checkRows, *printStats)
		}},
		{*checkRows || *printHeaders, r.Verify},
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		if err := s.fn(); err != nil {
			return fs.Fail(err)
		}
	}
	if p.outOfOrder > 0 {
		fs.Reportf("%d out-of-order keys in %s", p.outOfOrder, path)
		return cli.ExitFailure
	}
	if *checkRows {
		fmt.Fprintf(stdout, "OK: %s: %d cells in order; the index, the block chain and the entry count are consistent\n",
			path, p.cellsSeen)
	}
	return cli.ExitOK
}

// summary prints what the file is: its version, size, cells, encoding,
// compression, bloom and key range.
func (p *hfilePrinter) summary() {
	t := p.r.Trailer()
	fi := p.r.FileInfo()
	fmt.Fprintf(p.w, "%s: HFile v%d.%d, %d bytes\n", p.r.Name(), t.MajorVersion, t.MinorVersion, p.r.Size())
	enc := "NONE"
	if v, ok := fi[hfile.FileInfoDataBlockEnc]; ok {
		enc = string(v)
	}
	bloom := "NONE"
	if v, ok := fi[hfile.FileInfoBloomType]; ok {
		bloom = string(v)
	}
	fmt.Fprintf(p.w, "  cells: %d, compression: %s, data block encoding: %s, bloom filter: %s\n",
		t.EntryCount, strings.ToUpper(t.CompressionCodec.String()), enc, bloom)
	fmt.Fprintf(p.w, "  data index: %d level(s), %d root entries; comparator: %s\n", t.NumDataIndexLevels, t.DataIndexCount,
		t.ComparatorClassName)
	if k := p.r.FirstKey(); k != nil {
		fmt.Fprintf(p.w, "  first key: %s\n", k)
	}
	if k := p.r.LastKey(); k != nil {
		fmt.Fprintf(p.w, "  last key: %s\n", k)
	}
	fmt.Fprintln(p.w, "(-m prints the metadata, -p the cells, -k checks the file; --help lists every flag)")
}

type hfilePrinter struct {
	r          *hfile.Reader
	w          io.Writer
	outOfOrder int
	cellsSeen  int64
}

func (p *hfilePrinter) headers() error {
	fmt.Fprintln(p.w, "Block Headers:")
	return p.r.WalkBlocks(func(h hfile.BlockHeader, _ *hfile.Block) error {
		fmt.Fprintf(p.w, "  [blockType=%s, offset=%d, onDiskSizeWithoutHeader=%d, uncompressedSizeWithoutHeader=%d, prevBlockOffset=%d, checksumType=%s, bytesPerChecksum=%d, onDiskDataSizeWithHeader=%d, checksums=ok]\n",
			h.Type, h.Offset, h.OnDiskSize-hfile.HeaderSize, h.UncompressedSize, h.PrevOffset, h.ChecksumType,
			h.BytesPerChecksum, h.OnDiskDataSizeWithHeader)
		return nil
	})
}

func (p *hfilePrinter) meta() error {
	t := p.r.Trailer()
	fmt.Fprintf(p.w, "Block index size as per heapsize: %d\n", len(p.r.RootIndex()))
	fmt.Fprintln(p.w, "Trailer:")
	fmt.Fprintf(p.w, "    fileinfoOffset=%d, loadOnOpenDataOffset=%d, dataIndexCount=%d, metaIndexCount=%d, totalUncomressedBytes=%d, entryCount=%d, compressionCodec=%s, uncompressedDataIndexSize=%d, numDataIndexLevels=%d, firstDataBlockOffset=%d, lastDataBlockOffset=%d, comparatorClassName=%s, encryptionKey=NONE, majorVersion=%d, minorVersion=%d\n",
		t.FileInfoOffset, t.LoadOnOpenDataOffset, t.DataIndexCount, t.MetaIndexCount, t.TotalUncompressedBytes,
		t.EntryCount, strings.ToUpper(t.CompressionCodec.String()), t.UncompressedDataIndexSize, t.NumDataIndexLevels,
		t.FirstDataBlockOffset, t.LastDataBlockOffset, t.ComparatorClassName, t.MajorVersion, t.MinorVersion)
	fmt.Fprintln(p.w, "Fileinfo:")
	fi := p.r.FileInfo()
	for _, k := range fi.Keys() {
		fmt.Fprintf(p.w, "    %s = %s\n", k, formatFileInfo(k, fi[k]))
	}
	if k := p.r.FirstKey(); k != nil {
		fmt.Fprintf(p.w, "Mid-key: %s\n", midKeyString(p.r))
		fmt.Fprintf(p.w, "First key: %s\n", k)
	}
	if k := p.r.LastKey(); k != nil {
		fmt.Fprintf(p.w, "Last key: %s\n", k)
	}
	printBloom := func(title string, b *hfile.BloomFilter) {
		fmt.Fprintf(p.w, "%s:\n", title)
		if b == nil {
			fmt.Fprintln(p.w, "    Not present")
			return
		}
		fmt.Fprintf(p.w, "    BloomSize: %d\n    No of Keys in bloom: %d\n    Max Keys for bloom: %d\n    Number of chunks: %d\n    Hash type: %d\n    Number of hash functions: %d\n    Comparator: %q\n",
			b.TotalByteSize, b.TotalKeyCount, b.TotalMaxKeys, len(b.Chunks), b.HashType, b.HashCount, b.Comparator)
	}
	gb, db := p.r.Blooms()
	printBloom("Bloom filter", gb)
	printBloom("Delete Family Bloom filter", db)
	return nil
}

func midKeyString(r *hfile.Reader) string {
	if off, size, entry, ok := r.MidKeyMetadata(); ok {
		_, es, err := r.IndexBlock(off, size)
		if err != nil || entry < 0 || entry >= len(es) {
			return "<unreadable>"
		}
		return encoding.Key(es[entry].Key).String()
	}
	ri := r.RootIndex()
	return encoding.Key(ri[(len(ri)-1)/2].Key).String()
}

// formatFileInfo prints well-known file info values as HBase's printer does.
func formatFileInfo(k string, v []byte) string {
	switch k {
	case hfile.FileInfoLastKey, hfile.FileInfoKeyOfBiggestCell:
		if _, err := encoding.ParseKey(v); err == nil {
			return encoding.Key(v).String()
		}
	case hfile.FileInfoTimeRange:
		if len(v) == 16 {
			return fmt.Sprintf("%d....%d", beInt(v[:8]), beInt(v[8:]))
		}
	case hfile.FileInfoBloomType, hfile.FileInfoDataBlockEnc:
		return string(v)
	case hfile.FileInfoMajorCompaction, hfile.FileInfoTagsCompressed, "HISTORICAL", "EXCLUDE_FROM_MINOR_COMPACTION_KEY":
		if len(v) == 1 {
			return fmt.Sprint(v[0] != 0)
		}
	}
	if len(v) == 4 || len(v) == 8 {
		return fmt.Sprint(beInt(v))
	}
	return encoding.FormatBytes(v)
}

func beInt(b []byte) int64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	if len(b) == 4 {
		return int64(int32(uint32(u)))
	}
	return int64(u)
}

func (p *hfilePrinter) index() error {
	t := p.r.Trailer()
	fmt.Fprintf(p.w, "Block Index: %d level(s)\n", t.NumDataIndexLevels)
	var walk func(es []hfile.IndexEntry, level int, indent string) error
	walk = func(es []hfile.IndexEntry, level int, indent string) error {
		for i, e := range es {
			fmt.Fprintf(p.w, "%skey=%s\n%s  offset=%d, dataSize=%d\n", indent, encoding.Key(e.Key), indent, e.Offset, e.OnDiskSize)
			if level < int(t.NumDataIndexLevels) {
				typ, sub, err := p.r.IndexBlock(e.Offset, e.OnDiskSize)
				if err != nil {
					return err
				}
				fmt.Fprintf(p.w, "%s  %s block %d of level %d: %d entries\n", indent, typ, i, level+1, len(sub))
				if err := walk(sub, level+1, indent+"    "); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(p.r.RootIndex(), 1, "  "); err != nil {
		return err
	}
	if mi := p.r.MetaIndex(); len(mi) > 0 {
		fmt.Fprintln(p.w, "Meta Index:")
		for _, e := range mi {
			fmt.Fprintf(p.w, "  name=%s offset=%d, dataSize=%d\n", encoding.FormatBytes(e.Key), e.Offset, e.OnDiskSize)
		}
	}
	return nil
}

// cells walks every cell once, printing, checking order and gathering stats.
func (p *hfilePrinter) cells(print, keysOnly, check, stats bool) error {
	it := p.r.NewIterator(false)
	ok, err := it.First()
	var (
		prevKey   []byte
		kv        encoding.KeyValue
		keyLen    = hdrhistogram.New(1, 1<<31, 3)
		valLen    = hdrhistogram.New(1, 1<<31, 3)
		rowBytes  = hdrhistogram.New(1, 1<<40, 3)
		rowCols   = hdrhistogram.New(1, 1<<40, 3)
		curRow    []byte
		curBytes  int64
		curCols   int64
		bigRow    []byte
		bigBytes  int64
		cmp       = p.r.Comparer()
		rowsSeen  int64
		cellsSeen int64
	)
	endRow := func() {
		if curCols == 0 {
			return
		}
		rowBytes.RecordValue(curBytes)
		rowCols.RecordValue(curCols)
		if curBytes > bigBytes {
			bigBytes, bigRow = curBytes, append(bigRow[:0], curRow...)
		}
	}
	for ; ok && err == nil; ok, err = it.Next() {
		it.KeyValue(&kv)
		key := it.Key()
		cellsSeen++
		if print {
			fmt.Fprintf(p.w, "K: %s", kv.String())
			if !keysOnly {
				fmt.Fprintf(p.w, " V: %s", encoding.FormatBytes(kv.Value))
				if len(kv.Tags) > 0 {
					fmt.Fprintf(p.w, " T: %s", encoding.FormatBytes(kv.Tags))
				}
			}
			fmt.Fprintln(p.w)
		}
		if check && prevKey != nil {
			if c := cmp.CompareRows(encoding.Key(prevKey).Row(), kv.Row); c > 0 {
				fmt.Fprintf(p.w, "WARNING, previous row is greater than current row\n\tfilename -> %s\n\tprevious -> %s\n\tcurrent  -> %s\n",
					p.r.Name(), encoding.Key(prevKey), key)
				p.outOfOrder++
			} else if c == 0 && cmp.CompareKeys(prevKey, key) > 0 {
				fmt.Fprintf(p.w, "WARNING, previous key is greater than current key\n\tfilename -> %s\n\tprevious -> %s\n\tcurrent  -> %s\n",
					p.r.Name(), encoding.Key(prevKey), key)
				p.outOfOrder++
			}
		}
		if stats {
			if curRow == nil || !bytes.Equal(curRow, kv.Row) {
				endRow()
				rowsSeen++
				curRow, curBytes, curCols = append(curRow[:0], kv.Row...), 0, 0
			}
			keyLen.RecordValue(int64(len(key)))
			valLen.RecordValue(int64(len(kv.Value)))
			curBytes += int64(8 + len(key) + len(kv.Value))
			curCols++
		}
		prevKey = append(prevKey[:0], key...)
	}
	if err != nil {
		return err
	}
	if n := p.r.EntryCount(); uint64(cellsSeen) != n {
		return errors.Newf("%s: trailer says %d cells, found %d", p.r.Name(), n, cellsSeen)
	}
	p.cellsSeen = cellsSeen
	if print {
		fmt.Fprintf(p.w, "Scanned kv count -> %d\n", cellsSeen)
	}
	if stats {
		endRow()
		fmt.Fprintln(p.w, "Stats:")
		for _, h := range []struct {
			name string
			h    *hdrhistogram.Histogram
		}{{"Key length", keyLen}, {"Val length", valLen}, {"Row size (bytes)", rowBytes}, {"Row size (columns)", rowCols}} {
			fmt.Fprintf(p.w, "   %s: count=%d, min=%d, max=%d, mean=%.2f, median=%d, 75%%<=%d, 95%%<=%d, 98%%<=%d, 99%%<=%d, 99.9%%<=%d\n",
				h.name, h.h.TotalCount(), h.h.Min(), h.h.Max(), h.h.Mean(), h.h.ValueAtQuantile(50), h.h.ValueAtQuantile(75),
				h.h.ValueAtQuantile(95), h.h.ValueAtQuantile(98), h.h.ValueAtQuantile(99), h.h.ValueAtQuantile(99.9))
		}
		fmt.Fprintf(p.w, "Key of biggest row: %s\n", encoding.FormatBytes(bigRow))
		fmt.Fprintf(p.w, "Rows: %d, cells: %d\n", rowsSeen, cellsSeen)
	}
	return nil
}
