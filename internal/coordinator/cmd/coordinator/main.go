// Command coordinator serves the in-repo Redis Stream Coordinator stand-in
// for demos and manual testing:
//
//	go run ./internal/coordinator/cmd/coordinator --addr 127.0.0.1:18080
//	curl -u admin:password 127.0.0.1:18080/coord/v1/monitoring/health
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// userFlags collects repeated --user name:password:ROLE,ROLE values.
type userFlags []coordinator.User

func (u *userFlags) String() string {
	names := make([]string, len(*u))
	for i, user := range *u {
		names[i] = user.Username
	}
	return strings.Join(names, ",")
}

func (u *userFlags) Set(v string) error {
	user, err := parseUser(v)
	if err != nil {
		return err
	}
	*u = append(*u, user)
	return nil
}

func parseUser(v string) (coordinator.User, error) {
	name, rest, ok := strings.Cut(v, ":")
	if !ok || name == "" {
		return coordinator.User{}, errors.New("want name:password:ROLE[,ROLE...]")
	}
	// The password may itself contain ':'; roles follow the last one.
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return coordinator.User{}, errors.New("want name:password:ROLE[,ROLE...]")
	}
	user := coordinator.User{Username: name, Password: rest[:i]}
	for _, r := range strings.Split(rest[i+1:], ",") {
		role := coordinator.Role(strings.ToUpper(strings.TrimSpace(r)))
		known := false
		for _, k := range coordinator.AllRoles {
			known = known || k == role
		}
		if !known {
			return coordinator.User{}, fmt.Errorf("unknown role %q (want READ, WRITE, ADMIN, MONITOR or MEMBER)", r)
		}
		user.Roles = append(user.Roles, role)
	}
	return user, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coordinator:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("coordinator", flag.ContinueOnError)
	var (
		users     userFlags
		addr      = fs.String("addr", "127.0.0.1:18080", "listen address")
		adminPass = fs.String("admin-password", "", `built-in admin password (default "password"; unused when --user is given)`)
		secret    = fs.String("token-secret", "", "Bearer token secret (default: derived from the admin credentials)")
		rate      = fs.Int("rate-limit", 0, "admin mutations per window and key; > 0 enables rate limiting")
		window    = fs.Duration("rate-limit-window", 60*time.Second, "rate limit window")
		tick      = fs.Duration("tick", time.Second, "background loop tick")
		lease     = fs.Duration("lease-ttl", 15*time.Second, "member lease TTL")
		interval  = fs.Duration("heartbeat-interval", 3*time.Second, "heartbeat interval told to members")
		auditLog  = fs.String("audit-log", "", `audit log file, or "-" for stdout (default: none)`)
		memberAPI = fs.Bool("authenticate-member-api", false, "require the MEMBER role on heartbeats")
		provision = fs.Bool("streams-provisioning", false, "provision Redis stream keys on create and scale (COORDINATOR_STREAMS_PROVISIONING_ENABLED)")
		altNumber = fs.Bool("alternative-numbering", false, "number versions and epochs, assign shards and order listings unlike the real server, within the contract (coordinator.AlternativeNumbering)")
	)
	fs.Var(&users, "user", "API user name:password:ROLE,ROLE (repeatable; replaces the built-in admin)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := coordinator.Options{
		Users: users, AdminPassword: *adminPass, TokenSecret: *secret,
		RateLimitEnabled: *rate > 0, RateLimitPerWindow: *rate, RateLimitWindow: *window,
		TickInterval: *tick, MemberLeaseTTL: *lease, HeartbeatInterval: *interval,
		AuthenticateMemberAPI: *memberAPI, StreamProvisioning: *provision,
	}
	if *altNumber {
		opts.Numbering = coordinator.AlternativeNumbering
	}
	switch *auditLog {
	case "":
	case "-":
		opts.AuditLog = stdout
	default:
		f, err := os.OpenFile(*auditLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.AuditLog = f
	}
	c := coordinator.New(opts)
	if err := c.Start(*addr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "coordinator listening on %s\n", c.URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return c.Close()
}
