package tidings

import "testing"

// TestEveryCodeHasOneStatus: each error code of the API has its status and title in the
// one table the API and the dashboard share; an unknown code is a 500.
func TestEveryCodeHasOneStatus(t *testing.T) {
	codes := []string{EInvalidJSON, EValidation, EUnsupportedMediaType, EMissingToken, EInvalidToken, EForbidden,
		EProjectNotFound, EChannelNotFound, EInsightNotNumeric, EPayloadTooLarge, ERateLimited, EMethodNotAllowed,
		ENotFound, EConflict, ELimitReached, EKeyReused, EKeyInProgress, EUnavailable, EInternal}
	if len(codes) != len(codeInfo) {
		t.Fatalf("%d codes, %d in the table", len(codes), len(codeInfo))
	}
	for _, c := range codes {
		if s := HTTPStatus(c); s < 400 || s > 599 || (s == 500) != (c == EInternal) || ErrorTitle(c) == "" {
			t.Errorf("%s: %d %q", c, s, ErrorTitle(c))
		}
	}
	if HTTPStatus(EConflict) != 409 || HTTPStatus("no_such_code") != 500 {
		t.Fatal("conflict is 409, an unknown code 500")
	}
}
