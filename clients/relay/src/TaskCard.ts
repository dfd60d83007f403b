import { graphql } from 'relay-runtime';

// What a task card shows; the tags carry their ids (a tag's page: TagPage).
export const TaskCard = graphql`
  fragment TaskCard_task on Task {
    id
    title
    status
    dueDate
    version
    assignee {
      id
      name
    }
    tags {
      id
      name
    }
    commentCount
  }
`;
