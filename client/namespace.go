package client

import (
	"context"
	"sort"

	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// NamespaceDescriptor describes a namespace: HBase's NamespaceDescriptor,
// its name and configuration (hbase.namespace.quota.maxtables, ...).
type NamespaceDescriptor struct {
	Name          string
	Configuration map[string]string
}

func (nd *NamespaceDescriptor) pb() *hbasepb.NamespaceDescriptor {
	d := &hbasepb.NamespaceDescriptor{Name: []byte(nd.Name)}
	keys := make([]string, 0, len(nd.Configuration))
	for k := range nd.Configuration {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Configuration = append(d.Configuration, &hbasepb.NameStringPair{Name: proto.String(k), Value: proto.String(nd.Configuration[k])})
	}
	return d
}

func namespaceFromPB(d *hbasepb.NamespaceDescriptor) NamespaceDescriptor {
	nd := NamespaceDescriptor{Name: string(d.GetName())}
	for _, kv := range d.GetConfiguration() {
		if nd.Configuration == nil {
			nd.Configuration = map[string]string{}
		}
		nd.Configuration[kv.GetName()] = kv.GetValue()
	}
	return nd
}

// CreateNamespace creates a namespace; one that exists is refused with
// NamespaceExistException.
func (c *Client) CreateNamespace(ctx context.Context, nd NamespaceDescriptor) error {
	return c.runProcedure(ctx, "create namespace "+nd.Name, "CreateNamespace",
		&hbasepb.CreateNamespaceRequest{NamespaceDescriptor: nd.pb()}, &hbasepb.CreateNamespaceResponse{})
}

// ModifyNamespace replaces a namespace's configuration.
func (c *Client) ModifyNamespace(ctx context.Context, nd NamespaceDescriptor) error {
	return c.runProcedure(ctx, "modify namespace "+nd.Name, "ModifyNamespace",
		&hbasepb.ModifyNamespaceRequest{NamespaceDescriptor: nd.pb()}, &hbasepb.ModifyNamespaceResponse{})
}

// DeleteNamespace deletes an empty namespace. As in HBase, one that holds
// tables, and the reserved default and hbase, are refused with
// ConstraintException; one that does not exist with
// NamespaceNotFoundException.
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	return c.runProcedure(ctx, "delete namespace "+name, "DeleteNamespace",
		&hbasepb.DeleteNamespaceRequest{NamespaceName: proto.String(name)}, &hbasepb.DeleteNamespaceResponse{})
}

// GetNamespace returns a namespace's descriptor.
func (c *Client) GetNamespace(ctx context.Context, name string) (NamespaceDescriptor, error) {
	resp := &hbasepb.GetNamespaceDescriptorResponse{}
	if err := c.masterCall(ctx, "GetNamespaceDescriptor", &hbasepb.GetNamespaceDescriptorRequest{NamespaceName: proto.String(name)}, resp); err != nil {
		return NamespaceDescriptor{}, err
	}
	return namespaceFromPB(resp.GetNamespaceDescriptor()), nil
}

// ListNamespaces returns the names of every namespace.
func (c *Client) ListNamespaces(ctx context.Context) ([]string, error) {
	resp := &hbasepb.ListNamespacesResponse{}
	if err := c.masterCall(ctx, "ListNamespaces", &hbasepb.ListNamespacesRequest{}, resp); err != nil {
		return nil, err
	}
	return resp.GetNamespaceName(), nil
}

// ListNamespaceDescriptors returns every namespace's descriptor.
func (c *Client) ListNamespaceDescriptors(ctx context.Context) ([]NamespaceDescriptor, error) {
	resp := &hbasepb.ListNamespaceDescriptorsResponse{}
	if err := c.masterCall(ctx, "ListNamespaceDescriptors", &hbasepb.ListNamespaceDescriptorsRequest{}, resp); err != nil {
		return nil, err
	}
	var out []NamespaceDescriptor
	for _, d := range resp.GetNamespaceDescriptor() {
		out = append(out, namespaceFromPB(d))
	}
	return out, nil
}

// ListTableNamesByNamespace returns the names of the tables in a namespace
// ("ns:table", or "table" in default).
func (c *Client) ListTableNamesByNamespace(ctx context.Context, namespace string) ([]string, error) {
	resp := &hbasepb.ListTableNamesByNamespaceResponse{}
	if err := c.masterCall(ctx, "ListTableNamesByNamespace",
		&hbasepb.ListTableNamesByNamespaceRequest{NamespaceName: proto.String(namespace)}, resp); err != nil {
		return nil, err
	}
	var out []string
	for _, t := range resp.GetTableName() {
		out = append(out, tableNameString(t))
	}
	return out, nil
}

// ListTableDescriptorsByNamespace returns the descriptors of the tables in
// a namespace.
func (c *Client) ListTableDescriptorsByNamespace(ctx context.Context, namespace string) ([]TableDescriptor, error) {
	resp := &hbasepb.ListTableDescriptorsByNamespaceResponse{}
	if err := c.masterCall(ctx, "ListTableDescriptorsByNamespace",
		&hbasepb.ListTableDescriptorsByNamespaceRequest{NamespaceName: proto.String(namespace)}, resp); err != nil {
		return nil, err
	}
	var out []TableDescriptor
	for _, ts := range resp.GetTableSchema() {
		out = append(out, descriptorFromPB(ts))
	}
	return out, nil
}
