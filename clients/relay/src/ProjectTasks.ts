import { graphql } from 'relay-runtime';

// A project's tasks, paged both ways (usePaginationFragment's loadNext and
// loadPrevious): start with first (forwards) or last (backwards from the
// end).
export const ProjectTasksQuery = graphql`
  query ProjectTasksQuery($id: ID!, $first: Int, $last: Int) {
    project(id: $id) {
      ...ProjectTasks_project @arguments(first: $first, last: $last)
    }
  }
`;

export const ProjectTasksFragment = graphql`
  fragment ProjectTasks_project on Project
  @refetchable(queryName: "ProjectTasksPaginationQuery")
  @argumentDefinitions(
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    id
    tasks(first: $first, after: $after, last: $last, before: $before) @connection(key: "ProjectTasks_tasks") {
      edges {
        node {
          id
          ...TaskCard_task
        }
      }
    }
  }
`;
