package region_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/region"
)

// Example shows the embedded store: open a region with one column family,
// write, read, count, and reopen after a close.
func Example() {
	dir, err := os.MkdirTemp("", "regionkv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	r, err := region.Open(dir, region.Options{
		Families: []region.FamilyOptions{{Name: "info", MaxVersions: 3, Encoding: encoding.EncodingFastDiff}},
	})
	if err != nil {
		log.Fatal(err)
	}
	info := []byte("info")
	if err := r.Put(region.NewPut([]byte("user1")).Add(info, []byte("name"), []byte("Ada"))); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Increment(region.NewIncrement([]byte("user1")).Add(info, []byte("visits"), 1)); err != nil {
			log.Fatal(err)
		}
	}
	ok, err := r.CheckAndMutate(&region.CheckAndMutate{
		Row: []byte("user1"), Family: info, Qualifier: []byte("email"), Op: filter.CompareEqual, Value: nil, // if not exists
		Mutations: []region.Mutation{region.NewPut([]byte("user1")).Add(info, []byte("email"), []byte("ada@example.org"))},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("email set:", ok)
	if err := r.Close(); err != nil { // flushes to an HFile
		log.Fatal(err)
	}

	r, err = region.Open(dir, region.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	res, err := r.Get(region.NewGet([]byte("user1")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("name=%s email=%s visits=%d\n", res.Value(info, []byte("name")), res.Value(info, []byte("email")),
		binary.BigEndian.Uint64(res.Value(info, []byte("visits"))))
	// Output:
	// email set: true
	// name=Ada email=ada@example.org visits=3
}
