package web

import (
	"errors"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/hooks"
)

// tryTemplate runs a json hook's template on a sample body, as a delivery would, for
// the form's "Try on the sample body"; checkTemplate refuses a costly template at save
// time. Both are package hooks'.
var (
	tryTemplate   = hooks.TryTemplate
	checkTemplate = hooks.CheckTemplate
)

// tryMessage says why a template made no events of a sample, with the form's names.
func tryMessage(err error) string {
	var r *hooks.Refusal
	if errors.As(err, &r) {
		return hookMessage(tidings.Errorf(tidings.EValidation, "%s", r.Reason))
	}
	return hookMessage(err)
}
