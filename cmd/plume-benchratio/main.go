// Command plume-benchratio prints each benchmark's ratio to its floor, from `go test -bench`
// output on its standard input: a benchmark named .../floor is the floor of its siblings
// (BenchmarkGatewayFloor/inprocess/openai/gateway beside .../openai/floor), and each sibling's
// median of a unit (cpu-ns/op by default) is shown divided by the floor's median of the same
// unit. It is the last step of `make bench` (scripts/bench.sh), so a regression shows as a
// ratio, which a loaded machine disturbs less than a time.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	unit := flag.String("unit", "cpu-ns/op", "the unit compared: a metric of the benchmarks' lines")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *unit); err != nil {
		fmt.Fprintln(os.Stderr, "plume-benchratio:", err)
		os.Exit(1)
	}
}

// procs is the -N suffix go test adds to a benchmark's name (GOMAXPROCS).
var procs = regexp.MustCompile(`-\d+$`)

// run reads benchmark lines from in and writes a table of ratios to out.
func run(in io.Reader, out io.Writer, unit string) error {
	values := map[string][]float64{}
	var order []string
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procs.ReplaceAllString(f[0], "")
		for i := 3; i < len(f); i += 2 {
			if f[i] != unit {
				continue
			}
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil {
				return fmt.Errorf("%s: %s %q: %w", name, unit, f[i-1], err)
			}
			if _, seen := values[name]; !seen {
				order = append(order, name)
			}
			values[name] = append(values[name], v)
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	fmt.Fprintf(out, "| benchmark | %s | floor | x floor |\n|---|---|---|---|\n", unit)
	for _, name := range order {
		parent, leaf := name[:max(strings.LastIndexByte(name, '/'), 0)], name[strings.LastIndexByte(name, '/')+1:]
		floor, ok := values[parent+"/floor"]
		if leaf == "floor" || !ok || parent == "" {
			continue
		}
		v, f := median(values[name]), median(floor)
		fmt.Fprintf(out, "| %s | %.0f | %.0f | %.2fx |\n", name, v, f, v/f)
	}
	return nil
}

// median is the median of vs, which is not empty.
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
