package storyboard

// fieldChecks are the single-response check kinds.
var fieldChecks = map[string]checkFunc{}
