package pe

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/wal"
)

// peCommand is one of pe's tests, named as HBase PerformanceEvaluation's.
type peCommand struct {
	name, usage string
	// write commands flush the region at the end, so the table is on disk.
	write bool
	// read commands need a table written by an earlier run.
	read bool
	// meta commands work on hbase:meta (meta.go).
	meta bool
	// pick says how a command chooses its row for its n-th operation.
	pick peRowPick
	// op performs one operation on row number row and returns how long the
	// region call took (building the request is not timed).
	op func(c *peClient, row int64) (time.Duration, error)
	// scanLen is the most rows a scanRange operation scans.
	scanLen int64
	// countsRows: an operation may read many rows (or none); the summary
	// reports the rows read besides the operations.
	countsRows bool
	// workload is the YCSB core workload of workloada..workloadf.
	workload *ycsbWorkload
	// warnDefaultRows: an operation is so expensive (a whole-table scan)
	// that running the default --rows is rarely meant; pe warns, as HBase
	// PE does for filterScan.
	warnDefaultRows bool
}

// kinds returns the names of the operation types a command mixes (YCSB
// workloads), nil for a command with one type. op sets peClient.kind to the
// index of the type it performed.
func (c *peCommand) kinds() []string {
	if c.workload == nil {
		return nil
	}
	return c.workload.kinds()
}

// peRowPick is how a command chooses rows.
type peRowPick int

const (
	// pickSequential: client c walks its own range [c*rows, (c+1)*rows).
	pickSequential peRowPick = iota
	// pickReverse: client c walks its own range backwards, from
	// (c+1)*rows-1 down to c*rows.
	pickReverse
	// pickRandom: any row of the key space, per --requestDistribution.
	pickRandom
	// pickOverlapping: every client walks [0, rows), so clients contend on
	// the same rows (HBase PE's CASTableTest); with --keySpace or a skewed
	// --requestDistribution, rows are picked as pickRandom picks them.
	pickOverlapping
	// pickNone: the operation picks its own rows (YCSB workloads); row is
	// the operation's number.
	pickNone
)

var peCommands = []peCommand{
	{name: "sequentialWrite", usage: "write rows in order; client i writes rows [i*rows, (i+1)*rows)",
		write: true, pick: pickSequential, op: (*peClient).put},
	{name: "randomWrite", usage: "write rows picked at random from the key space",
		write: true, pick: pickRandom, op: (*peClient).put},
	{name: "randomRead", usage: "get rows picked at random from the key space; a missing row fails the run",
		read: true, pick: pickRandom, op: (*peClient).get},
	{name: "increment", usage: "increment family:IncrementTest by 1 in every family; clients overlap on rows",
		write: true, pick: pickOverlapping, op: (*peClient).increment},
	{name: "append", usage: "append the row key to family:AppendTest in every family; clients overlap on rows",
		write: true, pick: pickOverlapping, op: (*peClient).append},
	{name: "checkAndPut", usage: "put info0:CheckAndPutTest, then check it and put it again; clients overlap on rows",
		write: true, pick: pickOverlapping, op: (*peClient).checkAndPut},
	{name: "sequentialRead", usage: "get rows in order; client i reads rows [i*rows, (i+1)*rows); a missing row fails the run",
		read: true, pick: pickSequential, op: (*peClient).get},
	{name: "scan", usage: "scan; client i reads rows [i*rows, (i+1)*rows) with one scanner, one op per row (--caching is accepted)",
		read: true, pick: pickSequential, op: (*peClient).scanNext},
	{name: "reverseScan", usage: "reversed scan; client i reads rows (i+1)*rows-1 down to i*rows, one op per row",
		read: true, pick: pickReverse, op: (*peClient).scanNext},
	{name: "scanRange10", usage: "scan from a random row to 10 rows after it; one op per scan",
		read: true, pick: pickRandom, op: (*peClient).scanRange, scanLen: 10, countsRows: true},
	{name: "scanRange100", usage: "scan from a random row to 100 rows after it; one op per scan",
		read: true, pick: pickRandom, op: (*peClient).scanRange, scanLen: 100, countsRows: true},
	{name: "scanRange1000", usage: "scan from a random row to 1000 rows after it; one op per scan",
		read: true, pick: pickRandom, op: (*peClient).scanRange, scanLen: 1000, countsRows: true},
	{name: "metaWrite", usage: "register rows × NCLIENTS fake regions of TestTable in an hbase:meta region in --dir (meta comparator), [key(n), key(n+1)) with key(n) n zero-padded, as HBase's MetaTableAccessor writes them; client i registers regions [i*rows, (i+1)*rows). With --zk: create TestTableMeta pre-split into rows × NCLIENTS regions (default 1000, at most 5000: the server opens each) in one CreateTable, reported as one op per region",
		write: true, meta: true, pick: pickSequential, op: (*peClient).metaWrite},
	{name: "metaRandomRead", usage: "locate the region of a random key as an uncached client lookup does: a reversed one-row scan of hbase:meta from \"TestTable,<key>,99999999999999\" (with --zk: client.LocateRegion(reload) on TestTableMeta, one Scan RPC); --keySpace defaults to the table's regions; a wrong or missing region fails the run",
		read: true, meta: true, pick: pickRandom, op: (*peClient).metaRandomRead},
	{name: "filterScan", usage: "scan the whole table with a SingleColumnValueFilter on info0:0 that matches no row; one op per scan (use a small --rows, e.g. --rows=20)",
		read: true, pick: pickNone, op: (*peClient).filterScan, warnDefaultRows: true},
	ycsbCommand("workloada", "YCSB workload A: 50% read, 50% update, zipfian", &ycsbA),
	ycsbCommand("workloadb", "YCSB workload B: 95% read, 5% update, zipfian", &ycsbB),
	ycsbCommand("workloadc", "YCSB workload C: 100% read, zipfian", &ycsbC),
	ycsbCommand("workloadd", "YCSB workload D: 95% read of the latest rows, 5% insert of new rows after the table", &ycsbD),
	ycsbCommand("workloade", "YCSB workload E: 95% scans of 1..100 rows from a zipfian row, 5% insert", &ycsbE),
	ycsbCommand("workloadf", "YCSB workload F: 50% read, 50% read-modify-write (get, then put), zipfian", &ycsbF),
}

func lookupPECommand(name string) *peCommand {
	for i := range peCommands {
		if peCommands[i].name == name {
			return &peCommands[i]
		}
	}
	return nil
}

// Qualifiers of the read-modify-write commands: HBase PE uses the test
// class's simple name.
var (
	qualIncrement   = []byte("IncrementTest")
	qualAppend      = []byte("AppendTest")
	qualCheckAndPut = []byte("CheckAndPutTest")
)

// peTable is what every client shares: the region, the table's shape and
// the key chooser. It is read-only once the run starts.
type peTable struct {
	r          peStore
	cmd        *peCommand
	families   [][]byte // info0, info1, ...
	qualifiers [][]byte // "0", "1", ...
	valueSize  int
	durability wal.Durability
	rows       int64 // per client
	tableRows  int64 // rows × NCLIENTS: the rows a sequentialWrite wrote
	randomCAS  bool  // pickOverlapping commands pick rows at random
	keys       peKeyChooser
	// columns are every family × qualifier, which reads ask for (HBase
	// PE's --addColumns=true).
	columns     []region.Column
	cacheBlocks bool
	ycsb        *ycsbState
	meta        *peMeta // the meta commands' key width and locator
}

// peClient is one of the NCLIENTS goroutines. Its fields are its own.
type peClient struct {
	t   *peTable
	id  int64
	rng *rand.Rand
	// kind is set by op to the index of the operation type it performed,
	// for commands that mix several (peCommand.kinds).
	kind int
	// rowsRead counts the rows that operations read (peCommand.countsRows).
	rowsRead int64
	// sc is the scanner of scan and reverseScan, open across operations.
	sc      peScanner
	results []*region.ScanResult
	// getReq, getRes and rowBuf are the memory of the client's reads,
	// reused from one to the next as a Go caller of the embedded store
	// would (Region.GetInto), so that pe measures the store's allocations,
	// not a client's garbage.
	getReq region.Get
	getRes region.Result
	rowBuf [peRowLength]byte
}

// close releases what the client holds when its run ends.
func (c *peClient) close() {
	if c.sc != nil {
		c.sc.Close()
		c.sc = nil
	}
}

// row returns the row number of the client's n-th operation (n from 0).
func (c *peClient) row(n int64) int64 {
	switch c.t.cmd.pick {
	case pickSequential:
		return c.id*c.t.rows + n%c.t.rows
	case pickReverse:
		return c.id*c.t.rows + c.t.rows - 1 - n%c.t.rows
	case pickNone:
		return n
	case pickOverlapping:
		if !c.t.randomCAS {
			return n % c.t.rows
		}
	}
	return c.t.keys.next(c.rng)
}

// put writes every family × column of the row with a fresh random value.
func (c *peClient) put(row int64) (time.Duration, error) {
	p := region.NewPut(peRowKey(row))
	p.Durability = c.t.durability
	for _, f := range c.t.families {
		for _, q := range c.t.qualifiers {
			p.Add(f, q, peValue(c.rng, c.t.valueSize))
		}
	}
	start := now()
	err := c.t.r.Put(p)
	return now() - start, err
}

// errMiss marks a randomRead of a row (or column) that is not there.
var errMiss = errors.New("not found")

// get reads every family × column of the row and fails if any is missing.
// epoch anchors the clock clients time their operations by.
var epoch = time.Now()

// now is the monotonic time since epoch: one clock read where time.Now
// takes two (wall and monotonic), so timing an operation takes 62 ns instead
// of 90 on this project's 2-core machine (a Get takes 2-5 µs). Operations
// are timed on every call, as HBase's PE does.
func now() time.Duration { return time.Since(epoch) }

func (c *peClient) get(row int64) (time.Duration, error) {
	g := c.reusedGet(row)
	start := now()
	res, err := c.t.r.GetInto(g, &c.getRes)
	took := now() - start
	if err != nil {
		return took, err
	}
	return took, c.checkGet(res)
}

// newGet returns a Get of every family × column of the row.
func (c *peClient) newGet(row int64) *region.Get {
	g := region.NewGet(peRowKey(row))
	for _, col := range c.t.columns {
		g.AddColumn(col.Family, col.Qualifier)
	}
	return g
}

// reusedGet is newGet in the client's own memory, valid until its next
// call.
func (c *peClient) reusedGet(row int64) *region.Get {
	putRowKey(c.rowBuf[:], row)
	if c.getReq.Columns == nil {
		for _, col := range c.t.columns {
			c.getReq.AddColumn(col.Family, col.Qualifier)
		}
	}
	c.getReq.Row = c.rowBuf[:]
	return &c.getReq
}

// checkGet fails with errMiss if res lacks any family × column.
func (c *peClient) checkGet(res *region.Result) error {
	for _, col := range c.t.columns {
		if res.Value(col.Family, col.Qualifier) == nil {
			return errors.Wrapf(errMiss, "column %s:%s", col.Family, col.Qualifier)
		}
	}
	return nil
}

// increment adds 1 to family:IncrementTest in every family (HBase PE's
// IncrementTest: more families raise the work per operation).
func (c *peClient) increment(row int64) (time.Duration, error) {
	inc := region.NewIncrement(peRowKey(row))
	inc.Durability = c.t.durability
	for _, f := range c.t.families {
		inc.Add(f, qualIncrement, 1)
	}
	start := now()
	_, err := c.t.r.Increment(inc)
	return now() - start, err
}

// append appends the row key to family:AppendTest in every family (HBase
// PE's AppendTest).
func (c *peClient) append(row int64) (time.Duration, error) {
	key := peRowKey(row)
	a := region.NewAppend(key)
	a.Durability = c.t.durability
	for _, f := range c.t.families {
		a.Add(f, qualAppend, key)
	}
	start := now()
	_, err := c.t.r.Append(a)
	return now() - start, err
}

// checkAndPut is HBase PE's CheckAndPutTest: put the row key as the value
// of info0:CheckAndPutTest, then put it again if the value equals the row
// key. Every client puts the same value, so the check must pass; a failed
// check is an error. Both calls are timed as one operation.
func (c *peClient) checkAndPut(row int64) (time.Duration, error) {
	key := peRowKey(row)
	family := c.t.families[0]
	newPut := func() *region.Put {
		p := region.NewPut(key).Add(family, qualCheckAndPut, key)
		p.Durability = c.t.durability
		return p
	}
	first, second := newPut(), newPut()
	cam := &region.CheckAndMutate{
		Row: key, Family: family, Qualifier: qualCheckAndPut,
		Op: filter.CompareEqual, Value: key, Mutations: []region.Mutation{second},
	}
	start := now()
	if err := c.t.r.Put(first); err != nil {
		return now() - start, err
	}
	ok, err := c.t.r.CheckAndMutate(cam)
	took := now() - start
	if err == nil && !ok {
		err = errors.Newf("check failed: %s:%s does not equal the row key just put", family, qualCheckAndPut)
	}
	return took, err
}

// peFamilyName is HBase PE's family naming: FAMILY_NAME_BASE "info" + index,
// so the single default family is "info0".
func peFamilyName(i int) string { return "info" + strconv.Itoa(i) }
