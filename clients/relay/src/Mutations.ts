import { graphql } from 'relay-runtime';

// Changing a task: the card and its project's counts come back, so every
// screen showing them updates.
export const EditTask = graphql`
  mutation MutationsEditTaskMutation($input: UpdateTaskInput!) {
    updateTask(input: $input) {
      ...TaskCard_task
      project {
        id
        taskCounts {
          total
          todo
          inProgress
          done
        }
      }
    }
  }
`;

// Deleting a task answers its id: @deleteEdge takes its edges out of the
// connections given (their __id), and deleteTaskUpdater (environment.ts)
// adjusts its project's counts.
export const DeleteTask = graphql`
  mutation MutationsDeleteTaskMutation($id: ID!, $connections: [ID!]!) {
    deleteTask(id: $id) @deleteEdge(connections: $connections)
  }
`;

export const RemoveMember = graphql`
  mutation MutationsRemoveMemberMutation($projectId: ID!, $userId: ID!) {
    removeProjectMember(projectId: $projectId, userId: $userId) {
      id
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
