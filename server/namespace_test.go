package server

import (
	"context"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func nsDesc(name string, conf ...string) *hbasepb.NamespaceDescriptor {
	d := &hbasepb.NamespaceDescriptor{Name: []byte(name)}
	for i := 0; i+1 < len(conf); i += 2 {
		d.Configuration = append(d.Configuration, &hbasepb.NameStringPair{Name: proto.String(conf[i]), Value: proto.String(conf[i+1])})
	}
	return d
}

func listNamespaces(t *testing.T, m *ipc.ClientConn) []string {
	t.Helper()
	resp := &hbasepb.ListNamespacesResponse{}
	call(t, m, "ListNamespaces", &hbasepb.ListNamespacesRequest{}, resp, nil)
	d := &hbasepb.ListNamespaceDescriptorsResponse{}
	call(t, m, "ListNamespaceDescriptors", &hbasepb.ListNamespaceDescriptorsRequest{}, d, nil)
	require.Len(t, d.NamespaceDescriptor, len(resp.NamespaceName))
	for i, nd := range d.NamespaceDescriptor {
		require.Equal(t, resp.NamespaceName[i], string(nd.GetName()))
	}
	return resp.NamespaceName
}

func createNsTable(t *testing.T, m *ipc.ClientConn, name *hbasepb.TableName) string {
	t.Helper()
	return runProcedure(t, m, "CreateTable", &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{
		TableName: name, ColumnFamilies: []*hbasepb.ColumnFamilySchema{cfSchema("cf")}}}, &hbasepb.CreateTableResponse{})
}

func TestNamespaces(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	require.Equal(t, []string{"default", "hbase"}, listNamespaces(t, m))

	require.Empty(t, runProcedure(t, m, "CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nsDesc("ns1", "owner", "me")},
		&hbasepb.CreateNamespaceResponse{}))
	require.Equal(t, []string{"default", "hbase", "ns1"}, listNamespaces(t, m))
	get := &hbasepb.GetNamespaceDescriptorResponse{}
	call(t, m, "GetNamespaceDescriptor", &hbasepb.GetNamespaceDescriptorRequest{NamespaceName: proto.String("ns1")}, get, nil)
	require.True(t, proto.Equal(nsDesc("ns1", "owner", "me"), get.NamespaceDescriptor), "%v", get.NamespaceDescriptor)
	require.Empty(t, runProcedure(t, m, "ModifyNamespace", &hbasepb.ModifyNamespaceRequest{NamespaceDescriptor: nsDesc("ns1", "owner", "you")},
		&hbasepb.ModifyNamespaceResponse{}))

	for _, tc := range []struct {
		method string
		req    proto.Message
		resp   procResp
		class  string
	}{
		{"CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nsDesc("ns1")}, &hbasepb.CreateNamespaceResponse{}, ipc.ClassNamespaceExistException},
		{"CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nsDesc("default")}, &hbasepb.CreateNamespaceResponse{}, ipc.ClassNamespaceExistException},
		{"CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nsDesc("bad-name")}, &hbasepb.CreateNamespaceResponse{}, ipc.ClassDoNotRetryIOException},
		{"CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nsDesc("")}, &hbasepb.CreateNamespaceResponse{}, ipc.ClassDoNotRetryIOException},
		{"ModifyNamespace", &hbasepb.ModifyNamespaceRequest{NamespaceDescriptor: nsDesc("nope")}, &hbasepb.ModifyNamespaceResponse{}, ipc.ClassNamespaceNotFoundException},
		{"DeleteNamespace", &hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String("nope")}, &hbasepb.DeleteNamespaceResponse{}, ipc.ClassNamespaceNotFoundException},
		{"DeleteNamespace", &hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String("default")}, &hbasepb.DeleteNamespaceResponse{}, ipc.ClassConstraintException},
		{"DeleteNamespace", &hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String("hbase")}, &hbasepb.DeleteNamespaceResponse{}, ipc.ClassConstraintException},
	} {
		require.Equal(t, tc.class, runProcedure(t, m, tc.method, tc.req, tc.resp), "%s %v", tc.method, tc.req)
	}
	_, err := m.Call(context.Background(), "GetNamespaceDescriptor", &hbasepb.GetNamespaceDescriptorRequest{NamespaceName: proto.String("nope")},
		nil, &hbasepb.GetNamespaceDescriptorResponse{})
	require.Equal(t, ipc.ClassNamespaceNotFoundException, exceptionClass(err))

	// Tables in a namespace: only in one that exists; listed by namespace.
	require.Equal(t, ipc.ClassNamespaceNotFoundException, createNsTable(t, m, tn("nope", "t")))
	require.Empty(t, createNsTable(t, m, tn("ns1", "t1")))
	require.Empty(t, createNsTable(t, m, tn("ns1", "t2")))
	names := &hbasepb.ListTableNamesByNamespaceResponse{}
	call(t, m, "ListTableNamesByNamespace", &hbasepb.ListTableNamesByNamespaceRequest{NamespaceName: proto.String("ns1")}, names, nil)
	require.Len(t, names.TableName, 2)
	require.Equal(t, "ns1", string(names.TableName[0].GetNamespace()))
	require.Equal(t, "t1", string(names.TableName[0].GetQualifier()))
	descs := &hbasepb.ListTableDescriptorsByNamespaceResponse{}
	call(t, m, "ListTableDescriptorsByNamespace", &hbasepb.ListTableDescriptorsByNamespaceRequest{NamespaceName: proto.String("ns1")}, descs, nil)
	require.Len(t, descs.TableSchema, 2)
	_, err = m.Call(context.Background(), "ListTableNamesByNamespace", &hbasepb.ListTableNamesByNamespaceRequest{NamespaceName: proto.String("nope")},
		nil, &hbasepb.ListTableNamesByNamespaceResponse{})
	require.Equal(t, ipc.ClassNamespaceNotFoundException, exceptionClass(err))

	// Data in a namespaced table, through meta like any other.
	c := dial(t, s, ClientService)
	reg := regionSpec(regionFor(metaRegions(t, c, "ns1:t1"), "a"))
	require.NoError(t, putFam(c, reg, "a", "cf", "q", "v", 1))
	n, err := getFam(c, reg, "a", "cf")
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// A namespace that holds tables is not deleted.
	require.Equal(t, ipc.ClassConstraintException, runProcedure(t, m, "DeleteNamespace",
		&hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String("ns1")}, &hbasepb.DeleteNamespaceResponse{}))

	// Namespaces, their tables and the data survive a restart.
	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, dir, nil)
	m = dial(t, s, MasterService)
	c = dial(t, s, ClientService)
	require.Equal(t, []string{"default", "hbase", "ns1"}, listNamespaces(t, m))
	get = &hbasepb.GetNamespaceDescriptorResponse{}
	call(t, m, "GetNamespaceDescriptor", &hbasepb.GetNamespaceDescriptorRequest{NamespaceName: proto.String("ns1")}, get, nil)
	require.True(t, proto.Equal(nsDesc("ns1", "owner", "you"), get.NamespaceDescriptor), "%v", get.NamespaceDescriptor)
	n, err = getFam(c, reg, "a", "cf")
	require.NoError(t, err)
	require.Equal(t, 1, n)

	for _, tbl := range []string{"t1", "t2"} {
		call(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: tn("ns1", tbl)}, &hbasepb.DisableTableResponse{}, nil)
		require.Empty(t, runProcedure(t, m, "DeleteTable", &hbasepb.DeleteTableRequest{TableName: tn("ns1", tbl)}, &hbasepb.DeleteTableResponse{}))
	}
	require.Empty(t, runProcedure(t, m, "DeleteNamespace", &hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String("ns1")},
		&hbasepb.DeleteNamespaceResponse{}))
	require.Equal(t, []string{"default", "hbase"}, listNamespaces(t, m))
	require.NoDirExists(t, s.tableDir(TableName{"ns1", "t1"}))
	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, dir, nil)
	m = dial(t, s, MasterService)
	require.Equal(t, []string{"default", "hbase"}, listNamespaces(t, m))
}
