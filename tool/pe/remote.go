package pe

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/scanner"
	"github.com/regionkv/regionkv/wal"
)

// peStore is what pe's clients run against: the embedded region (the
// default) or a table on a server (--zk). Both take the region package's
// operation types, so the workloads are written once.
type peStore interface {
	Put(*region.Put) error
	Get(*region.Get) (*region.Result, error)
	// GetInto is Get reusing res where the store can (Region.GetInto);
	// the result is valid until res is used again.
	GetInto(g *region.Get, res *region.Result) (*region.Result, error)
	Increment(*region.Increment) (*region.Result, error)
	Append(*region.Append) (*region.Result, error)
	CheckAndMutate(*region.CheckAndMutate) (bool, error)
	NewScanner(*region.Scan) (peScanner, error)
}

// peScanner is a scanner of either store.
type peScanner interface {
	Next() (*region.ScanResult, error)
	Close()
}

// embeddedStore is the region itself.
type embeddedStore struct{ *region.Region }

func (s embeddedStore) NewScanner(sc *region.Scan) (peScanner, error) { return s.Region.NewScanner(sc) }

// peTableName is the table pe uses on a server, as HBase's pe does.
const peTableName = "TestTable"

// remoteStore runs operations through the client against a server.
type remoteStore struct {
	c       *client.Client
	table   string
	timeout time.Duration
}

func (s *remoteStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

func clientDurability(d wal.Durability) client.Durability {
	// The two enums share HBase's values.
	return client.Durability(d)
}

func clientColumns(cols []region.Column) []client.Column {
	out := make([]client.Column, len(cols))
	for i, c := range cols {
		out[i] = client.Column{Family: c.Family, Qualifier: c.Qualifier}
	}
	return out
}

func clientTimeRange(tr scanner.TimeRange) client.TimeRange {
	return client.TimeRange{Min: tr.Min, Max: tr.Max}
}

func (s *remoteStore) put(p *region.Put) *client.Mutation {
	m := client.NewPut(s.table, p.Row)
	for _, c := range p.Cells {
		m.AddAt(c.Family, c.Qualifier, c.Timestamp, c.Value)
	}
	m.Durability, m.TTL = clientDurability(p.Durability), p.TTL
	return m
}

func (s *remoteStore) delete(d *region.Delete) *client.Mutation {
	m := client.NewDelete(s.table, d.Row)
	m.Cells = append(m.Cells, d.Cells...)
	m.Durability = clientDurability(d.Durability)
	return m
}

func (s *remoteStore) Put(p *region.Put) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.c.Mutate(ctx, s.put(p))
	return err
}

func (s *remoteStore) Get(g *region.Get) (*region.Result, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	res, err := s.c.Get(ctx, &client.Get{Table: s.table, Row: g.Row, Columns: clientColumns(g.Columns),
		MaxVersions: g.MaxVersions, TimeRange: clientTimeRange(g.TimeRange), Filter: g.Filter})
	if err != nil {
		return nil, err
	}
	return &region.Result{Cells: res.Cells}, nil
}

// GetInto is Get: a client's Result is decoded from its response.
func (s *remoteStore) GetInto(g *region.Get, _ *region.Result) (*region.Result, error) {
	return s.Get(g)
}

func (s *remoteStore) Increment(inc *region.Increment) (*region.Result, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	m := client.NewIncrement(s.table, inc.Row)
	for _, c := range inc.Columns {
		m.AddInt(c.Family, c.Qualifier, c.Amount)
	}
	m.Durability = clientDurability(inc.Durability)
	res, err := s.c.Mutate(ctx, m)
	if err != nil {
		return nil, err
	}
	return &region.Result{Cells: res.Cells}, nil
}

func (s *remoteStore) Append(a *region.Append) (*region.Result, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	m := client.NewAppend(s.table, a.Row)
	for _, c := range a.Cells {
		m.Add(c.Family, c.Qualifier, c.Value)
	}
	m.Durability = clientDurability(a.Durability)
	res, err := s.c.Mutate(ctx, m)
	if err != nil {
		return nil, err
	}
	return &region.Result{Cells: res.Cells}, nil
}

func (s *remoteStore) CheckAndMutate(cm *region.CheckAndMutate) (bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	cond := client.Condition{Family: cm.Family, Qualifier: cm.Qualifier, Op: cm.Op,
		Value: cm.Value, Comparator: cm.Comparator, Filter: cm.Filter, TimeRange: clientTimeRange(cm.TimeRange)}
	var muts []*client.Mutation
	for _, m := range cm.Mutations {
		switch m := m.(type) {
		case *region.Put:
			muts = append(muts, s.put(m))
		case *region.Delete:
			muts = append(muts, s.delete(m))
		default:
			return false, errors.Newf("pe: check-and-mutate of a %T", m)
		}
	}
	return s.c.CheckAndMutate(ctx, cond, muts...)
}

func (s *remoteStore) NewScanner(sc *region.Scan) (peScanner, error) {
	cs := s.c.Scan(&client.Scan{Table: s.table, StartRow: sc.StartRow, StopRow: sc.StopRow,
		StartExclusive: sc.StartExclusive, StopInclusive: sc.StopInclusive, Reversed: sc.Reversed,
		Columns: clientColumns(sc.Columns), Filter: sc.Filter, MaxVersions: sc.MaxVersions,
		TimeRange: clientTimeRange(sc.TimeRange), Limit: sc.Limit, Batch: sc.Batch,
		MaxResultSize: sc.MaxResultSize, AllowPartials: sc.AllowPartialResults,
		StoreLimit: sc.StoreLimit, StoreOffset: sc.StoreOffset, NoCacheBlocks: sc.NoCacheBlocks,
		Caching: peScanCaching})
	return &remoteScanner{s: s, sc: cs}, nil
}

// peScanCaching is the rows per scan RPC, HBase pe's --caching default.
const peScanCaching = 30

type remoteScanner struct {
	s  *remoteStore
	sc *client.Scanner
}

func (r *remoteScanner) Next() (*region.ScanResult, error) {
	ctx, cancel := r.s.ctx()
	defer cancel()
	res, err := r.sc.Next(ctx)
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &region.ScanResult{Result: region.Result{Cells: res.Cells}, Partial: res.Partial}, nil
}

func (r *remoteScanner) Close() { r.sc.Close() }

// openRemote connects to the cluster at zk and makes sure pe's table is
// there: write commands create it (with the run's families, encoding and
// compression, pre-split into presplit regions), read commands require it.
func openRemote(ctx context.Context, zk string, o *peOptions, stderr io.Writer) (*remoteStore, *client.Client, error) {
	c, err := client.New(ctx, client.Options{ZKQuorum: zk})
	if err != nil {
		return nil, nil, errors.Wrapf(err, "connecting to the cluster at %s", zk)
	}
	if o.cmd.meta {
		// Their table is TestTableMeta, handled in meta.go.
		return &remoteStore{c: c, table: peMetaRemoteTable, timeout: 60 * time.Second}, c, nil
	}
	_, err = c.TableDescriptor(ctx, peTableName)
	exists := err == nil
	if exists && o.presplit > 0 {
		dropped, err := o.checkPresplit(ctx, c, zk, stderr)
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		exists = !dropped
	}
	switch {
	case exists:
	case err == nil || client.IsException(err, "TableNotFoundException") && !o.cmd.read:
		td := client.TableDescriptor{Name: peTableName}
		for _, f := range o.families {
			attrs := map[string]string{
				"DATA_BLOCK_ENCODING": f.Encoding.String(),
				"COMPRESSION":         f.Compression.String(),
				"VERSIONS":            "1",
			}
			if f.InMemory {
				attrs["IN_MEMORY"] = "true"
			}
			td.Families = append(td.Families, client.Family{Name: f.Name, Attributes: attrs})
		}
		if err := c.CreateTable(ctx, td, peSplitKeys(o.presplit, o.rows*int64(o.clients))); err != nil {
			c.Close()
			return nil, nil, errors.Wrapf(err, "creating %s", peTableName)
		}
	case client.IsException(err, "TableNotFoundException"):
		c.Close()
		return nil, nil, errors.Newf("no table %s on the cluster at %s: run a write command (e.g. sequentialWrite) with the same --rows and NCLIENTS first", peTableName, zk)
	default:
		c.Close()
		return nil, nil, errors.Wrapf(err, "looking up %s", peTableName)
	}
	// The client's own per-call timeout: with a longer deadline the client
	// would build a context of its own for every call.
	return &remoteStore{c: c, table: peTableName, timeout: client.DefaultTimeout}, c, nil
}

// checkPresplit handles --presplit when TestTable exists: as hbase pe
// does, a write command drops and recreates a table whose region count is
// not the one asked for (saying so); a read command refuses, since a new
// table would be empty.
func (o *peOptions) checkPresplit(ctx context.Context, c *client.Client, zk string, stderr io.Writer) (dropped bool, _ error) {
	regions, err := c.Regions(ctx, peTableName)
	if err != nil {
		return false, errors.Wrapf(err, "listing the regions of %s", peTableName)
	}
	if len(regions) == o.presplit {
		return false, nil
	}
	if o.cmd.read {
		return false, errors.Newf("%s on the cluster at %s has %d regions, not the %d --presplit asks for: --presplit applies when a write command creates the table (a write command with --presplit %d recreates it)",
			peTableName, zk, len(regions), o.presplit, o.presplit)
	}
	fmt.Fprintf(stderr, "regionsrv pe: %s has %d regions, --presplit asks for %d: dropping it and creating it again, as hbase pe does\n",
		peTableName, len(regions), o.presplit)
	if err := c.DisableTable(ctx, peTableName); err != nil && !client.IsException(err, "TableNotEnabledException") {
		return false, errors.Wrapf(err, "disabling %s", peTableName)
	}
	if err := c.DeleteTable(ctx, peTableName); err != nil {
		return false, errors.Wrapf(err, "deleting %s", peTableName)
	}
	return true, nil
}

// peSplitKeys returns the split keys of --presplit regions over rows rows,
// as HBase's pe splits TestTable evenly over its key space.
func peSplitKeys(regions int, rows int64) [][]byte {
	var keys [][]byte
	for i := 1; i < regions; i++ {
		keys = append(keys, peRowKey(rows*int64(i)/int64(regions)))
	}
	return keys
}
