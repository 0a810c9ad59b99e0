package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/wal"
	"google.golang.org/protobuf/proto"
)

// Region splits and merges, as HBase's SplitTableRegionProcedure and
// MergeTableRegionsProcedure run them, on one server:
//
//  1. Under Server.ddl, the region (or regions) is checked and closed:
//     from then on requests for it get NotServingRegionException, and its
//     open scanners too; Close flushes every write it acknowledged into its
//     store files.
//  2. The new regions' directories are written: reference files to the
//     parent's store files (region.CreateReferences), so nothing is copied.
//  3. One atomic write to hbase:meta (a Batch: one WAL entry, FSYNC_WAL)
//     commits: for a split, the parent's row becomes offline and split
//     with info:splitA and info:splitB naming its daughters, and the
//     daughters' rows are added; for a merge, the parents' rows are deleted
//     and the merged region's row added with info:merge0000, ... naming
//     them. Before it, a crash leaves the parent serving (the new
//     directories, listed in no meta row, are removed when the server
//     next starts); after it, the new regions.
//  4. The new regions open and are recorded as served here.
//
// The daughters compact their references away in the background; the
// janitor (HBase's CatalogJanitor) then removes the parent's directory and
// meta row (for a merge, the parents' directories and the merge columns).

// Meta columns of splits and merges (HBase's HConstants).
var (
	colSplitA = []byte("splitA")
	colSplitB = []byte("splitB")
)

// mergeQualifierPrefix starts the merged region's columns naming its
// parents: merge0000, merge0001, ... (HBase 2.3 on; older HBase wrote
// mergeA and mergeB, which are read too).
const mergeQualifierPrefix = "merge"

func mergeQualifier(i int) []byte { return []byte(fmt.Sprintf("%s%04d", mergeQualifierPrefix, i)) }

// Table attributes of splits and merges (TableDescriptorBuilder).
const (
	attrMaxFileSize  = "MAX_FILESIZE"
	attrSplitPolicy  = "SPLIT_POLICY"
	attrSplitEnabled = "SPLIT_ENABLED"
	attrMergeEnabled = "MERGE_ENABLED"
)

// DefaultMaxFileSize is hbase.hregion.max.filesize's default, HBase's.
const DefaultMaxFileSize = 10 << 30

// splitPolicy is a RegionSplitPolicy: when a region splits by itself.
type splitPolicy int

const (
	// SteppingSplitPolicy (HBase 2's default): a store past 2 × the
	// flush size splits the table's only region on the server, past
	// the max file size any region.
	policyStepping splitPolicy = iota
	// ConstantSizeRegionSplitPolicy: past the max file size.
	policyConstant
	// IncreasingToUpperBoundRegionSplitPolicy: past min(max file size,
	// 2 × flush size × regions³), regions being the table's on the server.
	policyIncreasing
	// DisabledRegionSplitPolicy: never by itself.
	policyDisabled
)

var splitPolicyNames = map[string]splitPolicy{
	"SteppingSplitPolicy":                     policyStepping,
	"ConstantSizeRegionSplitPolicy":           policyConstant,
	"IncreasingToUpperBoundRegionSplitPolicy": policyIncreasing,
	"DisabledRegionSplitPolicy":               policyDisabled,
}

// DefaultSplitPolicy is hbase.regionserver.region.split.policy's default.
const DefaultSplitPolicy = "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy"

// parseSplitPolicy maps a RegionSplitPolicy class name, with or without its
// package, to a policy. HBase's other policies (KeyPrefix...,
// DelimitedKeyPrefix..., BusyRegion...) are refused.
func parseSplitPolicy(name string) (splitPolicy, error) {
	short := strings.TrimPrefix(strings.TrimSpace(name), "org.apache.hadoop.hbase.regionserver.")
	if p, ok := splitPolicyNames[short]; ok {
		return p, nil
	}
	var known []string
	for n := range splitPolicyNames {
		known = append(known, n)
	}
	sort.Strings(known)
	return 0, errors.Newf("unknown region split policy %q; supported: %s", name, strings.Join(known, ", "))
}

// tableAttr returns a table attribute's value, "" if unset.
func tableAttr(schema *hbasepb.TableSchema, key string) string {
	for _, a := range schema.GetAttributes() {
		if strings.EqualFold(string(a.GetFirst()), key) {
			return string(a.GetSecond())
		}
	}
	return ""
}

// checkSplitAttributes refuses the split and merge table attributes HBase
// would refuse, so that a bad one fails CreateTable or ModifyTable rather
// than every split later.
func checkSplitAttributes(schema *hbasepb.TableSchema) error {
	if v := tableAttr(schema, attrMaxFileSize); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			return ipc.Errorf(ipc.ClassDoNotRetryIOException, "%s=%q: not a positive size in bytes", attrMaxFileSize, v)
		}
	}
	if v := tableAttr(schema, attrSplitPolicy); v != "" {
		if _, err := parseSplitPolicy(v); err != nil {
			return ipc.Errorf(ipc.ClassDoNotRetryIOException, "%s: %v", attrSplitPolicy, err)
		}
	}
	for _, k := range []string{attrSplitEnabled, attrMergeEnabled} {
		if v := tableAttr(schema, k); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return ipc.Errorf(ipc.ClassDoNotRetryIOException, "%s=%q: not true or false", k, v)
			}
		}
	}
	return nil
}

// tableSwitch reports whether a table allows splits (or merges): its
// SPLIT_ENABLED (MERGE_ENABLED) attribute, true unless set false.
func tableSwitch(t *table, key string) bool {
	v, err := strconv.ParseBool(tableAttr(t.schema(), key))
	return err != nil || v
}

// splitParent is a split region whose files its daughters may still read.
type splitParent struct {
	info      RegionInfo
	daughters [2]RegionInfo
}

// mergedRegion is a merged region whose parents' files it may still read.
type mergedRegion struct {
	info    RegionInfo
	parents []RegionInfo
}

// regionDir is a region's directory.
func (s *Server) regionDir(ri *RegionInfo) string {
	return filepath.Join(s.tableDir(ri.Table), ri.EncodedName())
}

// switchesFile holds the split and merge switches across restarts (HBase
// keeps them in ZooKeeper).
const switchesFile = "splitormerge.json"

type switchState struct {
	Split bool `json:"split"`
	Merge bool `json:"merge"`
}

func (s *Server) loadSwitches() error {
	s.splitOn.Store(true)
	s.mergeOn.Store(true)
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.cfg.DataDir, switchesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, "server: reading the split and merge switches")
	}
	var st switchState
	if err := json.Unmarshal(b, &st); err != nil {
		return errors.Wrapf(err, "server: %s", filepath.Join(s.cfg.DataDir, switchesFile))
	}
	s.splitOn.Store(st.Split)
	s.mergeOn.Store(st.Merge)
	return nil
}

// setSwitches sets the switches types name (SPLIT, MERGE) to on and
// returns their previous values.
func (s *Server) setSwitches(on bool, types []hbasepb.MasterSwitchType) ([]bool, error) {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	st := switchState{Split: s.splitOn.Load(), Merge: s.mergeOn.Load()}
	var prev []bool
	for _, t := range types {
		sw := &st.Split
		if t == hbasepb.MasterSwitchType_MERGE {
			sw = &st.Merge
		}
		prev = append(prev, *sw)
		*sw = on
	}
	// Durable first: a switch that answers off stays off after a crash.
	b, _ := json.Marshal(st)
	if err := s.writeFileAtomic(filepath.Join(s.cfg.DataDir, switchesFile), b); err != nil {
		return nil, err
	}
	s.splitOn.Store(st.Split)
	s.mergeOn.Store(st.Merge)
	return prev, nil
}

// liveRegion finds the region ri names among the table's serving
// regions, as the master's region states: UnknownRegionException if it
// is not a region of the table now (split or merged away, say).
func (s *Server) liveRegion(ri *RegionInfo) (*hostedRegion, error) {
	s.mu.RLock()
	hr := s.regions[string(ri.RegionName())]
	s.mu.RUnlock()
	if hr == nil {
		return nil, ipc.Errorf(ipc.ClassUnknownRegionException, "No RegionState found for %s", ri.EncodedName())
	}
	return hr, nil
}

// openForSplit returns hr's open region, or the exception HBase's
// checkOnline throws.
func openForSplit(hr *hostedRegion) (*region.Region, error) {
	r := hr.r.Load()
	if r == nil || hr.table.getState() != hbasepb.TableState_ENABLED {
		state := "CLOSED"
		if hr.failedOpen() != "" {
			state = "FAILED_OPEN"
		}
		return nil, ipc.Errorf(ipc.ClassDoNotRetryRegionException, "%s is not OPEN; state=%s", hr.info.EncodedName(), state)
	}
	return r, nil
}

// shortName is HBase's RegionInfo.getShortNameToLog: the encoded name.
func (ri *RegionInfo) shortName() string { return ri.EncodedName() }

// splitRegion splits hr at splitRow, or, if splitRow is empty, at the row
// region.SplitPoint picks (HBase's best split row), as
// SplitTableRegionProcedure: see the comment at the top of this file. The
// checks that refuse a split come first, with HBase's exceptions and
// messages; a failure after the parent closed reopens it.
func (s *Server) splitRegion(hr *hostedRegion, splitRow []byte) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if s.closed.Load() {
		return ipc.Errorf(ipc.ClassRegionServerStoppedException, "server %s is stopping", s.ServerName())
	}
	s.mu.RLock()
	live := s.regions[string(hr.name)] == hr
	s.mu.RUnlock()
	if !live {
		return ipc.Errorf(ipc.ClassUnknownRegionException, "No RegionState found for %s", hr.info.EncodedName())
	}
	t := hr.table
	if t.name.System() {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "%s NOT splittable: %s is a system table", hr.info.shortName(), t.name)
	}
	if !s.splitOn.Load() {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Split region %s failed due to split switch off", hr.name)
	}
	if !tableSwitch(t, attrSplitEnabled) {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Split region %s failed as region split is disabled for the table", hr.name)
	}
	r, err := openForSplit(hr)
	if err != nil {
		return err
	}
	if r.HasReferences() {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException,
			"%s NOT splittable: it still reads its parent's files by reference (compact it first)", hr.info.shortName())
	}
	if len(splitRow) == 0 {
		if splitRow, err = bestSplitRow(r); err != nil {
			return mapError(err, hr)
		}
		if len(splitRow) == 0 {
			return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Region not splittable because bestSplitPoint = null, "+
				"maybe table is too small for auto split. For force split, try specifying split row")
		}
	}
	if bytes.Equal(splitRow, hr.info.StartKey) {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Split row is equal to startkey: %s", splitRow)
	}
	if !hr.info.ContainsRow(splitRow) {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Split row is not inside region key range splitKey:%s region: %s",
			splitRow, hr.name)
	}
	if err := checkRow(splitRow); err != nil {
		return err
	}
	rid := s.newRegionID(hr.info.RegionID)
	a := RegionInfo{Table: t.name, StartKey: hr.info.StartKey, EndKey: splitRow, RegionID: rid}
	b := RegionInfo{Table: t.name, StartKey: splitRow, EndKey: hr.info.EndKey, RegionID: rid}
	start := time.Now()

	if err := s.closeForChange(hr, r); err != nil {
		return err
	}
	dirs := []string{s.regionDir(&a), s.regionDir(&b)}
	fail := func(err error) error {
		return s.rollBack(err, dirs, hr)
	}
	for i, d := range dirs {
		if err := vfs.RemoveAll(s.fs, d); err != nil { // a failed split's leftovers
			return fail(errors.Wrapf(err, "server: clearing %s", d))
		}
		ref := region.Reference{Parent: hr.dir, SplitRow: splitRow, Top: i == 1}
		if err := region.CreateReferences(s.fs, d, []region.Reference{ref}); err != nil {
			return fail(errors.Wrapf(err, "server: writing daughter %s of %s", filepath.Base(d), hr.name))
		}
	}
	if err := s.syncTableDir(t.name); err != nil {
		return fail(err)
	}

	parent := hr.info
	parent.Offline, parent.Split = true, true
	pput := region.NewPut(hr.name).
		Add(famInfo, colRegionInfo, marshalPBUF(parent.PB())).
		Add(famInfo, colSplitA, marshalPBUF(a.PB())).
		Add(famInfo, colSplitB, marshalPBUF(b.PB())).
		Add(famInfo, colState, []byte("SPLIT"))
	muts := []region.Mutation{pput, s.newRegionPut(&a), s.newRegionPut(&b)}
	if err := s.metaBatch(muts); err != nil {
		return fail(err)
	}
	// Committed: the daughters are the table's regions from here on, even
	// if they fail to open now (a restart opens them).
	s.parents[string(hr.name)] = &splitParent{info: parent, daughters: [2]RegionInfo{a, b}}
	s.noteParents()
	err = s.replaceRegions(t, []*hostedRegion{hr}, []RegionInfo{a, b})
	s.log.Info("split region", "table", t.name.String(), "parent", hr.info.EncodedName(), "splitRow", fmt.Sprintf("%q", splitRow),
		"daughterA", a.EncodedName(), "daughterB", b.EncodedName(), "took", time.Since(start), "err", err)
	s.wakeJanitor()
	return err
}

// bestSplitRow is the row a split without one takes: the region's split
// point, after a flush if its data is all in the memstores (as HBase's
// RSRpcServices.getRegionInfo does for the best split row).
func bestSplitRow(r *region.Region) ([]byte, error) {
	row, err := r.SplitPoint()
	if err != nil || len(row) > 0 || r.Stats().MemStoreSize == 0 {
		return row, err
	}
	if err := r.Flush(); err != nil {
		return nil, err
	}
	return r.SplitPoint()
}

// newRegionID returns a region id for regions made from ones whose largest
// id is parentID: the time, but above parentID (HBase's
// getDaughterRegionIdTimestamp: a daughter sorts after its parent in
// hbase:meta), and above every id given before.
func (s *Server) newRegionID(parentID uint64) uint64 {
	id := uint64(time.Now().UnixMilli())
	id = max(id, parentID+1, s.lastRegID+1)
	s.lastRegID = id
	return id
}

// newRegionPut is the meta row of a region a split or merge made: its
// info, CLOSED until it opens (as HBase's MetaTableAccessor writes them).
func (s *Server) newRegionPut(ri *RegionInfo) *region.Put {
	return region.NewPut(ri.RegionName()).
		Add(famInfo, colRegionInfo, marshalPBUF(ri.PB())).
		Add(famInfo, colState, []byte("CLOSED"))
}

// syncTableDir makes the new region directories in a table's directory
// durable.
func (s *Server) syncTableDir(t TableName) error {
	return errors.Wrapf(vfs.SyncDir(s.fs, s.tableDir(t)), "server: syncing %s", s.tableDir(t))
}

// closeForChange takes a region out of service for a split or a merge: it
// is flushed, then no request reaches it any more (they get
// NotServingRegionException), its scanners are closed, and it is closed,
// which flushes what came in meanwhile. If Close fails the region is
// reopened.
//
// REQUIRES: s.ddl is held.
func (s *Server) closeForChange(hr *hostedRegion, r *region.Region) error {
	// Flush while the region still serves, as HBase's close pre-flushes:
	// the close that follows has little left to write, so the region is
	// out of service only briefly.
	if err := r.Flush(); err != nil {
		return mapError(err, hr)
	}
	if !hr.r.CompareAndSwap(r, nil) {
		return ipc.Errorf(ipc.ClassDoNotRetryRegionException, "%s is not OPEN; state=CLOSED", hr.info.EncodedName())
	}
	s.scanners.closeRegion(hr)
	if err := r.Close(); err != nil {
		return s.rollBack(errors.Wrapf(err, "server: closing %s", hr.name), nil, hr)
	}
	return nil
}

// rollBack undoes a split or merge that failed before its meta write:
// it removes the directories written and reopens the closed regions. It
// returns cause, with whatever went wrong undoing.
//
// REQUIRES: s.ddl is held.
func (s *Server) rollBack(cause error, dirs []string, closed ...*hostedRegion) error {
	for _, d := range dirs {
		if err := vfs.RemoveAll(s.fs, d); err != nil {
			// Left for the next start, which removes what meta does not list.
			s.log.Warn("removing a failed split's or merge's directory", "dir", d, "err", err)
		}
	}
	for _, hr := range closed {
		if hr.r.Load() != nil {
			continue
		}
		// One that does not reopen is FAILED_OPEN (see openRegion).
		if err := s.openRegion(hr); err != nil {
			cause = errors.CombineErrors(cause, errors.Wrapf(err, "server: reopening %s after a failed split or merge", hr.name))
		}
	}
	return cause
}

// replaceRegions puts the regions infos in place of olds in t (in memory;
// meta has them already), opens them and records them as served here.
//
// REQUIRES: s.ddl is held.
func (s *Server) replaceRegions(t *table, olds []*hostedRegion, infos []RegionInfo) error {
	var news []*hostedRegion
	for _, ri := range infos {
		news = append(news, &hostedRegion{info: ri, name: ri.RegionName(), table: t, dir: s.regionDir(&ri)})
	}
	s.mu.Lock()
	var regions []*hostedRegion
	for _, hr := range t.regions {
		if !containsRegion(olds, hr) {
			regions = append(regions, hr)
		}
	}
	regions = append(regions, news...)
	sort.Slice(regions, func(i, j int) bool { return bytes.Compare(regions[i].info.StartKey, regions[j].info.StartKey) < 0 })
	t.regions = regions
	for _, hr := range olds {
		delete(s.regions, string(hr.name))
		delete(s.encoded, hr.info.EncodedName())
	}
	for _, hr := range news {
		s.regions[string(hr.name)] = hr
		s.encoded[hr.info.EncodedName()] = hr
	}
	s.mu.Unlock()
	var first error
	for _, hr := range news {
		// One that does not open is FAILED_OPEN (see openRegion), and the
		// caller hears why.
		first = errors.CombineErrors(first, s.openRegion(hr))
	}
	return first
}

func containsRegion(hrs []*hostedRegion, hr *hostedRegion) bool {
	for _, h := range hrs {
		if h == hr {
			return true
		}
	}
	return false
}

// mergeRegions merges regions of one table into one, as
// MergeTableRegionsProcedure: see the comment at the top of this file.
// Each region must be adjacent to the one before it in the request, unless
// forcible; RegionKV keeps every table's regions tiling its key space, so
// even a forcible merge must take every region between the first and the
// last (HBase would leave the merged region overlapping those left out).
func (s *Server) mergeRegions(specs []*hbasepb.RegionSpecifier, forcible bool) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if s.closed.Load() {
		return ipc.Errorf(ipc.ClassRegionServerStoppedException, "server %s is stopping", s.ServerName())
	}
	var hrs []*hostedRegion
	s.mu.RLock()
	for _, spec := range specs {
		var hr *hostedRegion
		switch spec.GetType() {
		case hbasepb.RegionSpecifier_ENCODED_REGION_NAME:
			hr = s.encoded[string(spec.GetValue())]
		case hbasepb.RegionSpecifier_REGION_NAME:
			hr = s.regions[string(spec.GetValue())]
		}
		if hr == nil {
			s.mu.RUnlock()
			return ipc.Errorf(ipc.ClassUnknownRegionException, "%s", spec.GetValue())
		}
		hrs = append(hrs, hr)
	}
	s.mu.RUnlock()
	seen := map[*hostedRegion]bool{}
	for _, hr := range hrs {
		seen[hr] = true
	}
	if len(seen) != len(hrs) {
		return ipc.Errorf(ipc.ClassMergeRegionException, "Duplicate regions specified; cannot merge a region to itself. "+
			"Passed in %d but only %d unique.", len(hrs), len(seen))
	}
	if len(hrs) < 2 {
		return ipc.Errorf(ipc.ClassMergeRegionException, "Need two Regions at least to run a Merge")
	}
	t := hrs[0].table
	for i, hr := range hrs {
		if hr.table != t {
			return ipc.Errorf(ipc.ClassMergeRegionException, "Can't merge regions from different tables: %s, %s", hrs[0].name, hr.name)
		}
		if i > 0 && !forcible && !adjacent(&hrs[i-1].info, &hr.info) {
			return ipc.Errorf(ipc.ClassMergeRegionException,
				"Unable to merge non-adjacent or non-overlapping regions '%s', '%s' when force=false",
				hrs[i-1].info.shortName(), hr.info.shortName())
		}
	}
	if t.name.System() {
		return ipc.Errorf(ipc.ClassMergeRegionException, "cannot merge regions of system table %s", t.name)
	}
	if !s.mergeOn.Load() {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Merge of %s failed because merge switch is off", regionNames(hrs))
	}
	if !tableSwitch(t, attrMergeEnabled) {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Merge of %s failed as region merge is disabled for the table", regionNames(hrs))
	}
	sorted := append([]*hostedRegion(nil), hrs...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].info.StartKey, sorted[j].info.StartKey) < 0 })
	for i := 1; i < len(sorted); i++ {
		if !adjacent(&sorted[i-1].info, &sorted[i].info) {
			return ipc.Errorf(ipc.ClassMergeRegionException,
				"Unable to merge regions '%s' and '%s': the regions between them would overlap the merged region "+
					"(RegionKV keeps a table's regions tiling its rows; name every region between)",
				sorted[i-1].info.shortName(), sorted[i].info.shortName())
		}
	}
	var rs []*region.Region
	var maxID uint64
	for _, hr := range sorted {
		if _, pending := s.merges[string(hr.name)]; pending {
			return ipc.Errorf(ipc.ClassMergeRegionException, "Skip merging %s, because a parent, %s, has a merge qualifier "+
				"(it was recently merged but still has outstanding references to its parents that must be cleared "+
				"before it can participate in merge -- major compact it to hurry clearing of its references)",
				regionNames(hrs), hr.info.shortName())
		}
		r, err := openForSplit(hr)
		if err != nil {
			return ipc.Errorf(ipc.ClassMergeRegionException, "Unable to merge regions that are NOT online: %s", hr.name)
		}
		if r.HasReferences() {
			return ipc.Errorf(ipc.ClassMergeRegionException, "Skip merging %s, because a parent, %s, is not mergeable",
				regionNames(hrs), hr.info.shortName())
		}
		rs = append(rs, r)
		maxID = max(maxID, hr.info.RegionID)
	}
	merged := RegionInfo{Table: t.name, StartKey: sorted[0].info.StartKey, EndKey: sorted[len(sorted)-1].info.EndKey,
		RegionID: s.newRegionID(maxID)}
	start := time.Now()
	var closed []*hostedRegion
	for i, hr := range sorted {
		if err := s.closeForChange(hr, rs[i]); err != nil {
			return s.rollBack(err, nil, closed...)
		}
		closed = append(closed, hr)
	}
	dir := s.regionDir(&merged)
	fail := func(err error) error { return s.rollBack(err, []string{dir}, closed...) }
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		return fail(errors.Wrapf(err, "server: clearing %s", dir))
	}
	var refs []region.Reference
	for _, hr := range sorted {
		refs = append(refs, region.Reference{Parent: hr.dir, SplitRow: hr.info.StartKey, Top: true})
	}
	if err := region.CreateReferences(s.fs, dir, refs); err != nil {
		return fail(errors.Wrapf(err, "server: writing merged region %s", merged.EncodedName()))
	}
	if err := s.syncTableDir(t.name); err != nil {
		return fail(err)
	}
	mput := s.newRegionPut(&merged)
	var parents []RegionInfo
	var muts []region.Mutation
	for i, hr := range sorted {
		mput.Add(famInfo, mergeQualifier(i), marshalPBUF(hr.info.PB()))
		parents = append(parents, hr.info)
		muts = append(muts, s.metaDeleteRow(hr.name))
	}
	muts = append(muts, mput)
	if err := s.metaBatch(muts); err != nil {
		return fail(err)
	}
	s.merges[string(merged.RegionName())] = &mergedRegion{info: merged, parents: parents}
	s.noteParents()
	err := s.replaceRegions(t, sorted, []RegionInfo{merged})
	s.log.Info("merged regions", "table", t.name.String(), "parents", regionNames(sorted), "merged", merged.EncodedName(),
		"took", time.Since(start), "err", err)
	s.wakeJanitor()
	return err
}

// adjacent reports whether b starts where a ends (RegionInfo.isAdjacent,
// either way round).
func adjacent(a, b *RegionInfo) bool {
	return len(a.EndKey) > 0 && bytes.Equal(a.EndKey, b.StartKey) || len(b.EndKey) > 0 && bytes.Equal(b.EndKey, a.StartKey)
}

func regionNames(hrs []*hostedRegion) string {
	var names []string
	for _, hr := range hrs {
		names = append(names, hr.info.EncodedName())
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// compactClosedReferences compacts away the reference files of a region
// that is not open (its table is disabled), which snapshots cannot link: it
// opens the region, compacts the stores that read references, and closes
// it again.
//
// REQUIRES: s.ddl is held, and hr is closed.
func (s *Server) compactClosedReferences(hr *hostedRegion) error {
	has, err := region.HasReferenceFiles(s.fs, hr.dir)
	if err != nil || !has {
		return err
	}
	o := s.regionOptions(hr)
	o.DisableAutoCompaction, o.StoreFilesChanged = true, nil
	r, err := region.Open(hr.dir, o)
	if err != nil {
		return errors.Wrapf(err, "server: opening %s to compact its references", hr.name)
	}
	err = r.CompactReferences()
	return errors.CombineErrors(err, r.Close())
}

// janitorInterval is how often the janitor runs without being woken
// (hbase.catalogjanitor.interval's default).
const janitorInterval = 5 * time.Minute

// wakeJanitor asks the background worker to run the janitor soon.
func (s *Server) wakeJanitor() {
	select {
	case s.janitorReq <- struct{}{}:
	default:
	}
}

// runJanitor is HBase's CatalogJanitor: it removes the directory and the
// meta row of every split parent neither of whose daughters references its
// files any more, and the parents' directories and the merge columns of
// every merged region that references none of its parents' files. Files
// go first, rows after, so that a crash in between leaves a row the next
// run finishes. It returns how many parents it cleared.
func (s *Server) runJanitor() (int, error) {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	cleared := 0
	var errs error
	live := func(ri *RegionInfo) bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.encoded[ri.EncodedName()] != nil
	}
	for name, p := range s.parents {
		if live(&p.info) {
			// A region again (a snapshot taken before the split was
			// restored): its files are its own.
			delete(s.parents, name)
			s.noteParents()
			continue
		}
		refs := false
		for i := range p.daughters {
			if !live(&p.daughters[i]) {
				continue // merged away, or the table restored: it reads nothing
			}
			ok, err := region.ReferencesTo(s.fs, s.regionDir(&p.daughters[i]), p.info.EncodedName())
			if err != nil {
				errs = errors.CombineErrors(errs, err)
				refs = true
				break
			}
			refs = refs || ok
		}
		if refs {
			continue
		}
		dir := s.regionDir(&p.info)
		if err := vfs.RemoveAll(s.fs, dir); err != nil {
			errs = errors.CombineErrors(errs, errors.Wrapf(err, "server: removing split parent %s", dir))
			continue
		}
		if err := s.metaBatch([]region.Mutation{s.metaDeleteRow([]byte(name))}); err != nil {
			errs = errors.CombineErrors(errs, err)
			continue
		}
		delete(s.parents, name)
		s.noteParents()
		cleared++
		s.log.Info("janitor: removed a split parent no daughter references", "region", p.info.EncodedName(), "table", p.info.Table.String())
	}
	for name, m := range s.merges {
		mergedLive := live(&m.info)
		refs := false
		for i := range m.parents {
			if !mergedLive {
				break
			}
			ok, err := region.ReferencesTo(s.fs, s.regionDir(&m.info), m.parents[i].EncodedName())
			if err != nil {
				errs = errors.CombineErrors(errs, err)
				refs = true
				break
			}
			refs = refs || ok
		}
		if refs {
			continue
		}
		failed := false
		for i := range m.parents {
			if live(&m.parents[i]) {
				continue // a region again (a restore): its files are its own
			}
			if err := vfs.RemoveAll(s.fs, s.regionDir(&m.parents[i])); err != nil {
				errs = errors.CombineErrors(errs, errors.Wrapf(err, "server: removing merge parent %s", m.parents[i].EncodedName()))
				failed = true
			}
		}
		if failed {
			continue
		}
		if mergedLive {
			del := &region.Delete{Row: []byte(name), Durability: wal.FSyncWAL}
			ts := time.Now().UnixMilli()
			for i := range m.parents {
				del.AddColumns(famInfo, mergeQualifier(i), ts)
			}
			if err := s.metaBatch([]region.Mutation{del}); err != nil {
				errs = errors.CombineErrors(errs, err)
				continue
			}
		}
		delete(s.merges, name)
		s.noteParents()
		cleared += len(m.parents)
		s.log.Info("janitor: removed the parents of a merged region", "region", m.info.EncodedName(), "table", m.info.Table.String(),
			"parents", len(m.parents))
	}
	return cleared, errs
}

// background runs the janitor and the automatic splits until the server
// stops.
func (s *Server) background() {
	defer s.wg.Done()
	tick := time.NewTicker(janitorInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopBG:
			return
		case <-tick.C:
		case <-s.janitorReq:
		case hr := <-s.splitReq:
			if !s.shouldSplit(hr) {
				continue
			}
			if err := s.splitRegion(hr, nil); err != nil {
				if e, ok := ipc.AsException(err); !ok || !e.DoNotRetry() {
					s.log.Warn("automatic split failed", "region", hr.info.EncodedName(), "err", err)
				} else {
					s.log.Debug("automatic split not done", "region", hr.info.EncodedName(), "err", err)
				}
			}
			continue
		}
		if _, err := s.runJanitor(); err != nil {
			s.log.Warn("janitor", "err", err)
		}
	}
}

// storeFilesChanged is a region's Options.StoreFilesChanged: after a flush
// or a compaction, the region may need splitting, or have dropped the last
// references to its parents. It never blocks.
func (s *Server) storeFilesChanged(hr *hostedRegion) {
	select {
	case s.splitReq <- hr:
	default: // the worker is behind; the next flush asks again
	}
	if s.pendingParents.Load() > 0 {
		s.wakeJanitor()
	}
}

// noteParents records how many parents wait for the janitor.
//
// REQUIRES: s.ddl is held (or the server is starting).
func (s *Server) noteParents() { s.pendingParents.Store(int64(len(s.parents) + len(s.merges))) }

// shouldSplit reports whether hr's split policy says it should split now
// (HBase's RegionSplitPolicy.shouldSplit): a store past the size the
// policy allows, no store with references, splits allowed.
func (s *Server) shouldSplit(hr *hostedRegion) bool {
	t := hr.table
	if t.name.System() || !s.splitOn.Load() || !tableSwitch(t, attrSplitEnabled) || t.getState() != hbasepb.TableState_ENABLED {
		return false
	}
	r := hr.r.Load()
	if r == nil || r.HasReferences() {
		return false
	}
	policy := s.splitPolicy
	if v := tableAttr(t.schema(), attrSplitPolicy); v != "" {
		if p, err := parseSplitPolicy(v); err == nil {
			policy = p
		}
	}
	maxSize := s.cfg.MaxFileSize
	if v, err := strconv.ParseInt(tableAttr(t.schema(), attrMaxFileSize), 10, 64); err == nil && v > 0 {
		maxSize = v
	}
	s.mu.RLock()
	count := len(t.regions)
	s.mu.RUnlock()
	initial := 2 * s.regionFlushSize()
	limit := maxSize
	switch policy {
	case policyDisabled:
		return false
	case policyStepping:
		if count == 1 {
			limit = initial
		}
	case policyIncreasing:
		if c := float64(count); count > 0 && float64(initial)*c*c*c < float64(maxSize) {
			limit = initial * int64(count) * int64(count) * int64(count)
		}
	}
	for _, size := range r.StoreSizes() {
		if size > limit {
			return true
		}
	}
	return false
}

// regionFlushSize is the flush size of the user regions.
func (s *Server) regionFlushSize() int64 {
	if n := s.cfg.Region.FlushSize; n > 0 {
		return n
	}
	return region.DefaultFlushSize
}

// handleSplitRegion is MasterService.SplitRegion (HBase 2's
// SplitTableRegionRequest; Admin.split and splitRegion, with or without a
// split row). As HBase's master, the checks that refuse a split answer the
// call; the split runs before the answer, and getProcedureResult reports
// how it ended.
func (s *Server) handleSplitRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.SplitTableRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	ri, err := regionInfoFromPB(req.GetRegionInfo())
	if err != nil {
		return ipc.Reply{}, err
	}
	hr, err := s.liveRegion(&ri)
	if err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.splitRegion(hr, req.GetSplitRow()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.SplitTableRegionResponse{ProcId: proto.Uint64(id)}}, nil
}

// handleMergeTableRegions is MasterService.MergeTableRegions
// (Admin.mergeRegions: regions by encoded name, forcible).
func (s *Server) handleMergeTableRegions(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.MergeTableRegionsRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.mergeRegions(req.GetRegion(), req.GetForcible()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.MergeTableRegionsResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleSetSplitOrMergeEnabled(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.SetSplitOrMergeEnabledRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	prev, err := s.setSwitches(req.GetEnabled(), req.GetSwitchTypes())
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.SetSplitOrMergeEnabledResponse{PrevValue: prev}}, nil
}

func (s *Server) handleIsSplitOrMergeEnabled(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.IsSplitOrMergeEnabledRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	on := s.splitOn.Load()
	if req.GetSwitchType() == hbasepb.MasterSwitchType_MERGE {
		on = s.mergeOn.Load()
	}
	return ipc.Reply{Msg: &hbasepb.IsSplitOrMergeEnabledResponse{Enabled: proto.Bool(on)}}, nil
}
