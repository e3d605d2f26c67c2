// Package floors holds the house's layering as a test, in the spirit of
// Kubernetes' .import-restrictions: the table in floors_test.go is the
// architecture's one source of truth (docs/architecture.md draws it). A
// package imports only packages on floors below its own (or the few
// sideways imports the table names); fixtures/ imports nothing of the
// harness; and the shipped binary pulls in no test-only package. It has no
// code of its own.
package floors
