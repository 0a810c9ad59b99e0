package server

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// liveRegions returns table's regions that serve (not offline), by start
// key, as meta lists them.
func liveRegions(t *testing.T, c *ipc.ClientConn, table string) []*hbasepb.RegionInfo {
	t.Helper()
	var out []*hbasepb.RegionInfo
	for _, ri := range metaRegions(t, c, table) {
		if !ri.GetOffline() {
			out = append(out, ri)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].GetStartKey(), out[j].GetStartKey()) < 0 })
	return out
}

// procOutcome runs an admin call that starts a procedure and returns the
// exception it ended with ("" for none): the call's own, or the
// procedure's, with its message.
func procOutcome(t *testing.T, m *ipc.ClientConn, method string, req proto.Message, resp procResp) (class, msg string) {
	t.Helper()
	if _, err := m.Call(context.Background(), method, req, nil, resp); err != nil {
		e, ok := ipc.AsException(err)
		require.True(t, ok, "%s: %v", method, err)
		return e.Class, e.Message
	}
	pr := &hbasepb.GetProcedureResultResponse{}
	call(t, m, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(resp.GetProcId())}, pr, nil)
	require.Equal(t, hbasepb.GetProcedureResultResponse_FINISHED, pr.GetState(), method)
	if pr.Exception != nil {
		return pr.GetException().GetGenericException().GetClassName(), pr.GetException().GetGenericException().GetMessage()
	}
	return "", ""
}

func splitRPC(t *testing.T, m *ipc.ClientConn, ri *hbasepb.RegionInfo, row string) (string, string) {
	t.Helper()
	req := &hbasepb.SplitTableRegionRequest{RegionInfo: ri}
	if row != "" {
		req.SplitRow = []byte(row)
	}
	return procOutcome(t, m, "SplitRegion", req, &hbasepb.SplitTableRegionResponse{})
}

func mergeRPC(t *testing.T, m *ipc.ClientConn, forcible bool, ris ...*hbasepb.RegionInfo) (string, string) {
	t.Helper()
	req := &hbasepb.MergeTableRegionsRequest{Forcible: proto.Bool(forcible)}
	for _, pb := range ris {
		ri, err := regionInfoFromPB(pb)
		require.NoError(t, err)
		req.Region = append(req.Region, &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(),
			Value: []byte(ri.EncodedName())})
	}
	return procOutcome(t, m, "MergeTableRegions", req, &hbasepb.MergeTableRegionsResponse{})
}

func nameOf(t *testing.T, pb *hbasepb.RegionInfo) []byte {
	ri, err := regionInfoFromPB(pb)
	require.NoError(t, err)
	return ri.RegionName()
}

// writeRows puts rows r0000.. with value v<i> through the regions meta
// lists, one Multi with an action list per region.
func writeRows(t *testing.T, c *ipc.ClientConn, table string, n int) {
	t.Helper()
	regions := liveRegions(t, c, table)
	byRegion := map[string][]int{}
	var order []string
	for i := 0; i < n; i++ {
		name := string(regionFor(regions, fmt.Sprintf("r%04d", i)))
		if byRegion[name] == nil {
			order = append(order, name)
		}
		byRegion[name] = append(byRegion[name], i)
	}
	req := &hbasepb.MultiRequest{}
	var cells []byte
	for _, name := range order {
		ra := &hbasepb.RegionAction{Region: regionSpec([]byte(name))}
		for j, i := range byRegion[name] {
			mp, cb := putCells(fmt.Sprintf("r%04d", i), [2]string{"q", fmt.Sprintf("v%d-%s", i, strings.Repeat("x", 200))})
			ra.Action = append(ra.Action, &hbasepb.Action{Index: proto.Uint32(uint32(j)), Mutation: mp})
			cells = append(cells, cb...) // the cellblock follows the actions' order
		}
		req.RegionAction = append(req.RegionAction, ra)
	}
	resp := &hbasepb.MultiResponse{}
	call(t, c, "Multi", req, resp, cells)
	for _, rar := range resp.GetRegionActionResult() {
		require.Nil(t, rar.Exception)
		for _, r := range rar.GetResultOrException() {
			require.Nil(t, r.Exception, "%v", r.GetException())
		}
	}
}

// scanTable scans every region of table in order (reversed: last region
// first, each reversed) and returns the rows.
func scanTableRows(t *testing.T, c *ipc.ClientConn, table string, reversed bool) []string {
	t.Helper()
	regions := liveRegions(t, c, table)
	if reversed {
		for i, j := 0, len(regions)-1; i < j; i, j = i+1, j-1 {
			regions[i], regions[j] = regions[j], regions[i]
		}
	}
	var rows []string
	for _, ri := range regions {
		resp := &hbasepb.ScanResponse{}
		cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec(nameOf(t, ri)),
			Scan: &hbasepb.Scan{Reversed: proto.Bool(reversed)}, NumberOfRows: proto.Uint32(100000),
			CloseScanner: proto.Bool(true)}, resp, nil)
		for _, r := range scanRows(t, resp, cb) {
			rows = append(rows, r[:strings.IndexByte(r, '=')])
		}
	}
	return rows
}

func wantRows(n int, reversed bool) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("r%04d", i))
	}
	if reversed {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waiting for %s", what)
		time.Sleep(10 * time.Millisecond)
	}
}

// splittable asks the region's server whether it can split now.
func splittable(t *testing.T, a *ipc.ClientConn, ri *hbasepb.RegionInfo) bool {
	resp := &hbasepb.GetRegionInfoResponse{}
	call(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: regionSpec(nameOf(t, ri))}, resp, nil)
	return resp.GetSplittable()
}

// compactAll major-compacts every region of table and waits until none
// reads references.
func compactAll(t *testing.T, c, a *ipc.ClientConn, table string) {
	t.Helper()
	for _, ri := range liveRegions(t, c, table) {
		call(t, a, "CompactRegion", &hbasepb.CompactRegionRequest{Region: regionSpec(nameOf(t, ri)), Major: proto.Bool(true)},
			&hbasepb.CompactRegionResponse{}, nil)
	}
	for _, ri := range liveRegions(t, c, table) {
		waitFor(t, "a compaction of "+string(nameOf(t, ri)), func() bool { return splittable(t, a, ri) })
	}
}

// TestSplitAndMergeRPC drives splits and merges with HBase's raw RPCs:
// split with a split row and without (the server's best row), the checks
// that refuse a split, a stale region name answered
// NotServingRegionException, the janitor removing the parent once the
// daughters compacted, merges of adjacent regions and the refusals of
// others, the switches, and a restart keeping it all.
func TestSplitAndMergeRPC(t *testing.T) {
	dir := t.TempDir()
	mod := func(c *Config) {
		c.SplitPolicy = "DisabledRegionSplitPolicy" // only the splits asked for
		c.Region.DisableAutoCompaction = true       // references stay until compacted here
	}
	s := testServer(t, dir, mod)
	m, c, a := dial(t, s, MasterService), dial(t, s, ClientService), dial(t, s, AdminService)
	createTable(t, m, "sp")
	const n = 600
	writeRows(t, c, "sp", n)
	parent := liveRegions(t, c, "sp")[0]
	call(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: regionSpec(nameOf(t, parent))}, &hbasepb.FlushRegionResponse{}, nil)
	writeRows(t, c, "sp", n/2) // newer versions, some only in the memstore

	// A split without a row splits at the server's best row.
	class, msg := splitRPC(t, m, parent, "")
	require.Equal(t, "", class, msg)
	regions := liveRegions(t, c, "sp")
	require.Len(t, regions, 2)
	best := regions[1].GetStartKey()
	require.True(t, bytes.Compare(best, []byte("r0100")) > 0 && bytes.Compare(best, []byte("r0500")) < 0,
		"the best split row %q is near the middle", best)
	require.Equal(t, wantRows(n, false), scanTableRows(t, c, "sp", false))
	require.Equal(t, wantRows(n, true), scanTableRows(t, c, "sp", true))

	// The parent is offline and split in meta, naming its daughters; a
	// request for it is NotServingRegionException.
	var parentRow *hbasepb.RegionInfo
	for _, ri := range metaRegions(t, c, "sp") {
		if ri.GetOffline() {
			parentRow = ri
		}
	}
	require.NotNil(t, parentRow)
	require.True(t, parentRow.GetSplit())
	_, err := c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: regionSpec(nameOf(t, parent)),
		Get: &hbasepb.Get{Row: []byte("r0001")}}, nil, &hbasepb.GetResponse{})
	require.Equal(t, ipc.ClassNotServingRegionException, exceptionClass(err))
	class, _ = splitRPC(t, m, parent, "r0050")
	require.Equal(t, ipc.ClassUnknownRegionException, class, "a split parent is not a region any more")

	// Daughters still reading by reference are not splittable.
	require.False(t, splittable(t, a, regions[0]))
	class, msg = splitRPC(t, m, regions[0], "r0050")
	require.Equal(t, ipc.ClassDoNotRetryIOException, class)
	require.Contains(t, msg, "NOT splittable")
	compactAll(t, c, a, "sp")
	parentDir := filepath.Join(s.tableDir(TableName{"default", "sp"}), mustRI(t, parent).EncodedName())
	waitFor(t, "the janitor to remove the split parent", func() bool {
		_, err := s.fs.Stat(parentDir)
		return err != nil && len(metaRegions(t, c, "sp")) == 2
	})

	// A split row that cannot be: the start key, outside the region.
	regions = liveRegions(t, c, "sp")
	class, msg = splitRPC(t, m, regions[1], string(regions[1].GetStartKey()))
	require.Equal(t, ipc.ClassDoNotRetryIOException, class)
	require.Contains(t, msg, "Split row is equal to startkey")
	class, msg = splitRPC(t, m, regions[1], "a")
	require.Equal(t, ipc.ClassDoNotRetryIOException, class)
	require.Contains(t, msg, "Split row is not inside region key range")

	// GetRegionInfo's best split row is what a split without a row takes.
	resp := &hbasepb.GetRegionInfoResponse{}
	call(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: regionSpec(nameOf(t, regions[1])),
		BestSplitRow: proto.Bool(true)}, resp, nil)
	require.True(t, resp.GetSplittable())
	require.True(t, resp.GetMergeable())
	bestB := resp.GetBestSplitRow()
	require.True(t, mustRI(t, regions[1]).ContainsRow(bestB) && !bytes.Equal(bestB, regions[1].GetStartKey()))
	require.Equal(t, "", first(splitRPC(t, m, regions[1], "")))
	require.Equal(t, "", first(splitRPC(t, m, regions[0], "r0050")))
	regions = liveRegions(t, c, "sp")
	require.Len(t, regions, 4)
	require.Equal(t, "r0050", string(regions[1].GetStartKey()))
	require.Equal(t, bestB, regions[3].GetStartKey())
	require.Equal(t, wantRows(n, false), scanTableRows(t, c, "sp", false))
	require.Equal(t, wantRows(n, true), scanTableRows(t, c, "sp", true))

	// Merges: not with references; then adjacent ones only.
	class, _ = mergeRPC(t, m, false, regions[0], regions[1])
	require.Equal(t, ipc.ClassMergeRegionException, class, "daughters with references are not mergeable")
	compactAll(t, c, a, "sp")
	class, msg = mergeRPC(t, m, false, regions[0], regions[2])
	require.Equal(t, ipc.ClassMergeRegionException, class)
	require.Contains(t, msg, "Unable to merge non-adjacent or non-overlapping regions")
	class, msg = mergeRPC(t, m, true, regions[0], regions[2])
	require.Equal(t, ipc.ClassMergeRegionException, class, "forcible, but region 1 would overlap")
	require.Contains(t, msg, "would overlap")
	class, msg = mergeRPC(t, m, false, regions[0], regions[0])
	require.Equal(t, ipc.ClassMergeRegionException, class)
	require.Contains(t, msg, "Duplicate regions")
	class, _ = mergeRPC(t, m, false, regions[0])
	require.Equal(t, ipc.ClassMergeRegionException, class)
	require.Equal(t, "", first(mergeRPC(t, m, false, regions[1], regions[2])))
	// Forcible takes regions in any order, covering a range with no gap.
	merged := liveRegions(t, c, "sp")
	require.Len(t, merged, 3)
	require.Equal(t, "r0050", string(merged[1].GetStartKey()))
	require.Equal(t, regions[3].GetStartKey(), merged[1].GetEndKey())
	require.Greater(t, merged[1].GetRegionId(), max(regions[1].GetRegionId(), regions[2].GetRegionId()))
	require.Equal(t, wantRows(n, false), scanTableRows(t, c, "sp", false))
	compactAll(t, c, a, "sp")
	// A merged region is mergeable again once the janitor (woken by the
	// compaction, in the background) has removed its parents and their
	// merge qualifiers, as in HBase.
	waitFor(t, "the janitor to remove the merge parents", func() bool { return s.pendingParents.Load() == 0 })
	class, msg = mergeRPC(t, m, true, merged[2], merged[0], merged[1])
	require.Equal(t, "", class, msg)
	all := liveRegions(t, c, "sp")
	require.Len(t, all, 1)
	require.Empty(t, all[0].GetStartKey())
	require.Empty(t, all[0].GetEndKey())
	require.Equal(t, wantRows(n, true), scanTableRows(t, c, "sp", true))

	// The switches, which survive a restart.
	sw := &hbasepb.SetSplitOrMergeEnabledResponse{}
	call(t, m, "SetSplitOrMergeEnabled", &hbasepb.SetSplitOrMergeEnabledRequest{Enabled: proto.Bool(false),
		SwitchTypes: []hbasepb.MasterSwitchType{hbasepb.MasterSwitchType_SPLIT}}, sw, nil)
	require.Equal(t, []bool{true}, sw.GetPrevValue())
	compactAll(t, c, a, "sp")
	class, msg = splitRPC(t, m, all[0], "r0300")
	require.Equal(t, ipc.ClassDoNotRetryIOException, class)
	require.Contains(t, msg, "split switch off")
	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, dir, mod)
	m, c = dial(t, s, MasterService), dial(t, s, ClientService)
	on := &hbasepb.IsSplitOrMergeEnabledResponse{}
	call(t, m, "IsSplitOrMergeEnabled", &hbasepb.IsSplitOrMergeEnabledRequest{SwitchType: hbasepb.MasterSwitchType_SPLIT.Enum()}, on, nil)
	require.False(t, on.GetEnabled())
	call(t, m, "IsSplitOrMergeEnabled", &hbasepb.IsSplitOrMergeEnabledRequest{SwitchType: hbasepb.MasterSwitchType_MERGE.Enum()}, on, nil)
	require.True(t, on.GetEnabled())
	call(t, m, "SetSplitOrMergeEnabled", &hbasepb.SetSplitOrMergeEnabledRequest{Enabled: proto.Bool(true),
		SwitchTypes: []hbasepb.MasterSwitchType{hbasepb.MasterSwitchType_SPLIT}}, sw, nil)
	require.Equal(t, wantRows(n, false), scanTableRows(t, c, "sp", false))
	require.Equal(t, "", first(splitRPC(t, m, liveRegions(t, c, "sp")[0], "r0300")))
	require.Len(t, liveRegions(t, c, "sp"), 2)
	require.Equal(t, wantRows(n, true), scanTableRows(t, c, "sp", true))

	// Too small to split at a row of its own choosing.
	createTable(t, m, "tiny")
	writeRows(t, c, "tiny", 1)
	class, msg = splitRPC(t, m, liveRegions(t, c, "tiny")[0], "")
	require.Equal(t, ipc.ClassDoNotRetryIOException, class)
	require.Contains(t, msg, "bestSplitPoint = null")
	class, _ = splitRPC(t, m, &hbasepb.RegionInfo{RegionId: proto.Uint64(1), TableName: tn("default", "nope")}, "x")
	require.Equal(t, ipc.ClassUnknownRegionException, class)
}

func first(a, _ string) string { return a }

func mustRI(t *testing.T, pb *hbasepb.RegionInfo) *RegionInfo {
	ri, err := regionInfoFromPB(pb)
	require.NoError(t, err)
	return &ri
}

// TestSplitClosesScanners: a scanner open on a region that splits gets
// NotServingRegionException on its next call (a client then reopens its
// scan after the last row it got, in the daughter holding it), and a close
// of it is answered.
func TestSplitClosesScanners(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) { c.SplitPolicy = "DisabledRegionSplitPolicy" })
	m, c := dial(t, s, MasterService), dial(t, s, ClientService)
	createTable(t, m, "sc")
	writeRows(t, c, "sc", 50)
	parent := liveRegions(t, c, "sc")[0]
	resp := &hbasepb.ScanResponse{}
	call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec(nameOf(t, parent)), Scan: &hbasepb.Scan{},
		NumberOfRows: proto.Uint32(5)}, resp, nil)
	id := resp.GetScannerId()
	require.Equal(t, "", first(splitRPC(t, m, parent, "r0025")))
	_, err := c.Call(context.Background(), "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(id), NumberOfRows: proto.Uint32(5)},
		nil, &hbasepb.ScanResponse{})
	require.Equal(t, ipc.ClassNotServingRegionException, exceptionClass(err))
	call(t, c, "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(id), CloseScanner: proto.Bool(true)}, &hbasepb.ScanResponse{}, nil)
}

// TestAutoSplit: with SteppingSplitPolicy a table's only region splits once
// a store passes 2 × the flush size, and after that only regions past
// hbase.hregion.max.filesize split; a table's SPLIT_POLICY and MAX_FILESIZE
// win over the server's.
func TestAutoSplit(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		c.Region.FlushSize = 32 << 10
		c.MaxFileSize = 1 << 30
	})
	m, c := dial(t, s, MasterService), dial(t, s, ClientService)
	createTable(t, m, "auto")
	for i := 0; i < 6; i++ {
		writeRowsRetrying(t, c, "auto", 600)
	}
	waitFor(t, "the first split", func() bool { return len(liveRegions(t, c, "auto")) == 2 })
	// Past the first split the limit is the max file size: no more.
	for i := 0; i < 4; i++ {
		writeRowsRetrying(t, c, "auto", 600)
	}
	time.Sleep(200 * time.Millisecond)
	require.Len(t, liveRegions(t, c, "auto"), 2)
	require.Equal(t, wantRows(600, false), scanTableRows(t, c, "auto", false))

	// A table of its own policy: constant size, a small max file size.
	req := &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{
		TableName:      tn("default", "const"),
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}},
		Attributes: []*hbasepb.BytesBytesPair{
			{First: []byte("SPLIT_POLICY"), Second: []byte("org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy")},
			{First: []byte("MAX_FILESIZE"), Second: []byte("65536")}}}}
	require.Equal(t, "", runProcedure(t, m, "CreateTable", req, &hbasepb.CreateTableResponse{}))
	for i := 0; i < 8; i++ {
		writeRowsRetrying(t, c, "const", 600)
	}
	waitFor(t, "splits past MAX_FILESIZE", func() bool { return len(liveRegions(t, c, "const")) >= 3 })
	waitFor(t, "every row to be readable", func() bool {
		return fmt.Sprint(wantRows(600, false)) == fmt.Sprint(scanTableRetrying(t, c, "const"))
	})

	// A bad policy or size is refused when the table is created.
	req.TableSchema.TableName = tn("default", "bad")
	req.TableSchema.Attributes[0].Second = []byte("KeyPrefixRegionSplitPolicy")
	require.Equal(t, ipc.ClassDoNotRetryIOException, runProcedure(t, m, "CreateTable", req, &hbasepb.CreateTableResponse{}))
	req.TableSchema.Attributes = req.TableSchema.Attributes[1:]
	req.TableSchema.Attributes[0].Second = []byte("-1")
	require.Equal(t, ipc.ClassDoNotRetryIOException, runProcedure(t, m, "CreateTable", req, &hbasepb.CreateTableResponse{}))
}

// writeRowsRetrying is writeRows while regions split under it: a write
// refused as not served or out of the region is written again after
// reading meta afresh.
func writeRowsRetrying(t *testing.T, c *ipc.ClientConn, table string, n int) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		ok := func() bool {
			regions := liveRegions(t, c, table)
			for i := 0; i < n; i++ {
				row := fmt.Sprintf("r%04d", i)
				mp, cb := putCells(row, [2]string{"q", fmt.Sprintf("v%d-%s", i, strings.Repeat("x", 200))})
				_, err := c.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, row)),
					Mutation: mp}, cb, &hbasepb.MutateResponse{})
				if err != nil {
					cl := exceptionClass(err)
					require.True(t, cl == ipc.ClassNotServingRegionException || cl == classWrongRegion ||
						cl == ipc.ClassRegionTooBusyException, "%v", err)
					return false
				}
			}
			return true
		}()
		if ok {
			return
		}
		require.Less(t, attempt, 1000)
		time.Sleep(5 * time.Millisecond)
	}
}

// scanTableRetrying is scanTable while regions split: nil if a region
// went away under the scan.
func scanTableRetrying(t *testing.T, c *ipc.ClientConn, table string) []string {
	t.Helper()
	var rows []string
	for _, ri := range liveRegions(t, c, table) {
		resp := &hbasepb.ScanResponse{}
		cb, err := c.Call(context.Background(), "Scan", &hbasepb.ScanRequest{Region: regionSpec(nameOf(t, ri)),
			Scan: &hbasepb.Scan{}, NumberOfRows: proto.Uint32(100000), CloseScanner: proto.Bool(true)}, nil, resp)
		if err != nil {
			return nil
		}
		for _, r := range scanRows(t, resp, cb) {
			rows = append(rows, r[:strings.IndexByte(r, '=')])
		}
	}
	return rows
}

// TestSnapshotAfterSplit: a table whose daughters still read their parent
// by reference snapshots (enabled or disabled) and clones with every row:
// the snapshot compacts the references away first, since a linked
// reference would not read the same in the clone.
func TestSnapshotAfterSplit(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		c.SplitPolicy = "DisabledRegionSplitPolicy"
		c.Region.DisableAutoCompaction = true
	})
	m, c := dial(t, s, MasterService), dial(t, s, ClientService)
	createTable(t, m, "ss")
	writeRows(t, c, "ss", 300)
	require.Equal(t, "", first(splitRPC(t, m, liveRegions(t, c, "ss")[0], "r0150")))
	want := scanTableRows(t, c, "ss", false)
	require.Equal(t, wantRows(300, false), want)
	require.Equal(t, "", takeSnapshotRPC(t, m, snapDesc("s1", "ss")))
	require.Equal(t, "", restoreRPC(t, m, "s1", "ss_clone"))
	require.Equal(t, want, scanTableRows(t, c, "ss_clone", false))
	require.Len(t, liveRegions(t, c, "ss_clone"), 2)

	// Disabled, with references again (a split of the clone).
	require.Equal(t, "", first(splitRPC(t, m, liveRegions(t, c, "ss_clone")[1], "r0220")))
	disable(t, m, "ss_clone")
	require.Equal(t, "", takeSnapshotRPC(t, m, snapDesc("s2", "ss_clone")))
	require.Equal(t, "", restoreRPC(t, m, "s2", "ss_clone2"))
	require.Equal(t, want, scanTableRows(t, c, "ss_clone2", false))
	require.Len(t, liveRegions(t, c, "ss_clone2"), 3)
}

// TestRestoreSnapshotOfSplitParent: a snapshot taken before a split,
// restored while the split parent still waits for the janitor, brings the
// parent back as a region; the janitor must then leave its files alone.
func TestRestoreSnapshotOfSplitParent(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		c.SplitPolicy = "DisabledRegionSplitPolicy"
		c.Region.DisableAutoCompaction = true // the daughters keep their references
	})
	m, c := dial(t, s, MasterService), dial(t, s, ClientService)
	createTable(t, m, "rs")
	writeRows(t, c, "rs", 200)
	require.Equal(t, "", takeSnapshotRPC(t, m, snapDesc("before", "rs")))
	require.Equal(t, "", first(splitRPC(t, m, liveRegions(t, c, "rs")[0], "r0100")))
	disable(t, m, "rs")
	require.Equal(t, "", restoreRPC(t, m, "before", "rs"))
	enable(t, m, "rs")
	require.Len(t, liveRegions(t, c, "rs"), 1)
	_, err := s.runJanitor()
	require.NoError(t, err)
	require.Equal(t, wantRows(200, false), scanTableRows(t, c, "rs", false))
	// And after a restart, which reads meta and the directories afresh.
	require.NoError(t, s.Shutdown(context.Background()))
}
