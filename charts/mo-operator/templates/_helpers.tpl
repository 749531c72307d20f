{{/* The chart's name, overridable. */}}
{{- define "mo-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every object's name. A release named "mo-operator" (as the docs
install it) gives plain "mo-operator", the same names as deploy/operator.
*/}}
{{- define "mo-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mo-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Pods and Services select by these two. app.kubernetes.io/name=mo-operator is
also how the operator finds its webhook configurations, so it is fixed and
not derived from nameOverride.
*/}}
{{- define "mo-operator.selectorLabels" -}}
app.kubernetes.io/name: mo-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mo-operator.labels" -}}
{{ include "mo-operator.selectorLabels" . }}
app.kubernetes.io/part-of: matrixone
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "mo-operator.chart" . }}
{{- end }}

{{/* Upstream's serviceAccount.create/name: an existing account when create is false. */}}
{{- define "mo-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mo-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The namespaces to manage, as JSON (read with fromJsonArray): watchNamespaces, or
the release namespace alone under upstream's onlyWatchReleasedNS.
*/}}
{{- define "mo-operator.watchNamespaces" -}}
{{- if .Values.watchNamespaces }}
{{- toJson .Values.watchNamespaces }}
{{- else if .Values.onlyWatchReleasedNS }}
{{- toJson (list .Release.Namespace) }}
{{- else }}
{{- "[]" }}
{{- end }}
{{- end }}

{{/* A job image: ours (jobImages.<job>), else upstream's key, with globalRegistryPrefix. */}}
{{- define "mo-operator.jobImage" -}}
{{- $image := default .upstream .ours }}
{{- if $image }}
{{- printf "%s%s" .prefix $image }}
{{- end }}
{{- end }}

{{- define "mo-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "mo-operator.fullname" .) }}
{{- end }}

{{- define "mo-operator.mutatingWebhookName" -}}
{{- printf "%s-mutating" (include "mo-operator.fullname" .) }}
{{- end }}

{{- define "mo-operator.validatingWebhookName" -}}
{{- printf "%s-validating" (include "mo-operator.fullname" .) }}
{{- end }}

{{/* The cert-manager Certificate (and its Secret) that serves the webhooks. */}}
{{- define "mo-operator.webhookCertName" -}}
{{- printf "%s-webhook-cert" (include "mo-operator.fullname" .) }}
{{- end }}

{{- define "mo-operator.image" -}}
{{- printf "%s%s:%s" .Values.globalRegistryPrefix .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Where the Deployment mounts the cert-manager Secret. */}}
{{- define "mo-operator.webhookCertDir" -}}
/etc/mo-operator/webhook-certs
{{- end }}
