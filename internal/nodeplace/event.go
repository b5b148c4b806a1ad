package nodeplace

import "time"

// EventTime is when a Kubernetes Event last happened: its lastTimestamp
// (core/v1 Events, which the kubelet's recorder still sets), else its
// eventTime (events.k8s.io/v1), else when the object was created. Zero
// times are unset.
func EventTime(lastTimestamp, eventTime, created time.Time) time.Time {
	switch {
	case !lastTimestamp.IsZero():
		return lastTimestamp
	case !eventTime.IsZero():
		return eventTime
	}
	return created
}
