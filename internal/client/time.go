package client

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// Time is a coordinator timestamp (a Java Instant). Decoding is lenient:
// null, "" and values that match no known layout decode to the zero Time
// rather than failing the whole response, because these timestamps are
// informational and the server's serialization was never pinned down.
type Time struct {
	time.Time
}

// timeLayouts are tried in order. Instants come as RFC 3339 with optional
// fractional seconds; the zone-less forms cover a LocalDateTime slipping
// through and are read as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	t.Time = time.Time{}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	if b[0] != '"' {
		// Jackson with WRITE_DATES_AS_TIMESTAMPS emits epoch seconds with a
		// fraction; accept it rather than fail.
		if secs, err := strconv.ParseFloat(string(b), 64); err == nil && !math.IsInf(secs, 0) && !math.IsNaN(secs) {
			whole, frac := math.Modf(secs)
			t.Time = time.Unix(int64(whole), int64(math.Round(frac*1e9))).UTC()
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return nil //nolint:nilerr // timestamps are parsed leniently: an unreadable one is left zero, not fatal
	}
	t.Time = ParseTime(s)
	return nil
}

// MarshalJSON implements json.Marshaler; the zero Time encodes as null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
}

// ParseTime parses a coordinator timestamp leniently and returns the zero
// time when s matches no known layout.
func ParseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	for _, layout := range timeLayouts {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts.UTC()
		}
	}
	return time.Time{}
}
