package trace_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

// BenchmarkSpanPath measures, per span, what the ingest function's CPU does before and after its
// AWS calls: decode and validate a 100-span SDK batch (made of one SDK's fixture spans with new
// ids), price its llm spans, and encode every span as the NDJSON line written to S3. It reports
// ns/span.
func BenchmarkSpanPath(b *testing.B) {
	for _, sdk := range []string{"python", "typescript"} {
		b.Run(sdk, func(b *testing.B) { benchmarkSpanPath(b, "testdata/"+sdk+"_batch.json") })
	}
}

func benchmarkSpanPath(b *testing.B, fixturePath string) {
	raw, err := os.ReadFile(fixturePath)
	if err != nil {
		b.Fatal(err)
	}
	var fixture []map[string]any
	if err := json.Unmarshal(raw, &fixture); err != nil {
		b.Fatal(err)
	}
	var batch []map[string]any
	for len(batch) < 100 {
		for _, sp := range fixture {
			c := make(map[string]any, len(sp))
			for k, v := range sp {
				c[k] = v
			}
			c["id"] = uuid.NewString()
			batch = append(batch, c)
		}
	}
	body, err := json.Marshal(batch[:100])
	if err != nil {
		b.Fatal(err)
	}
	pricer := pricing.NewPricer(pricing.Default())
	ctx := context.Background()
	now := time.Now()
	var line []byte
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		spans, _, err := trace.DecodeBatch(body, "p", now)
		if err != nil {
			b.Fatal(err)
		}
		for i := range spans {
			if u := spans[i].LLM; u != nil && spans[i].Cost == nil {
				cost, _, _, _ := pricer.Cost(ctx, "p", *u)
				spans[i].Cost = &cost
			}
			line = spans[i].AppendJSON(line[:0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/span")
}
