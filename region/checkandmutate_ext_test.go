package region

import (
	"testing"

	"github.com/regionkv/regionkv/filter"
)

// TestCheckAndMutateComparatorAndFilter covers the two conditions the
// server needs beyond a plain value: any comparator, and a filter.
func TestCheckAndMutateComparatorAndFilter(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	f, q := []byte("f"), []byte("q")
	if err := r.Put(NewPut([]byte("row")).Add(f, q, []byte("hello world"))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    CheckAndMutate
		want bool
	}{
		{"substring equal", CheckAndMutate{Family: f, Qualifier: q, Op: filter.CompareEqual, Comparator: filter.NewSubstringComparator("lo wo")}, true},
		{"substring miss", CheckAndMutate{Family: f, Qualifier: q, Op: filter.CompareEqual, Comparator: filter.NewSubstringComparator("xyz")}, false},
		{"binary greater", CheckAndMutate{Family: f, Qualifier: q, Op: filter.CompareGreater, Comparator: filter.NewBinaryComparator([]byte("zzz"))}, true},
		{"binary less", CheckAndMutate{Family: f, Qualifier: q, Op: filter.CompareLess, Comparator: filter.NewBinaryComparator([]byte("zzz"))}, false},
		{"null on existing", CheckAndMutate{Family: f, Qualifier: q, Op: filter.CompareEqual, Comparator: filter.NewNullComparator()}, false},
		{"null on missing", CheckAndMutate{Family: f, Qualifier: []byte("nope"), Op: filter.CompareEqual, Comparator: filter.NewNullComparator()}, true},
		{"filter passes", CheckAndMutate{Filter: filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator([]byte("hello world")))}, true},
		{"filter fails", CheckAndMutate{Filter: filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator([]byte("other")))}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Row = []byte("row")
			marker := []byte{byte('a' + i)}
			c.Mutations = []Mutation{NewPut([]byte("row")).Add(f, marker, []byte("x"))}
			ok, err := r.CheckAndMutate(&c)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.want {
				t.Fatalf("processed = %v, want %v", ok, tc.want)
			}
			res, err := r.Get(NewGet([]byte("row")).AddColumn(f, marker))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsEmpty() == tc.want {
				t.Fatalf("mutation applied = %v, want %v", !res.IsEmpty(), tc.want)
			}
		})
	}
}
