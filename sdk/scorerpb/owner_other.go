//go:build !unix

package scorerpb

import "io/fs"

// owner is unknown off Unix.
func owner(fs.FileInfo) (int, bool) { return 0, false }
