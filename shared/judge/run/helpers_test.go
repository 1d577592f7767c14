package run_test

import "math"

func nan() float64 { return math.NaN() }

func ptr[T any](v T) *T { return &v }
