// Package mail sends Tidings' mail through an SMTP server (--smtp-url): the transport
// with its TLS rules and the server's replies (smtp.go, config.go), and the account
// mails (account.go). Notification mails and digests are composed in package deliver.
package mail
