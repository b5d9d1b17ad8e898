package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A 2xx body that decodes is not yet an answer: JSON null decodes into a
// zero value without error, and a body about another object decodes as well
// as the right one. answerCheck says what a call's success body must carry,
// so that a proxy's or a broken server's answer is refused, naming what came
// back, instead of being taken for a group with no name and no shards.
type answerCheck struct {
	what     string   // "group", for messages
	required []string // fields that must be present and not null
	// names: field → the value asked for (the path's streamPrefix and
	// consumerGroup); the answer must be about that object.
	names []nameField
	// list, when set, is a required array field each element of which must
	// pass each (a listing's groups or migrations).
	list string
	each *answerCheck
}

type nameField struct{ field, want string }

// groupAnswer is the check of a GroupResponse for group g of prefix p.
func groupAnswer(p, g string) *answerCheck {
	return &answerCheck{what: "group", required: []string{"streamPrefix", "consumerGroup", "shardCount", "metadataVersion"},
		names: []nameField{{"streamPrefix", p}, {"consumerGroup", g}}}
}

// migrationAnswer is the check of a Migration (CONTRACT §4: its six fields;
// createdAt and updatedAt are not required, a noop's are not documented).
// reshardingID, when set, is the migration asked for.
func migrationAnswer(reshardingID string) *answerCheck {
	chk := &answerCheck{what: "migration", required: []string{"reshardingId", "fromShardCount", "toShardCount", "state"}}
	if reshardingID != "" {
		chk.names = []nameField{{"reshardingId", reshardingID}}
	}
	return chk
}

// streamScaleAnswer is the check of a stream scale's 202 for prefix p.
func streamScaleAnswer(p string) *answerCheck {
	return &answerCheck{what: "stream scale answer", required: []string{"streamPrefix", "targetShardCount", "affectedConsumerGroups", "migrations"},
		names: []nameField{{"streamPrefix", p}}}
}

// routingAnswer is the check of a ProducerRoutingResponse for group g of
// prefix p; shards is [] (not null) for shardCount 0.
func routingAnswer(p, g string) *answerCheck {
	return &answerCheck{what: "producer routing", required: []string{"streamPrefix", "consumerGroup", "metadataVersion", "shardCount", "shards"},
		names: []nameField{{"streamPrefix", p}, {"consumerGroup", g}}}
}

// UnexpectedAnswerError is a 2xx answer that decoded but is not the answer
// asked for: null, not an object, a required field missing, or another
// object's.
type UnexpectedAnswerError struct {
	Method, Path, RequestID string
	Status                  int
	Problem                 string // what is wrong, naming what came back
	Body                    string // an excerpt of the body
}

func (e *UnexpectedAnswerError) Error() string {
	return fmt.Sprintf("%s %s: the %d answer (request id %s) is not the answer asked for: %s; body: %s. A coordinator that "+
		"follows its API contract never sends it: check what answers at the endpoint (a proxy, a gateway or another service)",
		e.Method, e.Path, e.Status, e.RequestID, e.Problem, e.Body)
}

// problem returns what is wrong with body for chk, or "".
func (chk *answerCheck) problem(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if bytes.Equal(trimmed, []byte("null")) {
		return fmt.Sprintf("the body is JSON null, not a %s", chk.what)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil || fields == nil {
		return fmt.Sprintf("the body is not a JSON object, so not a %s", chk.what)
	}
	var missing []string
	for _, name := range chk.required {
		if v, ok := fields[name]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("the %s lacks %s (absent or null)", chk.what, strings.Join(missing, ", "))
	}
	var other []string
	for _, n := range chk.names {
		var got string
		if json.Unmarshal(fields[n.field], &got) != nil || got != n.want {
			other = append(other, fmt.Sprintf("%s %s where %q was asked for", n.field, fields[n.field], n.want))
		}
	}
	if len(other) > 0 {
		return fmt.Sprintf("it is about another %s: %s", chk.what, strings.Join(other, ", "))
	}
	if chk.list != "" {
		var items []json.RawMessage
		if err := json.Unmarshal(fields[chk.list], &items); err != nil {
			return fmt.Sprintf("the %s's %s is not an array", chk.what, chk.list)
		}
		for i, item := range items {
			if p := chk.each.problem(item); p != "" {
				return fmt.Sprintf("%s[%d] of the %s: %s", chk.list, i, chk.what, p)
			}
		}
	}
	return ""
}

// groupsListing is the check of GET /monitoring/groups: {groups: [GroupResponse]}.
func groupsListing() *answerCheck {
	return &answerCheck{what: "groups listing", required: []string{"groups"}, list: "groups",
		each: &answerCheck{what: "group", required: groupAnswer("", "").required}}
}

// migrationHistory is the check of a group's migration history:
// {migrations: [Migration], activeReshardingId: string|null}.
func migrationHistory() *answerCheck {
	return &answerCheck{what: "migration history", required: []string{"migrations"}, list: "migrations", each: migrationAnswer("")}
}

// checkAnswer refuses a decoded 2xx body that cl.expect does not accept. For
// a mutation that is never re-sent blindly, such an answer is ambiguous
// (applied, most likely, but what it made is unknown), as an undecodable one
// is; for a read it is an UnexpectedAnswerError.
func (c *Client) checkAnswer(cl *call, st *attemptState, status int, body []byte) error {
	if cl.expect == nil {
		return nil
	}
	p := cl.expect.problem(body)
	if p == "" {
		return nil
	}
	red := c.redactFor(cl)
	err := &UnexpectedAnswerError{Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID, Status: status, Problem: red.text(p), Body: red.excerpt(body)}
	if cl.resend == resendNever && cl.mutation() {
		return c.unreadableAnswer(cl, st, status, err)
	}
	return err
}
