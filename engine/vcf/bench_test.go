package vcf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// BenchmarkReader100Samples reads PharmCAT's 100-sample bgzip test VCF
// (decompression, header checks, every record and GT). Reported: MB/s of
// the compressed file, records/s and decompressed MB/s.
func BenchmarkReader100Samples(b *testing.B) {
	in, err := os.ReadFile(filepath.Join(datapacktest.PharmCATTestVCFs(b), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz"))
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(in))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		data []byte
	}{{"bgzip", in}, {"plain", plain}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			records := 0
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(bc.data), Options{})
				if err != nil {
					b.Fatal(err)
				}
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					records++
				}
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(records)/sec, "records/s")
			b.ReportMetric(float64(len(plain))*float64(b.N)/sec/1e6, "plainMB/s")
		})
	}
}
