package signal

import "math"

// Student's t and Welch's t-test, from the regularized incomplete beta function (Numerical
// Recipes' continued fraction, evaluated by the modified Lentz method).

// tCDFUpper2 is the two-sided tail P(|T| >= |t|) of Student's t with df degrees of freedom.
func tCDFUpper2(t, df float64) float64 {
	x := df / (df + t*t)
	return incBeta(df/2, 0.5, x)
}

// tQuantile is the p-quantile (p > 0.5) of Student's t with df degrees of freedom, found by
// bisection on the two-sided tail.
func tQuantile(p, df float64) float64 {
	tail := 2 * (1 - p)
	lo, hi := 0.0, 1e4
	for range 200 {
		mid := (lo + hi) / 2
		if tCDFUpper2(mid, df) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// incBeta is the regularized incomplete beta function I_x(a, b).
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF is the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// sample is the summary of one signal in one variant.
type sample struct {
	n        int64
	mean     float64
	variance float64 // unbiased; meaningful for n >= 2
}

// welch is Welch's t-test of a against b: t, the Welch–Satterthwaite degrees of freedom and
// the two-sided p-value; ok is false when either sample has fewer than two values or both
// have no variance.
func welch(a, b sample) (t, df, p float64, ok bool) {
	if a.n < 2 || b.n < 2 {
		return 0, 0, 0, false
	}
	va, vb := a.variance/float64(a.n), b.variance/float64(b.n)
	if va+vb == 0 {
		return 0, 0, 0, false
	}
	t = (a.mean - b.mean) / math.Sqrt(va+vb)
	df = (va + vb) * (va + vb) / (va*va/float64(a.n-1) + vb*vb/float64(b.n-1))
	return t, df, tCDFUpper2(t, df), true
}
