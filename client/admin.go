package client

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// procPollMax is the longest wait between two polls of a procedure.
const procPollMax = 500 * time.Millisecond

// Family describes a column family: its name and HBase's attributes
// (VERSIONS, MIN_VERSIONS, TTL, BLOOMFILTER, DATA_BLOCK_ENCODING,
// COMPRESSION, BLOCKSIZE, IN_MEMORY, BLOCKCACHE, ...), as strings, and its
// CONFIGURATION map (HBase's per-family configuration overrides).
type Family struct {
	Name          string
	Attributes    map[string]string
	Configuration map[string]string
}

// TableDescriptor describes a table: HBase's TableDescriptor.
type TableDescriptor struct {
	// Name is "namespace:table", or "table" in the default namespace.
	Name       string
	Families   []Family
	Attributes map[string]string
}

func attrsPB(m map[string]string) []*hbasepb.BytesBytesPair {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*hbasepb.BytesBytesPair
	for _, k := range keys {
		out = append(out, &hbasepb.BytesBytesPair{First: []byte(k), Second: []byte(m[k])})
	}
	return out
}

func attrsFromPB(ps []*hbasepb.BytesBytesPair) map[string]string {
	if len(ps) == 0 {
		return nil
	}
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[string(p.GetFirst())] = string(p.GetSecond())
	}
	return m
}

func configPB(m map[string]string) []*hbasepb.NameStringPair {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*hbasepb.NameStringPair
	for _, k := range keys {
		out = append(out, &hbasepb.NameStringPair{Name: proto.String(k), Value: proto.String(m[k])})
	}
	return out
}

func configFromPB(ps []*hbasepb.NameStringPair) map[string]string {
	if len(ps) == 0 {
		return nil
	}
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.GetName()] = p.GetValue()
	}
	return m
}

func (td *TableDescriptor) pb() *hbasepb.TableSchema {
	ts := &hbasepb.TableSchema{TableName: tableNamePB(td.Name), Attributes: attrsPB(td.Attributes)}
	for _, f := range td.Families {
		ts.ColumnFamilies = append(ts.ColumnFamilies, f.pb())
	}
	return ts
}

func (f Family) pb() *hbasepb.ColumnFamilySchema {
	return &hbasepb.ColumnFamilySchema{Name: []byte(f.Name), Attributes: attrsPB(f.Attributes), Configuration: configPB(f.Configuration)}
}

func descriptorFromPB(ts *hbasepb.TableSchema) TableDescriptor {
	td := TableDescriptor{Name: tableNameString(ts.GetTableName()), Attributes: attrsFromPB(ts.GetAttributes())}
	for _, cf := range ts.GetColumnFamilies() {
		td.Families = append(td.Families, Family{Name: string(cf.GetName()), Attributes: attrsFromPB(cf.GetAttributes()),
			Configuration: configFromPB(cf.GetConfiguration())})
	}
	return td
}

// masterCall makes a MasterService call, finding the master in ZooKeeper
// and retrying when it cannot be reached or is not ready.
func (c *Client) masterCall(ctx context.Context, method string, req, resp proto.Message) error {
	for attempt := 0; ; attempt++ {
		addr, err := c.masterAddr(ctx)
		if err == nil {
			_, err = c.call(ctx, addr, masterService, method, req, nil, resp)
		}
		if err == nil {
			return nil
		}
		k := classify(err)
		if k != retryServer && k != retryBackoff || attempt >= c.opts.Retries || ctx.Err() != nil {
			return errors.Wrapf(err, "client: %s", method)
		}
		c.handleFailure(err, addr, "")
		c.log.Debug("client: retrying master call", "method", method, "attempt", attempt+1, "err", err.Error())
		if berr := c.backoff(ctx, attempt); berr != nil {
			return errors.Wrapf(errors.CombineErrors(err, berr), "client: %s", method)
		}
	}
}

// waitProcedure polls getProcedureResult until procedure id finishes, and
// returns its exception, if any, as an *ipc.Exception.
func (c *Client) waitProcedure(ctx context.Context, op string, id uint64) error {
	wait := 10 * time.Millisecond
	for {
		resp := &hbasepb.GetProcedureResultResponse{}
		if err := c.masterCall(ctx, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(id)}, resp); err != nil {
			return errors.Wrapf(err, "client: %s: waiting for procedure %d", op, id)
		}
		switch resp.GetState() {
		case hbasepb.GetProcedureResultResponse_FINISHED:
			if e := resp.GetException(); e != nil {
				g := e.GetGenericException()
				return errors.Wrapf(&ipc.Exception{Class: g.GetClassName(), Message: g.GetMessage()}, "client: %s", op)
			}
			return nil
		case hbasepb.GetProcedureResultResponse_NOT_FOUND:
			return errors.Newf("client: %s: procedure %d not found", op, id)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Wrapf(ctx.Err(), "client: %s: waiting for procedure %d", op, id)
		}
		wait = min(2*wait, procPollMax)
	}
}

// runProcedure makes an admin call that starts a procedure and waits for
// it to finish.
func (c *Client) runProcedure(ctx context.Context, op, method string, req proto.Message, resp interface {
	proto.Message
	GetProcId() uint64
}) error {
	if err := c.masterCall(ctx, method, req, resp); err != nil {
		return errors.Wrapf(err, "client: %s", op)
	}
	return c.waitProcedure(ctx, op, resp.GetProcId())
}

// CreateTable creates a table with one region per range between the split
// keys (one region if none) and waits until it is enabled.
func (c *Client) CreateTable(ctx context.Context, td TableDescriptor, splitKeys [][]byte) error {
	c.regions.invalidate(td.Name)
	return c.runProcedure(ctx, "create table "+td.Name, "CreateTable",
		&hbasepb.CreateTableRequest{TableSchema: td.pb(), SplitKeys: splitKeys}, &hbasepb.CreateTableResponse{})
}

// DisableTable disables a table and waits until it is disabled.
func (c *Client) DisableTable(ctx context.Context, table string) error {
	defer c.regions.invalidate(table)
	return c.runProcedure(ctx, "disable table "+table, "DisableTable",
		&hbasepb.DisableTableRequest{TableName: tableNamePB(table)}, &hbasepb.DisableTableResponse{})
}

// EnableTable enables a table and waits until it is enabled.
func (c *Client) EnableTable(ctx context.Context, table string) error {
	defer c.regions.invalidate(table)
	return c.runProcedure(ctx, "enable table "+table, "EnableTable",
		&hbasepb.EnableTableRequest{TableName: tableNamePB(table)}, &hbasepb.EnableTableResponse{})
}

// DeleteTable deletes a disabled table.
func (c *Client) DeleteTable(ctx context.Context, table string) error {
	defer c.regions.invalidate(table)
	return c.runProcedure(ctx, "delete table "+table, "DeleteTable",
		&hbasepb.DeleteTableRequest{TableName: tableNamePB(table)}, &hbasepb.DeleteTableResponse{})
}

// TruncateTable empties a disabled table, keeping its region boundaries
// if preserveSplits. As in HBase 2, the table is enabled afterwards.
func (c *Client) TruncateTable(ctx context.Context, table string, preserveSplits bool) error {
	defer c.regions.invalidate(table)
	return c.runProcedure(ctx, "truncate table "+table, "TruncateTable",
		&hbasepb.TruncateTableRequest{TableName: tableNamePB(table), PreserveSplits: proto.Bool(preserveSplits)},
		&hbasepb.TruncateTableResponse{})
}

// ListTableNames returns the names of the tables matching regex (all if
// empty) in namespace (all if empty), with the system tables if
// includeSys.
func (c *Client) ListTableNames(ctx context.Context, regex string, includeSys bool, namespace string) ([]string, error) {
	req := &hbasepb.GetTableNamesRequest{IncludeSysTables: proto.Bool(includeSys)}
	if regex != "" {
		req.Regex = proto.String(regex)
	}
	if namespace != "" {
		req.Namespace = proto.String(namespace)
	}
	resp := &hbasepb.GetTableNamesResponse{}
	if err := c.masterCall(ctx, "GetTableNames", req, resp); err != nil {
		return nil, err
	}
	var out []string
	for _, t := range resp.GetTableNames() {
		out = append(out, tableNameString(t))
	}
	return out, nil
}

// TableDescriptors returns the descriptors of the named tables, or of
// every user table if none is named.
func (c *Client) TableDescriptors(ctx context.Context, tables ...string) ([]TableDescriptor, error) {
	req := &hbasepb.GetTableDescriptorsRequest{}
	for _, t := range tables {
		req.TableNames = append(req.TableNames, tableNamePB(t))
	}
	resp := &hbasepb.GetTableDescriptorsResponse{}
	if err := c.masterCall(ctx, "GetTableDescriptors", req, resp); err != nil {
		return nil, err
	}
	var out []TableDescriptor
	for _, ts := range resp.GetTableSchema() {
		out = append(out, descriptorFromPB(ts))
	}
	return out, nil
}

// TableDescriptor returns the descriptor of one table, or an error that
// IsException(err, "TableNotFoundException") recognises.
func (c *Client) TableDescriptor(ctx context.Context, table string) (TableDescriptor, error) {
	tds, err := c.TableDescriptors(ctx, table)
	if err != nil {
		return TableDescriptor{}, err
	}
	for _, td := range tds {
		if normalizeTable(td.Name) == normalizeTable(table) {
			return td, nil
		}
	}
	return TableDescriptor{}, errors.Wrapf(&ipc.Exception{Class: classTableNotFound, Message: table}, "client: table descriptor")
}

// TableState is the state of a table; the values are HBase's.
type TableState int32

// Table states.
const (
	TableEnabled   = TableState(hbasepb.TableState_ENABLED)
	TableDisabled  = TableState(hbasepb.TableState_DISABLED)
	TableDisabling = TableState(hbasepb.TableState_DISABLING)
	TableEnabling  = TableState(hbasepb.TableState_ENABLING)
)

// String returns HBase's name of the state.
func (s TableState) String() string { return hbasepb.TableState_State(s).String() }

// TableState returns the state of a table.
func (c *Client) TableState(ctx context.Context, table string) (TableState, error) {
	resp := &hbasepb.GetTableStateResponse{}
	if err := c.masterCall(ctx, "GetTableState", &hbasepb.GetTableStateRequest{TableName: tableNamePB(table)}, resp); err != nil {
		return 0, err
	}
	return TableState(resp.GetTableState().GetState()), nil
}

// ClusterStatus is a summary of HBase's ClusterStatus.
type ClusterStatus struct {
	ClusterID string
	// Master and LiveServers are "host:port".
	Master      string
	LiveServers []string
	// Regions counts the regions online on the live servers.
	Regions    int
	BalancerOn bool
	// Proto is the whole message.
	Proto *hbasepb.ClusterStatus
}

// ClusterStatus returns the cluster's status.
func (c *Client) ClusterStatus(ctx context.Context) (*ClusterStatus, error) {
	resp := &hbasepb.GetClusterStatusResponse{}
	if err := c.masterCall(ctx, "GetClusterStatus", &hbasepb.GetClusterStatusRequest{}, resp); err != nil {
		return nil, err
	}
	p := resp.GetClusterStatus()
	cs := &ClusterStatus{ClusterID: p.GetClusterId().GetClusterId(), BalancerOn: p.GetBalancerOn(), Proto: p}
	if m := p.GetMaster(); m != nil {
		cs.Master = hostPort(m.GetHostName(), m.GetPort())
	}
	for _, ls := range p.GetLiveServers() {
		cs.LiveServers = append(cs.LiveServers, hostPort(ls.GetServer().GetHostName(), ls.GetServer().GetPort()))
		cs.Regions += len(ls.GetServerLoad().GetRegionLoads())
	}
	return cs, nil
}

// SetBalancer turns the balancer on or off and returns its previous
// state.
func (c *Client) SetBalancer(ctx context.Context, on bool) (bool, error) {
	resp := &hbasepb.SetBalancerRunningResponse{}
	if err := c.masterCall(ctx, "SetBalancerRunning", &hbasepb.SetBalancerRunningRequest{On: proto.Bool(on),
		Synchronous: proto.Bool(true)}, resp); err != nil {
		return false, err
	}
	return resp.GetPrevBalanceValue(), nil
}

// MoveRegion asks the master to move the region with the given encoded
// name (the 32 hex digits at the end of a region name) to another server
// of its choosing.
func (c *Client) MoveRegion(ctx context.Context, encodedName string) error {
	defer c.regions.invalidateAll()
	return c.masterCall(ctx, "MoveRegion", &hbasepb.MoveRegionRequest{Region: &hbasepb.RegionSpecifier{
		Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(), Value: []byte(encodedName)}}, &hbasepb.MoveRegionResponse{})
}

// AssignRegion opens a region that is not open (HBase's Admin.assign): one
// left FAILED_OPEN when its server could not open it, once what kept it
// from opening is mended. name is a full region name or an encoded one.
// It returns the server's reason if the region still does not open.
func (c *Client) AssignRegion(ctx context.Context, name []byte) error {
	defer c.regions.invalidateAll()
	return c.masterCall(ctx, "AssignRegion", &hbasepb.AssignRegionRequest{Region: &hbasepb.RegionSpecifier{
		Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: name}}, &hbasepb.AssignRegionResponse{})
}

// RegionInfo describes one region of a table as hbase:meta lists it.
type RegionInfo struct {
	// Name is the region name, "table,startKey,regionId.encodedName.".
	Name []byte
	// EncodedName is the 32 hex digits of Name's end.
	EncodedName      string
	StartKey, EndKey []byte
	// Server is "host:port", "" if the region is not assigned.
	Server string
}

// Regions returns the regions of a table, in key order, as hbase:meta
// lists them now.
func (c *Client) Regions(ctx context.Context, table string) ([]RegionInfo, error) {
	var locs []*regionLoc
	for attempt := 0; ; attempt++ {
		c.regions.invalidate(table)
		var err error
		if locs, err = c.tableRegions(ctx, table); err == nil {
			break
		}
		// hbase:meta moved (the server restarted, say): the load dropped
		// its location, so the next one asks ZooKeeper again.
		if k := classify(err); (k != retryServer && k != retryBackoff) || attempt >= c.opts.Retries || ctx.Err() != nil {
			return nil, errors.Wrapf(err, "client: regions of %s", table)
		}
		if berr := c.backoff(ctx, attempt); berr != nil {
			return nil, errors.Wrapf(errors.CombineErrors(err, berr), "client: regions of %s", table)
		}
	}
	out := make([]RegionInfo, len(locs))
	for i, l := range locs {
		out[i] = RegionInfo{Name: l.name, EncodedName: encodedName(l.name), StartKey: l.start, EndKey: l.end, Server: l.addr}
	}
	return out, nil
}

// encodedName returns the encoded name at the end of a region name
// "table,startKey,regionId.encoded.", or "" for an old-style name.
func encodedName(name []byte) string {
	if len(name) < 2 || name[len(name)-1] != '.' {
		return ""
	}
	s := string(name[:len(name)-1])
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return s[i+1:]
		}
	}
	return ""
}

// ModifyTable replaces a table's descriptor (families and table attributes)
// and waits until every region has it, as HBase's Admin.modifyTable: new
// families are writable at once, removed ones are deleted with their data,
// and changed options apply as they do in HBase (VERSIONS and TTL to reads
// at once, block options to the files written from then on). The table may
// be enabled or disabled.
func (c *Client) ModifyTable(ctx context.Context, td TableDescriptor) error {
	return c.runProcedure(ctx, "modify table "+td.Name, "ModifyTable",
		&hbasepb.ModifyTableRequest{TableName: tableNamePB(td.Name), TableSchema: td.pb()}, &hbasepb.ModifyTableResponse{})
}

// AddColumn adds a column family to a table (HBase's Admin.addColumnFamily).
// A family the table has is refused with InvalidFamilyOperationException.
func (c *Client) AddColumn(ctx context.Context, table string, f Family) error {
	return c.runProcedure(ctx, "add column family "+f.Name+" to "+table, "AddColumn",
		&hbasepb.AddColumnRequest{TableName: tableNamePB(table), ColumnFamilies: f.pb()}, &hbasepb.AddColumnResponse{})
}

// ModifyColumn replaces the attributes of a table's column family (HBase's
// Admin.modifyColumnFamily: attributes left out return to their defaults).
func (c *Client) ModifyColumn(ctx context.Context, table string, f Family) error {
	return c.runProcedure(ctx, "modify column family "+f.Name+" of "+table, "ModifyColumn",
		&hbasepb.ModifyColumnRequest{TableName: tableNamePB(table), ColumnFamilies: f.pb()}, &hbasepb.ModifyColumnResponse{})
}

// DeleteColumn deletes a column family and all its data from a table
// (HBase's Admin.deleteColumnFamily). The last family of a table cannot
// be deleted.
func (c *Client) DeleteColumn(ctx context.Context, table, family string) error {
	return c.runProcedure(ctx, "delete column family "+family+" of "+table, "DeleteColumn",
		&hbasepb.DeleteColumnRequest{TableName: tableNamePB(table), ColumnName: []byte(family)}, &hbasepb.DeleteColumnResponse{})
}

// flushTableProc is HBase's legacy table flush procedure, for servers
// without MasterService.FlushTable (HBase before 2.6).
const flushTableProc = "flush-table-proc"

// FlushTable flushes every region of a table (HBase's Admin.flush): the
// named families, or all. As HBase 2.6's client, it asks the master for
// FlushTable and falls back to the flush-table-proc procedure when the
// master does not have it.
func (c *Client) FlushTable(ctx context.Context, table string, families ...string) error {
	req := &hbasepb.FlushTableRequest{TableName: tableNamePB(table)}
	for _, f := range families {
		req.ColumnFamily = append(req.ColumnFamily, []byte(f))
	}
	err := c.runProcedure(ctx, "flush table "+table, "FlushTable", req, &hbasepb.FlushTableResponse{})
	if !IsException(err, ipc.ClassDoNotRetryIOException) && !IsException(err, ipc.ClassUnknownProtocolException) &&
		!IsException(err, ipc.ClassUnsupportedOperation) {
		return err
	}
	desc := &hbasepb.ProcedureDescription{Signature: proto.String(flushTableProc), Instance: proto.String(normalizeTable(table))}
	if len(families) > 0 {
		desc.Configuration = []*hbasepb.NameStringPair{{Name: proto.String("family"), Value: proto.String(strings.Join(families, ","))}}
	}
	if err := c.masterCall(ctx, "ExecProcedure", &hbasepb.ExecProcedureRequest{Procedure: desc}, &hbasepb.ExecProcedureResponse{}); err != nil {
		return errors.Wrapf(err, "client: flush table %s", table)
	}
	wait := 10 * time.Millisecond
	for {
		resp := &hbasepb.IsProcedureDoneResponse{}
		if err := c.masterCall(ctx, "IsProcedureDone", &hbasepb.IsProcedureDoneRequest{Procedure: desc}, resp); err != nil {
			return errors.Wrapf(err, "client: flush table %s", table)
		}
		if resp.GetDone() {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Wrapf(ctx.Err(), "client: flush table %s", table)
		}
		wait = min(2*wait, procPollMax)
	}
}
