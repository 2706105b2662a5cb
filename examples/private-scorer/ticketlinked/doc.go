// Package ticketlinked is an example of a private scorer a company might
// ship: ticket_linked checks that an agent's answer cites a task that really
// exists in the Company OS state after the turn, and not one it made up.
// It is written against package sdk only, as any plugin outside this
// repository would be; ../cmd serves it as the plugin binary
// assay-scorer-ticket_linked.
package ticketlinked
