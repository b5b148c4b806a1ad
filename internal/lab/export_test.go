package lab

// RemoveCgroupParentAsSessionsDo is what a Session's Close does to the
// shared cgroup parent (in the given hierarchies), for tests that race it.
var RemoveCgroupParentAsSessionsDo = removeCgroupParentInLocked
