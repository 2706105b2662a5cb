// Command test_bad returns, by task label, each kind of result that breaks
// the result contract (testscorer.Breach).
package main

import (
	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_bad", Hook: testscorer.Breach, Needs: testscorer.BreachNeeds})
}
