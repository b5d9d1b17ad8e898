package coordinator

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Role is a coordinator API role.
type Role string

// The five roles of the coordinator API (CONTRACT §2).
const (
	RoleRead    Role = "READ"
	RoleWrite   Role = "WRITE"
	RoleAdmin   Role = "ADMIN"
	RoleMonitor Role = "MONITOR"
	RoleMember  Role = "MEMBER"
)

// AllRoles lists every role, in the order the built-in admin holds them.
var AllRoles = []Role{RoleRead, RoleWrite, RoleAdmin, RoleMonitor, RoleMember}

// User is one configured API user.
type User struct {
	Username, Password string
	Roles              []Role
}

// grant is what a role permits; endpoints require a grant, not a role.
type grant int

const (
	grantRead grant = iota
	grantWrite
	grantMember
)

// roleGrants is the role → grant matrix of CONTRACT §2. ADMIN is a superset
// role; no endpoint requires it specifically.
var roleGrants = map[Role][]grant{
	RoleRead:    {grantRead},
	RoleMonitor: {grantRead},
	RoleWrite:   {grantWrite, grantRead},
	RoleAdmin:   {grantRead, grantWrite, grantMember},
	RoleMember:  {grantMember},
}

// principal is an authenticated caller. Roles come from the user record for
// Basic and from inside the token for Bearer.
type principal struct {
	name  string
	roles []Role
}

func (p *principal) has(g grant) bool {
	for _, r := range p.roles {
		if slices.Contains(roleGrants[r], g) {
			return true
		}
	}
	return false
}

func (p *principal) roleNames() []string {
	out := make([]string, 0, len(p.roles))
	for _, r := range p.roles {
		out = append(out, string(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func effectiveUsers(configured []User, adminPassword string) []User {
	if len(configured) == 0 {
		return []User{{Username: defaultAdminUsername, Password: adminPassword, Roles: append([]Role(nil), AllRoles...)}}
	}
	out := make([]User, len(configured))
	for i, u := range configured {
		out[i] = User{Username: u.Username, Password: u.Password, Roles: append([]Role(nil), u.Roles...)}
	}
	return out
}

// deriveTokenSecret mirrors the server: a blank secret is derived from the
// admin credentials, so rotating the admin password invalidates all tokens.
// The exact derivation is internal to each server; only this one verifies
// the tokens it issues.
func deriveTokenSecret(secret, adminPassword string) []byte {
	if strings.TrimSpace(secret) != "" {
		return []byte(secret)
	}
	sum := sha256.Sum256([]byte(defaultAdminUsername + ":" + adminPassword))
	return sum[:]
}

// authenticate resolves an Authorization header; ok=false means 401.
func (c *Coordinator) authenticate(header string) (*principal, bool) {
	scheme, cred, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found {
		return nil, false
	}
	cred = strings.TrimSpace(cred)
	switch strings.ToLower(scheme) {
	case "basic":
		return c.authenticateBasic(cred)
	case "bearer":
		return c.verifyToken(cred)
	}
	return nil, false
}

func (c *Coordinator) authenticateBasic(cred string) (*principal, bool) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		// Java's basic decoder accepts missing padding.
		if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return nil, false
		}
	}
	user, pass, found := strings.Cut(string(raw), ":")
	if !found {
		return nil, false
	}
	return c.checkPassword(user, pass)
}

func (c *Coordinator) checkPassword(user, pass string) (*principal, bool) {
	for _, u := range c.users {
		if u.Username == user && subtle.ConstantTimeCompare([]byte(u.Password), []byte(pass)) == 1 {
			return &principal{name: u.Username, roles: append([]Role(nil), u.Roles...)}, true
		}
	}
	return nil, false
}

// issueToken builds b64url(payload) + "." + b64url(HMAC-SHA256(secret,
// b64url(payload))) with payload "v1\n<user>\n<expEpochSeconds>\n<ROLE,ROLE>".
func (c *Coordinator) issueToken(p *principal, now time.Time) (token string, expiresAt time.Time) {
	expiresAt = now.Add(c.opts.TokenTTL).Truncate(time.Second)
	payload := "v1\n" + p.name + "\n" + strconv.FormatInt(expiresAt.Unix(), 10) + "\n" + strings.Join(p.roleNames(), ",")
	encoded := base64.RawURLEncoding.EncodeToString([]byte(payload))
	return encoded + "." + base64.RawURLEncoding.EncodeToString(c.sign(encoded)), expiresAt
}

func (c *Coordinator) sign(encodedPayload string) []byte {
	mac := hmac.New(sha256.New, c.tokenSecret)
	mac.Write([]byte(encodedPayload))
	return mac.Sum(nil)
}

// verifyToken checks signature and expiry. The user record is not consulted:
// roles are fixed in the token and a token cannot be revoked.
func (c *Coordinator) verifyToken(token string) (*principal, bool) {
	encoded, sig, found := strings.Cut(token, ".")
	if !found {
		return nil, false
	}
	gotSig, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(gotSig, c.sign(encoded)) {
		return nil, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(string(payload), "\n")
	if len(parts) != 4 || parts[0] != "v1" || parts[1] == "" {
		return nil, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || c.now().Unix() >= exp {
		return nil, false
	}
	p := &principal{name: parts[1]}
	for _, r := range strings.Split(parts[3], ",") {
		if _, known := roleGrants[Role(r)]; known {
			p.roles = append(p.roles, Role(r))
		}
	}
	return p, true
}
