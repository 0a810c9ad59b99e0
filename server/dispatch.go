package server

import (
	"bytes"
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// Service names a connection header may carry.
const (
	ClientService     = "ClientService"
	MasterService     = "MasterService"
	AdminService      = "AdminService"
	ClientMetaService = "ClientMetaService"
)

// Serves implements ipc.Handler.
func (s *Server) Serves(service string) bool {
	switch service {
	case ClientService, MasterService, AdminService, ClientMetaService:
		return true
	}
	return false
}

type methodFunc func(s *Server, c *ipc.Call) (ipc.Reply, error)

var clientMethods = map[string]methodFunc{
	"Get":    (*Server).handleGet,
	"Mutate": (*Server).handleMutate,
	"Multi":  (*Server).handleMulti,
	"Scan":   (*Server).handleScan,
	// HBase 2's bulk load (the SecureBulkLoad flow); see bulkload.go.
	"BulkLoadHFile":   (*Server).handleBulkLoadHFile,
	"PrepareBulkLoad": (*Server).handlePrepareBulkLoad,
	"CleanupBulkLoad": (*Server).handleCleanupBulkLoad,
}

var masterMethods = map[string]methodFunc{
	"CreateTable":   (*Server).handleCreateTable,
	"DeleteTable":   (*Server).handleDeleteTable,
	"EnableTable":   (*Server).handleEnableTable,
	"DisableTable":  (*Server).handleDisableTable,
	"TruncateTable": (*Server).handleTruncateTable,
	// HBase's MasterService spells it so; TruncateTable stays for the
	// clients that sent that.
	"truncateTable":                   (*Server).handleTruncateTable,
	"ModifyTable":                     (*Server).handleModifyTable,
	"AddColumn":                       (*Server).handleAddColumn,
	"ModifyColumn":                    (*Server).handleModifyColumn,
	"DeleteColumn":                    (*Server).handleDeleteColumn,
	"FlushTable":                      (*Server).handleFlushTable,
	"ExecProcedure":                   (*Server).handleExecProcedure,
	"IsProcedureDone":                 (*Server).handleIsProcedureDone,
	"CreateNamespace":                 (*Server).handleCreateNamespace,
	"DeleteNamespace":                 (*Server).handleDeleteNamespace,
	"ModifyNamespace":                 (*Server).handleModifyNamespace,
	"GetNamespaceDescriptor":          (*Server).handleGetNamespaceDescriptor,
	"ListNamespaces":                  (*Server).handleListNamespaces,
	"getProcedureResult":              (*Server).handleGetProcedureResult,
	"GetTableNames":                   (*Server).handleGetTableNames,
	"GetTableDescriptors":             (*Server).handleGetTableDescriptors,
	"GetTableState":                   (*Server).handleGetTableState,
	"GetClusterStatus":                (*Server).handleGetClusterStatus,
	"SetBalancerRunning":              (*Server).handleSetBalancerRunning,
	"IsBalancerEnabled":               (*Server).handleIsBalancerEnabled,
	"MoveRegion":                      (*Server).handleMoveRegion,
	"AssignRegion":                    (*Server).handleAssignRegion,
	"SplitRegion":                     (*Server).handleSplitRegion,
	"MergeTableRegions":               (*Server).handleMergeTableRegions,
	"SetSplitOrMergeEnabled":          (*Server).handleSetSplitOrMergeEnabled,
	"IsSplitOrMergeEnabled":           (*Server).handleIsSplitOrMergeEnabled,
	"IsMasterRunning":                 (*Server).handleIsMasterRunning,
	"ListNamespaceDescriptors":        (*Server).handleListNamespaceDescriptors,
	"ListTableNamesByNamespace":       (*Server).handleListTableNamesByNamespace,
	"ListTableDescriptorsByNamespace": (*Server).handleListTableDescriptorsByNamespace,
	"Snapshot":                        (*Server).handleSnapshot,
	"IsSnapshotDone":                  (*Server).handleIsSnapshotDone,
	"GetCompletedSnapshots":           (*Server).handleGetCompletedSnapshots,
	"DeleteSnapshot":                  (*Server).handleDeleteSnapshot,
	"RestoreSnapshot":                 (*Server).handleRestoreSnapshot,
}

var adminMethods = map[string]methodFunc{
	"GetRegionInfo":   (*Server).handleGetRegionInfo,
	"GetOnlineRegion": (*Server).handleGetOnlineRegion,
	"GetServerInfo":   (*Server).handleGetServerInfo,
	"GetStoreFile":    (*Server).handleGetStoreFile,
	"FlushRegion":     (*Server).handleFlushRegion,
	"CompactRegion":   (*Server).handleCompactRegion,
	"RollWALWriter":   (*Server).handleRollWALWriter,
}

var registryMethods = map[string]methodFunc{
	"GetClusterId":           (*Server).handleGetClusterID,
	"GetActiveMaster":        (*Server).handleGetActiveMaster,
	"GetMetaRegionLocations": (*Server).handleGetMetaRegionLocations,
	"GetBootstrapNodes":      (*Server).handleGetBootstrapNodes,
}

// ServeCall implements ipc.Handler.
func (s *Server) ServeCall(_ context.Context, c *ipc.Call) (ipc.Reply, error) {
	var methods map[string]methodFunc
	switch c.Service {
	case ClientService:
		methods = clientMethods
	case MasterService:
		methods = masterMethods
	case AdminService:
		methods = adminMethods
	case ClientMetaService:
		methods = registryMethods
	}
	fn := methods[c.Method]
	if fn == nil {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassUnknownProtocolException, "%s has no method %q", c.Service, c.Method)
	}
	if s.closed.Load() {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassRegionServerStoppedException, "server %s is stopping", s.ServerName())
	}
	start := time.Now()
	reply, err := fn(s, c)
	s.metrics.observe(c.Method, time.Since(start), err)
	return reply, err
}

func decode(c *ipc.Call, m proto.Message) error {
	if err := proto.Unmarshal(c.Param, m); err != nil {
		return badRequest("decoding %s request: %v", c.Method, err)
	}
	return nil
}

func (s *Server) handleCreateTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.CreateTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	// Errors a client must see at once (bad schema, table exists) come
	// back from the RPC, as HBase's master pre-checks them (see runProc).
	id, err := s.runProc(func() error {
		return s.createTable(context.Background(), req.GetTableSchema(), req.GetSplitKeys())
	})
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.CreateTableResponse{ProcId: proto.Uint64(id)}}, nil
}

// runProc runs an admin operation as a procedure: argument errors are
// returned at once, the rest is recorded for getProcedureResult.
func (s *Server) runProc(fn func() error) (uint64, error) {
	err := fn()
	if e, ok := ipc.AsException(err); ok && e.DoNotRetry() {
		return 0, err
	}
	return s.procs.run(func() error { return err }), nil
}

func (s *Server) handleDeleteTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.DeleteTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.deleteTable(req.GetTableName()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.DeleteTableResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleEnableTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.EnableTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.enableTable(req.GetTableName()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.EnableTableResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleDisableTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.DisableTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.disableTable(req.GetTableName()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.DisableTableResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleTruncateTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.TruncateTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.truncateTable(req.GetTableName(), req.GetPreserveSplits()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.TruncateTableResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleGetProcedureResult(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetProcedureResultRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: s.procs.result(req.GetProcId())}, nil
}

func (s *Server) handleGetTableNames(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetTableNamesRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	ts, err := s.listTables(req.Regex, req.GetIncludeSysTables(), req.GetNamespace(), nil)
	if err != nil {
		return ipc.Reply{}, err
	}
	resp := &hbasepb.GetTableNamesResponse{}
	for _, t := range ts {
		resp.TableNames = append(resp.TableNames, t.name.PB())
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetTableDescriptors(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetTableDescriptorsRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	ts, err := s.listTables(req.Regex, req.GetIncludeSysTables(), req.GetNamespace(), req.GetTableNames())
	if err != nil {
		return ipc.Reply{}, err
	}
	resp := &hbasepb.GetTableDescriptorsResponse{}
	for _, t := range ts {
		resp.TableSchema = append(resp.TableSchema, t.schema())
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetTableState(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetTableStateRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	name, err := tableNameFromPB(req.GetTableName())
	if err != nil {
		return ipc.Reply{}, err
	}
	t := s.tableByName(name)
	if t == nil {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassTableNotFoundException, "%s", name)
	}
	return ipc.Reply{Msg: &hbasepb.GetTableStateResponse{TableState: &hbasepb.TableState{State: t.getState().Enum()}}}, nil
}

func (s *Server) handleGetClusterStatus(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.GetClusterStatusResponse{ClusterStatus: s.clusterStatus()}}, nil
}

func (s *Server) handleSetBalancerRunning(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.SetBalancerRunningRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	prev := s.balancer.Swap(req.GetOn())
	return ipc.Reply{Msg: &hbasepb.SetBalancerRunningResponse{PrevBalanceValue: proto.Bool(prev)}}, nil
}

func (s *Server) handleIsBalancerEnabled(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.IsBalancerEnabledResponse{Enabled: proto.Bool(s.balancer.Load())}}, nil
}

func (s *Server) handleMoveRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.MoveRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	// One server: every region stays where it is, but the region must exist.
	if s.hostedBySpec(req.GetRegion()) == nil {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassUnknownRegionException, "%s", req.GetRegion().GetValue())
	}
	return ipc.Reply{Msg: &hbasepb.MoveRegionResponse{}}, nil
}

// handleAssignRegion is Admin.assign: on one server, it opens a region that
// is FAILED_OPEN (see openRegions) once what kept it from opening is
// mended; an open region is left as it is. Unlike HBase's, which queues an
// assignment and returns, it answers when the region has opened, or with
// why it did not (the region stays FAILED_OPEN).
func (s *Server) handleAssignRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.AssignRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if req.GetRegion() == nil {
		return ipc.Reply{}, badRequest("missing region specifier")
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	hr := s.hostedBySpec(req.GetRegion())
	if hr == nil && req.GetRegion().GetType() == hbasepb.RegionSpecifier_REGION_NAME {
		// HBase's master takes an encoded name here too.
		hr = s.hostedBySpec(&hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(),
			Value: req.GetRegion().GetValue()})
	}
	if hr == nil {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassUnknownRegionException, "%s", req.GetRegion().GetValue())
	}
	if hr.r.Load() != nil {
		return ipc.Reply{Msg: &hbasepb.AssignRegionResponse{}}, nil
	}
	if st := hr.table.getState(); st != hbasepb.TableState_ENABLED {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassTableNotEnabledException, "%s is %s: enable it to open its regions", hr.table.name, st)
	}
	if err := s.openRegion(hr); err != nil {
		if errors.Is(err, errFailedOpen) {
			return ipc.Reply{}, ipc.Errorf(ipc.ClassDoNotRetryIOException, "%s is still FAILED_OPEN: %s", hr.info.EncodedName(), hr.failedOpen())
		}
		return ipc.Reply{}, err
	}
	s.log.Info("assigned region", "region", hr.info.EncodedName(), "table", hr.table.name.String())
	return ipc.Reply{Msg: &hbasepb.AssignRegionResponse{}}, nil
}

func (s *Server) handleIsMasterRunning(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.IsMasterRunningResponse{IsMasterRunning: proto.Bool(!s.closed.Load())}}, nil
}

func (s *Server) handleListNamespaceDescriptors(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.ListNamespaceDescriptorsResponse{NamespaceDescriptor: s.namespaceDescriptors()}}, nil
}

func (s *Server) handleListNamespaces(c *ipc.Call) (ipc.Reply, error) {
	resp := &hbasepb.ListNamespacesResponse{}
	for _, d := range s.namespaceDescriptors() {
		resp.NamespaceName = append(resp.NamespaceName, string(d.GetName()))
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetNamespaceDescriptor(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetNamespaceDescriptorRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	d, err := s.getNamespace(req.GetNamespaceName())
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.GetNamespaceDescriptorResponse{NamespaceDescriptor: d}}, nil
}

func (s *Server) handleCreateNamespace(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.CreateNamespaceRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.createNamespace(req.GetNamespaceDescriptor()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.CreateNamespaceResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleModifyNamespace(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ModifyNamespaceRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.modifyNamespace(req.GetNamespaceDescriptor()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.ModifyNamespaceResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleDeleteNamespace(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.DeleteNamespaceRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.deleteNamespace(req.GetNamespaceName()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.DeleteNamespaceResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleModifyTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ModifyTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.modifyTable(req) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.ModifyTableResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleAddColumn(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.AddColumnRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.addColumn(req) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.AddColumnResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleModifyColumn(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ModifyColumnRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.modifyColumn(req) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.ModifyColumnResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleDeleteColumn(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.DeleteColumnRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.deleteColumn(req) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.DeleteColumnResponse{ProcId: proto.Uint64(id)}}, nil
}

func (s *Server) handleFlushTable(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.FlushTableRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.flushTable(req.GetTableName(), req.GetColumnFamily()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.FlushTableResponse{ProcId: proto.Uint64(id)}}, nil
}

// flushTableProc is the signature of HBase's MasterFlushTableProcedureManager,
// which Admin.flush(table) of clients before 2.6 runs through ExecProcedure
// (and 2.6 clients when FlushTable fails).
const flushTableProc = "flush-table-proc"

// execProcedureTimeout is the expected_timeout HBase's ExecProcedure
// answers (SnapshotDescriptionUtils.DEFAULT_MAX_WAIT_TIME, ms).
const execProcedureTimeout = 300000

func (s *Server) handleExecProcedure(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ExecProcedureRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	desc := req.GetProcedure()
	if desc.GetSignature() != flushTableProc {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassDoNotRetryIOException, "The procedure is not registered: %s", desc.GetSignature())
	}
	name, err := ParseTableName(desc.GetInstance())
	if err != nil {
		return ipc.Reply{}, err
	}
	var families [][]byte
	for _, kv := range desc.GetConfiguration() {
		// HConstants.FAMILY_KEY_STR: the families, comma-separated.
		if kv.GetName() == "family" {
			for _, f := range bytes.Split([]byte(kv.GetValue()), []byte(",")) {
				if len(f) > 0 {
					families = append(families, f)
				}
			}
		}
	}
	// The flush runs to the end before the answer, so IsProcedureDone
	// finds it done.
	if err := s.flushTable(name.PB(), families); err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.ExecProcedureResponse{ExpectedTimeout: proto.Int64(execProcedureTimeout)}}, nil
}

func (s *Server) handleIsProcedureDone(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.IsProcedureDoneRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if sig := req.GetProcedure().GetSignature(); sig != flushTableProc {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassDoNotRetryIOException, "The procedure is not registered: %s", sig)
	}
	return ipc.Reply{Msg: &hbasepb.IsProcedureDoneResponse{Done: proto.Bool(true)}}, nil
}

func (s *Server) handleListTableNamesByNamespace(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ListTableNamesByNamespaceRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if err := s.checkNamespace(req.GetNamespaceName()); err != nil {
		return ipc.Reply{}, err
	}
	ts, _ := s.listTables(nil, true, req.GetNamespaceName(), nil)
	resp := &hbasepb.ListTableNamesByNamespaceResponse{}
	for _, t := range ts {
		resp.TableName = append(resp.TableName, t.name.PB())
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleListTableDescriptorsByNamespace(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.ListTableDescriptorsByNamespaceRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if err := s.checkNamespace(req.GetNamespaceName()); err != nil {
		return ipc.Reply{}, err
	}
	ts, _ := s.listTables(nil, true, req.GetNamespaceName(), nil)
	resp := &hbasepb.ListTableDescriptorsByNamespaceResponse{}
	for _, t := range ts {
		resp.TableSchema = append(resp.TableSchema, t.schema())
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetClusterID(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.GetClusterIdResponse{ClusterId: proto.String(s.clusterID)}}, nil
}

func (s *Server) handleGetActiveMaster(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.GetActiveMasterResponse{ServerName: s.serverNamePB()}}, nil
}

func (s *Server) handleGetMetaRegionLocations(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.GetMetaRegionLocationsResponse{MetaLocations: []*hbasepb.RegionLocation{{
		RegionInfo: s.meta.info.PB(), ServerName: s.serverNamePB(), SeqNum: proto.Int64(int64(s.meta.r.Load().Stats().ReadPoint)),
	}}}}, nil
}

func (s *Server) handleGetBootstrapNodes(c *ipc.Call) (ipc.Reply, error) {
	return ipc.Reply{Msg: &hbasepb.GetBootstrapNodesResponse{ServerName: []*hbasepb.ServerName{s.serverNamePB()}}}, nil
}

// handleSnapshot takes a snapshot before it answers. As HBase 2.5+'s
// master it answers a procedure id, which newer clients poll with
// getProcedureResult; older ones (and gohbase) poll IsSnapshotDone within
// expected_timeout. Refusals (the snapshot exists, the table does not)
// come back from the call itself, as from HBase's pre-checks.
func (s *Server) handleSnapshot(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.SnapshotRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.takeSnapshot(req.GetSnapshot(), c.User) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.SnapshotResponse{ExpectedTimeout: proto.Int64(snapshotTimeout), ProcId: proto.Int64(int64(id))}}, nil
}

func (s *Server) handleIsSnapshotDone(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.IsSnapshotDoneRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	d, err := s.snapshotDone(req.GetSnapshot())
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.IsSnapshotDoneResponse{Done: proto.Bool(true), Snapshot: d}}, nil
}

func (s *Server) handleGetCompletedSnapshots(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetCompletedSnapshotsRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	ds, err := s.listSnapshots()
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.GetCompletedSnapshotsResponse{Snapshots: ds}}, nil
}

func (s *Server) handleDeleteSnapshot(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.DeleteSnapshotRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if err := s.deleteSnapshot(req.GetSnapshot().GetName()); err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.DeleteSnapshotResponse{}}, nil
}

// handleRestoreSnapshot restores a snapshot into its table or clones it
// into a new one (the request's snapshot.table names the target), as
// HBase's master: both Admin.restoreSnapshot and Admin.cloneSnapshot of
// HBase 2 clients send this, then poll getProcedureResult.
func (s *Server) handleRestoreSnapshot(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.RestoreSnapshotRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	id, err := s.runProc(func() error { return s.restoreOrClone(req.GetSnapshot()) })
	if err != nil {
		return ipc.Reply{}, err
	}
	return ipc.Reply{Msg: &hbasepb.RestoreSnapshotResponse{ProcId: proto.Uint64(id)}}, nil
}
