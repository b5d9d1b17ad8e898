package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

const gatewayPage = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"

func TestGatewayErrorsWithoutCodeAreRetriedOnGET(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n <= 2 {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, gatewayPage)
				return
			}
			writeJSON(w, http.StatusOK, groupJSON("orders", "billing", 4))
		})
		c := newTestClient(t, f.URL, nil)
		g, err := c.GetGroup(context.Background(), "orders", "billing")
		if err != nil {
			t.Fatalf("%d: GetGroup: %v", status, err)
		}
		if g.ShardCount != 4 || f.count() != 3 {
			t.Errorf("%d: shardCount %d after %d requests, want 4 after 3", status, g.ShardCount, f.count())
		}
	}
}

func TestGatewayErrorsOnMutationsAreNotRetried(t *testing.T) {
	// The proxy may have forwarded the scale before failing: re-sending it
	// blindly is the caller's decision, not the transport's.
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, gatewayPage)
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.ScaleStream(context.Background(), "orders", 8, Mutation{})
	apiErr, ok := AsAPIError(err)
	if !ok || apiErr.HTTPStatus != http.StatusBadGateway || f.count() != 1 {
		t.Fatalf("want one attempt ending in a 502 APIError, got %d attempts and %v", f.count(), err)
	}
	if IsTransient(err) {
		t.Error("a 502 to a mutation must not count as transient")
	}
}

func TestGatewayErrorsExhaustRetriesWithAttemptCount(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusServiceUnavailable || apiErr.Attempts != 4 {
		t.Fatalf("want a 503 after 4 attempts (MaxRetries 3), got %v", err)
	}
	if !IsTransient(err) {
		t.Error("a proxy's 503 to a GET is transient")
	}
	// A coordinator 503 with a permanent code stays permanent, even on a GET.
	if IsTransient(&APIError{Method: http.MethodGet, HTTPStatus: 503, ErrorCode: CodeRedisNotConfigured}) {
		t.Error("503 REDIS_NOT_CONFIGURED must stay permanent")
	}
}
