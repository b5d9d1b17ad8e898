package bench

import (
	"sort"
	"time"
)

// Stats summarises repeated measurements.
type Stats struct {
	N                int
	Min, Median, Max time.Duration
}

func statsOf(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stats{N: len(s), Min: s[0], Median: med, Max: s[len(s)-1]}
}
