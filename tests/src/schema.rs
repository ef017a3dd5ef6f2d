//! A small JSON Schema checker for the subset of JSON Schema 2020-12 the servers' `outputSchema`s
//! use: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`,
//! `anyOf`, `oneOf`, `allOf`, `minimum`, `maximum`. A keyword outside that subset is an error, not
//! ignored, so a schema the checker cannot judge never passes as checked. Annotation keywords
//! (`description`, `title`, `format`, `default`, `examples`) carry no constraint here.
//!
//! Why not a crate: the `jsonschema` crate would pull in a regex engine, an HTTP client and dozens
//! of crates for the few keywords above; the Python SDK test checks the same results with a full
//! validator (the `jsonschema` package the SDK itself uses).

use serde_json::Value;

/// Keywords that only describe.
const ANNOTATIONS: [&str; 5] = ["description", "title", "format", "default", "examples"];

/// Checks `value` against `schema`; `Err` names the path and the broken rule.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check("$", schema, value)
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => false,
    }
}

fn check(path: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let schema = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return Err(format!("{path}: no value is allowed")),
        Value::Object(schema) => schema,
        other => return Err(format!("{path}: a schema must be an object, got {other}")),
    };
    for (keyword, rule) in schema {
        match keyword.as_str() {
            "type" => {
                let names: Vec<&str> = match rule {
                    Value::String(name) => vec![name.as_str()],
                    Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                    _ => return Err(format!("{path}: malformed type {rule}")),
                };
                if !names.iter().any(|name| type_matches(name, value)) {
                    return Err(format!("{path}: {value} is not of type {rule}"));
                }
            }
            "properties" => {
                let (Some(properties), Some(object)) = (rule.as_object(), value.as_object()) else {
                    continue;
                };
                for (name, subschema) in properties {
                    if let Some(field) = object.get(name) {
                        check(&format!("{path}.{name}"), subschema, field)?;
                    }
                }
            }
            "required" => {
                let Some(object) = value.as_object() else {
                    continue;
                };
                for name in rule
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !object.contains_key(name) {
                        return Err(format!("{path}: required {name} is missing"));
                    }
                }
            }
            "additionalProperties" => {
                let Some(object) = value.as_object() else {
                    continue;
                };
                let declared = schema.get("properties").and_then(Value::as_object);
                for (name, field) in object {
                    if !declared.is_some_and(|d| d.contains_key(name)) {
                        check(&format!("{path}.{name}"), rule, field)?;
                    }
                }
            }
            "items" => {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    check(&format!("{path}[{i}]"), rule, item)?;
                }
            }
            "enum" => {
                if !rule
                    .as_array()
                    .is_some_and(|allowed| allowed.contains(value))
                {
                    return Err(format!("{path}: {value} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != value {
                    return Err(format!("{path}: {value} is not {rule}"));
                }
            }
            "minimum" | "maximum" => {
                let (Some(bound), Some(n)) = (rule.as_f64(), value.as_f64()) else {
                    continue;
                };
                if (keyword == "minimum" && n < bound) || (keyword == "maximum" && n > bound) {
                    return Err(format!("{path}: {value} breaks {keyword} {bound}"));
                }
            }
            "anyOf" | "oneOf" | "allOf" => {
                let alternatives = rule
                    .as_array()
                    .ok_or_else(|| format!("{path}: malformed {keyword}"))?;
                let results: Vec<Result<(), String>> = alternatives
                    .iter()
                    .map(|alternative| check(path, alternative, value))
                    .collect();
                let passed = results.iter().filter(|r| r.is_ok()).count();
                let holds = match keyword.as_str() {
                    "anyOf" => passed > 0,
                    "oneOf" => passed == 1,
                    _ => passed == alternatives.len(),
                };
                if !holds {
                    let why: Vec<String> = results.into_iter().filter_map(Result::err).collect();
                    return Err(format!(
                        "{path}: {passed} of {} {keyword} alternatives hold ({})",
                        alternatives.len(),
                        why.join("; ")
                    ));
                }
            }
            other if ANNOTATIONS.contains(&other) => {}
            other => return Err(format!("{path}: the checker does not know {other:?}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "Id."},
                "count": {"type": "integer", "format": "uint", "minimum": 0},
                "note": {"type": ["string", "null"]},
                "kind": {"oneOf": [{"const": "fact"}, {"const": "procedure"}]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["id", "count"]
        })
    }

    #[test]
    fn a_conforming_value_passes() {
        let value = json!({"id": "a", "count": 2, "note": null, "kind": "fact", "tags": ["x"]});
        assert_eq!(validate(&schema(), &value), Ok(()));
    }

    #[test]
    fn each_broken_rule_is_reported_with_its_path() {
        let cases = [
            (json!({"count": 1}), "$: required id is missing"),
            (json!({"id": 1, "count": 1}), "$.id: 1 is not of type"),
            (
                json!({"id": "a", "count": -1}),
                "$.count: -1 breaks minimum",
            ),
            (
                json!({"id": "a", "count": 1.5}),
                "$.count: 1.5 is not of type",
            ),
            (
                json!({"id": "a", "count": 1, "kind": "x"}),
                "$.kind: 0 of 2 oneOf",
            ),
            (
                json!({"id": "a", "count": 1, "tags": [3]}),
                "$.tags[0]: 3 is not of type",
            ),
            (json!([]), "$: [] is not of type"),
        ];
        for (value, expected) in cases {
            let err = validate(&schema(), &value).unwrap_err();
            assert!(err.starts_with(expected), "{value}: {err}");
        }
    }

    #[test]
    fn an_unknown_keyword_is_an_error_not_a_pass() {
        let schema = json!({"type": "string", "pattern": "^a"});
        let err = validate(&schema, &json!("b")).unwrap_err();
        assert!(err.contains("does not know \"pattern\""), "{err}");
    }
}
