package provider

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// The campaign's step kinds and their default weights (CAMPAIGN_WEIGHTS
// overrides them; 0 disables a kind). Terraform steps run the terraform
// binary; out-of-band steps change the coordinator as another actor would;
// churn steps move consumers only.
var campaignDefaultWeights = map[string]int{
	// Terraform
	"apply":            4, // a config change (or none), terraform apply, with a consumer joining at a random request
	"saved_plan":       6, // a config change, plan -out, something in between, apply of the saved plan
	"plan":             3, // terraform plan -detailed-exitcode
	"refresh":          3, // terraform apply -refresh-only
	"import":           3, // state rm, then an import block by id (or identity), terraform apply
	"query":            2, // terraform query -generate-config-out, then a plan of what it generated
	"rename":           2, // a changed consumer_group: Terraform replaces the group
	"replace":          2, // terraform apply -replace
	"action":           2, // a prefix-wide rollback_migration invoked while one group is mid-migration
	"interrupt":        2, // SIGINT while a mutation (or the read-back of a lost one) is in flight
	"unknown_provider": 1, // a provider configuration unknown at plan time
	"fault_apply":      3, // terraform apply behind a gateway fault on the mutation
	"acknowledge":      1, // acknowledged_metadata_version after a regression, as the runbook says
	// a count change applied while provisioning fails for a later group of
	// the prefix: the stream scale fails part-way (issue 30)
	"provision_fault_scale": 2,
	// a second working directory (its own state) creates or deletes a group
	// of a campaign prefix, as a plain step, between the main workspace's
	// plan -out and apply, or by a saved plan of its own applied after the
	// main workspace added a group to the prefix (issue 30)
	"second_workspace": 2,
	// Out of band
	"oob_scale":       2,
	"oob_group_scale": 2, // one group scaled with the per-group endpoint: a split prefix (issue 30)
	"oob_rollback":    1,
	"oob_delete":      1,
	"oob_recreate":    1,
	"oob_restore":     1,
	// Churn
	"churn": 4,
}

func campaignKinds() []string {
	var out []string
	for k := range campaignDefaultWeights {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The universe: two stream prefixes; each has an anchor group g1 (never
// renamed or removed from the configuration; its shard count resource
// manages the prefix) and more groups that come and go.
var campaignPrefixes = []string{"camp-a", "camp-b"}

type campaignGroup struct {
	Addr, Prefix, Name string
	Initial            int // initial_shard_count; 0 = omitted
	InConfig           bool
	Consumers          int // healthy consumers the generator counts on
}

type campaignModel struct {
	Groups   []*campaignGroup
	Counts   map[string]int // shard_count per prefix
	Deletion string         // deletion_policy of every group
	WaitFor  string         // wait_for of every shard count resource
	// Second: prefix → the second workspace manages its group of that
	// prefix (campaignSecondGroup); the generator's record.
	Second   map[string]bool
	nextName map[string]int
	nextAddr int
}

func (m *campaignModel) inConfig(prefix string) []*campaignGroup {
	var out []*campaignGroup
	for _, g := range m.Groups {
		if g.InConfig && (prefix == "" || g.Prefix == prefix) {
			out = append(out, g)
		}
	}
	return out
}

func (m *campaignModel) group(addr string) *campaignGroup {
	for _, g := range m.Groups {
		if g.Addr == addr {
			return g
		}
	}
	return nil
}

func (m *campaignModel) newName(prefix string) string {
	m.nextName[prefix]++
	return fmt.Sprintf("g%d", m.nextName[prefix])
}

func (m *campaignModel) addGroup(prefix string, initial int) *campaignGroup {
	m.nextAddr++
	g := &campaignGroup{Addr: fmt.Sprintf("%s_%d", strings.ReplaceAll(prefix, "-", "_"), m.nextAddr), Prefix: prefix,
		Name: m.newName(prefix), Initial: initial, InConfig: true, Consumers: 1}
	m.Groups = append(m.Groups, g)
	return g
}

// campaignStep is one step of a workflow; everything it does is decided
// when the workflow is generated, so a seed replays it.
type campaignStep struct {
	Kind    string
	Prefix  string
	Addr    string // a group resource
	Count   int    // a shard count
	Change  string // the configuration change: none, count, add, remove
	Between string // saved_plan: what happens between plan and apply
	Fault   string // fault_apply: the fault; interrupt: what is held
	Variant int    // a kind-specific choice
	AtGET   int    // apply: the consumer joins when the apply's AtGET-th GET arrives
	Other   string // second_workspace: what the second workspace does with its group (create, delete)
}

func (s campaignStep) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	for _, kv := range [][2]string{{"prefix", s.Prefix}, {"group", s.Addr}, {"change", s.Change}, {"between", s.Between}, {"fault", s.Fault}, {"second", s.Other}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	if s.Count != 0 || s.Change == "count" {
		fmt.Fprintf(&b, " count=%d", s.Count)
	}
	if s.Variant != 0 {
		fmt.Fprintf(&b, " variant=%d", s.Variant)
	}
	if s.AtGET != 0 {
		fmt.Fprintf(&b, " at_get=%d", s.AtGET)
	}
	return b.String()
}

// campaignWorkflow generates a workflow: its initial model and steps.
func campaignWorkflow(seed uint64, settings campaignSettings, cli campaignCLI) (*campaignModel, []campaignStep) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := &campaignModel{Counts: map[string]int{}, Second: map[string]bool{}, nextName: map[string]int{}}
	m.Deletion = pick(r, "DELETE", "DELETE", "ABANDON")
	m.WaitFor = pick(r, "ACCEPTED", "ACCEPTED", "COMPLETION")
	for i, p := range campaignPrefixes {
		m.Counts[p] = 1 + r.IntN(4)
		for range 2 - i { // camp-a: two groups, camp-b: one
			m.addGroup(p, m.Counts[p])
		}
	}
	gen := m.clone()
	var steps []campaignStep
	for len(steps) < settings.steps {
		kind := weightedKind(r, settings.weights, cli, gen)
		if kind == "" {
			break
		}
		s := genStep(r, kind, gen)
		applyStepToModel(gen, s)
		steps = append(steps, s)
	}
	return m, steps
}

func pick[T any](r *rand.Rand, choices ...T) T { return choices[r.IntN(len(choices))] }

func weightedKind(r *rand.Rand, weights map[string]int, cli campaignCLI, m *campaignModel) string {
	total := 0
	var kinds []string
	for _, k := range campaignKinds() {
		w := weights[k]
		switch {
		case (k == "query" && !cli.query) || (k == "action" && !cli.actions):
			w = 0 // the CLI has no such command
		case k == "action" && (m.WaitFor == "COMPLETION" || len(m.inConfig("camp-a")) < 2):
			w = 0 // its setup leaves a group without consumers
		case k == "rename" && len(m.inConfig("")) <= len(campaignPrefixes):
			w = 0 // only anchors left
		case k == "provision_fault_scale" && len(m.sharedPrefixes()) == 0:
			w = 0 // no prefix with a group after its first to fail
		}
		for range w {
			kinds = append(kinds, k)
		}
		total += w
	}
	if total == 0 {
		return ""
	}
	return kinds[r.IntN(len(kinds))]
}

// nonAnchors are the groups of the configuration other than each prefix's
// first (whose shard count resource manages the prefix).
func (m *campaignModel) nonAnchors() []*campaignGroup {
	var out []*campaignGroup
	for _, p := range campaignPrefixes {
		if gs := m.inConfig(p); len(gs) > 1 {
			out = append(out, gs[1:]...)
		}
	}
	return out
}

// sharedPrefixes are the prefixes with more than one group (of the
// configuration, or the second workspace's).
func (m *campaignModel) sharedPrefixes() []string {
	var out []string
	for _, p := range campaignPrefixes {
		if m.groupsOfPrefix(p) > 1 {
			out = append(out, p)
		}
	}
	return out
}

// groupsOfPrefix counts prefix p's groups: the configuration's and the
// second workspace's.
func (m *campaignModel) groupsOfPrefix(p string) int {
	n := len(m.inConfig(p))
	if m.Second[p] {
		n++
	}
	return n
}

func genStep(r *rand.Rand, kind string, m *campaignModel) campaignStep {
	s := campaignStep{Kind: kind, Prefix: pick(r, campaignPrefixes...)}
	anyGroup := func() string { return pick(r, m.inConfig("")...).Addr }
	counts := []int{1, 2, 3, 4, 5}
	switch kind {
	case "apply", "saved_plan", "fault_apply", "interrupt", "unknown_provider":
		s.Change = pick(r, "count", "count", "count", "add", "remove", "none")
		if kind == "interrupt" || kind == "fault_apply" {
			s.Change = pick(r, "count", "count", "add")
		}
		if s.Change == "remove" && len(m.nonAnchors()) == 0 {
			s.Change = "count"
		}
		switch s.Change {
		case "count":
			s.Count = pick(r, counts...)
			if s.Count == m.Counts[s.Prefix] {
				s.Count = s.Count%5 + 1
			}
		case "remove":
			g := pick(r, m.nonAnchors()...)
			s.Addr, s.Prefix = g.Addr, g.Prefix
		}
		if kind == "saved_plan" {
			s.Between = pick(r, "none", "join", "leave", "restart", "expire", "stall", "join", "restart",
				"oob_scale", "oob_rollback", "oob_delete", "oob_restore")
			savedReplacement(&s, m)
		}
		if kind == "fault_apply" {
			s.Fault = pick(r, "respond_502", "respond_504", "reset_before", "reset_after", "garble", "hang")
		}
		if kind == "interrupt" {
			s.Fault = pick(r, "hold", "hold", "lost_answer")
		}
		if kind == "apply" {
			s.AtGET = 1 + r.IntN(6)
		}
	case "import", "replace":
		s.Addr = anyGroup()
		s.Variant = r.IntN(4) // import: bit 0 by identity, bit 1 the group vanished first; replace: bit 0 with a count change
	case "rename":
		s.Addr = pick(r, m.nonAnchors()...).Addr
	case "query":
		s.Variant = r.IntN(2) // 1: a group vanishes between the query and the plan
	case "action":
		s.Prefix = "camp-a"
		s.Count = pick(r, counts...)
	case "oob_scale":
		s.Count = pick(r, 0, 1, 2, 3, 4, 6, 1500)
	case "oob_group_scale":
		s.Addr = anyGroup()
		s.Count = pick(r, 1, 2, 3, 4, 6)
	case "provision_fault_scale":
		s.Prefix = pick(r, m.sharedPrefixes()...)
		s.Change, s.Count = "count", pick(r, counts...)
		if s.Count == m.Counts[s.Prefix] {
			s.Count = s.Count%5 + 1
		}
		s.Variant = r.IntN(4) // which group after the prefix's first (name order) fails
	case "second_workspace":
		s.Other = "create"
		if m.Second[s.Prefix] {
			s.Other = "delete"
		}
		// 1: between the main workspace's plan -out and its apply; 2: its
		// own plan -out, then the main workspace adds a group of the
		// prefix, then its apply of the saved plan
		s.Variant = r.IntN(3)
		if s.Variant == 2 {
			s.Change = "add"
		}
		if s.Variant == 0 && s.Other == "delete" && m.WaitFor == "COMPLETION" {
			// Issue 43: its group is replaced instead, while the main
			// workspace's apply of a count change of the prefix waits
			// (secondReplaceWhileWaiting). Nothing is drawn: the fixed
			// seeds' workflows keep their steps.
			s.Other, s.Change, s.Count = "replace", "count", m.Counts[s.Prefix]%5+1
		}
		if s.Variant == 1 {
			s.Change = pick(r, "count", "count", "none", "add")
			if s.Change == "count" {
				s.Count = pick(r, counts...)
				if s.Count == m.Counts[s.Prefix] {
					s.Count = s.Count%5 + 1
				}
			}
		}
	case "oob_delete", "oob_recreate", "oob_restore", "acknowledge":
		s.Addr = anyGroup()
	case "churn":
		s.Addr = anyGroup()
		s.Between = pick(r, "join", "leave", "restart", "expire", "stall")
	}
	if g := m.group(s.Addr); g != nil {
		s.Prefix = g.Prefix
	}
	if kind == "replace" && s.Variant&1 != 0 {
		// The replacement in the apply that also changes its prefix's
		// count: Terraform orders the two as it likes (campaign seed
		// 815614843, group_create_rescale.go).
		s.Change, s.Count = "count", m.Counts[s.Prefix]%5+1
	}
	// With wait_for = COMPLETION a scale-out waits for a consumer: the
	// generator keeps one healthy consumer in every group.
	if m.WaitFor == "COMPLETION" && slices.Contains([]string{"leave", "expire", "stall"}, s.Between) {
		if g := m.group(s.Addr); g == nil || g.Consumers <= 1 {
			s.Between = "join"
		}
	}
	return s
}

// savedReplacement makes the saved plans that change nothing in the
// configuration the replacement of a group instead, when the step's
// in-between is one of savedReplacedBetween, so that a saved plan of every
// planned action is applied after each kind of out-of-band change (issue
// 43): a rename of the first group that is not an anchor (when there is one,
// for every other in-between, shifted by the model's number of groups), or
// a -replace of the prefix's anchor. The others stay saved plans of what the refresh finds (a
// wait, a split prefix's repair). It draws nothing from the generator: the
// workflows' other steps are unchanged.
func savedReplacement(s *campaignStep, m *campaignModel) {
	switch {
	case s.Change != "none" || !slices.Contains(savedReplacedBetween, s.Between):
		return
	case (slices.Index(savedReplacedBetween, s.Between)+len(m.Groups))%2 == 0 && len(m.nonAnchors()) > 0:
		g := m.nonAnchors()[0]
		s.Change, s.Addr, s.Prefix = "rename", g.Addr, g.Prefix
		return
	}
	s.Change, s.Addr = "replace", m.inConfig(s.Prefix)[0].Addr
}

// savedReplacedBetween are the in-betweens after which a saved plan that
// changes nothing becomes a replacement (savedReplacement): consumer churn
// and every out-of-band change but a rollback, which finds nothing to roll
// back in a prefix at its count.
var savedReplacedBetween = []string{"join", "restart", "expire", "oob_scale", "oob_delete", "oob_restore"}

// applyStepToModel changes the configuration model as the step does; the
// generator and the runner both call it.
func applyStepToModel(m *campaignModel, s campaignStep) {
	switch s.Change {
	case "count":
		m.Counts[s.Prefix] = s.Count
	case "add":
		m.addGroup(s.Prefix, 0)
	case "remove":
		m.group(s.Addr).InConfig = false
	}
	kind := s.Kind
	if s.Change == "rename" || s.Change == "replace" {
		kind = s.Change // a saved plan's (savedReplacement)
	}
	switch kind {
	case "second_workspace":
		m.Second[s.Prefix] = s.Other != "delete"
	case "rename", "replace":
		// The replacement is created with the prefix's count: omitted
		// (the siblings'), or set for a prefix's only group. The second
		// workspace's group is a sibling too: a count set beside it that
		// differs from its count is refused at plan time (a split prefix
		// until the stream scale; campaign seed 530108894).
		g := m.group(s.Addr)
		g.Initial = 0
		if m.groupsOfPrefix(g.Prefix) == 1 {
			g.Initial = m.Counts[g.Prefix]
		}
		if kind == "rename" {
			g.Name = m.newName(g.Prefix)
		}
	case "churn":
		if g := m.group(s.Addr); g != nil {
			switch s.Between {
			case "join":
				g.Consumers++
			case "leave", "expire", "stall":
				g.Consumers--
			}
		}
	}
}

func (m *campaignModel) clone() *campaignModel {
	c := *m
	c.Groups = nil
	for _, g := range m.Groups {
		gc := *g
		c.Groups = append(c.Groups, &gc)
	}
	c.Counts = map[string]int{}
	for k, v := range m.Counts {
		c.Counts[k] = v
	}
	c.Second = map[string]bool{}
	for k, v := range m.Second {
		c.Second[k] = v
	}
	c.nextName = map[string]int{}
	for k, v := range m.nextName {
		c.nextName[k] = v
	}
	return &c
}
