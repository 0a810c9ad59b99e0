package server

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// procedures records the outcome of admin operations, which HBase runs as
// procedures that clients poll with getProcedureResult. Ours run to the end
// before the RPC answers, so a poll finds them finished; the record lets
// clients learn the outcome (or the exception) as HBase's clients expect.
type procedures struct {
	mu     sync.Mutex
	nextID uint64
	done   map[uint64]procResult
	order  []uint64
}

type procResult struct {
	submitted, finished time.Time
	err                 error
}

// maxProcResults bounds the results kept (HBase also expires them).
const maxProcResults = 10000

func (p *procedures) run(fn func() error) uint64 {
	start := time.Now()
	err := fn()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		p.done = map[uint64]procResult{}
	}
	p.nextID++
	id := p.nextID
	p.done[id] = procResult{submitted: start, finished: time.Now(), err: err}
	p.order = append(p.order, id)
	if len(p.order) > maxProcResults {
		delete(p.done, p.order[0])
		p.order = p.order[1:]
	}
	return id
}

func (p *procedures) result(id uint64) *hbasepb.GetProcedureResultResponse {
	p.mu.Lock()
	r, ok := p.done[id]
	p.mu.Unlock()
	if !ok {
		return &hbasepb.GetProcedureResultResponse{State: hbasepb.GetProcedureResultResponse_NOT_FOUND.Enum()}
	}
	resp := &hbasepb.GetProcedureResultResponse{
		State:         hbasepb.GetProcedureResultResponse_FINISHED.Enum(),
		SubmittedTime: proto.Uint64(uint64(r.submitted.UnixMilli())),
		LastUpdate:    proto.Uint64(uint64(r.finished.UnixMilli())),
	}
	if r.err != nil {
		e := ipc.ToException(r.err)
		resp.Exception = &hbasepb.ForeignExceptionMessage{
			Source: proto.String("master"),
			GenericException: &hbasepb.GenericExceptionMessage{
				ClassName: proto.String(e.Class), Message: proto.String(e.Message)},
		}
	}
	return resp
}

// checkSplitKeys validates split keys as HBase's CreateTable does, and
// returns them sorted.
func checkSplitKeys(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	copy(out, keys)
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	for i, k := range out {
		if len(k) == 0 {
			return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "empty split key must not be passed in the split keys")
		}
		if i > 0 && bytes.Equal(k, out[i-1]) {
			return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "split keys contain a duplicate: %q", k)
		}
	}
	return out, nil
}

// createTable creates a table with one region per split key range, enabled.
func (s *Server) createTable(_ context.Context, schema *hbasepb.TableSchema, splitKeys [][]byte) error {
	name, err := tableNameFromPB(schema.GetTableName())
	if err != nil {
		return err
	}
	fams, err := tableFamilies(schema)
	if err != nil {
		return err
	}
	keys, err := checkSplitKeys(splitKeys)
	if err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	// Under ddl, so that a DeleteNamespace cannot come in between.
	if err := s.checkNamespace(name.Namespace); err != nil {
		return err
	}
	if s.tableByName(name) != nil {
		return ipc.Errorf(ipc.ClassTableExistsException, "%s", name)
	}
	schema = proto.Clone(schema).(*hbasepb.TableSchema)
	schema.TableName = name.PB()
	dir := s.tableDir(name)
	// A directory left by a create that crashed half way is ours to reuse.
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		return errors.Wrapf(err, "server: clearing %s", dir)
	}
	if err := vfs.MkdirAllSync(s.fs, dir, 0o755); err != nil {
		return errors.Wrapf(err, "server: creating %s", dir)
	}
	b, err := proto.Marshal(schema)
	if err != nil {
		return errors.Wrap(err, "server: encoding table descriptor")
	}
	if err := s.writeFileAtomic(filepath.Join(dir, tableDescName), b); err != nil {
		return err
	}
	id := uint64(time.Now().UnixMilli())
	if id <= s.lastRegID {
		id = s.lastRegID + 1
	}
	s.lastRegID = id
	t := newTable(name, schema, fams)
	t.setState(hbasepb.TableState_ENABLING)
	bounds := append([][]byte{nil}, keys...)
	for i, start := range bounds {
		ri := RegionInfo{Table: name, StartKey: start, RegionID: id}
		if i+1 < len(bounds) {
			ri.EndKey = bounds[i+1]
		}
		hr := &hostedRegion{info: ri, name: ri.RegionName(), table: t, dir: filepath.Join(dir, ri.EncodedName()), fresh: true}
		t.regions = append(t.regions, hr)
	}
	// Meta first says, in one batch, that the table is ENABLING and which
	// regions it has, so a crash part way through leaves a table that the
	// next start finishes opening (or none, and its directory is removed).
	ms := []region.Mutation{s.metaTableStatePut(name, hbasepb.TableState_ENABLING)}
	for _, hr := range t.regions {
		ms = append(ms, s.metaRegionPut(hr))
	}
	if err := s.metaBatch(ms); err != nil {
		return err
	}
	if err := s.openRegions(t); err != nil {
		return err
	}
	if err := s.setTableState(t, hbasepb.TableState_ENABLED); err != nil {
		return err
	}
	s.mu.Lock()
	s.addTableLocked(t)
	s.mu.Unlock()
	s.log.Info("created table", "table", name.String(), "regions", len(t.regions))
	return nil
}

// userTable returns the table named by pb, refusing system tables for
// operations that would break the catalog.
func (s *Server) userTable(pb *hbasepb.TableName, op string) (*table, error) {
	name, err := tableNameFromPB(pb)
	if err != nil {
		return nil, err
	}
	t := s.tableByName(name)
	if t == nil {
		return nil, ipc.Errorf(ipc.ClassTableNotFoundException, "%s", name)
	}
	if name.System() {
		return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "cannot %s system table %s", op, name)
	}
	return t, nil
}

func (s *Server) disableTable(pb *hbasepb.TableName) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	t, err := s.userTable(pb, "disable")
	if err != nil {
		return err
	}
	if t.getState() != hbasepb.TableState_ENABLED {
		return ipc.Errorf(ipc.ClassTableNotEnabledException, "%s", t.name)
	}
	if err := s.setTableState(t, hbasepb.TableState_DISABLING); err != nil {
		return err
	}
	if err := s.closeRegions(t); err != nil {
		return err
	}
	return s.setTableState(t, hbasepb.TableState_DISABLED)
}

func (s *Server) enableTable(pb *hbasepb.TableName) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	t, err := s.userTable(pb, "enable")
	if err != nil {
		return err
	}
	if t.getState() != hbasepb.TableState_DISABLED {
		return ipc.Errorf(ipc.ClassTableNotDisabledException, "%s", t.name)
	}
	if err := s.setTableState(t, hbasepb.TableState_ENABLING); err != nil {
		return err
	}
	if err := s.openRegions(t); err != nil {
		return err
	}
	return s.setTableState(t, hbasepb.TableState_ENABLED)
}

func (s *Server) deleteTable(pb *hbasepb.TableName) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	t, err := s.userTable(pb, "delete")
	if err != nil {
		return err
	}
	if t.getState() != hbasepb.TableState_DISABLED {
		return ipc.Errorf(ipc.ClassTableNotDisabledException, "%s", t.name)
	}
	// One batch: a crash leaves the table listed whole or not at all (its
	// directory is then removed at start).
	var ms []region.Mutation
	for _, hr := range t.regions {
		ms = append(ms, s.metaDeleteRow(hr.name))
	}
	// Split parents the janitor has not cleared yet go too (the table's
	// directory, with their files, is removed below).
	for name, p := range s.parents {
		if p.info.Table == t.name {
			ms = append(ms, s.metaDeleteRow([]byte(name)))
		}
	}
	ms = append(ms, s.metaDeleteRow([]byte(t.name.String())))
	if err := s.metaBatch(ms); err != nil {
		return errors.Wrap(err, "server: deleting from hbase:meta")
	}
	for name, p := range s.parents {
		if p.info.Table == t.name {
			delete(s.parents, name)
		}
	}
	for name, m := range s.merges {
		if m.info.Table == t.name {
			delete(s.merges, name)
		}
	}
	s.noteParents()
	s.mu.Lock()
	s.removeTableLocked(t)
	s.mu.Unlock()
	if err := vfs.RemoveAll(s.fs, s.tableDir(t.name)); err != nil {
		return errors.Wrapf(err, "server: removing the files of %s", t.name)
	}
	s.log.Info("deleted table", "table", t.name.String())
	return nil
}

func (s *Server) truncateTable(pb *hbasepb.TableName, preserveSplits bool) error {
	t, err := s.userTable(pb, "truncate")
	if err != nil {
		return err
	}
	schema := t.schema()
	var splits [][]byte
	if preserveSplits {
		for _, hr := range s.regionsOf(t)[1:] {
			splits = append(splits, hr.info.StartKey)
		}
	}
	if err := s.deleteTable(pb); err != nil {
		return err
	}
	if err := s.createTable(context.Background(), schema, splits); err != nil {
		return err
	}
	// HBase 2's TruncateTableProcedure ends by setting the table ENABLED
	// (TRUNCATE_TABLE_POST_OPERATION), and so does createTable.
	return nil
}

// listTables returns the tables matching a GetTableNames-style query. A
// regex that is set is applied even when empty, as HBase compiles the
// pattern whenever the request has the field ("" matches no name); nil
// means every table.
func (s *Server) listTables(regex *string, includeSys bool, namespace string, names []*hbasepb.TableName) ([]*table, error) {
	var re *regexp.Regexp
	if regex != nil {
		var err error
		if re, err = regexp.Compile("^(?:" + *regex + ")$"); err != nil {
			return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "bad table name pattern %q: %v", *regex, err)
		}
	}
	want := map[string]bool{}
	for _, n := range names {
		t, err := tableNameFromPB(n)
		if err != nil {
			return nil, err
		}
		want[t.String()] = true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*table
	for _, t := range s.tables {
		if len(want) > 0 {
			if want[t.name.String()] {
				out = append(out, t)
			}
			continue
		}
		if namespace != "" && t.name.Namespace != namespace {
			continue
		}
		if t.name.System() && !includeSys && namespace != systemNamespace {
			continue
		}
		// HBase matches the pattern against the full name, and for the
		// default namespace against the bare qualifier too.
		if re != nil && !re.MatchString(t.name.Namespace+":"+t.name.Qualifier) && !re.MatchString(t.name.String()) {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name.String() < out[j].name.String() })
	return out, nil
}

func (s *Server) clusterStatus() *hbasepb.ClusterStatus {
	sn := s.serverNamePB()
	load := &hbasepb.ServerLoad{
		InfoServerPort:  proto.Uint32(uint32(max(s.infoPort(), 0))),
		ReportStartTime: proto.Uint64(s.startCode),
		ReportEndTime:   proto.Uint64(uint64(time.Now().UnixMilli())),
	}
	var reads, writes uint64
	s.mu.RLock()
	for _, hr := range s.regions {
		r := hr.r.Load()
		if r == nil {
			continue
		}
		st := r.Stats()
		rl := &hbasepb.RegionLoad{
			RegionSpecifier:    &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: hr.name},
			Stores:             proto.Uint32(uint32(len(hr.table.families()))),
			Storefiles:         proto.Uint32(uint32(st.StoreFiles)),
			StorefileSize_MB:   proto.Uint32(uint32(st.StoreFileSize >> 20)),
			MemStoreSize_MB:    proto.Uint32(uint32(st.MemStoreSize >> 20)),
			ReadRequestsCount:  proto.Uint64(uint64(hr.reads.Load())),
			WriteRequestsCount: proto.Uint64(uint64(hr.writes.Load())),
			CompleteSequenceId: proto.Uint64(st.ReadPoint),
		}
		reads += uint64(hr.reads.Load())
		writes += uint64(hr.writes.Load())
		load.RegionLoads = append(load.RegionLoads, rl)
	}
	s.mu.RUnlock()
	load.ReadRequestsCount, load.WriteRequestsCount = proto.Uint64(reads), proto.Uint64(writes)
	load.TotalNumberOfRequests = proto.Uint64(reads + writes)
	return &hbasepb.ClusterStatus{
		HbaseVersion:   &hbasepb.HBaseVersionFileContent{Version: proto.String(hbaseVersionFile)},
		LiveServers:    []*hbasepb.LiveServerInfo{{Server: sn, ServerLoad: load}},
		ClusterId:      &hbasepb.ClusterId{ClusterId: proto.String(s.clusterID)},
		Master:         sn,
		BalancerOn:     proto.Bool(s.balancer.Load()),
		MasterInfoPort: proto.Int32(int32(s.infoPort())),
		ServersName:    []*hbasepb.ServerName{sn},
	}
}

// hbaseVersionFile is the hbase.version file content HBase 2.x reports.
const hbaseVersionFile = "8"

func (s *Server) infoPort() int {
	if s.infoLn == nil {
		return -1
	}
	p, _ := strconv.Atoi(s.InfoAddr()[bytes.LastIndexByte([]byte(s.InfoAddr()), ':')+1:])
	return p
}
