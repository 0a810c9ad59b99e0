package client

import (
	"bytes"
	"context"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// metaNines ends the meta key of a row lookup: HBase's HConstants.NINES, a
// region id above every real one, so the key sorts after every region row
// whose start key equals the row.
const metaNines = "99999999999999"

// MetaLookupKey returns the hbase:meta key a client looks up row of table
// at: "<table>,<row>,99999999999999" (HBase's RegionInfo.createRegionName
// with NINES). The region that contains row has the last meta row at or
// before it.
func MetaLookupKey(table string, row []byte) []byte {
	table = normalizeTable(table)
	k := make([]byte, 0, len(table)+len(row)+2+len(metaNines))
	k = append(k, table...)
	k = append(k, ',')
	k = append(k, row...)
	k = append(k, ',')
	return append(k, metaNines...)
}

// LocateRegion returns the region of table that contains row, as HBase's
// RegionLocator.getRegionLocation(row, reload). Without reload it answers
// from the client's region cache. With reload it reads hbase:meta afresh,
// as a client does after a region moved: one reversed Scan RPC from
// MetaLookupKey that returns one row, the last region of table starting at
// or before row. A reload that finds a region other than the cached one
// drops the table's cached regions.
func (c *Client) LocateRegion(ctx context.Context, table string, row []byte, reload bool) (RegionInfo, error) {
	table = normalizeTable(table)
	if !reload || table == metaTableName {
		loc, err := c.locate(ctx, table, row)
		if err != nil {
			return RegionInfo{}, errors.Wrapf(err, "client: locating row %q of %s", row, table)
		}
		return loc.info(), nil
	}
	for attempt := 0; ; attempt++ {
		loc, addr, err := c.lookupMeta(ctx, table, row)
		if err == nil {
			c.regions.dropIfStale(table, loc)
			return loc.info(), nil
		}
		// What meta says is the answer, hole or not: only failures to
		// reach meta are retried.
		if errors.Is(err, errNoRegion) || !c.handleFailure(err, addr, metaTableName) || attempt >= c.opts.Retries || ctx.Err() != nil {
			return RegionInfo{}, errors.Wrapf(err, "client: locating row %q of %s in hbase:meta", row, table)
		}
		if berr := c.backoff(ctx, attempt); berr != nil {
			return RegionInfo{}, errors.Wrapf(errors.CombineErrors(err, berr), "client: locating row %q of %s", row, table)
		}
	}
}

// lookupMeta makes the reversed one-row meta scan of LocateRegion. It
// returns the address of meta's server for handleFailure.
func (c *Client) lookupMeta(ctx context.Context, table string, row []byte) (*regionLoc, string, error) {
	addr, err := c.metaAddr(ctx)
	if err != nil {
		return nil, "", err
	}
	meta := &regionLoc{table: metaTableName, name: metaRegionName, addr: addr}
	// The stop row "<table>,," (inclusive) sorts before every region row of
	// table, as in HBase's locator, so the scan never leaves the table.
	scan := &hbasepb.Scan{
		Column:         []*hbasepb.Column{{Family: []byte("info")}},
		StartRow:       MetaLookupKey(table, row),
		StopRow:        []byte(table + ",,"),
		IncludeStopRow: proto.Bool(true),
		Reversed:       proto.Bool(true),
		Caching:        proto.Uint32(1),
	}
	req := &hbasepb.ScanRequest{Region: meta.spec(), Scan: scan, NumberOfRows: proto.Uint32(1),
		CloseScanner: proto.Bool(true), ClientHandlesPartials: proto.Bool(true), ClientHandlesHeartbeats: proto.Bool(true)}
	resp := &hbasepb.ScanResponse{}
	cb, err := c.call(ctx, addr, clientService, "Scan", req, nil, resp)
	if err != nil {
		return nil, addr, err
	}
	results, err := decodeScanResponse(resp, cb)
	if err != nil {
		return nil, addr, err
	}
	for _, r := range results {
		loc, ok, err := parseMetaRow(r, table)
		if err != nil {
			return nil, addr, err
		}
		if loc == nil {
			if !ok {
				break
			}
			// An offline region (a split parent) comes before its
			// daughters only in a meta being changed; HBase's locator
			// reports it as not online, and so do we.
			return nil, addr, errors.Mark(errors.Newf("the region of %s at %q is offline", table, row), errNoRegion)
		}
		if !loc.contains(row) {
			return nil, addr, errors.Mark(errors.Newf("no region of %s contains row %q: hbase:meta has %s, which ends at %q",
				table, row, loc.name, loc.end), errNoRegion)
		}
		return loc, addr, nil
	}
	return nil, addr, errors.Wrapf(&ipc.Exception{Class: classTableNotFound, Message: table},
		"no region of %s at or before row %q in hbase:meta", table, row)
}

// info returns r as the exported RegionInfo.
func (r *regionLoc) info() RegionInfo {
	return RegionInfo{Name: r.name, EncodedName: encodedName(r.name), StartKey: r.start, EndKey: r.end, Server: r.addr}
}

// dropIfStale forgets table's cached regions if loc, just read from meta,
// is not the cached region at its start key.
func (rc *regionCache) dropIfStale(table string, loc *regionLoc) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	tr := rc.tables[table]
	if tr == nil {
		return
	}
	select {
	case <-tr.ready:
	default:
		return // loading: it reads meta afresh anyway
	}
	rs := tr.regions
	i := sort.Search(len(rs), func(i int) bool { return bytes.Compare(rs[i].start, loc.start) > 0 }) - 1
	if i < 0 || !bytes.Equal(rs[i].name, loc.name) || rs[i].addr != loc.addr || !bytes.Equal(rs[i].end, loc.end) {
		delete(rc.tables, table)
	}
}
