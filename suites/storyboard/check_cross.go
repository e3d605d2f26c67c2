package storyboard

// crossChecks are the cross-step and cross-response check kinds.
var crossChecks = map[string]checkFunc{}
