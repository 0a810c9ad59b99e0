package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// adminService is the region server's AdminService: calls about the
// regions a server hosts (flush, compact, store files) and the server
// itself (WAL roll, server info). HBase's Admin sends them to the server
// of the region.
const adminService = "AdminService"

// withRegionName runs fn on the server of the region named name (as
// Regions returns it), relocating and retrying as the error says.
func (c *Client) withRegionName(ctx context.Context, op string, name []byte, fn func(loc *regionLoc) error) error {
	i := bytes.IndexByte(name, ',')
	if i <= 0 {
		return errors.Newf("client: %s: %q is not a region name", op, name)
	}
	table := string(name[:i])
	for attempt := 0; ; attempt++ {
		regions, err := c.tableRegions(ctx, table)
		addr := ""
		if err == nil {
			err = errors.Mark(errors.Newf("no region %q in hbase:meta", name), errNoRegion)
			for _, loc := range regions {
				if bytes.Equal(loc.name, name) {
					addr = loc.addr
					err = fn(loc)
					break
				}
			}
		}
		if err == nil {
			return nil
		}
		if !c.handleFailure(err, addr, table) || attempt >= c.opts.Retries || ctx.Err() != nil {
			return errors.Wrapf(err, "client: %s of region %s", op, name)
		}
		if berr := c.backoff(ctx, attempt); berr != nil {
			return errors.Wrapf(errors.CombineErrors(err, berr), "client: %s of region %s", op, name)
		}
	}
}

// FlushRegion flushes one region's memstores (HBase's Admin.flushRegion).
// regionName is a RegionInfo's Name.
func (c *Client) FlushRegion(ctx context.Context, regionName []byte) error {
	return c.withRegionName(ctx, "flush", regionName, func(loc *regionLoc) error {
		_, err := c.call(ctx, loc.addr, adminService, "FlushRegion", &hbasepb.FlushRegionRequest{Region: loc.spec()}, nil, &hbasepb.FlushRegionResponse{})
		return err
	})
}

// CompactRegion asks for a compaction of one region (major: of all its
// files), of the named families or all. As in HBase it returns once the
// compaction is queued; CompactionState says when it is done.
func (c *Client) CompactRegion(ctx context.Context, regionName []byte, major bool, families ...string) error {
	return c.withRegionName(ctx, "compact", regionName, func(loc *regionLoc) error {
		return c.compactLoc(ctx, loc, major, families)
	})
}

func (c *Client) compactLoc(ctx context.Context, loc *regionLoc, major bool, families []string) error {
	reqs := []*hbasepb.CompactRegionRequest{{Region: loc.spec(), Major: proto.Bool(major)}}
	if len(families) > 0 {
		reqs = reqs[:0]
		for _, f := range families {
			reqs = append(reqs, &hbasepb.CompactRegionRequest{Region: loc.spec(), Major: proto.Bool(major), Family: []byte(f)})
		}
	}
	for _, req := range reqs {
		if _, err := c.call(ctx, loc.addr, adminService, "CompactRegion", req, nil, &hbasepb.CompactRegionResponse{}); err != nil {
			return err
		}
	}
	return nil
}

// CompactTable asks for a compaction of every region of a table (HBase's
// Admin.compact and Admin.majorCompact): the named families, or all. It
// returns once the compactions are queued; TableCompactionState says when
// they are done.
func (c *Client) CompactTable(ctx context.Context, table string, major bool, families ...string) error {
	regions, err := c.Regions(ctx, table)
	if err != nil {
		return err
	}
	for _, r := range regions {
		if err := c.CompactRegion(ctx, r.Name, major, families...); err != nil {
			return err
		}
	}
	return nil
}

// CompactionState is a region's or table's compaction state; the values
// are HBase's.
type CompactionState int32

// Compaction states.
const (
	CompactionNone          = CompactionState(hbasepb.GetRegionInfoResponse_NONE)
	CompactionMinor         = CompactionState(hbasepb.GetRegionInfoResponse_MINOR)
	CompactionMajor         = CompactionState(hbasepb.GetRegionInfoResponse_MAJOR)
	CompactionMajorAndMinor = CompactionState(hbasepb.GetRegionInfoResponse_MAJOR_AND_MINOR)
)

// String returns HBase's name of the state.
func (s CompactionState) String() string {
	return hbasepb.GetRegionInfoResponse_CompactionState(s).String()
}

// CompactionState returns whether a region is compacting (HBase's
// Admin.getCompactionStateForRegion), requested compactions included.
func (c *Client) CompactionState(ctx context.Context, regionName []byte) (CompactionState, error) {
	var st CompactionState
	err := c.withRegionName(ctx, "compaction state", regionName, func(loc *regionLoc) error {
		resp := &hbasepb.GetRegionInfoResponse{}
		_, err := c.call(ctx, loc.addr, adminService, "GetRegionInfo",
			&hbasepb.GetRegionInfoRequest{Region: loc.spec(), CompactionState: proto.Bool(true)}, nil, resp)
		st = CompactionState(resp.GetCompactionState())
		return err
	})
	return st, err
}

// TableCompactionState combines the compaction states of a table's regions,
// as HBase's Admin.getCompactionState.
func (c *Client) TableCompactionState(ctx context.Context, table string) (CompactionState, error) {
	regions, err := c.Regions(ctx, table)
	if err != nil {
		return 0, err
	}
	minor, major := false, false
	for _, r := range regions {
		st, err := c.CompactionState(ctx, r.Name)
		if err != nil {
			return 0, err
		}
		minor = minor || st == CompactionMinor || st == CompactionMajorAndMinor
		major = major || st == CompactionMajor || st == CompactionMajorAndMinor
	}
	switch {
	case minor && major:
		return CompactionMajorAndMinor, nil
	case major:
		return CompactionMajor, nil
	case minor:
		return CompactionMinor, nil
	}
	return CompactionNone, nil
}

// StoreFiles returns the paths of a region's store files, of the named
// families or all (HBase's GetStoreFile).
func (c *Client) StoreFiles(ctx context.Context, regionName []byte, families ...string) ([]string, error) {
	req := &hbasepb.GetStoreFileRequest{}
	for _, f := range families {
		req.Family = append(req.Family, []byte(f))
	}
	var out []string
	err := c.withRegionName(ctx, "store files", regionName, func(loc *regionLoc) error {
		req.Region = loc.spec()
		resp := &hbasepb.GetStoreFileResponse{}
		_, err := c.call(ctx, loc.addr, adminService, "GetStoreFile", req, nil, resp)
		out = resp.GetStoreFile()
		return err
	})
	return out, err
}

// RollWAL asks a region server ("host:port", as ClusterStatus lists them)
// to roll its write-ahead logs (HBase's Admin.rollWALWriter).
func (c *Client) RollWAL(ctx context.Context, server string) error {
	_, err := c.call(ctx, server, adminService, "RollWALWriter", &hbasepb.RollWALWriterRequest{}, nil, &hbasepb.RollWALWriterResponse{})
	return errors.Wrapf(err, "client: roll WAL writer of %s", server)
}

// ServerInfo is what a region server says of itself.
type ServerInfo struct {
	// Name is HBase's server name, "host,port,startcode".
	Name string
	// InfoPort is the web UI's port, -1 if it has none.
	InfoPort int
}

// ServerInfo returns a region server's name and info port.
func (c *Client) ServerInfo(ctx context.Context, server string) (ServerInfo, error) {
	resp := &hbasepb.GetServerInfoResponse{}
	if _, err := c.call(ctx, server, adminService, "GetServerInfo", &hbasepb.GetServerInfoRequest{}, nil, resp); err != nil {
		return ServerInfo{}, errors.Wrapf(err, "client: server info of %s", server)
	}
	sn := resp.GetServerInfo().GetServerName()
	si := ServerInfo{Name: sn.GetHostName() + "," + strconv.Itoa(int(sn.GetPort())) + "," + strconv.FormatUint(sn.GetStartCode(), 10),
		InfoPort: -1}
	if p := resp.GetServerInfo().WebuiPort; p != nil {
		si.InfoPort = int(*p)
	}
	return si, nil
}

// OnlineRegions returns the regions a region server has open, the catalog's
// included (HBase's Admin.getRegions(ServerName)).
func (c *Client) OnlineRegions(ctx context.Context, server string) ([]RegionInfo, error) {
	resp := &hbasepb.GetOnlineRegionResponse{}
	if _, err := c.call(ctx, server, adminService, "GetOnlineRegion", &hbasepb.GetOnlineRegionRequest{}, nil, resp); err != nil {
		return nil, errors.Wrapf(err, "client: online regions of %s", server)
	}
	var out []RegionInfo
	for _, ri := range resp.GetRegionInfo() {
		name := regionName(ri)
		out = append(out, RegionInfo{Name: name, EncodedName: encodedName(name), StartKey: ri.GetStartKey(),
			EndKey: ri.GetEndKey(), Server: server})
	}
	return out, nil
}

// regionName is HBase's name of a region: "table,startKey,regionId.md5."
// where md5 is the hex MD5 of what precedes it, and hbase:meta's legacy
// "hbase:meta,,1".
func regionName(ri *hbasepb.RegionInfo) []byte {
	table := tableNameString(ri.GetTableName())
	b := append([]byte(table+","), ri.GetStartKey()...)
	b = strconv.AppendUint(append(b, ','), ri.GetRegionId(), 10)
	if table == metaTableName {
		return b
	}
	sum := md5.Sum(b)
	return append(append(append(b, '.'), hex.EncodeToString(sum[:])...), '.')
}
