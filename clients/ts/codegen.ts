// graphql-codegen configuration of the TypeScript client: types for the
// operations in ../operations from the running server's introspection, and
// the persisted-documents manifest the server's -trusted-documents loads.
// scripts/clients starts the server and sets TASKGRAPH_SCHEMA; run that, not
// this file directly.
import type { CodegenConfig } from '@graphql-codegen/cli';

const schema = process.env.TASKGRAPH_SCHEMA;
if (!schema) {
  throw new Error('TASKGRAPH_SCHEMA is not set: run scripts/clients (it starts the server and points this at its /query)');
}

const config: CodegenConfig = {
  schema,
  documents: ['../operations/*.graphql'],
  ignoreNoDocuments: false,
  generates: {
    './src/gql/': {
      preset: 'client',
      presetConfig: {
        // persisted-documents.json: {"<sha256 hex of the document>": "<document>"}
        persistedDocuments: { hashAlgorithm: 'sha256' },
      },
      config: {
        strictScalars: true,
        scalars: { Date: 'string', Time: 'string' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
