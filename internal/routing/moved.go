package routing

// MovedKeyShare is the fraction of partition keys whose shard index changes
// under routeV1 when a stream prefix goes from `from` to `to` shards.
//
// Derivation. Ignoring rejection, routeV1 maps a uniformly distributed hash h
// to h mod n. Over one period L = lcm(from, to) of the residue pair
// (h mod from, h mod to), a key keeps its shard iff h mod from == h mod to = x
// for some x < min(from, to); by the Chinese remainder theorem each such x
// (x ≡ x mod gcd holds trivially) is reached by exactly one residue r in
// [0, L). So min(from, to) of the L residues stay, and the share that stays is
// min/lcm = gcd(from, to)/max(from, to). The share that moves is therefore
//
//	1 − gcd(from, to) / max(from, to)
//
// e.g. 4 → 8 moves 1/2, 8 → 12 moves 2/3, 16 → 7 moves 15/16, 1 → 1024 moves
// 1023/1024, and n → n moves nothing.
//
// Hashes are 32-bit and routeV1 re-hashes values at or above the largest
// multiple of n below 2^32 (unbiased rejection, CONTRACT §12). Both effects
// (the incomplete last period below that limit, and the re-hashed values, fewer
// than max(from, to) of the 2^32) change the exact share by less than
// (from + to)/2^32, at most 2·n/2^32 for the larger count n: the partial
// period shifts the count of staying hashes by fewer than min(from, to), the
// re-hashed ones by fewer than max(from, to). That is far below anything a
// plan shows.
//
// When either count is 0 or below (a group drained to zero shards has no
// route), every key moves: the result is 1.0, unless both are equal.
// MovedKeyShare is symmetric: MovedKeyShare(a, b) == MovedKeyShare(b, a).
func MovedKeyShare(from, to int) float64 {
	num, den := MovedKeyFraction(from, to)
	return float64(num) / float64(den)
}

// MovedKeyFraction is MovedKeyShare as a reduced fraction num/den (den ≥ 1),
// for display: 8 → 12 gives 2/3, equal counts give 0/1, and a count of 0 or
// below on either side (different from the other) gives 1/1.
//
// With g = gcd(from, to) and m = max(from, to), the moved share (m − g)/m
// reduces to (m/g − 1)/(m/g), because g divides m and gcd(m/g − 1, m/g) = 1.
func MovedKeyFraction(from, to int) (num, den int64) {
	if from == to {
		return 0, 1
	}
	if from <= 0 || to <= 0 {
		return 1, 1
	}
	a, b := int64(from), int64(to)
	m := max(a, b)
	k := m / gcd(a, b)
	return k - 1, k
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
