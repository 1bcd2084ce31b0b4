//! The API reference page (`GET {prefix}/docs/`): the OpenAPI document as one HTML page,
//! rendered on the server at set-up. No script and no asset from elsewhere.

use std::fmt::Write;

use serde_json::Value;

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:72rem;\
padding:1rem 2rem;color:#1d232a}h1{margin-bottom:0}code{font-size:90%}\
nav a{margin-right:.8rem}section.op{border:1px solid #d5dbe1;border-radius:6px;\
margin:1rem 0;padding:.2rem 1rem 1rem}h3{font-size:1.05rem}.m{display:inline-block;\
min-width:4.2rem;padding:0 .4rem;border-radius:4px;color:#fff;font-weight:600;\
text-align:center;margin-right:.5rem}.get{background:#2b7bb9}.post{background:#2f9a5d}\
.put,.patch{background:#b9822b}.delete{background:#c0392b}table{border-collapse:collapse;\
width:100%;margin:.3rem 0}th,td{text-align:left;vertical-align:top;border-bottom:1px solid \
#e4e8ec;padding:.25rem .5rem}th{background:#f4f6f8}.muted{color:#5d6b78}h2{margin-top:2rem;\
border-bottom:2px solid #d5dbe1}summary{cursor:pointer;margin:.4rem 0}";

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Inline code: `a` in backticks becomes `<code>a</code>`; the rest is escaped.
fn prose(text: &str) -> String {
    let mut out = String::new();
    for (n, part) in text.split('`').enumerate() {
        if n % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The schema a `$ref` names, or the schema itself.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(path) => path
            .strip_prefix("#/")
            .map(|p| {
                p.split('/')
                    .fold(doc, |v, k| v.get(k).unwrap_or(&Value::Null))
            })
            .unwrap_or(schema),
        None => schema,
    }
}

/// A schema in a few words: its types, format, bounds, pattern or values.
fn summary(schema: &Value) -> String {
    if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
        let short = name.rsplit('/').next().unwrap_or(name);
        return format!("<code>{}</code>", escape(short));
    }
    let mut parts = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => parts.push(escape(t)),
        Some(Value::Array(ts)) => parts.push(
            ts.iter()
                .filter_map(Value::as_str)
                .map(escape)
                .collect::<Vec<_>>()
                .join(" | "),
        ),
        _ => {}
    }
    if let Some(alternatives) = schema.get("oneOf").and_then(Value::as_array) {
        let each: Vec<String> = alternatives.iter().map(summary).collect();
        parts.push(each.join(" or "));
    }
    if let Some(items) = schema.get("items") {
        parts.push(format!("of {}", summary(items)));
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        parts.push(format!("({})", escape(format)));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = values
            .iter()
            .take(12)
            .map(|v| {
                format!(
                    "<code>{}</code>",
                    escape(v.as_str().unwrap_or(&v.to_string()))
                )
            })
            .collect();
        let more = if values.len() > 12 { ", …" } else { "" };
        parts.push(format!("one of {}{more}", shown.join(", ")));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        parts.push(format!("matching <code>{}</code>", escape(pattern)));
    }
    if let Some(n) = schema.get("maxLength") {
        parts.push(format!("at most {n} characters"));
    }
    if schema.get("readOnly") == Some(&Value::Bool(true)) {
        parts.push("read-only".into());
    }
    if schema.get("writeOnly") == Some(&Value::Bool(true)) {
        parts.push("write-only".into());
    }
    parts.join(" ")
}

/// The properties of an object schema as a table.
fn properties(out: &mut String, doc: &Value, schema: &Value) {
    let schema = resolve(doc, schema);
    // One object or an array of them (a create's body): each alternative in turn.
    if let Some(alternatives) = schema.get("oneOf").and_then(Value::as_array) {
        for (i, alternative) in alternatives.iter().enumerate() {
            if i > 0 {
                out.push_str("<p>or</p>");
            }
            let resolved = resolve(doc, alternative);
            if resolved.get("properties").is_some() {
                properties(out, doc, alternative);
            } else {
                let description = prose(text(resolved, "description"));
                let sep = if description.is_empty() { "" } else { ": " };
                let _ = write!(out, "<p>{}{sep}{description}</p>", summary(alternative));
            }
        }
        return;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        let _ = write!(out, "<p>{}</p>", summary(schema));
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("<table><tr><th>key</th><th>value</th><th>required</th><th>description</th></tr>");
    for (key, prop) in props {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(key),
            summary(prop),
            if required.contains(&key.as_str()) {
                "yes"
            } else {
                ""
            },
            prose(text(prop, "description")),
        );
    }
    out.push_str("</table>");
}

/// The filter operators, as query-string suffixes.
const OPERATORS: [&str; 10] = [
    "eq", "ne", "lt", "lte", "gt", "gte", "in", "is", "like", "ilike",
];

/// The parameters of an operation: the plain ones in a table, and the filters one row per
/// field with the operators it takes (`field`, `field__ne`, ...), folded away.
fn parameters(out: &mut String, params: &[Value]) {
    let names: Vec<&str> = params.iter().map(|p| text(p, "name")).collect();
    // A filter is `stem__op` where the bare `stem` (equality) is a parameter too.
    let filter_of = |name: &str| {
        OPERATORS.iter().find_map(|op| {
            let stem = name.strip_suffix(op)?.strip_suffix("__")?;
            names.contains(&stem).then_some((stem.to_owned(), *op))
        })
    };
    let mut plain = String::new();
    let mut filters: Vec<(&str, &Value, Vec<&str>)> = Vec::new();
    for (param, name) in params.iter().zip(&names) {
        if let Some((stem, op)) = filter_of(name) {
            if let Some(entry) = filters.iter_mut().find(|(s, _, _)| *s == stem) {
                entry.2.push(op);
            }
        } else if names
            .iter()
            .any(|n| filter_of(n).is_some_and(|(s, _)| s == *name))
        {
            filters.push((name, param, Vec::new()));
        } else {
            let _ = write!(
                plain,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(name),
                escape(text(param, "in")),
                summary(param.get("schema").unwrap_or(&Value::Null)),
                prose(text(param, "description")),
            );
        }
    }
    if !plain.is_empty() {
        let _ = write!(
            out,
            "<table><tr><th>parameter</th><th>in</th><th>value</th><th>description</th></tr>{plain}</table>"
        );
    }
    if !filters.is_empty() {
        let _ = write!(
            out,
            "<details><summary>Filters: {} fields, each with its operators \
             (<code>field=v</code> is <code>field__eq=v</code>)</summary><table>\
             <tr><th>field</th><th>value</th><th>operators</th></tr>",
            filters.len()
        );
        for (name, param, ops) in filters {
            let ops: Vec<String> = ops.iter().map(|op| format!("<code>{op}</code>")).collect();
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                escape(name),
                summary(param.get("schema").unwrap_or(&Value::Null)),
                ops.join(" "),
            );
        }
        out.push_str("</table></details>");
    }
}

fn operation(out: &mut String, doc: &Value, path: &str, method: &str, op: &Value) {
    let _ = write!(
        out,
        "<section class=\"op\" id=\"{}\"><h3><span class=\"m {method}\">{}</span><code>{}</code></h3><p>{}</p>",
        escape(text(op, "operationId")),
        method.to_uppercase(),
        escape(path),
        prose(text(op, "summary")),
    );
    if let Some(description) = op.get("description").and_then(Value::as_str) {
        let _ = write!(out, "<p>{}</p>", prose(description));
    }
    if let Some(security) = op.get("security").and_then(Value::as_array) {
        let ways: Vec<String> = security
            .iter()
            .filter_map(Value::as_object)
            .map(|req| {
                req.keys()
                    .map(|k| format!("<code>{}</code>", escape(k)))
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .collect();
        let _ = write!(out, "<p>Credentials: {}.</p>", ways.join(", or "));
    }
    if let Some(params) = op.get("parameters").and_then(Value::as_array) {
        parameters(out, params);
    }
    if let Some(body) = op.pointer("/requestBody/content/application~1json/schema") {
        out.push_str("<p><strong>Body</strong> (JSON)</p>");
        properties(out, doc, body);
    }
    if let Some(responses) = op.get("responses").and_then(Value::as_object) {
        out.push_str("<p><strong>Responses</strong></p><table>");
        for (status, response) in responses {
            let response = resolve(doc, response);
            let schema = response
                .pointer("/content/application~1json/schema")
                .map(summary)
                .unwrap_or_default();
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{schema}</td></tr>",
                escape(status),
                prose(text(response, "description")),
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// The reference page of the document `doc`, served beside it at `json_path`.
pub(crate) fn page(doc: &Value, json_path: &str) -> String {
    let title = escape(
        doc.pointer("/info/title")
            .and_then(Value::as_str)
            .unwrap_or("API"),
    );
    let mut out = format!(
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{title}: API reference</title>\
         <style>{STYLE}</style><body><h1>{title}</h1>\
         <p class=\"muted\">The OpenAPI 3.1 document: <a href=\"{0}\">{0}</a>. Every error is \
         <code>{{\"error\": \"…\"}}</code>, with <code>\"fields\"</code> for invalid bodies.</p><nav>",
        escape(json_path)
    );
    let tags = doc
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for tag in &tags {
        let name = escape(text(tag, "name"));
        let _ = write!(out, "<a href=\"#{name}\">{name}</a>");
    }
    out.push_str("</nav>");
    let paths = doc.get("paths").and_then(Value::as_object);
    let mut shown = Vec::new();
    for tag in &tags {
        let name = text(tag, "name");
        let _ = write!(out, "<h2 id=\"{0}\">{0}</h2>", escape(name));
        if let Some(description) = tag.get("description").and_then(Value::as_str) {
            let _ = write!(out, "<p>{}</p>", prose(description));
        }
        for (path, item) in paths.into_iter().flatten() {
            for (method, op) in item.as_object().into_iter().flatten() {
                let tagged = op
                    .get("tags")
                    .and_then(Value::as_array)
                    .is_some_and(|t| t.iter().any(|t| t.as_str() == Some(name)));
                if tagged {
                    operation(&mut out, doc, path, method, op);
                    shown.push((path.as_str(), method.as_str()));
                }
            }
        }
    }
    // Operations an application added without a tag of ours.
    let mut other = String::new();
    for (path, item) in paths.into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if op.is_object() && !shown.contains(&(path.as_str(), method.as_str())) {
                operation(&mut other, doc, path, method, op);
            }
        }
    }
    if !other.is_empty() {
        let _ = write!(out, "<h2 id=\"other\">Other operations</h2>{other}");
    }
    out.push_str("</body></html>");
    out
}
