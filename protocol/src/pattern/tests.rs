//! The dialect's checker and its translation: what it refuses and why, what the translation
//! means to the `regex` crate (ECMAScript's meaning, one line at a time), and that the crate
//! compiles every pattern the checker accepts, hand-picked and generated. Two fingerprints over
//! the generated patterns are shared with `tests/typescript/pattern.test.ts`: the checker's
//! answers, and where each accepted pattern matches a set of lines, so the TypeScript checker and
//! ECMAScript's `RegExp` are held to this crate pattern by pattern.

use regex::Regex;

use super::{MAX_PATTERN_SIZE, MAX_REPEAT, check, to_rust};

/// The `regex` crate's compiled form of an accepted `pattern`.
fn compiled(pattern: &str) -> Regex {
    assert_eq!(check(pattern), Ok(()), "{pattern:?} is refused");
    let rust = to_rust(pattern);
    Regex::new(&rust).unwrap_or_else(|error| panic!("{pattern:?} as {rust:?}: {error}"))
}

/// Where the pattern first matches in `text` (a byte offset), as the translation finds it.
fn first_match(pattern: &str, text: &str) -> Option<usize> {
    compiled(pattern).find(text).map(|found| found.start())
}

#[test]
fn the_dialect_accepts_the_common_part_of_both_engines() {
    for pattern in [
        "",
        "FAIL",
        r"listening on port 8\d+",
        r"^error(\[E\d{4}\])?: ",
        r"(?:PASSED|FAILED) in \d+(\.\d+)?s$",
        r"[A-Za-z_][\w.-]*",
        r"[-a]",
        r"[a-]",
        r"[^-a]",
        r"[\-\]\[\\^]",
        r"[\d\s\W]",
        r"[.*+?(){}|$/]",
        r"\/\.\*\+\?\(\)\[\]\{\}\|\^\$\\",
        r"\t\r\f\v\x41\u0042\u{1F600}\u{10FFFF}",
        r"a*?b+?c??d{2}e{2,}f{2,5}?",
        r"a{0}",
        r"a{1000}",
        r"(a|)*",
        r"()",
        r"(?:)",
        r"\bword\B",
        "日本語😀",
        "a|b|",
        r"x{01,002}",
    ] {
        compiled(pattern);
    }
}

#[test]
fn what_is_outside_the_dialect_is_refused_with_its_reason() {
    for (pattern, reason) in [
        ("(a", "unclosed ( at 0"),
        ("a)", "unmatched ) at 1"),
        ("[a", "unclosed [ at 0"),
        ("[]", "empty class at 0"),
        ("[^]", "empty class at 0"),
        ("a]", r"lone ] at 1: escape it as \]"),
        ("}", r"lone } at 0: escape it as \}"),
        ("a{", r"lone { at 1: escape it as \{"),
        ("a{,3}", r"lone { at 1: escape it as \{"),
        ("a{1, 2}", r"lone { at 1: escape it as \{"),
        ("{2}", "nothing to repeat at 0"),
        ("*a", "nothing to repeat at 0"),
        ("a|*", "nothing to repeat at 2"),
        ("(+)", "nothing to repeat at 1"),
        ("a**", "nothing to repeat at 2"),
        ("a*??", "nothing to repeat at 3"),
        ("a{2}{3}", "nothing to repeat at 4"),
        ("^*", "nothing to repeat at 1"),
        ("$?", "nothing to repeat at 1"),
        (r"\b+", "nothing to repeat at 2"),
        ("a{1001}", "a repetition count above 1000 at 1"),
        ("a{2,1001}", "a repetition count above 1000 at 1"),
        ("a{99999999999999999999999}", "a repetition count above 1000 at 1"),
        ("a{3,2}", "repetition at 1 has its least count above its largest"),
        ("(?=a)", "look-around is not supported, at 0"),
        ("(?!a)", "look-around is not supported, at 0"),
        ("x(?<=a)", "look-around is not supported, at 1"),
        ("(?<!a)", "look-around is not supported, at 0"),
        ("(?<n>a)", "named groups are not supported, at 0: use (…) or (?:…)"),
        ("(?P<n>a)", "named groups are not supported, at 0: use (…) or (?:…)"),
        ("(?i)a", "inline flags are not supported, at 0"),
        ("(?i:a)", "inline flags are not supported, at 0"),
        ("(?", "inline flags are not supported, at 0"),
        (r"(a)\1", "back-references are not supported, at 3"),
        (r"\k<n>", "back-references are not supported, at 0"),
        (r"\p{L}", "Unicode property escapes are not supported, at 0"),
        (r"\P{L}", "Unicode property escapes are not supported, at 0"),
        (r"\n", "a line feed at 0: a pattern matches within one line"),
        ("a\nb", "a line feed at 1: a pattern matches within one line"),
        (r"[\x0A]", "a line feed at 1: a pattern matches within one line"),
        (r"\u000a", "a line feed at 0: a pattern matches within one line"),
        (r"\u{A}", "a line feed at 0: a pattern matches within one line"),
        (r"\0", r"unknown escape \0 at 0"),
        (r"\cA", r"unknown escape \c at 0"),
        (r"\A", r"unknown escape \A at 0"),
        (r"\z", r"unknown escape \z at 0"),
        (r"\a", r"unknown escape \a at 0"),
        (r"\e", r"unknown escape \e at 0"),
        (r"\-", r"unknown escape \- at 0"),
        (r"\#", r"unknown escape \# at 0"),
        (r"\&", r"unknown escape \& at 0"),
        (r"\ ", r"unknown escape \  at 0"),
        (r"[\&]", r"unknown escape \& at 1"),
        ("a\\", r"trailing \ at 1"),
        (r"\x4", r"\x at 0 needs two hex digits"),
        (r"\x{41}", r"\x at 0 needs two hex digits"),
        (r"\u41", r"\u at 0 needs four hex digits or {1 to 6 hex digits}"),
        (r"\u{}", r"\u at 0 needs four hex digits or {1 to 6 hex digits}"),
        (r"\u{0000041}", r"\u at 0 needs four hex digits or {1 to 6 hex digits}"),
        (r"\u{41", r"\u at 0 needs four hex digits or {1 to 6 hex digits}"),
        (r"\u{110000}", r"\u at 0 is above 10FFFF"),
        (r"\uD83D\uDE00", r"\u at 0 names a surrogate, which is not a character"),
        (r"\u{DFFF}", r"\u at 0 names a surrogate, which is not a character"),
        ("[[a]]", r"[ inside a class at 1: escape it as \["),
        ("[[:alpha:]]", r"[ inside a class at 1: escape it as \["),
        ("[a&&b]", "&& inside a class at 2: escape one of them"),
        ("[a~~b]", "~~ inside a class at 2: escape one of them"),
        ("[a--b]", "-- inside a class at 2: escape one of them"),
        ("[--a]", "-- inside a class at 1: escape one of them"),
        ("[!--]", "-- inside a class at 2: escape one of them"),
        ("[a-z-0]", r"- at 4 inside a class: escape it as \- or put it first or last"),
        ("[z-a]", "range at 1 runs backwards"),
        (r"[\d-z]", "range with a class escape at 1"),
        (r"[a-\w]", "range with a class escape at 1"),
        (r"[\b]", r"\b is not supported inside a class, at 1"),
        (r"[\B]", r"\B is not supported inside a class, at 1"),
        (r"[\-\q]", r"unknown escape \q at 3"),
    ] {
        assert_eq!(check(pattern), Err(reason.to_owned()), "{pattern:?}");
    }
}

#[test]
fn positions_count_characters_not_bytes() {
    assert_eq!(check("é😀(?=x)"), Err("look-around is not supported, at 2".to_owned()));
}

#[test]
fn groups_nest_at_most_32_deep() {
    let ok = format!("{}a{}", "(".repeat(32), ")".repeat(32));
    compiled(&ok);
    let deep = format!("{}a{}", "(".repeat(33), ")".repeat(33));
    assert_eq!(check(&deep), Err("groups nested deeper than 32 at 32".to_owned()));
}

/// The largest count `n` (at most [`MAX_REPEAT`]) for which `pattern(n)` is accepted.
fn largest(pattern: impl Fn(u64) -> String) -> u64 {
    (1..=u64::from(MAX_REPEAT)).rev().find(|&n| check(&pattern(n)).is_ok()).expect("n = 1 fits")
}

#[test]
fn the_size_counts_repeated_parts_as_often_as_they_repeat() {
    let limit = usize::try_from(MAX_PATTERN_SIZE).unwrap();
    assert_eq!(check(&"a".repeat(limit)), Ok(()));
    let too_large =
        "the pattern's size is 2001, above 2000 (a repeated part counts as often as it may repeat)";
    assert_eq!(check(&"a".repeat(limit + 1)), Err(too_large.to_owned()));
    // `(?:ab)` is 6 characters: 6 × 332 + 5 = 1997, 6 × 333 + 5 = 2003.
    assert_eq!(check("(?:ab){332}"), Ok(()));
    assert!(check("(?:ab){333}").unwrap_err().starts_with("the pattern's size is 2003,"));
    // An unbounded repetition counts its least count plus one: 6 × 301 + 6 = 1812.
    assert_eq!(check("(?:ab){300,}"), Ok(()));
    assert!(check("(?:abc){300,}").unwrap_err().starts_with("the pattern's size is 2113,"));
    // `*`, `+` and `?` count once.
    assert_eq!(check(&format!("{}*", "a".repeat(limit - 1))), Ok(()));
    // Nested counts multiply: (6 × 40 + 4 + 4) × 40 + 4.
    assert!(check("(?:(?:ab){40}){40}").unwrap_err().starts_with("the pattern's size is 9924,"));
    // Deep nesting of large counts stops at 2^53 − 1, where every JSON peer still counts exactly.
    let nested = format!("{}a{}", "(".repeat(32), "){1000}".repeat(32));
    assert!(check(&nested).unwrap_err().starts_with("the pattern's size is 9007199254740991,"));
}

#[test]
fn the_largest_patterns_of_the_costliest_atoms_compile() {
    for atom in [".", r"\S", r"\s", r"\W", r"\D", "[^a]", r"[^\d\s]", "[\u{80}-\u{10FFFF}]"] {
        let flat = largest(|n| format!("(?:{atom}){{{n}}}"));
        compiled(&format!("(?:{atom}){{{flat}}}"));
        let nested = largest(|n| format!("(?:(?:{atom}){{{n}}}){{2}}"));
        compiled(&format!("(?:(?:{atom}){{{nested}}}){{2}}"));
        let split = largest(|n| format!("(?:{atom}){{{n}}}(?:{atom}){{{n}}}"));
        compiled(&format!("(?:{atom}){{{split}}}(?:{atom}){{{split}}}"));
    }
}

#[test]
fn classes_and_escapes_mean_what_they_mean_in_ecmascript() {
    // `\d`, `\w` and `\b` are ASCII.
    assert_eq!(first_match(r"\d", "٣3"), Some(2));
    assert_eq!(first_match(r"\w+", "é_x"), Some(2));
    assert_eq!(first_match(r"\bfoo\b", "éfooé"), Some(2));
    assert_eq!(first_match(r"\Bfoo", "éfoo"), None);
    assert_eq!(first_match(r"\Bfoo", "afoo"), Some(1));
    assert_eq!(first_match(r"[\W]", "aé"), Some(1));
    // `\s` is ECMAScript's white space: U+FEFF is in it, U+0085 is not.
    assert_eq!(first_match(r"\s", "a\u{85}\u{feff}"), Some(3));
    assert_eq!(first_match(r"\S", "\u{feff}\u{85}"), Some(3));
    // `.` is any character but a line terminator.
    assert_eq!(first_match("a.b", "a\u{2028}b a\rb a😀b"), Some(10));
    // Escaped syntax characters and `/` are literal.
    assert_eq!(first_match(r"\(\d\)/\.", "x(1)/."), Some(1));
    assert_eq!(first_match(r"[-.]+", "ab-.c"), Some(2));
    assert_eq!(first_match(r"[^-a]", "-ab"), Some(2));
    assert_eq!(first_match(r"\u{1F600}|\x41", "x😀"), Some(1));
}

#[test]
fn a_pattern_never_matches_across_a_line_feed() {
    // Run over many lines, the translation finds the matches of each line and none across.
    let text = "abc\ndef\n";
    assert_eq!(first_match("^def$", text), Some(4));
    assert_eq!(first_match("c$", text), Some(2));
    assert_eq!(first_match("^$", "a\n\nb"), Some(2));
    assert_eq!(first_match(r"c\sd", text), None);
    assert_eq!(first_match(r"c\Dd", text), None);
    assert_eq!(first_match(r"c\Wd", text), None);
    assert_eq!(first_match("c[^x]d", text), None);
    assert_eq!(first_match(r"c[\s\S]d", text), None);
    assert_eq!(first_match(r"c[\x00-\x7F]d", text), None);
    assert_eq!(first_match("c.d", text), None);
    // The last line needs no line feed for `$`.
    assert_eq!(first_match("f$", "abc\ndef"), Some(6));
}

#[test]
fn laziness_and_alternation_keep_the_leftmost_match() {
    assert_eq!(compiled("a+?").find("aaa").map(|m| m.as_str()), Some("a"));
    assert_eq!(compiled("ab|a").find("xab").map(|m| m.as_str()), Some("ab"));
    assert_eq!(compiled("a|ab").find("xab").map(|m| m.as_str()), Some("a"));
}

/// A small deterministic generator (xorshift64*), so the generated cases are the same each run.
struct Generator(u64);

impl Generator {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let value = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33;
        usize::try_from(value).unwrap() % below
    }
}

/// Pieces that generated patterns are made of: every construct of the dialect and many that
/// are not in it, so both answers of the checker are common.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "é",
    "😀",
    " ",
    "-",
    "&",
    "~",
    "/",
    "#",
    ",",
    ":",
    "<",
    "=",
    "!",
    ".",
    "^",
    "$",
    "|",
    "|",
    "(",
    "(",
    ")",
    ")",
    "(?:",
    "(?=",
    "(?<",
    "[",
    "[",
    "[^",
    "]",
    "]",
    "{",
    "}",
    "*",
    "+",
    "?",
    "{2}",
    "{1,3}",
    "{2,}",
    "{0}",
    "{1000}",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "\\b",
    "\\B",
    "\\t",
    "\\r",
    "\\v",
    "\\f",
    "\\x41",
    "\\x0a",
    "\\u00e9",
    "\\u{1F600}",
    "\\-",
    "\\]",
    "\\[",
    "\\\\",
    "\\.",
    "\\/",
    "\\n",
    "\\1",
    "\\q",
    "\\",
    "a-z",
    "z-a",
    "\\d-",
    "--",
];

/// The generated patterns: `count` of them, each of 1 to 12 pieces.
fn generated(count: usize) -> Vec<String> {
    let mut generator = Generator(0x9e37_79b9_7f4a_7c15);
    (0..count)
        .map(|_| {
            let length = 1 + generator.next(12);
            (0..length).map(|_| PIECES[generator.next(PIECES.len())]).collect()
        })
        .collect()
}

#[test]
fn every_generated_pattern_the_checker_accepts_compiles() {
    let patterns = generated(20_000);
    let accepted: Vec<&String> = patterns.iter().filter(|pattern| check(pattern).is_ok()).collect();
    assert!(accepted.len() > 2_000, "only {} generated patterns were accepted", accepted.len());
    for pattern in accepted {
        compiled(pattern);
    }
}

/// The checker's answers to the generated patterns, as one FNV-1a hash of every pattern and its
/// answer (`ok` or the reason). `tests/typescript/pattern.test.ts` generates the same patterns
/// and must find the same hash: the two checkers agree on 20 000 patterns beyond the shared cases.
#[test]
fn the_answers_to_the_generated_patterns_have_the_fingerprint_the_typescript_checker_finds() {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for pattern in generated(20_000) {
        let answer = check(&pattern).err().unwrap_or_else(|| "ok".to_owned());
        for byte in format!("{pattern}\0{answer}\n").bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    assert_eq!(format!("{hash:016x}"), GENERATED_FINGERPRINT);
}

/// The fingerprint of [`the_answers_to_the_generated_patterns_have_the_fingerprint_the_typescript_checker_finds`],
/// written in `tests/typescript/pattern.test.ts` too.
const GENERATED_FINGERPRINT: &str = "6d72c4fccdf03359";

/// The examples of `spec/protocol.md` §5.1: (pattern, lines it matches, lines it does not).
const SPEC_EXAMPLES: &[(&str, &[&str], &[&str])] = &[
    (r"FAIL(ED)?\b", &["test_x FAILED", "FAIL: x"], &["FAILURE"]),
    (
        r"^error(\[E\d{4}\])?: ",
        &["error[E0308]: mismatched types", "error: aborting"],
        &["  error: x", "an error: x"],
    ),
    (r"listening on port 8\d+", &["listening on port 8080"], &["listening on port 3000"]),
    (
        r"(?:PASSED|FAILED) in \d+(\.\d+)?s$",
        &["12 PASSED in 3.5s"],
        &["12 PASSED in 3.5s (cached)"],
    ),
    (r"\bfoo\b", &["éfooé"], &["foobar"]),
    (r"\[Y/n\] ?$", &["Continue? [Y/n] "], &["[Y/n] later"]),
];

#[test]
fn the_examples_of_the_spec_match_as_it_says() {
    for (pattern, matching, other) in SPEC_EXAMPLES {
        let regex = compiled(pattern);
        for line in *matching {
            assert!(regex.is_match(line), "{pattern:?} must match {line:?}");
        }
        for line in *other {
            assert!(!regex.is_match(line), "{pattern:?} must not match {line:?}");
        }
    }
}

/// Lines the generated patterns are matched against: the pieces' characters, ASCII and not,
/// white space of both engines' kinds, line terminators other than the line feed.
const LINES: &[&str] = &[
    "",
    "a",
    "aZ0é😀 -&~/#,:<=!.^$|(?:)[]{}*+?",
    "Zaa00 - é-é_x",
    "\t\u{b}\u{c}\r a\u{a0}\u{85}\u{feff}\u{2028}b\u{2029}",
    "A\u{e9}\u{1F600}AA\\q]-[",
    "FAILED test_x-call listening on port 8080",
    "{2}{1,3}{2,}{0}{1000}",
];

/// Where each accepted generated pattern first matches each of [`LINES`] (in characters, or
/// none), as one FNV-1a hash. `tests/typescript/pattern.test.ts` finds the same hash with
/// `RegExp(pattern, "u")`: the translation means in Rust what the pattern means in ECMAScript.
#[test]
fn the_matches_of_the_generated_patterns_have_the_fingerprint_ecmascript_finds() {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut matched = 0;
    for pattern in generated(20_000).iter().filter(|pattern| check(pattern).is_ok()) {
        let regex = compiled(pattern);
        for line in LINES {
            let at = regex.find(line).map(|found| line[..found.start()].chars().count());
            matched += usize::from(at.is_some());
            let at = at.map_or_else(|| "-".to_owned(), |at| at.to_string());
            for byte in format!("{pattern}\0{at}\n").bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    assert!(matched > 1_000, "only {matched} matches");
    assert_eq!(format!("{hash:016x}"), MATCHES_FINGERPRINT);
}

/// The fingerprint of [`the_matches_of_the_generated_patterns_have_the_fingerprint_ecmascript_finds`],
/// written in `tests/typescript/pattern.test.ts` too.
const MATCHES_FINGERPRINT: &str = "451486005f99e596";
