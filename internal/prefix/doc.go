// Package prefix models a stream prefix's shard count, the unit the
// coordinator scales: Record reads it, Decide plans steps, Settle handles lost
// answers, Run journals what the run did, and Watch serves the waits.
package prefix
