import { graphql } from 'relay-runtime';

// The home screen: the viewer's projects with their counts, members and
// first tasks.
export const DashboardQuery = graphql`
  query DashboardQuery {
    me {
      id
      name
      projects(first: 10) @connection(key: "Dashboard_projects") {
        edges {
          node {
            id
            name
            taskCounts {
              total
              todo
              inProgress
              done
            }
            members {
              role
              user {
                id
                name
              }
            }
            tasks(first: 20) @connection(key: "Dashboard_tasks") {
              __id
              edges {
                node {
                  id
                  ...TaskCard_task
                }
              }
            }
          }
        }
      }
    }
  }
`;

// A project's board header: the counts of its columns and its members.
export const ProjectBoardQuery = graphql`
  query DashboardProjectBoardQuery($id: ID!) {
    project(id: $id) {
      id
      name
      taskCounts {
        todo
        inProgress
        done
      }
      members {
        role
        user {
          id
          name
        }
      }
    }
  }
`;
