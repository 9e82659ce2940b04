{{/* the labels of every object, and the selector's */}}
{{- define "gpumemtrace.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
