package server

import (
	"context"
	"log/slog"
	"sort"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// FuzzServeCall feeds arbitrary request messages and cellblocks to every
// method of every service of a live server (a table with two regions):
// whatever the bytes, a call returns a reply or an error and never panics.
// Seeds are well-formed requests, so the fuzzer starts from what clients
// send.
func FuzzServeCall(f *testing.F) {
	s, err := Start(Config{DataDir: f.TempDir(), Port: 0, portSet: true, InfoPort: -1, infoPortSet: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if err := s.createTable(context.Background(), &hbasepb.TableSchema{TableName: TableName{"default", "f"}.PB(),
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}}}, [][]byte{[]byte("m")}); err != nil {
		f.Fatal(err)
	}
	var methods []string
	services := map[string]string{}
	for _, set := range []struct {
		svc string
		m   map[string]methodFunc
	}{{ClientService, clientMethods}, {MasterService, masterMethods}, {AdminService, adminMethods}, {ClientMetaService, registryMethods}} {
		for name := range set.m {
			methods = append(methods, name)
			services[name] = set.svc
		}
	}
	sort.Strings(methods)
	index := func(name string) uint8 {
		for i, m := range methods {
			if m == name {
				return uint8(i)
			}
		}
		f.Fatalf("no method %s", name)
		return 0
	}
	hr := s.tableByName(TableName{"default", "f"}).regions[0]
	reg := regionSpec(hr.name)
	kv := encoding.KeyValue{Row: []byte("a"), Family: []byte("cf"), Qualifier: []byte("q"), Timestamp: 5, Type: encoding.TypePut, Value: []byte("v")}
	cells := encoding.AppendCellBlock(nil, &kv, false)
	seed := func(method string, m proto.Message, cb []byte) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(index(method), b, cb)
	}
	seed("Get", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("a")}}, nil)
	seed("Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: &hbasepb.MutationProto{Row: []byte("a"),
		MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}}, cells)
	seed("Multi", &hbasepb.MultiRequest{RegionAction: []*hbasepb.RegionAction{{Region: reg, Action: []*hbasepb.Action{
		{Index: proto.Uint32(1), Mutation: &hbasepb.MutationProto{Row: []byte("a"), MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}},
		{Index: proto.Uint32(2), Get: &hbasepb.Get{Row: []byte("a")}}}}}}, cells)
	seed("Scan", &hbasepb.ScanRequest{Region: reg, Scan: &hbasepb.Scan{Reversed: proto.Bool(true)}, NumberOfRows: proto.Uint32(10)}, nil)
	seed("CreateTable", &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{TableName: TableName{"default", "g"}.PB(),
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}}}}, nil)
	seed("GetTableNames", &hbasepb.GetTableNamesRequest{Regex: proto.String(".*")}, nil)
	seed("PrepareBulkLoad", &hbasepb.PrepareBulkLoadRequest{TableName: TableName{"default", "f"}.PB(), Region: reg}, nil)
	seed("BulkLoadHFile", &hbasepb.BulkLoadHFileRequest{Region: reg, FamilyPath: []*hbasepb.BulkLoadHFileRequest_FamilyPath{
		{Family: []byte("cf"), Path: proto.String("file://" + f.TempDir() + "/cf/none")}}, AssignSeqNum: proto.Bool(true)}, nil)
	seed("CleanupBulkLoad", &hbasepb.CleanupBulkLoadRequest{BulkToken: proto.String(f.TempDir() + "/staging/f__00")}, nil)
	f.Fuzz(func(t *testing.T, m uint8, param, cb []byte) {
		method := methods[int(m)%len(methods)]
		if method == "DeleteTable" || method == "DisableTable" || method == "TruncateTable" {
			// Fuzzing them would only remove the table the rest exercise.
			return
		}
		c := &ipc.Call{Service: services[method], Method: method, Header: &hbasepb.RequestHeader{},
			Param: param, CellBlock: cb, Codec: ipc.Codec{Enabled: true}}
		reply, err := s.ServeCall(context.Background(), c)
		if err == nil && reply.Msg != nil {
			if _, err := proto.Marshal(reply.Msg); err != nil {
				t.Fatalf("%s: reply cannot be encoded (a required field is unset): %v", method, err)
			}
		}
	})
}
