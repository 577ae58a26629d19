package tidings

import (
	"context"
	"time"
)

// Account is a tenant: a team or company with members, projects and API tokens.
type Account struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// User roles inside an account.
const (
	UserOwner  = "owner"
	UserMember = "member"
)

// User is a member of an account who signs in to the dashboard.
type User struct {
	ID           int64
	AccountID    int64
	Email        string
	PasswordHash string
	Role         string
	CreatedAt    time.Time
}

// Project is a workspace of an account, one per application.
type Project struct {
	ID                 int64
	AccountID          int64
	Name               string
	AutoCreateChannels bool // create channels on first event
	// RetentionDays is how long events are kept, by their timestamp; 0 keeps them forever.
	RetentionDays int
	// InsightChangeDefault is the change of an insight update that names none: ""
	// (change is required, as the spec says) or ChangeUpdate (what the LogSnag SDKs'
	// insight.track means: it never sends one).
	InsightChangeDefault string
	// IgnoreGPC: the project records visitors whose browser signals Global Privacy
	// Control (false, the default: ls.js sends nothing for them).
	IgnoreGPC bool
	// RepeatUrgentEvery and RepeatUrgentTimes: an urgent event is pushed again this
	// often, at most this many times, until acknowledged (RepeatUrgentEvery and
	// RepeatUrgentTimes by default; times 0: never again).
	RepeatUrgentEvery time.Duration
	RepeatUrgentTimes int
	// EscalateAfter: an urgent event that nobody acknowledged this long after it was
	// accepted is pushed and mailed to every member, recipients or not (0: never).
	EscalateAfter time.Duration
	CreatedAt     time.Time
}

// CheckInsightChangeDefault returns EValidation unless change is "" or ChangeUpdate.
func CheckInsightChangeDefault(change string) error {
	if change == "" || change == ChangeUpdate {
		return nil
	}
	var p Problems
	p.Add("insight_change_default", "enum", `must be "update" or empty (change is required)`)
	return p.Err()
}

// RetentionChoices are the retention periods offered, in days; 0 is forever.
var RetentionChoices = []int{0, 7, 30, 90, 365}

// CheckRetention returns EValidation unless days is one of RetentionChoices.
func CheckRetention(days int) error {
	for _, d := range RetentionChoices {
		if d == days {
			return nil
		}
	}
	var p Problems
	p.Add("retention_days", "enum", "must be one of %v (0: forever)", RetentionChoices)
	return p.Err()
}

// Channel groups the events of a project.
type Channel struct {
	ID        int64
	ProjectID int64
	Project   string
	Name      string
	CreatedAt time.Time
}

// AccountStore keeps accounts and their users.
type AccountStore interface {
	// CreateAccount creates an account. Errors: EValidation, EConflict when the name is taken.
	CreateAccount(ctx context.Context, name string) (*Account, error)
	// FindAccount returns the account with the given name. Errors: ENotFound.
	FindAccount(ctx context.Context, name string) (*Account, error)
	// ListAccounts returns every account, oldest first.
	ListAccounts(ctx context.Context) ([]*Account, error)
	// CreateUser stores u. Errors: EConflict when the email is taken.
	CreateUser(ctx context.Context, u *User) error
	// FindUserByEmail returns the user with that email. Errors: ENotFound.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
}

// ProjectStore keeps the projects and channels of accounts.
type ProjectStore interface {
	// CreateProject creates a project in the account. Errors: EValidation, EConflict.
	CreateProject(ctx context.Context, accountID int64, name string) (*Project, error)
	// FindProject returns the account's project by name. Errors: EProjectNotFound.
	FindProject(ctx context.Context, accountID int64, name string) (*Project, error)
	// ListProjects returns the account's projects by name.
	ListProjects(ctx context.Context, accountID int64) ([]*Project, error)
	// SetAutoCreateChannels switches "create channels on first event". Errors: EProjectNotFound.
	SetAutoCreateChannels(ctx context.Context, accountID int64, project string, on bool) error
	// SetRetention sets how many days the project keeps events (one of
	// RetentionChoices; 0 is forever). Errors: EProjectNotFound, EValidation.
	SetRetention(ctx context.Context, accountID int64, project string, days int) error
	// SetInsightChangeDefault sets what an insight update without change means: ""
	// (it is refused) or ChangeUpdate. Errors: EProjectNotFound, EValidation.
	SetInsightChangeDefault(ctx context.Context, accountID int64, project, change string) error
	// PurgeExpired deletes up to max events and page views, of any account, that their project keeps
	// no longer (older than its retention at now), oldest first, in one transaction,
	// and returns how many it deleted: a background job calls it until it returns 0.
	PurgeExpired(ctx context.Context, now time.Time, max int) (int, error)
	// CreateChannel creates a channel in the account's project.
	// Errors: EValidation, EProjectNotFound, EConflict.
	CreateChannel(ctx context.Context, accountID int64, project, name string) (*Channel, error)
	// ListChannels returns the project's channels by name. Errors: EProjectNotFound.
	ListChannels(ctx context.Context, accountID int64, project string) ([]*Channel, error)
	ChannelPager
	// CountEvents returns how many events the project (or one of its channels, when
	// channel is not "") holds: what a deletion takes with it. Errors: EProjectNotFound, EChannelNotFound.
	CountEvents(ctx context.Context, accountID int64, project, channel string) (int, error)
	// DeleteProject deletes the project with its channels, events, insights and the
	// tokens limited to it. Errors: EProjectNotFound.
	DeleteProject(ctx context.Context, accountID int64, project string) error
	// DeleteChannel deletes the channel with its events and the tokens limited to it.
	// Errors: EProjectNotFound, EChannelNotFound.
	DeleteChannel(ctx context.Context, accountID int64, project, channel string) error
}

// Store is everything a storage backend provides. Every backend passes the behaviour
// suite in package storetest.
type Store interface {
	AccountStore
	ProjectStore
	MemberStore
	SessionStore
	TokenStore
	EventStore
	InsightStore
	DeliveryStore
	PushStore
	PeopleStore
	PageStore
	IntentStore
	RecipientStore
	RouteStore
	HookStore
	IdempotencyStore
	ChartStore
	ChecklistStore
	Checker
	// Ping reports whether the store answers (readiness).
	Ping(ctx context.Context) error
	// Close commits what is pending, then releases the store.
	Close() error
}
