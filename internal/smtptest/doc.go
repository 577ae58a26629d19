// Package smtptest runs a real SMTP server in the test process (emersion/go-smtp), with
// STARTTLS and AUTH, that keeps what it receives and can refuse or hang up on demand.
package smtptest
