//go:build !unix

package runtimecfg

import "os"

// readConfigFile is os.ReadFile where plain system calls are not used.
func readConfigFile(name string) ([]byte, error) { return os.ReadFile(name) }
