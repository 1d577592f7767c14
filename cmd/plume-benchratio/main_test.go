package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRatios(t *testing.T) {
	in := `goos: linux
BenchmarkGatewayFloor/inprocess/openai/gateway-2   	 100	 9000 ns/op	 30 cpu-ns/op	 10 B/op
BenchmarkGatewayFloor/inprocess/openai/floor-2     	 100	 5000 ns/op	 10 cpu-ns/op
BenchmarkGatewayFloor/inprocess/openai/gateway-2   	 100	 9000 ns/op	 10 cpu-ns/op
BenchmarkGatewayFloor/inprocess/openai/floor-2     	 100	 5000 ns/op	 20 cpu-ns/op
BenchmarkGatewayFloor/inprocess/openai/gateway-2   	 100	 9000 ns/op	 20 cpu-ns/op
BenchmarkGatewayFloor/inprocess/openai/floor-2     	 100	 5000 ns/op	 5 cpu-ns/op
BenchmarkOther/alone-2                             	 100	 5000 ns/op	 5 cpu-ns/op
PASS
`
	var out bytes.Buffer
	require.NoError(t, run(strings.NewReader(in), &out, "cpu-ns/op"))
	assert.Equal(t, "| benchmark | cpu-ns/op | floor | x floor |\n|---|---|---|---|\n"+
		"| BenchmarkGatewayFloor/inprocess/openai/gateway | 20 | 10 | 2.00x |\n", out.String())
	out.Reset()
	require.NoError(t, run(strings.NewReader(in), &out, "ns/op"))
	assert.Contains(t, out.String(), "| BenchmarkGatewayFloor/inprocess/openai/gateway | 9000 | 5000 | 1.80x |")
}
