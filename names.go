package tidings

import "regexp"

// NameMaxLen is the longest project, channel or tag-key name.
const NameMaxLen = 64

var namePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// NameRuleMessage is said wherever a project, channel or tag key breaks the naming rule:
// in the API, the CLI and the web forms alike.
const NameRuleMessage = "must be lowercase letters, digits and single dashes (like my-saas), 1 to 64 characters"

// ValidName reports whether s follows the naming rule of projects, channels and tag keys:
// lowercase letters, digits and single dashes, not at either end, 1 to 64 characters.
func ValidName(s string) bool {
	return len(s) >= 1 && len(s) <= NameMaxLen && namePattern.MatchString(s)
}

// CheckName validates a name field and records a problem under path when it is broken.
func CheckName(p *Problems, path, s string) {
	switch {
	case s == "":
		p.Add(path, "required", "is required")
	case !ValidName(s):
		p.Add(path, "pattern", NameRuleMessage)
	}
}

// ValidateName returns a validation_failed error when s breaks the naming rule; what names
// the value in the message (for example "project").
func ValidateName(what, s string) error {
	var p Problems
	CheckName(&p, what, s)
	return p.Err()
}
