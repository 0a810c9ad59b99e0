// Package walprint is `regionsrv wal`, RegionKV's WAL printer, modelled on
// `hbase wal` (HBase's WALPrettyPrinter): it prints the entries of one
// segment file, or of every segment of a WAL directory in order, and a
// summary line.
//
//	regionsrv wal [-p] FILE|DIR
//
// Main is the whole command line; cmd/regionsrv only dispatches to it.
package walprint

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/tool/internal/cli"
	"github.com/regionkv/regionkv/wal"
)

// Main runs `regionsrv wal` with args (the arguments after "wal"),
// printing to stdout and reporting errors on stderr. It returns the exit
// status. A torn tail at the end (of the file, or of the directory's last
// segment) is a warning and exit 0; corruption is an error naming the file
// and offset, exit 1; a bad command line is exit 2, --help exit 0. A directory
// without segments that has a wal/ subdirectory (a region's) is read there.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("wal", "[-p] FILE|DIR", stderr)
	printCells := fs.Bool("p", false, "print each entry's cells: row, column, timestamp, type and value")
	path, exit, ok := fs.ParsePath(args)
	if !ok {
		return exit
	}
	st, err := os.Stat(path)
	if err != nil {
		return fs.Fail(err)
	}
	paths := []string{path}
	if st.IsDir() {
		if paths, err = wal.ListSegments(vfs.Default, path); err != nil {
			return fs.Fail(err)
		}
		// A region directory keeps its WAL in wal/.
		sub := filepath.Join(path, "wal")
		if len(paths) == 0 {
			if sst, err := os.Stat(sub); err == nil && sst.IsDir() {
				if paths, err = wal.ListSegments(vfs.Default, sub); err != nil {
					return fs.Fail(err)
				}
				fmt.Fprintf(stdout, "WAL directory: %s\n", sub)
				path = sub
			}
		}
		if len(paths) == 0 {
			fs.Reportf("warning: no WAL segments (*.wal) in %s", path)
		}
	}
	r := wal.NewReader(vfs.Default, paths)
	defer r.Close()
	var minSeq, maxSeq uint64
	segment := ""
	for {
		k, e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fs.Fail(err)
		}
		if r.Segment() != segment {
			segment = r.Segment()
			if st.IsDir() {
				fmt.Fprintf(stdout, "Segment: %s\n", segment)
			}
		}
		if minSeq == 0 || k.SeqNum < minSeq {
			minSeq = k.SeqNum
		}
		maxSeq = max(maxSeq, k.SeqNum)
		printWALEntry(stdout, k, e, *printCells)
	}
	s := r.Stats()
	fmt.Fprintf(stdout, "Summary: %d entries, %d cells, %d segments, %d bytes", s.Entries, s.Cells, s.Segments, s.Bytes)
	if s.Entries > 0 {
		fmt.Fprintf(stdout, ", sequence ids %d..%d", minSeq, maxSeq)
	}
	fmt.Fprintln(stdout)
	if s.TornTail {
		fs.Reportf("warning: torn tail in %s at offset %d: %d bytes dropped (a write cut short by a crash)",
			s.TornSegment, s.TornOffset, s.DroppedBytes)
	}
	return cli.ExitOK
}

// javaDate is the layout of Java's Date.toString, which `hbase wal` prints.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

func printWALEntry(w io.Writer, k *wal.Key, e *wal.Edit, cells bool) {
	fmt.Fprintf(w, "Sequence=%d , table=%s, region=%s, at write timestamp=%s",
		k.SeqNum, encoding.FormatBytes(k.TableName), encoding.FormatBytes(k.EncodedRegionName),
		time.UnixMilli(k.WriteTime).UTC().Format(javaDate))
	if k.OrigSeqNum != 0 {
		fmt.Fprintf(w, ", origSequence=%d", k.OrigSeqNum)
	}
	fmt.Fprintln(w)
	if !cells {
		return
	}
	for i := range e.Cells {
		kv := &e.Cells[i]
		fmt.Fprintf(w, "row=%s, column=%s:%s, timestamp=%s, type=%s, value=%s",
			encoding.FormatBytes(kv.Row), encoding.FormatBytes(kv.Family), encoding.FormatBytes(kv.Qualifier),
			encoding.FormatTimestamp(kv.Timestamp), kv.Type, encoding.FormatBytes(kv.Value))
		if len(kv.Tags) > 0 {
			fmt.Fprintf(w, ", tags=%s", encoding.FormatBytes(kv.Tags))
		}
		fmt.Fprintln(w)
	}
}
