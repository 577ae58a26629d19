package main

import (
	"errors"
	"regexp"
)

// apiChannelHint is the hint the API gives a token limited to one channel that asks
// for every channel ("add channel=payments", shared by every read endpoint).
var apiChannelHint = regexp.MustCompile(`add channel=([^\s()]+)`)

// tailHint says tail's flag where the server's refusal names the query parameter.
func tailHint(err error) error {
	if err == nil || !apiChannelHint.MatchString(err.Error()) {
		return err
	}
	return errors.New(apiChannelHint.ReplaceAllString(err.Error(), "add --channel $1"))
}
