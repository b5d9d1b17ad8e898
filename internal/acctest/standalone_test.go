package acctest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestHoldScalesUntil(t *testing.T) {
	served := func(calls *atomic.Int32) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			calls.Add(1)
			w.WriteHeader(http.StatusAccepted)
		})
	}
	do := func(ctx context.Context, h http.Handler, method, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil).WithContext(ctx))
		return rec.Code
	}

	t.Run("other requests pass at once", func(t *testing.T) {
		var next, asked atomic.Int32
		h := HoldScalesUntil(served(&next), func() bool { asked.Add(1); return false }, time.Hour)
		do(context.Background(), h, http.MethodPost, "/coord/v1/streams/orders/groups/order-service")
		do(context.Background(), h, http.MethodGet, "/coord/v1/streams/orders/scale")
		if next.Load() != 2 || asked.Load() != 0 {
			t.Errorf("served %d of 2 requests, readiness asked %d times (want 0)", next.Load(), asked.Load())
		}
	})

	t.Run("a scale waits until ready", func(t *testing.T) {
		var next, asked atomic.Int32
		var servedBeforeReady bool
		h := HoldScalesUntil(served(&next), func() bool {
			if next.Load() > 0 {
				servedBeforeReady = true
			}
			return asked.Add(1) >= 3
		}, time.Hour)
		if code := do(context.Background(), h, http.MethodPost, "/coord/v1/streams/orders/scale"); code != http.StatusAccepted {
			t.Fatalf("status %d", code)
		}
		if asked.Load() != 3 || servedBeforeReady || next.Load() != 1 {
			t.Errorf("readiness asked %d times (want 3), served before ready: %v, served %d", asked.Load(), servedBeforeReady, next.Load())
		}
	})

	t.Run("a group scale passes after maxWait", func(t *testing.T) {
		var next atomic.Int32
		h := HoldScalesUntil(served(&next), func() bool { return false }, 30*time.Millisecond)
		do(context.Background(), h, http.MethodPost, "/coord/v1/streams/orders/groups/order-service/scale")
		if next.Load() != 1 {
			t.Error("the scale was not passed on after maxWait")
		}
	})

	t.Run("a cancelled scale is dropped", func(t *testing.T) {
		var next atomic.Int32
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h := HoldScalesUntil(served(&next), func() bool { return false }, time.Hour)
		do(ctx, h, http.MethodPost, "/coord/v1/streams/orders/scale")
		if next.Load() != 0 {
			t.Error("a scale whose client went away was still passed on")
		}
	})
}
