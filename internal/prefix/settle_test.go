package prefix

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// One scripted send or read-back of a settle table case.
type sent struct {
	res string
	err error
}

type readBack struct {
	res     string
	applied bool
	err     error
}

var (
	errLost     = &client.AmbiguousError{Kind: client.AmbiguousNoAnswer, Method: "DELETE", Path: "/g", RequestID: "rid", Err: errors.New("connection reset")}
	errConflict = &client.APIError{HTTPStatus: 409, ErrorCode: client.CodeGroupAlreadyExists, Message: "exists"}
	errRefused  = &client.APIError{HTTPStatus: 422, ErrorCode: client.CodeRollbackNotAllowed, Message: "not ACTIVE"}
	errRead     = &client.APIError{HTTPStatus: 403, ErrorCode: "FORBIDDEN", Message: "Access denied"}
	errNotSent  = &client.NotSentError{Method: "DELETE", Path: "/g", RequestID: "rid", Err: context.Canceled}
	errSomeone  = errors.New("the group was created by someone else")
)

func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name            string
		idempotent      bool
		landedMeanwhile func(error) bool
		sends           []sent
		readBacks       []readBack
		// want
		res         string
		err         error // errors.Is
		reason      Unsettled
		sendsDone   int
		readsDone   int
		settledBy   bool
		errSays     []string
		isAmbiguous bool
	}{
		{name: "answered", sends: []sent{{res: "ok"}}, res: "ok", sendsDone: 1},
		{name: "the coordinator's own error passes through", sends: []sent{{err: errRefused}}, err: errRefused, sendsDone: 1},
		{name: "not sent at all passes through", sends: []sent{{err: errNotSent}}, err: errNotSent, sendsDone: 1},
		{
			name: "applied on the first read-back", sends: []sent{{err: errLost}}, readBacks: []readBack{{res: "read", applied: true}},
			res: "read", sendsDone: 1, readsDone: 1, settledBy: true,
		},
		{
			name:  "not applied, then applied",
			sends: []sent{{err: errLost}, {err: errLost}}, readBacks: []readBack{{}, {res: "read", applied: true}},
			res: "read", sendsDone: 2, readsDone: 2, settledBy: true,
		},
		{
			name: "not applied, the re-send answered", sends: []sent{{err: errLost}, {res: "resent"}}, readBacks: []readBack{{}},
			res: "resent", sendsDone: 2, readsDone: 1,
		},
		{
			name: "not applied, the re-send refused", sends: []sent{{err: errLost}, {err: errRefused}}, readBacks: []readBack{{}},
			err: errRefused, sendsDone: 2, readsDone: 1,
		},
		{
			name:  "limit reached",
			sends: []sent{{err: errLost}, {err: errLost}, {err: errLost}, {res: "never"}}, readBacks: []readBack{{}, {}, {}, {}},
			reason: LimitReached, err: errLost, sendsDone: MaxResends + 1, readsDone: MaxResends + 1, isAmbiguous: true,
			errSays: []string{"was sent 3 times and each answer was lost", "reading it back showed it had not happened", "2 re-sends is the limit"},
		},
		{
			name: "read-back failed, not idempotent", sends: []sent{{err: errLost}, {res: "never"}}, readBacks: []readBack{{err: errRead}},
			reason: ReadBackFailed, err: errLost, sendsDone: 1, readsDone: 1, isAmbiguous: true,
			errSays: []string{"its answer was lost", "reading it back failed", "Access denied", "whether it happened is unknown", "it was not sent again"},
		},
		{
			name: "read-back failed, idempotent", idempotent: true, sends: []sent{{err: errLost}, {res: "resent"}}, readBacks: []readBack{{err: errRead}},
			res: "resent", sendsDone: 2, readsDone: 1,
		},
		{
			name: "read-back failed, idempotent, up to the limit", idempotent: true,
			sends:     []sent{{err: errLost}, {err: errLost}, {err: errLost}, {res: "never"}},
			readBacks: []readBack{{err: errRead}, {err: errRead}, {err: errRead}},
			reason:    LimitReached, err: errLost, sendsDone: 3, readsDone: 3, isAmbiguous: true,
			errSays: []string{"had not happened or failed", "Access denied"},
		},
		{
			name: "not sent again", sends: []sent{{err: errLost}, {err: errNotSent}}, readBacks: []readBack{{}},
			reason: NotSentAgain, err: errNotSent, sendsDone: 1, readsDone: 1,
			errSays: []string{"was sent and its answer was lost", "reading it back showed it had not happened", "nothing more was sent", "was not sent"},
		},
		{
			name: "not sent again after an idempotent read-back failed", idempotent: true, sends: []sent{{err: errLost}, {err: errNotSent}},
			readBacks: []readBack{{err: errRead}}, reason: NotSentAgain, err: errNotSent, sendsDone: 1, readsDone: 1,
			errSays: []string{"reading it back failed", "nothing more was sent"},
		},
		{
			name: "the read-back decided the outcome", sends: []sent{{err: errLost}, {res: "never"}}, readBacks: []readBack{{err: Decided(errSomeone)}},
			err: errSomeone, sendsDone: 1, readsDone: 1,
		},
		{
			name: "a first send's conflict is the outcome", landedMeanwhile: isConflict,
			sends: []sent{{err: errConflict}}, err: errConflict, sendsDone: 1,
		},
		{
			name: "a re-send's conflict is read back", landedMeanwhile: isConflict,
			sends: []sent{{err: errLost}, {err: errConflict}}, readBacks: []readBack{{}, {res: "read", applied: true}},
			res: "read", sendsDone: 2, readsDone: 2, settledBy: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sends, reads int
			res, j, err := Settle(context.Background(), Mutation[string]{
				What: "delete of group \"svc\"", RequestID: "rid", Idempotent: tc.idempotent, LandedMeanwhile: tc.landedMeanwhile,
				Send: func(context.Context) (string, error) {
					s := tc.sends[sends]
					sends++
					return s.res, s.err
				},
				ReadBack: func(context.Context) (string, bool, error) {
					r := tc.readBacks[reads]
					reads++
					return r.res, r.applied, r.err
				},
			})
			if res != tc.res {
				t.Errorf("result %q, want %q", res, tc.res)
			}
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			var un *UnsettledError
			if got := errors.As(err, &un); got != (tc.reason != 0) || got && un.Reason != tc.reason {
				t.Errorf("unsettled %+v, want reason %d", un, tc.reason)
			}
			if client.IsAmbiguous(err) != tc.isAmbiguous {
				t.Errorf("IsAmbiguous(%v) = %t", err, !tc.isAmbiguous)
			}
			if tc.reason == NotSentAgain && !client.IsNotSent(err) {
				t.Errorf("IsNotSent(%v) is false", err)
			}
			for _, s := range tc.errSays {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error does not say %q: %v", s, err)
				}
			}
			if tc.reason != 0 && !strings.Contains(err.Error(), `delete of group "svc" (request id rid)`) {
				t.Errorf("the error does not say what and its request id: %v", err)
			}
			if j.Sends != tc.sendsDone || sends < tc.sendsDone || reads != tc.readsDone {
				t.Errorf("journal %d sends (Send called %d times), %d read-backs; want %d sends, %d read-backs", j.Sends, sends, reads, tc.sendsDone, tc.readsDone)
			}
			if (j.SettledBy != nil) != tc.settledBy {
				t.Errorf("settled by %v, want settled by read-back: %t", j.SettledBy, tc.settledBy)
			}
		})
	}
}

func isConflict(err error) bool { return client.IsConflict(err, client.CodeGroupAlreadyExists) }

// A create's own classifier of lost answers replaces client.IsAmbiguous.
func TestSettleLostClassifier(t *testing.T) {
	bare500 := &client.APIError{HTTPStatus: 500}
	sends := 0
	res, j, err := Settle(context.Background(), Mutation[string]{
		What: "create", RequestID: "rid",
		Lost: func(err error) bool { return client.IsAmbiguous(err) || errors.Is(err, bare500) },
		Send: func(context.Context) (string, error) {
			sends++
			return "", bare500
		},
		ReadBack: func(context.Context) (string, bool, error) { return "read", true, nil },
	})
	if err != nil || res != "read" || j.SettledBy != bare500 || sends != 1 {
		t.Fatalf("got %q %+v %v after %d sends; want the read-back's result", res, j, err, sends)
	}
}
