package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/tidings-dev/tidings"
)

// GitHub: X-Hub-Signature-256 is "sha256=" and the hex HMAC-SHA256 of the raw body
// keyed by the webhook's secret; X-GitHub-Event names the event and X-GitHub-Delivery
// (a GUID, the same on redelivery) is the delivery's id. Both content types GitHub
// offers are read: application/json, and application/x-www-form-urlencoded with the
// JSON in the "payload" field.
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries

func init() { sources[tidings.HookGitHub] = githubSource{} }

type githubSource struct{}

func (githubSource) Verify(h *tidings.Hook, r *Request) error {
	if h.Secret == "" {
		return Unauthorized("the hook has no secret to check X-Hub-Signature-256 with")
	}
	header := r.Header.Get("X-Hub-Signature-256")
	if header == "" {
		return Unauthorized("missing X-Hub-Signature-256 header (set the webhook's secret in GitHub)")
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	sig, err := hex.DecodeString(hexSig)
	if !ok || err != nil {
		return Unauthorized("malformed X-Hub-Signature-256 header")
	}
	mac := hmac.New(sha256.New, []byte(h.Secret))
	mac.Write(r.Body)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return Unauthorized("X-Hub-Signature-256 does not match the hook's secret")
	}
	return nil
}

type githubUser struct {
	Login string `json:"login"`
}

type githubPayload struct {
	Action  string `json:"action"`
	Zen     string `json:"zen"`
	Ref     string `json:"ref"`
	Deleted bool   `json:"deleted"`
	Forced  bool   `json:"forced"`
	Compare string `json:"compare"`
	Commits []struct {
		Message string `json:"message"`
	} `json:"commits"`
	HeadCommit *struct {
		Message string `json:"message"`
	} `json:"head_commit"`
	Pusher *struct {
		Name string `json:"name"`
	} `json:"pusher"`
	Release *struct {
		TagName    string `json:"tag_name"`
		Name       string `json:"name"`
		HTMLURL    string `json:"html_url"`
		Body       string `json:"body"`
		Prerelease bool   `json:"prerelease"`
	} `json:"release"`
	WorkflowRun *struct {
		Name         string `json:"name"`
		HeadBranch   string `json:"head_branch"`
		DisplayTitle string `json:"display_title"`
		Conclusion   string `json:"conclusion"`
		HTMLURL      string `json:"html_url"`
		RunNumber    int64  `json:"run_number"`
		Event        string `json:"event"`
	} `json:"workflow_run"`
	PullRequest *struct {
		Number  int64  `json:"number"`
		Title   string `json:"title"`
		HTMLURL string `json:"html_url"`
		Merged  bool   `json:"merged"`
		Head    struct {
			Ref string `json:"ref"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"pull_request"`
	Issue *struct {
		Number  int64  `json:"number"`
		Title   string `json:"title"`
		HTMLURL string `json:"html_url"`
		Labels  []struct {
			Name string `json:"name"`
		} `json:"labels"`
	} `json:"issue"`
	Repository *struct {
		FullName        string `json:"full_name"`
		HTMLURL         string `json:"html_url"`
		StargazersCount int64  `json:"stargazers_count"`
	} `json:"repository"`
	Sender *githubUser `json:"sender"`
}

func (githubSource) Map(h *tidings.Hook, r *Request) (*Delivery, error) {
	name := r.Header.Get("X-GitHub-Event")
	if name == "" {
		return nil, BadBody("missing X-GitHub-Event header")
	}
	body := r.Body
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("payload") == "" {
			return nil, BadBody("a form-encoded GitHub delivery without a payload field")
		}
		body = []byte(form.Get("payload"))
	}
	var p githubPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, BadBody("the body is not a GitHub %s payload: %s", line(name, 64), jsonError(err))
	}
	e := event(h)
	var tags tagger
	if p.Repository != nil {
		tags.add("repo", p.Repository.FullName)
		e.URL = link(p.Repository.HTMLURL)
	}
	mapped := true
	switch {
	case name == "ping":
		e.Event, e.Icon = "GitHub hook connected", "🔌"
		e.Description = text(p.Zen)
	case name == "push":
		n := len(p.Commits)
		branch, isTag := strings.CutPrefix(p.Ref, "refs/tags/")
		if !isTag {
			branch = strings.TrimPrefix(p.Ref, "refs/heads/")
		}
		switch {
		case p.Deleted:
			e.Event, e.Icon = "Branch deleted", "🗑️"
			if isTag {
				e.Event = "Tag deleted"
			}
		case isTag:
			e.Event, e.Icon = "Tag pushed", "🏷️"
		default:
			e.Event, e.Icon = "Push", "⬆️"
		}
		if isTag {
			tags.add("tag", branch)
		} else {
			tags.add("branch", branch)
		}
		tags.addNumber("commits", int64(n))
		pusher := ""
		if p.Pusher != nil {
			pusher = p.Pusher.Name
		}
		tags.add("pusher", pusher)
		if p.Forced {
			tags.addBool("forced", true)
		}
		if !p.Deleted && !isTag {
			d := fmt.Sprintf("%d commit%s to %s", n, plural(n), branch)
			if p.HeadCommit != nil {
				first, _, _ := strings.Cut(strings.TrimSpace(p.HeadCommit.Message), "\n")
				d += ": " + first
			}
			e.Description = text(d)
		}
		if u := link(p.Compare); u != "" {
			e.URL = u
		}
	case name == "release" && p.Action == "published" && p.Release != nil:
		e.Event, e.Icon, e.Notify = "Release published", "🚀", true
		tags.add("tag", p.Release.TagName)
		if p.Release.Prerelease {
			tags.addBool("prerelease", true)
		}
		d := p.Release.Name
		if p.Release.Body != "" {
			d += "\n\n" + p.Release.Body
		}
		e.Description = text(d)
		if u := link(p.Release.HTMLURL); u != "" {
			e.URL = u
		}
	case name == "workflow_run" && p.Action == "completed" && p.WorkflowRun != nil && p.WorkflowRun.Conclusion == "failure":
		w := p.WorkflowRun
		e.Event, e.Icon, e.Notify, e.Priority = "Workflow failed", "❌", true, "high"
		tags.add("workflow", w.Name)
		tags.add("branch", w.HeadBranch)
		tags.add("conclusion", w.Conclusion)
		tags.add("trigger", w.Event)
		tags.addNumber("run", w.RunNumber)
		e.Description = text(w.Name + ": " + w.DisplayTitle)
		if u := link(w.HTMLURL); u != "" {
			e.URL = u
		}
	case name == "pull_request" && p.PullRequest != nil && (p.Action == "opened" || p.Action == "closed" && p.PullRequest.Merged):
		pr := p.PullRequest
		e.Event, e.Icon = "Pull request opened", "🔀"
		if p.Action == "closed" {
			e.Event, e.Icon = "Pull request merged", "🟣"
		}
		tags.addNumber("number", pr.Number)
		tags.add("branch", pr.Head.Ref)
		tags.add("base", pr.Base.Ref)
		e.Description = text(pr.Title)
		if u := link(pr.HTMLURL); u != "" {
			e.URL = u
		}
	case name == "issues" && p.Action == "opened" && p.Issue != nil:
		e.Event, e.Icon = "Issue opened", "🐛"
		tags.addNumber("number", p.Issue.Number)
		labels := make([]string, 0, len(p.Issue.Labels))
		for _, l := range p.Issue.Labels {
			labels = append(labels, l.Name)
		}
		tags.add("labels", strings.Join(labels, ", "))
		e.Description = text(p.Issue.Title)
		if u := link(p.Issue.HTMLURL); u != "" {
			e.URL = u
		}
	case name == "star" && p.Action == "created":
		e.Event, e.Icon = "New star", "⭐"
		if p.Repository != nil {
			tags.addNumber("stars", p.Repository.StargazersCount)
		}
	default:
		mapped = false
		e.Event = label(name, "github event")
	}
	if !mapped || name == "release" || name == "pull_request" || name == "workflow_run" {
		tags.add("action", p.Action)
	}
	tags.add("github-event", name)
	if p.Sender != nil {
		e.UserID = userID(p.Sender.Login)
	}
	e.Tags = tags.tags
	return &Delivery{ID: deliveryID(r.Header.Get("X-GitHub-Delivery")), Events: []*tidings.NewEvent{e}}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
