//! Tests of reading elicitation requests and typed field values.

use serde_json::{Value, json};

use super::{Field, Kind, Mode, parse};

fn form() -> Vec<Field> {
    let params = json!({
        "sessionId": "s", "mode": "form", "message": "Who are you?",
        "requestedSchema": {"type": "object", "required": ["name", "age"], "properties": {
            "name": {"type": "string", "title": "Your name", "minLength": 2},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
            "news": {"type": "boolean", "default": false},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}
        }}
    });
    let request = parse(&params).unwrap();
    assert_eq!(request.message, "Who are you?");
    let Mode::Form(fields) = request.mode else { panic!("not a form") };
    fields
}

#[test]
fn a_form_lists_its_fields_in_order_with_their_prompts() {
    let fields = form();
    let prompts: Vec<String> = fields.iter().map(Field::prompt).collect();
    assert_eq!(
        prompts,
        [
            "  Your name (text; required): ",
            "  age (a whole number; required): ",
            "  colour (one of 1. r (Red), 2. g (Green); optional): ",
            "  news (yes or no; optional; Enter for no): ",
            "  tags (any of 1. a, 2. b, 3. c, separated by commas; optional): ",
        ]
    );
    assert_eq!(
        fields[2].kind,
        Kind::Choice(vec![("r".into(), "Red".into()), ("g".into(), "Green".into())])
    );
}

#[test]
fn typed_values_are_checked_against_the_field() {
    let fields = form();
    let read = |index: usize, line: &str| fields[index].read(line);
    assert_eq!(read(0, "Ada"), Ok(Some(json!("Ada"))));
    assert_eq!(read(0, "A"), Err("the text must have 2 to any number of characters".to_owned()));
    assert_eq!(read(0, ""), Err("this field is required".to_owned()));
    assert_eq!(read(1, "36"), Ok(Some(json!(36))));
    assert_eq!(read(1, "3.5"), Err("type a whole number".to_owned()));
    assert_eq!(read(1, "200"), Err("the number must lie between 0 and 150".to_owned()));
    assert_eq!(read(2, "2"), Ok(Some(json!("g"))));
    assert_eq!(read(2, "r"), Ok(Some(json!("r"))));
    assert!(read(2, "blue").is_err());
    assert_eq!(read(2, ""), Ok(None));
    assert_eq!(read(3, "yes"), Ok(Some(Value::Bool(true))));
    assert_eq!(read(3, ""), Ok(Some(Value::Bool(false))));
    assert_eq!(read(3, "maybe"), Err("answer yes or no".to_owned()));
    assert_eq!(read(4, "1, c"), Ok(Some(json!(["a", "c"]))));
    assert!(read(4, "a, z").is_err());
}

#[test]
fn url_mode_and_unknown_modes() {
    let request = parse(&json!({"sessionId": "s", "mode": "url", "message": "Log in",
                                "elicitationId": "e1", "url": "https://example.test/login"}))
    .unwrap();
    assert_eq!(
        request.mode,
        Mode::Url { id: "e1".into(), url: "https://example.test/login".into() }
    );
    assert!(parse(&json!({"mode": "url", "message": "x"})).is_err());
    assert_eq!(
        parse(&json!({"mode": "_vendor", "message": "x"})),
        Err("this client does not know the mode \"_vendor\"".to_owned())
    );
    assert!(
        parse(&json!({"mode": "form", "message": "x", "requestedSchema": {"properties": {
            "blob": {"type": "object"}}}}))
        .is_err()
    );
}
