package provider

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
)

// The credential rule is documented in templates/index.md.tmpl
// ("Authentication"): the block decides the kind of credentials and the
// environment can only complete that kind. No credential diagnostic has an
// attribute path: Terraform prints that line, which may hold the secret.

var credentialNames = []string{"username", "password", "token", "login"}

type credentials struct {
	username, password, token string
	login                     bool
	from                      map[string]string
	kind                      string
	ignored                   []string
}

const (
	kindBlockToken    = "token"
	kindBlockPassword = "password"
	kindEnvironment   = "environment"
)

func resolveCredentials(m providerModel, s *settingSource) credentials {
	values := map[string]attr.Value{"username": m.Username, "password": m.Password, "token": m.Token, "login": m.Login}
	inBlock := func(name string) bool { return !values[name].IsNull() } // unknown too: it is reported below
	c := credentials{from: map[string]string{}}
	var fromEnv []string
	switch {
	case inBlock("token"):
		c.kind = kindBlockToken
	case inBlock("username") || inBlock("password") || inBlock("login"):
		c.kind = kindBlockPassword
		fromEnv = []string{"username", "password", "login"}
	default:
		c.kind = kindEnvironment
		fromEnv = credentialNames
	}
	got := map[string]string{}
	for _, name := range credentialNames {
		switch {
		case values[name].IsUnknown():
			s.lookup(name, values[name]) // reports it
		case inBlock(name):
			if got[name], _ = literal(values[name]); got[name] != "" {
				c.from[name] = "`" + name + "` in the provider block"
			}
		case s.getenv(envName(name)) != "":
			if !slices.Contains(fromEnv, name) {
				c.ignored = append(c.ignored, envName(name))
				continue
			}
			got[name] = s.getenv(envName(name))
			c.from[name] = envName(name)
		}
	}
	c.username, c.password, c.token = got["username"], got["password"], got["token"]
	if v := got["login"]; v != "" {
		c.login = s.parseBool("login", v)
	}
	if !c.login {
		delete(c.from, "login") // login = false is no credential
	}
	return c
}

func (c credentials) source() string {
	if c.kind == kindEnvironment {
		return "environment"
	}
	for _, f := range c.from {
		if !strings.HasSuffix(f, "in the provider block") {
			return "provider block and environment"
		}
	}
	return "provider block"
}

func (c credentials) ignoredNote() string {
	if len(c.ignored) == 0 {
		return ""
	}
	why := "the provider block sets token, so it takes no credentials from the environment"
	if c.kind == kindBlockPassword {
		why = "the provider block sets username, password or login, so the environment can complete those but not add a token"
	}
	return fmt.Sprintf(" %s ignored: %s (see Authentication on the provider's documentation page).",
		joinNames(c.ignored, " is", " are"), why)
}

func joinNames(names []string, one, many string) string {
	if len(names) == 1 {
		return names[0] + one
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + many
}

// check names where each value came from, never a value.
func (c credentials) check(diags *diag.Diagnostics) {
	if c.token != "" {
		var with []string
		for _, name := range []string{"username", "password", "login"} {
			if _, ok := c.from[name]; ok {
				with = append(with, name)
			}
		}
		if len(with) > 0 {
			c.conflict(diags, with)
			return
		}
	}
	switch {
	case c.login && (c.username == "" || c.password == ""):
		diags.AddError("Missing credentials for login", fmt.Sprintf(
			"login = true (%s) exchanges a username and password for a token, but %s. Set username and password (or %s and %s).%s",
			c.from["login"], c.missing(), envName("username"), envName("password"), c.ignoredNote()))
	case c.password != "" && c.username == "":
		diags.AddError("Missing username", fmt.Sprintf("A password is set (%s) but no username. Set username or %s.%s",
			c.from["password"], envName("username"), c.ignoredNote()))
	case c.username != "" && c.password == "":
		diags.AddError("Missing password", fmt.Sprintf("A username is set (%s) but no password. Set password or %s.%s",
			c.from["username"], envName("password"), c.ignoredNote()))
	case c.username == "" && c.token == "":
		diags.AddWarning("No coordinator credentials",
			"Neither username/password nor token is set: every /coord/v1 call except heartbeat and login will be rejected with 401."+
				c.ignoredNote())
	}
}

func (c credentials) conflict(diags *diag.Diagnostics, with []string) {
	if c.kind == kindBlockToken {
		for i, name := range with {
			with[i] = "`" + name + "`"
			if name == "login" {
				with[i] = "`login = true`"
			}
		}
		diags.AddError("Conflicting credentials", fmt.Sprintf(
			"The provider block sets both token and %s. A block that sets token uses it alone; use either token, or "+
				"username and password (optionally with login = true), not both.", joinNames(with, "", "")))
		return
	}
	for i, name := range with {
		with[i] = envName(name)
		if name == "login" {
			with[i] += "=true"
		}
	}
	diags.AddError("Conflicting credentials", fmt.Sprintf(
		"The environment sets both %s and %s, and the provider block sets none of username, password, token or login, so "+
			"all of them would apply. Unset the token or the others; or set the credentials in the provider block, whose choice "+
			"the environment cannot override (see Authentication on the provider's documentation page).",
		envName("token"), joinNames(with, "", "")))
}

func (c credentials) missing() string {
	switch {
	case c.username == "" && c.password == "":
		return "neither is set"
	case c.username == "":
		return "no username is set"
	}
	return "no password is set"
}

// ValidateConfig checks only what the block alone decides; the environment is
// read when configuring.
func (p *coordinatorProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Token.IsNull() {
		return
	}
	for _, v := range []attr.Value{m.Username, m.Password, m.Token, m.Login} {
		if v.IsUnknown() {
			return // decided when configuring, once the values are known
		}
	}
	s := &settingSource{getenv: func(string) string { return "" }}
	resolveCredentials(m, s).check(&s.diags)
	for _, d := range s.diags.Errors() {
		if d.Summary() == "Conflicting credentials" {
			resp.Diagnostics.Append(d)
		}
	}
}

var _ provider.ProviderWithValidateConfig = &coordinatorProvider{}

// credentialsLog logs names only, never values.
func credentialsLog(m providerModel, getenv func(string) string) map[string]any {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := resolveCredentials(m, &settingSource{getenv: getenv})
	fields := map[string]any{"credentials_from": c.source()}
	if len(c.ignored) > 0 {
		fields["ignored_credential_variables"] = strings.Join(c.ignored, ",")
	}
	return fields
}
