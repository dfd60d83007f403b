package ide

// Example is the query the IDE's editor shows on a first visit (no saved
// tabs): the README's walk through the seven access patterns, each marked
// by its number. The server passes it to Page; ide_test checks it against
// the schema, the root package's tests that it is the README's and that it
// runs on the demo data without errors.
const Example = `{
  me {                                              # 1: the viewer's profile
    name email
    projects(first: 10) {                           # 2: my projects, newest first
      nodes {
        name
        members { role user { name } }
        tasks(first: 5) {                           # 3: by due date, none last
          nodes {
            title dueDate status
            assignee { name }
            tags { name }
            comments(first: 5) { nodes { body author { name } } }   # 5: oldest first
          }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
    assignedTasks { nodes { title dueDate status } } # 4: assigned to me, by due date
    overdueTasks { nodes { title dueDate } }         # 7: not DONE, due before today
  }
  tasksByTag(tag: "urgent") { nodes { title project { name } } }   # 6: in my projects only
}
`
