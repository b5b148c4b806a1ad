package lab

// Supported is nil where labs can run (Linux) and otherwise the one-line
// error "pullpath lab needs Linux: network namespaces".
func Supported() error { return needLinux() }
