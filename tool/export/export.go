package export

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/tool/internal/cli"
)

// DefaultMaxFileSize is HBase's hbase.hregion.max.filesize (10 GiB), at
// which HFileOutputFormat2 starts a new file.
const DefaultMaxFileSize = 10 << 30

// Options say what Run exports and from where. Exactly one of ZKQuorum
// and DataDir is set.
type Options struct {
	// ZKQuorum ("host:port") and ZKRoot (zookeeper.znode.parent, default
	// /hbase) find the cluster to read over RPC.
	ZKQuorum, ZKRoot string
	// DataDir is a server's data directory to read Snapshot from.
	DataDir string
	// Table is the table ("ns:table", or "table" in the default
	// namespace).
	Table string
	// Snapshot is the snapshot to export; empty (ZKQuorum only): a
	// temporary one is taken and deleted afterwards.
	Snapshot string
	// Out is the directory to write, which must not exist or be empty.
	Out string
	// MaxFileSize is the bytes of cells (keys, values and tags, before
	// encoding and compression, as HFileOutputFormat2 counts them) past
	// which a region's family continues in a new file, at the next row
	// (DefaultMaxFileSize if zero).
	MaxFileSize int64
	// Logger, if set, gets progress (slog.Default() if nil).
	Logger *slog.Logger
}

// Result is what Run wrote.
type Result struct {
	// Table and Snapshot are where the data came from (Snapshot: the
	// temporary one, already deleted, if none was given).
	Table, Snapshot string
	// Regions are the snapshot's regions, in key order.
	Regions []Region
	// Files are the HFiles written, region by region.
	Files []File
	// Cells and Bytes count what the files hold.
	Cells, Bytes int64
}

// Region is one region of the exported table: [StartKey, EndKey), an empty
// EndKey meaning the end of the table.
type Region struct {
	StartKey, EndKey []byte
}

// File is one exported HFile.
type File struct {
	Path, Family string
	Region       int // index in Result.Regions
	Cells        int64
	Size         int64
	// FirstRow and LastRow are the file's first and last rows.
	FirstRow, LastRow []byte
}

// SplitKeys returns the table's split keys: every region's start key but
// the first's.
func (r *Result) SplitKeys() [][]byte {
	var out [][]byte
	for _, rg := range r.Regions[min(1, len(r.Regions)):] {
		out = append(out, rg.StartKey)
	}
	return out
}

// source is where the snapshot's data comes from.
type source interface {
	// schema is the table's descriptor as the snapshot has it, under the
	// exported table's name, and its families as regions take them.
	schema() (*hbasepb.TableSchema, []region.FamilyOptions)
	regions() []Region
	// scan passes every row of region i, in order, all versions.
	scan(ctx context.Context, i int, row func(cells []*encoding.KeyValue) error) error
	// close releases what the source made (a temporary table and
	// snapshot); it runs even after an error.
	close(ctx context.Context) error
}

// Run exports a table as Options say; see the package documentation.
func Run(ctx context.Context, o Options) (_ *Result, err error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	switch {
	case o.Out == "":
		return nil, errors.New("export: no output directory")
	case (o.ZKQuorum == "") == (o.DataDir == ""):
		return nil, errors.New("export: give a ZooKeeper quorum or a data directory, not both")
	case o.DataDir != "" && o.Snapshot == "":
		return nil, errors.New("export: reading a data directory needs a snapshot (take one with the shell's snapshot, or export over --zk, which takes one)")
	case o.Table == "":
		return nil, errors.New("export: no table")
	}
	created, err := prepareOut(o.Out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && created {
			_ = os.RemoveAll(o.Out)
		}
	}()
	tmp := filepath.Join(o.Out, tmpDirName)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, errors.Wrap(err, "export")
	}
	defer os.RemoveAll(tmp)

	var src source
	if o.DataDir != "" {
		src, err = openLocal(o, filepath.Join(tmp, "regions"))
	} else {
		src, err = openRemote(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if cerr := src.close(cctx); cerr != nil {
			err = errors.CombineErrors(err, cerr)
		}
	}()
	schema, fams := src.schema()
	res := &Result{Table: o.Table, Snapshot: o.Snapshot, Regions: src.regions()}
	if rs, ok := src.(*remoteSource); ok {
		res.Snapshot = rs.snapshot
	}
	for _, f := range fams {
		if err := os.MkdirAll(filepath.Join(o.Out, f.Name), 0o755); err != nil {
			return nil, errors.Wrap(err, "export")
		}
	}
	for i, rg := range res.Regions {
		w := &regionWriter{out: o.Out, tmp: tmp, region: i, max: o.MaxFileSize, res: res, families: map[string]*familyWriter{}}
		for _, f := range fams {
			w.families[f.Name] = &familyWriter{rw: w, family: f.Name, opts: writerOptions(f)}
		}
		err := src.scan(ctx, i, func(cells []*encoding.KeyValue) error {
			return w.row(cells, rg)
		})
		if err == nil {
			err = w.finish()
		} else {
			w.abort()
		}
		if err != nil {
			return nil, errors.Wrapf(err, "export: region %d [%s, %s) of %s", i,
				encoding.FormatBytes(rg.StartKey), encoding.FormatBytes(rg.EndKey), o.Table)
		}
		o.Logger.Info("export: region written", "region", i, "of", len(res.Regions), "files", len(res.Files))
	}
	if err := writeDescriptorFiles(o.Out, schema, res); err != nil {
		return nil, err
	}
	return res, syncDir(o.Out)
}

// tmpDirName holds files being written and (--dir) the regions being
// read; completebulkload skips it (not a legal family name), and it is
// removed at the end.
const tmpDirName = ".export-tmp"

// prepareOut makes sure out is a new or empty directory, and reports
// whether Run made it (so that a failure removes it).
func prepareOut(out string) (created bool, _ error) {
	names, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, errors.Wrap(os.MkdirAll(out, 0o755), "export")
	case err != nil:
		return false, errors.Wrap(err, "export")
	case len(names) > 0:
		return false, errors.Newf("export: %s is not empty", out)
	}
	return false, nil
}

// writerOptions are the HFile options of a family's store files.
func writerOptions(f region.FamilyOptions) hfile.WriterOptions {
	bloom := hfile.BloomRow
	switch f.BloomFilter {
	case region.BloomFilterNone:
		bloom = hfile.BloomNone
	case region.BloomFilterRowCol:
		bloom = hfile.BloomRowCol
	}
	// Tags always, as HFileOutputFormat2 writes v3 files.
	return hfile.WriterOptions{BlockSize: f.BlockSize, Encoding: f.Encoding, Compression: f.Compression,
		BloomType: bloom, IncludesTags: true}
}

// regionWriter writes one region's files, family by family.
type regionWriter struct {
	out, tmp string
	region   int
	max      int64
	res      *Result
	families map[string]*familyWriter
}

func (w *regionWriter) row(cells []*encoding.KeyValue, rg Region) error {
	if len(cells) == 0 {
		return nil
	}
	row := cells[0].Row
	if bytes.Compare(row, rg.StartKey) < 0 || (len(rg.EndKey) > 0 && bytes.Compare(row, rg.EndKey) >= 0) {
		return errors.Newf("row %s is outside the region", encoding.FormatBytes(row))
	}
	for _, kv := range cells {
		fw := w.families[string(kv.Family)]
		if fw == nil {
			return errors.Newf("row %s has a cell of family %q, which the table does not have", encoding.FormatBytes(row), kv.Family)
		}
		if err := fw.add(kv); err != nil {
			return err
		}
	}
	return nil
}

func (w *regionWriter) finish() error {
	for _, fw := range w.families {
		if err := fw.close(); err != nil {
			return err
		}
	}
	return nil
}

func (w *regionWriter) abort() {
	for _, fw := range w.families {
		fw.abort()
	}
}

// familyWriter writes one family of one region: one file, or more past
// the size limit, cut between rows.
type familyWriter struct {
	rw     *regionWriter
	family string
	opts   hfile.WriterOptions

	f       *os.File
	bw      *bufio.Writer
	w       *hfile.Writer
	path    string // the file being written, in the temporary directory
	name    string
	cells   int64
	written int64 // the cells' bytes in the current file
	first   []byte
	lastRow []byte
	last    *encoding.KeyValue // the previous cell, for the order check
}

func (fw *familyWriter) add(kv *encoding.KeyValue) error {
	// As HFileOutputFormat2, the limit is on the cells' bytes (not the
	// compressed file's), and a row is never cut.
	if fw.w != nil && fw.written >= fw.rw.max && !bytes.Equal(kv.Row, fw.lastRow) {
		if err := fw.close(); err != nil {
			return err
		}
	}
	if fw.w == nil {
		if err := fw.open(); err != nil {
			return err
		}
		fw.first = append([]byte(nil), kv.Row...)
	}
	if fw.last != nil {
		// A scan never returns a key twice; the check keeps a source that
		// did (or returned cells out of order) from writing a file HBase
		// would refuse.
		if c := encoding.InnerStoreComparer.CompareKeyValues(fw.last, kv); c >= 0 {
			return errors.Newf("family %s: cell %s does not follow %s", fw.family, kv, fw.last)
		}
	}
	c := *kv
	c.SeqNum = 0 // bulk loaded cells get the file's sequence id on the cluster
	if err := fw.w.Append(&c); err != nil {
		return errors.Wrapf(err, "writing %s", fw.path)
	}
	fw.cells++
	fw.written += int64(kv.KeyLen() + len(kv.Value) + len(kv.Tags))
	fw.lastRow = append(fw.lastRow[:0], kv.Row...)
	fw.last = kv // sources return cells the caller owns
	return nil
}

func (fw *familyWriter) open() error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return errors.Wrap(err, "naming a file")
	}
	// HBase's store file name: 32 lowercase hex digits, no suffix
	// (StoreFileInfo's HFILE_NAME_REGEX); a name with a '.' would be read as
	// a reference to another region's file.
	fw.name = hex.EncodeToString(b[:])
	fw.path = filepath.Join(fw.rw.tmp, fw.name)
	f, err := os.Create(fw.path)
	if err != nil {
		return errors.Wrap(err, "export")
	}
	fw.f = f
	fw.bw = bufio.NewWriterSize(f, 1<<20)
	fw.w, err = hfile.NewWriter(fw.bw, fw.opts)
	if err != nil {
		fw.abort()
		return err
	}
	fw.cells, fw.written, fw.last = 0, 0, nil
	return nil
}

// HBase's store file metadata keys that its bulk load output carries
// (HStoreFile).
const (
	fileInfoBulkLoadTime           = "BULKLOAD_TIMESTAMP"
	fileInfoBulkLoadTask           = "BULKLOAD_SOURCE_TASK"
	fileInfoExcludeFromMinor       = "EXCLUDE_FROM_MINOR_COMPACTION"
	bulkLoadTask                   = "regionsrv-export"
	hbaseTrue, hbaseFalse    uint8 = 0xff, 0 // Bytes.toBytes(boolean)
)

// close finishes the current file, if any, and moves it into place.
func (fw *familyWriter) close() error {
	if fw.w == nil {
		return nil
	}
	defer func() { fw.w, fw.f = nil, nil }()
	err := fw.w.SetFileInfo(fileInfoBulkLoadTime, binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli())))
	if err == nil {
		err = fw.w.SetFileInfo(fileInfoBulkLoadTask, []byte(bulkLoadTask))
	}
	if err == nil {
		// Deletes are applied and masked cells gone: a major compaction's output.
		err = fw.w.SetFileInfo(hfile.FileInfoMajorCompaction, []byte{hbaseTrue})
	}
	if err == nil {
		err = fw.w.SetFileInfo(fileInfoExcludeFromMinor, []byte{hbaseFalse})
	}
	if err == nil {
		err = fw.w.Close()
	}
	if err == nil {
		err = fw.bw.Flush()
	}
	if err == nil {
		err = fw.f.Sync()
	}
	size := fw.w.Size()
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(fw.path)
		return errors.Wrapf(err, "writing %s", fw.path)
	}
	final := filepath.Join(fw.rw.out, fw.family, fw.name)
	if err := os.Rename(fw.path, final); err != nil {
		return errors.Wrap(err, "export")
	}
	res := fw.rw.res
	res.Files = append(res.Files, File{Path: final, Family: fw.family, Region: fw.rw.region, Cells: fw.cells, Size: size,
		FirstRow: fw.first, LastRow: append([]byte(nil), fw.lastRow...)})
	res.Cells += fw.cells
	res.Bytes += size
	return nil
}

func (fw *familyWriter) abort() {
	if fw.f != nil {
		fw.f.Close()
		_ = os.Remove(fw.path)
	}
	fw.w, fw.f = nil, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return errors.Wrap(err, "export")
	}
	defer d.Close()
	return errors.Wrapf(d.Sync(), "export: syncing %s", dir)
}

// Main runs `regionsrv export` with args (the arguments after "export"),
// printing what it wrote to stdout and errors to stderr. It returns the
// exit status: 0, 1 if the export failed (nothing is left in --out then,
// if it made it), 2 for a bad command line.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("export", "[--zk HOST:PORT | --dir DATA_DIR] --table T --out DIR [--snapshot S] [--max-file-size BYTES] [-D key=value ...]", stderr)
	zk := fs.String("zk", "", "read over RPC from the cluster registered in ZooKeeper at `host:port` (default 127.0.0.1:2181 unless --dir)")
	dataDir := fs.String("dir", "", "read the snapshot's files from this server data `directory` (running or stopped; needs --snapshot)")
	table := fs.String("table", "", "the `table` to export (ns:table, or table in the default namespace)")
	out := fs.String("out", "", "the output `directory` (new or empty): DIR/<family>/<hfile>, DIR/create.rb, DIR/splits.txt")
	snap := fs.String("snapshot", "", "export this `snapshot` of the table (default: take one, and delete it at the end)")
	maxSize := fs.Int64("max-file-size", 0, "start a new file of a region's family past this many `bytes` (hbase.hregion.max.filesize; default 10 GiB)")
	var defines hbaseconf.Defines
	fs.Var(&defines, "D", "`key=value`: zookeeper.znode.parent (default /hbase), hbase.hregion.max.filesize")
	if exit, ok := fs.Parse(hbaseconf.ExpandDefines(args)); !ok {
		return exit
	}
	if fs.NArg() != 0 {
		return fs.UsageError("unexpected argument %q", fs.Arg(0))
	}
	o := Options{DataDir: *dataDir, Table: *table, Snapshot: *snap, Out: *out, MaxFileSize: *maxSize, ZKQuorum: *zk,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	for _, d := range defines {
		switch d[0] {
		case "zookeeper.znode.parent":
			o.ZKRoot = d[1]
		case "hbase.hregion.max.filesize":
			n, err := strconv.ParseInt(d[1], 10, 64)
			if err != nil || n <= 0 {
				return fs.UsageError("-D hbase.hregion.max.filesize=%s: not a positive number of bytes", d[1])
			}
			if o.MaxFileSize == 0 {
				o.MaxFileSize = n
			}
		default:
			return fs.UsageError("-D %s: export reads only zookeeper.znode.parent and hbase.hregion.max.filesize", d[0])
		}
	}
	if o.ZKQuorum == "" && o.DataDir == "" {
		o.ZKQuorum = "127.0.0.1:2181"
	}
	if o.Table == "" || o.Out == "" {
		return fs.UsageError("--table and --out are required")
	}
	if o.ZKQuorum != "" && o.DataDir != "" {
		return fs.UsageError("give --zk or --dir, not both")
	}
	res, err := Run(ctx, o)
	if err != nil {
		return fs.Fail(err)
	}
	fmt.Fprintf(stdout, "exported %s from snapshot %s: %d regions, %d files, %d cells, %d bytes in %s\n",
		res.Table, res.Snapshot, len(res.Regions), len(res.Files), res.Cells, res.Bytes, o.Out)
	fmt.Fprintf(stdout, "on the HBase cluster (see the README, \"Moving to an HBase cluster\"):\n")
	fmt.Fprintf(stdout, "  hbase shell -n %s\n", filepath.Join(o.Out, createScriptName))
	fmt.Fprintf(stdout, "  hbase completebulkload %s %s\n", o.Out, strings.TrimPrefix(res.Table, "default:"))
	return cli.ExitOK
}
