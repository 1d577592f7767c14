// Package web holds what every Plume HTTP area shares: JSON decoding with body caps, JSON
// encoding (list answers cut at a byte budget: Page), the one function that writes errors,
// request ids, structured logging and the middleware chain. Areas build a stdlib ServeMux and
// wrap it with Chain.
package web
