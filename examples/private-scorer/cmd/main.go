// Command assay-scorer-ticket_linked serves the example private scorer
// ticket_linked as an assay plugin. Build it with
//
//	go build -o bin/plugins/assay-scorer-ticket_linked ./examples/private-scorer/cmd
package main

import (
	"github.com/assay-eval/assay/examples/private-scorer/ticketlinked"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(ticketlinked.New()) }
