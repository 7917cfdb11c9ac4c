// (b) The generated validator over the request cases the Rust validator's tests use
// (protocol/tests/validation-cases.json): the same message, case for case.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { memberNames, parseBody, validate } from "../../bindings/typescript/src/index.js";

interface Case {
  readonly case: string;
  readonly body: string;
  readonly error: string | null;
  readonly args?: string;
}

const root = process.env["TERMSPRAWL_ROOT"] ?? "";
const cases = JSON.parse(readFileSync(join(root, "protocol/tests/validation-cases.json"), "utf8")) as Case[];

/** `body` with every `«TEXT*N»` replaced by `TEXT` repeated `N` times. */
function expand(body: string): string {
  return body.replace(/«(.*?)\*([0-9]+)»/gsu, (_, text: string, count: string) => text.repeat(Number(count)));
}

test("the case file's repetition expands", () => {
  assert.equal(expand('["«ab*3»x","«😀*2»"]'), '["abababx","😀😀"]');
});

test("every shared case gets the Rust validator's exact message", () => {
  assert.ok(cases.length > 100, `${cases.length} cases`);
  const failures: string[] = [];
  for (const item of cases) {
    const checked = validate(parseBody(expand(item.body)));
    const got = checked.ok ? `accepted ${JSON.stringify(checked.request.args)}` : checked.error;
    const passed =
      item.error !== null
        ? !checked.ok && checked.error === item.error
        : checked.ok && (item.args === undefined || JSON.stringify(checked.request.args) === item.args);
    if (!passed) {
      failures.push(`${item.case}: wanted ${item.error ?? `accepted ${item.args ?? ""}`}, got ${got}`);
    }
  }
  assert.deepEqual(failures, []);
});

test("parseBody keeps document order, the last of repeated members and __proto__ as a member", () => {
  const body = parseBody('{"2":1,"b":{"__proto__":1,"a":2,"__proto__":3},"1":0,"2":5}') as Record<string, unknown>;
  assert.deepEqual(memberNames(body), ["2", "b", "1"]);
  assert.equal(body["2"], 5);
  const inner = body["b"] as Record<string, unknown>;
  assert.deepEqual(memberNames(inner), ["__proto__", "a"]);
  assert.equal(Object.getPrototypeOf(inner), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(inner, "__proto__")?.value, 3);
  assert.throws(() => parseBody('{"a":'), SyntaxError);
  assert.throws(() => parseBody(""), SyntaxError);
});
