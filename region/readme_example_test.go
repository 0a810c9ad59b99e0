package region_test

import (
	"fmt"
	"log"
	"os"

	"github.com/regionkv/regionkv/region"
)

// Example_readme is the README's embedded-store example, word for word
// between the BEGIN and END lines (integration's TestReadmeExample checks
// that): it compiles and its output is checked, so the README's code works.
func Example_readme() {
	dir, err := os.MkdirTemp("", "regionkv-readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	check := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}

	// README BEGIN
	r, err := region.Open(dir, region.Options{
		Families:  []region.FamilyOptions{{Name: "info", MaxVersions: 3, Encoding: region.EncodingFastDiff}},
		CacheSize: 256 << 20, // a block cache of the region's own; Options.Cache shares one between regions
	})
	check(err) // check: log.Fatal(err) if err != nil
	info, name := []byte("info"), []byte("name")
	for _, user := range []string{"user1", "user2", "user3"} {
		check(r.Put(region.NewPut([]byte(user)).Add(info, name, []byte("name of "+user))))
	}
	res, err := r.Get(region.NewGet([]byte("user1")))
	check(err)
	fmt.Printf("get user1: %s\n", res.Value(info, name))

	// A reversed scan goes down from StartRow: the rows at or before user2.
	sc, err := r.NewScanner(&region.Scan{StartRow: []byte("user2"), Reversed: true})
	check(err)
	for {
		row, err := sc.Next()
		check(err)
		if row == nil { // the end of the scan
			break
		}
		fmt.Printf("scan %s: %s\n", row.Cells[0].Row, row.Value(info, name))
	}
	sc.Close()       // a scanner pins the store files it reads: close it before the region
	check(r.Close()) // flushes the memstores
	// README END

	// Output:
	// get user1: name of user1
	// scan user2: name of user2
	// scan user1: name of user1
}
