package storyboard

import "slices"

// mutatingTasks are the tasks whose request schema declares
// "x-mutates-state": true in the 3.1.19 and 3.2.0-beta.5 schemas
// (storyboard-schema.yaml, "Mutating-task detection": the annotation is the
// single source of truth; TestMutatingTasksFollowTheSchemas checks this list
// against the releases' schemas when the tests have them). One exception, written down: 3.2.0-beta.5 marks
// get_products mutating (a brief can open a proposal); a read-only run
// still sends it, as every 3.1 buyer does, because it commits no spend and
// creates no campaign.
var mutatingTasks = []string{
	"accept_proposal", "acquire_rights", "activate_signal", "build_creative", "buy_products", "calibrate_content",
	"comply_test_controller", "control_media_buy", "create_collection_list", "create_content_standards",
	"create_media_buy", "create_property_list", "creative_approval", "decline_proposals", "delete_collection_list",
	"delete_property_list", "log_event", "provide_performance_feedback", "refine_proposals", "report_plan_adjustment",
	"report_plan_outcome", "report_usage", "request_proposals", "si_initiate_session", "si_send_message",
	"si_terminate_session", "sync_accounts", "sync_agent_notification_configs", "sync_audiences", "sync_catalogs",
	"sync_creatives", "sync_event_sources", "sync_governance", "sync_plans", "update_collection_list",
	"update_content_standards", "update_media_buy", "update_property_list", "update_rights",
}

// Mutating reports whether task changes seller state.
func Mutating(task string) bool { return slices.Contains(mutatingTasks, task) }
