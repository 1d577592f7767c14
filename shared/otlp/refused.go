package otlp

import "github.com/plumehq/plume/shared/trace"

// AddRefused adds the spans that ingestion refused (trace.Ingested.Refused: a span stored under
// another trace) to what Map rejected, so that the export's partial success counts and names
// them as it does the spans Map rejected, within the same bound on reasons.
func AddRefused(rejected int, reasons []string, refused []trace.Rejected) (int, []string) {
	for _, r := range refused {
		if len(reasons) < maxReasons {
			reasons = append(reasons, r.Error)
		}
	}
	return rejected + len(refused), reasons
}
