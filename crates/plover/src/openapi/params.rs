//! The query parameters of a list (docs/contract.md#filters): every filter a resource's
//! rules allow, own fields and one join deep, with each operator that applies; `ordering`;
//! `limit`, `page`, `cursor`, `count`, `fields`, `q`, `or` and `not`.

use utoipa::openapi::path::{Parameter, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{Array, Object, ObjectBuilder, Type};
use utoipa::openapi::Schema;

use super::schema::{self, Way};
use super::{ResourceDoc, Shape};
use crate::kind::FieldKind;
use crate::listing::{
    allowed, COUNT, CURSOR, FIELDS, GROUP, LIMIT, MAX_GROUP_FIELDS, NOT, OR, ORDERING, PAGE, SEARCH,
};
use crate::meta::FieldMeta;
use crate::query::Func;

/// A query parameter.
fn query(name: &str, schema: impl Into<Schema>, description: &str) -> Parameter {
    Parameter::builder()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .schema(Some(schema.into()))
        .description(Some(description))
        .build()
}

/// The operators that apply to a field, with the schema of one value of each.
fn operators(field: &FieldMeta, max_chars: usize) -> Vec<(&'static str, ObjectBuilder)> {
    let kind = field.kind;
    let text = || Object::builder().schema_type(Type::String);
    // Query values are text: booleans in every spelling the parser takes.
    let choices = field.constraints.choices;
    let one = || match kind {
        FieldKind::Bool => text().enum_values(Some(["true", "false", "True", "False", "1", "0"])),
        // A choice field's filters take only its choices.
        FieldKind::Text if !choices.is_empty() => text().enum_values(Some(choices.to_vec())),
        FieldKind::Text => schema::value(kind, false, Way::In).max_length(Some(max_chars)),
        _ => schema::value(kind, false, Way::In),
    };
    let is = if kind == FieldKind::Bool {
        vec!["null", "none", "true", "false"]
    } else {
        vec!["null", "none"]
    };
    let mut ops = vec![
        ("eq", one()),
        ("ne", one()),
        ("lt", one()),
        ("lte", one()),
        ("gt", one()),
        ("gte", one()),
        ("in", in_list(field)),
        ("is", text().enum_values(Some(is))),
    ];
    if kind == FieldKind::Text {
        let pattern = || {
            if choices.is_empty() {
                text()
                    .pattern(Some(schema::TEXT_IN))
                    .max_length(Some(max_chars))
            } else {
                one()
            }
        };
        ops.push((
            "like",
            pattern().description(Some("`%` and `_` are wildcards; case-sensitive")),
        ));
        ops.push((
            "ilike",
            pattern().description(Some("`%` and `_` are wildcards; case-insensitive")),
        ));
    }
    ops
}

/// An `in` filter's value: comma-separated values of the field's type (or the parameter
/// repeated), each one that parses; text items may hold anything but a comma and U+0000.
fn in_list(field: &FieldMeta) -> ObjectBuilder {
    let choices = field.constraints.choices;
    // One item, as a regular expression that only values of the type match: dates with days
    // up to 28 and numbers with few digits, so that every match parses.
    let date = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])";
    let item = match field.kind {
        FieldKind::Text if !choices.is_empty() => {
            let escaped: Vec<String> = choices.iter().map(|c| regex_escape(c)).collect();
            format!("({})", escaped.join("|"))
        }
        FieldKind::Text => "[^,\\u0000]*".to_owned(),
        FieldKind::Int32 => "-?[0-9]{1,9}".to_owned(),
        FieldKind::Int64 => "-?[0-9]{1,18}".to_owned(),
        FieldKind::Float => "-?[0-9]{1,15}(\\.[0-9]{1,15})?".to_owned(),
        FieldKind::Bool => "(true|false|True|False|1|0)".to_owned(),
        FieldKind::Date => date.to_owned(),
        FieldKind::DateTime => format!("{date}( ([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9])?"),
    };
    Object::builder()
        .schema_type(Type::String)
        .pattern(Some(format!("^{item}(,{item}){{0,99}}$")))
        .description(Some(
            "comma-separated values (or the parameter repeated): any of them",
        ))
}

/// `text` with the characters that are special in a regular expression escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The filters on the field at the end of `path` (`names` are the API names along it).
fn field_filters(out: &mut Vec<Parameter>, field: &FieldMeta, names: &[&str], max_chars: usize) {
    let stem = names.join("__");
    for (op, schema) in operators(field, max_chars) {
        let description = format!("`{stem}` {op}");
        let schema = schema.build();
        if op == "eq" {
            out.push(query(&stem, schema.clone(), &description));
        }
        out.push(query(&format!("{stem}__{op}"), schema, &description));
    }
}

/// Every filter the resource allows: own fields, and the fields one foreign key away.
fn filters(doc: &ResourceDoc<'_>) -> Vec<Parameter> {
    let rules = doc.plan;
    let meta = rules.meta;
    let max_chars = rules.limits.max_value_chars;
    let mut out = Vec::new();
    for (idx, field) in meta.fields.iter().enumerate() {
        // `filter_fields` may allow a join (`user__username`) and not the key itself.
        if allowed(rules, &[idx], doc.joins) {
            field_filters(&mut out, field, &[field.name], max_chars);
        }
        let Some(target) = field.fk else { continue };
        let target = target();
        for (inner, related) in target.fields.iter().enumerate() {
            let names = [field.name, related.name];
            if allowed(rules, &[idx, inner], doc.joins) {
                field_filters(&mut out, related, &names, max_chars);
            }
        }
    }
    out
}

/// `ordering`: the exposed columns, `-` for descending, comma-separated.
fn ordering(doc: &ResourceDoc<'_>) -> Parameter {
    let meta = doc.shape.meta;
    let mut values = Vec::new();
    let mut push = |name: String| {
        values.push(format!("-{name}"));
        values.push(name);
    };
    for (idx, field) in meta.fields.iter().enumerate() {
        if doc.shape.exposed[idx] && !field.excluded {
            push(field.name.to_owned());
        }
        // The fields one foreign key away that filters may take (deeper ones work too).
        let Some(target) = field.fk else { continue };
        for (inner, related) in target().fields.iter().enumerate() {
            if allowed(doc.plan, &[idx, inner], doc.joins) {
                push(format!("{}__{}", field.name, related.name));
            }
        }
    }
    let item = Object::builder()
        .schema_type(Type::String)
        .enum_values(Some(values));
    let list = Array::builder().items(item).unique_items(true).build();
    let mut param = query(
        ORDERING,
        list,
        "Columns to order by, comma-separated; `-` orders descending; `<fk>__<field>` orders \
         by a related row's field (a missing or hidden row's as NULL). The primary key breaks \
         ties. A column named twice is a 400.",
    );
    param.style = Some(ParameterStyle::Form);
    param.explode = Some(false);
    param
}

/// A comma-separated list of `values` (form style, not exploded).
fn comma_list(name: &str, values: Vec<String>, description: &str) -> Parameter {
    let item = Object::builder()
        .schema_type(Type::String)
        .enum_values(Some(values));
    let list = Array::builder().items(item).min_items(Some(1)).build();
    let mut param = query(name, list, description);
    param.style = Some(ParameterStyle::Form);
    param.explode = Some(false);
    param
}

/// The keys of `shape`'s objects, and `include.key` for those of included objects (deeper
/// dotted names work too).
fn keys(shape: &Shape<'_>, prefix: &str, depth: usize, out: &mut Vec<String>) {
    for (idx, field) in shape.meta.fields.iter().enumerate() {
        if !shape.exposed[idx] {
            continue;
        }
        match shape.nested.iter().find(|(i, _)| *i == idx) {
            Some((_, inner)) => {
                out.push(format!("{prefix}{}", field.name));
                if depth == 0 {
                    keys(inner, &format!("{prefix}{}.", field.name), depth + 1, out);
                }
            }
            None => out.push(format!("{prefix}{}", field.json_key())),
        }
    }
}

/// `fields`: the keys to show (list and detail).
pub(crate) fn fields(shape: &Shape<'_>) -> Parameter {
    let mut names = Vec::new();
    keys(shape, "", 0, &mut names);
    comma_list(
        FIELDS,
        names,
        "Only these keys of each object, comma-separated; `<include>.<key>` keeps only some \
         keys of an included object. A name the objects do not show is a 400.",
    )
}

/// `q`, if the resource has search fields.
fn search(doc: &ResourceDoc<'_>) -> Option<Parameter> {
    let rules = doc.plan;
    if rules.search.is_empty() {
        return None;
    }
    let words = rules.search_words();
    let text = Object::builder()
        .schema_type(Type::String)
        .max_length(Some(rules.limits.max_value_chars))
        // At most `words` words, separated by whitespace (the one of Rust's `split_whitespace`,
        // or more: testers' `\s` may add U+001C to U+001F), without U+0000.
        .pattern(Some(format!(r"^\s*([^\s\u0000]+(\s+|$)){{0,{words}}}$")))
        .build();
    Some(query(
        SEARCH,
        text,
        &format!(
            "Keeps the objects where every word (at most {words}) is found in at least one \
             search field, case-insensitively and as typed (`%` and `_` are plain characters)"
        ),
    ))
}

/// `or` and `not`: groups of filter terms.
fn groups(doc: &ResourceDoc<'_>) -> [Parameter; 2] {
    let depth = doc.plan.limits.max_group_depth;
    let group = |name: &str, what: &str| {
        let text = Object::builder()
            .schema_type(Type::String)
            .pattern(Some(r"^\(.+\)$"))
            .build();
        query(
            name,
            text,
            &format!(
                "{what}: `({name}=...)` holds comma-separated filter terms `key=value` (the \
                 list's filter keys; values percent-encoded; `in` values separated by `|`) and \
                 nested `or=(...)`/`not=(...)` groups, at most {depth} deep. Repeat the \
                 parameter for several groups; each term counts against the filter limits."
            ),
        )
    };
    [
        group(OR, "Keeps the objects that match at least one term"),
        group(NOT, "Keeps the objects that do not match all of its terms"),
    ]
}

/// Every query parameter of a list.
pub(crate) fn list(doc: &ResourceDoc<'_>) -> Vec<Parameter> {
    let positive = || {
        Object::builder()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Int64,
            )))
            .minimum(Some(1))
            .build()
    };
    let mut params = vec![
        query(
            LIMIT,
            positive(),
            &format!(
                "Page size; at most {} (larger values count as {0})",
                doc.paginate_by
            ),
        ),
        query(PAGE, positive(), "Page number, from 1"),
        ordering(doc),
        query(
            COUNT,
            Object::builder()
                .schema_type(Type::String)
                .enum_values(Some(["exact", "estimated"]))
                .build(),
            "Adds `meta.count` (the rows the filters match) and `meta.pages`: `exact` counts \
             them, `estimated` takes PostgreSQL's planner estimate (exact on SQLite)",
        ),
    ];
    params.push(fields(&doc.shape));
    params.extend(search(doc));
    params.extend(groups(doc));
    if doc.keyset {
        params.push(query(
            CURSOR,
            Object::with_type(Type::String),
            "The position after which the page starts, from a `next` link",
        ));
    }
    params.extend(filters(doc));
    params
}

/// The fields (own, and one foreign key away) that filters may take, by their API names, for
/// which `fits` holds.
fn filterable(doc: &ResourceDoc<'_>, fits: impl Fn(&FieldMeta) -> bool) -> Vec<String> {
    let meta = doc.plan.meta;
    let mut names = Vec::new();
    for (idx, field) in meta.fields.iter().enumerate() {
        if allowed(doc.plan, &[idx], doc.joins) && fits(field) {
            names.push(field.name.to_owned());
        }
        let Some(target) = field.fk else { continue };
        for (inner, related) in target().fields.iter().enumerate() {
            if allowed(doc.plan, &[idx, inner], doc.joins) && fits(related) {
                names.push(format!("{}__{}", field.name, related.name));
            }
        }
    }
    names
}

/// A comma-separated list of field names among `names`, each once, at most `max` of them.
fn field_list(name: &str, names: Vec<String>, max: Option<usize>, description: &str) -> Parameter {
    let item = Object::builder()
        .schema_type(Type::String)
        .enum_values(Some(names));
    let list = Array::builder()
        .items(item)
        .unique_items(true)
        .min_items(Some(1))
        .max_items(max)
        .build();
    let mut param = query(name, list, description);
    param.style = Some(ParameterStyle::Form);
    param.explode = Some(false);
    param
}

/// Every query parameter of an aggregate: `group`, `count`, the functions, the list's filters.
pub(crate) fn aggregate(doc: &ResourceDoc<'_>) -> Vec<Parameter> {
    let any = filterable(doc, |_| true);
    let mut params = Vec::new();
    if !any.is_empty() {
        params.push(field_list(
            GROUP,
            any,
            Some(MAX_GROUP_FIELDS),
            "The fields whose values make a group (at most 3), comma-separated; `<fk>__<field>` \
             groups by a related row's field (a missing or hidden row's as NULL). Without it, \
             every row is one group.",
        ));
    }
    let count = query(
        COUNT,
        Object::builder()
            .schema_type(Type::String)
            .enum_values(Some([""]))
            .build(),
        "Adds `count`, the rows of each group (a flag: no value)",
    );
    params.push(count);
    for func in Func::ALL {
        let numeric = matches!(func, Func::Sum | Func::Avg);
        let names = filterable(doc, |f| {
            if numeric {
                f.kind.is_integer() || f.kind == FieldKind::Float
            } else {
                f.kind != FieldKind::Bool
            }
        });
        if names.is_empty() {
            continue;
        }
        let name = func.name();
        let description = format!(
            "Adds `{name}_<field>` for each field named, comma-separated: {}",
            match func {
                Func::Sum => "the sum of its values (an integer for an integer field)",
                Func::Avg => "the average of its values (a number; null over no values)",
                Func::Min => "its least value",
                Func::Max => "its greatest value",
            }
        );
        params.push(field_list(name, names, None, &description));
    }
    params.extend(filters(doc));
    params
}
