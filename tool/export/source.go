package export

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/server"
	"google.golang.org/protobuf/proto"
)

// remoteSource reads a snapshot over RPC: it clones it into a temporary
// table and scans that.
type remoteSource struct {
	c        *client.Client
	log      *slog.Logger
	table    string
	snapshot string
	took     bool   // the snapshot is ours to delete
	clone    string // the temporary table, once made
	desc     *hbasepb.TableSchema
	fams     []region.FamilyOptions
	regs     []Region
}

func openRemote(ctx context.Context, o Options) (_ *remoteSource, err error) {
	c, err := client.New(ctx, client.Options{ZKQuorum: o.ZKQuorum, ZKRoot: o.ZKRoot})
	if err != nil {
		return nil, errors.Wrapf(err, "export: connecting to %s", o.ZKQuorum)
	}
	s := &remoteSource{c: c, log: o.Logger, table: normalizeTable(o.Table), snapshot: o.Snapshot}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			err = errors.CombineErrors(err, s.close(cctx))
		}
	}()
	if s.snapshot == "" {
		s.snapshot = "export-" + strings.ReplaceAll(s.table, ":", "-") + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
		if err := c.Snapshot(ctx, s.table, s.snapshot, nil); err != nil {
			return nil, errors.Wrapf(err, "export: taking snapshot %s of %s", s.snapshot, s.table)
		}
		s.took = true
		s.log.Info("export: took snapshot", "snapshot", s.snapshot, "table", s.table)
	} else if err := s.checkSnapshot(ctx); err != nil {
		return nil, err
	}
	ns, q := "default", s.table
	if i := strings.IndexByte(s.table, ':'); i >= 0 {
		ns, q = s.table[:i], s.table[i+1:]
	}
	clone := q + "_export_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if len(clone) > 255 {
		clone = clone[len(clone)-255:]
	}
	if ns != "default" {
		clone = ns + ":" + clone
	}
	if err := c.CloneSnapshot(ctx, s.snapshot, clone); err != nil {
		return nil, errors.Wrapf(err, "export: cloning snapshot %s into %s", s.snapshot, clone)
	}
	s.clone = clone
	td, err := c.TableDescriptor(ctx, clone)
	if err != nil {
		return nil, errors.Wrapf(err, "export: descriptor of %s", clone)
	}
	s.desc = schemaOf(td, s.table)
	if s.fams, err = server.TableFamilies(s.desc); err != nil {
		return nil, errors.Wrapf(err, "export: the descriptor of %s", s.table)
	}
	rs, err := c.Regions(ctx, clone)
	if err != nil {
		return nil, errors.Wrapf(err, "export: regions of %s", clone)
	}
	for _, r := range rs {
		s.regs = append(s.regs, Region{StartKey: r.StartKey, EndKey: r.EndKey})
	}
	return s, nil
}

// checkSnapshot makes sure the given snapshot exists and is of the table.
func (s *remoteSource) checkSnapshot(ctx context.Context) error {
	snaps, err := s.c.ListSnapshots(ctx)
	if err != nil {
		return errors.Wrap(err, "export: listing snapshots")
	}
	for _, sn := range snaps {
		if sn.Name == s.snapshot {
			if normalizeTable(sn.Table) != s.table {
				return errors.Newf("export: snapshot %s is of table %s, not %s", s.snapshot, sn.Table, s.table)
			}
			return nil
		}
	}
	return errors.Newf("export: no snapshot %s", s.snapshot)
}

func (s *remoteSource) schema() (*hbasepb.TableSchema, []region.FamilyOptions) { return s.desc, s.fams }

func (s *remoteSource) regions() []Region { return s.regs }

func (s *remoteSource) scan(ctx context.Context, i int, row func([]*encoding.KeyValue) error) error {
	rg := s.regs[i]
	sc := s.c.Scan(&client.Scan{Table: s.clone, StartRow: rg.StartKey, StopRow: rg.EndKey,
		MaxVersions: math.MaxInt32, Caching: 500, NoCacheBlocks: true})
	defer sc.Close()
	for {
		res, err := sc.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.Wrapf(err, "scanning %s", s.clone)
		}
		if err := row(res.Cells); err != nil {
			return err
		}
	}
}

// close drops the temporary table and (if it took it) the snapshot.
func (s *remoteSource) close(ctx context.Context) error {
	var err error
	if s.clone != "" {
		if derr := s.c.DisableTable(ctx, s.clone); derr != nil && !client.IsException(derr, "TableNotEnabledException") {
			err = errors.CombineErrors(err, derr)
		} else if derr := s.c.DeleteTable(ctx, s.clone); derr != nil {
			err = errors.CombineErrors(err, derr)
		}
		s.clone = ""
	}
	if s.took {
		if derr := s.c.DeleteSnapshot(ctx, s.snapshot); derr != nil {
			err = errors.CombineErrors(err, derr)
		}
		s.took = false
	}
	if cerr := s.c.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return errors.Wrap(err, "export: cleaning up")
}

// schemaOf is td as a TableSchema named table.
func schemaOf(td client.TableDescriptor, table string) *hbasepb.TableSchema {
	ns, q := "default", table
	if i := strings.IndexByte(table, ':'); i >= 0 {
		ns, q = table[:i], table[i+1:]
	}
	ts := &hbasepb.TableSchema{TableName: &hbasepb.TableName{Namespace: []byte(ns), Qualifier: []byte(q)},
		Attributes: pairs(td.Attributes)}
	for _, f := range td.Families {
		cf := &hbasepb.ColumnFamilySchema{Name: []byte(f.Name), Attributes: pairs(f.Attributes)}
		for _, k := range sortedKeys(f.Configuration) {
			cf.Configuration = append(cf.Configuration, &hbasepb.NameStringPair{Name: proto.String(k), Value: proto.String(f.Configuration[k])})
		}
		ts.ColumnFamilies = append(ts.ColumnFamilies, cf)
	}
	return ts
}

func pairs(m map[string]string) []*hbasepb.BytesBytesPair {
	var out []*hbasepb.BytesBytesPair
	for _, k := range sortedKeys(m) {
		out = append(out, &hbasepb.BytesBytesPair{First: []byte(k), Second: []byte(m[k])})
	}
	return out
}

func normalizeTable(t string) string { return strings.TrimPrefix(t, "default:") }

// localSource reads a snapshot from a server's data directory: each
// region's files are linked (or copied) into a directory of its own,
// opened as an embedded region and scanned.
type localSource struct {
	sn   *server.Snapshot
	fams []region.FamilyOptions
	desc *hbasepb.TableSchema
	regs []Region
	dirs []string
	log  *slog.Logger
}

func openLocal(o Options, tmp string) (*localSource, error) {
	sn, err := server.ReadSnapshot(region.DefaultFS, o.DataDir, o.Snapshot)
	if err != nil {
		return nil, errors.Wrapf(err, "export: snapshot %s in %s", o.Snapshot, o.DataDir)
	}
	if sn.Table.String() != normalizeTable(o.Table) {
		return nil, errors.Newf("export: snapshot %s is of table %s, not %s", o.Snapshot, sn.Table, o.Table)
	}
	s := &localSource{sn: sn, desc: sn.Manifest.GetTableSchema(), log: o.Logger}
	if s.fams, err = sn.Families(); err != nil {
		return nil, err
	}
	// Every file is linked first, so that the export holds the snapshot
	// whole even if the snapshot is deleted meanwhile.
	for i, rm := range sn.Manifest.GetRegionManifests() {
		ri := rm.GetRegionInfo()
		s.regs = append(s.regs, Region{StartKey: ri.GetStartKey(), EndKey: ri.GetEndKey()})
		dir := filepath.Join(tmp, strconv.Itoa(i))
		for _, ff := range rm.GetFamilyFiles() {
			fdir := filepath.Join(dir, string(ff.GetFamilyName()))
			if err := os.MkdirAll(fdir, 0o755); err != nil {
				return nil, errors.Wrap(err, "export")
			}
			for _, f := range ff.GetStoreFiles() {
				if err := linkOrCopy(sn.FilePath(rm, ff.GetFamilyName(), f.GetName()), filepath.Join(fdir, f.GetName())); err != nil {
					return nil, errors.Wrapf(err, "export: snapshot %s", o.Snapshot)
				}
			}
		}
		s.dirs = append(s.dirs, dir)
	}
	return s, nil
}

// linkOrCopy hard-links src to dst, or copies it where a link cannot be
// made (another filesystem).
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return errors.WithStack(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return errors.WithStack(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return errors.Wrapf(err, "copying %s", src)
	}
	return errors.WithStack(out.Close())
}

func (s *localSource) schema() (*hbasepb.TableSchema, []region.FamilyOptions) { return s.desc, s.fams }

func (s *localSource) regions() []Region { return s.regs }

func (s *localSource) scan(ctx context.Context, i int, row func([]*encoding.KeyValue) error) error {
	r, err := region.Open(s.dirs[i], region.Options{
		Table: s.sn.Table.String(), Families: s.fams,
		// Read only: no compaction of the copy.
		CompactionMin: math.MaxInt32, MajorCompactionPeriod: -1,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return errors.Wrapf(err, "opening the snapshot's region %d", i)
	}
	defer r.Close()
	rg := s.regs[i]
	sc, err := r.NewScanner(&region.Scan{StartRow: nilIfEmpty(rg.StartKey), StopRow: nilIfEmpty(rg.EndKey), MaxVersions: math.MaxInt32})
	if err != nil {
		return err
	}
	defer sc.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := sc.Next()
		if err != nil {
			return err
		}
		if res == nil {
			return nil
		}
		if err := row(res.Cells); err != nil {
			return err
		}
	}
}

func (s *localSource) close(context.Context) error { return nil }

// nilIfEmpty makes an empty key nil, which a region's Scan takes as no
// bound (an empty stop row would stop before the first row).
func nilIfEmpty(k []byte) []byte {
	if len(k) == 0 {
		return nil
	}
	return k
}
