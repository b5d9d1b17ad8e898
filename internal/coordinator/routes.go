package coordinator

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Audit actions (CONTRACT §10).
const (
	ActionCreateStream      = "CREATE_STREAM"
	ActionScaleStream       = "SCALE_STREAM"
	ActionCreateGroup       = "CREATE_GROUP"
	ActionDeleteGroup       = "DELETE_GROUP"
	ActionScaleGroup        = "SCALE_GROUP"
	ActionRollbackMigration = "ROLLBACK_MIGRATION"
)

// Route patterns, in the server's own path-variable names. RequestCount and
// Fault.Route use these strings.
const (
	RouteLogin             = "/coord/v1/auth/login"
	RouteStream            = "/coord/v1/streams/{streamPrefix}"
	RouteStreamScale       = "/coord/v1/streams/{streamPrefix}/scale"
	RouteGroup             = "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}"
	RouteProducerRouting   = RouteGroup + "/producer-routing"
	RouteGroupScale        = RouteGroup + "/scale"
	RouteMigration         = RouteGroup + "/migrations/{reshardingId}"
	RouteRollback          = RouteMigration + "/rollback"
	RouteHeartbeat         = RouteGroup + "/members/{memberId}/heartbeat"
	RouteHealth            = "/coord/v1/monitoring/health"
	RouteSession           = "/coord/v1/monitoring/session"
	RouteCompatibility     = "/coord/v1/monitoring/compatibility"
	RouteMonitoringGroups  = "/coord/v1/monitoring/groups"
	RouteMonitoringGroup   = "/coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}"
	RouteMembers           = RouteMonitoringGroup + "/members"
	RouteAssignments       = RouteMonitoringGroup + "/assignments"
	RouteConsumption       = RouteMonitoringGroup + "/consumption"
	RouteMigrations        = RouteMonitoringGroup + "/migrations"
	RouteActuatorInfo      = "/actuator/info"
	apiPrefix              = "/coord/v1"
	apiPrefixWithSeparator = apiPrefix + "/"
)

type access int

const (
	accessAuthenticated access = iota // READ for GET, WRITE otherwise
	accessPublic                      // login, /actuator/info
	accessHeartbeat                   // open unless AuthenticateMemberAPI
)

type endpoint struct {
	handle func(*exchange)
	action string // audit action; "" = not audited
	access access
}

type route struct {
	pattern string
	segs    []string
	methods map[string]endpoint
}

func newRoute(pattern string, methods map[string]endpoint) *route {
	return &route{pattern: pattern, segs: strings.Split(strings.TrimPrefix(pattern, "/"), "/"), methods: methods}
}

func (r *route) allow() string {
	var ms []string
	for m := range r.methods {
		ms = append(ms, m)
		if m == http.MethodGet {
			ms = append(ms, http.MethodHead)
		}
	}
	slices.Sort(ms)
	return strings.Join(ms, ",")
}

var routes = []*route{
	newRoute(RouteLogin, map[string]endpoint{http.MethodPost: {handle: (*exchange).login, access: accessPublic}}),
	newRoute(RouteStream, map[string]endpoint{http.MethodPost: {handle: (*exchange).createStream, action: ActionCreateStream}}),
	newRoute(RouteStreamScale, map[string]endpoint{http.MethodPost: {handle: (*exchange).scaleStream, action: ActionScaleStream}}),
	newRoute(RouteGroup, map[string]endpoint{
		http.MethodPost:   {handle: (*exchange).createGroup, action: ActionCreateGroup},
		http.MethodGet:    {handle: (*exchange).getGroup},
		http.MethodDelete: {handle: (*exchange).deleteGroup, action: ActionDeleteGroup},
	}),
	newRoute(RouteProducerRouting, map[string]endpoint{http.MethodGet: {handle: (*exchange).producerRouting}}),
	newRoute(RouteGroupScale, map[string]endpoint{http.MethodPost: {handle: (*exchange).scaleGroup, action: ActionScaleGroup}}),
	newRoute(RouteMigration, map[string]endpoint{http.MethodGet: {handle: (*exchange).getMigration}}),
	newRoute(RouteRollback, map[string]endpoint{http.MethodPost: {handle: (*exchange).rollback, action: ActionRollbackMigration}}),
	newRoute(RouteHeartbeat, map[string]endpoint{http.MethodPost: {handle: (*exchange).heartbeat, access: accessHeartbeat}}),
	newRoute(RouteHealth, map[string]endpoint{http.MethodGet: {handle: (*exchange).health}}),
	newRoute(RouteSession, map[string]endpoint{http.MethodGet: {handle: (*exchange).session}}),
	newRoute(RouteCompatibility, map[string]endpoint{http.MethodGet: {handle: (*exchange).compatibility}}),
	newRoute(RouteMonitoringGroups, map[string]endpoint{http.MethodGet: {handle: (*exchange).listGroups}}),
	newRoute(RouteMonitoringGroup, map[string]endpoint{http.MethodGet: {handle: (*exchange).getGroup}}),
	newRoute(RouteMembers, map[string]endpoint{http.MethodGet: {handle: (*exchange).members}}),
	newRoute(RouteAssignments, map[string]endpoint{http.MethodGet: {handle: (*exchange).assignments}}),
	newRoute(RouteConsumption, map[string]endpoint{http.MethodGet: {handle: (*exchange).consumption}}),
	newRoute(RouteMigrations, map[string]endpoint{http.MethodGet: {handle: (*exchange).migrations}}),
	newRoute(RouteActuatorInfo, map[string]endpoint{http.MethodGet: {handle: (*exchange).actuatorInfo, access: accessPublic}}),
}

// match is the outcome of resolving a request path.
type match struct {
	badURI  bool      // Tomcat rejects it before Spring (encoded '/', bad escape)
	inAPI   bool      // under /coord/v1 (auth interceptor applies)
	route   *route    // nil: no route has this path
	ep      *endpoint // nil with route set: 405
	raw     map[string]string
	vars    map[string]string
	rawSegs []string // raw segments, path parameters kept
	segs    []string // decoded segments, path parameters dropped
}

// routeKey is what RequestCount and faults see: the pattern, or the raw
// path when nothing matched.
func (m *match) routeKey(rawPath string) string {
	if m.route != nil {
		return m.route.pattern
	}
	return rawPath
}

// rawRequestPath returns the path and query exactly as sent.
func rawRequestPath(r *http.Request) (path, query string) {
	if strings.HasPrefix(r.RequestURI, "/") {
		path, query, _ = strings.Cut(r.RequestURI, "?")
		return path, query
	}
	return r.URL.EscapedPath(), r.URL.RawQuery
}

func resolve(method, rawPath string) *match {
	m := &match{}
	lower := strings.ToLower(rawPath)
	if strings.Contains(lower, "%2f") {
		m.badURI = true
		return m
	}
	trailing := len(rawPath) > 1 && strings.HasSuffix(rawPath, "/")
	for _, seg := range strings.Split(strings.TrimPrefix(rawPath, "/"), "/") {
		if seg == "" {
			continue // Tomcat merges repeated slashes
		}
		plain, _, _ := strings.Cut(seg, ";") // Spring drops path parameters
		dec, err := url.PathUnescape(plain)
		if err != nil {
			m.badURI = true
			return m
		}
		m.rawSegs = append(m.rawSegs, seg)
		m.segs = append(m.segs, dec)
	}
	m.inAPI = len(m.segs) >= 2 && m.segs[0] == "coord" && m.segs[1] == "v1"
	if trailing { // Spring Boot 3 no longer matches a trailing slash
		return m
	}
	for _, rt := range routes {
		if vars, raw, ok := rt.bind(m.segs, m.rawSegs); ok {
			m.route, m.vars, m.raw = rt, vars, raw
			break
		}
	}
	if m.route == nil {
		return m
	}
	lookup := method
	if method == http.MethodHead {
		lookup = http.MethodGet
	}
	if ep, ok := m.route.methods[lookup]; ok {
		m.ep = &ep
	}
	return m
}

func (r *route) bind(segs, rawSegs []string) (vars, raw map[string]string, ok bool) {
	if len(segs) != len(r.segs) {
		return nil, nil, false
	}
	vars, raw = map[string]string{}, map[string]string{}
	for i, s := range r.segs {
		if strings.HasPrefix(s, "{") {
			if segs[i] == "" {
				return nil, nil, false
			}
			name := strings.Trim(s, "{}")
			vars[name] = segs[i]
			raw[name] = rawSegs[i]
			continue
		}
		if segs[i] != s {
			return nil, nil, false
		}
	}
	return vars, raw, true
}

// rateLimitKey applies §8: mutations on /streams/{p} (create), /streams/{p}/scale
// and /streams/{p}/groups/{g}[/…] except the heartbeat, keyed by the raw,
// encoded path segments.
func (m *match) rateLimitKey(method string) (string, bool) {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return "", false
	}
	if !m.inAPI || len(m.segs) < 4 || m.segs[2] != "streams" {
		return "", false
	}
	rest, raw := m.segs[3:], m.rawSegs[3:]
	switch {
	case len(rest) == 1, len(rest) == 2 && rest[1] == "scale":
		return raw[0] + ":*", true
	case len(rest) >= 3 && rest[1] == "groups":
		if len(rest) == 6 && rest[3] == "members" && rest[5] == "heartbeat" {
			return "", false
		}
		return raw[0] + ":" + raw[2], true
	}
	return "", false
}
