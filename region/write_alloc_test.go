package region

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

// Allocation ceilings of the write path (testing.AllocsPerRun counts are
// deterministic up to the amortized growth of the memstore, which rounds
// away). A Put allocates nothing: its mvcc entry is in its pooled write
// scratch (mvcc.Control.BeginInto); an Increment adds its Result to what
// its read allocates.
const (
	maxPutAllocs = 0
	// maxIncrementOwnAllocs is what an Increment may allocate beyond a Put
	// and a Get of its cell (the read path's allocations are not the write
	// path's): its Result.
	maxIncrementOwnAllocs = 1
	// maxUpsertOwnAllocs is the same for an Increment to a family of one
	// version, which upserts: its Result. Its cell's memory of its own
	// (memstore.Segment.Upsert) is the cell the upsert before unlinked.
	maxUpsertOwnAllocs = 1
	// maxIncrementAllocs bounds an Increment of a counter in the memstore
	// outright: its Result.
	maxIncrementAllocs = 1
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
	t.Run("f", func(t *testing.T) { testIncrementAllocs(t, fam, maxIncrementOwnAllocs) })
	t.Run("g upsert", func(t *testing.T) { testIncrementAllocs(t, fam2, maxUpsertOwnAllocs) })
}

func testIncrementAllocs(t *testing.T, fam []byte, ceiling int) {
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
		// A request built per call, as a client's is, stays on the
		// caller's stack: the Result does not keep its memory.
		req := &Increment{Row: inc.Row, Columns: []IncrementColumn{{Family: fam, Qualifier: inc.Columns[0].Qualifier, Amount: 1}}}
		if _, e := r.Increment(req); e != nil {
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
	require.LessOrEqual(t, incAllocs-baseAllocs, float64(ceiling))
	require.LessOrEqual(t, incAllocs, float64(maxIncrementAllocs))
}
