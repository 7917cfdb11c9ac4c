// A typed client of the tool route, built on the generated bindings: what an app or an agent
// written in TypeScript does to call an operation. It reads the session file and the
// endpoint.json two levels above it on every call (spec/protocol.md §7.1) and POSTs one request.
// The type checker is part of the proof: the requests below must compile, and each one under an
// expect-error directive must not (tsc fails when such a directive finds no error).

import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

import {
  toolRequest,
  type OperationRequest,
  type TerminalWaitUntil,
  type ToolEndpoint,
  type ToolResult,
  type ToolSession,
} from "../../bindings/typescript/src/index.js";

/** Calls one operation with the session of `sessionFile`. */
export async function call(sessionFile: string, request: OperationRequest): Promise<ToolResult> {
  const session = JSON.parse(await readFile(sessionFile, "utf8")) as ToolSession;
  const endpointFile = join(dirname(dirname(resolve(sessionFile))), "endpoint.json");
  const endpoint = JSON.parse(await readFile(endpointFile, "utf8")) as ToolEndpoint;
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json" },
    body: JSON.stringify(toolRequest(request)),
  });
  return (await response.json()) as ToolResult;
}

/** The value of a result, or an error with its message. */
export function valueOf(result: ToolResult): unknown {
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result.value;
}

const until: TerminalWaitUntil = "text";

/** Requests of several operations, typed by the discriminated union. */
export const EXAMPLES: readonly OperationRequest[] = [
  { operation: "session_info", args: {} },
  { operation: "guide_read", args: { topic: "terminal" } },
  { operation: "terminal_read", args: { nodeId: "terminal-1", maxChars: 2000 } },
  { operation: "terminal_wait", args: { nodeId: "terminal-1", until, text: "$ ", timeoutMs: 5000 } },
  { operation: "terminal_input", args: { nodeId: "terminal-1", keys: ["Escape", "C-c"] } },
  { operation: "terminal_run", args: { command: "make test", keep: false } },
];

export const REFUSED_BY_THE_TYPES: readonly OperationRequest[] = [
  // @ts-expect-error: `later` is not a value of terminal_wait's until.
  { operation: "terminal_wait", args: { nodeId: "terminal-1", until: "later" } },
  // @ts-expect-error: terminal_read requires nodeId.
  { operation: "terminal_read", args: { maxChars: 10 } },
  // @ts-expect-error: session_info takes no arguments.
  { operation: "session_info", args: { nodeId: "terminal-1" } },
  // @ts-expect-error: no such operation.
  { operation: "terminal_reed", args: {} },
];
