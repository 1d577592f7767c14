// Package cpubench measures the CPU and allocations of the prompts area's hot path, GET
// /v1/prompts/{slug}, with DynamoDB answered from memory. It is a package of its own so that
// its test binary links only the prompts area, as the PromptsFunction binary does: the area's
// own tests link the whole stack (internal/apitest), whose larger data segments the garbage
// collector scans on every cycle, which would show in this figure and not in Lambda's.
package cpubench
