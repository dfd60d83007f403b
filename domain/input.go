package domain

// ProfileInput creates or updates the viewer's profile.
type ProfileInput struct {
	Name  string
	Email Opt[*string] // left out: unchanged; null: cleared
}

// ProjectInput creates a project.
type ProjectInput struct {
	Name        string
	Description *string
}

// TaskInput creates a task.
type TaskInput struct {
	ProjectID   string
	Title       string
	Description *string
	DueDate     *Date
	AssigneeID  *string
	Tags        []string
}

// CommentInput adds a comment to a task.
type CommentInput struct {
	TaskID string
	Body   string
}
