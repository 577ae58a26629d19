package api

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkDecodeLog decodes and checks a /v1/log body, beside encoding/json decoding
// the same body into a struct (the baseline of bench/load): compare their ns/op.
//
//	go test -run '^$' -bench DecodeLog -benchmem -count 6 ./api | benchstat -
func BenchmarkDecodeLog(b *testing.B) {
	body := []byte(`{"project":"load","channel":"events","event":"New Subscription","description":"Ada upgraded to the yearly premium plan after the trial","icon":"💰","user_id":"user-1042","tags":{"plan":"premium","seats":3,"region":"eu-west","trial":false}}`)
	now := time.Now()
	b.Run("tidings", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeLog(body, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same body with the intent fields (priority, url, actions, key): what they cost
	// when sent. Without them ("tidings") an event must cost what it did before them.
	intent := []byte(`{"project":"load","channel":"events","event":"New Subscription","description":"Ada upgraded to the yearly premium plan after the trial","icon":"💰","user_id":"user-1042","tags":{"plan":"premium","seats":3,"region":"eu-west","trial":false},"priority":"high","url":"https://example.com/accounts/1042","actions":[{"label":"Open account","url":"https://example.com/accounts/1042"},{"label":"Refund","id":"refund"}],"key":"account-1042"}`)
	b.Run("tidings-intent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeLog(intent, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		var v struct {
			Project, Channel, Event, Description, Icon string
			UserID                                     string `json:"user_id"`
			Tags                                       map[string]any
		}
		for b.Loop() {
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
