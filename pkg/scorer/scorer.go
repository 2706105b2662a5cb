package scorer

import "github.com/assay-eval/assay/sdk"

// The host's names for the SDK's model. The types are defined, with their
// fields documented, in package sdk (the SDK module); the host uses them as
// they are, so what a scorer is sent is what the host built.
type (
	ID          = sdk.ID
	Need        = sdk.Need
	ValueType   = sdk.ValueType
	KPI         = sdk.KPI
	Description = sdk.Description
	Safety      = sdk.Safety
	Task        = sdk.Task
	Upstream    = sdk.Upstream
	Case        = sdk.Case
	Check       = sdk.Check
	Result      = sdk.Result
)

// Needs a scorer may declare.
const (
	NeedTrace       = sdk.NeedTrace
	NeedAnswer      = sdk.NeedAnswer
	NeedStateBefore = sdk.NeedStateBefore
	NeedStateAfter  = sdk.NeedStateAfter
	NeedUpstream    = sdk.NeedUpstream
	NeedEvents      = sdk.NeedEvents
)

// KPI value types.
const (
	Bool          = sdk.Bool
	Number        = sdk.Number
	Integer       = sdk.Integer
	String        = sdk.String
	StringList    = sdk.StringList
	StringListMap = sdk.StringListMap
	Any           = sdk.Any
)
