package tidings

// The caps of a project: a public token may create insights, and channels when the
// project creates them on first event. Without a cap one token could make every page
// that lists them (the sidebar, Settings, the insights page, GET /v1/insights) as large
// as it likes. Changing an insight that exists, or publishing to a channel that exists,
// is never refused by a cap.
const (
	// MaxInsightsPerProject is how many insights a project may hold.
	MaxInsightsPerProject = 1000
	// MaxChannelsPerProject is how many channels a project may hold.
	MaxChannelsPerProject = 1000
)

// InsightLimitReached refuses a new insight of a project that holds max already.
func InsightLimitReached(project, title string, max int) error {
	return Errorf(ELimitReached,
		"project %q has %d insights, the most a project may have, so insight %q was not created: delete insights you no longer use "+
			"(on the project's Insights page or with DELETE /v1/insights?project=%s&title=…); the existing ones can still be updated",
		project, max, title, project)
}

// ChannelLimitReached refuses a new channel of a project that holds max already.
func ChannelLimitReached(project, channel string, max int) error {
	return Errorf(ELimitReached,
		"project %q has %d channels, the most a project may have, so channel %q was not created: delete channels you no longer use "+
			"(Settings → Projects, or `tidings channel delete %s NAME`); events to the existing channels are still accepted",
		project, max, channel, project)
}
