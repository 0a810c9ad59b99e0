package main

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
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
	// pick says how a command chooses its row for its n-th operation.
	pick peRowPick
	// op performs one operation on row number row and returns how long the
	// region call took (building the request is not timed).
	op func(c *peClient, row int64) (time.Duration, error)
}

// peRowPick is how a command chooses rows.
type peRowPick int

const (
	// pickSequential: client c walks its own range [c*rows, (c+1)*rows).
	pickSequential peRowPick = iota
	// pickRandom: any row of the key space, per --requestDistribution.
	pickRandom
	// pickOverlapping: every client walks [0, rows), so clients contend on
	// the same rows (HBase PE's CASTableTest); with --keySpace or a skewed
	// --requestDistribution, rows are picked as pickRandom picks them.
	pickOverlapping
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
	r          *region.Region
	cmd        *peCommand
	families   [][]byte // info0, info1, ...
	qualifiers [][]byte // "0", "1", ...
	valueSize  int
	durability wal.Durability
	rows       int64 // per client
	randomCAS  bool  // pickOverlapping commands pick rows at random
	keys       peKeyChooser
}

// peClient is one of the NCLIENTS goroutines. Its fields are its own.
type peClient struct {
	t   *peTable
	id  int64
	rng *rand.Rand
}

// row returns the row number of the client's n-th operation (n from 0).
func (c *peClient) row(n int64) int64 {
	switch c.t.cmd.pick {
	case pickSequential:
		return c.id*c.t.rows + n%c.t.rows
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
	start := time.Now()
	err := c.t.r.Put(p)
	return time.Since(start), err
}

// errMiss marks a randomRead of a row (or column) that is not there.
var errMiss = errors.New("not found")

// get reads every family × column of the row and fails if any is missing.
func (c *peClient) get(row int64) (time.Duration, error) {
	g := region.NewGet(peRowKey(row))
	for _, f := range c.t.families {
		for _, q := range c.t.qualifiers {
			g.AddColumn(f, q)
		}
	}
	start := time.Now()
	res, err := c.t.r.Get(g)
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	for _, f := range c.t.families {
		for _, q := range c.t.qualifiers {
			if res.Value(f, q) == nil {
				return took, errors.Wrapf(errMiss, "column %s:%s", f, q)
			}
		}
	}
	return took, nil
}

// increment adds 1 to family:IncrementTest in every family (HBase PE's
// IncrementTest: more families raise the work per operation).
func (c *peClient) increment(row int64) (time.Duration, error) {
	inc := region.NewIncrement(peRowKey(row))
	inc.Durability = c.t.durability
	for _, f := range c.t.families {
		inc.Add(f, qualIncrement, 1)
	}
	start := time.Now()
	_, err := c.t.r.Increment(inc)
	return time.Since(start), err
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
	start := time.Now()
	_, err := c.t.r.Append(a)
	return time.Since(start), err
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
		Op: region.Equal, Value: key, Mutations: []region.Mutation{second},
	}
	start := time.Now()
	if err := c.t.r.Put(first); err != nil {
		return time.Since(start), err
	}
	ok, err := c.t.r.CheckAndMutate(cam)
	took := time.Since(start)
	if err == nil && !ok {
		err = errors.Newf("check failed: %s:%s does not equal the row key just put", family, qualCheckAndPut)
	}
	return took, err
}

// peFamilyName is HBase PE's family naming: FAMILY_NAME_BASE "info" + index,
// so the single default family is "info0".
func peFamilyName(i int) string { return "info" + strconv.Itoa(i) }
