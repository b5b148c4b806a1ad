//go:build !linux

package testenv

import "errors"

// InNetns needs Linux: network namespaces.
func InNetns(ns string, f func() error) error {
	return errors.New("network namespace " + ns + ": network namespaces need Linux")
}
