// Command assay-scorer-ticket_linked serves the example private scorer
// ticket_linked as an assay plugin. Build it with
//
//	CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags=-w -o bin/plugins/assay-scorer-ticket_linked ./examples/private-scorer/cmd
//
// (the settings are optional: a static binary without DWARF or gRPC's
// request tracing is smaller, and assay hashes it at each launch).
package main

import (
	"github.com/assay-eval/assay/examples/private-scorer/ticketlinked"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(ticketlinked.New()) }
