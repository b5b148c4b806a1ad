// Package deploytest applies pullpath's manifests in deploy/, as users
// apply them, to a test cluster: deploy/sweep's namespace and RBAC
// (ApplySweep: sweep's RBAC tests on the real apiserver and sweep on the
// lab cluster), deploy/monitor in kustomization order (ApplyMonitor: the
// monitor's live tests in internal/monitor/monitorlab), and minimal
// CustomResourceDefinitions for the Prometheus operator's kinds the
// monitor's manifests and the chart render (PrometheusOperatorCRDs: the
// chart's tests in deploy/ too).
//
// It is imported only by tests; nothing in the pullpath binary links it.
package deploytest
