package api

import (
	"github.com/tidings-dev/tidings"
)

// A public token is embedded in web pages and apps: anyone holding it may call identify
// or group with any user_id or group_id. So its answer is the request itself — ids and
// the properties it sent — and never what is stored (a user's email, plan, groups and
// counts were readable by anyone who had the page's token). Full tokens are answered
// the stored user or group.

// sentPerson is identify's answer to a public token.
type sentPerson struct {
	Project    string         `json:"project"`
	UserID     string         `json:"user_id"`
	Properties sentProperties `json:"properties"`
}

// sentGroup is group's answer to a public token.
type sentGroup struct {
	Project    string         `json:"project"`
	GroupID    string         `json:"group_id"`
	UserID     string         `json:"user_id,omitempty"`
	Properties sentProperties `json:"properties"`
}

// sentProperties is a request's properties as it sent them: those it set, then those
// it removed, as null.
type sentProperties struct {
	set    tidings.Tags
	remove []string
}

func (p sentProperties) MarshalJSON() ([]byte, error) {
	b := p.set.AppendJSON(make([]byte, 0, 64))
	b = b[:len(b)-1] // reopen the object
	for _, k := range p.remove {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = tidings.AppendJSONString(b, k)
		b = append(b, ":null"...)
	}
	return append(b, '}'), nil
}

func identifySent(c *tidings.Identify) sentPerson {
	return sentPerson{c.Project, c.UserID, sentProperties{c.Properties, c.Remove}}
}

func groupSent(c *tidings.GroupChange) sentGroup {
	return sentGroup{c.Project, c.GroupID, c.UserID, sentProperties{c.Properties, c.Remove}}
}

// answerSent is a replay's answer to a public token: what its request sent, whoever's
// answer the key keeps (a full token's, with the stored data, may be kept under the
// same key and body).
func answerSent(v any) vetAnswer {
	return func([]byte) ([]byte, error) { return encodeJSON(v) }
}
