package jsontext

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// JSON has one number type, and its spelling is not part of its value:
// 2, 2.0 and 2e0 are one number written three ways (RFC 8259 §6; JSON
// Schema 2020-12 compares numbers by value). A decoder in most languages
// keeps the value and drops the spelling, so the suite compares numbers
// by value wherever it compares what an implementation sent with what it
// expected (0006.D6.integer), and writes a number it produces itself in
// one canonical spelling.

// maxExponent bounds the exponents compared exactly: beyond it a number
// is compared by its text, so a hostile 1e999999999 costs no big
// arithmetic.
const maxExponent = 4096

// SameNumber reports whether a and b are the same number: equal by
// mathematical value, whatever their spelling.
func SameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okx := rat(a)
	y, oky := rat(b)
	if !okx || !oky {
		return false
	}
	return x.Cmp(y) == 0
}

// rat reads n exactly, or reports false for a text that is no JSON number
// or whose exponent is out of the exact range.
func rat(n json.Number) (*big.Rat, bool) {
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// CanonicalNumber is n in one spelling: a whole number as an integer
// (2.0 and 2e0 are 2), any other in the shortest form that reads back as
// the same float64, as encoding/json writes a float64 (0.5, 1e-7).
func CanonicalNumber(n json.Number) json.Number {
	r, ok := rat(n)
	if !ok {
		return n
	}
	if r.IsInt() && r.Num().BitLen() <= 70 {
		return json.Number(r.Num().String())
	}
	f, _ := r.Float64()
	b, err := json.Marshal(f)
	if err != nil {
		return n
	}
	return json.Number(b)
}

// Canonical returns v with every json.Number in its canonical spelling;
// maps and slices are copied, v itself is not changed.
func Canonical(v any) any {
	switch x := v.(type) {
	case json.Number:
		return CanonicalNumber(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Canonical(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Canonical(e)
		}
		return out
	}
	return v
}
