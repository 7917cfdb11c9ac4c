// The server's request validation of spec/protocol.md §5, step for step as
// protocol/src/validate.rs does it: the checks in the contract's order, the first failure wins,
// with the contract's exact messages. The algorithm is this template, written once in the
// generator (xtask/src/codegen/typescript/validate.ts); every datum it reads (the operations'
// parameters, kinds, required flags, enum values, limits, the key grammar and the messages) is
// generated from the protocol crate into validation-data.ts.

import type { OperationName } from "./operations.js";
import { checkPattern } from "./pattern.js";
import type { ToolRequest } from "./types.js";
import {
  KEY_MODIFIERS,
  MAX_ITEM_UTF16,
  MAX_STRING_UTF16,
  MESSAGES,
  MAX_SEARCH_CONTEXT,
  MAX_SEARCH_LIMIT,
  MAX_WAIT_TEXTS,
  NAMED_KEYS,
  PARAMS,
  type ParamRule,
} from "./validation-data.js";

/** The outcome of {@link validate}: the accepted request, or the exact `error` of an HTTP 400. */
export type Validation =
  | { readonly ok: true; readonly request: ToolRequest }
  | { readonly ok: false; readonly error: string };

/**
 * Parses a request body as JSON text, keeping the document order of every object's members
 * (JavaScript enumerates integer-like names first, §5 examines members in document order).
 * Invalid JSON throws the `SyntaxError` of `JSON.parse`, whose message is the parser's message
 * of spec/protocol.md §6.3. When an object repeats a member, the last occurrence wins.
 */
export function parseBody(text: string): unknown {
  JSON.parse(text);
  return new OrderedParser(text).value();
}

/** The member names of `object` in document order when {@link parseBody} made it. */
export function memberNames(object: object): readonly string[] {
  return ORDER.get(object) ?? Object.keys(object);
}

/**
 * Validates a parsed request body against the operation table. On success the request is
 * returned with `args` unchanged and `operation` set. Give it the value of {@link parseBody}:
 * for a value of `JSON.parse`, members are examined in JavaScript's enumeration order, which
 * differs from document order only for integer-like names (no argument has one).
 */
export function validate(body: unknown): Validation {
  // Step 1: an object or an array.
  if (body === null || typeof body !== "object") {
    return failure(MESSAGES.expectedObject);
  }
  const object = Array.isArray(body) ? undefined : (body as Record<string, unknown>);
  // Step 2: a known operation.
  const operation = object !== undefined && own(object, "operation") ? object["operation"] : undefined;
  if (typeof operation !== "string" || !own(PARAMS, operation)) {
    return failure(MESSAGES.unknownOperation);
  }
  const name = operation as OperationName;
  const params: readonly ParamRule[] = PARAMS[name];
  // Step 3: an args object.
  const args = object !== undefined && own(object, "args") ? object["args"] : undefined;
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return failure(MESSAGES.expectedArgsObject);
  }
  const members = args as Record<string, unknown>;
  // Step 4: the required arguments, in table order.
  const missing = params.find((param) => param.required && !own(members, param.name));
  if (missing !== undefined) {
    return failure(MESSAGES.missingArgument + missing.name);
  }
  // Step 5: each member, in document order.
  for (const member of memberNames(members)) {
    const param = params.find((candidate) => candidate.name === member);
    if (param === undefined) {
      return failure(MESSAGES.unknownArgument + member);
    }
    if (!valueFits(param, members[member])) {
      return failure(MESSAGES.invalidArgument + member);
    }
  }
  // Step 6: the rules of one operation.
  const refused = operationRules(name, members);
  if (refused !== undefined) {
    return failure(refused);
  }
  // Step 7: accepted, args unchanged.
  return { ok: true, request: { operation: name, args: members } };
}

/** Whether `key` is a key of the grammar of `terminal_input`'s `keys` (protocol 1.4.0). */
export function isValidKey(key: string): boolean {
  const held = KEY_MODIFIERS.map(() => false);
  let rest = key;
  // A modifier prefix counts only when something follows it (`C--` is Ctrl and `-`).
  for (;;) {
    const index = KEY_MODIFIERS.findIndex(
      (prefix) => rest.length > prefix.length && rest.startsWith(prefix),
    );
    if (index < 0) {
      break;
    }
    if (held[index] === true) {
      return false;
    }
    held[index] = true;
    rest = rest.slice(KEY_MODIFIERS[index]!.length);
  }
  if ((NAMED_KEYS as readonly string[]).includes(rest)) {
    return true;
  }
  const chars = Array.from(rest);
  const modified = held.some((flag) => flag);
  const only = chars.length === 1 ? chars[0]! : undefined;
  return modified && only !== undefined && !CONTROL.test(only) && !WHITE_SPACE.test(only);
}

/**
 * The rules of protocols 1.4.0 and 1.5.0 that step 5's per-member checks cannot express, run
 * once every member passed them: the whole message, or `undefined`.
 */
function operationRules(operation: OperationName, args: Record<string, unknown>): string | undefined {
  const invalid = (name: string): string => MESSAGES.invalidArgument + name;
  const badPattern = (name: string, reason: string): string =>
    MESSAGES.invalidArgument + name + MESSAGES.patternReason + reason;
  switch (operation) {
    case "terminal_input": {
      const keys = args["keys"];
      if (Array.isArray(keys) && !keys.filter(isString).every(isValidKey)) {
        return invalid("keys");
      }
      if (!own(args, "text") && !own(args, "keys")) {
        return invalid("text");
      }
      return undefined;
    }
    case "terminal_read":
      return args["view"] === "screen" && own(args, "since") ? invalid("view") : undefined;
    case "terminal_wait": {
      const untilText = args["until"] === "text";
      const texts = args["anyOf"];
      if (
        Array.isArray(texts) &&
        (!untilText || own(args, "text") || texts.length > MAX_WAIT_TEXTS || texts.some((text) => !isString(text) || text === ""))
      ) {
        return invalid("anyOf");
      }
      if (own(args, "regex") && !untilText) {
        return invalid("regex");
      }
      if (args["regex"] === true) {
        const text = args["text"];
        const reason = isString(text) ? checkPattern(text) : undefined;
        if (reason !== undefined) {
          return badPattern("text", reason);
        }
        const items = Array.isArray(texts) ? texts.filter(isString) : [];
        for (const [index, item] of items.entries()) {
          const itemReason = checkPattern(item);
          if (itemReason !== undefined) {
            return badPattern("anyOf", `item ${index}: ${itemReason}`);
          }
        }
      }
      return undefined;
    }
    case "terminal_search": {
      const pattern = isString(args["pattern"]) ? args["pattern"] : "";
      if (pattern === "") {
        return invalid("pattern");
      }
      if (args["regex"] === true) {
        const reason = checkPattern(pattern);
        if (reason !== undefined) {
          return badPattern("pattern", reason);
        }
      }
      if (own(args, "since") && !own(args, "nodeId")) {
        return invalid("since");
      }
      if (!wholeIn(args["limit"], 1, MAX_SEARCH_LIMIT)) {
        return invalid("limit");
      }
      if (!wholeIn(args["context"], 0, MAX_SEARCH_CONTEXT)) {
        return invalid("context");
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Whether an optional number member is absent or a whole number in `min..=max`. */
function wholeIn(value: unknown, min: number, max: number): boolean {
  return typeof value !== "number" || (Number.isInteger(value) && min <= value && value <= max);
}

function valueFits(param: ParamRule, value: unknown): boolean {
  switch (param.kind) {
    case "string":
      return typeof value === "string" && stringFits(value);
    case "enum":
      return typeof value === "string" && stringFits(value) && param.values.includes(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= param.maxMagnitude;
    case "boolean":
      return typeof value === "boolean";
    case "string[]":
      return (
        Array.isArray(value) &&
        1 <= value.length &&
        value.length <= param.maxItems &&
        value.every((item) => typeof item === "string" && item.length <= MAX_ITEM_UTF16 && !item.includes("\u0000"))
      );
  }
}

/** A JavaScript string's length is its length in UTF-16 units, the contract's measure. */
function stringFits(text: string): boolean {
  return text.length <= MAX_STRING_UTF16 && !text.includes("\u0000");
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function own(object: object, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, name);
}

function failure(error: string): Validation {
  return { ok: false, error };
}

/** Unicode general category Cc, as Rust's `char::is_control`. */
const CONTROL = /^\p{Cc}$/u;
/** The Unicode White_Space property, as Rust's `char::is_whitespace`. */
const WHITE_SPACE = /^\p{White_Space}$/u;

/** The document order of the members of each object {@link parseBody} made. */
const ORDER = new WeakMap<object, string[]>();

/** A JSON reader for text that `JSON.parse` has accepted, recording member order. */
class OrderedParser {
  private at = 0;

  constructor(private readonly text: string) {}

  value(): unknown {
    this.space();
    const next = this.text[this.at];
    if (next === "{") {
      return this.object();
    }
    if (next === "[") {
      return this.array();
    }
    if (next === '"') {
      return this.string();
    }
    return JSON.parse(this.token(SCALAR));
  }

  private object(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    const order: string[] = [];
    ORDER.set(object, order);
    this.at += 1;
    this.space();
    if (this.text[this.at] === "}") {
      this.at += 1;
      return object;
    }
    for (;;) {
      this.space();
      const name = this.string();
      this.space();
      this.at += 1; // ':'
      const member = this.value();
      if (!own(object, name)) {
        order.push(name);
      }
      // As JSON.parse: an own data property, even for `__proto__`.
      Object.defineProperty(object, name, { value: member, writable: true, enumerable: true, configurable: true });
      this.space();
      const separator = this.text[this.at];
      this.at += 1;
      if (separator !== ",") {
        return object;
      }
    }
  }

  private array(): unknown[] {
    const items: unknown[] = [];
    this.at += 1;
    this.space();
    if (this.text[this.at] === "]") {
      this.at += 1;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.space();
      const separator = this.text[this.at];
      this.at += 1;
      if (separator !== ",") {
        return items;
      }
    }
  }

  private string(): string {
    return JSON.parse(this.token(STRING)) as string;
  }

  private token(pattern: RegExp): string {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found === null) {
      throw new SyntaxError(`unexpected JSON at position ${this.at}`);
    }
    this.at = pattern.lastIndex;
    return found[0];
  }

  private space(): void {
    while (this.at < this.text.length && SPACE.includes(this.text[this.at]!)) {
      this.at += 1;
    }
  }
}

const SPACE = " \t\n\r";
const STRING = /"(?:[^"\\]|\\.)*"/y;
const SCALAR = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y;
