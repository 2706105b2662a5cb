//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package scorerpb

import "os"

// lockSocketDir does not lock on this system (no flock): directories of
// runs killed outright stay.
func lockSocketDir(string) (*os.File, error) { return nil, nil }

// lockStaleSocketDir never finds a directory stale on this system.
func lockStaleSocketDir(string) *os.File { return nil }
