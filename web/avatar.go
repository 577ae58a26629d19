package web

import (
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"

	"github.com/tidings-dev/tidings"
)

// A user is shown by a name and an initials avatar, never by a picture from
// elsewhere: the name is its "name" property, else its "email", else its ID; the
// avatar's colour comes from the ID, so it stays when the name changes.

// avatarColours is how many colours avatars take (.av0 to .av9 in app.css).
const avatarColours = 10

// maxNameRunes bounds a name as the lists show it; the profile shows it whole.
const maxNameRunes = 80

// person is how a page names a user.
type person struct {
	Name     string // the name, email or ID
	Initials string // one or two letters
	Colour   string // av0 … av9
	Named    bool   // Name is a property, not the ID
}

func personOf(userID string, props tidings.Tags) person {
	p := person{Name: userID, Colour: avatarClass(userID)}
	for _, key := range []string{"name", "email"} {
		if v := strings.TrimSpace(propertyValue(props, key)); v != "" {
			p.Name, p.Named = v, true
			break
		}
	}
	p.Initials = initials(p.Name)
	if !p.Named { // an ID's words are seldom a name's: "user-42" is U, not U4
		p.Initials = firstRune(strings.TrimLeftFunc(userID, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
		if p.Initials == "" {
			p.Initials = "?"
		}
	}
	return p
}

func propertyValue(props tidings.Tags, key string) string {
	for _, t := range props {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}

// Short is the name cut for a list.
func (p person) Short() string {
	r := []rune(p.Name)
	if len(r) <= maxNameRunes {
		return p.Name
	}
	return string(r[:maxNameRunes-1]) + "…"
}

// initials are the first letters of a name's first and last words ("Ada Lovelace" →
// "AL"), of an email's local part ("ada@example.com" → "A"), or of an ID.
func initials(name string) string {
	if local, _, ok := strings.Cut(name, "@"); ok && local != "" {
		name = local
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	switch len(words) {
	case 0:
		return "?"
	case 1:
		return firstRune(words[0])
	}
	return firstRune(words[0]) + firstRune(words[len(words)-1])
}

func firstRune(w string) string {
	for _, r := range w {
		return strings.ToUpper(string(r))
	}
	return ""
}

// avatarClass is the colour of an ID's avatar: the same ID, the same colour.
func avatarClass(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return "av" + strconv.Itoa(int(h.Sum32()%avatarColours))
}
