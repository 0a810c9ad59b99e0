package server

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// Bulk load (HBase 2's SecureBulkLoad flow, served by ClientService):
// PrepareBulkLoad makes a staging directory and returns its path as the
// bulk token, the client may put its files there, BulkLoadHFile loads files
// (there or anywhere on the server's filesystem) into one region, all
// families at once, and CleanupBulkLoad removes the staging directory. As
// the server is single-node, paths are local: plain absolute paths or
// file:// URIs (HBase's are HDFS paths).

// Exception classes of the bulk load calls, as HBase raises them.
const (
	classInvalidHFile = "org.apache.hadoop.hbase.io.hfile.InvalidHFileException"
	classFileNotFound = "java.io.FileNotFoundException"
	stagingDirName    = "staging" // HBase's BULKLOAD_STAGING_DIR_NAME, under hbase.rootdir
)

// randomToken is the random part of a staging directory's name.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stagingRoot is where PrepareBulkLoad makes staging directories.
func (s *Server) stagingRoot() (string, error) {
	dir, err := filepath.Abs(filepath.Join(s.cfg.DataDir, stagingDirName))
	if err != nil {
		return "", errors.Wrap(err, "server: staging directory")
	}
	return dir, nil
}

// localPath turns a path of a bulk load request into a local one: a plain
// absolute path, or a file: URI (file:///p, file:/p).
func localPath(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "file:"); ok {
		p = rest
	} else if i := strings.Index(p, "://"); i > 0 && !strings.ContainsRune(p[:i], '/') {
		return "", badRequest("bulk load path %s: only local paths (file:// or plain) are supported by this single-node server, not %s://", p, p[:i])
	}
	if !filepath.IsAbs(p) {
		return "", badRequest("bulk load path %q must be absolute", p)
	}
	return filepath.Clean(p), nil
}

// stagingDir checks that token names a staging directory PrepareBulkLoad
// made, and returns its path.
func (s *Server) stagingDir(token string) (string, error) {
	root, err := s.stagingRoot()
	if err != nil {
		return "", err
	}
	p, err := localPath(token)
	if err != nil {
		return "", err
	}
	if filepath.Dir(p) != root || !strings.Contains(filepath.Base(p), "__") {
		return "", badRequest("bulk token %s is not a staging directory of this server (%s)", token, root)
	}
	return p, nil
}

func (s *Server) handlePrepareBulkLoad(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.PrepareBulkLoadRequest{}
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
	if req.Region != nil {
		if _, _, err := s.lookupRegion(req.GetRegion()); err != nil {
			return ipc.Reply{}, err
		}
	}
	root, err := s.stagingRoot()
	if err != nil {
		return ipc.Reply{}, mapError(err, nil)
	}
	// HBase's token: <table>__<random>, the namespace's colon made an
	// underscore.
	dir := filepath.Join(root, strings.ReplaceAll(name.String(), ":", "_")+"__"+randomToken())
	if err := vfs.MkdirAllSync(s.fs, dir, 0o755); err != nil {
		return ipc.Reply{}, mapError(errors.Wrap(err, "server: making a bulk load staging directory"), nil)
	}
	s.log.Info("server: prepared a bulk load", "table", name.String(), "token", dir)
	return ipc.Reply{Msg: &hbasepb.PrepareBulkLoadResponse{BulkToken: proto.String(dir)}}, nil
}

func (s *Server) handleCleanupBulkLoad(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.CleanupBulkLoadRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	if req.Region != nil {
		if _, _, err := s.lookupRegion(req.GetRegion()); err != nil {
			return ipc.Reply{}, err
		}
	}
	dir, err := s.stagingDir(req.GetBulkToken())
	if err != nil {
		return ipc.Reply{}, err
	}
	// As HBase's: a directory already gone is no error.
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		return ipc.Reply{}, mapError(errors.Wrapf(err, "server: removing bulk load staging directory %s", dir), nil)
	}
	if err := vfs.SyncDir(s.fs, filepath.Dir(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return ipc.Reply{}, mapError(err, nil)
	}
	return ipc.Reply{Msg: &hbasepb.CleanupBulkLoadResponse{}}, nil
}

// handleBulkLoadHFile loads a request's files into its region atomically.
// As HBase's RSRpcServices, files that do not fit the region (it split
// since the client looked, say) are no error: the answer is loaded=false,
// and the client splits them again.
func (s *Server) handleBulkLoadHFile(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.BulkLoadHFileRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	hr, r, err := s.lookupRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	if hr.table.name.System() {
		return ipc.Reply{}, badRequest("%s takes no bulk loads", hr.table.name)
	}
	if len(req.GetFamilyPath()) == 0 {
		return ipc.Reply{}, badRequest("bulk load into %s names no files", hr.name)
	}
	if tok := req.GetBulkToken(); tok != "" {
		dir, err := s.stagingDir(tok)
		if err != nil {
			return ipc.Reply{}, err
		}
		if _, err := s.fs.Stat(dir); err != nil {
			return ipc.Reply{}, &ipc.Exception{Class: classFileNotFound, Message: "bulk token " + tok + ": " + err.Error()}
		}
	}
	files := make([]region.BulkLoadFile, 0, len(req.GetFamilyPath()))
	for _, fp := range req.GetFamilyPath() {
		p, err := localPath(fp.GetPath())
		if err != nil {
			return ipc.Reply{}, err
		}
		files = append(files, region.BulkLoadFile{Family: string(fp.GetFamily()), Path: p})
	}
	hr.writes.Add(1)
	// assign_seq_num false (HBase's hbase.mapreduce.bulkload.assign.sequenceNumbers
	// off) is loaded as true is: a file without a sequence id of its own
	// would be ordered below every write, and its cells' ids (another
	// cluster's) mean nothing here.
	_, err = r.BulkLoadHFiles(callContext(c), files, region.BulkLoadOptions{CopyFiles: req.GetCopyFile()})
	switch {
	case err == nil:
		return ipc.Reply{Msg: &hbasepb.BulkLoadHFileResponse{Loaded: proto.Bool(true)}}, nil
	case errors.Is(err, region.ErrWrongRegion):
		s.log.Warn("server: a recoverable bulk load failure, likely due to a split: nothing was loaded",
			"region", string(hr.name), "err", err.Error())
		return ipc.Reply{Msg: &hbasepb.BulkLoadHFileResponse{Loaded: proto.Bool(false)}}, nil
	}
	return ipc.Reply{}, bulkLoadError(err, hr)
}

// bulkLoadError maps a bulk load's error to HBase's exception: an unknown
// family is a DoNotRetryIOException (HRegion.bulkLoadHFiles' "No such
// column family"), a file that cannot be a store file an
// InvalidHFileException, a missing one a FileNotFoundException; the rest as
// mapError.
func bulkLoadError(err error, hr *hostedRegion) error {
	where := " in region " + string(hr.name)
	switch {
	case errors.Is(err, region.ErrNoSuchFamily):
		return &ipc.Exception{Class: ipc.ClassDoNotRetryIOException, Message: err.Error() + where}
	case errors.Is(err, region.ErrInvalidHFile):
		return &ipc.Exception{Class: classInvalidHFile, Message: err.Error() + where}
	case errors.Is(err, os.ErrNotExist):
		return &ipc.Exception{Class: classFileNotFound, Message: err.Error() + where}
	}
	return mapError(err, hr)
}
