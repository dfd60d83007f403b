/**
 * @generated SignedSource<<4270c49db2d5961763d6b6e9a069f733>>
 * @lightSyntaxTransform
 * @nogrep
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
export type ProjectRole = "MEMBER" | "OWNER" | "%future added value";
export type MutationsRemoveMemberMutation$variables = {
  projectId: string;
  userId: string;
};
export type MutationsRemoveMemberMutation$data = {
  readonly removeProjectMember: {
    readonly id: string;
    readonly members: ReadonlyArray<{
      readonly role: ProjectRole;
      readonly user: {
        readonly id: string;
        readonly name: string;
      };
    }>;
  };
};
export type MutationsRemoveMemberMutation = {
  response: MutationsRemoveMemberMutation$data;
  variables: MutationsRemoveMemberMutation$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "projectId"
  },
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "userId"
  }
],
v1 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "id",
  "storageKey": null
},
v2 = [
  {
    "alias": null,
    "args": [
      {
        "kind": "Variable",
        "name": "projectId",
        "variableName": "projectId"
      },
      {
        "kind": "Variable",
        "name": "userId",
        "variableName": "userId"
      }
    ],
    "concreteType": "Project",
    "kind": "LinkedField",
    "name": "removeProjectMember",
    "plural": false,
    "selections": [
      (v1/*: any*/),
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
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "name",
                "storageKey": null
              }
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
    "name": "MutationsRemoveMemberMutation",
    "selections": (v2/*: any*/),
    "type": "Mutation",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*: any*/),
    "kind": "Operation",
    "name": "MutationsRemoveMemberMutation",
    "selections": (v2/*: any*/)
  },
  "params": {
    "cacheID": "785080c9451e07d503ef424917569b7e",
    "id": null,
    "metadata": {},
    "name": "MutationsRemoveMemberMutation",
    "operationKind": "mutation",
    "text": "mutation MutationsRemoveMemberMutation(\n  $projectId: ID!\n  $userId: ID!\n) {\n  removeProjectMember(projectId: $projectId, userId: $userId) {\n    id\n    members {\n      role\n      user {\n        id\n        name\n      }\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "45560737ffcf43455882a100ca1de4da";

export default node;
