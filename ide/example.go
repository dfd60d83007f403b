package ide

// Example is the query the IDE's editor shows on a first visit (no saved
// tabs): the README's walk through the seven access patterns, each marked
// by its number. The server passes it to Page; ide_test checks it against
// the schema, the root package's tests that it is the README's and that it
// runs on the demo data without errors.
const Example = `{
  me {                                              # 1: the viewer's profile
    id name email
    projects(first: 10) {                           # 2: my projects, newest first
      edges { cursor node {
        id name
        members { role user { id name } }
        tasks(first: 5) {                           # 3: by due date, none last
          edges { cursor node {
            id title dueDate status
            assignee { id name }
            tags { id name }
            comments(last: 5) { edges { cursor node { id body author { id name } } } }  # 5: the latest 5
          } }
          pageInfo { hasNextPage endCursor }        # then after: endCursor (or last/before)
        }
      } }
    }
    assignedTasks { edges { cursor node { id title dueDate status } } }  # 4: assigned to me, by due date
    overdueTasks { edges { cursor node { id title dueDate } } }          # 7: not DONE, due before today
  }
  tasksByTag(tag: "urgent") { edges { cursor node { id title project { id name } } } }  # 6: in my projects only
}
`
