// Package verdict is the evaluation-engine contract (docs/verdict.md): a
// weighted score over named metrics in [0,1] with missing metrics
// renormalised away, test metrics, a confidence, a verdict (PASS,
// PASS_WITH_WARNINGS, FAIL, BLOCKED, UNKNOWN) chosen by rules applied in a
// fixed order, recommendations in English, and the validation of artifacts
// (requirements, architecture, database schemas, ...) with the INVALID ->
// REPAIR -> RE-EVALUATE state machine a caller drives.
//
// Everything here is a pure function of its input; Evaluate never fails.
package verdict
