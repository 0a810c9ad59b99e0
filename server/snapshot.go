package server

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// Snapshots, as HBase's master takes them (SnapshotManager): a snapshot
// names a table's descriptor, regions and store files at one time, and
// keeps those files. HBase keeps them by reference (HFileLinks, and an
// archive directory compactions move files to); we keep them by hard
// links, so that a compaction or a table deletion removes only its own
// names of a file, and deleting a snapshot frees exactly the files nothing
// else names. On disk, under the data directory (hbase.rootdir):
//
//	.hbase-snapshot/<name>/.snapshotinfo   SnapshotDescription (protobuf)
//	.hbase-snapshot/<name>/data.manifest   SnapshotDataManifest (protobuf): the table
//	                                       descriptor, every region's RegionInfo and store files
//	.hbase-snapshot/<name>/data/<encoded region>/<family>/<store file>   hard links
//	.hbase-snapshot/.tmp/                  snapshots being taken or deleted; emptied at start
//
// The two protobuf files are HBase's (manifest version 2). A snapshot is
// built in .tmp, every file and directory synced, and renamed into place,
// so after a crash it is there whole or not at all; a deletion renames it
// into .tmp first.
//
// Restore and clone run under the DDL lock like the other admin
// operations, to the end before the RPC answers, and record their outcome
// for getProcedureResult. A restore writes a marker (.restore-snapshot in
// the table's directory) before it changes anything and removes it after,
// so a restart finishes a restore a crash interrupted; a clone builds the
// new table's directory before hbase:meta names it (in one atomic batch),
// and a directory that hbase:meta does not name is removed at start.
const (
	snapshotRootName     = ".hbase-snapshot"
	snapshotInfoName     = ".snapshotinfo"
	snapshotManifestName = "data.manifest"
	snapshotFilesName    = "data"
	snapshotTmpName      = ".tmp"
	restoreMarkerName    = ".restore-snapshot"
	tableDescName        = ".tabledesc"

	// snapshotManifestVersion is HBase's SnapshotManifestV2.DESCRIPTOR_VERSION.
	snapshotManifestVersion = 2
	// snapshotTimeout is the expected_timeout of SnapshotResponse, in ms
	// (SnapshotDescriptionUtils.DEFAULT_MAX_WAIT_TIME); ours are done when
	// the RPC answers.
	snapshotTimeout = 300000
)

// Snapshot is a completed snapshot of a data directory.
type Snapshot struct {
	// Dir is the snapshot's directory.
	Dir         string
	Description *hbasepb.SnapshotDescription
	Manifest    *hbasepb.SnapshotDataManifest
	// Table is the table it was taken of.
	Table TableName
}

func snapshotRoot(dataDir string) string { return filepath.Join(dataDir, snapshotRootName) }

// checkSnapshotName checks a snapshot name as HBase's
// ClientSnapshotDescriptionUtils does (a legal table qualifier).
func checkSnapshotName(name string) error {
	if err := validName(name, true); err != nil {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "illegal snapshot name %q: %v", name, err)
	}
	return nil
}

// ReadSnapshot reads the snapshot name of the data directory dataDir (of a
// running server or a stopped one) and checks its manifest: the regions
// are the table's, the families the descriptor's, the file names store
// files'. A snapshot that does not exist is a SnapshotDoesNotExistException,
// a damaged one a CorruptedSnapshotException.
func ReadSnapshot(fs region.FS, dataDir, name string) (*Snapshot, error) {
	if err := checkSnapshotName(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(snapshotRoot(dataDir), name)
	b, err := vfs.ReadFile(fs, filepath.Join(dir, snapshotInfoName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ipc.Errorf(ipc.ClassSnapshotDoesNotExistException, "Snapshot '%s' doesn't exist on the filesystem", name)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "server: reading snapshot %s", name)
	}
	sn := &Snapshot{Dir: dir, Description: &hbasepb.SnapshotDescription{}, Manifest: &hbasepb.SnapshotDataManifest{}}
	corrupt := func(format string, args ...any) error {
		return ipc.Errorf(ipc.ClassCorruptedSnapshotException, "snapshot %s (%s): %s", name, dir, errors.Newf(format, args...))
	}
	if err := proto.Unmarshal(b, sn.Description); err != nil {
		return nil, corrupt("%s: %v", snapshotInfoName, err)
	}
	if sn.Description.GetName() != name {
		return nil, corrupt("%s names snapshot %q", snapshotInfoName, sn.Description.GetName())
	}
	if sn.Table, err = ParseTableName(sn.Description.GetTable()); err != nil {
		return nil, corrupt("table: %v", err)
	}
	if b, err = vfs.ReadFile(fs, filepath.Join(dir, snapshotManifestName)); err != nil {
		return nil, corrupt("%s: %v", snapshotManifestName, err)
	}
	if err := proto.Unmarshal(b, sn.Manifest); err != nil {
		return nil, corrupt("%s: %v", snapshotManifestName, err)
	}
	fams, err := tableFamilies(sn.Manifest.GetTableSchema())
	if err != nil {
		return nil, corrupt("table descriptor: %v", err)
	}
	known := map[string]bool{}
	for _, f := range fams {
		known[f.Name] = true
	}
	var prevEnd []byte
	rms := sn.Manifest.GetRegionManifests()
	if len(rms) == 0 {
		return nil, corrupt("no regions")
	}
	for i, rm := range rms {
		ri, err := regionInfoFromPB(rm.GetRegionInfo())
		if err != nil || ri.Table != sn.Table {
			return nil, corrupt("region %d is not of table %s", i, sn.Table)
		}
		// The regions cover the table's keys, in order, once.
		if !bytes.Equal(ri.StartKey, prevEnd) {
			return nil, corrupt("region %d does not start where region %d ends", i, i-1)
		}
		if prevEnd = ri.EndKey; len(prevEnd) == 0 && i != len(rms)-1 {
			return nil, corrupt("region %d ends the table but is not the last", i)
		}
		if i == len(rms)-1 && len(prevEnd) != 0 {
			return nil, corrupt("the last region does not end the table")
		}
		for _, ff := range rm.GetFamilyFiles() {
			if !known[string(ff.GetFamilyName())] {
				return nil, corrupt("region %s: family %q is not in the descriptor", ri.EncodedName(), ff.GetFamilyName())
			}
			for _, f := range ff.GetStoreFiles() {
				if n := f.GetName(); filepath.Base(n) != n || !region.IsStoreFileName(n) {
					return nil, corrupt("region %s: %q is not a store file name", ri.EncodedName(), n)
				}
			}
		}
	}
	return sn, nil
}

// FilePath returns where the snapshot keeps a store file of one of its
// regions.
func (sn *Snapshot) FilePath(rm *hbasepb.SnapshotRegionManifest, family []byte, name string) string {
	ri, _ := regionInfoFromPB(rm.GetRegionInfo()) // checked by ReadSnapshot
	return filepath.Join(sn.Dir, snapshotFilesName, ri.EncodedName(), string(family), name)
}

// Families returns the families of the snapshot's table descriptor as
// regions take them.
func (sn *Snapshot) Families() ([]region.FamilyOptions, error) {
	return tableFamilies(sn.Manifest.GetTableSchema())
}

// expired reports whether the snapshot's TTL has passed, as HBase's
// SnapshotDescriptionUtils.isExpiredSnapshot judges it.
func (sn *Snapshot) expired(now time.Time) bool {
	ttl := sn.Description.GetTtl()
	return ttl > 0 && sn.Description.GetCreationTime()+ttl*1000 < now.UnixMilli()
}

// prepareSnapshots clears what a crash left of snapshots being taken or
// deleted (at start).
func (s *Server) prepareSnapshots() error {
	tmp := filepath.Join(snapshotRoot(s.cfg.DataDir), snapshotTmpName)
	if err := vfs.RemoveAll(s.fs, tmp); err != nil {
		return errors.Wrap(err, "server: clearing the snapshots' working directory")
	}
	return errors.Wrap(vfs.MkdirAllSync(s.fs, tmp, 0o755), "server: snapshots' working directory")
}

// snapshotExists reports whether a completed snapshot of that name exists.
func (s *Server) snapshotExists(name string) (bool, error) {
	_, err := s.fs.Stat(filepath.Join(snapshotRoot(s.cfg.DataDir), name, snapshotInfoName))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, errors.Wrapf(err, "server: snapshot %s", name)
}

// takeSnapshot takes a snapshot of a table, as HBase's SnapshotManager:
// of an enabled table, each region flushes first (type FLUSH) or not
// (SKIPFLUSH) and links its store files; of a disabled one, the files
// its regions left (type DISABLED). user is the owner if desc names none.
func (s *Server) takeSnapshot(desc *hbasepb.SnapshotDescription, user string) error {
	name := desc.GetName()
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	if desc.Table == nil {
		return ipc.Errorf(ipc.ClassSnapshotCreationException, "snapshot %s names no table", name)
	}
	tn, err := ParseTableName(desc.GetTable())
	if err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if ok, err := s.snapshotExists(name); err != nil {
		return err
	} else if ok {
		return ipc.Errorf(ipc.ClassSnapshotExistsException, "Snapshot '%s' already stored on the filesystem.", name)
	}
	t := s.tableByName(tn)
	if t == nil {
		return ipc.Errorf(ipc.ClassSnapshotCreationException, "Table '%s' doesn't exist, can't take snapshot.", tn)
	}
	if tn.System() {
		return ipc.Errorf(ipc.ClassSnapshotCreationException, "cannot snapshot system table %s", tn)
	}
	out := proto.Clone(desc).(*hbasepb.SnapshotDescription)
	out.Table = proto.String(tn.String())
	out.Version = proto.Int32(snapshotManifestVersion)
	if out.GetCreationTime() <= 0 {
		out.CreationTime = proto.Int64(time.Now().UnixMilli())
	}
	if out.Owner == nil && user != "" {
		out.Owner = proto.String(user)
	}
	if out.GetTtl() < 0 {
		out.Ttl = proto.Int64(0)
	}
	switch t.getState() {
	case hbasepb.TableState_ENABLED:
		if out.Type == nil {
			out.Type = hbasepb.SnapshotDescription_FLUSH.Enum()
		}
		if out.GetType() == hbasepb.SnapshotDescription_DISABLED {
			return ipc.Errorf(ipc.ClassSnapshotCreationException, "snapshot %s: type DISABLED is for disabled tables; %s is enabled", name, tn)
		}
	case hbasepb.TableState_DISABLED:
		out.Type = hbasepb.SnapshotDescription_DISABLED.Enum()
	default:
		return ipc.Errorf(ipc.ClassSnapshotCreationException, "Table %s is not entirely open or closed", tn)
	}

	root := snapshotRoot(s.cfg.DataDir)
	tmp := filepath.Join(root, snapshotTmpName, name)
	if err := s.buildSnapshot(t, out, tmp); err != nil {
		if rerr := vfs.RemoveAll(s.fs, tmp); rerr != nil {
			s.log.Warn("server: removing a failed snapshot's files", "snapshot", name, "err", rerr)
		}
		return errors.Wrapf(err, "server: snapshot %s of %s", name, tn)
	}
	if err := s.fs.Rename(tmp, filepath.Join(root, name)); err != nil {
		return errors.Wrapf(err, "server: publishing snapshot %s", name)
	}
	// The rename crosses directories: durable once both are synced.
	if err := vfs.SyncDir(s.fs, root); err != nil {
		return errors.Wrapf(err, "server: publishing snapshot %s", name)
	}
	if err := vfs.SyncDir(s.fs, filepath.Dir(tmp)); err != nil {
		return errors.Wrapf(err, "server: publishing snapshot %s", name)
	}
	s.log.Info("took snapshot", "snapshot", name, "table", tn.String(), "type", out.GetType().String(), "regions", len(t.regions))
	return nil
}

// buildSnapshot links the table's files into dir and writes the
// snapshot's two files there, every directory synced.
func (s *Server) buildSnapshot(t *table, desc *hbasepb.SnapshotDescription, dir string) error {
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		return err
	}
	if err := vfs.MkdirAllSync(s.fs, filepath.Join(dir, snapshotFilesName), 0o755); err != nil {
		return err
	}
	var famNames []string
	for _, f := range t.families() {
		famNames = append(famNames, f.Name)
	}
	manifest := &hbasepb.SnapshotDataManifest{TableSchema: t.schema()}
	for _, hr := range t.regions {
		if hr.info.Offline {
			continue // not serving: its keys are its successors'
		}
		dst := filepath.Join(dir, snapshotFilesName, hr.info.EncodedName())
		var ffs []region.FamilyFiles
		var err error
		if desc.GetType() == hbasepb.SnapshotDescription_DISABLED {
			ffs, err = region.LinkClosedStoreFiles(s.fs, hr.dir, dst, famNames)
		} else if r := hr.r.Load(); r != nil {
			ffs, err = r.LinkStoreFiles(dst, desc.GetType() == hbasepb.SnapshotDescription_FLUSH)
		} else {
			err = ipc.Errorf(ipc.ClassSnapshotCreationException, "region %s of %s is not online", hr.info.EncodedName(), t.name)
		}
		if err != nil {
			return err
		}
		rm := &hbasepb.SnapshotRegionManifest{Version: proto.Int32(snapshotManifestVersion), RegionInfo: hr.info.PB()}
		for _, ff := range ffs {
			fam := &hbasepb.SnapshotRegionManifest_FamilyFiles{FamilyName: []byte(ff.Family)}
			for _, f := range ff.Files {
				fam.StoreFiles = append(fam.StoreFiles, &hbasepb.SnapshotRegionManifest_StoreFile{
					Name: proto.String(f.Name), FileSize: proto.Uint64(uint64(f.Size))})
			}
			rm.FamilyFiles = append(rm.FamilyFiles, fam)
		}
		manifest.RegionManifests = append(manifest.RegionManifests, rm)
	}
	if err := vfs.SyncDir(s.fs, filepath.Join(dir, snapshotFilesName)); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		msg  proto.Message
	}{{snapshotManifestName, manifest}, {snapshotInfoName, desc}} {
		b, err := proto.Marshal(f.msg)
		if err != nil {
			return errors.Wrapf(err, "encoding %s", f.name)
		}
		if err := vfs.WriteFile(s.fs, filepath.Join(dir, f.name), b); err != nil {
			return err
		}
	}
	return vfs.SyncDir(s.fs, dir)
}

// listSnapshots returns the completed snapshots, oldest first. One whose
// description cannot be read is left out (and logged) rather than failing
// the listing.
func (s *Server) listSnapshots() ([]*hbasepb.SnapshotDescription, error) {
	root := snapshotRoot(s.cfg.DataDir)
	names, err := s.fs.List(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "server: listing snapshots")
	}
	var out []*hbasepb.SnapshotDescription
	for _, n := range names {
		if n == snapshotTmpName {
			continue
		}
		b, err := vfs.ReadFile(s.fs, filepath.Join(root, n, snapshotInfoName))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("server: reading a snapshot's description", "snapshot", n, "err", err)
			}
			continue
		}
		d := &hbasepb.SnapshotDescription{}
		if err := proto.Unmarshal(b, d); err != nil || d.GetName() != n {
			s.log.Warn("server: a snapshot's description is damaged; it is not listed", "snapshot", n, "err", err)
			continue
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetCreationTime() != out[j].GetCreationTime() {
			return out[i].GetCreationTime() < out[j].GetCreationTime()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out, nil
}

// snapshotDone answers IsSnapshotDone: ours are done when their RPC
// answers, so a snapshot is done if it exists, and unknown otherwise.
func (s *Server) snapshotDone(desc *hbasepb.SnapshotDescription) (*hbasepb.SnapshotDescription, error) {
	if desc == nil || desc.GetName() == "" {
		return nil, ipc.Errorf(ipc.ClassUnknownSnapshotException,
			"No snapshot name passed in request, can't figure out which snapshot you want to check.")
	}
	if err := checkSnapshotName(desc.GetName()); err != nil {
		return nil, err
	}
	sn, err := ReadSnapshot(s.fs, s.cfg.DataDir, desc.GetName())
	if e, ok := ipc.AsException(err); ok && e.Class == ipc.ClassSnapshotDoesNotExistException {
		return nil, ipc.Errorf(ipc.ClassUnknownSnapshotException,
			"Snapshot '%s' is not currently running or one of the known completed snapshots.", desc.GetName())
	}
	if err != nil {
		return nil, err
	}
	return sn.Description, nil
}

// deleteSnapshot deletes a snapshot: its directory is renamed into .tmp
// (so that a crash leaves it whole or gone), then removed. The store files
// it linked are freed unless a table or another snapshot still names them.
func (s *Server) deleteSnapshot(name string) error {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if ok, err := s.snapshotExists(name); err != nil {
		return err
	} else if !ok {
		return ipc.Errorf(ipc.ClassSnapshotDoesNotExistException, "Snapshot '%s' doesn't exist on the filesystem", name)
	}
	root := snapshotRoot(s.cfg.DataDir)
	gone := filepath.Join(root, snapshotTmpName, name+".deleted-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := s.fs.Rename(filepath.Join(root, name), gone); err != nil {
		return errors.Wrapf(err, "server: deleting snapshot %s", name)
	}
	if err := vfs.SyncDir(s.fs, root); err != nil {
		return errors.Wrapf(err, "server: deleting snapshot %s", name)
	}
	if err := vfs.SyncDir(s.fs, filepath.Dir(gone)); err != nil {
		return errors.Wrapf(err, "server: deleting snapshot %s", name)
	}
	if err := vfs.RemoveAll(s.fs, gone); err != nil {
		// Gone all the same; the next start clears .tmp.
		s.log.Warn("server: removing a deleted snapshot's files", "snapshot", name, "err", err)
	}
	s.log.Info("deleted snapshot", "snapshot", name)
	return nil
}

// restoreOrClone is HBase's SnapshotManager.restoreOrCloneSnapshot: the
// request's table names the target; if it exists the snapshot is restored
// into it (it must be the snapshot's table, disabled), else the snapshot
// is cloned into a new table of that name.
func (s *Server) restoreOrClone(desc *hbasepb.SnapshotDescription) error {
	name := desc.GetName()
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	sn, err := ReadSnapshot(s.fs, s.cfg.DataDir, name)
	if err != nil {
		return err
	}
	// HBase's clients always name the target; without one, the
	// snapshot's own table is meant.
	target := sn.Table
	if desc.Table != nil {
		if target, err = ParseTableName(desc.GetTable()); err != nil {
			return err
		}
	}
	if target.System() {
		return ipc.Errorf(ipc.ClassRestoreSnapshotException, "cannot restore or clone snapshot %s into system table %s", name, target)
	}
	if sn.expired(time.Now()) {
		return ipc.Errorf(ipc.ClassSnapshotTTLExpiredException, "TTL for snapshot '%s' has already expired.", name)
	}
	t := s.tableByName(target)
	if t == nil {
		return s.cloneSnapshot(target, sn)
	}
	if target != sn.Table {
		return ipc.Errorf(ipc.ClassRestoreSnapshotException,
			"snapshot %s is of table %s: it restores into %s only, and clones into a table that does not exist; %s exists",
			name, sn.Table, sn.Table, target)
	}
	if t.getState() != hbasepb.TableState_DISABLED {
		// HBase's master refuses it ("must be disabled in order to perform
		// a restore operation"); its client checks first and throws this.
		return ipc.Errorf(ipc.ClassTableNotDisabledException, "%s", target)
	}
	return s.restoreTable(t, sn)
}

// restoreTable rolls a disabled table back to a snapshot of it, as HBase's
// RestoreSnapshotProcedure: the descriptor becomes the snapshot's, the
// regions the snapshot's (with its files), hbase:meta lists exactly them,
// and the table stays disabled. A marker makes a restart finish it.
func (s *Server) restoreTable(t *table, sn *Snapshot) error {
	name := sn.Description.GetName()
	marker := filepath.Join(s.tableDir(t.name), restoreMarkerName)
	if err := s.writeFileAtomic(marker, []byte(name+"\n")); err != nil {
		return err
	}
	var old []RegionInfo
	for _, hr := range t.regions {
		old = append(old, hr.info)
	}
	nt, err := s.applyRestore(t.name, sn, old)
	if err != nil {
		// The marker stays: the next start finishes the restore.
		return errors.Wrapf(err, "server: restoring %s from snapshot %s", t.name, name)
	}
	if err := s.removeRestoreMarker(t.name); err != nil {
		return err
	}
	s.mu.Lock()
	s.removeTableLocked(t)
	s.addTableLocked(nt)
	s.mu.Unlock()
	s.log.Info("restored table from snapshot", "table", t.name.String(), "snapshot", name, "regions", len(nt.regions))
	return nil
}

func (s *Server) removeRestoreMarker(t TableName) error {
	dir := s.tableDir(t)
	if err := s.fs.Remove(filepath.Join(dir, restoreMarkerName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Wrapf(err, "server: finishing the restore of %s", t)
	}
	return errors.Wrapf(vfs.SyncDir(s.fs, dir), "server: finishing the restore of %s", t)
}

// applyRestore makes the disabled table name what the snapshot holds:
// descriptor, region directories (every other one removed) and hbase:meta
// rows (old's rows that are not the snapshot's deleted). It can run again
// on whatever an interrupted run left. It returns the table, disabled.
func (s *Server) applyRestore(name TableName, sn *Snapshot, old []RegionInfo) (*table, error) {
	schema, fams, err := s.snapshotSchema(name, sn)
	if err != nil {
		return nil, err
	}
	dir := s.tableDir(name)
	if err := s.writeTableDesc(name, schema); err != nil {
		return nil, err
	}
	entries, err := s.fs.List(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "server: listing %s", dir)
	}
	for _, e := range entries {
		if e[0] == '.' {
			continue // the descriptor, the marker
		}
		if err := vfs.RemoveAll(s.fs, filepath.Join(dir, e)); err != nil {
			return nil, errors.Wrapf(err, "server: removing region %s of %s", e, name)
		}
	}
	if err := vfs.SyncDir(s.fs, dir); err != nil {
		return nil, err
	}
	t := newTable(name, schema, fams)
	t.setState(hbasepb.TableState_DISABLED)
	keep := map[string]bool{}
	for _, rm := range sn.Manifest.GetRegionManifests() {
		hr, err := s.linkSnapshotRegion(t, sn, rm)
		if err != nil {
			return nil, err
		}
		t.regions = append(t.regions, hr)
		keep[string(hr.name)] = true
	}
	var ms []region.Mutation
	for _, ri := range old {
		if n := ri.RegionName(); !keep[string(n)] {
			ms = append(ms, s.metaDeleteRow(n))
		}
	}
	for _, hr := range t.regions {
		ms = append(ms, s.metaRegionPut(hr))
	}
	if err := s.metaBatch(ms); err != nil {
		return nil, err
	}
	return t, nil
}

// cloneSnapshot creates table name from a snapshot, as HBase's
// CloneSnapshotProcedure: the snapshot's descriptor under the new name,
// its regions (same keys and region ids, so new region names) sharing its
// files by hard links, then enabled. Writes to the clone and its
// compactions touch only its own names of the files.
func (s *Server) cloneSnapshot(name TableName, sn *Snapshot) error {
	if err := s.checkNamespace(name.Namespace); err != nil {
		return err
	}
	schema, fams, err := s.snapshotSchema(name, sn)
	if err != nil {
		return err
	}
	dir := s.tableDir(name)
	// A directory hbase:meta does not name is a crashed create's or
	// clone's: ours to reuse.
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		return errors.Wrapf(err, "server: clearing %s", dir)
	}
	if err := vfs.MkdirAllSync(s.fs, dir, 0o755); err != nil {
		return errors.Wrapf(err, "server: creating %s", dir)
	}
	if err := s.writeTableDesc(name, schema); err != nil {
		return err
	}
	t := newTable(name, schema, fams)
	t.setState(hbasepb.TableState_ENABLING)
	for _, rm := range sn.Manifest.GetRegionManifests() {
		hr, err := s.linkSnapshotRegion(t, sn, rm)
		if err != nil {
			return err
		}
		t.regions = append(t.regions, hr)
		s.lastRegID = max(s.lastRegID, hr.info.RegionID)
	}
	// The files are in place before hbase:meta names the table, in one
	// batch: a crash leaves no table (its directory is removed at start)
	// or one that the start finishes enabling.
	ms := []region.Mutation{s.metaTableStatePut(name, hbasepb.TableState_ENABLING)}
	for _, hr := range t.regions {
		ms = append(ms, s.metaRegionPut(hr))
	}
	if err := s.metaBatch(ms); err != nil {
		return err
	}
	s.mu.Lock()
	s.addTableLocked(t)
	s.mu.Unlock()
	if err := s.openRegions(t); err != nil {
		return err
	}
	if err := s.setTableState(t, hbasepb.TableState_ENABLED); err != nil {
		return err
	}
	s.log.Info("cloned snapshot", "snapshot", sn.Description.GetName(), "table", name.String(), "regions", len(t.regions))
	return nil
}

// snapshotSchema is the snapshot's table descriptor under the name of the
// table it goes to, and its families.
func (s *Server) snapshotSchema(name TableName, sn *Snapshot) (*hbasepb.TableSchema, []region.FamilyOptions, error) {
	schema := proto.Clone(sn.Manifest.GetTableSchema()).(*hbasepb.TableSchema)
	schema.TableName = name.PB()
	fams, err := tableFamilies(schema)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "server: the descriptor in snapshot %s", sn.Description.GetName())
	}
	return schema, fams, nil
}

func (s *Server) writeTableDesc(name TableName, schema *hbasepb.TableSchema) error {
	b, err := proto.Marshal(schema)
	if err != nil {
		return errors.Wrap(err, "server: encoding table descriptor")
	}
	return s.writeFileAtomic(filepath.Join(s.tableDir(name), tableDescName), b)
}

// linkSnapshotRegion makes the directory of one of the snapshot's regions
// in table t (the same keys and region id, t's name) holding links to the
// snapshot's files, every directory synced.
func (s *Server) linkSnapshotRegion(t *table, sn *Snapshot, rm *hbasepb.SnapshotRegionManifest) (*hostedRegion, error) {
	ri, err := regionInfoFromPB(rm.GetRegionInfo())
	if err != nil {
		return nil, err
	}
	ri.Table = t.name
	ri.Offline = false
	hr := &hostedRegion{info: ri, name: ri.RegionName(), table: t, dir: filepath.Join(s.tableDir(t.name), ri.EncodedName())}
	if err := vfs.MkdirAllSync(s.fs, hr.dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "server: creating region %s of %s", ri.EncodedName(), t.name)
	}
	for _, ff := range rm.GetFamilyFiles() {
		fdir := filepath.Join(hr.dir, string(ff.GetFamilyName()))
		if err := vfs.MkdirAllSync(s.fs, fdir, 0o755); err != nil {
			return nil, err
		}
		for _, f := range ff.GetStoreFiles() {
			src := sn.FilePath(rm, ff.GetFamilyName(), f.GetName())
			if err := s.fs.Link(src, filepath.Join(fdir, f.GetName())); err != nil {
				return nil, errors.Wrapf(err, "server: linking %s of snapshot %s", f.GetName(), sn.Description.GetName())
			}
		}
		if err := vfs.SyncDir(s.fs, fdir); err != nil {
			return nil, err
		}
	}
	return hr, errors.Wrapf(vfs.SyncDir(s.fs, hr.dir), "server: region %s of %s", ri.EncodedName(), t.name)
}

// finishRestore finishes, at start, a restore of table mt that a crash
// interrupted (its marker is there): it redoes it from the snapshot and
// returns what hbase:meta now holds of the table.
func (s *Server) finishRestore(mt *metaTable) error {
	marker := filepath.Join(s.tableDir(mt.name), restoreMarkerName)
	b, err := vfs.ReadFile(s.fs, marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errors.Wrapf(err, "server: reading %s", marker)
	}
	name := string(bytes.TrimSpace(b))
	sn, err := ReadSnapshot(s.fs, s.cfg.DataDir, name)
	if err != nil {
		return errors.Wrapf(err, "server: finishing the restore of %s from snapshot %s (remove %s to open the table as it is)",
			mt.name, name, marker)
	}
	s.log.Info("finishing a restore interrupted by a crash", "table", mt.name.String(), "snapshot", name)
	t, err := s.applyRestore(mt.name, sn, mt.regions)
	if err != nil {
		return errors.Wrapf(err, "server: finishing the restore of %s from snapshot %s", mt.name, name)
	}
	mt.state = hbasepb.TableState_DISABLED
	mt.regions = mt.regions[:0]
	for _, hr := range t.regions {
		mt.regions = append(mt.regions, hr.info)
	}
	return s.removeRestoreMarker(mt.name)
}

// removeOrphanTableDirs removes, at start, table directories that
// hbase:meta does not name: what a create or clone left when a crash came
// before hbase:meta named the table, or a delete after it stopped naming
// it.
func (s *Server) removeOrphanTableDirs() error {
	data := filepath.Join(s.cfg.DataDir, "data")
	nss, err := s.fs.List(data)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, "server: listing tables")
	}
	for _, ns := range nss {
		names, err := s.fs.List(filepath.Join(data, ns))
		if err != nil {
			continue // not a directory
		}
		for _, q := range names {
			tn := TableName{ns, q}
			if tn.validate() != nil || s.tableByName(tn) != nil {
				continue
			}
			dir := s.tableDir(tn)
			s.log.Info("removing the directory of a table hbase:meta does not list", "dir", dir)
			if err := vfs.RemoveAll(s.fs, dir); err != nil {
				return errors.Wrapf(err, "server: removing %s", dir)
			}
		}
		if err := vfs.SyncDir(s.fs, filepath.Join(data, ns)); err != nil {
			return err
		}
	}
	return nil
}

// removeTableLocked drops t and its regions from the server's maps.
//
// REQUIRES: s.mu is held.
func (s *Server) removeTableLocked(t *table) {
	delete(s.tables, t.name.String())
	for _, hr := range t.regions {
		delete(s.regions, string(hr.name))
		delete(s.encoded, hr.info.EncodedName())
	}
}
