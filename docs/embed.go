// Package docs holds the documents the server serves itself: the OpenAPI description
// of its API.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml: the API's OpenAPI 3.1 description, served at
// /v1/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
