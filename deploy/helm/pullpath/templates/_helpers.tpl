{{/*
Labels on every object: app.kubernetes.io/name is set per object (the
PodMonitors take the job label from it); these say which release made it.
*/}}
{{- define "pullpath.labels" -}}
app.kubernetes.io/part-of: pullpath
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* image REPO: registry/repository, then @digest or :tag */}}
{{- define "pullpath.image" -}}
{{- $img := .image -}}
{{- $ref := printf "%s/%s" .root.Values.image.registry $img.repository -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $ref $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref $img.tag -}}
{{- end -}}
{{- end }}

{{/* A Namespace of the chart, with its Pod Security labels. */}}
{{- define "pullpath.namespace" -}}
apiVersion: v1
kind: Namespace
metadata:
  name: {{ .name }}
  labels:
    app.kubernetes.io/name: {{ .app }}
    {{- include "pullpath.labels" .root | nindent 4 }}
    pod-security.kubernetes.io/enforce: {{ .root.Values.namespaces.podSecurity.enforce }}
    pod-security.kubernetes.io/audit: {{ .root.Values.namespaces.podSecurity.audit }}
    pod-security.kubernetes.io/warn: {{ .root.Values.namespaces.podSecurity.warn }}
    {{- with .root.Values.namespaces.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{- define "pullpath.dashboardNamespace" -}}
{{- default .Values.monitor.namespace .Values.grafana.dashboard.namespace -}}
{{- end }}
