// Package cli is assay's command line: the urfave/cli/v2 commands, their flags
// and exit codes. Main is the whole program; cmd/assay only calls it.
package cli
