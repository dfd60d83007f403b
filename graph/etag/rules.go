package etag

// rule is what a field's value depends on beyond the objects it returns
// (which Request.Field records by their types: a project, a task, a
// comment, a membership, a user).
type rule int

const (
	// shown: the objects it returns, and its parent's data (a list of a
	// project's tasks depends on the project's seq, which its parent
	// recorded).
	shown rule = iota + 1
	// viewersPage: the viewer's projects, a first page: the page must be
	// the one their profile's copies make (projects' memberships are read
	// from an index, which may lag the profile).
	viewersPage
	// viewersProjects: every project of the viewer's (their assigned
	// tasks may come from any of them).
	viewersProjects
	// viewersOverdue: viewersProjects; its default asOf is today's date,
	// which every tag holds.
	viewersOverdue
	// userLookup: shown, and a null answer (a user the viewer may not
	// see, who may become one) is not validated.
	userLookup
	// nodeLookup: shown; a null answer for a user's id is not validated
	// (userLookup), for a server id (a project, task or comment that is
	// gone or out of sight) it is: the viewer's profile says which
	// projects they see, and ids are never reused.
	nodeLookup
)

// rules are the fields an ETag can stand on, "Type.field": every field
// missing here (tasksByTag, sync, a field added to the schema later)
// leaves its answer without one. Introspection (types named __*) depends on the build only.
var rules = map[string]rule{
	"Query.me": shown, "Query.project": shown, "Query.task": shown,
	"Query.user": userLookup, "Query.node": nodeLookup,

	"User.id": shown, "User.name": shown, "User.email": shown, "User.createdAt": shown,
	"User.projects": viewersPage, "User.assignedTasks": viewersProjects,
	"User.overdueTasks": viewersOverdue,

	"Project.id": shown, "Project.name": shown, "Project.description": shown, "Project.owner": shown,
	"Project.members": shown, "Project.createdAt": shown, "Project.tasks": shown, "Project.taskCounts": shown,
	"TaskCounts.total": shown, "TaskCounts.todo": shown, "TaskCounts.inProgress": shown, "TaskCounts.done": shown,
	"ProjectMember.user": shown, "ProjectMember.role": shown,

	"Task.id": shown, "Task.title": shown, "Task.description": shown, "Task.status": shown, "Task.dueDate": shown,
	"Task.project": shown, "Task.assignee": shown, "Task.tags": shown, "Task.comments": shown,
	"Task.createdAt": shown, "Task.updatedAt": shown, "Task.version": shown, "Task.commentCount": shown,
	"Comment.id": shown, "Comment.body": shown, "Comment.author": shown, "Comment.task": shown, "Comment.createdAt": shown,
	"Tag.id": shown, "Tag.name": shown,

	"PageInfo.hasNextPage": shown, "PageInfo.endCursor": shown, "PageInfo.hasPreviousPage": shown, "PageInfo.startCursor": shown,
	"ProjectConnection.edges": shown, "ProjectConnection.nodes": shown, "ProjectConnection.pageInfo": shown,
	"ProjectEdge.cursor": shown, "ProjectEdge.node": shown,
	"TaskConnection.edges": shown, "TaskConnection.nodes": shown, "TaskConnection.pageInfo": shown,
	"TaskEdge.cursor": shown, "TaskEdge.node": shown,
	"CommentConnection.edges": shown, "CommentConnection.nodes": shown, "CommentConnection.pageInfo": shown,
	"CommentEdge.cursor": shown, "CommentEdge.node": shown,
}
