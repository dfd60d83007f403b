/**
 * @generated SignedSource<<a2359329e5714854a08d0c79ed358eea>>
 * @lightSyntaxTransform
 * @nogrep
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
export type ProjectRole = "MEMBER" | "OWNER" | "%future added value";
export type DashboardProjectBoardQuery$variables = {
  id: string;
};
export type DashboardProjectBoardQuery$data = {
  readonly project: {
    readonly id: string;
    readonly members: ReadonlyArray<{
      readonly role: ProjectRole;
      readonly user: {
        readonly id: string;
        readonly name: string;
      };
    }>;
    readonly name: string;
    readonly taskCounts: {
      readonly done: number;
      readonly inProgress: number;
      readonly todo: number;
    };
  } | null | undefined;
};
export type DashboardProjectBoardQuery = {
  response: DashboardProjectBoardQuery$data;
  variables: DashboardProjectBoardQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "id"
  }
],
v1 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "id",
  "storageKey": null
},
v2 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "name",
  "storageKey": null
},
v3 = [
  {
    "alias": null,
    "args": [
      {
        "kind": "Variable",
        "name": "id",
        "variableName": "id"
      }
    ],
    "concreteType": "Project",
    "kind": "LinkedField",
    "name": "project",
    "plural": false,
    "selections": [
      (v1/*: any*/),
      (v2/*: any*/),
      {
        "alias": null,
        "args": null,
        "concreteType": "TaskCounts",
        "kind": "LinkedField",
        "name": "taskCounts",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "todo",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "inProgress",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "done",
            "storageKey": null
          }
        ],
        "storageKey": null
      },
      {
        "alias": null,
        "args": null,
        "concreteType": "ProjectMember",
        "kind": "LinkedField",
        "name": "members",
        "plural": true,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "role",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "concreteType": "User",
            "kind": "LinkedField",
            "name": "user",
            "plural": false,
            "selections": [
              (v1/*: any*/),
              (v2/*: any*/)
            ],
            "storageKey": null
          }
        ],
        "storageKey": null
      }
    ],
    "storageKey": null
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*: any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "DashboardProjectBoardQuery",
    "selections": (v3/*: any*/),
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*: any*/),
    "kind": "Operation",
    "name": "DashboardProjectBoardQuery",
    "selections": (v3/*: any*/)
  },
  "params": {
    "cacheID": "2ae65275406e2fc0dc0a64ccaf03e06d",
    "id": null,
    "metadata": {},
    "name": "DashboardProjectBoardQuery",
    "operationKind": "query",
    "text": "query DashboardProjectBoardQuery(\n  $id: ID!\n) {\n  project(id: $id) {\n    id\n    name\n    taskCounts {\n      todo\n      inProgress\n      done\n    }\n    members {\n      role\n      user {\n        id\n        name\n      }\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "cea0c94e7da03bc108026b58b369d3b2";

export default node;
