package coordinator

import (
	"sync"
	"time"
)

// rateLimiter is the server's in-memory fixed-window limiter (§8): a window
// opens at the first request of a key and lasts RateLimitWindow; every
// request that passed authentication counts, whatever its outcome.
type rateLimiter struct {
	mu      sync.Mutex
	windows map[string]*rateWindow
	manual  bool // windows end only at ResetRateLimits
	// refusals counts 429s, so a test can wait for the first one.
	refusals int
	// resetAfter > 0 ends every window right after that many more refusals.
	resetAfter int
}

type rateWindow struct {
	start  time.Time
	count  int
	prefix string // raw stream prefix of the key
}

// allow counts one request for key. When it is over the limit it returns
// the Retry-After seconds: time until the window resets, rounded up, at
// least 1.
func (l *rateLimiter) allow(key, prefix string, now time.Time, limit int, window time.Duration) (retryAfter int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil || (!l.manual && !now.Before(w.start.Add(window))) {
		w = &rateWindow{start: now, prefix: prefix}
		l.windows[key] = w
	}
	w.count++
	if limit > 0 && w.count <= limit {
		return 0, true
	}
	l.refusals++
	if l.resetAfter > 0 {
		if l.resetAfter--; l.resetAfter == 0 {
			defer clear(l.windows)
		}
	}
	remaining := max(w.start.Add(window).Sub(now), 0)
	secs := int((remaining + time.Second - 1) / time.Second)
	return max(secs, 1), false
}

// ResetRateLimits ends every rate-limit window now: the next limited request
// of each key opens a new window. With Options.RateLimitManualReset it is
// the only way a window ends.
func (c *Coordinator) ResetRateLimits() {
	c.limiter.mu.Lock()
	defer c.limiter.mu.Unlock()
	clear(c.limiter.windows)
}

// RateLimitRefusals counts the 429 answers the rate limiter has given.
func (c *Coordinator) RateLimitRefusals() int {
	c.limiter.mu.Lock()
	defer c.limiter.mu.Unlock()
	return c.limiter.refusals
}

// ResetRateLimitsAfterRefusals ends every rate-limit window right after the
// limiter's next n refusals: the n-th refused request is still answered 429,
// the next limited request opens a new window. With RateLimitManualReset it
// makes "refuse exactly n times, then let the retry through" independent of
// timing. n ≤ 0 cancels it.
func (c *Coordinator) ResetRateLimitsAfterRefusals(n int) {
	c.limiter.mu.Lock()
	defer c.limiter.mu.Unlock()
	c.limiter.resetAfter = max(n, 0)
}

// ResetRateLimitsOf ends the windows of one stream prefix (every principal
// and group, as the raw, percent-encoded prefix appears in the request path)
// and leaves other prefixes' windows alone.
func (c *Coordinator) ResetRateLimitsOf(rawPrefix string) {
	c.limiter.mu.Lock()
	defer c.limiter.mu.Unlock()
	for key, w := range c.limiter.windows {
		if w.prefix == rawPrefix {
			delete(c.limiter.windows, key)
		}
	}
}
