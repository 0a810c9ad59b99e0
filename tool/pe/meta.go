package pe

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/server"
)

// The meta commands, after HBase PerformanceEvaluation's MetaWriteTest and
// MetaRandomReadTest (the benchmark of HBASE-29103): metaWrite registers
// regions in hbase:meta, metaRandomRead looks random rows up the way a
// client locates a row's region.
//
// Embedded, the region in --dir is an hbase:meta of its own (HBase's meta
// comparator and families), and metaWrite writes region n of table
// TestTable, [key(n), key(n+1)), as HBase's does: the rows of
// MetaTableAccessor.addRegionsToMeta and updateRegionLocation. key(n) is
// HBase's getSplitKey, n in zero-padded decimal; the width is that of the
// table's region count rows × NCLIENTS (HBase's is that of --rows, the
// same with one client, and keeps the keys sorted with several).
//
// Over --zk the server refuses client writes to hbase:meta, so metaWrite
// creates table TestTableMeta pre-split at key(1) .. key(N-1) through the
// admin API and the server writes the N meta rows itself; metaRandomRead
// then locates rows of it with client.LocateRegion(reload=true): one
// reversed one-row Scan RPC of hbase:meta per operation.

// peMetaTable is the table whose regions the embedded metaWrite registers,
// HBase PE's TABLE_NAME.
var peMetaTable = server.TableName{Namespace: "default", Qualifier: peTableName}

// peMetaRemoteTable is the table metaWrite creates over --zk: its own, so
// that it does not replace the TestTable of the other commands.
const peMetaRemoteTable = "TestTableMeta"

// peMetaServer is the location metaWrite records, HBase PE's
// ServerName.valueOf("localhost", 60010, random start code).
const peMetaServer = "localhost:60010"

// peMetaMaxRemoteRegions caps metaWrite's regions over --zk: the server
// opens a real region for each (a directory, a WAL; two file descriptors)
// and keeps them all open.
const peMetaMaxRemoteRegions = 5000

// peMetaDefaultRemoteRegions is metaWrite's region count over --zk
// without --rows.
const peMetaDefaultRemoteRegions = 1000

// peMetaKey is HBase PE's getSplitKey: n in zero-padded decimal of width
// digits.
func peMetaKey(n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	b := make([]byte, 0, max(width, len(s)))
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// peMetaWidth is the key width of a table of n regions: the digits of n,
// so that key(n), the end of the last region, fits too.
func peMetaWidth(n int64) int { return len(strconv.FormatInt(n, 10)) }

// peMeta is the meta commands' shared state.
type peMeta struct {
	width   int           // digits of the keys
	regions int64         // metaRandomRead: the table's regions, its default --keySpace
	locate  peMetaLocator // metaRandomRead's lookups
}

// peMetaLocator finds the region that contains a row of the meta table.
type peMetaLocator interface {
	locateRegion(row []byte) (peRegion, error)
}

// peRegion is a located region; found is false if meta has no region of
// the table at or before the row.
type peRegion struct {
	name, start, end []byte
	found            bool
}

func (p peRegion) contains(row []byte) bool {
	ri := server.RegionInfo{StartKey: p.start, EndKey: p.end}
	return p.found && ri.ContainsRow(row)
}

// metaRegionOptions returns the options of the embedded hbase:meta region:
// the server's meta families, with --blockEncoding, --compress and
// --bloomFilter applied to them if given.
func (o *peOptions) metaRegionOptions() region.Options {
	ro := o.regionOptions()
	ro.Table, ro.EncodedName, ro.Meta = server.MetaTableName.String(), server.MetaEncodedName, true
	ro.Families = server.MetaFamilies()
	for i := range ro.Families {
		f := &ro.Families[i]
		if o.flagSet["blockEncoding"] {
			f.Encoding = o.famTemplate.Encoding
		}
		if o.flagSet["compress"] {
			f.Compression = o.famTemplate.Compression
		}
		if o.flagSet["bloomFilter"] {
			f.BloomFilter = o.famTemplate.BloomFilter
		}
		if o.flagSet["inmemory"] {
			f.InMemory = o.famTemplate.InMemory
		}
	}
	return ro
}

// metaWrite is one operation of the embedded metaWrite: register region
// row, [key(row), key(row+1)), with HBase's two meta puts (both timed).
func (c *peClient) metaWrite(row int64) (time.Duration, error) {
	w := c.t.meta.width
	ri := server.RegionInfo{Table: peMetaTable, StartKey: peMetaKey(row, w), EndKey: peMetaKey(row+1, w),
		RegionID: uint64(time.Now().UnixMilli())} // RegionInfoBuilder's default id
	add, loc := server.MetaRegionPuts(&ri, peMetaServer, c.rng.Uint64(), uint64(row))
	add.Durability, loc.Durability = c.t.durability, c.t.durability
	start := now()
	err := c.t.r.Put(add)
	if err == nil {
		err = c.t.r.Put(loc)
	}
	return now() - start, err
}

// metaRandomRead is one operation of metaRandomRead: locate the region of
// key(row), which must contain it. A missing region (a hole in meta, or a
// row past the last region) fails the run as a missing row fails
// randomRead.
func (c *peClient) metaRandomRead(row int64) (time.Duration, error) {
	key := peMetaKey(row, c.t.meta.width)
	start := now()
	reg, err := c.t.meta.locate.locateRegion(key)
	took := now() - start
	switch {
	case err != nil:
		return took, err
	case !reg.found:
		return took, errors.Wrapf(errMiss, "no region at or before %q in hbase:meta", key)
	case !reg.contains(key):
		return took, errors.Wrapf(errMiss, "row %q: hbase:meta has region %q [%q, %q), which does not contain it", key, reg.name, reg.start, reg.end)
	}
	return took, nil
}

// embeddedMeta looks rows up in the embedded hbase:meta region as a
// client's locator does: a reversed scan from the row's meta key that
// returns one row.
type embeddedMeta struct {
	r     *region.Region
	table string
}

var metaInfoColumns = []region.Column{{Family: []byte(server.CatalogFamily)}}

func (m embeddedMeta) locateRegion(row []byte) (peRegion, error) {
	sc, err := m.r.NewScanner(&region.Scan{
		StartRow: client.MetaLookupKey(m.table, row), Reversed: true,
		StopRow: []byte(m.table + ",,"), StopInclusive: true, // below every region row of the table
		Limit: 1, Columns: metaInfoColumns,
	})
	if err != nil {
		return peRegion{}, err
	}
	defer sc.Close()
	res, err := sc.Next()
	if err != nil || res == nil {
		return peRegion{}, err
	}
	ri, ok, err := server.MetaRowRegion(&res.Result)
	if err != nil || !ok {
		return peRegion{}, err
	}
	if ri.Table.String() != m.table {
		return peRegion{}, errors.Newf("the meta row %q is of table %s", res.Cells[0].Row, ri.Table)
	}
	return peRegion{name: ri.RegionName(), start: ri.StartKey, end: ri.EndKey, found: true}, nil
}

// regions returns the first region of the table in the embedded meta and
// how many it has.
func (m embeddedMeta) regions() (first server.RegionInfo, n int64, err error) {
	// Every region row of the table sorts after "<table>," and before
	// "<table>." in meta order.
	sc, err := m.r.NewScanner(&region.Scan{StartRow: []byte(m.table + ","), StopRow: []byte(m.table + "."), Columns: metaInfoColumns})
	if err != nil {
		return first, 0, err
	}
	defer sc.Close()
	for {
		res, err := sc.Next()
		if err != nil || res == nil {
			return first, n, err
		}
		ri, ok, err := server.MetaRowRegion(&res.Result)
		if err != nil {
			return first, n, err
		}
		if ok {
			if n == 0 {
				first = ri
			}
			n++
		}
	}
}

// remoteMeta locates rows with uncached client lookups.
type remoteMeta struct {
	s     *remoteStore
	table string
}

func (m remoteMeta) locateRegion(row []byte) (peRegion, error) {
	ctx, cancel := m.s.ctx()
	defer cancel()
	ri, err := m.s.c.LocateRegion(ctx, m.table, row, true)
	if err != nil {
		if client.IsException(err, "TableNotFoundException") {
			return peRegion{}, nil
		}
		return peRegion{}, err
	}
	return peRegion{name: ri.Name, start: ri.StartKey, end: ri.EndKey, found: true}, nil
}

// openMeta prepares the meta commands' state: the key width, from the
// table for metaRandomRead (so that lookups use the keys metaWrite wrote),
// the table's region count and the locator.
func (o *peOptions) openMeta(ctx context.Context, r *region.Region, rs *remoteStore) (*peMeta, error) {
	m := &peMeta{width: peMetaWidth(o.rows * int64(o.clients))}
	if !o.cmd.read {
		return m, nil
	}
	if rs != nil {
		regions, err := rs.c.Regions(ctx, peMetaRemoteTable)
		if err != nil {
			if client.IsException(err, "TableNotFoundException") {
				return nil, errors.Newf("no table %s on the cluster at %s: run metaWrite with --zk first", peMetaRemoteTable, o.zk)
			}
			return nil, errors.Wrapf(err, "reading the regions of %s", peMetaRemoteTable)
		}
		if len(regions) > 1 {
			m.width = len(regions[1].StartKey)
		}
		m.regions = int64(len(regions))
		m.locate = remoteMeta{s: rs, table: peMetaRemoteTable}
		return m, nil
	}
	if r.Store(server.CatalogFamily) == nil {
		return nil, errors.Newf("the region in %s has no family %s, so it is no hbase:meta: run metaWrite with that --dir first", r.Dir(), server.CatalogFamily)
	}
	em := embeddedMeta{r: r, table: peMetaTable.String()}
	first, n, err := em.regions()
	if err != nil {
		return nil, errors.Wrap(err, "reading hbase:meta")
	}
	if n == 0 {
		return nil, errors.Newf("hbase:meta in %s has no regions of %s: run metaWrite with that --dir first", r.Dir(), peMetaTable)
	}
	m.width, m.regions = len(first.StartKey), n
	m.locate = em
	return m, nil
}

// runRemoteMetaWrite is metaWrite over --zk: one CreateTable of
// TestTableMeta with rows × NCLIENTS regions (an existing one is dropped
// first). Its ops are the regions registered; its latency, the
// CreateTable's.
func (o *peOptions) runRemoteMetaWrite(ctx context.Context, rs *remoteStore) (*peResult, error) {
	n := o.rows * int64(o.clients)
	w := peMetaWidth(n)
	splits := make([][]byte, 0, n-1)
	for i := int64(1); i < n; i++ {
		splits = append(splits, peMetaKey(i, w))
	}
	c := rs.c
	if _, err := c.TableDescriptor(ctx, peMetaRemoteTable); err == nil {
		if err := c.DisableTable(ctx, peMetaRemoteTable); err != nil && !client.IsException(err, "TableNotEnabledException") {
			return nil, errors.Wrapf(err, "disabling the %s of an earlier run", peMetaRemoteTable)
		}
		if err := c.DeleteTable(ctx, peMetaRemoteTable); err != nil {
			return nil, errors.Wrapf(err, "deleting the %s of an earlier run", peMetaRemoteTable)
		}
	} else if !client.IsException(err, "TableNotFoundException") {
		return nil, errors.Wrapf(err, "looking up %s", peMetaRemoteTable)
	}
	td := client.TableDescriptor{Name: peMetaRemoteTable,
		Families: []client.Family{{Name: peFamilyName(0), Attributes: map[string]string{"VERSIONS": "1"}}}}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, errors.Wrap(err, "--cpuprofile")
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Wrap(err, "--cpuprofile")
		}
		defer pprof.StopCPUProfile()
	}
	cctx, cancel := context.WithTimeout(ctx, max(10*time.Minute, rs.timeout))
	defer cancel()
	start := now()
	err := c.CreateTable(cctx, td, splits)
	took := now() - start
	if err != nil {
		return nil, errors.Wrapf(err, "creating %s with %d regions", peMetaRemoteTable, n)
	}
	res := &peResult{command: o.cmd.name, clients: 1, ops: n, elapsed: took, hist: newPEHistogram(),
		seed: o.seed, remote: true}
	_ = res.hist.RecordValue(min(max(took.Nanoseconds(), 1), int64(peMaxLatency)))
	res.stopped = fmt.Sprintf("one CreateTable of %s with %d regions; latency is the CreateTable's", peMetaRemoteTable, n)
	return res, nil
}
