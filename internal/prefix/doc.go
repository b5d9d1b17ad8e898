// Package prefix models a stream prefix's shard count, the unit the
// coordinator scales: Record reads it and diffs it with a basis, Decide plans
// steps, Scales journals a run's own, Settle handles lost answers, and Watch
// serves the waits.
package prefix
