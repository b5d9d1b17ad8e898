package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// EnvPrefix prefixes every provider setting's environment fallback.
const EnvPrefix = "REDIS_STREAM_COORDINATOR_"

func envName(attribute string) string { return EnvPrefix + strings.ToUpper(attribute) }

// settingSource: the configuration wins over the environment; an unknown
// value is an error.
type settingSource struct {
	getenv func(string) string
	diags  diag.Diagnostics
}

func (s *settingSource) lookup(name string, v attr.Value) (string, bool) {
	if v.IsUnknown() {
		s.diags.AddAttributeError(path.Root(name), "Unknown provider setting "+name,
			fmt.Sprintf("The provider cannot be configured with a value that is only known after apply. Set %q to a literal, "+
				"a variable, or the %s environment variable, or apply the resources it depends on first (-target).", name, envName(name)))
		return "", false
	}
	if val, ok := literal(v); ok {
		return val, true
	}
	if e := s.getenv(envName(name)); e != "" {
		return e, true
	}
	return "", false
}

// literal is the value the provider block sets; not ok when it is null or unknown.
func literal(v attr.Value) (string, bool) {
	if v.IsNull() || v.IsUnknown() {
		return "", false
	}
	switch tv := v.(type) {
	case types.String:
		return tv.ValueString(), true
	case types.Bool:
		return strconv.FormatBool(tv.ValueBool()), true
	case types.Int64:
		return strconv.FormatInt(tv.ValueInt64(), 10), true
	}
	return "", false
}

func (s *settingSource) str(name string, v attr.Value) string {
	val, _ := s.lookup(name, v)
	return val
}

func (s *settingSource) boolean(name string, v attr.Value) bool {
	val, ok := s.lookup(name, v)
	if !ok {
		return false
	}
	return s.parseBool(name, val)
}

// parseBool: only the environment can hold a value that is no boolean.
func (s *settingSource) parseBool(name, val string) bool {
	b, err := strconv.ParseBool(val)
	if err != nil {
		s.diags.AddAttributeError(path.Root(name), "Invalid "+name, fmt.Sprintf("%s=%q is not a boolean: use true or false.", envName(name), val))
	}
	return b
}

func (s *settingSource) duration(name string, v attr.Value, def time.Duration) time.Duration {
	val, ok := s.lookup(name, v)
	if !ok {
		return def
	}
	d, err := parsePositiveDuration(val)
	if err != nil {
		s.diags.AddAttributeError(path.Root(name), "Invalid "+name, fmt.Sprintf("%q: %s", val, err))
	}
	return d
}

// unknownSettings names the settings in the model's order, by their tfsdk tags.
func unknownSettings(m providerModel) []string {
	var unknown []string
	v := reflect.ValueOf(m)
	for i := range v.NumField() {
		if av, ok := v.Field(i).Interface().(attr.Value); ok && av.IsUnknown() {
			unknown = append(unknown, v.Type().Field(i).Tag.Get("tfsdk"))
		}
	}
	return unknown
}

func resolveConfig(m providerModel, getenv func(string) string) (client.Config, diag.Diagnostics) {
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &settingSource{getenv: getenv}
	cfg := client.Config{
		Endpoint:           s.str("endpoint", m.Endpoint),
		RequestedBy:        s.str("requested_by", m.RequestedBy),
		RequestIDPrefix:    s.str("request_id_prefix", m.RequestIDPrefix),
		RunID:              s.str("run_id", m.RunID),
		DefaultReason:      s.str("default_reason", m.DefaultReason),
		RetryWaitMin:       s.duration("retry_wait_min", m.RetryWaitMin, client.DefaultRetryWaitMin),
		RetryWaitMax:       s.duration("retry_wait_max", m.RetryWaitMax, client.DefaultRetryWaitMax),
		RequestTimeout:     s.duration("request_timeout", m.RequestTimeout, client.DefaultRequestTimeout),
		ReadTimeout:        s.duration("read_timeout", m.ReadTimeout, client.DefaultReadTimeout),
		CACertPEM:          s.str("ca_cert_pem", m.CACertPEM),
		InsecureSkipVerify: s.boolean("insecure_skip_verify", m.InsecureSkipVerify),
		MaxRetries:         client.DefaultMaxRetries,
		Getenv:             getenv,
	}
	if v, ok := s.lookup("max_retries", m.MaxRetries); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.diags.AddAttributeError(path.Root("max_retries"), "Invalid max_retries",
				fmt.Sprintf("%q is not a whole number of retries of 0 or more.", v))
		}
		cfg.MaxRetries = n
	}
	creds := resolveCredentials(m, s)
	cfg.Username, cfg.Password, cfg.Token, cfg.Login = creds.username, creds.password, creds.token, creds.login
	if s.diags.HasError() {
		return cfg, s.diags
	}

	from := "the provider block's endpoint"
	if m.Endpoint.IsNull() {
		from = envName("endpoint")
	}
	if cfg.Endpoint == "" {
		s.diags.AddAttributeError(path.Root("endpoint"), "Missing coordinator endpoint",
			"Set endpoint in the provider block or the "+envName("endpoint")+" environment variable, e.g. https://coordinator.internal:8080.")
	} else {
		s.diags.Append(endpointErrors(cfg.Endpoint, from)...)
	}
	creds.check(&s.diags)
	if cfg.CACertPEM != "" && cfg.InsecureSkipVerify {
		s.diags.AddAttributeError(path.Root("insecure_skip_verify"), "Conflicting TLS settings",
			"ca_cert_pem and insecure_skip_verify cannot both be set: trust the coordinator's CA instead of disabling verification.")
	}
	if cfg.RetryWaitMin > cfg.RetryWaitMax {
		s.diags.AddAttributeError(path.Root("retry_wait_min"), "Invalid retry waits",
			fmt.Sprintf("retry_wait_min (%s) is longer than retry_wait_max (%s).", cfg.RetryWaitMin, cfg.RetryWaitMax))
	}
	for _, part := range [][2]string{{"request_id_prefix", cfg.RequestIDPrefix}, {"run_id", cfg.RunID}} {
		if name, v := part[0], part[1]; v != "" && !requestIDPart.MatchString(v) {
			s.diags.AddAttributeError(path.Root(name), "Invalid "+name, fmt.Sprintf("%q %s.", v, requestIDPartRule))
		}
	}
	if cfg.InsecureSkipVerify {
		s.diags.AddAttributeWarning(path.Root("insecure_skip_verify"), "TLS verification is disabled",
			"The coordinator's certificate is not verified, so credentials and tokens can be intercepted. Use ca_cert_pem to trust a private CA instead.")
	}
	if w := plainHTTPWarning(cfg); w != "" {
		s.diags.AddAttributeWarning(path.Root("endpoint"), "Credentials sent in clear text", w)
	}
	return cfg, s.diags
}

// endpointErrors quotes the endpoint redacted. User info gets no attribute
// path: Terraform would print the source line, showing the password.
func endpointErrors(raw, from string) diag.Diagnostics {
	shown := client.RedactEndpoint(raw)
	if client.EndpointHasUserInfo(raw) {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Invalid coordinator endpoint",
			fmt.Sprintf("The endpoint (%s) contains user info; put credentials in username/password or token. "+
				"Without the user info it is %q. (The endpoint is not repeated here, as it would show the password.)", from, shown))}
	}
	var why string
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole string
		}
		why = fmt.Sprintf("%q is not a URL: %v", shown, err)
	case u.Scheme != "http" && u.Scheme != "https":
		why = fmt.Sprintf("%q must start with http:// or https://", shown)
	case u.Host == "":
		why = fmt.Sprintf("%q has no host", shown)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		why = fmt.Sprintf("%q must be a plain base URL without a query or fragment", shown)
	default:
		return nil
	}
	return diag.Diagnostics{diag.NewAttributeErrorDiagnostic(path.Root("endpoint"), "Invalid coordinator endpoint", why)}
}

func parsePositiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration; use a Go duration such as 500ms, 2s or 1m30s")
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be longer than zero")
	}
	return d, nil
}

var requestIDPart = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

const requestIDPartRule = "must be 1 to 64 letters, digits, '.', '_', ':' or '-', so that request ids stay one clean token in the audit log"

// Null and unknown pass; Configure checks environment values.
var requestIDPartValidator = stringvalidator.RegexMatches(requestIDPart, requestIDPartRule)

type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "a Go duration longer than zero"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := parsePositiveDuration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration", fmt.Sprintf("%q: %s", req.ConfigValue.ValueString(), err))
	}
}

type endpointValidator struct{}

func (endpointValidator) Description(context.Context) string {
	return "an http:// or https:// base URL"
}
func (v endpointValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (endpointValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	resp.Diagnostics.Append(endpointErrors(req.ConfigValue.ValueString(), "the provider block's endpoint")...)
}
