package main

// The Mozilla CA roots, built in: used only when the system has none, as in the
// FROM scratch image, so that Web Push, webhooks and mail reach TLS servers there too.
import _ "golang.org/x/crypto/x509roots/fallback"
