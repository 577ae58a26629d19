package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// BenchmarkPublishHTTP measures POST /v1/log through the whole API (auth, decoding,
// validation, group commit) against GET /healthz through the same stack: compare ns/op.
//
//	go test -run '^$' -bench PublishHTTP -count 5 ./api
func BenchmarkPublishHTTP(b *testing.B) {
	e := newEnv(b, noLimits)
	body := `{"project":"my-saas","channel":"payments","event":"New Subscription","icon":"💰","tags":{"plan":"premium","seats":3}}`
	for _, c := range []struct{ name, method, path, body string }{
		{"healthz", "GET", "/healthz", ""},
		{"log", "POST", "/v1/log", body},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := e.srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+e.full)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}
