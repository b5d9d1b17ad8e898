package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A group answer is checked for what it claims (issue 42 §4): null, a
// non-object, a missing required field and another group's body are refused
// with what came back; a full answer about the group asked for passes.
func TestGroupAnswerProblem(t *testing.T) {
	const full = `{"streamPrefix":"orders","consumerGroup":"billing","state":"EMPTY","groupEpoch":1,"assignmentEpoch":1,` +
		`"metadataVersion":1,"shardCount":0,"activeMigration":null}`
	for body, want := range map[string]string{
		full:       "",
		`null`:     "the body is JSON null, not a group",
		` null `:   "the body is JSON null, not a group",
		`[]`:       "not a JSON object",
		`"orders"`: "not a JSON object",
		`{}`:       "lacks streamPrefix, consumerGroup, shardCount, metadataVersion",
		`{"streamPrefix":"orders","consumerGroup":"billing","shardCount":null,"metadataVersion":1}`: "lacks shardCount",
		`{"streamPrefix":"orders","consumerGroup":"other","shardCount":2,"metadataVersion":1}`:      `consumerGroup "other" where "billing" was asked for`,
		`{"streamPrefix":"payments","consumerGroup":"billing","shardCount":2,"metadataVersion":1}`:  `streamPrefix "payments" where "orders" was asked for`,
		`{"streamPrefix":1,"consumerGroup":"billing","shardCount":2,"metadataVersion":1}`:           `streamPrefix 1 where "orders" was asked for`,
	} {
		got := groupAnswer("orders", "billing").problem([]byte(body))
		if (got == "") != (want == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

// Through the client: GetGroup refuses a null or wrong-group 200 with an
// UnexpectedAnswerError naming what came back; a create's such answer is
// ambiguous (most likely applied), so the caller reads it back.
func TestGetGroupRefusesAnAnswerAboutNothingElse(t *testing.T) {
	body := "null"
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	})
	c := newTestClient(t, f.URL, nil)
	for b, want := range map[string]string{
		"null": "the body is JSON null, not a group",
		`{"streamPrefix":"orders","consumerGroup":"other","shardCount":3,"metadataVersion":2}`: `consumerGroup "other" where "billing" was asked for`,
	} {
		body = b
		g, err := c.GetGroup(context.Background(), "orders", "billing")
		var ua *UnexpectedAnswerError
		if g != nil || !errors.As(err, &ua) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "body: "+b) ||
			!strings.Contains(err.Error(), "GET /coord/v1/streams/orders/groups/billing: the 200 answer") {
			t.Errorf("%s: %+v, %v", b, g, err)
		}
		_, err = c.CreateGroup(context.Background(), "orders", "billing", nil, Mutation{})
		if !IsAmbiguous(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("create, %s: %v", b, err)
		}
	}
}
