//! The query parameters of a list (docs/contract.md#filters): every filter a resource's
//! rules allow, own fields and one join deep, with each operator that applies; `ordering`;
//! `limit`, `page`, `cursor` and `count`.

use utoipa::openapi::path::{Parameter, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{Array, Object, ObjectBuilder, Type};
use utoipa::openapi::Schema;

use super::schema::{self, Way};
use super::ResourceDoc;
use crate::kind::FieldKind;
use crate::listing::{allowed, COUNT, CURSOR, GROUP, LIMIT, MAX_GROUP_FIELDS, ORDERING, PAGE};
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
        (
            "in",
            text().description(Some("comma-separated values (or the parameter repeated)")),
        ),
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
