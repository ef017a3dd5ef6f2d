//! Input and output schemas: an input schema is generated from a tool's argument type, simplified
//! to the flat JSON Schema that `tools/list` advertises, and used to check arguments before they
//! reach a handler; an output schema is generated from the type a tool answers with.
//!
//! Owns: the shape of every `inputSchema` (`{"type":"object","properties":…,"required":[…]}`, enums
//! as `enum`, no `$ref`, no `null` in the type of an optional field), of every `outputSchema`
//! (JSON Schema 2020-12 of the answer as it serializes, every subschema inline) and every
//! `invalid args: …` text. Guarantees that an argument error names the offending field.
//!
//! Must never: accept arguments the schema refuses, or reject extra keys (they are ignored, as the
//! reference's validator strips them).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The advertised input schema of the argument type `A`.
pub fn input_schema_for<A: JsonSchema>() -> Map<String, Value> {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let root = generator.into_root_schema_for::<A>();
    let mut schema = match root.to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    schema.remove("title");
    schema.remove("description");
    schema.remove("definitions");
    schema.insert("type".into(), Value::String("object".into()));
    if !schema.contains_key("properties") {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            simplify(prop);
        }
    }
    if schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        schema.remove("required");
    }
    schema
}

/// The advertised output schema of the answer type `O`, as `O` serializes: JSON Schema 2020-12
/// (MCP's default dialect) with every subschema inline, without `$schema` or the root's `title` and
/// `description` (the tool's description says what it answers). A root that is a choice of objects
/// (an internally tagged enum) also says `"type": "object"`: peers before `2026-07-28` accept only
/// object schemas, and this one is.
pub fn output_schema_for<O: JsonSchema>() -> Map<String, Value> {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = match generator.into_root_schema_for::<O>().to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    schema.remove("title");
    schema.remove("description");
    let only_objects = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|alternatives| {
                alternatives
                    .iter()
                    .all(|a| a.get("type") == Some(&Value::String("object".into())))
            })
    };
    if !schema.contains_key("type") && (only_objects("oneOf") || only_objects("anyOf")) {
        schema.insert("type".into(), Value::String("object".into()));
    }
    schema
}

/// Removes what the wire format does not carry: `null` alternatives of optional fields, integer
/// `format`s, and `title`s; collapses a single-entry `anyOf`/`oneOf` into its entry, and a choice
/// of string constants into one `enum`.
fn simplify(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    map.remove("format");
    map.remove("title");
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let replacement = if kept.len() == 1 {
            kept[0].clone()
        } else {
            Value::Array(kept)
        };
        map.insert("type".into(), replacement);
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alternatives)) = map.remove(key) else {
            continue;
        };
        let kept: Vec<Value> = alternatives
            .into_iter()
            .filter(|a| a.get("type") != Some(&Value::String("null".into())))
            .collect();
        let constants: Vec<Value> = kept.iter().flat_map(enum_values).collect();
        if kept.len() == 1 {
            if let Value::Object(inner) = &kept[0] {
                for (k, v) in inner {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            return simplify(schema);
        } else if !kept.is_empty() && kept.iter().all(|a| !enum_values(a).is_empty()) {
            map.insert("type".into(), Value::String("string".into()));
            map.insert("enum".into(), Value::Array(constants));
        } else {
            map.insert(key.into(), Value::Array(kept));
        }
    }
    simplify_children(schema);
}

/// The constants an enum alternative stands for: its `const`, or its `enum` list.
fn enum_values(alternative: &Value) -> Vec<Value> {
    match (alternative.get("const"), alternative.get("enum")) {
        (Some(c), _) => vec![c.clone()],
        (None, Some(Value::Array(values))) => values.clone(),
        _ => Vec::new(),
    }
}

fn simplify_children(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(items) = map.get_mut("items") {
        simplify(items);
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for prop in props.values_mut() {
            simplify(prop);
        }
    }
}

/// Checks `args` against a schema made by [`input_schema_for`]. `Err` carries the text after
/// `invalid args: `, beginning with the field's name.
pub fn check_args(schema: &Map<String, Value>, args: &Map<String, Value>) -> Result<(), String> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if args.get(name).is_none_or(Value::is_null) {
                return Err(format!("{name}: required field is missing"));
            }
        }
    }
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, prop) in props {
        match args.get(name) {
            None | Some(Value::Null) => {}
            Some(value) => check_value(name, prop, value)?,
        }
    }
    Ok(())
}

/// Rewrites whole-number floats (`2.0`) as integers where the schema wants an integer, so that an
/// argument [`check_args`] accepted also deserializes. Run after a successful check.
pub fn coerce_whole_numbers(schema: &Map<String, Value>, args: &mut Map<String, Value>) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (name, value) in args.iter_mut() {
        if let Some(prop) = props.get(name) {
            coerce_value(prop, value);
        }
    }
}

fn coerce_value(schema: &Value, value: &mut Value) {
    let wants_integer = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if let Value::Array(items) = value {
        if let Some(item_schema) = schema.get("items") {
            items
                .iter_mut()
                .for_each(|item| coerce_value(item_schema, item));
        }
    } else if wants_integer
        && !value.is_i64()
        && !value.is_u64()
        && let Some(f) = value.as_f64()
        && matches_type("integer", value)
    {
        *value = Value::from(f as i64);
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn matches_type(expected: &str, value: &Value) -> bool {
    match expected {
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        }
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn check_value(path: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let Value::Object(schema) = schema else {
        return Ok(());
    };
    let expected: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !expected.is_empty() && !expected.iter().any(|t| matches_type(t, value)) {
        return Err(format!(
            "{path}: expected {}, got {}",
            expected.join(" or "),
            type_name(value)
        ));
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let names: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return Err(format!(
            "{path}: {} is not one of {}",
            value,
            names.join(", ")
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{path}: must be at least {min}, got {value}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{path}: must be at most {max}, got {value}"));
        }
    }
    if let Some(s) = value.as_str()
        && let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && (s.chars().count() as u64) < min
    {
        return Err(if min == 1 {
            format!("{path}: must not be empty")
        } else {
            format!("{path}: must be at least {min} characters")
        });
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, item) in values.iter().enumerate() {
            check_value(&format!("{path}[{i}]"), items, item)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Colour {
        /// Documented variants make schemars emit `oneOf` consts, which must still become `enum`.
        Red,
        /// Green.
        Green,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Sample {
        /// The name.
        #[schemars(length(min = 1))]
        task_id: String,
        colour: Option<Colour>,
        #[schemars(range(min = 1, max = 100))]
        limit: Option<i64>,
        tags: Option<Vec<String>>,
        ready: Option<bool>,
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn schema_is_flat_with_required_and_inline_enum() {
        let s = input_schema_for::<Sample>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["taskId"]));
        assert_eq!(s["properties"]["taskId"]["type"], "string");
        assert_eq!(s["properties"]["colour"]["type"], "string");
        assert_eq!(s["properties"]["colour"]["enum"], json!(["red", "green"]));
        assert_eq!(s["properties"]["limit"]["type"], "integer");
        assert!(s["properties"]["limit"].get("format").is_none());
        assert_eq!(s["properties"]["ready"]["type"], "boolean");
        assert_eq!(s["properties"]["tags"]["items"]["type"], "string");
        assert!(!s.contains_key("$schema"));
        assert!(!s.contains_key("title"));
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct NothingRequired {
        a: Option<String>,
    }

    #[test]
    fn required_is_omitted_when_nothing_is_required() {
        let s = input_schema_for::<NothingRequired>();
        assert!(!s.contains_key("required"));
    }

    #[test]
    fn every_kind_of_bad_argument_names_its_field() {
        let s = input_schema_for::<Sample>();
        let cases = [
            (json!({}), "taskId: required field is missing"),
            (json!({"taskId": 7}), "taskId: expected string, got integer"),
            (json!({"taskId": ""}), "taskId: must not be empty"),
            (
                json!({"taskId": "x", "colour": "blue"}),
                "colour: \"blue\" is not one of red, green",
            ),
            (
                json!({"taskId": "x", "limit": 0}),
                "limit: must be at least 1",
            ),
            (
                json!({"taskId": "x", "limit": 101}),
                "limit: must be at most 100",
            ),
            (
                json!({"taskId": "x", "limit": 1.5}),
                "limit: expected integer, got number",
            ),
            (
                json!({"taskId": "x", "limit": 1e300}),
                "limit: expected integer, got number",
            ),
            (
                json!({"taskId": "x", "tags": ["a", 2]}),
                "tags[1]: expected string, got integer",
            ),
            (
                json!({"taskId": "x", "ready": "yes"}),
                "ready: expected boolean, got string",
            ),
        ];
        for (input, expected) in cases {
            let err = check_args(&s, &args(input.clone())).unwrap_err();
            assert!(err.starts_with(expected), "{input} gave {err:?}");
        }
    }

    #[derive(serde::Serialize, JsonSchema)]
    #[serde(tag = "saved", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Saved {
        Fact { fact: Answer },
        Note { text: String },
    }

    #[derive(serde::Serialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Answer {
        /// The id.
        task_id: String,
        parent: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        count: usize,
    }

    #[test]
    fn output_schemas_describe_the_answer_as_it_serializes() {
        let s = output_schema_for::<Answer>();
        assert_eq!(s["type"], "object");
        assert!(!s.contains_key("$schema") && !s.contains_key("title"));
        assert_eq!(s["properties"]["taskId"]["description"], "The id.");
        assert_eq!(s["properties"]["parent"]["type"], json!(["string", "null"]));
        // A field left out when empty is not required; one written as null is.
        assert_eq!(s["required"], json!(["taskId", "parent", "count"]));
        let list = output_schema_for::<Vec<Answer>>();
        assert_eq!(list["type"], "array");
        assert_eq!(list["items"]["properties"]["count"]["type"], "integer");
        let tagged = output_schema_for::<Saved>();
        assert_eq!(tagged["type"], "object", "{tagged:?}");
        assert_eq!(tagged["oneOf"].as_array().unwrap().len(), 2);
        assert!(!Value::Object(tagged).to_string().contains("$ref"));
    }

    #[test]
    fn good_arguments_and_extra_keys_pass() {
        let s = input_schema_for::<Sample>();
        let ok = json!({"taskId": "x", "colour": "red", "limit": 100, "tags": [], "extra": 1, "ready": null});
        assert_eq!(check_args(&s, &args(ok)), Ok(()));
    }
}
