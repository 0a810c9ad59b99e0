package client

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// metaRegionName is the region name of hbase:meta's only region.
var metaRegionName = []byte("hbase:meta,,1")

// metaTableName is the name of the catalog table, which lists every
// region but its own: its one region is found through ZooKeeper.
const metaTableName = "hbase:meta"

// metaScanRows is how many meta rows one Scan RPC asks for.
const metaScanRows = 1000

// regionLoc is one region of a table and where it is served.
type regionLoc struct {
	table      string // normalized name
	name       []byte // region name, the key of its meta row
	start, end []byte // end empty: to the end of the table
	addr       string // host:port, "" if unassigned
	// info is the region's info:regioninfo, what a split request names
	// the region with; nil for hbase:meta.
	regionInfo *hbasepb.RegionInfo
}

func (r *regionLoc) contains(row []byte) bool {
	return bytes.Compare(row, r.start) >= 0 && (len(r.end) == 0 || bytes.Compare(row, r.end) < 0)
}

func (r *regionLoc) spec() *hbasepb.RegionSpecifier {
	return &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: r.name}
}

// regionCache caches each table's regions, sorted by start key. A table's
// regions are loaded all at once; concurrent lookups of a table not in the
// cache share one load.
type regionCache struct {
	mu     sync.Mutex
	tables map[string]*tableRegions
}

type tableRegions struct {
	ready   chan struct{} // closed when the load is over
	regions []*regionLoc  // set before ready is closed
	err     error         // set before ready is closed
}

func (rc *regionCache) init() { rc.tables = map[string]*tableRegions{} }

// invalidate forgets table's regions.
func (rc *regionCache) invalidate(table string) {
	rc.mu.Lock()
	delete(rc.tables, normalizeTable(table))
	rc.mu.Unlock()
}

// invalidateServer forgets every table with a region on addr.
func (rc *regionCache) invalidateServer(addr string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for name, tr := range rc.tables {
		select {
		case <-tr.ready:
		default:
			continue // loading: it reads meta afresh anyway
		}
		for _, r := range tr.regions {
			if r.addr == addr {
				delete(rc.tables, name)
				break
			}
		}
	}
}

// normalizeTable maps "default:t" to "t", the form of meta rows.
func normalizeTable(table string) string {
	return strings.TrimPrefix(table, "default:")
}

// splitTable returns a table name's namespace and qualifier.
func splitTable(table string) (ns, qualifier string) {
	if ns, q, ok := strings.Cut(table, ":"); ok {
		return ns, q
	}
	return "default", table
}

func tableNamePB(table string) *hbasepb.TableName {
	ns, q := splitTable(table)
	return &hbasepb.TableName{Namespace: []byte(ns), Qualifier: []byte(q)}
}

func tableNameString(t *hbasepb.TableName) string {
	ns := string(t.GetNamespace())
	if ns == "" || ns == "default" {
		return string(t.GetQualifier())
	}
	return ns + ":" + string(t.GetQualifier())
}

// errNoRegion marks a lookup that found no region for a row: meta changed
// under the cache, so the caller relocates.
var errNoRegion = errors.New("client: no region contains the row")

// tableRegions returns table's regions, loading them from meta if needed.
func (c *Client) tableRegions(ctx context.Context, table string) ([]*regionLoc, error) {
	table = normalizeTable(table)
	if table == metaTableName {
		addr, err := c.metaAddr(ctx)
		if err != nil {
			return nil, err
		}
		return []*regionLoc{{table: table, name: metaRegionName, addr: addr}}, nil
	}
	rc := &c.regions
	rc.mu.Lock()
	tr := rc.tables[table]
	if tr == nil {
		tr = &tableRegions{ready: make(chan struct{})}
		rc.tables[table] = tr
		go func() {
			// The load is shared, so it runs on the client's context, not
			// on the first caller's.
			lctx, cancel := context.WithTimeout(c.ctx, c.opts.Timeout)
			defer cancel()
			tr.regions, tr.err = c.loadRegions(lctx, table)
			if tr.err != nil {
				rc.mu.Lock()
				if rc.tables[table] == tr {
					delete(rc.tables, table)
				}
				rc.mu.Unlock()
			}
			close(tr.ready)
		}()
	}
	rc.mu.Unlock()
	select {
	case <-tr.ready:
		return tr.regions, tr.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// locate returns the region of table that contains row.
func (c *Client) locate(ctx context.Context, table string, row []byte) (*regionLoc, error) {
	regions, err := c.tableRegions(ctx, table)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(regions), func(i int) bool { return bytes.Compare(regions[i].start, row) > 0 }) - 1
	if i < 0 || !regions[i].contains(row) {
		return nil, errors.Mark(errors.Newf("no region of %s contains row %q", table, row), errNoRegion)
	}
	return regions[i], nil
}

// locateLast returns the last region of table.
func (c *Client) locateLast(ctx context.Context, table string) (*regionLoc, error) {
	regions, err := c.tableRegions(ctx, table)
	if err != nil {
		return nil, err
	}
	last := regions[len(regions)-1]
	if len(last.end) != 0 {
		return nil, errors.Mark(errors.Newf("the last region of %s ends at %q", table, last.end), errNoRegion)
	}
	return last, nil
}

// locateBefore returns the region of table that ends at key: the one
// before the region that starts at key.
func (c *Client) locateBefore(ctx context.Context, table string, key []byte) (*regionLoc, error) {
	regions, err := c.tableRegions(ctx, table)
	if err != nil {
		return nil, err
	}
	for _, r := range regions {
		if bytes.Equal(r.end, key) {
			return r, nil
		}
	}
	return nil, errors.Mark(errors.Newf("no region of %s ends at %q", table, key), errNoRegion)
}

// loadRegions reads table's regions from hbase:meta: a forward scan of
// the rows "<table>,..." (hbase:meta is ordered by table, then start key),
// family info.
func (c *Client) loadRegions(ctx context.Context, table string) ([]*regionLoc, error) {
	addr, err := c.metaAddr(ctx)
	if err != nil {
		return nil, err
	}
	prefix := []byte(table + ",")
	scan := &hbasepb.Scan{
		Column:   []*hbasepb.Column{{Family: []byte("info")}},
		StartRow: prefix,
		// No table name has a byte below '-', so "<table>\x00" sorts after
		// every row of table and before every row of the next table.
		StopRow: []byte(table + "\x00"),
	}
	meta := &regionLoc{table: metaTableName, name: metaRegionName, addr: addr}
	req := &hbasepb.ScanRequest{Region: meta.spec(), Scan: scan, NumberOfRows: proto.Uint32(metaScanRows),
		ClientHandlesPartials: proto.Bool(true), ClientHandlesHeartbeats: proto.Bool(true)}
	var out []*regionLoc
	for {
		resp := &hbasepb.ScanResponse{}
		cb, err := c.call(ctx, addr, clientService, "Scan", req, nil, resp)
		if err != nil {
			if classify(err) == retryServer {
				c.handleFailure(err, addr, "")
			}
			return nil, errors.Wrapf(err, "scanning hbase:meta on %s for %s", addr, table)
		}
		results, err := decodeScanResponse(resp, cb)
		if err != nil {
			return nil, err
		}
		done := false
		for _, r := range results {
			loc, ok, err := parseMetaRow(r, table)
			if err != nil {
				return nil, err
			}
			if loc == nil {
				if !ok {
					done = true // past the table
					break
				}
				continue
			}
			out = append(out, loc)
		}
		if done {
			if resp.ScannerId != nil && resp.GetMoreResultsInRegion() {
				c.closeScanner(addr, resp.GetScannerId())
			}
			break
		}
		if !resp.GetMoreResultsInRegion() || !resp.GetMoreResults() || resp.ScannerId == nil {
			break // the server has closed the scanner
		}
		req = &hbasepb.ScanRequest{ScannerId: resp.ScannerId, NumberOfRows: proto.Uint32(metaScanRows)}
	}
	if len(out) == 0 {
		return nil, errors.Wrapf(&ipc.Exception{Class: classTableNotFound, Message: table},
			"no regions in hbase:meta")
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].start, out[j].start) < 0 })
	return out, nil
}

// closeScanner closes a server scanner in the background, best effort.
func (c *Client) closeScanner(addr string, id uint64) {
	go func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.Timeout)
		defer cancel()
		_, _ = c.call(ctx, addr, clientService, "Scan",
			&hbasepb.ScanRequest{ScannerId: proto.Uint64(id), CloseScanner: proto.Bool(true), NumberOfRows: proto.Uint32(0)}, nil, nil)
	}()
}

// parseMetaRow decodes a meta row of table. It returns nil and true for a
// row to skip (offline region), nil and false for a row of another table.
func parseMetaRow(r *Result, table string) (*regionLoc, bool, error) {
	if r.Empty() {
		return nil, true, nil
	}
	row := r.Row()
	if !bytes.HasPrefix(row, []byte(table+",")) {
		return nil, false, nil
	}
	v := r.Value([]byte("info"), []byte("regioninfo"))
	if v == nil {
		return nil, true, nil
	}
	var ri hbasepb.RegionInfo
	if err := hbasepb.ParsePB(v, &ri); err != nil {
		return nil, false, errors.Wrapf(err, "hbase:meta row %q: info:regioninfo", row)
	}
	if tableNameString(ri.GetTableName()) != table {
		return nil, false, nil
	}
	if ri.GetOffline() || ri.GetReplicaId() != 0 {
		return nil, true, nil
	}
	return &regionLoc{table: table, name: append([]byte(nil), row...), start: ri.GetStartKey(), end: ri.GetEndKey(), regionInfo: &ri,
		addr: string(r.Value([]byte("info"), []byte("server")))}, true, nil
}

// decodeScanResponse returns a scan response's results: from the cellblock
// per cells_per_result when present, else inline.
func decodeScanResponse(resp *hbasepb.ScanResponse, cb []byte) ([]*Result, error) {
	var it encoding.CellBlockIter
	it.Init(cb, false)
	flags := resp.GetPartialFlagPerResult()
	var out []*Result
	if n := resp.GetCellsPerResult(); len(n) > 0 {
		for i, k := range n {
			cells, err := takeCells(&it, int(k))
			if err != nil {
				return nil, err
			}
			r := &Result{Cells: cells}
			if i < len(flags) {
				r.Partial = flags[i]
			}
			out = append(out, r)
		}
		return out, nil
	}
	for i, p := range resp.GetResults() {
		r, err := decodeResult(p, &it)
		if err != nil {
			return nil, err
		}
		if i < len(flags) {
			r.Partial = r.Partial || flags[i]
		}
		out = append(out, r)
	}
	return out, nil
}

// invalidateAll forgets every table's regions.
func (rc *regionCache) invalidateAll() {
	rc.mu.Lock()
	rc.tables = map[string]*tableRegions{}
	rc.mu.Unlock()
}
