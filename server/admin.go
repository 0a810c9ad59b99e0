package server

import (
	"bytes"
	"context"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// AdminService is the region server's admin service (HBase's
// RSRpcServices as AdminProtos.AdminService): what Admin.flushRegion,
// Admin.compact / majorCompact and Admin.rollWALWriter send to the server
// of a region.

// adminRegion finds the open region spec names, as RSRpcServices.getRegion:
// a region that is not open here (its table disabled, say) is not served.
func (s *Server) adminRegion(spec *hbasepb.RegionSpecifier) (*hostedRegion, *region.Region, error) {
	if spec == nil {
		return nil, nil, badRequest("missing region specifier")
	}
	hr := s.hostedBySpec(spec)
	var r *region.Region
	if hr != nil {
		r = hr.r.Load()
	}
	if r == nil {
		return nil, nil, s.notServing(spec, hr)
	}
	return hr, r, nil
}

func (s *Server) handleGetRegionInfo(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetRegionInfoRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	hr, r, err := s.adminRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	// As HBase's HRegion.isSplittable and isMergeable: an open region
	// without references (and not a catalog region, which we never split).
	ok := !hr.table.name.System() && !r.HasReferences()
	resp := &hbasepb.GetRegionInfoResponse{RegionInfo: hr.info.PB(), Splittable: proto.Bool(ok), Mergeable: proto.Bool(ok)}
	if req.GetBestSplitRow() && ok {
		row, err := bestSplitRow(r)
		if err != nil {
			return ipc.Reply{}, mapError(err, hr)
		}
		if len(row) > 0 {
			resp.BestSplitRow = row
		}
	}
	if req.GetCompactionState() {
		minor, major := r.Compacting()
		minor = minor || hr.minorRequested.Load() > 0
		major = major || hr.majorRequested.Load() > 0
		st := hbasepb.GetRegionInfoResponse_NONE
		switch {
		case minor && major:
			st = hbasepb.GetRegionInfoResponse_MAJOR_AND_MINOR
		case major:
			st = hbasepb.GetRegionInfoResponse_MAJOR
		case minor:
			st = hbasepb.GetRegionInfoResponse_MINOR
		}
		resp.CompactionState = st.Enum()
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetOnlineRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetOnlineRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	s.mu.RLock()
	var infos []*RegionInfo
	for _, hr := range s.regions {
		if hr.r.Load() != nil {
			infos = append(infos, &hr.info)
		}
	}
	s.mu.RUnlock()
	// As HBase's RegionInfo.COMPARATOR: by table, then start key.
	sort.Slice(infos, func(i, j int) bool {
		if a, b := infos[i].Table.String(), infos[j].Table.String(); a != b {
			return a < b
		}
		return bytes.Compare(infos[i].StartKey, infos[j].StartKey) < 0
	})
	resp := &hbasepb.GetOnlineRegionResponse{}
	for _, ri := range infos {
		resp.RegionInfo = append(resp.RegionInfo, ri.PB())
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleGetServerInfo(c *ipc.Call) (ipc.Reply, error) {
	info := &hbasepb.ServerInfo{ServerName: s.serverNamePB()}
	if p := s.infoPort(); p >= 0 {
		info.WebuiPort = proto.Uint32(uint32(p))
	}
	return ipc.Reply{Msg: &hbasepb.GetServerInfoResponse{ServerInfo: info}}, nil
}

func (s *Server) handleGetStoreFile(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.GetStoreFileRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	_, r, err := s.adminRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	var stores []*region.Store
	if len(req.GetFamily()) == 0 {
		for _, f := range r.Families() {
			if st := r.Store(f.Name); st != nil {
				stores = append(stores, st)
			}
		}
	}
	for _, f := range req.GetFamily() {
		st := r.Store(string(f))
		if st == nil {
			// HBase throws an IllegalArgumentException, which reaches the
			// client as a retryable IOException.
			return ipc.Reply{}, ipc.Errorf(ipc.ClassDoNotRetryIOException, "No column family : %s available", f)
		}
		stores = append(stores, st)
	}
	resp := &hbasepb.GetStoreFileResponse{}
	for _, st := range stores {
		for _, f := range st.Files() {
			resp.StoreFile = append(resp.StoreFile, f.Path)
		}
	}
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleFlushRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.FlushRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	hr, r, err := s.adminRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	if f := req.GetFamily(); f != nil {
		if err := hr.checkFamily(f); err != nil {
			return ipc.Reply{}, ipc.Errorf(ipc.ClassNoSuchColumnFamilyException,
				"Column families [%s] don't exist in table %s", f, hr.table.name)
		}
	}
	resp := &hbasepb.FlushRegionResponse{Flushed: proto.Bool(false), WroteFlushWalMarker: proto.Bool(false)}
	// As HBase: with if_older_than_ts, flush only if the last flush is
	// older. A named family is flushed with the others: a region flushes
	// all its memstores at once.
	if req.IfOlderThanTs == nil || uint64(r.Stats().LastFlush.UnixMilli()) < req.GetIfOlderThanTs() {
		res, err := r.FlushStores()
		if err != nil {
			return ipc.Reply{}, mapError(err, hr)
		}
		resp.Flushed = proto.Bool(res.Files > 0)
	}
	resp.LastFlushTime = proto.Uint64(uint64(r.Stats().LastFlush.UnixMilli()))
	return ipc.Reply{Msg: resp}, nil
}

func (s *Server) handleCompactRegion(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.CompactRegionRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	hr, r, err := s.adminRegion(req.GetRegion())
	if err != nil {
		return ipc.Reply{}, err
	}
	family := req.GetFamily()
	if family != nil && r.Store(string(family)) == nil {
		return ipc.Reply{}, ipc.Errorf(ipc.ClassDoNotRetryIOException,
			"column family %s does not exist in region %s", family, hr.name)
	}
	major := req.GetMajor()
	requested := &hr.minorRequested
	if major {
		requested = &hr.majorRequested
	}
	// As HBase, the call only queues the compaction; GetRegionInfo's
	// compaction state shows it until it is done. A region closed
	// meanwhile ends it (ErrClosed, or its context).
	requested.Add(1)
	go func() {
		defer requested.Add(-1)
		var res []region.CompactionResult
		var err error
		if family != nil {
			res, err = r.CompactFamily(string(family), major)
		} else {
			res, err = r.CompactStores(major)
		}
		if err != nil {
			if !errors.Is(err, region.ErrClosed) && !errors.Is(err, context.Canceled) {
				s.log.Warn("requested compaction failed", "region", hr.info.EncodedName(), "major", major, "err", err)
			}
			return
		}
		s.log.Info("requested compaction done", "region", hr.info.EncodedName(), "table", hr.table.name.String(),
			"major", major, "stores", len(res))
	}()
	return ipc.Reply{Msg: &hbasepb.CompactRegionResponse{}}, nil
}

func (s *Server) handleRollWALWriter(c *ipc.Call) (ipc.Reply, error) {
	req := &hbasepb.RollWALWriterRequest{}
	if err := decode(c, req); err != nil {
		return ipc.Reply{}, err
	}
	// Every region has a WAL of its own: roll them all, as HBase's log
	// roller rolls the server's WALs.
	s.mu.RLock()
	var open []*hostedRegion
	for _, hr := range s.regions {
		if hr.r.Load() != nil {
			open = append(open, hr)
		}
	}
	s.mu.RUnlock()
	for _, hr := range open {
		r := hr.r.Load()
		if r == nil {
			continue
		}
		if err := r.RollWAL(); err != nil && !errors.Is(err, region.ErrClosed) {
			return ipc.Reply{}, mapError(err, hr)
		}
	}
	return ipc.Reply{Msg: &hbasepb.RollWALWriterResponse{}}, nil
}
