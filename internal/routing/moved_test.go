package routing

import (
	"math"
	"strconv"
	"testing"
)

func TestMovedKeyShareTable(t *testing.T) {
	cases := []struct {
		from, to int
		num, den int64
	}{
		{1, 2, 1, 2},
		{2, 3, 2, 3},
		{4, 8, 1, 2},
		{8, 12, 2, 3},
		{12, 16, 3, 4},
		{16, 7, 15, 16},
		{1, 1024, 1023, 1024},
		{12, 12, 0, 1},
		{0, 0, 0, 1},
		{0, 8, 1, 1},
		{8, 0, 1, 1},
		{-1, 8, 1, 1},
	}
	for _, c := range cases {
		num, den := MovedKeyFraction(c.from, c.to)
		if num != c.num || den != c.den {
			t.Errorf("MovedKeyFraction(%d, %d) = %d/%d, want %d/%d", c.from, c.to, num, den, c.num, c.den)
		}
		if got, want := MovedKeyShare(c.from, c.to), float64(c.num)/float64(c.den); got != want {
			t.Errorf("MovedKeyShare(%d, %d) = %v, want %v", c.from, c.to, got, want)
		}
	}
}

// TestMovedKeyShareBruteForce routes a fixed set of partition keys with
// ShardForKey (the routeV1 code behind the shard_for_key function) at both
// counts and compares the share that changed shard with MovedKeyShare.
//
// Tolerance: the key set is fixed, so the test is deterministic; the margin
// only has to cover the choice of keys. If murmur3 behaves like a random
// function, the number of moved keys among N is Binomial(N, p), with standard
// error sqrt(p(1-p)/N): at most 0.5/sqrt(100000) ≈ 0.0016, and 0.0001 for
// 1 → 1024. We allow 5 standard errors (a random key set would miss it with
// probability below 1e-6) plus the formula's own bound (from+to)/2^32. The
// margin is still tight enough to reject a wrong formula: the test also checks
// that the naive 1 − min/max (1/3 for 8 → 12) falls outside it.
func TestMovedKeyShareBruteForce(t *testing.T) {
	const keys = 100_000
	pairs := [][2]int{{1, 2}, {2, 3}, {4, 8}, {8, 12}, {12, 16}, {16, 7}, {1, 1024}, {12, 12}}
	for _, pr := range pairs {
		from, to := pr[0], pr[1]
		moved := 0
		for i := range keys {
			key := "pk-" + strconv.Itoa(i)
			a, err := ShardForKey(key, int64(from))
			if err != nil {
				t.Fatal(err)
			}
			b, err := ShardForKey(key, int64(to))
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				moved++
			}
		}
		p := MovedKeyShare(from, to)
		observed := float64(moved) / keys
		se := math.Sqrt(p * (1 - p) / keys)
		tol := 5*se + float64(from+to)/(1<<32)
		if math.Abs(observed-p) > tol {
			t.Errorf("%d → %d: %d of %d keys moved (%.5f), MovedKeyShare = %.5f, tolerance %.5f",
				from, to, moved, keys, observed, p, tol)
		}
		if from == to && moved != 0 {
			t.Errorf("%d → %d: %d keys moved, want none", from, to, moved)
		}
		if from == 8 && to == 12 {
			if naive := 1 - 8.0/12.0; math.Abs(observed-naive) <= tol {
				t.Errorf("8 → 12: tolerance %.5f cannot tell the formula from the naive %.5f", tol, naive)
			}
		}
	}
}

// TestMovedKeyShareExactPeriod checks the closed form against a direct count
// over one lcm period of residues, for every pair of counts up to 48.
func TestMovedKeyShareExactPeriod(t *testing.T) {
	for a := 1; a <= 48; a++ {
		for b := 1; b <= 48; b++ {
			l := a / int(gcd(int64(a), int64(b))) * b
			moved := 0
			for r := range l {
				if r%a != r%b {
					moved++
				}
			}
			num, den := MovedKeyFraction(a, b)
			// moved/l == num/den, cross-multiplied to stay exact.
			if int64(moved)*den != num*int64(l) {
				t.Errorf("%d → %d: %d of %d residues move, MovedKeyFraction = %d/%d", a, b, moved, l, num, den)
			}
		}
	}
}

func FuzzMovedKeyShare(f *testing.F) {
	f.Add(8, 12)
	f.Add(0, 3)
	f.Add(1, 1<<30)
	f.Add(-5, -5)
	f.Fuzz(func(t *testing.T, a, b int) {
		s := MovedKeyShare(a, b)
		if !(s >= 0 && s <= 1) {
			t.Fatalf("MovedKeyShare(%d, %d) = %v, outside [0, 1]", a, b, s)
		}
		if r := MovedKeyShare(b, a); r != s {
			t.Fatalf("MovedKeyShare(%d, %d) = %v but MovedKeyShare(%d, %d) = %v", a, b, s, b, a, r)
		}
		if MovedKeyShare(a, a) != 0 {
			t.Fatalf("MovedKeyShare(%d, %d) != 0", a, a)
		}
		num, den := MovedKeyFraction(a, b)
		if den < 1 || num < 0 || num > den || gcd(num, den) != 1 && num != 0 {
			t.Fatalf("MovedKeyFraction(%d, %d) = %d/%d: not a reduced fraction in [0, 1]", a, b, num, den)
		}
		if a > 0 && b > 0 && a != b && (a%b == 0 || b%a == 0) {
			// one count divides the other: exactly 1 − min/max moves.
			if want := 1 - float64(min(a, b))/float64(max(a, b)); math.Abs(s-want) > 1e-12 {
				t.Fatalf("MovedKeyShare(%d, %d) = %v, want %v", a, b, s, want)
			}
		}
	})
}
