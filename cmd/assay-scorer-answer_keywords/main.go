// Command assay-scorer-answer_keywords serves the built-in answer_keywords
// scorer as an assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/answerkeywords"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(answerkeywords.New()) }
