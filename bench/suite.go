package bench

import "encoding/json"

// Op is one named GraphQL operation of the suite: a screen's query with the
// nested fields it needs.
type Op struct {
	Name string
	// What tells what the operation reads, for the report.
	What  string
	Query string
	Vars  func(f *Fixture) map[string]any
}

// Body returns the operation's POST /query body for the dataset f.
func (o Op) Body(f *Fixture) []byte {
	req := map[string]any{"query": o.Query}
	if o.Vars != nil {
		req["variables"] = o.Vars(f)
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err) // only maps of strings
	}
	return b
}

// Suite returns the operations measured, in report order: the seven access
// patterns, each with the nested fields a real screen asks for, and the
// dashboard that nests them.
func Suite() []Op {
	return []Op{
		{Name: "profile", What: "1: me",
			Query: `query Profile { me { id name email createdAt } }`},
		{Name: "myProjects", What: "2: me → projects(10) → owner, members → user",
			Query: `query MyProjects { me { id projects(first: 10) {
				nodes { id name description createdAt owner { id name } members { role user { id name } } }
				pageInfo { hasNextPage endCursor } } } }`},
		{Name: "projectTasks", What: "3: project → tasks(20) → assignee, tags",
			Query: `query ProjectTasks($id: ID!) { project(id: $id) { id name tasks(first: 20) {
				nodes { id title status dueDate assignee { id name } tags { id name } }
				pageInfo { hasNextPage endCursor } } } }`,
			Vars: func(f *Fixture) map[string]any { return map[string]any{"id": f.ProjectID} }},
		{Name: "assignedTasks", What: "4: me → assignedTasks(20) → project, tags",
			Query: `query AssignedTasks { me { id assignedTasks(first: 20) {
				nodes { id title status dueDate project { id name } tags { id name } }
				pageInfo { hasNextPage endCursor } } } }`},
		{Name: "taskComments", What: "5: task → comments(20) → author",
			Query: `query TaskComments($id: ID!) { task(id: $id) { id title description status dueDate version
				tags { id name } comments(first: 20) { nodes { id body createdAt author { id name } }
				pageInfo { hasNextPage endCursor } } } }`,
			Vars: func(f *Fixture) map[string]any { return map[string]any{"id": f.TaskID} }},
		{Name: "tasksByTag", What: "6: tasksByTag(20) → project, assignee",
			Query: `query TasksByTag($tag: String!) { tasksByTag(tag: $tag, first: 20) {
				nodes { id title status dueDate project { id name } assignee { id name } }
				pageInfo { hasNextPage endCursor } } }`,
			Vars: func(f *Fixture) map[string]any { return map[string]any{"tag": f.Tag} }},
		{Name: "overdueTasks", What: "7: me → overdueTasks(20) → project",
			Query: `query OverdueTasks { me { id overdueTasks(first: 20) {
				nodes { id title status dueDate project { id name } }
				pageInfo { hasNextPage endCursor } } } }`},
		{Name: "dashboard", What: "me → projects(10) → members → user, tasks(20) → assignee, tags, comments(5) → author",
			Query: `query Dashboard { me { id name projects(first: 10) { nodes { id name
				members { role user { id name } }
				tasks(first: 20) { nodes { id title status dueDate assignee { id name } tags { id name }
					comments(first: 5) { nodes { id body author { id name } } pageInfo { hasNextPage } } }
				pageInfo { hasNextPage endCursor } } } } } }`},
	}
}
