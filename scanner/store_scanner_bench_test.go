package scanner

import (
	"math"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
)

// BenchmarkStoreScannerForward reads the cached PE-style file of
// BenchmarkStoreFileScannerForward through a StoreScanner with reused
// cells (as a region scan does, before the region copies each row), one row
// per op: what the matcher and the heap add per row to the file scanner's
// own cost.
//
//	go test ./scanner -run '^$' -bench 'Store(File)?ScannerForward' -benchtime 2000000x
func BenchmarkStoreScannerForward(b *testing.B) {
	for _, enc := range benchEncodings {
		b.Run("enc="+enc.String(), func(b *testing.B) {
			r := openCached(b, benchRows, enc)
			var ss StoreScanner
			open := func() {
				fs := NewStoreFileScanner(r, math.MaxUint64, 0, true)
				if err := ss.Reset(encoding.InnerStoreComparer, []KeyValueScanner{fs}, QueryOptions{MaxVersions: 1, FamilyMaxVersions: 1, ReuseCells: true}); err != nil {
					b.Fatal(err)
				}
			}
			open()
			var cells []*encoding.KeyValue
			step := func() {
				var ok bool
				var err error
				if cells, ok, err = ss.NextRow(cells[:0]); err != nil {
					b.Fatal(err)
				}
				if !ok {
					ss.Close()
					open()
				}
			}
			for i := 0; i < benchRows; i++ {
				step()
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
