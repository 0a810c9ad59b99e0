package memstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionkv/regionkv/encoding"
)

// TestNewest: Segment.Newest is the column's first visible cell in version
// order, delete markers included; MemStore.Newest takes the newer of the
// active segment's and the snapshot's and reports the family delete markers
// of the row that delete it.
func TestNewest(t *testing.T) {
	row, fam := []byte("r1"), []byte("f")
	newest := func(m *MemStore, q string, rp encoding.SeqNum) (string, bool) {
		kv, deleted := m.Newest(row, fam, []byte(q), rp)
		if kv == nil {
			return "", deleted
		}
		return kv.String() + "=" + string(kv.Value), deleted
	}
	m := New(encoding.InnerStoreComparer)
	m.Add(kv("r1", "a", 10, 1, "x"))
	m.Add(kv("r1", "a", 12, 2, "y"))
	m.Add(kv("r1", "b", 5, 3, "z"))
	m.Add(kv("r0", "a", 99, 4, "other row"))
	m.Add(kv("r2", "a", 99, 5, "other row"))

	got, del := newest(m, "a", 10)
	require.Equal(t, "r1/f:a/12/Put/vlen=1/seqid=2=y", got)
	require.False(t, del)
	got, _ = newest(m, "a", 1) // the newer one is not visible yet
	require.Equal(t, "r1/f:a/10/Put/vlen=1/seqid=1=x", got)
	got, _ = newest(m, "c", 10)
	require.Empty(t, got)
	got, _ = newest(m, "a", 0)
	require.Empty(t, got)

	// A column delete at the newest time is the column's first cell.
	d := kv("r1", "a", 12, 6, "")
	d.Type = encoding.TypeDeleteColumn
	m.Add(d)
	got, _ = newest(m, "a", 10)
	require.Equal(t, "r1/f:a/12/DeleteColumn/vlen=0/seqid=6=", got)

	// The snapshot's version is newer than the active segment's.
	m2 := New(encoding.InnerStoreComparer)
	m2.Add(kv("r1", "a", 20, 1, "old seq, new ts"))
	m2.Snapshot()
	m2.Add(kv("r1", "a", 15, 2, "new seq, old ts"))
	got, _ = newest(m2, "a", 10)
	require.Equal(t, "r1/f:a/20/Put/vlen=15/seqid=1=old seq, new ts", got)
	m2.Add(kv("r1", "b", 1, 3, "active only"))
	got, _ = newest(m2, "b", 10)
	require.Contains(t, got, "active only")

	// Family delete markers of the row: DeleteFamily at or after the cell's
	// time, DeleteFamilyVersion at its time; others' rows and older markers
	// do not count, nor do markers not visible yet.
	for _, tc := range []struct {
		name    string
		typ     encoding.Type
		row     string
		ts      int64
		seq     encoding.SeqNum
		deleted bool
	}{
		{"family delete after", encoding.TypeDeleteFamily, "r1", 13, 7, true},
		{"family delete at", encoding.TypeDeleteFamily, "r1", 12, 7, true},
		{"family delete before", encoding.TypeDeleteFamily, "r1", 11, 7, false},
		{"family version at", encoding.TypeDeleteFamilyVersion, "r1", 12, 7, true},
		{"family version after", encoding.TypeDeleteFamilyVersion, "r1", 13, 7, false},
		{"other row", encoding.TypeDeleteFamily, "r2", 13, 7, false},
		{"not visible", encoding.TypeDeleteFamily, "r1", 13, 11, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, inSnapshot := range []bool{false, true} {
				m := New(encoding.InnerStoreComparer)
				m.Add(kv("r1", "a", 12, 2, "y"))
				fd := kv(tc.row, "", tc.ts, tc.seq, "")
				fd.Type = tc.typ
				m.Add(fd)
				if inSnapshot {
					m.Snapshot()
				}
				got, del := newest(m, "a", 10)
				require.Contains(t, got, "/12/Put/")
				require.Equal(t, tc.deleted, del, "in snapshot: %v", inSnapshot)
			}
		})
	}
}

// TestNewestReadsClone: a run of Newest lookups clones the live tree and
// later lookups read the clone without the segment's lock. Versions added
// to existing columns keep the clone and are seen through it; a new column
// drops it, and is found at once.
func TestNewestReadsClone(t *testing.T) {
	m := New(encoding.InnerStoreComparer)
	rows := 100 // past learnSkipAt, so the segment has picked its prefix
	for i := 0; i < rows; i++ {
		m.Add(kv(fmt.Sprintf("ctr%04d", i), "c", 1, encoding.SeqNum(i+1), "0"))
	}
	seg, _ := m.Segments()
	seq := encoding.SeqNum(rows)
	value := func(i int) string {
		kv, _ := m.Newest([]byte(fmt.Sprintf("ctr%04d", i)), []byte("f"), []byte("c"), seq)
		if kv == nil {
			return ""
		}
		return string(kv.Value)
	}
	for i := 0; i < cloneAfterLiveReads; i++ {
		require.Equal(t, "0", value(i))
	}
	require.NotNil(t, seg.readTree.Load(), "a run of lookups clones the tree")
	for n := 1; n <= 3; n++ {
		for i := 0; i < rows; i += 7 {
			seq++
			m.Add(kv(fmt.Sprintf("ctr%04d", i), "c", int64(1+n), seq, fmt.Sprint(n)))
			require.Equal(t, fmt.Sprint(n), value(i), "row %d, version %d", i, n)
			require.Equal(t, fmt.Sprint(n-1), func() string {
				kv, _ := m.Newest([]byte(fmt.Sprintf("ctr%04d", i)), []byte("f"), []byte("c"), seq-1)
				return string(kv.Value)
			}(), "row %d: the older version at the older read point", i)
		}
	}
	require.NotNil(t, seg.readTree.Load(), "new versions keep the clone")
	require.Equal(t, "", value(rows))
	seq++
	m.Add(kv(fmt.Sprintf("ctr%04d", rows), "c", 1, seq, "new"))
	require.Nil(t, seg.readTree.Load(), "a new column drops the clone")
	require.Equal(t, "new", value(rows))
}
