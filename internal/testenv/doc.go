// Package testenv holds what tests across pullpath share about their
// environment: how a missing prerequisite is reported (skip on a laptop,
// fail under CI=true), how a function runs inside a network namespace, how
// a test starts the lab's real registry stack, and the built pullpath for
// tests that run a command as a user would (no test links internal/cli).
//
// It is imported only by tests (and benchmarks); nothing in the pullpath
// binary links it.
package testenv
