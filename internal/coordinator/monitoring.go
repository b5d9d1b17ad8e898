package coordinator

import (
	"net/http"
	"slices"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

type healthView struct {
	Status        string `json:"status"`
	CoordinatorID string `json:"coordinatorId"`
	Redis         string `json:"redis"`
	Loop          string `json:"loop"`
}

// health: the memory store with provisioning off never checks Redis, so it
// is NOT_CONFIGURED; with provisioning on the server checks Redis, which the
// in-memory key set stands in for, so it is UP. The status is UP (DEGRADED
// needs redis DOWN).
func (x *exchange) health() {
	redis := "NOT_CONFIGURED"
	if x.c.opts.StreamProvisioning {
		redis = "UP"
	}
	x.reply(http.StatusOK, healthView{Status: "UP", CoordinatorID: x.c.opts.CoordinatorID, Redis: redis, Loop: "UP"})
}

type sessionView struct {
	Authenticated bool     `json:"authenticated"`
	Username      string   `json:"username"`
	Roles         []string `json:"roles"`
}

// session: reaching it proves authentication, so authenticated is always
// true (Basic or Bearer).
func (x *exchange) session() {
	x.reply(http.StatusOK, sessionView{Authenticated: true, Username: x.principal.name, Roles: x.principal.roleNames()})
}

type versionView struct {
	Major     int     `json:"major"`
	Minor     int     `json:"minor"`
	Patch     int     `json:"patch"`
	Qualifier *string `json:"qualifier"`
	Version   string  `json:"version"`
}

type coordinationVersionView struct {
	Version               int               `json:"version"`
	Status                string            `json:"status"`
	IntroducedIn          versionView       `json:"introducedIn"`
	DeprecatedIn          *versionView      `json:"deprecatedIn"`
	MinimumSupportedUntil versionView       `json:"minimumSupportedUntil"`
	RemovedIn             *versionView      `json:"removedIn"`
	TimingDefaults        map[string]string `json:"timingDefaults"`
}

type compatibilityView struct {
	CurrentCoordinationVersion    int                       `json:"currentCoordinationVersion"`
	SupportedCoordinationVersions map[string]int            `json:"supportedCoordinationVersions"`
	CoordinationVersions          []coordinationVersionView `json:"coordinationVersions"`
}

// compatibility describes protocol v1. Its timing defaults are the
// protocol's own (3s/15s/60s), serialized as ISO-8601 durations the way
// Spring Boot's Jackson writes java.time.Duration.
func (x *exchange) compatibility() {
	x.reply(http.StatusOK, compatibilityView{
		CurrentCoordinationVersion:    coordinationProtocolVersion,
		SupportedCoordinationVersions: map[string]int{"min": 1, "max": 1},
		CoordinationVersions: []coordinationVersionView{{
			Version:               coordinationProtocolVersion,
			Status:                "ACTIVE",
			IntroducedIn:          versionView{Major: 0, Minor: 1, Patch: 0, Version: "0.1.0"},
			MinimumSupportedUntil: versionView{Major: 1, Minor: 0, Patch: 0, Version: "1.0.0"},
			TimingDefaults:        map[string]string{"heartbeatInterval": "PT3S", "memberLeaseTtl": "PT15S", "rebalanceTimeout": "PT1M"},
		}},
	})
}

func (x *exchange) listGroups() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	out := []groupView{}
	for _, g := range x.c.sortedGroups() {
		out = append(out, g.view())
	}
	if x.c.opts.Numbering.ReverseListing {
		slices.Reverse(out)
	}
	x.reply(http.StatusOK, map[string][]groupView{"groups": out})
}

func (x *exchange) members() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	out := []memberView{}
	for _, m := range g.sortedMembers() {
		out = append(out, x.c.memberView(m))
	}
	x.reply(http.StatusOK, map[string][]memberView{"members": out})
}

type assignmentsView struct {
	TargetAssignment    map[string][]shardID `json:"targetAssignment"`
	CurrentAssignments  map[string][]shardID `json:"currentAssignments"`
	RevokeProgress      map[string][]shardID `json:"revokeProgress"`
	InvariantViolations []string             `json:"invariantViolations"`
}

func (x *exchange) assignments() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	v := assignmentsView{
		TargetAssignment: map[string][]shardID{}, CurrentAssignments: map[string][]shardID{},
		RevokeProgress: map[string][]shardID{}, InvariantViolations: g.invariantViolations(),
	}
	for id, shards := range g.target {
		v.TargetAssignment[id] = shardIDs(shards)
	}
	for id, m := range g.members {
		v.CurrentAssignments[id] = shardIDs(m.current)
		if m.live() && len(m.revoking) > 0 {
			v.RevokeProgress[id] = shardIDs(m.revoking)
		}
	}
	x.reply(http.StatusOK, v)
}

type consumptionView struct {
	StreamPrefix    string  `json:"streamPrefix"`
	ConsumerGroup   string  `json:"consumerGroup"`
	MemberID        string  `json:"memberId"`
	MemberName      *string `json:"memberName"`
	MemberState     string  `json:"memberState"`
	Shard           shardID `json:"shard"`
	StreamKey       string  `json:"streamKey"`
	LastDeliveredID *string `json:"lastDeliveredId"`
	LastAckedID     *string `json:"lastAckedId"`
	PendingCount    int64   `json:"pendingCount"`
	UpdatedAt       *string `json:"updatedAt"`
}

// consumption lists the progress members reported, one row per member and
// shard. The shard carries no stream version.
func (x *exchange) consumption() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	out := []consumptionView{}
	for _, m := range g.sortedMembers() {
		progress := slices.Clone(m.progress)
		slices.SortFunc(progress, func(a, b shardProgress) int { return a.Shard.ShardIndex - b.Shard.ShardIndex })
		for _, p := range progress {
			out = append(out, consumptionView{
				StreamPrefix: g.prefix, ConsumerGroup: g.name, MemberID: m.id, MemberName: m.name, MemberState: m.state,
				Shard: p.Shard, StreamKey: routing.StreamKey(g.prefix, p.Shard.ShardIndex),
				LastDeliveredID: p.LastDeliveredID, LastAckedID: p.LastAckedID, PendingCount: p.PendingCount, UpdatedAt: p.UpdatedAt,
			})
		}
	}
	x.reply(http.StatusOK, map[string][]consumptionView{"progress": out})
}

type migrationsView struct {
	Migrations         []migrationView `json:"migrations"`
	ActiveReshardingID *string         `json:"activeReshardingId"`
}

// migrations is the full stored history sorted by createdAt; noop scales
// never appear.
func (x *exchange) migrations() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	ms := slices.Clone(g.migrations)
	slices.SortStableFunc(ms, func(a, b *migration) int { return a.createdAt.Compare(b.createdAt) })
	v := migrationsView{Migrations: []migrationView{}}
	for _, m := range ms {
		v.Migrations = append(v.Migrations, m.view())
	}
	if g.activeID != "" {
		id := g.activeID
		v.ActiveReshardingID = &id
	}
	x.reply(http.StatusOK, v)
}

type loginView struct {
	AccessToken      string   `json:"accessToken"`
	TokenType        string   `json:"tokenType"`
	ExpiresAt        instant  `json:"expiresAt"`
	ExpiresInSeconds int64    `json:"expiresInSeconds"`
	Roles            []string `json:"roles"`
}

// login issues a token (§2). The body is optional; with a blank username the
// request's own Authorization header (Basic or Bearer) is used, so a valid
// token can be exchanged for a fresh one. Failures are the generic 401 JSON.
func (x *exchange) login() {
	obj, outcome := x.readJSONObject(false)
	if outcome == bodyRejected {
		return
	}
	f := &fields{obj: obj}
	username, password := f.str("username"), f.str("password")
	if !x.bound(f) {
		return
	}
	var p *principal
	ok := false
	if !blank.Name(username) { // Kotlin: username.isNotBlank()
		p, ok = x.c.checkPassword(username, password)
	} else if h := x.r.Header.Get("Authorization"); h != "" {
		p, ok = x.c.authenticate(h)
	}
	if !ok {
		x.frameworkError(http.StatusUnauthorized)
		return
	}
	token, expiresAt := x.c.issueToken(p, x.c.now())
	x.reply(http.StatusOK, loginView{
		AccessToken: token, TokenType: "Bearer", ExpiresAt: instant(expiresAt),
		ExpiresInSeconds: int64(x.c.opts.TokenTTL.Seconds()), Roles: p.roleNames(),
	})
}

// actuatorInfo is Spring Boot's unauthenticated, empty info endpoint.
func (x *exchange) actuatorInfo() { x.reply(http.StatusOK, map[string]any{}) }
