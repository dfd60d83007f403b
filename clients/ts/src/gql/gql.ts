/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query CommentThread($task: ID!, $last: Int!, $before: String) {\n  task(id: $task) {\n    id\n    comments(last: $last, before: $before) {\n      nodes {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasPreviousPage\n        startCursor\n      }\n    }\n  }\n}": typeof types.CommentThreadDocument,
    "query Dashboard($projects: Int = 10, $tasks: Int = 20, $comments: Int = 5) {\n  me {\n    id\n    name\n    email\n    projects(first: $projects) {\n      nodes {\n        ...ProjectHeader\n        tasks(first: $tasks) {\n          nodes {\n            ...TaskCard\n            comments(first: $comments) {\n              nodes {\n                id\n                body\n                createdAt\n                author {\n                  id\n                  name\n                }\n              }\n            }\n          }\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    assignedTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n    overdueTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n  }\n}": typeof types.DashboardDocument,
    "fragment TaskCard on Task {\n  id\n  title\n  status\n  dueDate\n  version\n  assignee {\n    id\n    name\n  }\n  tags {\n    name\n  }\n  commentCount\n}\n\nfragment ProjectHeader on Project {\n  id\n  name\n  description\n  owner {\n    id\n    name\n  }\n  members {\n    role\n    user {\n      id\n      name\n    }\n  }\n  taskCounts {\n    total\n    todo\n    inProgress\n    done\n  }\n}": typeof types.TaskCardFragmentDoc,
    "mutation CreateProject($name: String!, $description: String) {\n  createProject(input: {name: $name, description: $description}) {\n    ...ProjectHeader\n    createdAt\n  }\n}\n\nmutation CreateTask($projectId: ID!, $title: String!, $dueDate: Date, $assigneeId: ID, $tags: [String!]) {\n  createTask(\n    input: {projectId: $projectId, title: $title, dueDate: $dueDate, assigneeId: $assigneeId, tags: $tags}\n  ) {\n    ...TaskCard\n    createdAt\n  }\n}\n\nmutation MoveTask($id: ID!, $status: TaskStatus!, $expectedVersion: Int!) {\n  updateTask(input: {id: $id, status: $status, expectedVersion: $expectedVersion}) {\n    ...TaskCard\n    updatedAt\n  }\n}\n\nmutation UpdateProfile($name: String!, $email: String) {\n  updateProfile(input: {name: $name, email: $email}) {\n    id\n    name\n    email\n  }\n}": typeof types.CreateProjectDocument,
    "query TasksByTag($tag: String!, $first: Int!, $after: String) {\n  tasksByTag(tag: $tag, first: $first, after: $after) {\n    nodes {\n      ...TaskCard\n      project {\n        id\n        name\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}": typeof types.TasksByTagDocument,
};
const documents: Documents = {
    "query CommentThread($task: ID!, $last: Int!, $before: String) {\n  task(id: $task) {\n    id\n    comments(last: $last, before: $before) {\n      nodes {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasPreviousPage\n        startCursor\n      }\n    }\n  }\n}": types.CommentThreadDocument,
    "query Dashboard($projects: Int = 10, $tasks: Int = 20, $comments: Int = 5) {\n  me {\n    id\n    name\n    email\n    projects(first: $projects) {\n      nodes {\n        ...ProjectHeader\n        tasks(first: $tasks) {\n          nodes {\n            ...TaskCard\n            comments(first: $comments) {\n              nodes {\n                id\n                body\n                createdAt\n                author {\n                  id\n                  name\n                }\n              }\n            }\n          }\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    assignedTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n    overdueTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n  }\n}": types.DashboardDocument,
    "fragment TaskCard on Task {\n  id\n  title\n  status\n  dueDate\n  version\n  assignee {\n    id\n    name\n  }\n  tags {\n    name\n  }\n  commentCount\n}\n\nfragment ProjectHeader on Project {\n  id\n  name\n  description\n  owner {\n    id\n    name\n  }\n  members {\n    role\n    user {\n      id\n      name\n    }\n  }\n  taskCounts {\n    total\n    todo\n    inProgress\n    done\n  }\n}": types.TaskCardFragmentDoc,
    "mutation CreateProject($name: String!, $description: String) {\n  createProject(input: {name: $name, description: $description}) {\n    ...ProjectHeader\n    createdAt\n  }\n}\n\nmutation CreateTask($projectId: ID!, $title: String!, $dueDate: Date, $assigneeId: ID, $tags: [String!]) {\n  createTask(\n    input: {projectId: $projectId, title: $title, dueDate: $dueDate, assigneeId: $assigneeId, tags: $tags}\n  ) {\n    ...TaskCard\n    createdAt\n  }\n}\n\nmutation MoveTask($id: ID!, $status: TaskStatus!, $expectedVersion: Int!) {\n  updateTask(input: {id: $id, status: $status, expectedVersion: $expectedVersion}) {\n    ...TaskCard\n    updatedAt\n  }\n}\n\nmutation UpdateProfile($name: String!, $email: String) {\n  updateProfile(input: {name: $name, email: $email}) {\n    id\n    name\n    email\n  }\n}": types.CreateProjectDocument,
    "query TasksByTag($tag: String!, $first: Int!, $after: String) {\n  tasksByTag(tag: $tag, first: $first, after: $after) {\n    nodes {\n      ...TaskCard\n      project {\n        id\n        name\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}": types.TasksByTagDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query CommentThread($task: ID!, $last: Int!, $before: String) {\n  task(id: $task) {\n    id\n    comments(last: $last, before: $before) {\n      nodes {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasPreviousPage\n        startCursor\n      }\n    }\n  }\n}"): (typeof documents)["query CommentThread($task: ID!, $last: Int!, $before: String) {\n  task(id: $task) {\n    id\n    comments(last: $last, before: $before) {\n      nodes {\n        id\n        body\n        createdAt\n        author {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasPreviousPage\n        startCursor\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Dashboard($projects: Int = 10, $tasks: Int = 20, $comments: Int = 5) {\n  me {\n    id\n    name\n    email\n    projects(first: $projects) {\n      nodes {\n        ...ProjectHeader\n        tasks(first: $tasks) {\n          nodes {\n            ...TaskCard\n            comments(first: $comments) {\n              nodes {\n                id\n                body\n                createdAt\n                author {\n                  id\n                  name\n                }\n              }\n            }\n          }\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    assignedTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n    overdueTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n  }\n}"): (typeof documents)["query Dashboard($projects: Int = 10, $tasks: Int = 20, $comments: Int = 5) {\n  me {\n    id\n    name\n    email\n    projects(first: $projects) {\n      nodes {\n        ...ProjectHeader\n        tasks(first: $tasks) {\n          nodes {\n            ...TaskCard\n            comments(first: $comments) {\n              nodes {\n                id\n                body\n                createdAt\n                author {\n                  id\n                  name\n                }\n              }\n            }\n          }\n          pageInfo {\n            hasNextPage\n            endCursor\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    assignedTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n    overdueTasks(first: 10) {\n      nodes {\n        ...TaskCard\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment TaskCard on Task {\n  id\n  title\n  status\n  dueDate\n  version\n  assignee {\n    id\n    name\n  }\n  tags {\n    name\n  }\n  commentCount\n}\n\nfragment ProjectHeader on Project {\n  id\n  name\n  description\n  owner {\n    id\n    name\n  }\n  members {\n    role\n    user {\n      id\n      name\n    }\n  }\n  taskCounts {\n    total\n    todo\n    inProgress\n    done\n  }\n}"): (typeof documents)["fragment TaskCard on Task {\n  id\n  title\n  status\n  dueDate\n  version\n  assignee {\n    id\n    name\n  }\n  tags {\n    name\n  }\n  commentCount\n}\n\nfragment ProjectHeader on Project {\n  id\n  name\n  description\n  owner {\n    id\n    name\n  }\n  members {\n    role\n    user {\n      id\n      name\n    }\n  }\n  taskCounts {\n    total\n    todo\n    inProgress\n    done\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateProject($name: String!, $description: String) {\n  createProject(input: {name: $name, description: $description}) {\n    ...ProjectHeader\n    createdAt\n  }\n}\n\nmutation CreateTask($projectId: ID!, $title: String!, $dueDate: Date, $assigneeId: ID, $tags: [String!]) {\n  createTask(\n    input: {projectId: $projectId, title: $title, dueDate: $dueDate, assigneeId: $assigneeId, tags: $tags}\n  ) {\n    ...TaskCard\n    createdAt\n  }\n}\n\nmutation MoveTask($id: ID!, $status: TaskStatus!, $expectedVersion: Int!) {\n  updateTask(input: {id: $id, status: $status, expectedVersion: $expectedVersion}) {\n    ...TaskCard\n    updatedAt\n  }\n}\n\nmutation UpdateProfile($name: String!, $email: String) {\n  updateProfile(input: {name: $name, email: $email}) {\n    id\n    name\n    email\n  }\n}"): (typeof documents)["mutation CreateProject($name: String!, $description: String) {\n  createProject(input: {name: $name, description: $description}) {\n    ...ProjectHeader\n    createdAt\n  }\n}\n\nmutation CreateTask($projectId: ID!, $title: String!, $dueDate: Date, $assigneeId: ID, $tags: [String!]) {\n  createTask(\n    input: {projectId: $projectId, title: $title, dueDate: $dueDate, assigneeId: $assigneeId, tags: $tags}\n  ) {\n    ...TaskCard\n    createdAt\n  }\n}\n\nmutation MoveTask($id: ID!, $status: TaskStatus!, $expectedVersion: Int!) {\n  updateTask(input: {id: $id, status: $status, expectedVersion: $expectedVersion}) {\n    ...TaskCard\n    updatedAt\n  }\n}\n\nmutation UpdateProfile($name: String!, $email: String) {\n  updateProfile(input: {name: $name, email: $email}) {\n    id\n    name\n    email\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query TasksByTag($tag: String!, $first: Int!, $after: String) {\n  tasksByTag(tag: $tag, first: $first, after: $after) {\n    nodes {\n      ...TaskCard\n      project {\n        id\n        name\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}"): (typeof documents)["query TasksByTag($tag: String!, $first: Int!, $after: String) {\n  tasksByTag(tag: $tag, first: $first, after: $after) {\n    nodes {\n      ...TaskCard\n      project {\n        id\n        name\n      }\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;