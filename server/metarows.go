package server

import (
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/region"
)

// Exported helpers for tools that build hbase:meta rows outside a server
// (regionsrv pe's metaWrite and metaRandomRead), so that they write and
// read the rows the server itself writes.

// MetaEncodedName is the encoded name of hbase:meta's one region.
const MetaEncodedName = metaEncodedName

// CatalogFamily is the family of hbase:meta's region rows (HBase's
// HConstants.CATALOG_FAMILY).
const CatalogFamily = "info"

// MetaFamilies returns the families hbase:meta is created with.
func MetaFamilies() []region.FamilyOptions { return slices.Clone(metaFamilies) }

// MetaRegionPuts returns the two puts with which HBase's MetaTableAccessor
// records a new region open on server ("host:port"): addRegionsToMeta's
// (info:regioninfo, info:state CLOSED) and updateRegionLocation's
// (info:regioninfo again, info:server, info:serverstartcode,
// info:seqnumDuringOpen). HBase PE's metaWrite makes both calls per region.
func MetaRegionPuts(ri *RegionInfo, server string, startCode, openSeq uint64) (add, location *region.Put) {
	name, info := ri.RegionName(), marshalPBUF(ri.PB())
	add = region.NewPut(name).Add(famInfo, colRegionInfo, info).Add(famInfo, colState, []byte("CLOSED"))
	location = region.NewPut(name).Add(famInfo, colRegionInfo, info).
		Add(famInfo, colServer, []byte(server)).
		Add(famInfo, colServerStart, binary.BigEndian.AppendUint64(nil, startCode)).
		Add(famInfo, colSeqnumOpen, binary.BigEndian.AppendUint64(nil, openSeq))
	return add, location
}

// MetaRowRegion decodes the info:regioninfo of a meta row; ok is false if
// the row has none (a table state row).
func MetaRowRegion(res *region.Result) (ri RegionInfo, ok bool, err error) {
	v := res.Value(famInfo, colRegionInfo)
	if v == nil {
		return RegionInfo{}, false, nil
	}
	var pb hbasepb.RegionInfo
	if err := hbasepb.ParsePB(v, &pb); err != nil {
		return RegionInfo{}, false, errors.Wrapf(err, "server: hbase:meta row %q: info:regioninfo", res.Cells[0].Row)
	}
	ri, err = regionInfoFromPB(&pb)
	if err != nil {
		return RegionInfo{}, false, errors.Wrapf(err, "server: hbase:meta row %q", res.Cells[0].Row)
	}
	return ri, true, nil
}
