package suites

import (
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// The AdCP task names, the project's own transcription of the release's
// lists (the spec's files are never committed): CAP-02 and A2A-09 hold tool
// names and skill ids to them. A name on any of the lists is a task name; a
// run that loaded a schema set adds the tasks of its manifest.json, so a
// newer release's tasks are names too.
var (
	// release31Tasks are the tools of schemas/3.1.19/manifest.json
	// (TestTaskNamesFollowTheManifest compares them).
	release31Tasks = []string{
		"acquire_rights", "activate_signal", "build_creative", "calibrate_content", "check_governance",
		"comply_test_controller", "create_collection_list", "create_content_standards", "create_media_buy",
		"create_property_list", "creative_approval", "delete_collection_list", "delete_property_list",
		"get_account_financials", "get_adcp_capabilities", "get_brand_identity", "get_collection_list",
		"get_content_standards", "get_creative_delivery", "get_creative_features", "get_media_buy_artifacts",
		"get_media_buy_delivery", "get_media_buys", "get_plan_audit_logs", "get_products", "get_property_list",
		"get_rights", "get_signals", "get_task_status", "list_accounts", "list_collection_lists",
		"list_content_standards", "list_creative_formats", "list_creatives", "list_property_lists", "list_tasks",
		"list_transformers", "log_event", "preview_creative", "provide_performance_feedback", "report_plan_outcome",
		"report_usage", "search_brands", "si_get_offering", "si_initiate_session", "si_send_message",
		"si_terminate_session", "sync_accounts", "sync_audiences", "sync_catalogs", "sync_creatives",
		"sync_event_sources", "sync_governance", "sync_plans", "update_collection_list", "update_content_standards",
		"update_media_buy", "update_property_list", "update_rights", "validate_content_delivery", "validate_input",
		"validate_property_delivery", "verify_brand_claim", "verify_brand_claims",
	}
	// requiredTaskPageTasks are the tasks protocol/required-tasks.mdx names
	// that the manifest does not.
	requiredTaskPageTasks = []string{"sync_agent_notification_configs"}
	// release32Tasks are the 3.2 lifecycle's tasks
	// (protocol/calling-an-agent.mdx, "Idempotency"; the 3.2 schemas' task index): a
	// seller already serving them is not naming tools outside AdCP.
	release32Tasks = []string{
		"accept_proposal", "buy_products", "control_media_buy", "decline_proposals", "list_products",
		"refine_proposals", "report_plan_adjustment", "request_proposals",
	}
)

// TaskNames are the AdCP task names of the project's transcription, sorted.
var TaskNames = func() []string {
	all := slices.Concat(release31Tasks, requiredTaskPageTasks, release32Tasks)
	slices.Sort(all)
	return slices.Compact(all)
}()

// isAdcpTask reports whether name is an AdCP task name of the project's
// transcription (A2A-09 reads it too).
func isAdcpTask(name string) bool {
	_, found := slices.BinarySearch(TaskNames, name)
	return found
}

// isTaskOf reports whether name is an AdCP task name: of the transcription,
// or of the manifest of the run's schema set (nil: none loaded).
func isTaskOf(set *schemas.Set, name string) bool {
	return isAdcpTask(name) || slices.Contains(set.Tasks(), name)
}
