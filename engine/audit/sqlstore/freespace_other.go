//go:build !unix

package sqlstore

import "errors"

// freeBytes is not implemented outside Unix: Health then skips the check.
func freeBytes(string) (uint64, error) { return 0, errors.New("free space unknown on this platform") }
