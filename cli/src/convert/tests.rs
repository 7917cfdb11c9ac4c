//! Tests of flag value conversion.

use super::{convert, is_json_number};
use crate::describe::Scalar;

fn ok(scalar: Scalar, raw: &str) -> String {
    match convert(scalar, raw.as_bytes()) {
        Ok(value) => value,
        Err(error) => panic!("{raw:?}: {error}"),
    }
}

fn err(scalar: Scalar, raw: &[u8]) -> String {
    match convert(scalar, raw) {
        Ok(value) => panic!("{raw:?} converted to {value}"),
        Err(error) => error,
    }
}

#[test]
fn strings_must_be_utf8() {
    assert_eq!(ok(Scalar::String, "it's \"$HOME\"\n"), r#""it's \"$HOME\"\n""#);
    assert_eq!(ok(Scalar::String, ""), r#""""#);
    assert_eq!(err(Scalar::String, b"a\xffb"), r#""a\xffb" is not valid UTF-8"#);
}

#[test]
fn number_literals_are_kept_as_written() {
    for literal in [
        "40",
        "-12.5",
        "0",
        "-0",
        "1.0",
        "0.1000000000000000055511151231257827",
        "123456789012345678901234567890",
        "1e-400",
        "2.5E-3",
        "1e400",
        "1E5",
        "1E+5",
    ] {
        assert_eq!(ok(Scalar::Number, literal), literal);
    }
}

#[test]
fn other_decimal_floats_are_written_shortest() {
    assert_eq!(ok(Scalar::Number, "+5"), "5");
    assert_eq!(ok(Scalar::Number, "007"), "7");
    assert_eq!(ok(Scalar::Number, ".5"), "0.5");
    assert_eq!(ok(Scalar::Number, "5."), "5");
    assert_eq!(ok(Scalar::Number, "+1.50"), "1.5");
    assert_eq!(ok(Scalar::Number, "+1e30"), "1e30");
    assert_eq!(ok(Scalar::Number, "-.0000001"), "-1e-7");
    assert_eq!(ok(Scalar::Number, "+0.000001"), "0.000001");
}

#[test]
fn non_numbers_are_refused() {
    for raw in ["ten", "", " 5", "5 ", "inf", "NaN", "infinity", "1e", "0x10", "+1e400", "1,5"] {
        assert_eq!(err(Scalar::Number, raw.as_bytes()), format!("{raw:?} is not a number"));
    }
    assert_eq!(err(Scalar::Number, b"\xff"), r#""\xff" is not a number"#);
}

#[test]
fn integers_are_canonical_or_kept() {
    assert_eq!(ok(Scalar::Integer, "+5"), "5");
    assert_eq!(ok(Scalar::Integer, "007"), "7");
    assert_eq!(ok(Scalar::Integer, "-42"), "-42");
    assert_eq!(ok(Scalar::Integer, "18446744073709551615"), "18446744073709551615");
    assert_eq!(ok(Scalar::Integer, "-9223372036854775808"), "-9223372036854775808");
    assert_eq!(
        ok(Scalar::Integer, "123456789012345678901234567890"),
        "123456789012345678901234567890"
    );
    assert_eq!(ok(Scalar::Integer, "1e3"), "1e3");
    assert_eq!(ok(Scalar::Integer, "1E+3"), "1E+3");
    for raw in ["1.5", "1.0", "1e-3", "ten", "", "0x10", "+1e3"] {
        assert_eq!(err(Scalar::Integer, raw.as_bytes()), format!("{raw:?} is not an integer"));
    }
}

#[test]
fn booleans_take_gos_spellings() {
    for raw in ["1", "t", "T", "TRUE", "true", "True"] {
        assert_eq!(ok(Scalar::Boolean, raw), "true");
    }
    for raw in ["0", "f", "F", "FALSE", "false", "False"] {
        assert_eq!(ok(Scalar::Boolean, raw), "false");
    }
    for raw in ["yes", "tRUE", "", "2"] {
        assert_eq!(err(Scalar::Boolean, raw.as_bytes()), format!("{raw:?} is not true or false"));
    }
}

#[test]
fn the_json_number_grammar() {
    for good in ["0", "-0", "1", "10", "1.5", "-1.5e10", "1E+2", "1e-2", "0.0"] {
        assert!(is_json_number(good), "{good}");
    }
    for bad in
        ["", "-", "01", "+1", "1.", ".5", "1e", "1e+", "--1", "1.5.5", "0x1", " 1", "Infinity"]
    {
        assert!(!is_json_number(bad), "{bad}");
    }
}
