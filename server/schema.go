package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// HBase's column family attribute names (ColumnFamilyDescriptorBuilder).
const (
	attrVersions      = "VERSIONS"
	attrTTL           = "TTL"
	attrBloom         = "BLOOMFILTER"
	attrEncoding      = "DATA_BLOCK_ENCODING"
	attrCompression   = "COMPRESSION"
	attrBlockSize     = "BLOCKSIZE"
	attrInMemory      = "IN_MEMORY"
	attrMinVersions   = "MIN_VERSIONS"
	attrKeepDeleted   = "KEEP_DELETED_CELLS"
	attrBlockCache    = "BLOCKCACHE"
	foreverTTLSeconds = 2147483647 // HConstants.FOREVER

	attrCompressionCompact      = "COMPRESSION_COMPACT"
	attrCompressionCompactMajor = "COMPRESSION_COMPACT_MAJOR"
	attrCompressionCompactMinor = "COMPRESSION_COMPACT_MINOR"
	attrNewVersionBehavior      = "NEW_VERSION_BEHAVIOR"
	attrEncryption              = "ENCRYPTION"
	attrEncryptionKey           = "ENCRYPTION_KEY"
	attrReplicationScope        = "REPLICATION_SCOPE"
	attrDFSReplication          = "DFS_REPLICATION"
	attrInMemoryCompaction      = "IN_MEMORY_COMPACTION"
	attrMobThreshold            = "MOB_THRESHOLD"
	attrMobPartitionPolicy      = "MOB_COMPACT_PARTITION_POLICY"
	attrIndexBlockEncoding      = "INDEX_BLOCK_ENCODING"
)

// familyOptions turns a ColumnFamilySchema into region options. It accepts
// every attribute HBase 2.6 accepts: those we implement become options;
// the ones we store only (REPLICATION_SCOPE, CACHE_*_ON_WRITE, IS_MOB, ...:
// the README says what each does not do) and any other key (HBase's
// METADATA) stay in the descriptor, which is kept as given, and so does
// the CONFIGURATION map. Stored-only values HBase parses are checked as it
// checks them; those it reads as booleans or free strings are not. Values HBase would refuse, and settings we cannot
// honour without changing what reads return (KEEP_DELETED_CELLS,
// NEW_VERSION_BEHAVIOR, ENCRYPTION), are refused with a clear
// DoNotRetryIOException, as HBase's sanity checks do.
func familyOptions(cf *hbasepb.ColumnFamilySchema) (region.FamilyOptions, error) {
	name := string(cf.GetName())
	fo := region.FamilyOptions{Name: name, MaxVersions: 1}
	if name == "" || strings.ContainsAny(name, ":") || name[0] == '.' {
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException, "illegal column family name %q", name)
	}
	bad := func(attr, v string, why string) error {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "column family %q: %s=%q: %s", name, attr, v, why)
	}
	compression := func(k, v string) (region.Compression, error) {
		c, err := region.ParseCompression(v)
		if err == nil {
			err = c.Supported()
		}
		if err != nil {
			return c, bad(k, v, "supported: NONE, GZ, SNAPPY, ZSTD")
		}
		return c, nil
	}
	for _, a := range cf.GetAttributes() {
		k, v := string(a.GetFirst()), string(a.GetSecond())
		if v == "" {
			continue // HBase's setValue removes a key given an empty value
		}
		var err error
		switch key := strings.ToUpper(k); key {
		case attrVersions:
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 1 {
				return fo, bad(k, v, "must be a positive integer")
			}
			fo.MaxVersions = n
		case attrMinVersions:
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 {
				return fo, bad(k, v, "must be an integer >= 0")
			}
			fo.MinVersions = n
		case attrTTL:
			n, perr := strconv.ParseInt(strings.Fields(v + " ")[0], 10, 64)
			if perr != nil || n <= 0 {
				return fo, bad(k, v, "must be a positive number of seconds")
			}
			if n < foreverTTLSeconds {
				fo.TTL = time.Duration(n) * time.Second
			}
		case attrBloom:
			bf, perr := region.ParseBloomFilter(v)
			if perr != nil {
				return fo, bad(k, v, "supported: NONE, ROW, ROWCOL")
			}
			fo.BloomFilter = bf
		case attrEncoding:
			e, perr := region.ParseDataBlockEncoding(strings.ToUpper(v))
			if perr != nil {
				return fo, bad(k, v, "supported: NONE, PREFIX, FAST_DIFF, ROW_INDEX_V1")
			}
			fo.Encoding = e
		case attrCompression:
			fo.Compression, err = compression(k, v)
		case attrCompressionCompact:
			var c region.Compression
			c, err = compression(k, v)
			fo.CompactionCompression = region.OverrideCompression(c)
		case attrCompressionCompactMajor:
			var c region.Compression
			c, err = compression(k, v)
			fo.MajorCompactionCompression = region.OverrideCompression(c)
		case attrCompressionCompactMinor:
			var c region.Compression
			c, err = compression(k, v)
			fo.MinorCompactionCompression = region.OverrideCompression(c)
		case attrBlockSize:
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 1024 || n > 16<<20 {
				return fo, bad(k, v, "must be 1024..16777216")
			}
			fo.BlockSize = n
		case attrInMemory:
			fo.InMemory = strings.EqualFold(v, "true")
		case attrBlockCache:
			// Boolean.valueOf, as HBase reads it: anything but "true" is false.
			fo.NoBlockCache = !strings.EqualFold(v, "true")
		case attrKeepDeleted:
			switch strings.ToUpper(v) {
			case "FALSE":
			case "TRUE", "TTL":
				return fo, bad(k, v, "not supported: flushes and major compactions drop deleted cells and "+
					"delete markers, so reads of an earlier time range could not see them; only FALSE is supported")
			default:
				return fo, bad(k, v, "must be FALSE, TRUE or TTL")
			}
		case attrNewVersionBehavior:
			if strings.EqualFold(v, "true") {
				return fo, bad(k, v, "not supported: versions and deletes follow HBase's default rules "+
					"(a delete masks every put at or below its timestamp, whenever written); only false is supported")
			}
		case attrEncryption, attrEncryptionKey:
			return fo, bad(k, v, "transparent encryption is not supported: store files and the WAL are not encrypted")
		case attrReplicationScope:
			// WALProtos.ScopeType: REPLICATION_SCOPE_LOCAL or _GLOBAL.
			if n, perr := strconv.Atoi(v); perr != nil || n < 0 || n > 1 {
				return fo, bad(k, v, "must be 0 (local) or 1 (global)")
			}
		case attrDFSReplication:
			if n, perr := strconv.ParseInt(v, 10, 16); perr != nil || n < 0 {
				return fo, bad(k, v, "must be an integer 0..32767")
			}
		case attrMobThreshold:
			if n, perr := strconv.ParseInt(v, 10, 64); perr != nil || n < 0 {
				return fo, bad(k, v, "must be a number of bytes >= 0")
			}
		case attrInMemoryCompaction:
			err = oneOf(bad, k, v, "NONE", "BASIC", "EAGER", "ADAPTIVE")
		case attrMobPartitionPolicy:
			err = oneOf(bad, k, v, "DAILY", "WEEKLY", "MONTHLY")
		case attrIndexBlockEncoding:
			err = oneOf(bad, k, v, "NONE", "PREFIX_TREE")
		}
		if err != nil {
			return fo, err
		}
	}
	// HBase's TableDescriptorChecker (HBASE-13776). MIN_VERSIONS without a
	// TTL is accepted, as there, and changes nothing.
	if fo.MinVersions > fo.MaxVersions {
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException,
			"column family %q: MIN_VERSIONS=%d must not exceed VERSIONS=%d", name, fo.MinVersions, fo.MaxVersions)
	}
	// Whatever else the region would refuse (DIFF parses but cannot be
	// written) is refused now, not when the regions fail to open.
	if err := fo.Validate(); err != nil {
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException, "column family %q: %v", name, err)
	}
	return fo, nil
}

// oneOf checks that v is one of HBase's enum names (in any case).
func oneOf(bad func(attr, v, why string) error, k, v string, names ...string) error {
	for _, n := range names {
		if strings.EqualFold(v, n) {
			return nil
		}
	}
	return bad(k, v, "must be one of "+strings.Join(names, ", "))
}

// familySchema is the inverse of familyOptions, for descriptors we make
// ourselves (system tables).
func familySchema(fo region.FamilyOptions) *hbasepb.ColumnFamilySchema {
	attr := func(k, v string) *hbasepb.BytesBytesPair {
		return &hbasepb.BytesBytesPair{First: []byte(k), Second: []byte(v)}
	}
	bloom := fo.BloomFilter.String()
	comp := fo.Compression
	ttl := int64(foreverTTLSeconds)
	if fo.TTL > 0 {
		ttl = int64(fo.TTL / time.Second)
	}
	cf := &hbasepb.ColumnFamilySchema{
		Name: []byte(fo.Name),
		Attributes: []*hbasepb.BytesBytesPair{
			attr(attrVersions, strconv.Itoa(max(fo.MaxVersions, 1))),
			attr(attrMinVersions, strconv.Itoa(fo.MinVersions)),
			attr(attrTTL, strconv.FormatInt(ttl, 10)),
			attr(attrBloom, bloom),
			attr(attrEncoding, fo.Encoding.String()),
			attr(attrCompression, strings.ToUpper(comp.String())),
			attr(attrInMemory, strconv.FormatBool(fo.InMemory)),
			attr(attrBlockCache, strconv.FormatBool(!fo.NoBlockCache)),
			attr(attrKeepDeleted, "FALSE"),
		},
	}
	if fo.BlockSize > 0 {
		cf.Attributes = append(cf.Attributes, attr(attrBlockSize, strconv.Itoa(fo.BlockSize)))
	}
	return cf
}

// tableFamilies converts and checks every family of a schema.
func tableFamilies(ts *hbasepb.TableSchema) ([]region.FamilyOptions, error) {
	if len(ts.GetColumnFamilies()) == 0 {
		return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "table must have at least one column family")
	}
	seen := map[string]bool{}
	var out []region.FamilyOptions
	for _, cf := range ts.GetColumnFamilies() {
		fo, err := familyOptions(cf)
		if err != nil {
			return nil, err
		}
		if seen[fo.Name] {
			return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException, "column family %q given twice", fo.Name)
		}
		seen[fo.Name] = true
		out = append(out, fo)
	}
	return out, nil
}

func systemSchema(t TableName, fams ...region.FamilyOptions) *hbasepb.TableSchema {
	ts := &hbasepb.TableSchema{TableName: t.PB()}
	for _, f := range fams {
		ts.ColumnFamilies = append(ts.ColumnFamilies, familySchema(f))
	}
	return ts
}

var _ = proto.String

// TableFamilies checks a table descriptor's column families as CreateTable
// does and returns them as regions take them, for tools that read
// descriptors outside a server (regionsrv export).
func TableFamilies(ts *hbasepb.TableSchema) ([]region.FamilyOptions, error) { return tableFamilies(ts) }
