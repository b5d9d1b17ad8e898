// Package prefix is the model of a stream prefix's shard count: the unit the
// coordinator scales (CONTRACT §4.6). It has no Terraform types; the
// provider's resources are its glue.
//
// A shard count belongs to the prefix, not to one group. Every change of it
// goes through five parts, each with one home:
//
//   - Record (record.go): one reading of every group of the prefix, with its
//     count and active migration. It is the only basis: a plan is made from
//     one, an apply compares the prefix with it before it sends anything.
//   - Decide (decide.go): a pure function from a record, the target and what
//     the run creates, to ordered steps (stream scale, per-group scale,
//     adopt, rollback, wait for other migrations) or a refusal that names the
//     way out. A prefix whose groups are not all at the target is split: the
//     steps bring every group there.
//   - Settle (settle.go): the one rule for a lost answer, shared by create,
//     scale, delete and rollback: read back before anything is re-sent, up
//     to MaxResends re-sends with the same request id; a failed read-back
//     re-sends only an idempotent mutation (rollback, delete).
//   - Run (run.go): the run's journal of every step its executor carried
//     out on each prefix, written in one place per kind of step, before its
//     send and under the prefix lock. Another resource of the same run asks
//     it whether a change it finds is the run's own, the one the plan
//     showed (a create after its prefix's scale brings itself to the same
//     count; anything else is a stale plan).
//   - Watch (watch.go): every wait of a run is served by one poll of the
//     coordinator's groups listing, with the client's retries as its only
//     ones.
package prefix
