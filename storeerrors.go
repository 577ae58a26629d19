package tidings

// The errors that every store answers with, worded once: a client sees the same
// message whichever store serves it.

// ProjectNotFound is the error of every backend for an unknown project: it says how to
// create one.
func ProjectNotFound(name string) error {
	return Errorf(EProjectNotFound,
		"project %q does not exist in this account: create it in Settings → Projects or with `tidings project create %s`", name, name)
}

// ChannelNotFound is the error of every backend for an unknown channel.
func ChannelNotFound(project, name string) error {
	return Errorf(EChannelNotFound,
		"channel %q does not exist in project %q: create it in Settings → Projects, with `tidings channel create %s %s`, or turn on \"create channels on first event\" for the project",
		name, project, project, name)
}

// AccountExists, ProjectExists, ChannelExists and EmailTaken are the conflicts of a name
// already in use.
func AccountExists(name string) error {
	return Errorf(EConflict, "an account named %q already exists", name)
}

func ProjectExists(name string) error {
	return Errorf(EConflict, "a project named %q already exists in this account", name)
}

func ChannelExists(project, name string) error {
	return Errorf(EConflict, "a channel named %q already exists in project %q", name, project)
}

func EmailTaken(email string) error {
	return Errorf(EConflict, "a user with email %q already exists", email)
}

// TooManyDevices is a user's device over the limit (MaxDevicesPerUser).
func TooManyDevices(n int) error {
	return Errorf(EConflict, "you have %d devices already: remove one first", n)
}

// EventNotFound is an unknown event of a project; with project "", of the account.
func EventNotFound(project, id string) error {
	if project == "" {
		return Errorf(ENotFound, "no event %q", id)
	}
	return Errorf(ENotFound, "no event %q in project %q", id, project)
}

// InsightNotFound is an unknown insight of a project.
func InsightNotFound(project, title string) error {
	return Errorf(ENotFound, "no insight %q in project %q", title, project)
}

// PersonNotFound is an unknown user id (of the events' user_id) of a project.
func PersonNotFound(project, userID string) error {
	return Errorf(ENotFound, "no user %q in project %q", userID, project)
}

// GroupNotFound is an unknown group of a project.
func GroupNotFound(project, group string) error {
	return Errorf(ENotFound, "no group %q in project %q", group, project)
}

// TokenNotFound and WebhookNotFound are unknown ids of this account.
func TokenNotFound(id string) error {
	return Errorf(ENotFound, "no token %q in this account", id)
}

func WebhookNotFound(id string) error {
	return Errorf(ENotFound, "no webhook %q in this account", id)
}

// InsightNotNumeric is a numeric change to an insight that holds text.
func InsightNotNumeric(title, value string) error {
	return Errorf(EInsightNotNumeric, "insight %q holds %q, which is not a number: send change \"update\" to replace it", title, value)
}

// AccountNotFound, UserNotFound, UnknownToken and SettingNotFound are lookups by name
// that found nothing.
func AccountNotFound(name string) error {
	return Errorf(ENotFound, "no account named %q", name)
}

func UserNotFound(email string) error {
	return Errorf(ENotFound, "no user with email %q", email)
}

func UnknownToken(id string) error {
	return Errorf(ENotFound, "no token %q", id)
}

func SettingNotFound(key string) error {
	return Errorf(ENotFound, "no setting %q", key)
}

// Errors without a name in them.
var (
	ErrNoSuchSession    = Errorf(ENotFound, "no such session")
	ErrNoSuchUser       = Errorf(ENotFound, "no such user")
	ErrNoSuchMember     = Errorf(ENotFound, "no such member")
	ErrNoSuchDevice     = Errorf(ENotFound, "no such device")
	ErrNoSuchInvitation = Errorf(ENotFound, "no such invitation")
	ErrNoSuchAnswer     = Errorf(ENotFound, "no answer is kept under this idempotency key")
	ErrInviteUnusable   = Errorf(ENotFound, "this invitation link is unknown, used or expired: ask for a new one")
	ErrResetUnusable    = Errorf(ENotFound, "this password reset link is unknown, used or expired: ask an owner of your team for a new one")
	ErrShuttingDown     = Errorf(EUnavailable, "the service is shutting down; retry in a moment")
)
