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

// HBase's column family attribute names.
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
)

// familyOptions turns a ColumnFamilySchema into region options, refusing
// what we do not implement with a clear DoNotRetryIOException, as HBase's
// sanity checks do.
func familyOptions(cf *hbasepb.ColumnFamilySchema) (region.FamilyOptions, error) {
	name := string(cf.GetName())
	fo := region.FamilyOptions{Name: name, MaxVersions: 1}
	if name == "" || strings.ContainsAny(name, ":") || name[0] == '.' {
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException, "illegal column family name %q", name)
	}
	bad := func(attr, v string, why string) error {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "column family %q: %s=%q: %s", name, attr, v, why)
	}
	for _, a := range cf.GetAttributes() {
		k, v := string(a.GetFirst()), string(a.GetSecond())
		switch strings.ToUpper(k) {
		case attrVersions:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fo, bad(k, v, "must be a positive integer")
			}
			fo.MaxVersions = n
		case attrTTL:
			n, err := strconv.ParseInt(strings.Fields(v + " ")[0], 10, 64)
			if err != nil || n <= 0 {
				return fo, bad(k, v, "must be a positive number of seconds")
			}
			if n < foreverTTLSeconds {
				fo.TTL = time.Duration(n) * time.Second
			}
		case attrBloom:
			bf, err := region.ParseBloomFilter(v)
			if err != nil {
				return fo, bad(k, v, "supported: NONE, ROW, ROWCOL")
			}
			fo.BloomFilter = bf
		case attrEncoding:
			e, err := region.ParseDataBlockEncoding(strings.ToUpper(v))
			if err != nil {
				return fo, bad(k, v, "supported: NONE, PREFIX, FAST_DIFF")
			}
			fo.Encoding = e
		case attrCompression:
			c, err := region.ParseCompression(v)
			if err == nil {
				err = c.Supported()
			}
			if err != nil {
				return fo, bad(k, v, "supported: NONE, GZ, SNAPPY, ZSTD")
			}
			fo.Compression = c
		case attrBlockSize:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1024 || n > 16<<20 {
				return fo, bad(k, v, "must be 1024..16777216")
			}
			fo.BlockSize = n
		case attrInMemory:
			fo.InMemory = strings.EqualFold(v, "true")
		case attrMinVersions:
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fo, bad(k, v, "must be a non-negative integer")
			}
			fo.MinVersions = n
		case attrKeepDeleted:
			if !strings.EqualFold(v, "false") {
				return fo, bad(k, v, "only FALSE is supported")
			}
		}
	}
	if fo.MinVersions > fo.MaxVersions {
		// HBase's TableDescriptorChecker.
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException,
			"Min versions for column family %s  must be less than the Max versions.", name)
	}
	// What the attributes above let through but a region would refuse
	// (an encoding we parse but do not implement, say) is refused here,
	// before the schema is written anywhere.
	if err := fo.Validate(); err != nil {
		return fo, ipc.Errorf(ipc.ClassDoNotRetryIOException, "column family %q: %v", name, err)
	}
	return fo, nil
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
	return &hbasepb.ColumnFamilySchema{
		Name: []byte(fo.Name),
		Attributes: []*hbasepb.BytesBytesPair{
			attr(attrVersions, strconv.Itoa(max(fo.MaxVersions, 1))),
			attr(attrTTL, strconv.FormatInt(ttl, 10)),
			attr(attrBloom, bloom),
			attr(attrEncoding, fo.Encoding.String()),
			attr(attrCompression, strings.ToUpper(comp.String())),
			attr(attrInMemory, strconv.FormatBool(fo.InMemory)),
		},
	}
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
