package server

import (
	"context"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func cfSchema(name string, attrs ...string) *hbasepb.ColumnFamilySchema {
	cf := &hbasepb.ColumnFamilySchema{Name: []byte(name)}
	for i := 0; i+1 < len(attrs); i += 2 {
		cf.Attributes = append(cf.Attributes, &hbasepb.BytesBytesPair{First: []byte(attrs[i]), Second: []byte(attrs[i+1])})
	}
	return cf
}

// storedOnlyAttrs are HBase 2.6's column family attributes that RegionKV
// keeps in the descriptor without acting on them, with a value HBase
// accepts (the README's table says what each does not do).
var storedOnlyAttrs = []string{
	"CACHE_DATA_ON_WRITE", "true",
	"CACHE_INDEX_ON_WRITE", "true",
	"CACHE_BLOOMS_ON_WRITE", "true",
	"EVICT_BLOCKS_ON_CLOSE", "true",
	"PREFETCH_BLOCKS_ON_OPEN", "true",
	"COMPRESS_TAGS", "false",
	"IS_MOB", "true",
	"MOB_THRESHOLD", "102400",
	"MOB_COMPACT_PARTITION_POLICY", "WEEKLY",
	"REPLICATION_SCOPE", "1",
	"DFS_REPLICATION", "3",
	"STORAGE_POLICY", "ALL_SSD",
	"IN_MEMORY_COMPACTION", "BASIC",
	"INDEX_BLOCK_ENCODING", "NONE",
	"KEEP_DELETED_CELLS", "FALSE",
	"NEW_VERSION_BEHAVIOR", "false",
	"my.metadata.key", "anything", // HBase's METADATA: any other key
}

// TestFamilyAttributes checks every column family attribute of HBase 2.6:
// the implemented ones set region options, the stored-only ones are
// accepted and change nothing, and the refused ones (and values HBase
// refuses) fail with a DoNotRetryIOException that says why.
func TestFamilyAttributes(t *testing.T) {
	fo, err := familyOptions(cfSchema("f",
		"VERSIONS", "5", "MIN_VERSIONS", "2", "TTL", "3600", "BLOCKCACHE", "false",
		"COMPRESSION", "SNAPPY", "COMPRESSION_COMPACT", "GZ", "COMPRESSION_COMPACT_MAJOR", "ZSTD",
		"COMPRESSION_COMPACT_MINOR", "NONE", "BLOCKSIZE", "65536", "IN_MEMORY", "true",
		"BLOOMFILTER", "ROWCOL", "DATA_BLOCK_ENCODING", "FAST_DIFF"))
	require.NoError(t, err)
	require.Equal(t, region.FamilyOptions{Name: "f", MaxVersions: 5, MinVersions: 2, TTL: time.Hour, NoBlockCache: true,
		Compression:                region.CompressionSnappy,
		CompactionCompression:      region.OverrideCompression(region.CompressionGZ),
		MajorCompactionCompression: region.OverrideCompression(region.CompressionZstd),
		MinorCompactionCompression: region.OverrideCompression(region.CompressionNone),
		BlockSize:                  65536, InMemory: true, BloomFilter: region.BloomFilterRowCol,
		Encoding: region.EncodingFastDiff}, fo)

	plain, err := familyOptions(cfSchema("f"))
	require.NoError(t, err)
	require.False(t, plain.NoBlockCache, "BLOCKCACHE defaults to true")
	fo, err = familyOptions(cfSchema("f", "BLOCKCACHE", "true", "MIN_VERSIONS", "1"))
	require.NoError(t, err)
	require.False(t, fo.NoBlockCache)
	require.Equal(t, 1, fo.MinVersions, "MIN_VERSIONS without a TTL is accepted, as in HBase")

	fo, err = familyOptions(cfSchema("f", storedOnlyAttrs...))
	require.NoError(t, err, "stored-only attributes are accepted")
	require.Equal(t, plain, fo, "and change no option")

	fo, err = familyOptions(cfSchema("f", "VERSIONS", "", "MIN_VERSIONS", ""))
	require.NoError(t, err, "an empty value is no value (HBase's setValue removes the key)")
	require.Equal(t, plain, fo)

	for _, tc := range []struct {
		attrs []string
		want  string
	}{
		{[]string{"MIN_VERSIONS", "2"}, "MIN_VERSIONS=2 must not exceed VERSIONS=1"},
		{[]string{"VERSIONS", "3", "MIN_VERSIONS", "4"}, "must not exceed VERSIONS=3"},
		{[]string{"MIN_VERSIONS", "-1"}, "must be an integer >= 0"},
		{[]string{"MIN_VERSIONS", "x"}, "must be an integer >= 0"},
		{[]string{"KEEP_DELETED_CELLS", "TRUE"}, "only FALSE is supported"},
		{[]string{"KEEP_DELETED_CELLS", "ttl"}, "only FALSE is supported"},
		{[]string{"KEEP_DELETED_CELLS", "maybe"}, "must be FALSE, TRUE or TTL"},
		{[]string{"NEW_VERSION_BEHAVIOR", "TRUE"}, "only false is supported"},
		{[]string{"ENCRYPTION", "AES"}, "encryption is not supported"},
		{[]string{"ENCRYPTION_KEY", "k"}, "encryption is not supported"},
		{[]string{"COMPRESSION_COMPACT", "LZO"}, "supported: NONE, GZ, SNAPPY, ZSTD"},
		{[]string{"COMPRESSION_COMPACT_MAJOR", "BOGUS"}, "supported: NONE, GZ, SNAPPY, ZSTD"},
		{[]string{"REPLICATION_SCOPE", "2"}, "must be 0 (local) or 1 (global)"},
		{[]string{"DFS_REPLICATION", "-1"}, "must be an integer 0..32767"},
		{[]string{"MOB_THRESHOLD", "big"}, "must be a number of bytes >= 0"},
		{[]string{"IN_MEMORY_COMPACTION", "SOMETIMES"}, "must be one of NONE, BASIC, EAGER, ADAPTIVE"},
		{[]string{"MOB_COMPACT_PARTITION_POLICY", "HOURLY"}, "must be one of DAILY, WEEKLY, MONTHLY"},
		{[]string{"INDEX_BLOCK_ENCODING", "FAST_DIFF"}, "must be one of NONE, PREFIX_TREE"},
		{[]string{"DATA_BLOCK_ENCODING", "DIFF"}, "DIFF"}, // HBase's, but we cannot write it
	} {
		_, err := familyOptions(cfSchema("f", tc.attrs...))
		e, ok := ipc.AsException(err)
		require.True(t, ok, "%v: %v", tc.attrs, err)
		require.Equal(t, ipc.ClassDoNotRetryIOException, e.Class, "%v", tc.attrs)
		require.Contains(t, e.Message, tc.want, "%v", tc.attrs)
	}
}

// TestFamilyAttributesStored: a table's descriptor comes back from
// GetTableDescriptors as it was given, stored-only attributes, metadata and
// the CONFIGURATION map included, before and after a restart; the regions
// have the implemented options.
func TestFamilyAttributesStored(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	cf := cfSchema("cf", append([]string{"VERSIONS", "3", "MIN_VERSIONS", "2", "TTL", "86400", "BLOCKCACHE", "false"},
		storedOnlyAttrs...)...)
	cf.Configuration = []*hbasepb.NameStringPair{{Name: proto.String("hbase.hstore.blockingStoreFiles"), Value: proto.String("20")}}
	schema := &hbasepb.TableSchema{
		TableName:      &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte("attrs")},
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{cf},
	}
	resp := &hbasepb.CreateTableResponse{}
	call(t, m, "CreateTable", &hbasepb.CreateTableRequest{TableSchema: schema}, resp, nil)

	// A refused attribute fails the call itself.
	bad := proto.Clone(schema).(*hbasepb.TableSchema)
	bad.TableName.Qualifier = []byte("refused")
	bad.ColumnFamilies[0] = cfSchema("cf", "KEEP_DELETED_CELLS", "TRUE")
	_, err := m.Call(context.Background(), "CreateTable", &hbasepb.CreateTableRequest{TableSchema: bad}, nil, &hbasepb.CreateTableResponse{})
	e, ok := ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassDoNotRetryIOException, e.Class)

	check := func(s *Server, m *ipc.ClientConn) {
		t.Helper()
		got := &hbasepb.GetTableDescriptorsResponse{}
		call(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{
			TableNames: []*hbasepb.TableName{schema.TableName}}, got, nil)
		require.Len(t, got.TableSchema, 1)
		require.True(t, proto.Equal(cf, got.TableSchema[0].ColumnFamilies[0]), "%v", got.TableSchema[0].ColumnFamilies[0])
		tbl := s.tableByName(TableName{Namespace: "default", Qualifier: "attrs"})
		require.NotNil(t, tbl)
		fams := tbl.regions[0].r.Load().Families()
		require.Equal(t, 2, fams[0].MinVersions)
		require.Equal(t, 24*time.Hour, fams[0].TTL)
		require.True(t, fams[0].NoBlockCache)
	}
	check(s, m)
	require.NoError(t, s.Shutdown(context.Background()))
	s2 := testServer(t, dir, nil)
	check(s2, dial(t, s2, MasterService))
}
