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

// CPUSplit is the processor time of one terraform command: terraform's own
// and that of the provider processes it started.
type CPUSplit struct {
	Terraform, Provider time.Duration
}

func cpuSplit(r Run) CPUSplit {
	return CPUSplit{Terraform: max(r.CPU-r.ProviderCPU, 0), Provider: r.ProviderCPU}
}

// medianCPU is the split of the command whose total is the median.
func medianCPU(cs []CPUSplit) CPUSplit {
	if len(cs) == 0 {
		return CPUSplit{}
	}
	s := append([]CPUSplit(nil), cs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Terraform+s[i].Provider < s[j].Terraform+s[j].Provider })
	return s[len(s)/2]
}
