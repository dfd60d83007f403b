/**
 * @generated SignedSource<<928723c41d3d310432bdae4b27606b02>>
 * @lightSyntaxTransform
 * @nogrep
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
export type MutationsDeleteTaskMutation$variables = {
  connections: ReadonlyArray<string>;
  id: string;
};
export type MutationsDeleteTaskMutation$data = {
  readonly deleteTask: string;
};
export type MutationsDeleteTaskMutation = {
  response: MutationsDeleteTaskMutation$data;
  variables: MutationsDeleteTaskMutation$variables;
};

const node: ConcreteRequest = (function(){
var v0 = {
  "defaultValue": null,
  "kind": "LocalArgument",
  "name": "connections"
},
v1 = {
  "defaultValue": null,
  "kind": "LocalArgument",
  "name": "id"
},
v2 = [
  {
    "kind": "Variable",
    "name": "id",
    "variableName": "id"
  }
],
v3 = {
  "alias": null,
  "args": (v2/*: any*/),
  "kind": "ScalarField",
  "name": "deleteTask",
  "storageKey": null
};
return {
  "fragment": {
    "argumentDefinitions": [
      (v0/*: any*/),
      (v1/*: any*/)
    ],
    "kind": "Fragment",
    "metadata": null,
    "name": "MutationsDeleteTaskMutation",
    "selections": [
      (v3/*: any*/)
    ],
    "type": "Mutation",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": [
      (v1/*: any*/),
      (v0/*: any*/)
    ],
    "kind": "Operation",
    "name": "MutationsDeleteTaskMutation",
    "selections": [
      (v3/*: any*/),
      {
        "alias": null,
        "args": (v2/*: any*/),
        "filters": null,
        "handle": "deleteEdge",
        "key": "",
        "kind": "ScalarHandle",
        "name": "deleteTask",
        "handleArgs": [
          {
            "kind": "Variable",
            "name": "connections",
            "variableName": "connections"
          }
        ]
      }
    ]
  },
  "params": {
    "cacheID": "faddf450ad2a79dfbd4c871a54023f89",
    "id": null,
    "metadata": {},
    "name": "MutationsDeleteTaskMutation",
    "operationKind": "mutation",
    "text": "mutation MutationsDeleteTaskMutation(\n  $id: ID!\n) {\n  deleteTask(id: $id)\n}\n"
  }
};
})();

(node as any).hash = "e82436c18a3c151dec6530044fb27244";

export default node;
