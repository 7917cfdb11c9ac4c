// (a) The generated table, guides and version against the committed docs/reference/ and the
// package's manifest.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { GUIDES, GUIDE_TOPICS, OPERATIONS, PARAMS, PROTOCOL_VERSION } from "../../bindings/typescript/src/index.js";

const root = process.env["TERMSPRAWL_ROOT"] ?? "";
const read = (path: string): string => readFileSync(join(root, path), "utf8");

test("OPERATIONS is catalog.json entry for entry, member order included, with a title after each name", () => {
  const catalog: unknown[] = JSON.parse(read("docs/reference/catalog.json"));
  assert.equal(OPERATIONS.length, catalog.length);
  const withoutTitles = OPERATIONS.map(({ title, ...entry }) => {
    assert.ok(title.length > 0, entry.name);
    return entry;
  });
  assert.equal(JSON.stringify(withoutTitles), JSON.stringify(catalog));
  for (const entry of OPERATIONS) {
    assert.deepEqual(Object.keys(entry).slice(0, 2), ["name", "title"]);
  }
});

test("the validator's parameters are the table's, in schema order", () => {
  assert.deepEqual(Object.keys(PARAMS), OPERATIONS.map((entry) => entry.name));
  for (const entry of OPERATIONS) {
    const params = PARAMS[entry.name];
    assert.deepEqual(params.map((param) => param.name), Object.keys(entry.inputSchema.properties), entry.name);
    for (const param of params) {
      assert.equal(param.required, entry.inputSchema.required.includes(param.name), `${entry.name}.${param.name}`);
      const schema = entry.inputSchema.properties[param.name]!;
      if (param.kind === "enum") {
        assert.deepEqual(param.values, schema.enum, `${entry.name}.${param.name}`);
      }
    }
  }
});

test("every guide is the text of docs/reference/guides", () => {
  for (const topic of GUIDE_TOPICS) {
    const markdown = read(`docs/reference/guides/${topic}.md`);
    const body = markdown.slice(markdown.indexOf("-->\n\n") + "-->\n\n".length);
    assert.equal(body.trimEnd(), GUIDES[topic].trimEnd(), topic);
  }
});

test("the package's version is the protocol's", () => {
  const manifest = JSON.parse(read("bindings/typescript/package.json")) as { version: string };
  assert.equal(manifest.version, PROTOCOL_VERSION);
  assert.match(read("docs/reference/README.md"), new RegExp(`Protocol version \`${PROTOCOL_VERSION.replaceAll(".", "\\.")}\``));
});
