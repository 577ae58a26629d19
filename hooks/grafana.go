package hooks

import "github.com/tidings-dev/tidings"

// Grafana: unified alerting's webhook contact point sends Alertmanager's body with
// more fields (orgId, title, state, message; per alert dashboardURL, panelURL,
// valueString), mapped as Alertmanager's are, the panel's URL first. When the hook
// has a secret, the contact point sends it as "Authorization: Bearer SECRET"
// (Authorization header scheme Bearer, credentials the secret) or as the password of
// its basic auth.
// https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/

func init() { sources[tidings.HookGrafana] = alertSource{name: "Grafana", basic: true} }
