// The pattern dialect of spec/protocol.md §5.1, as protocol/src/pattern.rs checks it: the
// regular expressions that terminal_search and terminal_wait take with regex true. The algorithm
// is this template, written once in the generator (xtask/src/codegen/typescript/pattern.ts) and
// mirrored step for step from the Rust checker, so both give the same reason for every pattern;
// its limits are generated into validation-data.ts. A pattern the checker accepts means what
// `new RegExp(pattern, "u")` means when tested against one line of output (the text between two
// line feeds, without them).

import { MAX_GROUP_DEPTH, MAX_PATTERN_SIZE, MAX_REPEAT } from "./validation-data.js";

/**
 * Checks that `pattern` is in the dialect: `undefined` when it is, else the reason that follows
 * `Invalid pattern: ` (positions count characters, Unicode code points, from 0).
 */
export function checkPattern(pattern: string): string | undefined {
  try {
    const parser = new PatternParser(pattern);
    const size = parser.alternation();
    if (parser.peek() === ")") {
      return `unmatched ) at ${parser.at}`;
    }
    if (size > MAX_PATTERN_SIZE) {
      return `the pattern's size is ${size}, above ${MAX_PATTERN_SIZE} (a repeated part counts as often as it may repeat)`;
    }
    return undefined;
  } catch (error) {
    if (error instanceof Refusal) {
      return error.reason;
    }
    throw error;
  }
}

/** Where a size stops growing (2^53 − 1), as in the Rust checker. */
const SIZE_CAP = Number.MAX_SAFE_INTEGER;

class Refusal {
  constructor(readonly reason: string) {}
}

/** What one atom or class member is: a character, a class escape, a boundary or an anchor. */
type Escape = { kind: "char"; char: string } | { kind: "perl" } | { kind: "boundary" };

function add(a: number, b: number): number {
  return Math.min(a + b, SIZE_CAP);
}

function lineFeed(at: number): Refusal {
  return new Refusal(`a line feed at ${at}: a pattern matches within one line`);
}

/** The syntax characters and `/`: an escape of one of them is the character itself. */
const SYNTAX_CHARACTERS = "^$\\.*+?()[]{}|/";

/** The escapes of control characters, by their letter. */
const CONTROL_ESCAPES: Readonly<Record<string, string>> = { t: "\t", r: "\r", f: "\f", v: "\v" };

class PatternParser {
  private readonly chars: string[];
  at = 0;
  private depth = 0;

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
  }

  peek(offset = 0): string | undefined {
    return this.chars[this.at + offset];
  }

  /** The size of the alternation at the position. */
  alternation(): number {
    let size = this.concat();
    let branches = 1;
    while (this.peek() === "|") {
      this.at += 1;
      size = add(size, this.concat());
      branches += 1;
    }
    return add(size, branches - 1);
  }

  private concat(): number {
    let size = 0;
    for (let c = this.peek(); c !== undefined && c !== "|" && c !== ")"; c = this.peek()) {
      const [kind, atomSize] = this.atom();
      let nodeSize = atomSize;
      const quantifier = this.quantifier();
      if (quantifier !== undefined) {
        const [start, length, factor] = quantifier;
        if (kind === "assertion") {
          throw new Refusal(`nothing to repeat at ${start}`);
        }
        nodeSize = add(Math.min(atomSize * factor, SIZE_CAP), length);
      }
      const another = this.quantifier();
      if (another !== undefined) {
        throw new Refusal(`nothing to repeat at ${another[0]}`);
      }
      size = add(size, nodeSize);
    }
    return size;
  }

  /** A quantifier at the position: its position, its length and its largest repetition. */
  private quantifier(): [number, number, number] | undefined {
    const start = this.at;
    let factor: number;
    const c = this.peek();
    if (c === "*" || c === "+" || c === "?") {
      this.at += 1;
      factor = 1;
    } else if (c === "{") {
      const counted = this.counts();
      if (counted === undefined) {
        throw new Refusal(`lone { at ${start}: escape it as \\{`);
      }
      factor = counted;
    } else {
      return undefined;
    }
    if (this.peek() === "?") {
      this.at += 1;
    }
    return [start, this.at - start, factor];
  }

  /** `{n}`, `{n,}` or `{n,m}` at the position: its largest repetition, or undefined. */
  private counts(): number | undefined {
    const start = this.at;
    const at = { value: start + 1 };
    const least = this.number(at);
    if (least === undefined) {
      return undefined;
    }
    let most: number | undefined;
    if (this.chars[at.value] === "}") {
      most = least;
    } else if (this.chars[at.value] === ",") {
      at.value += 1;
      if (this.chars[at.value] !== "}") {
        most = this.number(at);
        if (most === undefined || this.chars[at.value] !== "}") {
          return undefined;
        }
      }
    } else {
      return undefined;
    }
    this.at = at.value + 1;
    if (least > MAX_REPEAT || (most !== undefined && most > MAX_REPEAT)) {
      throw new Refusal(`a repetition count above ${MAX_REPEAT} at ${start}`);
    }
    if (most !== undefined && most < least) {
      throw new Refusal(`repetition at ${start} has its least count above its largest`);
    }
    return Math.max(most ?? least + 1, 1);
  }

  private number(at: { value: number }): number | undefined {
    const start = at.value;
    let value = 0;
    for (let c = this.chars[at.value]; c !== undefined && c >= "0" && c <= "9"; c = this.chars[at.value]) {
      value = value * 10 + Number(c);
      at.value += 1;
    }
    return at.value > start ? value : undefined;
  }

  /** The atom at the position: whether it is an assertion, and its size. */
  private atom(): ["assertion" | "atom", number] {
    const start = this.at;
    const c = this.peek()!;
    let kind: "assertion" | "atom" = "atom";
    switch (c) {
      case "*":
      case "+":
      case "?":
        throw new Refusal(`nothing to repeat at ${start}`);
      case "{":
        if (this.counts() !== undefined) {
          throw new Refusal(`nothing to repeat at ${start}`);
        }
        throw new Refusal(`lone { at ${start}: escape it as \\{`);
      case "}":
      case "]":
        throw new Refusal(`lone ${c} at ${start}: escape it as \\${c}`);
      case "(":
        return ["atom", this.group()];
      case "[":
        return ["atom", this.cls()];
      case "^":
      case "$":
        this.at += 1;
        kind = "assertion";
        break;
      case "\\":
        if (this.escape(false).kind === "boundary") {
          kind = "assertion";
        }
        break;
      case "\n":
        throw lineFeed(start);
      default:
        this.at += 1;
    }
    return [kind, this.at - start];
  }

  private group(): number {
    const start = this.at;
    this.at += 1;
    let capturing = true;
    if (this.peek() === "?") {
      const first = this.peek(1);
      const second = this.peek(2);
      if (first === ":") {
        capturing = false;
        this.at += 2;
      } else if (first === "=" || first === "!" || (first === "<" && (second === "=" || second === "!"))) {
        throw new Refusal(`look-around is not supported, at ${start}`);
      } else if (first === "<" || first === "P") {
        throw new Refusal(`named groups are not supported, at ${start}: use (…) or (?:…)`);
      } else {
        throw new Refusal(`inline flags are not supported, at ${start}`);
      }
    }
    this.depth += 1;
    if (this.depth > MAX_GROUP_DEPTH) {
      throw new Refusal(`groups nested deeper than ${MAX_GROUP_DEPTH} at ${start}`);
    }
    const innerSize = this.alternation();
    if (this.peek() !== ")") {
      throw new Refusal(`unclosed ( at ${start}`);
    }
    this.at += 1;
    this.depth -= 1;
    return add(innerSize, capturing ? 2 : 4);
  }

  private cls(): number {
    const start = this.at;
    this.at += 1;
    if (this.peek() === "^") {
      this.at += 1;
    }
    const first = this.at;
    if (this.peek() === "]") {
      throw new Refusal(`empty class at ${start}`);
    }
    for (;;) {
      const c = this.peek();
      if (c === undefined) {
        throw new Refusal(`unclosed [ at ${start}`);
      }
      if (c === "]") {
        this.at += 1;
        break;
      }
      const at = this.at;
      const low = this.classAtom(first);
      const next = this.peek(1);
      const isRange = this.peek() === "-" && next !== undefined && next !== "]";
      if (!isRange) {
        continue;
      }
      this.doublePunctuation();
      this.at += 1;
      const high = this.classAtom(first);
      if (low.kind === "char" && high.kind === "char") {
        if (low.char.codePointAt(0)! > high.char.codePointAt(0)!) {
          throw new Refusal(`range at ${at} runs backwards`);
        }
      } else {
        throw new Refusal(`range with a class escape at ${at}`);
      }
    }
    return this.at - start;
  }

  /** One member of a class at the position (`first`: where the class's members begin). */
  private classAtom(first: number): Escape {
    const at = this.at;
    const c = this.peek()!;
    this.doublePunctuation();
    if (c === "[") {
      throw new Refusal(`[ inside a class at ${at}: escape it as \\[`);
    }
    if (c === "\\") {
      return this.escape(true);
    }
    if (c === "\n") {
      throw lineFeed(at);
    }
    if (c === "-" && at !== first && this.peek(1) !== "]") {
      throw new Refusal(`- at ${at} inside a class: escape it as \\- or put it first or last`);
    }
    this.at += 1;
    return { kind: "char", char: c };
  }

  /** Refuses `&&`, `--` and `~~` at the position (set operations of Rust's regex crate). */
  private doublePunctuation(): void {
    const c = this.peek();
    if ((c === "&" || c === "-" || c === "~") && this.peek(1) === c) {
      throw new Refusal(`${c}${c} inside a class at ${this.at}: escape one of them`);
    }
  }

  /** The escape at the position (a backslash), consumed. */
  private escape(inClass: boolean): Escape {
    const start = this.at;
    const c = this.peek(1);
    if (c === undefined) {
      throw new Refusal(`trailing \\ at ${start}`);
    }
    this.at += 2;
    let escape: Escape;
    if ("dDwWsS".includes(c)) {
      escape = { kind: "perl" };
    } else if (c === "b" || c === "B") {
      if (inClass) {
        throw new Refusal(`\\${c} is not supported inside a class, at ${start}`);
      }
      escape = { kind: "boundary" };
    } else if (c === "t" || c === "r" || c === "f" || c === "v") {
      escape = { kind: "char", char: CONTROL_ESCAPES[c] ?? c };
    } else if (c === "n") {
      throw lineFeed(start);
    } else if (c === "x") {
      escape = { kind: "char", char: this.hexEscape(start) };
    } else if (c === "u") {
      escape = { kind: "char", char: this.unicodeEscape(start) };
    } else if ((c >= "1" && c <= "9") || c === "k") {
      throw new Refusal(`back-references are not supported, at ${start}`);
    } else if (c === "p" || c === "P") {
      throw new Refusal(`Unicode property escapes are not supported, at ${start}`);
    } else if (SYNTAX_CHARACTERS.includes(c) || (c === "-" && inClass)) {
      escape = { kind: "char", char: c };
    } else {
      throw new Refusal(`unknown escape \\${c} at ${start}`);
    }
    if (escape.kind === "char" && escape.char === "\n") {
      throw lineFeed(start);
    }
    return escape;
  }

  private hexEscape(start: number): string {
    const digits = this.hexDigits(2);
    if (digits.length !== 2) {
      throw new Refusal(`\\x at ${start} needs two hex digits`);
    }
    this.at += 2;
    return String.fromCodePoint(parseInt(digits, 16));
  }

  private unicodeEscape(start: number): string {
    const malformed = new Refusal(`\\u at ${start} needs four hex digits or {1 to 6 hex digits}`);
    let value: number;
    if (this.peek() === "{") {
      this.at += 1;
      let digits = "";
      for (let c = this.peek(); c !== undefined && isHexDigit(c); c = this.peek()) {
        digits += c;
        this.at += 1;
      }
      if (digits.length === 0 || digits.length > 6 || this.peek() !== "}") {
        throw malformed;
      }
      this.at += 1;
      value = parseInt(digits, 16);
    } else {
      const digits = this.hexDigits(4);
      if (digits.length !== 4) {
        throw malformed;
      }
      this.at += 4;
      value = parseInt(digits, 16);
    }
    if (0xd800 <= value && value <= 0xdfff) {
      throw new Refusal(`\\u at ${start} names a surrogate, which is not a character`);
    }
    if (value > 0x10ffff) {
      throw new Refusal(`\\u at ${start} is above 10FFFF`);
    }
    return String.fromCodePoint(value);
  }

  /** Up to `count` hex digits at the position (not consumed). */
  private hexDigits(count: number): string {
    let digits = "";
    for (let offset = 0; offset < count; offset += 1) {
      const c = this.peek(offset);
      if (c === undefined || !isHexDigit(c)) {
        break;
      }
      digits += c;
    }
    return digits;
  }
}

function isHexDigit(c: string): boolean {
  return /^[0-9A-Fa-f]$/.test(c);
}
