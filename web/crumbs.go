package web

// A page inside a project names where it sits above its title: the project, then the
// section (my-saas / Users), and the title says what the page is (Ada Lovelace). One
// title per page, the way every page of the dashboard reads.

// crumb is one step of a page's breadcrumb.
type crumb struct{ Text, URL string }

// crumbs pairs its arguments, text then URL: {{template "crumbs" (crumbs "my-saas" "/p/my-saas")}}.
// An odd last argument is dropped.
func crumbs(pairs ...string) []crumb {
	out := make([]crumb, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, crumb{Text: pairs[i], URL: pairs[i+1]})
	}
	return out
}
