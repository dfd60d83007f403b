package policy

// The facts the rules read that are no domain type: each as the caller
// reads it, so that no caller makes one fact out of another (a profile out
// of membership items, say) to ask a rule. The domain types the rules read
// are the others: a profile with its copies of its user's projects
// (domain.User.Projects), a project (its OwnerID), a comment (its
// AuthorID), an event.

// Membership is the fact that a user is a member of a project, as its
// membership item says (dynamo.MemberRef), with where it began in the
// project's change log when that was read.
type Membership struct {
	ProjectID, UserID string
	// Began is the position in the project's change log at which the
	// membership began (its entry's born, docs/sync.md); 0: not read (the
	// rules that need it count such a membership as begun by no read).
	Began int64
}

// LogsRead are the projects a sync page reads as visible to its viewer,
// each with the position of its change log the page reads up to (for a
// project whose mark says it is unchanged: the mark's position): what
// the page can vouch for.
type LogsRead map[string]int64
