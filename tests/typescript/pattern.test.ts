// (d) The pattern dialect (spec/protocol.md §5.1) in TypeScript: every pattern the generated
// checker accepts is a valid `RegExp` with the `u` flag and means there what the spec says (ASCII
// `\d`, `\w`, `\b`, ECMAScript's `\s`, one line at a time); the checker gives the Rust checker's
// answers to 20 000 generated patterns (the same generator and pieces as
// protocol/src/pattern/tests.rs, whose fingerprint both tests require); and every accepted one
// matches each of a set of lines where the Rust translation matches it (a second fingerprint).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { checkPattern } from "../../bindings/typescript/src/index.js";

/** The fingerprint protocol/src/pattern/tests.rs requires of the same patterns. */
const GENERATED_FINGERPRINT = "6d72c4fccdf03359";

/** The fingerprint of the matches of the same patterns that protocol/src/pattern/tests.rs requires. */
const MATCHES_FINGERPRINT = "451486005f99e596";

/** The lines of protocol/src/pattern/tests.rs, in its order. */
const LINES = [
  "",
  "a",
  "aZ0é😀 -&~/#,:<=!.^$|(?:)[]{}*+?",
  "Zaa00 - é-é_x",
  "\t\u000b\u000c\r a\u00a0\u0085\ufeff\u2028b\u2029",
  "A\u00e9\u{1F600}AA\\q]-[",
  "FAILED test_x-call listening on port 8080",
  "{2}{1,3}{2,}{0}{1000}",
];

/** The pieces of protocol/src/pattern/tests.rs, in its order. */
const PIECES = [
  "a", "Z", "0", "é", "😀", " ", "-", "&", "~", "/", "#", ",", ":", "<", "=", "!", ".", "^", "$",
  "|", "|", "(", "(", ")", ")", "(?:", "(?=", "(?<", "[", "[", "[^", "]", "]", "{", "}", "*",
  "+", "?", "{2}", "{1,3}", "{2,}", "{0}", "{1000}", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S",
  "\\b", "\\B", "\\t", "\\r", "\\v", "\\f", "\\x41", "\\x0a", "\\u00e9", "\\u{1F600}", "\\-",
  "\\]", "\\[", "\\\\", "\\.", "\\/", "\\n", "\\1", "\\q", "\\", "a-z", "z-a", "\\d-", "--",
];

const MASK = (1n << 64n) - 1n;

/** The Rust test's xorshift64* generator. */
class Generator {
  constructor(private state: bigint) {}

  next(below: number): number {
    this.state ^= this.state >> 12n;
    this.state = (this.state ^ (this.state << 25n)) & MASK;
    this.state ^= this.state >> 27n;
    const value = ((this.state * 0x2545f4914f6cdd1dn) & MASK) >> 33n;
    return Number(value % BigInt(below));
  }
}

function generated(count: number): string[] {
  const generator = new Generator(0x9e3779b97f4a7c15n);
  const patterns: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const length = 1 + generator.next(12);
    let pattern = "";
    for (let piece = 0; piece < length; piece += 1) {
      pattern += PIECES[generator.next(PIECES.length)]!;
    }
    patterns.push(pattern);
  }
  return patterns;
}

test("the checker gives the Rust checker's answers to the generated patterns", () => {
  let hash = 0xcbf29ce484222325n;
  for (const pattern of generated(20_000)) {
    const answer = checkPattern(pattern) ?? "ok";
    for (const byte of new TextEncoder().encode(`${pattern}\u0000${answer}\n`)) {
      hash ^= BigInt(byte);
      hash = (hash * 0x100000001b3n) & MASK;
    }
  }
  assert.equal(hash.toString(16).padStart(16, "0"), GENERATED_FINGERPRINT);
});

test("the accepted generated patterns match where the Rust translation matches", () => {
  let hash = 0xcbf29ce484222325n;
  let matched = 0;
  for (const pattern of generated(20_000).filter((pattern) => checkPattern(pattern) === undefined)) {
    const regex = new RegExp(pattern, "u");
    for (const line of LINES) {
      const index = line.search(regex);
      matched += index < 0 ? 0 : 1;
      const at = index < 0 ? "-" : String(Array.from(line.slice(0, index)).length);
      for (const byte of new TextEncoder().encode(`${pattern}\u0000${at}\n`)) {
        hash ^= BigInt(byte);
        hash = (hash * 0x100000001b3n) & MASK;
      }
    }
  }
  assert.ok(matched > 1_000, `only ${matched} matches`);
  assert.equal(hash.toString(16).padStart(16, "0"), MATCHES_FINGERPRINT);
});

test("every pattern the checker accepts is a RegExp with the u flag", () => {
  interface Case {
    readonly body: string;
  }
  const root = process.env["TERMSPRAWL_ROOT"] ?? "";
  const cases = JSON.parse(readFileSync(join(root, "protocol/tests/validation-cases.json"), "utf8")) as Case[];
  const patterns = generated(20_000);
  for (const item of cases) {
    const body = JSON.parse(item.body) as { args?: { pattern?: unknown } } | null;
    const pattern = body?.args?.pattern;
    if (typeof pattern === "string" && !pattern.includes("«")) {
      patterns.push(pattern);
    }
  }
  let accepted = 0;
  for (const pattern of patterns) {
    if (checkPattern(pattern) === undefined) {
      accepted += 1;
      assert.doesNotThrow(() => new RegExp(pattern, "u"), pattern);
    }
  }
  assert.ok(accepted > 2_000, `${accepted} accepted`);
});

test("a pattern means the same in ECMAScript as the spec says", () => {
  const at = (pattern: string, line: string): number => {
    assert.equal(checkPattern(pattern), undefined, pattern);
    return line.search(new RegExp(pattern, "u"));
  };
  // `\d`, `\w` and `\b` are ASCII; `\s` is ECMAScript's white space; `.` no line terminator.
  assert.equal(at("\\d", "٣3"), 1);
  assert.equal(at("\\w+", "é_x"), 1);
  assert.equal(at("\\bfoo\\b", "éfooé"), 1);
  assert.equal(at("\\Bfoo", "éfoo"), -1);
  assert.equal(at("\\s", "a\u0085\ufeff"), 2);
  assert.equal(at("a.b", "a\u2028b a😀b"), 4);
  assert.equal(at("^ok$", "ok"), 0);
  assert.equal(at("a+?|b", "xaa"), 1);
});
