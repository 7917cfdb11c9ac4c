// (c) A tool server built on the bindings (server.ts) passes `termsprawl-conformance --level
// protocol`, and the typed client (client.ts) calls it.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { call, valueOf } from "./client.js";
import { serve } from "./server.js";

const conformance = process.env["TERMSPRAWL_CONFORMANCE"] ?? "termsprawl-conformance";

interface Report {
  readonly version: string;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly rules: readonly { readonly id: string; readonly verdict: string; readonly note?: string }[];
}

/** Runs the conformance binary to its end: exit code, stdout, stderr. */
function run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(conformance, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** The report of one run at `level`, with every failed rule's line in the assertion's message. */
async function check(sessionFile: string, level: "protocol" | "strict"): Promise<Report> {
  const { code, stdout, stderr } = await run(["--session", sessionFile, "--level", level, "--json"]);
  let report: Report;
  try {
    report = JSON.parse(stdout) as Report;
  } catch {
    assert.fail(`--level ${level}: not a JSON report (exit ${code}): ${stdout}\n${stderr}`);
  }
  const failures = report.rules.filter((rule) => rule.verdict === "FAIL").map((rule) => JSON.stringify(rule));
  assert.deepEqual(failures, [], `--level ${level}: ${report.failed} rules failed`);
  assert.equal(code, 0, stderr);
  assert.equal(report.version, "1.3");
  assert.ok(report.rules.some((rule) => rule.id === "body.stalled" && rule.verdict === "PASS"));
  return report;
}

test("a server on the bindings passes termsprawl-conformance --level protocol, and strict too", async () => {
  const userData = mkdtempSync(join(tmpdir(), "termsprawl-ts-"));
  const served = await serve(userData);
  try {
    const info = valueOf(await call(served.sessionFile, { operation: "session_info", args: {} })) as { operations: string[] };
    assert.ok(info.operations.includes("terminal_wait"), JSON.stringify(info));
    const refused = await call(served.sessionFile, { operation: "terminal_read", args: { nodeId: "absent" } });
    assert.deepEqual(refused, { ok: false, error: "Local terminal not found in this project" });

    // Both levels at once: each run waits about 15 s for the 408 of its stalled body.
    const [protocol, strict] = await Promise.all([
      check(served.sessionFile, "protocol"),
      check(served.sessionFile, "strict"),
    ]);
    assert.ok(protocol.passed > 400, `${protocol.passed} passed at --level protocol`);
    // The validator keeps the rules that are ours only (§5 strict): prototype-like names, NUL in items.
    const strictRules = ["validate.prototype-name:terminal_read", "validate.item-nul:canvas_select.nodeIds", "body.stalled-prompt"];
    for (const id of strictRules) {
      assert.equal(strict.rules.find((rule) => rule.id === id)?.verdict, "PASS", id);
      assert.equal(protocol.rules.find((rule) => rule.id === id)?.verdict, "SKIP", id);
    }
  } finally {
    await served.close();
    rmSync(userData, { recursive: true, force: true });
  }
});
