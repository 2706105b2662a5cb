// Package governance keeps a person in charge of what assay's scores are
// used for (docs/governance.md): sampled human review of stored turns and
// each scorer's override rate, pre-registered kill criteria evaluated over a
// candidate's run history, and promotion records written only when every
// interlock is green. Nothing here acts on its own: a fired kill criterion
// is a recorded flag, and only a person promotes.
package governance
