// The little of Node.js the checks use (no @types/node: its version would
// have to follow the runtime's).
declare const process: {
  env: Record<string, string | undefined>;
  stdout: { write(s: string): boolean };
  exit(code?: number): never;
};

declare module 'node:util' {
  /** Formats like console.log: printf-style placeholders, then the rest. */
  export function format(...args: unknown[]): string;
  export function isDeepStrictEqual(a: unknown, b: unknown): boolean;
}
