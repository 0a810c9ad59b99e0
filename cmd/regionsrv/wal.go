package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/wal"
)

// runWAL is `regionsrv wal`, modelled on `hbase wal` (WALPrettyPrinter): it
// prints the entries of one segment file, or of every segment of a WAL
// directory in order. A torn tail at the end (of the file, or of the
// directory's last segment) is a warning and exit 0; corruption is an error
// naming the file and offset, exit 1.
func runWAL(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	printCells := fs.Bool("p", false, "print each entry's cells: row, column, timestamp, type and value")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: regionsrv wal [-p] FILE|DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	path := fs.Arg(0)
	st, err := os.Stat(path)
	if err != nil {
		fmt.Fprintf(stderr, "regionsrv wal: %v\n", err)
		return 1
	}
	paths := []string{path}
	if st.IsDir() {
		if paths, err = wal.ListSegments(vfs.Default, path); err != nil {
			fmt.Fprintf(stderr, "regionsrv wal: %v\n", err)
			return 1
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
			fmt.Fprintf(stderr, "regionsrv wal: %v\n", err)
			return 1
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
		fmt.Fprintf(stderr, "regionsrv wal: warning: torn tail in %s at offset %d: %d bytes dropped (a write cut short by a crash)\n",
			s.TornSegment, s.TornOffset, s.DroppedBytes)
	}
	return 0
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
