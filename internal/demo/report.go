package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// terraformClient reads the coordinator as Terraform's principal does.
func (r *demoRun) terraformClient() (*client.Client, error) {
	return client.New(client.Config{
		Endpoint: r.coord.URL(), Username: r.writer.Username, Password: r.writer.Password,
		RunID: "demo-report", MaxRetries: 2, RetryWaitMin: 50 * time.Millisecond, RetryWaitMax: time.Second, RequestTimeout: 10 * time.Second,
	})
}

// printGroups shows every group with its shard count and latest migration,
// read back from the coordinator.
func printGroups(ctx context.Context, w io.Writer, api *client.Client) error {
	groups, err := api.Groups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    GROUP\tSHARDS\tACTIVE MIGRATION\tLATEST MIGRATION")
	for _, g := range groups {
		history, err := api.Migrations(ctx, g.StreamPrefix, g.ConsumerGroup)
		if err != nil {
			return fmt.Errorf("migrations of %s/%s: %w", g.StreamPrefix, g.ConsumerGroup, err)
		}
		active, latest := "none", "none"
		if history.ActiveReshardingID != "" {
			active = history.ActiveReshardingID
		}
		if n := len(history.Migrations); n > 0 {
			m := history.Migrations[n-1]
			latest = fmt.Sprintf("%s %d→%d %s", m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
		}
		fmt.Fprintf(tw, "    %s/%s\t%d\t%s\t%s\n", g.StreamPrefix, g.ConsumerGroup, g.ShardCount, active, latest)
	}
	return tw.Flush()
}

// printAuditTrail prints the audit events as a table: what was changed, by
// whom (requestedBy), why (reason), and the request id that ties it to the
// Terraform run.
func printAuditTrail(w io.Writer, events []coordinator.AuditEvent) {
	if len(events) == 0 {
		fmt.Fprintln(w, "    (no audited mutations)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    TIME\tACTION\tGROUP\tOUTCOME\tREQUEST ID\tREQUESTED BY\tREASON")
	for _, e := range events {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			e.Timestamp.Local().Format("15:04:05.000"), e.Action, auditGroup(e),
			fmt.Sprintf("%s (%d)", e.Outcome, e.Status), orDash(e.RequestID), orDash(deref(e.RequestedBy)), orDash(deref(e.Reason)))
	}
	_ = tw.Flush()
}

// auditGroup is "<prefix>/<group>", or "<prefix> (all groups)" for the
// stream-level actions, which carry no consumer group.
func auditGroup(e coordinator.AuditEvent) string {
	if e.ConsumerGroup == nil {
		return e.StreamPrefix + " (all groups)"
	}
	return e.StreamPrefix + "/" + *e.ConsumerGroup
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
