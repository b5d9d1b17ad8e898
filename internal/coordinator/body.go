package coordinator

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// maxBodyBytes caps what a request may send; the real server has no
// documented cap, this only protects the test process.
const maxBodyBytes = 8 << 20

// Hibernate Validator's default constraint messages.
const (
	msgNotBlank = "must not be blank"
)

func msgMin(n int64) string { return "must be greater than or equal to " + strconv.FormatInt(n, 10) }

// bodyOutcome says whether a DTO was bound. On bodyRejected the framework
// error (400/415) has already been written.
type bodyOutcome int

const (
	bodyOK bodyOutcome = iota
	bodyAbsent
	bodyRejected
)

// readJSONObject follows Spring MVC's @RequestBody resolution with the
// Jackson converter:
//   - application/json or application/*+json: an empty body is "missing"
//     (framework 400 when required); otherwise it must parse as a JSON object.
//   - any other (or no) content type: the body is not bound (nor seen by the
//     audit). For POST/PUT/PATCH it is a 415 unless there is neither a
//     content type nor a body; for other methods it counts as missing.
//
// On bodyRejected the framework error has been written.
func (x *exchange) readJSONObject(required bool) (map[string]any, bodyOutcome) {
	ct := x.r.Header.Get("Content-Type")
	isJSON, parseable := false, true
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			parseable = false
		} else {
			isJSON = mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
		}
	}
	raw, err := io.ReadAll(io.LimitReader(x.r.Body, maxBodyBytes))
	if err != nil {
		x.frameworkError(http.StatusBadRequest)
		return nil, bodyRejected
	}
	if !isJSON {
		writable := x.r.Method == http.MethodPost || x.r.Method == http.MethodPut || x.r.Method == http.MethodPatch
		if parseable && (!writable || (ct == "" && len(raw) == 0)) {
			if required {
				x.frameworkError(http.StatusBadRequest)
				return nil, bodyRejected
			}
			return nil, bodyAbsent
		}
		x.frameworkError(http.StatusUnsupportedMediaType)
		return nil, bodyRejected
	}
	x.body = raw
	if len(raw) == 0 {
		if required {
			x.frameworkError(http.StatusBadRequest)
			return nil, bodyRejected
		}
		return nil, bodyAbsent
	}
	// Jackson ignores trailing content (FAIL_ON_TRAILING_TOKENS is off), so
	// only the first value is decoded.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		x.frameworkError(http.StatusBadRequest)
		return nil, bodyRejected
	}
	if v == nil {
		if required {
			x.frameworkError(http.StatusBadRequest)
			return nil, bodyRejected
		}
		return nil, bodyAbsent
	}
	obj, ok := v.(map[string]any)
	if !ok {
		x.frameworkError(http.StatusBadRequest)
		return nil, bodyRejected
	}
	return obj, bodyOK
}

// requiredBody binds a required @RequestBody object; false means the
// framework error has been written.
func (x *exchange) requiredBody() (*fields, bool) {
	obj, outcome := x.readJSONObject(true)
	if outcome != bodyOK {
		return nil, false
	}
	return &fields{obj: obj}, true
}

// bound reports whether every field bound; otherwise it answers the
// framework 400 that a failed Jackson deserialization produces.
func (x *exchange) bound(f *fields) bool {
	if f.unreadable {
		x.frameworkError(http.StatusBadRequest)
		return false
	}
	return true
}

// fields reads DTO fields with Jackson's default coercions. Any field that
// cannot be bound marks the whole body as unreadable (a framework 400),
// because Jackson fails the entire deserialization.
type fields struct {
	obj        map[string]any
	unreadable bool
	root       *fields // nested objects report failures to the body's root
}

func (f *fields) markUnreadable() {
	if f.root != nil {
		f.root.markUnreadable()
		return
	}
	f.unreadable = true
}

// object reads a nested object; absent or null gives nil.
func (f *fields) object(name string) *fields {
	v, ok := f.obj[name]
	if !ok || v == nil {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		f.markUnreadable()
		return nil
	}
	return &fields{obj: obj, root: f.rootOrSelf()}
}

// list reads an array of objects; absent or null gives an empty list.
func (f *fields) list(name string) []*fields {
	v, ok := f.obj[name]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		f.markUnreadable()
		return nil
	}
	out := make([]*fields, 0, len(arr))
	for _, item := range arr {
		obj, ok := item.(map[string]any)
		if !ok {
			f.markUnreadable()
			return nil
		}
		out = append(out, &fields{obj: obj, root: f.rootOrSelf()})
	}
	return out
}

func (f *fields) rootOrSelf() *fields {
	if f.root != nil {
		return f.root
	}
	return f
}

// str reads a String: scalars coerce to text, objects and arrays do not.
// Absent and null both give "" (blank for @NotBlank).
func (f *fields) str(name string) string {
	s, _ := f.optStr(name)
	return s
}

func (f *fields) optStr(name string) (string, bool) {
	v, ok := f.obj[name]
	if !ok || v == nil {
		return "", false
	}
	s, ok := scalarText(v)
	if !ok {
		f.markUnreadable()
	}
	return s, ok
}

func scalarText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// optInt reads a nullable Int/Long: absent or null gives nil. Jackson
// accepts integral numbers, truncates floats (ACCEPT_FLOAT_AS_INT) and
// parses numeric strings; anything else, or a value out of range, fails.
func (f *fields) optInt(name string, bits int) *int64 {
	v, ok := f.obj[name]
	if !ok || v == nil {
		return nil
	}
	n, ok := coerceInt(v, bits)
	if !ok {
		f.markUnreadable()
		return nil
	}
	return &n
}

// reqInt reads a non-null Kotlin Int/Long without a default: absent or null
// fails deserialization (MissingKotlinParameterException).
func (f *fields) reqInt(name string, bits int) int64 {
	p := f.optInt(name, bits)
	if p == nil {
		f.markUnreadable()
		return 0
	}
	return *p
}

func coerceInt(v any, bits int) (int64, bool) {
	var text string
	switch t := v.(type) {
	case json.Number:
		text = t.String()
	case string:
		text = strings.TrimSpace(t)
	default:
		return 0, false
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if bits == 64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, n >= lo && n <= hi
	}
	if _, isNum := v.(json.Number); !isNum {
		return 0, false // Jackson parses numeric strings as integers only
	}
	fl, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(fl) || fl < float64(lo) || fl > float64(hi) {
		return 0, false
	}
	return int64(fl), true
}

// boolean reads a Boolean with a default: true/false, "true"/"false" and
// integers (0 is false) bind; absent or null gives the default.
func (f *fields) boolean(name string, def bool) bool {
	v, ok := f.obj[name]
	if !ok || v == nil {
		return def
	}
	switch t := v.(type) {
	case bool:
		return t
	case string:
		switch strings.TrimSpace(t) {
		case "true":
			return true
		case "false":
			return false
		}
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return n != 0
		}
	}
	f.markUnreadable()
	return def
}

// anyScalarOrNull accepts a field that is bound but ignored (deprecatedAfter:
// String?): objects and arrays still fail Jackson.
func (f *fields) anyScalarOrNull(name string) {
	if v, ok := f.obj[name]; ok && v != nil {
		if _, ok := scalarText(v); !ok {
			f.markUnreadable()
		}
	}
}

// violations collects bean-validation failures as "<field>: <message>".
type violations []string

func (v *violations) notBlank(field, value string) {
	if blank.Body(value) {
		*v = append(*v, field+": "+msgNotBlank)
	}
}

func (v *violations) min(field string, value *int64, minimum int64) {
	if value != nil && *value < minimum {
		*v = append(*v, field+": "+msgMin(minimum))
	}
}

// err joins the failures; the server gives no order guarantee, sorting
// keeps ours deterministic.
func (v violations) err() *apiError {
	if len(v) == 0 {
		return nil
	}
	s := slices.Clone([]string(v))
	slices.Sort(s)
	return errorf(http.StatusBadRequest, CodeInvalidRequest, strings.Join(s, "; "))
}
