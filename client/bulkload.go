package client

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Bulk load, HBase 2's SecureBulkLoad flow as HBase's BulkLoadHFilesTool
// drives it: PrepareBulkLoad returns a bulk token (a staging directory on
// the server), BulkLoadHFiles loads files into one region, atomically
// across its families, and CleanupBulkLoad removes the staging directory.
// The files are paths on the server's filesystem: RegionKV is single-node,
// so they are local paths (plain or file://), where HBase takes HDFS paths.
// `regionsrv bulkload` (tool/bulkload) is the whole procedure:
// it splits files at the table's region boundaries, loads each piece into
// its region and retries a region that split meanwhile.

// BulkLoadFile is one HFile of a bulk load: the family it goes into and its
// path on the server.
type BulkLoadFile struct {
	Family string
	Path   string
}

// BulkLoadOptions configure BulkLoadHFiles.
type BulkLoadOptions struct {
	// Token is a bulk token from PrepareBulkLoad, or "".
	Token string
	// CopyFiles has the server copy the files into the stores and leave
	// them (HBase's copy_file); otherwise it moves them in.
	CopyFiles bool
}

// PrepareBulkLoad asks for a bulk token for a load into table (HBase's
// SecureBulkLoadClient.prepareBulkLoad): the path of a new staging
// directory on the server, where the loader may put its files. Pass it to
// BulkLoadHFiles and, when done, to CleanupBulkLoad.
func (c *Client) PrepareBulkLoad(ctx context.Context, table string) (string, error) {
	var token string
	err := c.withRegion(ctx, "prepare bulk load", table, nil, true, func(loc *regionLoc) error {
		resp := &hbasepb.PrepareBulkLoadResponse{}
		_, err := c.call(ctx, loc.addr, clientService, "PrepareBulkLoad",
			&hbasepb.PrepareBulkLoadRequest{TableName: tableNamePB(table), Region: loc.spec()}, nil, resp)
		token = resp.GetBulkToken()
		return err
	})
	return token, err
}

// CleanupBulkLoad removes the staging directory of a bulk token (HBase's
// SecureBulkLoadClient.cleanupBulkLoad). A token already cleaned up is no
// error.
func (c *Client) CleanupBulkLoad(ctx context.Context, table, token string) error {
	return c.withRegion(ctx, "clean up bulk load", table, nil, true, func(loc *regionLoc) error {
		_, err := c.call(ctx, loc.addr, clientService, "CleanupBulkLoad",
			&hbasepb.CleanupBulkLoadRequest{BulkToken: proto.String(token), Region: loc.spec()}, nil, &hbasepb.CleanupBulkLoadResponse{})
		return err
	})
}

// BulkLoadHFiles loads files into the region of table that holds row (the
// files' first row, say), all of them or none: each file becomes a store
// file of its family with a new sequence id, so its cells (which keep their
// own timestamps) win over existing cells of the same row, column,
// timestamp and type, and lose to later writes. The server checks every
// file first (an HFile of the family, sorted, every row inside the region).
//
// It returns false, and no error, when a file has rows outside the region
// (HBase's answer, typically because the region split since the files were
// made): nothing was loaded, and the caller must split the files at the
// table's region boundaries (Regions) and load each piece into its region,
// as `regionsrv bulkload` does. Other refusals are server exceptions: an
// unknown family or a bad path DoNotRetryIOException, a file that cannot
// be a store file InvalidHFileException or CorruptHFileException, a
// missing one FileNotFoundException (test with IsException).
//
// A load is not resent after the connection broke while it was in flight
// (it may have been applied, and its files moved).
func (c *Client) BulkLoadHFiles(ctx context.Context, table string, row []byte, files []BulkLoadFile, o BulkLoadOptions) (bool, error) {
	if len(files) == 0 {
		return false, errors.New("client: bulk load of no files")
	}
	req := &hbasepb.BulkLoadHFileRequest{AssignSeqNum: proto.Bool(true), CopyFile: proto.Bool(o.CopyFiles)}
	if o.Token != "" {
		req.BulkToken = proto.String(o.Token)
	}
	for _, f := range files {
		req.FamilyPath = append(req.FamilyPath, &hbasepb.BulkLoadHFileRequest_FamilyPath{Family: []byte(f.Family), Path: proto.String(f.Path)})
	}
	var loaded bool
	err := c.withRegion(ctx, "bulk load", table, row, false, func(loc *regionLoc) error {
		req.Region = loc.spec()
		resp := &hbasepb.BulkLoadHFileResponse{}
		_, err := c.call(ctx, loc.addr, clientService, "BulkLoadHFile", req, nil, resp)
		loaded = resp.GetLoaded()
		return err
	})
	return loaded, err
}
