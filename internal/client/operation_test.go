package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// graceOf is what the provider's grace context is: detached from op, with op
// recorded.
func graceOf(op context.Context) context.Context {
	return WithOperation(context.WithoutCancel(op), op)
}

// TestMutationNotStartedAfterItsOperationEnded: on a context that outlives
// its operation, no mutation starts once the operation has ended, while a
// read (the read-back of what was sent) still goes out.
func TestMutationNotStartedAfterItsOperationEnded(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodGet {
			writeJSON(w, http.StatusOK, map[string]any{"streamPrefix": "orders", "consumerGroup": "billing", "shardCount": 4, "metadataVersion": 1})
			return
		}
		writeMigration(w, http.StatusAccepted)
	})
	c := newTestClient(t, f.URL, nil)
	op, interrupt := context.WithCancel(context.Background())
	grace := graceOf(op)
	if _, err := c.ScaleGroup(grace, "orders", "billing", 8, Mutation{}); err != nil {
		t.Fatalf("scale while the operation runs: %v", err)
	}
	interrupt()
	mutations := map[string]func() error{
		"scale-group":  func() error { _, err := c.ScaleGroup(grace, "orders", "billing", 8, Mutation{}); return err },
		"scale-stream": func() error { _, err := c.ScaleStream(grace, "orders", 8, Mutation{}); return err },
		"create-group": func() error { _, err := c.CreateGroup(grace, "orders", "new", nil, Mutation{}); return err },
		"delete-group": func() error { _, err := c.DeleteGroup(grace, "orders", "billing", false, Mutation{}); return err },
		"rollback": func() error {
			_, err := c.RollbackMigration(grace, "orders", "billing", "reshard-1", Mutation{})
			return err
		},
		// A grace context made from a grace context (a take-over inside a
		// scale's settle) still serves the ended operation.
		"nested": func() error { _, err := c.ScaleGroup(graceOf(grace), "orders", "billing", 8, Mutation{}); return err },
	}
	for name, send := range mutations {
		err := send()
		if !IsNotSent(err) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s after the interrupt: %v, want a NotSentError wrapping context.Canceled", name, err)
		}
	}
	if _, err := c.GetGroup(grace, "orders", "billing"); err != nil {
		t.Fatalf("a read-back after the interrupt must still be sent: %v", err)
	}
	var sent []string
	for _, r := range f.requests() {
		sent = append(sent, r.Method)
	}
	if len(sent) != 2 || sent[0] != http.MethodPost || sent[1] != http.MethodGet {
		t.Fatalf("requests %v, want the scale sent before the interrupt and the read-back only", sent)
	}
}

// TestMutationNotRetriedAfterItsOperationEnded: a mutation refused with a
// retryable answer (the coordinator applied nothing) is not sent again once
// its operation has ended meanwhile.
func TestMutationNotRetriedAfterItsOperationEnded(t *testing.T) {
	op, interrupt := context.WithCancel(context.Background())
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		interrupt() // Ctrl-C while the first attempt is answered
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "busy")
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.ScaleGroup(graceOf(op), "orders", "billing", 8, Mutation{})
	if err == nil {
		t.Fatal("want the refusal")
	}
	if got := f.count(); got != 1 {
		t.Fatalf("requests = %d, want 1: no retry after the operation ended", got)
	}
}

// TestOperationEndedWithoutRecord: a context made without WithOperation is
// its own operation.
func TestOperationEndedWithoutRecord(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if OperationEnded(ctx) != nil {
		t.Fatal("running context reported ended")
	}
	cancel()
	if !errors.Is(OperationEnded(ctx), context.Canceled) {
		t.Fatal("cancelled context not reported ended")
	}
	if OperationEnded(graceOf(ctx)) == nil {
		t.Fatal("grace context of an ended operation not reported ended")
	}
}

// TestMutationNotReSentAfterReloginOnceItsOperationEnded: a mutation refused
// with a 401 (the token expired; nothing applied) is not sent again through
// the re-login path once its operation has ended meanwhile.
func TestMutationNotReSentAfterReloginOnceItsOperationEnded(t *testing.T) {
	op, interrupt := context.WithCancel(context.Background())
	lf := newLoginFake(t)
	lf.accepted = func(token string) bool {
		if token == "tok-1" {
			interrupt() // Ctrl-C while the first attempt is answered
			return false
		}
		return true
	}
	c := loginClient(t, lf.URL)
	_, err := c.ScaleGroup(graceOf(op), "orders", "billing", 8, Mutation{})
	if !IsNotSent(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("scale after the interrupt: %v, want a NotSentError wrapping context.Canceled", err)
	}
	posts := 0
	for _, r := range lf.requests() {
		if r.Method == http.MethodPost && r.RequestURI != "/coord/v1/auth/login" {
			posts++
		}
	}
	if posts != 1 {
		t.Fatalf("scale sent %d times, want 1: nothing new is sent once the operation ended", posts)
	}
}

// TestMutationNotSentWhenItsOperationEndsDuringTheLogin: the interrupt
// arrives while the client logs in for the mutation's token (a round trip,
// or a wait on another caller's login): the mutation is not sent.
func TestMutationNotSentWhenItsOperationEndsDuringTheLogin(t *testing.T) {
	op, interrupt := context.WithCancel(context.Background())
	lf := newLoginFake(t)
	lf.release = make(chan struct{})
	c := loginClient(t, lf.URL)
	go func() {
		<-lf.entered // the login is under way
		interrupt()
		close(lf.release)
	}()
	_, err := c.ScaleGroup(graceOf(op), "orders", "billing", 8, Mutation{})
	if !IsNotSent(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("scale after an interrupt during its login: %v, want a NotSentError wrapping context.Canceled", err)
	}
	for _, r := range lf.requests() {
		if r.Method == http.MethodPost && r.RequestURI != "/coord/v1/auth/login" {
			t.Fatalf("the scale was sent after the interrupt: %s %s", r.Method, r.RequestURI)
		}
	}
}
