package integration

import (
	"bytes"
	"context"
	binenc "encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// The crash loop: a real regionsrv under a mixed workload (puts, deletes,
// increments, check-and-mutate) with flushes and compactions going on all
// the time (tiny flush size, low compaction threshold), killed with SIGKILL
// at random moments, restarted on the same data, and checked against what
// was acknowledged: nothing acknowledged is lost, nothing deleted comes
// back, counters are exact. Every writer has its own rows and at most one
// operation in flight, so the one a kill interrupts may or may not have
// happened, and everything before it must have.
//
// REGIONKV_CRASH_CYCLES sets the number of cycles (20 by default, also in
// -short); REGIONKV_CRASH_DURATION (e.g. 30m) runs cycles until then.

const (
	crashWriters = 6
	crashRows    = 40 // rows per writer
	crashTable   = "crash"
)

var crashFam = []byte("f")

// crashOp is one operation of a writer, and what it does to the model.
type crashOp struct {
	kind  byte // 'p'ut, 'd'elete, 'i'ncrement, 'c'heck-and-put
	row   int
	value []byte // put / check-and-put: the new value
	old   []byte // check-and-put: the expected current value
}

// crashWriter is one writer's model: the value of each row (nil: absent),
// its counter, and the operation in flight when the server died, if any.
type crashWriter struct {
	id       int
	rows     [crashRows][]byte
	counter  int64
	inFlight *crashOp
	acked    int
	seq      int
	// history keeps each row's last few acknowledged operations, for
	// failure messages.
	history [crashRows][]string
	// deleted is when each row's last delete was acknowledged. As in
	// HBase, a delete marker stamped at millisecond T masks puts stamped
	// at T too, so a put in the same millisecond as the delete before it
	// is invisible (before and after a crash alike); writers wait for the
	// next millisecond instead of modelling that.
	deleted [crashRows]time.Time
}

func (w *crashWriter) remember(op *crashOp, applied bool, start time.Time) {
	h := &w.history[op.row]
	*h = append(*h, fmt.Sprintf("%c(%.12q applied=%v) %s..%s", op.kind, op.value, applied,
		start.Format("15:04:05.000000"), time.Now().Format("15:04:05.000000")))
	if len(*h) > 4 {
		*h = (*h)[1:]
	}
}

func (w *crashWriter) rowKey(row int) []byte {
	return []byte(fmt.Sprintf("w%d-r%03d", w.id, row))
}

func (w *crashWriter) counterKey() []byte { return []byte(fmt.Sprintf("w%d-counter", w.id)) }

// next picks an operation: mostly puts, some deletes, increments and
// check-and-puts on the row's current value.
func (w *crashWriter) next(rng *rand.Rand) *crashOp {
	w.seq++
	row := rng.IntN(crashRows)
	val := []byte(fmt.Sprintf("w%d-s%d-%s", w.id, w.seq, bytes.Repeat([]byte("x"), rng.IntN(2000))))
	switch n := rng.IntN(10); {
	case n < 5:
		return &crashOp{kind: 'p', row: row, value: val}
	case n < 7:
		return &crashOp{kind: 'd', row: row}
	case n < 9:
		return &crashOp{kind: 'i'}
	default:
		return &crashOp{kind: 'c', row: row, value: val, old: w.rows[row]}
	}
}

func (w *crashWriter) do(ctx context.Context, c *client.Client, op *crashOp) (applied bool, err error) {
	switch op.kind {
	case 'p':
		_, err = c.Mutate(ctx, client.NewPut(crashTable, w.rowKey(op.row)).Add(crashFam, []byte("q"), op.value))
		return true, err
	case 'd':
		_, err = c.Mutate(ctx, client.NewDelete(crashTable, w.rowKey(op.row)))
		return true, err
	case 'i':
		_, err = c.IncrementColumn(ctx, crashTable, w.counterKey(), crashFam, []byte("n"), 1)
		return true, err
	default:
		cond := client.IfEquals(crashFam, []byte("q"), op.old)
		if op.old == nil {
			cond = client.IfNotExists(crashFam, []byte("q"))
		}
		return c.CheckAndMutate(ctx, cond, client.NewPut(crashTable, w.rowKey(op.row)).Add(crashFam, []byte("q"), op.value))
	}
}

// apply records an acknowledged operation in the model.
func (w *crashWriter) apply(op *crashOp, applied bool) {
	switch op.kind {
	case 'p':
		w.rows[op.row] = op.value
	case 'd':
		w.rows[op.row] = nil
	case 'i':
		w.counter++
	case 'c':
		if applied {
			w.rows[op.row] = op.value
		}
	}
}

// run writes until ctx ends or the server dies; the operation it was in
// when that happened stays in inFlight.
func (w *crashWriter) run(ctx context.Context, c *client.Client, rng *rand.Rand) {
	for ctx.Err() == nil {
		op := w.next(rng)
		if op.kind == 'p' || op.kind == 'c' {
			if d := 2*time.Millisecond - time.Since(w.deleted[op.row]); d > 0 {
				time.Sleep(d)
			}
		}
		w.inFlight = op
		opCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		start := time.Now()
		applied, err := w.do(opCtx, c, op)
		cancel()
		if err != nil {
			return // killed (or the context ended) with op in flight
		}
		if op.kind != 'i' {
			w.remember(op, applied, start)
		}
		w.apply(op, applied)
		if op.kind == 'd' {
			w.deleted[op.row] = time.Now()
		}
		w.inFlight = nil
		w.acked++
	}
}

// crashCheck is what verification found.
type crashCheck struct {
	lost, resurrected, wrong int
	details                  []string
}

func (cc *crashCheck) fail(format string, args ...any) {
	if len(cc.details) < 20 {
		cc.details = append(cc.details, fmt.Sprintf(format, args...))
	}
}

// verify reads every row and counter of w and compares them with the
// model, allowing the in-flight operation either way; it then resolves
// the in-flight operation from what it read.
func (w *crashWriter) verify(ctx context.Context, c *client.Client, cc *crashCheck) error {
	for row := 0; row < crashRows; row++ {
		res, err := c.Get(ctx, &client.Get{Table: crashTable, Row: w.rowKey(row)})
		if err != nil {
			return err
		}
		got := res.Value(crashFam, []byte("q"))
		want := w.rows[row]
		if bytes.Equal(got, want) {
			continue
		}
		if op := w.inFlight; op != nil && op.row == row && op.kind != 'i' {
			if (op.kind == 'd' && got == nil) || (op.kind != 'd' && bytes.Equal(got, op.value)) {
				w.rows[row] = got
				continue
			}
		}
		switch {
		case got == nil:
			cc.lost++
			cc.fail("%s: acknowledged value %.20q lost; last operations: %q", w.rowKey(row), want, w.history[row])
		case want == nil:
			cc.resurrected++
			cc.fail("%s: deleted row came back as %.20q", w.rowKey(row), got)
		default:
			cc.wrong++
			cc.fail("%s: value %.20q, want %.20q", w.rowKey(row), got, want)
		}
		w.rows[row] = got
	}
	res, err := c.Get(ctx, &client.Get{Table: crashTable, Row: w.counterKey()})
	if err != nil {
		return err
	}
	var n int64
	if v := res.Value(crashFam, []byte("n")); v != nil {
		n = int64(binenc.BigEndian.Uint64(v))
	}
	switch {
	case n == w.counter:
	case n == w.counter+1 && w.inFlight != nil && w.inFlight.kind == 'i':
		w.counter = n
	case n < w.counter:
		cc.lost++
		cc.fail("%s: counter %d, acknowledged %d increments", w.counterKey(), n, w.counter)
		w.counter = n
	default:
		cc.wrong++
		cc.fail("%s: counter %d, acknowledged %d increments", w.counterKey(), n, w.counter)
		w.counter = n
	}
	w.inFlight = nil
	return nil
}

func TestCrashLoop(t *testing.T) {
	cycles := 20
	if s := os.Getenv("REGIONKV_CRASH_CYCLES"); s != "" {
		var err error
		if cycles, err = strconv.Atoi(s); err != nil {
			t.Fatalf("REGIONKV_CRASH_CYCLES: %v", err)
		}
	}
	var until time.Time
	if s := os.Getenv("REGIONKV_CRASH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("REGIONKV_CRASH_DURATION: %v", err)
		}
		until, cycles = time.Now().Add(d), 1<<30
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REGIONKV_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (REGIONKV_CRASH_SEED reruns it)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	p := startServer(t, dir,
		"hbase.hregion.memstore.flush.size=65536", // a flush every few hundred writes
		"hbase.hstore.compaction.min=2",           // and compactions after every other flush
		"hbase.hstore.compaction.max=4")
	ctx := context.Background()
	c := newClient(t, p)
	if err := c.CreateTable(ctx, client.TableDescriptor{Name: crashTable, Families: []client.Family{{Name: "f"}}},
		[][]byte{[]byte("w2"), []byte("w4")}); err != nil {
		t.Fatal(err)
	}
	writers := make([]*crashWriter, crashWriters)
	for i := range writers {
		writers[i] = &crashWriter{id: i}
	}
	var total crashCheck
	acked, midFlush, done := 0, 0, 0
	for cycle := 0; cycle < cycles && (until.IsZero() || time.Now().Before(until)); cycle++ {
		// Write for a random while, then kill the server under the writers.
		wctx, stopWriters := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, w := range writers {
			wg.Add(1)
			go func(w *crashWriter, seed uint64) {
				defer wg.Done()
				w.run(wctx, c, rand.New(rand.NewPCG(seed, uint64(cycle))))
			}(w, rng.Uint64()+uint64(i))
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		p.kill()
		if tmpNonEmpty(dir) {
			midFlush++
		}
		stopWriters()
		wg.Wait()
		p.start()
		var cc crashCheck
		vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		for _, w := range writers {
			if err := w.verify(vctx, c, &cc); err != nil {
				cancel()
				t.Fatalf("cycle %d: reading back after restart: %v\nserver log:\n%s", cycle, err, p.log())
			}
		}
		cancel()
		for _, d := range cc.details {
			t.Errorf("cycle %d: %s", cycle, d)
		}
		total.lost += cc.lost
		total.resurrected += cc.resurrected
		total.wrong += cc.wrong
		done++
	}
	for _, w := range writers {
		acked += w.acked
	}
	fmt.Printf("cycles=%d lost=%d resurrected=%d\n", done, total.lost, total.resurrected)
	t.Logf("cycles=%d lost=%d resurrected=%d wrong=%d acknowledged=%d kills with a flush or compaction in progress=%d",
		done, total.lost, total.resurrected, total.wrong, acked, midFlush)
	if acked < done*crashWriters {
		t.Errorf("only %d operations acknowledged in %d cycles: the workload did not run", acked, done)
	}
}

// tmpNonEmpty reports whether any region's .tmp directory holds a file: a
// flush or compaction was writing when the server died.
func tmpNonEmpty(dataDir string) bool {
	matches, _ := filepath.Glob(filepath.Join(dataDir, "data", "default", crashTable, "*", ".tmp", "*"))
	return len(matches) > 0
}
