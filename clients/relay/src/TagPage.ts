import { graphql } from 'relay-runtime';

// A tag's page by the tag's id (from a task card), its tasks in the
// viewer's projects a page at a time: Tag implements Node, so its fragment
// is refetchable through node(id:).
export const TagPageQuery = graphql`
  query TagPageQuery($id: ID!, $first: Int) {
    node(id: $id) {
      ...TagPage_tag @arguments(first: $first)
    }
  }
`;

export const TagPageFragment = graphql`
  fragment TagPage_tag on Tag
  @refetchable(queryName: "TagPagePaginationQuery")
  @argumentDefinitions(first: { type: "Int", defaultValue: 20 }, after: { type: "String" }) {
    id
    name
    tasks(first: $first, after: $after) @connection(key: "TagPage_tasks") {
      __id
      edges {
        node {
          id
          ...TaskCard_task
        }
      }
    }
  }
`;
