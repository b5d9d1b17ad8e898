package main

import "testing"

func TestGCDefaultsOnlyWhenTheUserSetNone(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		ok      bool
	}{
		{[]string{"PATH=/usr/bin"}, true},
		{[]string{"GOGC="}, true},
		{[]string{"GOGC=off"}, false},
		{[]string{"GOGC=100"}, false},
		{[]string{"GOMEMLIMIT=1GiB"}, false},
		{[]string{"GOMAXPROCS=1"}, true},
	} {
		percent, limit, ok := gcDefaults(tc.environ)
		if ok != tc.ok {
			t.Errorf("gcDefaults(%q) ok = %v, want %v", tc.environ, ok, tc.ok)
		}
		if ok && (percent != 400 || limit != 96<<20) {
			t.Errorf("gcDefaults(%q) = %d, %d; want 400, 96 MiB", tc.environ, percent, limit)
		}
	}
}
