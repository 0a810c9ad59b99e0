package hbasepb

// Golden wire tests. Each input is assembled by hand with protowire using the
// field numbers and wire types of Apache HBase's own .proto definitions (the
// HBase source file is named next to each message), then decoded with our
// generated types. A wrong field number or type in our .proto files makes the
// field land in the unknown-field set (or fail to parse) and the comparison
// fails. HBase paths are relative to hbase-protocol-shaded/src/main/protobuf/.

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// wb builds protobuf wire bytes field by field.
type wb []byte

func (w wb) varint(num protowire.Number, v uint64) wb {
	b := protowire.AppendTag([]byte(w), num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (w wb) boolean(num protowire.Number, v bool) wb {
	return w.varint(num, protowire.EncodeBool(v))
}

func (w wb) bytes(num protowire.Number, v []byte) wb {
	b := protowire.AppendTag([]byte(w), num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (w wb) str(num protowire.Number, v string) wb { return w.bytes(num, []byte(v)) }

func (w wb) msg(num protowire.Number, m wb) wb { return w.bytes(num, []byte(m)) }

func (w wb) fixed32(num protowire.Number, v uint32) wb {
	b := protowire.AppendTag([]byte(w), num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func wire() wb { return nil }

// checkGolden decodes in into a fresh message of want's type and requires it
// to equal want (proto.Equal also compares unknown fields, so a mis-numbered
// field fails). It then requires deterministic re-encoding of want to
// reproduce in byte for byte; inputs are therefore written in field-number
// order with repeated scalars unpacked (the proto2 default HBase uses).
func checkGolden(t *testing.T, in wb, want proto.Message) {
	t.Helper()
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(in, got); err != nil {
		t.Fatalf("unmarshal %T: %v", want, err)
	}
	if u := got.ProtoReflect().GetUnknown(); len(u) != 0 {
		t.Errorf("%T: unexpected unknown fields %x", want, u)
	}
	if !proto.Equal(got, want) {
		t.Errorf("%T mismatch\n got: %v\nwant: %v", want, got, want)
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		t.Fatalf("marshal %T: %v", want, err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("%T re-encoding differs\n got: %x\nwant: %x", want, out, []byte(in))
	}
}

var (
	p32  = proto.Uint32
	p64  = proto.Uint64
	pi32 = proto.Int32
	pi64 = proto.Int64
	pb   = proto.Bool
	ps   = proto.String
)

// HBase.proto: RegionSpecifier{type=1 enum, value=2 bytes}.
func regionSpecWire(name string) wb {
	return wire().varint(1, 1 /* REGION_NAME */).str(2, name)
}

func regionSpec(name string) *RegionSpecifier {
	return &RegionSpecifier{Type: RegionSpecifier_REGION_NAME.Enum(), Value: []byte(name)}
}

// HBase.proto: NameBytesPair{name=1 string, value=2 bytes}.
func nbpWire(n, v string) wb { return wire().str(1, n).str(2, v) }

func nbp(n, v string) *NameBytesPair { return &NameBytesPair{Name: ps(n), Value: []byte(v)} }

// HBase.proto: TimeRange{from=1 uint64, to=2 uint64}.
func timeRangeWire(from, to uint64) wb { return wire().varint(1, from).varint(2, to) }

func timeRange(from, to uint64) *TimeRange { return &TimeRange{From: p64(from), To: p64(to)} }

// HBase.proto: ServerName{host_name=1 string, port=2 uint32, start_code=3 uint64}.
func serverNameWire() wb {
	return wire().str(1, "rs1.example").varint(2, 16020).varint(3, 1700000000000)
}

func serverName() *ServerName {
	return &ServerName{HostName: ps("rs1.example"), Port: p32(16020), StartCode: p64(1700000000000)}
}

// client/Filter.proto: Filter{name=1 string, serialized_filter=2 bytes}.
// client/Comparator.proto: Comparator{name=1 string, serialized_comparator=2 bytes}.

func TestRequestHeaderWire(t *testing.T) {
	// rpc/RPC.proto: RequestHeader{call_id=1 uint32, trace_info=2 RPCTInfo,
	// method_name=3 string, request_param=4 bool, cell_block_meta=5,
	// priority=6 uint32, timeout=7 uint32, attribute=8 repeated NameBytesPair}.
	// rpc/Tracing.proto: RPCTInfo{trace_id=1 int64, parent_id=2 int64,
	// headers=3 map<string,string>} (map entry: key=1, value=2).
	// rpc/RPC.proto: CellBlockMeta{length=1 uint32}.
	in := wire().
		varint(1, 42).
		msg(2, wire().varint(1, 7).varint(2, 9).msg(3, wire().str(1, "traceparent").str(2, "00-ab-cd-01"))).
		str(3, "Scan").
		boolean(4, true).
		msg(5, wire().varint(1, 1234)).
		varint(6, 200).
		varint(7, 60000).
		msg(8, nbpWire("k", "v"))
	want := &RequestHeader{
		CallId: p32(42),
		TraceInfo: &RPCTInfo{
			TraceId:  pi64(7),
			ParentId: pi64(9),
			Headers:  map[string]string{"traceparent": "00-ab-cd-01"},
		},
		MethodName:    ps("Scan"),
		RequestParam:  pb(true),
		CellBlockMeta: &CellBlockMeta{Length: p32(1234)},
		Priority:      p32(200),
		Timeout:       p32(60000),
		Attribute:     []*NameBytesPair{nbp("k", "v")},
	}
	checkGolden(t, in, want)
}

func TestResponseHeaderWire(t *testing.T) {
	// rpc/RPC.proto: ResponseHeader{call_id=1 uint32, exception=2
	// ExceptionResponse, cell_block_meta=3}; ExceptionResponse{
	// exception_class_name=1 string, stack_trace=2 string, hostname=3 string,
	// port=4 int32, do_not_retry=5 bool, server_overloaded=6 bool}.
	in := wire().
		varint(1, 42).
		msg(2, wire().
			str(1, "org.apache.hadoop.hbase.NotServingRegionException").
			str(2, "trace").
			str(3, "rs2").
			varint(4, 16020).
			boolean(5, true).
			boolean(6, true)).
		msg(3, wire().varint(1, 99))
	want := &ResponseHeader{
		CallId: p32(42),
		Exception: &ExceptionResponse{
			ExceptionClassName: ps("org.apache.hadoop.hbase.NotServingRegionException"),
			StackTrace:         ps("trace"),
			Hostname:           ps("rs2"),
			Port:               pi32(16020),
			DoNotRetry:         pb(true),
			ServerOverloaded:   pb(true),
		},
		CellBlockMeta: &CellBlockMeta{Length: p32(99)},
	}
	checkGolden(t, in, want)
}

func TestConnectionHeaderWire(t *testing.T) {
	// rpc/RPC.proto: ConnectionHeader{user_info=1 UserInformation,
	// service_name=2 string, cell_block_codec_class=3 string,
	// cell_block_compressor_class=4 string, version_info=5 VersionInfo,
	// rpc_crypto_cipher_transformation=6 string, attribute=7 repeated
	// NameBytesPair}; UserInformation{effective_user=1, real_user=2}.
	// HBase.proto: VersionInfo{version=1, url=2, revision=3, user=4, date=5,
	// src_checksum=6 (all required strings), version_major=7 uint32,
	// version_minor=8 uint32}.
	in := wire().
		msg(1, wire().str(1, "alice").str(2, "bob")).
		str(2, "ClientService").
		str(3, "org.apache.hadoop.hbase.codec.KeyValueCodec").
		str(4, "org.apache.hadoop.io.compress.GzipCodec").
		msg(5, wire().str(1, "2.6.0").str(2, "u").str(3, "r").str(4, "me").str(5, "d").str(6, "c").varint(7, 2).varint(8, 6)).
		str(6, "AES/CTR/NoPadding").
		msg(7, nbpWire("a", "b"))
	want := &ConnectionHeader{
		UserInfo:                 &UserInformation{EffectiveUser: ps("alice"), RealUser: ps("bob")},
		ServiceName:              ps("ClientService"),
		CellBlockCodecClass:      ps("org.apache.hadoop.hbase.codec.KeyValueCodec"),
		CellBlockCompressorClass: ps("org.apache.hadoop.io.compress.GzipCodec"),
		VersionInfo: &VersionInfo{
			Version: ps("2.6.0"), Url: ps("u"), Revision: ps("r"), User: ps("me"),
			Date: ps("d"), SrcChecksum: ps("c"), VersionMajor: p32(2), VersionMinor: p32(6),
		},
		RpcCryptoCipherTransformation: ps("AES/CTR/NoPadding"),
		Attribute:                     []*NameBytesPair{nbp("a", "b")},
	}
	checkGolden(t, in, want)
}

func TestRegionInfoWire(t *testing.T) {
	// HBase.proto: RegionInfo{region_id=1 uint64, table_name=2 TableName,
	// start_key=3 bytes, end_key=4 bytes, offline=5 bool, split=6 bool,
	// replica_id=7 int32, region_encoded_name=8 string};
	// TableName{namespace=1 bytes, qualifier=2 bytes}.
	in := wire().
		varint(1, 1700000000001).
		msg(2, wire().str(1, "default").str(2, "t1")).
		str(3, "a").
		str(4, "m").
		boolean(5, true).
		boolean(6, true).
		varint(7, 1).
		str(8, "0123456789abcdef0123456789abcdef")
	want := &RegionInfo{
		RegionId:          p64(1700000000001),
		TableName:         &TableName{Namespace: []byte("default"), Qualifier: []byte("t1")},
		StartKey:          []byte("a"),
		EndKey:            []byte("m"),
		Offline:           pb(true),
		Split:             pb(true),
		ReplicaId:         pi32(1),
		RegionEncodedName: ps("0123456789abcdef0123456789abcdef"),
	}
	checkGolden(t, in, want)
}

func TestGetWire(t *testing.T) {
	// client/Client.proto: Get{row=1 bytes, column=2 repeated Column,
	// attribute=3 repeated NameBytesPair, filter=4 Filter, time_range=5,
	// max_versions=6 uint32, cache_blocks=7 bool, store_limit=8 uint32,
	// store_offset=9 uint32, existence_only=10 bool, closest_row_before=11
	// bool, consistency=12 enum (TIMELINE=1), cf_time_range=13 repeated
	// ColumnFamilyTimeRange, load_column_families_on_demand=14 bool,
	// query_metrics_enabled=15 bool}; Column{family=1 bytes, qualifier=2
	// repeated bytes}. HBase.proto: ColumnFamilyTimeRange{column_family=1,
	// time_range=2}.
	in := wire().
		str(1, "row1").
		msg(2, wire().str(1, "cf").str(2, "q1").str(2, "q2")).
		msg(3, nbpWire("x", "y")).
		msg(4, wire().str(1, "org.apache.hadoop.hbase.filter.KeyOnlyFilter").bytes(2, wire().boolean(1, true))).
		msg(5, timeRangeWire(10, 20)).
		varint(6, 3).
		boolean(7, false).
		varint(8, 5).
		varint(9, 6).
		boolean(10, true).
		boolean(11, false).
		varint(12, 1).
		msg(13, wire().str(1, "cf").msg(2, timeRangeWire(1, 2))).
		boolean(14, true).
		boolean(15, true)
	want := &Get{
		Row:       []byte("row1"),
		Column:    []*Column{{Family: []byte("cf"), Qualifier: [][]byte{[]byte("q1"), []byte("q2")}}},
		Attribute: []*NameBytesPair{nbp("x", "y")},
		Filter: &Filter{
			Name:             ps("org.apache.hadoop.hbase.filter.KeyOnlyFilter"),
			SerializedFilter: wire().boolean(1, true),
		},
		TimeRange:                  timeRange(10, 20),
		MaxVersions:                p32(3),
		CacheBlocks:                pb(false),
		StoreLimit:                 p32(5),
		StoreOffset:                p32(6),
		ExistenceOnly:              pb(true),
		ClosestRowBefore:           pb(false),
		Consistency:                Consistency_TIMELINE.Enum(),
		CfTimeRange:                []*ColumnFamilyTimeRange{{ColumnFamily: []byte("cf"), TimeRange: timeRange(1, 2)}},
		LoadColumnFamiliesOnDemand: pb(true),
		QueryMetricsEnabled:        pb(true),
	}
	checkGolden(t, in, want)

	// GetRequest{region=1 RegionSpecifier, get=2 Get}.
	req := wire().msg(1, regionSpecWire("t1,,1.abc.")).msg(2, wire().str(1, "row1"))
	checkGolden(t, req, &GetRequest{Region: regionSpec("t1,,1.abc."), Get: &Get{Row: []byte("row1")}})

	// Defaults declared by HBase must be what an unset field reads as.
	var empty Get
	if empty.GetMaxVersions() != 1 || !empty.GetCacheBlocks() || empty.GetConsistency() != Consistency_STRONG {
		t.Errorf("Get defaults: max_versions=%d cache_blocks=%v consistency=%v",
			empty.GetMaxVersions(), empty.GetCacheBlocks(), empty.GetConsistency())
	}
}

// Cell.proto: Cell{row=1, family=2, qualifier=3 bytes, timestamp=4 uint64,
// cell_type=5 CellType (PUT=4), value=6 bytes, tags=7 bytes}.
func cellWire() wb {
	return wire().str(1, "r").str(2, "f").str(3, "q").varint(4, 123).varint(5, 4).str(6, "v").str(7, "t")
}

func cell() *Cell {
	return &Cell{
		Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: p64(123),
		CellType: CellType_PUT.Enum(), Value: []byte("v"), Tags: []byte("t"),
	}
}

func TestResultWire(t *testing.T) {
	// client/Client.proto: Result{cell=1 repeated Cell, associated_cell_count=2
	// int32, exists=3 bool, stale=4 bool, partial=5 bool, metrics=6
	// QueryMetrics}; QueryMetrics{block_bytes_scanned=1 uint64}.
	in := wire().
		msg(1, cellWire()).
		varint(2, 7).
		boolean(3, true).
		boolean(4, true).
		boolean(5, true).
		msg(6, wire().varint(1, 4096))
	want := &Result{
		Cell:                []*Cell{cell()},
		AssociatedCellCount: pi32(7),
		Exists:              pb(true),
		Stale:               pb(true),
		Partial:             pb(true),
		Metrics:             &QueryMetrics{BlockBytesScanned: p64(4096)},
	}
	checkGolden(t, in, want)
	// GetResponse{result=1}.
	checkGolden(t, wire().msg(1, wire().varint(2, 1)), &GetResponse{Result: &Result{AssociatedCellCount: pi32(1)}})
}

func TestConditionWire(t *testing.T) {
	// client/Client.proto: Condition{row=1 bytes, family=2 bytes, qualifier=3
	// bytes, compare_type=4 CompareType, comparator=5 Comparator,
	// time_range=6 TimeRange, filter=7 Filter, queryMetricsEnabled=8 bool}.
	// HBase.proto: CompareType EQUAL=2.
	// client/Comparator.proto: BinaryComparator{comparable=1
	// ByteArrayComparable{value=1}}.
	cmp := wire().msg(1, wire().str(1, "val"))
	in := wire().
		str(1, "row").
		str(2, "cf").
		str(3, "q").
		varint(4, 2).
		msg(5, wire().str(1, "org.apache.hadoop.hbase.filter.BinaryComparator").bytes(2, cmp)).
		msg(6, timeRangeWire(0, 100)).
		msg(7, wire().str(1, "org.apache.hadoop.hbase.filter.FilterAllFilter")).
		boolean(8, true)
	want := &Condition{
		Row:         []byte("row"),
		Family:      []byte("cf"),
		Qualifier:   []byte("q"),
		CompareType: CompareType_EQUAL.Enum(),
		Comparator: &Comparator{
			Name:                 ps("org.apache.hadoop.hbase.filter.BinaryComparator"),
			SerializedComparator: cmp,
		},
		TimeRange:           timeRange(0, 100),
		Filter:              &Filter{Name: ps("org.apache.hadoop.hbase.filter.FilterAllFilter")},
		QueryMetricsEnabled: pb(true),
	}
	checkGolden(t, in, want)

	var bc BinaryComparator
	if err := proto.Unmarshal(cmp, &bc); err != nil || string(bc.GetComparable().GetValue()) != "val" {
		t.Errorf("BinaryComparator: %v %v", &bc, err)
	}
}

// client/Client.proto: MutationProto{row=1 bytes, mutate_type=2 MutationType
// (APPEND=0 INCREMENT=1 PUT=2 DELETE=3), column_value=3 repeated ColumnValue,
// timestamp=4 uint64, attribute=5 repeated NameBytesPair, durability=6
// Durability (USE_DEFAULT=0 SKIP_WAL=1 ASYNC_WAL=2 SYNC_WAL=3 FSYNC_WAL=4),
// time_range=7, associated_cell_count=8 int32, nonce=9 uint64};
// ColumnValue{family=1 bytes, qualifier_value=2 repeated QualifierValue};
// QualifierValue{qualifier=1 bytes, value=2 bytes, timestamp=3 uint64,
// delete_type=4 DeleteType (DELETE_FAMILY_VERSION=3), tags=5 bytes}.
func mutationWire() wb {
	return wire().
		str(1, "row").
		varint(2, 2).
		msg(3, wire().str(1, "cf").msg(2, wire().str(1, "q").str(2, "v").varint(3, 55).varint(4, 3).str(5, "tg"))).
		varint(4, 77).
		msg(5, nbpWire("a", "b")).
		varint(6, 4).
		msg(7, timeRangeWire(1, 9)).
		varint(8, 3).
		varint(9, 0xdeadbeef)
}

func mutation() *MutationProto {
	return &MutationProto{
		Row:        []byte("row"),
		MutateType: MutationProto_PUT.Enum(),
		ColumnValue: []*MutationProto_ColumnValue{{
			Family: []byte("cf"),
			QualifierValue: []*MutationProto_ColumnValue_QualifierValue{{
				Qualifier:  []byte("q"),
				Value:      []byte("v"),
				Timestamp:  p64(55),
				DeleteType: MutationProto_DELETE_FAMILY_VERSION.Enum(),
				Tags:       []byte("tg"),
			}},
		}},
		Timestamp:           p64(77),
		Attribute:           []*NameBytesPair{nbp("a", "b")},
		Durability:          MutationProto_FSYNC_WAL.Enum(),
		TimeRange:           timeRange(1, 9),
		AssociatedCellCount: pi32(3),
		Nonce:               p64(0xdeadbeef),
	}
}

func TestMutationWire(t *testing.T) {
	checkGolden(t, mutationWire(), mutation())

	// MutateRequest{region=1, mutation=2, condition=3, nonce_group=4 uint64}.
	req := wire().
		msg(1, regionSpecWire("r")).
		msg(2, mutationWire()).
		msg(3, wire().str(1, "row")).
		varint(4, 11)
	checkGolden(t, req, &MutateRequest{
		Region:     regionSpec("r"),
		Mutation:   mutation(),
		Condition:  &Condition{Row: []byte("row")},
		NonceGroup: p64(11),
	})

	// MutateResponse{result=1, processed=2 bool, metrics=3 QueryMetrics}.
	resp := wire().msg(1, wire()).boolean(2, true).msg(3, wire().varint(1, 1))
	checkGolden(t, resp, &MutateResponse{
		Result:    &Result{},
		Processed: pb(true),
		Metrics:   &QueryMetrics{BlockBytesScanned: p64(1)},
	})

	if (&MutationProto{}).GetDurability() != MutationProto_USE_DEFAULT {
		t.Error("MutationProto.durability default must be USE_DEFAULT")
	}
}

func TestScanWire(t *testing.T) {
	// client/Client.proto: Scan{column=1, attribute=2, start_row=3 bytes,
	// stop_row=4 bytes, filter=5, time_range=6, max_versions=7 uint32,
	// cache_blocks=8 bool, batch_size=9 uint32, max_result_size=10 uint64,
	// store_limit=11 uint32, store_offset=12 uint32,
	// load_column_families_on_demand=13 bool, small=14 bool, reversed=15
	// bool, consistency=16, caching=17 uint32, allow_partial_results=18 bool,
	// cf_time_range=19, mvcc_read_point=20 uint64, include_start_row=21 bool,
	// include_stop_row=22 bool, readType=23 ReadType (DEFAULT=0 STREAM=1
	// PREAD=2), need_cursor_result=24 bool, query_metrics_enabled=25 bool,
	// limit=26 uint32}.
	in := wire().
		msg(1, wire().str(1, "cf")).
		msg(2, nbpWire("k", "v")).
		str(3, "a").
		str(4, "z").
		msg(5, wire().str(1, "org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter")).
		msg(6, timeRangeWire(5, 6)).
		varint(7, 2).
		boolean(8, false).
		varint(9, 100).
		varint(10, 2<<20).
		varint(11, 3).
		varint(12, 4).
		boolean(13, true).
		boolean(14, true).
		boolean(15, true).
		varint(16, 1).
		varint(17, 500).
		boolean(18, true).
		msg(19, wire().str(1, "cf").msg(2, timeRangeWire(7, 8))).
		varint(20, 999).
		boolean(21, false).
		boolean(22, true).
		varint(23, 2).
		boolean(24, true).
		boolean(25, true).
		varint(26, 10)
	want := &Scan{
		Column:                     []*Column{{Family: []byte("cf")}},
		Attribute:                  []*NameBytesPair{nbp("k", "v")},
		StartRow:                   []byte("a"),
		StopRow:                    []byte("z"),
		Filter:                     &Filter{Name: ps("org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter")},
		TimeRange:                  timeRange(5, 6),
		MaxVersions:                p32(2),
		CacheBlocks:                pb(false),
		BatchSize:                  p32(100),
		MaxResultSize:              p64(2 << 20),
		StoreLimit:                 p32(3),
		StoreOffset:                p32(4),
		LoadColumnFamiliesOnDemand: pb(true),
		Small:                      pb(true),
		Reversed:                   pb(true),
		Consistency:                Consistency_TIMELINE.Enum(),
		Caching:                    p32(500),
		AllowPartialResults:        pb(true),
		CfTimeRange:                []*ColumnFamilyTimeRange{{ColumnFamily: []byte("cf"), TimeRange: timeRange(7, 8)}},
		MvccReadPoint:              p64(999),
		IncludeStartRow:            pb(false),
		IncludeStopRow:             pb(true),
		ReadType:                   Scan_PREAD.Enum(),
		NeedCursorResult:           pb(true),
		QueryMetricsEnabled:        pb(true),
		Limit:                      p32(10),
	}
	checkGolden(t, in, want)

	// HBase defaults: max_versions=1, cache_blocks=true, include_start_row=true,
	// include_stop_row=false, reversed=false, readType=DEFAULT.
	var empty Scan
	if empty.GetMaxVersions() != 1 || !empty.GetCacheBlocks() || !empty.GetIncludeStartRow() ||
		empty.GetIncludeStopRow() || empty.GetReversed() || empty.GetReadType() != Scan_DEFAULT {
		t.Errorf("Scan defaults wrong: %+v", &empty)
	}
}

func TestScanRequestWire(t *testing.T) {
	// client/Client.proto: ScanRequest{region=1, scan=2, scanner_id=3 uint64,
	// number_of_rows=4 uint32, close_scanner=5 bool, next_call_seq=6 uint64,
	// client_handles_partials=7 bool, client_handles_heartbeats=8 bool,
	// track_scan_metrics=9 bool, renew=10 bool, limit_of_rows=11 uint32}.
	in := wire().
		msg(1, regionSpecWire("r")).
		msg(2, wire().boolean(15, true)).
		varint(3, 1<<40).
		varint(4, 100).
		boolean(5, true).
		varint(6, 3).
		boolean(7, true).
		boolean(8, true).
		boolean(9, true).
		boolean(10, true).
		varint(11, 50)
	want := &ScanRequest{
		Region:                  regionSpec("r"),
		Scan:                    &Scan{Reversed: pb(true)},
		ScannerId:               p64(1 << 40),
		NumberOfRows:            p32(100),
		CloseScanner:            pb(true),
		NextCallSeq:             p64(3),
		ClientHandlesPartials:   pb(true),
		ClientHandlesHeartbeats: pb(true),
		TrackScanMetrics:        pb(true),
		Renew:                   pb(true),
		LimitOfRows:             p32(50),
	}
	checkGolden(t, in, want)
}

func TestScanResponseWire(t *testing.T) {
	// client/Client.proto: ScanResponse{cells_per_result=1 repeated uint32,
	// scanner_id=2 uint64, more_results=3 bool, ttl=4 uint32, results=5
	// repeated Result, stale=6 bool, partial_flag_per_result=7 repeated bool,
	// more_results_in_region=8 bool, heartbeat_message=9 bool,
	// scan_metrics=10 ScanMetrics, mvcc_read_point=11 uint64, cursor=12
	// Cursor, query_metrics=13 repeated QueryMetrics}.
	// MapReduce.proto: ScanMetrics{metrics=1 repeated NameInt64Pair};
	// HBase.proto: NameInt64Pair{name=1 string, value=2 int64}.
	// Cursor{row=1 bytes}.
	in := wire().
		varint(1, 2).varint(1, 3).
		varint(2, 77).
		boolean(3, true).
		varint(4, 60000).
		msg(5, wire().msg(1, cellWire())).
		boolean(6, false).
		boolean(7, false).boolean(7, true).
		boolean(8, true).
		boolean(9, true).
		msg(10, wire().msg(1, wire().str(1, "ROWS_SCANNED").varint(2, 5))).
		varint(11, 1234).
		msg(12, wire().str(1, "cursor-row")).
		msg(13, wire().varint(1, 64))
	want := &ScanResponse{
		CellsPerResult:       []uint32{2, 3},
		ScannerId:            p64(77),
		MoreResults:          pb(true),
		Ttl:                  p32(60000),
		Results:              []*Result{{Cell: []*Cell{cell()}}},
		Stale:                pb(false),
		PartialFlagPerResult: []bool{false, true},
		MoreResultsInRegion:  pb(true),
		HeartbeatMessage:     pb(true),
		ScanMetrics:          &ScanMetrics{Metrics: []*NameInt64Pair{{Name: ps("ROWS_SCANNED"), Value: pi64(5)}}},
		MvccReadPoint:        p64(1234),
		Cursor:               &Cursor{Row: []byte("cursor-row")},
		QueryMetrics:         []*QueryMetrics{{BlockBytesScanned: p64(64)}},
	}
	checkGolden(t, in, want)

	// Packed encoding of the repeated scalars must be accepted too.
	var packed []byte
	packed = protowire.AppendTag(packed, 1, protowire.BytesType)
	packed = protowire.AppendBytes(packed, []byte{2, 3})
	packed = protowire.AppendTag(packed, 7, protowire.BytesType)
	packed = protowire.AppendBytes(packed, []byte{0, 1})
	var got ScanResponse
	if err := proto.Unmarshal(packed, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.CellsPerResult) != 2 || got.CellsPerResult[1] != 3 || len(got.PartialFlagPerResult) != 2 || !got.PartialFlagPerResult[1] {
		t.Errorf("packed decode: %v", &got)
	}
}

func TestMultiWire(t *testing.T) {
	// client/Client.proto: MultiRequest{regionAction=1 repeated RegionAction,
	// nonceGroup=2 uint64, condition=3 Condition}; RegionAction{region=1,
	// atomic=2 bool, action=3 repeated Action, condition=4 Condition};
	// Action{index=1 uint32, mutation=2 MutationProto, get=3 Get,
	// service_call=4 CoprocessorServiceCall}; CoprocessorServiceCall{row=1
	// bytes, service_name=2, method_name=3 strings, request=4 bytes}.
	in := wire().
		msg(1, wire().
			msg(1, regionSpecWire("r")).
			boolean(2, true).
			msg(3, wire().varint(1, 0).msg(2, mutationWire())).
			msg(3, wire().varint(1, 1).msg(3, wire().str(1, "g"))).
			msg(3, wire().varint(1, 2).msg(4, wire().str(1, "row").str(2, "Svc").str(3, "Do").str(4, "req"))).
			msg(4, wire().str(1, "row"))).
		varint(2, 8).
		msg(3, wire().str(1, "old"))
	want := &MultiRequest{
		RegionAction: []*RegionAction{{
			Region: regionSpec("r"),
			Atomic: pb(true),
			Action: []*Action{
				{Index: p32(0), Mutation: mutation()},
				{Index: p32(1), Get: &Get{Row: []byte("g")}},
				{Index: p32(2), ServiceCall: &CoprocessorServiceCall{
					Row: []byte("row"), ServiceName: ps("Svc"), MethodName: ps("Do"), Request: []byte("req"),
				}},
			},
			Condition: &Condition{Row: []byte("row")},
		}},
		NonceGroup: p64(8),
		Condition:  &Condition{Row: []byte("old")},
	}
	checkGolden(t, in, want)
}

func TestMultiResponseWire(t *testing.T) {
	// client/Client.proto: ResultOrException{index=1 uint32, result=2,
	// exception=3 NameBytesPair, service_result=4 CoprocessorServiceResult,
	// loadStats=5 RegionLoadStats, metrics=6 QueryMetrics};
	// CoprocessorServiceResult{value=1 NameBytesPair}; RegionLoadStats{
	// memStoreLoad=1, heapOccupancy=2, compactionPressure=3 int32}.
	roe := wire().
		varint(1, 4).
		msg(2, wire().boolean(3, true)).
		msg(3, nbpWire("java.io.IOException", "boom")).
		msg(4, wire().msg(1, nbpWire("n", "v"))).
		msg(5, wire().varint(1, 10).varint(2, 20).varint(3, 30)).
		msg(6, wire().varint(1, 1))
	wantROE := &ResultOrException{
		Index:         p32(4),
		Result:        &Result{Exists: pb(true)},
		Exception:     nbp("java.io.IOException", "boom"),
		ServiceResult: &CoprocessorServiceResult{Value: nbp("n", "v")},
		LoadStats:     &RegionLoadStats{MemStoreLoad: pi32(10), HeapOccupancy: pi32(20), CompactionPressure: pi32(30)},
		Metrics:       &QueryMetrics{BlockBytesScanned: p64(1)},
	}
	checkGolden(t, roe, wantROE)

	// RegionActionResult{resultOrException=1 repeated, exception=2
	// NameBytesPair, processed=3 bool}; MultiResponse{regionActionResult=1
	// repeated, processed=2 bool, regionStatistics=3 MultiRegionLoadStats};
	// MultiRegionLoadStats{region=1 repeated RegionSpecifier, stat=2 repeated
	// RegionLoadStats}.
	in := wire().
		msg(1, wire().msg(1, roe).msg(2, nbpWire("e", "x")).boolean(3, true)).
		boolean(2, true).
		msg(3, wire().msg(1, regionSpecWire("r")).msg(2, wire().varint(1, 5)))
	want := &MultiResponse{
		RegionActionResult: []*RegionActionResult{{
			ResultOrException: []*ResultOrException{wantROE},
			Exception:         nbp("e", "x"),
			Processed:         pb(true),
		}},
		Processed: pb(true),
		RegionStatistics: &MultiRegionLoadStats{
			Region: []*RegionSpecifier{regionSpec("r")},
			Stat:   []*RegionLoadStats{{MemStoreLoad: pi32(5)}},
		},
	}
	checkGolden(t, in, want)
}

func TestGetProcedureResultResponseWire(t *testing.T) {
	// server/master/Master.proto: GetProcedureResultResponse{state=1 State
	// (NOT_FOUND=0 RUNNING=1 FINISHED=2), submitted_time=2 uint64,
	// last_update=3 uint64, result=4 bytes, exception=5
	// ForeignExceptionMessage}.
	// ErrorHandling.proto: ForeignExceptionMessage{source=1 string,
	// generic_exception=2}; GenericExceptionMessage{class_name=1, message=2
	// strings, error_info=3 bytes, trace=4 repeated StackTraceElementMessage};
	// StackTraceElementMessage{declaring_class=1, method_name=2, file_name=3
	// strings, line_number=4 int32}.
	in := wire().
		varint(1, 2).
		varint(2, 100).
		varint(3, 200).
		str(4, "res").
		msg(5, wire().
			str(1, "master").
			msg(2, wire().
				str(1, "java.lang.IllegalStateException").
				str(2, "bad").
				str(3, "info").
				msg(4, wire().str(1, "C").str(2, "m").str(3, "C.java").varint(4, 12))))
	want := &GetProcedureResultResponse{
		State:         GetProcedureResultResponse_FINISHED.Enum(),
		SubmittedTime: p64(100),
		LastUpdate:    p64(200),
		Result:        []byte("res"),
		Exception: &ForeignExceptionMessage{
			Source: ps("master"),
			GenericException: &GenericExceptionMessage{
				ClassName: ps("java.lang.IllegalStateException"),
				Message:   ps("bad"),
				ErrorInfo: []byte("info"),
				Trace: []*StackTraceElementMessage{{
					DeclaringClass: ps("C"), MethodName: ps("m"), FileName: ps("C.java"), LineNumber: pi32(12),
				}},
			},
		},
	}
	checkGolden(t, in, want)
}

func TestZooKeeperWire(t *testing.T) {
	// server/zookeeper/ZooKeeper.proto: MetaRegionServer{server=1 ServerName,
	// rpc_version=2 uint32, state=3 RegionState.State};
	// server/ClusterStatus.proto: RegionState.State OPEN=3.
	in := wire().msg(1, serverNameWire()).varint(2, 0).varint(3, 3)
	checkGolden(t, in, &MetaRegionServer{
		Server:     serverName(),
		RpcVersion: p32(0),
		State:      RegionState_OPEN.Enum(),
	})

	// ZooKeeper.proto: Master{master=1 ServerName, rpc_version=2 uint32,
	// info_port=3 uint32}.
	m := wire().msg(1, serverNameWire()).varint(2, 0).varint(3, 16010)
	checkGolden(t, m, &Master{Master: serverName(), RpcVersion: p32(0), InfoPort: p32(16010)})

	// ZooKeeper.proto: ClusterUp{start_date=1 string};
	// server/ClusterId.proto: ClusterId{cluster_id=1 string}.
	checkGolden(t, wire().str(1, "Mon Jan 01"), &ClusterUp{StartDate: ps("Mon Jan 01")})
	checkGolden(t, wire().str(1, "2b5f4c0e-uuid"), &ClusterId{ClusterId: ps("2b5f4c0e-uuid")})
}

func TestFilterWire(t *testing.T) {
	// client/Filter.proto: SingleColumnValueFilter{column_family=1 bytes,
	// column_qualifier=2 bytes, compare_op=3 CompareType, comparator=4,
	// filter_if_missing=5 bool, latest_version_only=6 bool}.
	in := wire().
		str(1, "cf").
		str(2, "q").
		varint(3, 5).
		msg(4, wire().str(1, "org.apache.hadoop.hbase.filter.NullComparator")).
		boolean(5, true).
		boolean(6, false)
	checkGolden(t, in, &SingleColumnValueFilter{
		ColumnFamily:      []byte("cf"),
		ColumnQualifier:   []byte("q"),
		CompareOp:         CompareType_GREATER.Enum(),
		Comparator:        &Comparator{Name: ps("org.apache.hadoop.hbase.filter.NullComparator")},
		FilterIfMissing:   pb(true),
		LatestVersionOnly: pb(false),
	})

	// FilterList{operator=1 Operator (MUST_PASS_ALL=1 MUST_PASS_ONE=2),
	// filters=2 repeated Filter}.
	fl := wire().varint(1, 2).msg(2, wire().str(1, "a")).msg(2, wire().str(1, "b"))
	checkGolden(t, fl, &FilterList{
		Operator: FilterList_MUST_PASS_ONE.Enum(),
		Filters:  []*Filter{{Name: ps("a")}, {Name: ps("b")}},
	})

	// RandomRowFilter{chance=1 float} (fixed32 on the wire).
	checkGolden(t, wire().fixed32(1, 0x3f000000), &RandomRowFilter{Chance: proto.Float32(0.5)})

	// TimestampsFilter{timestamps=1 repeated int64 [packed=true], can_hint=2}.
	var ts wb = protowire.AppendTag(nil, 1, protowire.BytesType)
	ts = protowire.AppendBytes(ts, protowire.AppendVarint(protowire.AppendVarint(nil, 5), 6))
	ts = ts.boolean(2, true)
	checkGolden(t, ts, &TimestampsFilter{Timestamps: []int64{5, 6}, CanHint: pb(true)})

	// MultiRowRangeFilter{row_range_list=1}; RowRange{start_row=1,
	// start_row_inclusive=2, stop_row=3, stop_row_inclusive=4}.
	mr := wire().msg(1, wire().str(1, "a").boolean(2, true).str(3, "b").boolean(4, false))
	checkGolden(t, mr, &MultiRowRangeFilter{RowRangeList: []*RowRange{{
		StartRow: []byte("a"), StartRowInclusive: pb(true), StopRow: []byte("b"), StopRowInclusive: pb(false),
	}}})
}

func TestEnumValues(t *testing.T) {
	// Enum numbers as declared by HBase (HBase.proto, Cell.proto,
	// client/Client.proto, client/Comparator.proto, server/ClusterStatus.proto).
	cases := []struct {
		name string
		got  int32
		want int32
	}{
		{"RegionSpecifier.REGION_NAME", int32(RegionSpecifier_REGION_NAME), 1},
		{"RegionSpecifier.ENCODED_REGION_NAME", int32(RegionSpecifier_ENCODED_REGION_NAME), 2},
		{"CompareType.LESS", int32(CompareType_LESS), 0},
		{"CompareType.NO_OP", int32(CompareType_NO_OP), 6},
		{"CellType.PUT", int32(CellType_PUT), 4},
		{"CellType.DELETE", int32(CellType_DELETE), 8},
		{"CellType.DELETE_COLUMN", int32(CellType_DELETE_COLUMN), 12},
		{"CellType.DELETE_FAMILY", int32(CellType_DELETE_FAMILY), 14},
		{"CellType.MAXIMUM", int32(CellType_MAXIMUM), 255},
		{"MutationType.APPEND", int32(MutationProto_APPEND), 0},
		{"MutationType.DELETE", int32(MutationProto_DELETE), 3},
		{"DeleteType.DELETE_MULTIPLE_VERSIONS", int32(MutationProto_DELETE_MULTIPLE_VERSIONS), 1},
		{"Durability.SKIP_WAL", int32(MutationProto_SKIP_WAL), 1},
		{"TableState.DISABLED", int32(TableState_DISABLED), 1},
		{"BitComparator.XOR", int32(BitComparator_XOR), 3},
		{"RegionState.ABNORMALLY_CLOSED", int32(RegionState_ABNORMALLY_CLOSED), 15},
		{"Option.LIVE_SERVERS", int32(Option_LIVE_SERVERS), 2},
		{"Option.UNKNOWN_SERVERS", int32(Option_UNKNOWN_SERVERS), 14},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestRequiredFieldsEnforced(t *testing.T) {
	// HBase.proto: TableName.qualifier (2) is required.
	noQualifier := wire().str(1, "default")
	var tn TableName
	if err := proto.Unmarshal(noQualifier, &tn); err == nil {
		t.Error("TableName without qualifier decoded without error")
	}
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(noQualifier, &tn); err != nil {
		t.Errorf("AllowPartial decode: %v", err)
	}
	if _, err := proto.Marshal(&tn); err == nil {
		t.Error("marshal of TableName without qualifier succeeded")
	}

	// Required fields nested inside optional/repeated ones are checked too.
	cases := []struct {
		name string
		in   wb
		m    proto.Message
	}{
		// HBase.proto: RegionSpecifier.value (2) required.
		{"RegionSpecifier without value", wire().varint(1, 1), &RegionSpecifier{}},
		// client/Client.proto: GetRequest.get (2) required.
		{"GetRequest without get", wire().msg(1, regionSpecWire("r")), &GetRequest{}},
		// client/Client.proto: Get.row (1) required, nested in GetRequest.
		{"GetRequest with rowless get", wire().msg(1, regionSpecWire("r")).msg(2, wire().varint(6, 1)), &GetRequest{}},
		// client/Client.proto: RegionAction.region (1) required, nested in MultiRequest.
		{"MultiRequest with regionless action", wire().msg(1, wire().boolean(2, true)), &MultiRequest{}},
		// ZooKeeper.proto: MetaRegionServer.server (1) required.
		{"MetaRegionServer without server", wire().varint(2, 0), &MetaRegionServer{}},
		// HBase.proto: ServerName.host_name (1) required.
		{"Master with hostless server", wire().msg(1, wire().varint(2, 1)), &Master{}},
		// Master.proto: GetProcedureResultResponse.state (1) required.
		{"GetProcedureResultResponse without state", wire().varint(2, 1), &GetProcedureResultResponse{}},
		// rpc/RPC.proto: UserInformation.effective_user (1) required.
		{"ConnectionHeader with userless user_info", wire().msg(1, wire().str(2, "real")), &ConnectionHeader{}},
	}
	for _, c := range cases {
		if err := proto.Unmarshal(c.in, c.m); err == nil {
			t.Errorf("%s: decoded without error", c.name)
		}
	}
}

func TestUnknownFieldsPreserved(t *testing.T) {
	// A field this subset does not declare (number 99) must survive a
	// decode/encode round trip so that proxies do not drop data.
	in := wire().str(3, "start").str(99, "future")
	var s Scan
	if err := proto.Unmarshal(in, &s); err != nil {
		t.Fatal(err)
	}
	out, err := proto.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("round trip lost unknown field: got %x want %x", out, []byte(in))
	}
}

func TestAdminWire(t *testing.T) {
	// server/region/Admin.proto: GetRegionInfoRequest{region=1
	// RegionSpecifier, compaction_state=2 bool, best_split_row=3 bool}.
	checkGolden(t, wire().msg(1, regionSpecWire("r")).boolean(2, true).boolean(3, false),
		&GetRegionInfoRequest{Region: regionSpec("r"), CompactionState: pb(true), BestSplitRow: pb(false)})
	// GetRegionInfoResponse{region_info=1 RegionInfo, compaction_state=2
	// CompactionState (NONE=0 MINOR=1 MAJOR=2 MAJOR_AND_MINOR=3), 3 retired,
	// splittable=4 bool, mergeable=5 bool, best_split_row=6 bytes}.
	checkGolden(t, wire().
		msg(1, wire().varint(1, 7).msg(2, wire().str(1, "default").str(2, "t"))).
		varint(2, 3).boolean(4, true).boolean(5, false).str(6, "m"),
		&GetRegionInfoResponse{
			RegionInfo:      &RegionInfo{RegionId: p64(7), TableName: &TableName{Namespace: []byte("default"), Qualifier: []byte("t")}},
			CompactionState: GetRegionInfoResponse_MAJOR_AND_MINOR.Enum(),
			Splittable:      pb(true), Mergeable: pb(false), BestSplitRow: []byte("m"),
		})
	// GetStoreFileRequest{region=1, family=2 repeated bytes};
	// GetStoreFileResponse{store_file=1 repeated string}.
	checkGolden(t, wire().msg(1, regionSpecWire("r")).str(2, "a").str(2, "b"),
		&GetStoreFileRequest{Region: regionSpec("r"), Family: [][]byte{[]byte("a"), []byte("b")}})
	checkGolden(t, wire().str(1, "/x/a").str(1, "/x/b"), &GetStoreFileResponse{StoreFile: []string{"/x/a", "/x/b"}})
	// GetOnlineRegionResponse{region_info=1 repeated RegionInfo}.
	tn := wire().str(1, "default").str(2, "t")
	tnPB := &TableName{Namespace: []byte("default"), Qualifier: []byte("t")}
	checkGolden(t, wire().msg(1, wire().varint(1, 1).msg(2, tn)).msg(1, wire().varint(1, 2).msg(2, tn)),
		&GetOnlineRegionResponse{RegionInfo: []*RegionInfo{{RegionId: p64(1), TableName: tnPB}, {RegionId: p64(2), TableName: tnPB}}})
	// FlushRegionRequest{region=1, if_older_than_ts=2 uint64,
	// write_flush_wal_marker=3 bool, family=4 bytes};
	// FlushRegionResponse{last_flush_time=1 uint64, flushed=2 bool,
	// wrote_flush_wal_marker=3 bool}.
	checkGolden(t, wire().msg(1, regionSpecWire("r")).varint(2, 99).boolean(3, true).str(4, "cf"),
		&FlushRegionRequest{Region: regionSpec("r"), IfOlderThanTs: p64(99), WriteFlushWalMarker: pb(true), Family: []byte("cf")})
	checkGolden(t, wire().varint(1, 1234).boolean(2, true).boolean(3, false),
		&FlushRegionResponse{LastFlushTime: p64(1234), Flushed: pb(true), WroteFlushWalMarker: pb(false)})
	// CompactRegionRequest{region=1, major=2 bool, family=3 bytes}.
	checkGolden(t, wire().msg(1, regionSpecWire("r")).boolean(2, true).str(3, "cf"),
		&CompactRegionRequest{Region: regionSpec("r"), Major: pb(true), Family: []byte("cf")})
	// RollWALWriterResponse{region_to_flush=1 repeated bytes}.
	checkGolden(t, wire().str(1, "enc"), &RollWALWriterResponse{RegionToFlush: [][]byte{[]byte("enc")}})
	// GetServerInfoResponse{server_info=1 ServerInfo};
	// ServerInfo{server_name=1 ServerName, webui_port=2 uint32}.
	checkGolden(t, wire().msg(1, wire().msg(1, serverNameWire()).varint(2, 16030)),
		&GetServerInfoResponse{ServerInfo: &ServerInfo{ServerName: serverName(), WebuiPort: p32(16030)}})

	// server/master/Master.proto (2.6): FlushTableRequest{table_name=1
	// TableName, column_family=2 repeated bytes, nonce_group=3 uint64,
	// nonce=4 uint64}; FlushTableResponse{proc_id=1 uint64}.
	checkGolden(t, wire().msg(1, wire().str(1, "ns").str(2, "t")).str(2, "a").str(2, "b").varint(3, 5).varint(4, 6),
		&FlushTableRequest{TableName: &TableName{Namespace: []byte("ns"), Qualifier: []byte("t")},
			ColumnFamily: [][]byte{[]byte("a"), []byte("b")}, NonceGroup: p64(5), Nonce: p64(6)})
	checkGolden(t, wire().varint(1, 42), &FlushTableResponse{ProcId: p64(42)})
	// AddColumnRequest{table_name=1, column_families=2 ColumnFamilySchema,
	// nonce_group=3, nonce=4}; DeleteColumnRequest{table_name=1,
	// column_name=2 bytes, nonce_group=3, nonce=4}; ModifyTableRequest{
	// table_name=1, table_schema=2 TableSchema, nonce_group=3, nonce=4};
	// HBase.proto: ColumnFamilySchema{name=1 bytes, attributes=2
	// BytesBytesPair, configuration=3 NameStringPair}.
	checkGolden(t, wire().msg(1, wire().str(1, "default").str(2, "t")).msg(2, wire().str(1, "cf").msg(2, wire().str(1, "VERSIONS").str(2, "3"))),
		&AddColumnRequest{TableName: &TableName{Namespace: []byte("default"), Qualifier: []byte("t")},
			ColumnFamilies: &ColumnFamilySchema{Name: []byte("cf"), Attributes: []*BytesBytesPair{{First: []byte("VERSIONS"), Second: []byte("3")}}}})
	checkGolden(t, wire().msg(1, wire().str(1, "default").str(2, "t")).str(2, "cf").varint(3, 1).varint(4, 2),
		&DeleteColumnRequest{TableName: &TableName{Namespace: []byte("default"), Qualifier: []byte("t")},
			ColumnName: []byte("cf"), NonceGroup: p64(1), Nonce: p64(2)})
	// CreateNamespaceRequest{namespaceDescriptor=1, nonce_group=2, nonce=3};
	// HBase.proto: NamespaceDescriptor{name=1 bytes, configuration=2
	// NameStringPair}; NameStringPair{name=1, value=2 strings}.
	checkGolden(t, wire().msg(1, wire().str(1, "ns").msg(2, wire().str(1, "k").str(2, "v"))).varint(2, 1).varint(3, 2),
		&CreateNamespaceRequest{NamespaceDescriptor: &NamespaceDescriptor{Name: []byte("ns"),
			Configuration: []*NameStringPair{{Name: ps("k"), Value: ps("v")}}}, NonceGroup: p64(1), Nonce: p64(2)})
	// GetNamespaceDescriptorRequest{namespaceName=1 string};
	// ListNamespacesResponse{namespaceName=1 repeated string}.
	checkGolden(t, wire().str(1, "ns"), &GetNamespaceDescriptorRequest{NamespaceName: ps("ns")})
	checkGolden(t, wire().str(1, "default").str(1, "hbase"), &ListNamespacesResponse{NamespaceName: []string{"default", "hbase"}})
}

func TestSnapshotWire(t *testing.T) {
	// server/Snapshot.proto: SnapshotDescription{name=1 string, table=2
	// string, creation_time=3 int64, type=4 Type (DISABLED=0 FLUSH=1
	// SKIPFLUSH=2), version=5 int32, owner=6 string, ttl=8 int64}.
	desc := wire().str(1, "snap1").str(2, "ns:t").varint(3, 1700000000000).varint(4, 2).varint(5, 2).
		str(6, "alice").varint(8, 3600)
	descPB := &SnapshotDescription{Name: ps("snap1"), Table: ps("ns:t"), CreationTime: pi64(1700000000000),
		Type: SnapshotDescription_SKIPFLUSH.Enum(), Version: pi32(2), Owner: ps("alice"), Ttl: pi64(3600)}
	checkGolden(t, desc, descPB)

	// server/master/Master.proto: SnapshotRequest{snapshot=1, nonce_group=2,
	// nonce=3 uint64}; SnapshotResponse{expected_timeout=1 int64, proc_id=2
	// int64}; RestoreSnapshotRequest{snapshot=1, nonce_group=2, nonce=3,
	// restoreACL=4 bool, customSFT=5 string}; RestoreSnapshotResponse{proc_id=1
	// uint64}; IsSnapshotDoneResponse{done=1 bool, snapshot=2};
	// GetCompletedSnapshotsResponse{snapshots=1 repeated}.
	checkGolden(t, wire().msg(1, desc).varint(2, 7).varint(3, 8),
		&SnapshotRequest{Snapshot: descPB, NonceGroup: p64(7), Nonce: p64(8)})
	checkGolden(t, wire().varint(1, 300000).varint(2, 12), &SnapshotResponse{ExpectedTimeout: pi64(300000), ProcId: pi64(12)})
	checkGolden(t, wire().msg(1, desc).varint(2, 7).varint(3, 8).boolean(4, true).str(5, "DEFAULT"),
		&RestoreSnapshotRequest{Snapshot: descPB, NonceGroup: p64(7), Nonce: p64(8), RestoreACL: pb(true), CustomSFT: ps("DEFAULT")})
	checkGolden(t, wire().varint(1, 13), &RestoreSnapshotResponse{ProcId: p64(13)})
	checkGolden(t, wire().boolean(1, true).msg(2, desc), &IsSnapshotDoneResponse{Done: pb(true), Snapshot: descPB})
	checkGolden(t, wire().msg(1, desc).msg(1, desc), &GetCompletedSnapshotsResponse{Snapshots: []*SnapshotDescription{descPB, descPB}})
	checkGolden(t, wire().msg(1, wire().str(1, "snap1")), &DeleteSnapshotRequest{Snapshot: &SnapshotDescription{Name: ps("snap1")}})

	// server/Snapshot.proto: SnapshotDataManifest{table_schema=1 TableSchema,
	// region_manifests=2}; SnapshotRegionManifest{version=1 int32,
	// region_info=2 RegionInfo, family_files=3}; FamilyFiles{family_name=1
	// bytes, store_files=2}; StoreFile{name=1 string, file_size=3 uint64}.
	// HBase.proto: TableSchema{table_name=1}; TableName{namespace=1,
	// qualifier=2}; RegionInfo{region_id=1, table_name=2, start_key=3,
	// end_key=4}.
	tn := wire().str(1, "default").str(2, "t")
	in := wire().
		msg(1, wire().msg(1, tn)).
		msg(2, wire().varint(1, 2).
			msg(2, wire().varint(1, 99).msg(2, tn).str(3, "a").str(4, "m")).
			msg(3, wire().str(1, "cf").msg(2, wire().str(1, "0123456789abcdef0123456789abcdef").varint(3, 4096))))
	tnPB := &TableName{Namespace: []byte("default"), Qualifier: []byte("t")}
	want := &SnapshotDataManifest{
		TableSchema: &TableSchema{TableName: tnPB},
		RegionManifests: []*SnapshotRegionManifest{{
			Version:    pi32(2),
			RegionInfo: &RegionInfo{RegionId: p64(99), TableName: tnPB, StartKey: []byte("a"), EndKey: []byte("m")},
			FamilyFiles: []*SnapshotRegionManifest_FamilyFiles{{
				FamilyName: []byte("cf"),
				StoreFiles: []*SnapshotRegionManifest_StoreFile{{Name: ps("0123456789abcdef0123456789abcdef"), FileSize: p64(4096)}},
			}},
		}},
	}
	checkGolden(t, in, want)
}
