//! Tests of rendering values.

use serde_json::json;

use super::{OutputDir, render};

fn text(value: Option<serde_json::Value>) -> String {
    let mut out_dir = OutputDir::new(None);
    String::from_utf8(render(value, &mut out_dir).unwrap()).unwrap()
}

#[test]
fn values_print_as_themselves() {
    assert_eq!(text(None), "");
    assert_eq!(text(Some(json!(""))), "");
    assert_eq!(text(Some(json!("line"))), "line\n");
    assert_eq!(text(Some(json!("line\n"))), "line\n");
    assert_eq!(text(Some(json!("two\n\n"))), "two\n\n");
    assert_eq!(text(Some(json!(null))), "null\n");
    assert_eq!(text(Some(json!(true))), "true\n");
    assert_eq!(text(Some(json!([]))), "[]\n");
    assert_eq!(
        text(Some(json!({"b": {}, "a": [1]}))),
        "{\n  \"b\": {},\n  \"a\": [\n    1\n  ]\n}\n"
    );
    assert_eq!(text(Some(json!({"image": "%%%"}))), "{\n  \"image\": \"%%%\"\n}\n");
    assert_eq!(text(Some(json!({"image": 5}))), "{\n  \"image\": 5\n}\n");
}
