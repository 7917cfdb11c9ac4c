// A tiny tool server built on the generated bindings, as the desktop app would build one: Node's
// http, the discovery files of spec/protocol.md §2.2, the handling order of §6.2, the status and
// body matrix of §6.3 and the generated validator (§5), in front of a stub runtime that answers
// the operations a read-only conformance run calls plausibly (an empty canvas but for the
// caller's own terminal, the generated guides) and refuses the others.

import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

import {
  GUIDES,
  OPERATIONS,
  parseBody,
  validate,
  type GuideTopic,
  type IntegrationStatus,
  type ToolEndpoint,
  type ToolRequest,
  type ToolResult,
  type ToolSession,
} from "../../bindings/typescript/src/index.js";

/** The largest body accepted (§6.2 step 4). */
const MAX_BODY = 131_072;

/** A running server: its data directory D, the session file of its one agent, and how to stop. */
export interface Served {
  readonly dataDir: string;
  readonly sessionFile: string;
  close(): Promise<void>;
}

/** One live session of the server. */
interface Session {
  readonly identity: { readonly nodeId: string; readonly projectId: string };
  readonly token: string;
  status: IntegrationStatus;
}

/** Starts a server whose D is `<userData>/agent-tools`, with one provisioned agent session. */
export async function serve(userData: string): Promise<Served> {
  const dataDir = join(userData, "agent-tools");
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o700);
  mkdirSync(join(dataDir, "sessions"), { mode: 0o700 });
  const instanceId = randomUUID();
  const session: Session = {
    identity: { nodeId: "agent-1", projectId: "project-1" },
    token: randomBytes(32).toString("hex"),
    status: {
      state: "needs-setup",
      adapter: "claude-mcp",
      version: "unknown",
      reason: "Waiting for the agent to connect to MCP",
    },
  };
  const sessions = [session];
  const sessionFile = join(dataDir, "sessions", `${session.identity.nodeId}.json`);
  const stored: ToolSession = { ...session.identity, token: session.token, status: session.status };
  writeAtomically(sessionFile, stored);
  const lockFile = join(dataDir, "server.lock");
  writeFileSync(lockFile, JSON.stringify({ pid: process.pid, instanceId }), { flag: "wx", mode: 0o600 });

  // Node answers a request not received within requestTimeout with 408 and Connection: close,
  // checking every connectionsCheckingInterval (§6.3); 15 s like our servers.
  const server = createServer({ requestTimeout: 15_000, headersTimeout: 15_000, connectionsCheckingInterval: 1_000 });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response, { sessions, dataDir, instanceId });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  const endpointFile = join(dataDir, "endpoint.json");
  const endpoint: ToolEndpoint = { url: `http://127.0.0.1:${port}/call`, instanceId };
  writeAtomically(endpointFile, endpoint);

  return {
    dataDir,
    sessionFile,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(lockFile, { force: true });
      const current = JSON.parse(readFileSync(endpointFile, "utf8")) as ToolEndpoint;
      if (current.instanceId === instanceId) {
        rmSync(endpointFile, { force: true });
      }
    },
  };
}

interface State {
  readonly sessions: Session[];
  readonly dataDir: string;
  readonly instanceId: string;
}

/** §2.3: compact, through a `<path>.<uuid>.tmp` file of mode 0600 renamed over the target. */
function writeAtomically(path: string, value: unknown): void {
  const temporary = `${path}.${randomUUID()}.tmp`;
  writeFileSync(temporary, JSON.stringify(value), { mode: 0o600 });
  renameSync(temporary, path);
  chmodSync(path, 0o600);
}

/** The handling order of §6.2. */
function handle(request: IncomingMessage, response: ServerResponse, state: State): void {
  const answer = (status: number, result: ToolResult): void => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(result));
  };
  // 1. Origin.
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== "") {
    request.resume();
    return answer(403, { ok: false, error: "Unsupported request" });
  }
  // 2. Auth: a leading `Bearer ` removed, then a constant-time comparison with every token.
  const header = request.headers.authorization ?? "";
  const presented = Buffer.from(header.startsWith("Bearer ") ? header.slice("Bearer ".length) : header);
  const caller = state.sessions.find((session) => {
    const token = Buffer.from(session.token);
    return token.length === presented.length && timingSafeEqual(token, presented);
  });
  if (caller === undefined) {
    request.resume();
    return answer(401, { ok: false, error: "Unknown or revoked session" });
  }
  // 3. Routing: the path up to the first `?`.
  const path = (request.url ?? "").split("?")[0];
  if (request.method !== "POST" || path !== "/call") {
    request.resume();
    return answer(404, { ok: false, error: "Unsupported request" });
  }
  // 4. Body, counted while it streams.
  const chunks: Buffer[] = [];
  let size = 0;
  request.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY) {
      chunks.push(chunk);
    }
  });
  request.on("end", () => {
    if (size > MAX_BODY) {
      return answer(400, { ok: false, error: "Request too large" });
    }
    // 5. Parse, with the parser's message.
    let body: unknown;
    try {
      body = parseBody(Buffer.concat(chunks).toString("utf8"));
    } catch (error) {
      return answer(400, { ok: false, error: (error as Error).message });
    }
    // 6. Validate, then invoke.
    const checked = validate(body);
    if (!checked.ok) {
      return answer(400, { ok: false, error: checked.error });
    }
    const result = invoke(caller, checked.request, state);
    answer(result.ok ? 200 : 400, result);
  });
}

/** The stub runtime. */
function invoke(caller: Session, request: ToolRequest, state: State): ToolResult {
  const args = request.args;
  const { nodeId, projectId } = caller.identity;
  const sameProject = state.sessions.filter((session) => session.identity.projectId === projectId);
  switch (request.operation) {
    case "session_info":
      // An MCP adapter's session turns connected, in memory only (§6.5).
      caller.status = { ...caller.status, state: "connected", reason: "Authenticated tool connection established" };
      return {
        ok: true,
        value: {
          nodeId,
          projectId,
          instanceId: state.instanceId,
          host: "local",
          status: caller.status,
          appVersion: "typescript-bindings-test",
          preferencesFile: join(state.dataDir, "preferences.json"),
          guidesDirectory: join(state.dataDir, "launch", nodeId, "skills"),
          browserEnabled: false,
          operations: OPERATIONS.map((entry) => entry.name).filter((name) => !name.startsWith("browser_")),
        },
      };
    case "guide_read":
      return { ok: true, value: GUIDES[args["topic"] as GuideTopic] };
    case "canvas_list":
      return { ok: true, value: [{ nodeId, kind: "terminal", title: "agent", x: 0, y: 0, width: 640, height: 400 }] };
    case "agent_status":
      return { ok: true, value: sameProject.map((session) => ({ ...session.identity, status: session.status })) };
    case "agent_cards":
      return { ok: true, value: sameProject.map((session) => ({ nodeId: session.identity.nodeId, enabledPeerIds: [] })) };
    case "context_read":
      return { ok: true, value: { text: "", reader: "claude-jsonl" } };
    case "terminal_read": {
      if (args["nodeId"] !== nodeId) {
        return { ok: false, error: "Local terminal not found in this project" };
      }
      const screen = "$ ";
      const since = typeof args["since"] === "number" ? Math.max(0, Math.floor(args["since"])) : 0;
      const requested = typeof args["maxChars"] === "number" ? args["maxChars"] : 16_000;
      const limit = Math.ceil(Math.min(Math.max(requested, 1), 100_000));
      const output = screen.slice(since).slice(-limit);
      return { ok: true, value: { nodeId, output, cursor: screen.length, running: true, exitCode: null, signal: null } };
    }
    case "terminal_wait":
      if (args["nodeId"] !== nodeId) {
        return { ok: false, error: "Local terminal not found in this project" };
      }
      return {
        ok: true,
        value: { nodeId, reached: false, running: true, exitCode: null, signal: null, output: "", truncated: false, cursor: 2 },
      };
    default:
      return { ok: false, error: `This stub runtime does not run ${request.operation}` };
  }
}
