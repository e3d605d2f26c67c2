package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// ---- status.monotonic ----------------------------------------------------

// monotonic: "rejects status transitions observed across steps that aren't
// on the spec lifecycle graph" (compliance-catalog.mdx). A run reads a
// resource now and then, so the states between two reads are unseen: a
// change passes when the new state can be reached from the old one along
// the graph, not only by one edge. The graphs are the 3.1 enums'
// descriptions (enums/*-status.json) and the controller page's rules
// (comply-test-controller.mdx: rejected only from pending_creatives or
// pending_start; terminal states are never left). Where the spec allows a
// move and names no edge, the graph allows it (a buy resumed before its
// flight returns to pending_start). A cached replay (`replayed: true`)
// is a historical snapshot (security.mdx), not a read, and is not
// observed; neither is an error reply, nor a step that expects one.
type monotonic struct {
	last map[string]statusSeen // "kind:id" → last state seen
}

type statusSeen struct {
	state, step string
	ever        map[string]bool // every state seen
}

// lifecycle is one resource kind's graph: state → the states one move
// reaches. resync are the states a buyer's re-submission (a sync_* write)
// may put any earlier state in: the lifecycle starts again. closedBy
// closes an edge once the resource has shown a state (a buy that has run
// is never again waiting for its flight).
type lifecycle struct {
	kind     string
	enum     string // the enum file the states come from
	edges    map[string][]string
	resync   []string
	closedBy map[[2]string]string
}

var (
	mediaBuyLifecycle = &lifecycle{kind: "media_buy", enum: "enums/media-buy-status.json", edges: map[string][]string{
		"pending_creatives": {"pending_start", "active", "paused", "canceled", "rejected"},
		"pending_start":     {"pending_creatives", "active", "paused", "canceled", "rejected"},
		"active":            {"paused", "completed", "canceled"},
		"paused":            {"active", "pending_start", "completed", "canceled"},
		"completed":         nil, "rejected": nil, "canceled": nil,
	}, closedBy: map[[2]string]string{{"paused", "pending_start"}: "active"}}
	creativeLifecycle = &lifecycle{kind: "creative", enum: "enums/creative-status.json", edges: map[string][]string{
		"processing":     {"pending_review", "rejected"},
		"pending_review": {"approved", "rejected"},
		"approved":       {"archived", "pending_review", "suspended", "rejected"},
		"suspended":      {"approved", "rejected"},
		"rejected":       nil, // the buyer's re-submission returns it to processing
		"archived":       {"approved"},
	}, resync: []string{"processing", "pending_review", "approved", "archived"}}
	approvalLifecycle = &lifecycle{kind: "creative_approval", enum: "enums/creative-approval-status.json", edges: map[string][]string{
		// partially_approved is 3.2's (approval_scopes).
		"pending_review":     {"approved", "partially_approved", "rejected"},
		"approved":           {"pending_review", "partially_approved", "rejected"},
		"partially_approved": {"approved", "pending_review", "rejected"},
		"rejected":           {"pending_review"}, // re-uploaded via sync_creatives, seen on the buy
	}}
	accountLifecycle = &lifecycle{kind: "account", enum: "enums/account-status.json", edges: map[string][]string{
		"pending_approval": {"active", "rejected"},
		"active":           {"suspended", "payment_required", "closed"},
		"suspended":        {"active", "payment_required", "closed"},
		"payment_required": {"active", "suspended", "closed"},
		"rejected":         nil, "closed": nil,
	}}
	sessionLifecycle = &lifecycle{kind: "si_session", enum: "enums/si-session-status.json", edges: map[string][]string{
		"active":          {"pending_handoff", "complete", "terminated"},
		"pending_handoff": {"complete", "terminated"},
		"complete":        nil, "terminated": nil,
	}}
	catalogItemLifecycle = &lifecycle{kind: "catalog_item", enum: "enums/catalog-item-status.json", edges: map[string][]string{
		"pending":   {"approved", "rejected", "warning"},
		"approved":  {"warning", "rejected", "withdrawn"},
		"warning":   {"approved", "rejected", "withdrawn"},
		"rejected":  nil, // a re-sync resets it to pending
		"withdrawn": {"approved"},
	}, resync: []string{"pending"}}
	audienceLifecycle = &lifecycle{kind: "audience", enum: "enums/audience-status.json", edges: map[string][]string{
		"processing": {"ready", "too_small", "suspended"},
		"ready":      {"processing", "too_small", "suspended"},
		"too_small":  {"processing", "ready", "suspended"},
		"suspended":  {"processing", "ready"},
	}, resync: []string{"processing"}}
)

// lifecycles are the graphs status.monotonic judges by (for the test that
// holds them to the release's enums).
var lifecycles = []*lifecycle{mediaBuyLifecycle, creativeLifecycle, approvalLifecycle, accountLifecycle,
	sessionLifecycle, catalogItemLifecycle, audienceLifecycle}

// states are the lifecycle's states, sorted.
func (l *lifecycle) states() []string {
	var out []string
	for s := range l.edges {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// kindName and enumFile name the lifecycle and the enum file it follows.
func (l *lifecycle) kindName() string { return l.kind }
func (l *lifecycle) enumFile() string { return l.enum }

// reaches says whether to can follow from along the graph, for a
// resource that has shown the states ever.
func (l *lifecycle) reaches(from, to string, ever map[string]bool) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range l.edges[s] {
			if c, ok := l.closedBy[[2]string{s, n}]; ok && ever[c] {
				continue
			}
			if n == to {
				return true
			}
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return false
}

// statusObs is one resource state a reply shows.
type statusObs struct {
	life        *lifecycle
	id, state   string
	resubmitted bool // the step re-submitted the resource (a sync_* write)
}

const monotonicDesc = "Resource statuses move only along the spec's lifecycle graphs"

func (m *monotonic) grade(s *stepView) *spec.Result {
	if s.expectError || s.obs.Refused || s.obs.ErrorCode != "" || s.body == nil || s.body["replayed"] == true {
		return nil
	}
	seen := statusesIn(s.task, s.body)
	if len(seen) == 0 {
		return nil
	}
	for _, o := range seen {
		key := o.life.kind + ":" + o.id
		prev, ok := m.last[key]
		ever := prev.ever
		if ever == nil {
			ever = map[string]bool{}
		}
		m.last[key] = statusSeen{state: o.state, step: s.id, ever: ever}
		defer func() { ever[o.state] = true }()
		if !ok || prev.state == o.state {
			continue
		}
		if _, known := o.life.edges[prev.state]; !known {
			continue // not a state of the enum: response_schema says so
		}
		if _, known := o.life.edges[o.state]; !known {
			continue
		}
		if o.life.reaches(prev.state, o.state, ever) {
			continue
		}
		if o.resubmitted && slices.ContainsFunc(o.life.resync, func(r string) bool { return r == o.state || o.life.reaches(r, o.state, ever) }) {
			continue
		}
		next := o.life.edges[prev.state]
		legal := "none: it is terminal"
		switch {
		case len(next) > 0:
			legal = strings.Join(next, ", ")
		case len(o.life.resync) > 0:
			legal = "none but the buyer's re-submission"
		}
		r := failed(monotonicDesc, "%s %s went from %s (step %s) to %s, which the lifecycle never reaches from %s (next states: %s; %s)",
			o.life.kind, o.id, prev.state, prev.step, o.state, prev.state, legal, o.life.enum)
		r.Expected, r.Actual = "a state reachable from "+prev.state, o.state
		return r
	}
	return passed(monotonicDesc)
}

// statusesIn reads the resource states a task's reply shows, by the task's
// response schema. create_media_buy and update_media_buy carry the buy's
// state in media_buy_status; their root status is the task's (3.1 split
// the two: reference/migration/media-buy-status.mdx), so a root status is
// read as the buy's only when it is a value no task status takes.
func statusesIn(task string, body map[string]any) []statusObs {
	var out []statusObs
	add := func(l *lifecycle, id, state any, resubmitted bool) {
		i, _ := id.(string)
		st, _ := state.(string)
		if i != "" && st != "" {
			out = append(out, statusObs{life: l, id: i, state: st, resubmitted: resubmitted})
		}
	}
	buy := func(mb map[string]any, state any) {
		add(mediaBuyLifecycle, mb["media_buy_id"], state, false)
		for _, p := range objects(mb["packages"]) {
			for _, ca := range objects(p["creative_approvals"]) {
				id := fmt.Sprintf("%v/%v/%v", mb["media_buy_id"], p["package_id"], ca["creative_id"])
				if _, ok := ca["creative_id"].(string); ok {
					add(approvalLifecycle, id, ca["approval_status"], false)
				}
			}
		}
	}
	switch task {
	case "create_media_buy", "update_media_buy":
		state := body["media_buy_status"]
		if state == nil {
			if st, _ := body["status"].(string); slices.Contains([]string{"pending_creatives", "pending_start", "active", "paused"}, st) {
				state = st
			}
		}
		buy(body, state)
	case "get_media_buys":
		for _, mb := range objects(body["media_buys"]) {
			buy(mb, mb["status"])
		}
	case "sync_creatives", "list_creatives":
		for _, c := range objects(body["creatives"]) {
			add(creativeLifecycle, c["creative_id"], c["status"], task == "sync_creatives")
		}
	case "sync_accounts", "list_accounts":
		for _, a := range objects(body["accounts"]) {
			add(accountLifecycle, a["account_id"], a["status"], false)
		}
	case "si_initiate_session", "si_send_message", "si_terminate_session":
		add(sessionLifecycle, body["session_id"], body["status"], false)
	case "sync_catalogs", "list_catalogs":
		for _, c := range objects(body["catalogs"]) {
			for _, it := range objects(c["items"]) {
				add(catalogItemLifecycle, itemID(it), it["status"], task == "sync_catalogs")
			}
		}
		for _, it := range objects(body["items"]) {
			add(catalogItemLifecycle, itemID(it), it["status"], task == "sync_catalogs")
		}
	case "sync_audiences":
		for _, a := range objects(body["audiences"]) {
			add(audienceLifecycle, a["audience_id"], a["status"], true)
		}
	}
	return out
}

func itemID(it map[string]any) any {
	for _, k := range []string{"item_id", "offering_id", "sku", "id"} {
		if s, ok := it[k].(string); ok && s != "" {
			return s
		}
	}
	return nil
}

// objects returns the JSON objects of an array (nil for anything else).
func objects(x any) []map[string]any {
	arr, _ := x.([]any)
	var out []map[string]any
	for _, v := range arr {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
