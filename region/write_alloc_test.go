package region

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

// Allocation ceilings of the write path (testing.AllocsPerRun counts are
// deterministic up to the amortized growth of the memstore, which rounds
// away). A Put allocates its mvcc entry and nothing else of its own; an
// Increment adds its Result to what its read allocates.
const (
	maxPutAllocs = 2
	// maxIncrementOwnAllocs is what an Increment may allocate beyond a Put
	// and a Get of its cell (the read path's allocations are not the write
	// path's): its Result.
	maxIncrementOwnAllocs = 1
)

func TestPutAllocs(t *testing.T) {
	if writeRaceEnabled {
		t.Skip("-race allocates")
	}
	for _, d := range []wal.Durability{wal.SyncWAL, wal.SkipWAL} {
		t.Run(d.String(), func(t *testing.T) {
			r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 30; o.DisableAutoCompaction = true })
			defer r.Close()
			rows := make([][]byte, 512)
			for i := range rows {
				rows[i] = fmt.Appendf(nil, "row%06d", i)
			}
			p := &Put{Cells: []encoding.KeyValue{{Family: fam, Qualifier: b("q"),
				Timestamp: encoding.LatestTimestamp, Value: make([]byte, 100)}}, Durability: d}
			i := 0
			var err error
			put := func() {
				p.Row = rows[i%len(rows)]
				i++
				if e := r.Put(p); e != nil {
					err = e
				}
			}
			for range 2 * len(rows) { // grow the pools, the memstore and the WAL's buffers
				put()
			}
			allocs := testing.AllocsPerRun(2000, put)
			require.NoError(t, err)
			t.Logf("%.0f allocations per Put", allocs)
			require.LessOrEqual(t, allocs, float64(maxPutAllocs))
		})
	}
}

func TestIncrementAllocs(t *testing.T) {
	if writeRaceEnabled {
		t.Skip("-race allocates")
	}
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 30; o.DisableAutoCompaction = true })
	defer r.Close()
	rows := make([][]byte, 256)
	for i := range rows {
		rows[i] = fmt.Appendf(nil, "ctr%06d", i)
	}
	inc := &Increment{Columns: []IncrementColumn{{Family: fam, Qualifier: b("n"), Amount: 1}}}
	g := &Get{}
	i, hits := 0, 0
	var err error
	increment := func() {
		inc.Row = rows[i%len(rows)]
		if i%len(rows) == 0 {
			hits++
		}
		i++
		if _, e := r.Increment(inc); e != nil {
			err = e
		}
	}
	p := &Put{Cells: []encoding.KeyValue{{Family: fam, Qualifier: b("n"), Timestamp: encoding.LatestTimestamp,
		Value: make([]byte, 8)}}}
	putGet := func() {
		// The write and the read an Increment makes: the difference is
		// the Increment's own.
		row := rows[i%len(rows)]
		i++
		p.Row = row
		binary.BigEndian.PutUint64(p.Cells[0].Value, uint64(hits+i))
		if e := r.Put(p); e != nil {
			err = e
		}
		*g = Get{Row: row}
		g.AddColumn(fam, b("n"))
		if _, e := r.get(g); e != nil {
			err = e
		}
	}
	for range 4 * len(rows) {
		increment()
	}
	incAllocs := testing.AllocsPerRun(1000, increment)
	res, err := r.Increment(&Increment{Row: rows[0], Columns: inc.Columns})
	require.NoError(t, err)
	require.Equal(t, uint64(hits+1), binary.BigEndian.Uint64(res.Value(fam, b("n"))))

	i = 0
	baseAllocs := testing.AllocsPerRun(1000, putGet)
	require.NoError(t, err)
	t.Logf("%.0f allocations per Increment, %.0f per Put and Get of its cell", incAllocs, baseAllocs)
	require.LessOrEqual(t, incAllocs-baseAllocs, float64(maxIncrementOwnAllocs))
}

// Absolute allocation ceilings of the read-modify-writes, with every cell
// in the memstore: an Increment allocates its Result and its mvcc entry; an
// Append of one column also its value, once that is longer than 8 bytes; a
// CheckAndMutate that applies allocates its mvcc entry.
const (
	maxIncrementAllocs      = 2
	maxAppendAllocs         = 3
	maxCheckAndMutateAllocs = 1
)

func TestReadModifyWriteAllocs(t *testing.T) {
	if writeRaceEnabled {
		t.Skip("-race allocates")
	}
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 1 << 30; o.DisableAutoCompaction = true })
	defer r.Close()
	rows := make([][]byte, 256)
	for i := range rows {
		rows[i] = fmt.Appendf(nil, "row%06d", i)
	}
	i := 0
	var err error
	check := func(e error) {
		if e != nil {
			err = e
		}
	}
	inc := &Increment{Columns: []IncrementColumn{{Family: fam2, Qualifier: b("n"), Amount: 1}}}
	increment := func() {
		inc.Row = rows[i%len(rows)]
		i++
		_, e := r.Increment(inc)
		check(e)
	}
	app := &Append{Cells: []encoding.KeyValue{{Family: fam2, Qualifier: b("a"), Value: b("0123456789")}}}
	appRows := make([][]byte, 1024) // each appended to a few times
	for i := range appRows {
		appRows[i] = fmt.Appendf(nil, "app%06d", i)
	}
	appendOne := func() {
		app.Row = appRows[i%len(appRows)]
		i++
		_, e := r.Append(app)
		check(e)
	}
	put := &Put{Cells: []encoding.KeyValue{{Family: fam2, Qualifier: b("c"), Timestamp: encoding.LatestTimestamp, Value: b("v")}}}
	cam := &CheckAndMutate{Family: fam2, Qualifier: b("c"), Op: filter.CompareEqual, Value: b("v"), Mutations: []Mutation{put}}
	checkAndPut := func() {
		row := rows[i%len(rows)]
		i++
		cam.Row, put.Row = row, row
		ok, e := r.CheckAndMutate(cam)
		check(e)
		if e == nil && !ok {
			err = fmt.Errorf("check of %s failed", row)
		}
	}
	for _, row := range rows {
		require.NoError(t, r.Put(&Put{Row: row, Cells: put.Cells}))
	}
	for _, tc := range []struct {
		name string
		op   func()
		max  float64
	}{{"Increment", increment, maxIncrementAllocs}, {"Append", appendOne, maxAppendAllocs},
		{"CheckAndMutate", checkAndPut, maxCheckAndMutateAllocs}} {
		for range 4 * len(rows) { // the pools, the memstore and the WAL's buffers
			tc.op()
		}
		allocs := testing.AllocsPerRun(1000, tc.op)
		require.NoError(t, err)
		t.Logf("%.1f allocations per %s", allocs, tc.name)
		require.LessOrEqual(t, allocs, tc.max, tc.name)
	}
}
