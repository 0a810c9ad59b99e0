package server

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// TableName is a namespace-qualified table name: HBase's TableName.
type TableName struct {
	Namespace, Qualifier string
}

// Well-known names.
var (
	MetaTableName      = TableName{"hbase", "meta"}
	NamespaceTableName = TableName{"hbase", "namespace"}
)

const (
	defaultNamespace = "default"
	systemNamespace  = "hbase"
	// metaEncodedName is the encoded name HBase gives hbase:meta's one
	// region (its legacy, pre-MD5 region name "hbase:meta,,1").
	metaEncodedName = "1588230740"
)

// ParseTableName parses "ns:qualifier", or "qualifier" in the default
// namespace, checking the characters HBase allows.
func ParseTableName(s string) (TableName, error) {
	ns, q, ok := strings.Cut(s, ":")
	if !ok {
		ns, q = defaultNamespace, s
	}
	t := TableName{ns, q}
	return t, t.validate()
}

func (t TableName) validate() error {
	if err := validName(t.Namespace, false); err != nil {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "illegal namespace %q: %v", t.Namespace, err)
	}
	if err := validName(t.Qualifier, true); err != nil {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "illegal table name %q: %v", t.Qualifier, err)
	}
	return nil
}

func validName(s string, table bool) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > 255 {
		return errors.New("longer than 255 bytes")
	}
	if table && (s[0] == '.' || s[0] == '-') {
		return errors.New("must not start with '.' or '-'")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			table && (c == '.' || c == '-')
		if !ok {
			return errors.Newf("illegal character %q at %d", c, i)
		}
	}
	return nil
}

// String is HBase's name as written in meta rows and logs: the qualifier
// alone in the default namespace, "ns:qualifier" otherwise.
func (t TableName) String() string {
	if t.Namespace == defaultNamespace {
		return t.Qualifier
	}
	return t.Namespace + ":" + t.Qualifier
}

// System reports whether t is in the hbase namespace.
func (t TableName) System() bool { return t.Namespace == systemNamespace }

// PB returns t as a protobuf TableName.
func (t TableName) PB() *hbasepb.TableName {
	return &hbasepb.TableName{Namespace: []byte(t.Namespace), Qualifier: []byte(t.Qualifier)}
}

func tableNameFromPB(pb *hbasepb.TableName) (TableName, error) {
	if pb == nil {
		return TableName{}, ipc.Errorf(ipc.ClassDoNotRetryIOException, "missing table name")
	}
	ns := string(pb.GetNamespace())
	if ns == "" {
		ns = defaultNamespace
	}
	t := TableName{ns, string(pb.GetQualifier())}
	return t, t.validate()
}

// RegionInfo describes one region: HBase's RegionInfo.
type RegionInfo struct {
	Table            TableName
	StartKey, EndKey []byte // EndKey empty: to the end of the table
	RegionID         uint64 // creation time in ms, as HBase's
	// Offline and Split mark a split parent: its daughters serve its rows.
	Offline, Split bool
}

// EncodedName is the region's directory and short name: the MD5 of the
// region name's first part in hex, as HBase's (hbase:meta keeps its legacy
// number).
func (ri *RegionInfo) EncodedName() string {
	if ri.Table == MetaTableName {
		return metaEncodedName
	}
	sum := md5.Sum(ri.namePrefix())
	return hex.EncodeToString(sum[:])
}

// namePrefix is "table,startKey,regionID".
func (ri *RegionInfo) namePrefix() []byte {
	b := make([]byte, 0, 64+len(ri.StartKey))
	b = append(b, ri.Table.String()...)
	b = append(b, ',')
	b = append(b, ri.StartKey...)
	b = append(b, ',')
	return strconv.AppendUint(b, ri.RegionID, 10)
}

// RegionName is the region's full name, the key of its hbase:meta row:
// "table,startKey,regionID.encodedName." (hbase:meta's own is "hbase:meta,,1").
func (ri *RegionInfo) RegionName() []byte {
	b := ri.namePrefix()
	if ri.Table == MetaTableName {
		return b
	}
	b = append(b, '.')
	b = append(b, ri.EncodedName()...)
	return append(b, '.')
}

// ContainsRow reports whether row falls in the region's key range.
func (ri *RegionInfo) ContainsRow(row []byte) bool {
	return bytes.Compare(row, ri.StartKey) >= 0 && (len(ri.EndKey) == 0 || bytes.Compare(row, ri.EndKey) < 0)
}

// PB returns ri as the protobuf HBase stores in info:regioninfo.
func (ri *RegionInfo) PB() *hbasepb.RegionInfo {
	return &hbasepb.RegionInfo{
		RegionId:  proto.Uint64(ri.RegionID),
		TableName: ri.Table.PB(),
		StartKey:  nonNilBytes(ri.StartKey),
		EndKey:    nonNilBytes(ri.EndKey),
		Offline:   proto.Bool(ri.Offline),
		Split:     proto.Bool(ri.Split),
		ReplicaId: proto.Int32(0),
	}
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func regionInfoFromPB(pb *hbasepb.RegionInfo) (RegionInfo, error) {
	t, err := tableNameFromPB(pb.GetTableName())
	if err != nil {
		return RegionInfo{}, err
	}
	return RegionInfo{Table: t, StartKey: pb.GetStartKey(), EndKey: pb.GetEndKey(),
		RegionID: pb.GetRegionId(), Offline: pb.GetOffline(), Split: pb.GetSplit()}, nil
}

// marshalPBUF is hbasepb.AppendPB for the messages the server builds, meta
// cells and znodes, which always set their required fields.
func marshalPBUF(m proto.Message) []byte {
	b, err := hbasepb.AppendPB(nil, m)
	if err != nil {
		// Only an unset required field fails, which is a bug here.
		panic(errors.AssertionFailedf("marshal %T: %v", m, err))
	}
	return b
}
