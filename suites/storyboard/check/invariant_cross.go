package check

import (
	"fmt"
	"slices"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// ---- impairment.coherence ------------------------------------------------

// impairment: media_buy.impairments[] stays in step with the resources a
// buy depends on (compliance-catalog.mdx; media-buy health in
// get-media-buys-response.json; core/impairment.json). On a read of a
// non-terminal buy:
//   - health-iff: health is "impaired" exactly when impairments[] is
//     non-empty (health absent means "ok");
//   - forward: no entry names a resource the run last saw serviceable;
//   - inverse: a resource the run last saw offline is listed when the buy
//     depends on it materially. Materiality is a MUST only where the join
//     is plain; for a creative the judge requires the entry only when the
//     creative is the sole one assigned to a package of the buy (a
//     rejected creative beside serviceable peers MUST NOT be listed).
//
// A terminal buy is not read (sellers MAY leave its health as it was).
// Resource states come from the replies the run saw: list_creatives,
// sync_creatives, sync_audiences, sync_catalogs / list_catalogs, and the
// test controller's forced transitions.
type impairment struct {
	state map[string]resourceSeen // "type:id" → last state seen
}

type resourceSeen struct {
	offline, serviceable bool
	state, step          string
}

// The states that take a resource offline (an impairment's cause) and
// those it serves in, by resource type; other states say neither.
var (
	offlineStates = map[string][]string{
		"creative": {"suspended", "rejected"}, "audience": {"suspended"}, "catalog_item": {"withdrawn"},
	}
	serviceableStates = map[string][]string{
		"creative": {"approved"}, "audience": {"ready"}, "catalog_item": {"approved", "warning"},
	}
)

const impairmentDesc = "A media buy's health and impairments[] agree with the resources it depends on"

func (m *impairment) grade(s *stepView) *spec.Result {
	if s.expectError || s.obs.Refused || s.body == nil {
		return nil
	}
	if s.task != "get_media_buys" {
		m.observe(s)
		return nil
	}
	graded := false
	for _, mb := range objects(s.body["media_buys"]) {
		st, _ := mb["status"].(string)
		if st == "completed" || st == "rejected" || st == "canceled" {
			continue
		}
		graded = true
		id := mb["media_buy_id"]
		imps := objects(mb["impairments"])
		health, _ := mb["health"].(string)
		if (health == "impaired") != (len(imps) > 0) {
			r := failed(impairmentDesc, "media buy %v: health is %q with %d impairments (impaired exactly when impairments[] is non-empty)", id, orOK(health), len(imps))
			r.Expected, r.Actual = "health impaired iff impairments[] non-empty", map[string]any{"health": orOK(health), "impairments": len(imps)}
			return r
		}
		for _, im := range imps {
			key := fmt.Sprintf("%v:%v", im["resource_type"], im["resource_id"])
			if seen, ok := m.state[key]; ok && seen.serviceable {
				return failed(impairmentDesc, "media buy %v lists an impairment on %s, which step %s showed %s (serviceable)", id, key, seen.step, seen.state)
			}
		}
		for _, p := range objects(mb["packages"]) {
			cas := objects(p["creative_approvals"])
			if len(cas) != 1 {
				continue
			}
			cid, _ := cas[0]["creative_id"].(string)
			seen, ok := m.state["creative:"+cid]
			if !ok || !seen.offline {
				continue
			}
			listed := slices.ContainsFunc(imps, func(im map[string]any) bool {
				return im["resource_type"] == "creative" && im["resource_id"] == cid
			})
			if !listed {
				return failed(impairmentDesc, "media buy %v: creative %s, the only one of package %v, is %s since step %s, and impairments[] does not list it",
					id, cid, p["package_id"], seen.state, seen.step)
			}
		}
	}
	if !graded {
		return nil
	}
	return passed(impairmentDesc)
}

func orOK(h string) string {
	if h == "" {
		return "ok"
	}
	return h
}

// observe remembers the resource states a reply shows.
func (m *impairment) observe(s *stepView) {
	set := func(typ string, id, state any) {
		i, _ := id.(string)
		st, _ := state.(string)
		if i == "" || st == "" {
			return
		}
		m.state[typ+":"+i] = resourceSeen{offline: slices.Contains(offlineStates[typ], st),
			serviceable: slices.Contains(serviceableStates[typ], st), state: st, step: s.id}
	}
	switch s.task {
	case "list_creatives", "sync_creatives":
		for _, c := range objects(s.body["creatives"]) {
			set("creative", c["creative_id"], c["status"])
		}
	case "sync_audiences":
		for _, a := range objects(s.body["audiences"]) {
			set("audience", a["audience_id"], a["status"])
		}
	case "sync_catalogs", "list_catalogs":
		for _, c := range objects(s.body["catalogs"]) {
			for _, it := range objects(c["items"]) {
				set("catalog_item", itemID(it), it["status"])
			}
		}
	case "comply_test_controller":
		// A forced transition names its resource in the request's params
		// and the state it left the resource in.
		params, _ := s.obs.Request["params"].(map[string]any)
		scenario, _ := s.obs.Request["scenario"].(string)
		switch scenario {
		case "force_creative_status":
			set("creative", params["creative_id"], s.body["current_state"])
		}
	}
}

// ---- governance.denial_blocks_mutation -------------------------------------

// denial: once governance denies a plan, no later step acquires a resource
// for it (the governance specialisms' invariant). A denial is
// check_governance answering verdict "denied" (3.1 renamed it from
// status, which is now the task's), or a GOVERNANCE_DENIED or
// CAMPAIGN_SUSPENDED error the step did not expect (a step that expects
// the error is the storyboard driving the denial on purpose, and what
// follows it is recovery). GOVERNANCE_DENIED is correctable: the buyer
// may restructure the buy, so a later check_governance that approves the
// plan lifts the denial. An acquisition is a create_media_buy
// that succeeds with a media_buy_id (a buy not rejected or canceled), or
// an acquire_rights answered "acquired" with a rights_id, for the same plan, or for any plan
// when the denial named none. Updates acquire nothing new (pausing or
// canceling is the right answer to a denial) and are not read.
type denial struct {
	plans   map[string]string // plan_id → the step that denied it
	runWide string            // the step of a denial that named no plan
}

const denialDesc = "Nothing is acquired for a plan after governance denied it"

func (d *denial) grade(s *stepView) *spec.Result {
	plan := planOf(s)
	if s.task == "check_governance" && !s.obs.Refused && s.body != nil {
		verdict := s.body["verdict"] // 3.1 moved it off the root status, now the task's
		if verdict == nil {
			verdict = s.body["status"]
		}
		switch verdict {
		case "denied":
			d.deny(plan, s.id)
		case "approved", "conditions":
			if plan != "" {
				delete(d.plans, plan)
			}
		}
		return nil
	}
	if code := s.obs.ErrorCode; code == "GOVERNANCE_DENIED" || code == "CAMPAIGN_SUSPENDED" {
		if !s.expectError {
			d.deny(plan, s.id)
		}
		return nil
	}
	if s.expectError || s.obs.Refused || s.body == nil {
		return nil
	}
	var field string
	switch s.task {
	case "create_media_buy":
		if st := s.body["media_buy_status"]; st == "rejected" || st == "canceled" {
			return nil
		}
		field = "media_buy_id"
	case "acquire_rights":
		if st := s.body["rights_status"]; st != "acquired" && (st != nil || s.body["status"] != "acquired") {
			return nil
		}
		field = "rights_id"
	default:
		return nil
	}
	id, _ := s.body[field].(string)
	if id == "" {
		return nil
	}
	at, scope := d.plans[plan], "plan "+plan
	if plan == "" || at == "" {
		at, scope = d.runWide, "the run (the denial named no plan)"
	}
	if at == "" {
		return passed(denialDesc)
	}
	r := failed(denialDesc, "step %s denied %s; %s then acquired %s %s", at, scope, s.task, field, id)
	return r
}

func (d *denial) deny(plan, step string) {
	if plan == "" {
		if d.runWide == "" {
			d.runWide = step
		}
		return
	}
	if _, ok := d.plans[plan]; !ok {
		d.plans[plan] = step
	}
}

// planOf is the plan a step is about: the reply's plan_id, else the
// request's.
func planOf(s *stepView) string {
	if p, _ := s.body["plan_id"].(string); p != "" {
		return p
	}
	p, _ := s.obs.Request["plan_id"].(string)
	return p
}
