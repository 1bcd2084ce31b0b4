//! The query parameters of a list (docs/contract.md#filters): every filter a resource's
//! rules allow, own fields and one join deep, with each operator that applies; `ordering`;
//! `limit`, `page`, `cursor`, `count`, `fields`, `q`, `or` and `not`.

use utoipa::openapi::path::{Parameter, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{AdditionalProperties, AnyOf, Array, Object, ObjectBuilder, Type};
use utoipa::openapi::Required;
use utoipa::openapi::Schema;

use super::schema::{self, Way};
use super::{ResourceDoc, Shape};
use crate::changes::feed::{AFTER, CHANGES};
use crate::listing::{
    allowed, is_filter, COUNT, CURSOR, FIELDS, GROUP, LIMIT, MAX_AGGREGATE_VALUES,
    MAX_GROUP_FIELDS, NOT, ON, OR, ORDERING, PAGE, SEARCH,
};
use crate::meta::FieldMeta;
use crate::query::{Func, Limits};
use crate::value::kind::FieldKind;

/// A query parameter.
fn query(name: &str, schema: impl Into<Schema>, description: &str) -> Parameter {
    Parameter::builder()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .schema(Some(schema.into()))
        .description(Some(description))
        .build()
}

/// How the description shares a list's bounds ([`Limits`]) between its parameters, so that
/// every request it allows is within them: a schema-driven tester that sends every optional
/// parameter at once stays inside `max_conditions`, `max_patterns` and `max_values`. The
/// server takes more (any mix up to the bounds); the description states a safe share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shares {
    /// Filter keys other than `like` and `ilike`.
    filters: usize,
    /// `like` and `ilike` filter keys.
    patterns: usize,
    /// Terms of the one `or` group and of the one `not` group the description shows.
    terms: usize,
    /// Items of one `in` list.
    in_items: usize,
}

impl Shares {
    fn new(limits: &Limits) -> Shares {
        // Each group costs a condition of its own and one per term; each term, pattern and
        // plain filter holds at least one value.
        let terms = (limits.max_conditions / 8)
            .min(limits.max_values / 4)
            .min(8);
        let groups = if terms == 0 { 0 } else { 2 * (terms + 1) };
        let rest = limits.max_conditions.saturating_sub(groups);
        let values = limits.max_values.saturating_sub(2 * terms);
        let patterns = limits.max_patterns.min(rest / 2).min(values / 2);
        let values = values - patterns;
        let filters = (rest - patterns).min(values);
        // `in` lists share the values left.
        let in_items = match filters {
            0 => 0,
            n => (values / n).min(limits.max_in_values).min(100),
        };
        Shares {
            filters,
            patterns,
            terms,
            in_items,
        }
    }
}

/// One value of `kind` (`choices` for a text field that has them) as a regular expression that
/// only values that parse match; text holds none of the characters in `forbidden`.
fn item(kind: FieldKind, choices: &[&str], forbidden: &str) -> String {
    match kind {
        FieldKind::Text if !choices.is_empty() => {
            let escaped: Vec<String> = choices
                .iter()
                .filter(|c| !c.contains(|ch| forbidden.contains(ch)))
                .map(|c| regex_escape(c))
                .collect();
            format!("({})", escaped.join("|"))
        }
        FieldKind::Text => format!("[^{}\\u0000]*", regex_escape(forbidden)),
        FieldKind::Int32 => "-?[0-9]{1,9}".to_owned(),
        FieldKind::Int64 => "-?[0-9]{1,18}".to_owned(),
        FieldKind::Float => "-?[0-9]{1,15}(\\.[0-9]{1,15})?".to_owned(),
        FieldKind::Bool => "(true|false|True|False|1|0)".to_owned(),
        FieldKind::Date => schema::DATE_IN.to_owned(),
        FieldKind::DateTime => schema::DATE_TIME_IN.to_owned(),
    }
}

/// The values `is` takes on a field of `kind`.
fn is_values(kind: FieldKind) -> &'static [&'static str] {
    if kind == FieldKind::Bool {
        &["null", "none", "true", "false"]
    } else {
        &["null", "none"]
    }
}

/// The operators that apply to a field, with the schema of one value of each.
fn operators(
    field: &FieldMeta,
    shares: Shares,
    max_chars: usize,
) -> Vec<(&'static str, ObjectBuilder)> {
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
    let mut ops = vec![
        ("eq", one()),
        ("ne", one()),
        ("lt", one()),
        ("lte", one()),
        ("gt", one()),
        ("gte", one()),
        ("in", in_list(field, shares.in_items)),
        ("is", text().enum_values(Some(is_values(kind).to_vec()))),
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
/// repeated), each one that parses, at most `items` of them; text items may hold anything but
/// a comma and U+0000.
fn in_list(field: &FieldMeta, items: usize) -> ObjectBuilder {
    let one = item(field.kind, field.constraints.choices, ",");
    Object::builder()
        .schema_type(Type::String)
        .pattern(Some(format!(
            "^{one}(,{one}){{0,{}}}$",
            items.saturating_sub(1)
        )))
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

/// The filter keys the resource allows, own fields and the fields one foreign key away
/// (`user__username`), with the field at the end of each.
fn filter_stems(doc: &ResourceDoc<'_>) -> Vec<(String, &'static FieldMeta)> {
    let rules = doc.plan;
    let meta = rules.meta;
    let mut out = Vec::new();
    for (idx, field) in meta.fields.iter().enumerate() {
        // `filter_fields` may allow a join (`user__username`) and not the key itself.
        if allowed(rules, &[idx], doc.joins) {
            out.push((field.name.to_owned(), field));
        }
        let Some(target) = field.fk else { continue };
        let target = target();
        for (inner, related) in target.fields.iter().enumerate() {
            if allowed(rules, &[idx, inner], doc.joins) {
                out.push((format!("{}__{}", field.name, related.name), related));
            }
        }
    }
    out
}

/// One query parameter per property of `properties`, described as one object parameter
/// (form style, exploded: `?a=1&b=2`) holding at most `max` of them.
fn keys_param(name: &str, properties: Vec<(String, Schema)>, max: usize, what: &str) -> Parameter {
    let mut object = Object::builder()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .max_properties(Some(max));
    for (key, schema) in properties {
        object = object.property(key, schema);
    }
    let mut param = query(
        name,
        object.build(),
        &format!(
            "{what}: each property is a query parameter of its own (`key=value`); at most \
             {max} of them in one request"
        ),
    );
    param.style = Some(ParameterStyle::Form);
    param.explode = Some(true);
    param
}

/// Every filter the resource allows, as two object parameters: `filters` and the `like` and
/// `ilike` ones, `patterns`, each holding its share of the bounds.
fn filters(doc: &ResourceDoc<'_>, shares: Shares) -> Vec<Parameter> {
    let max_chars = doc.plan.limits.max_value_chars;
    let (mut plain, mut patterns) = (Vec::new(), Vec::new());
    for (stem, field) in filter_stems(doc) {
        for (op, schema) in operators(field, shares, max_chars) {
            let schema: Schema = schema
                .description(Some(format!("`{stem}` {op}")))
                .build()
                .into();
            let out = if matches!(op, "like" | "ilike") {
                &mut patterns
            } else {
                &mut plain
            };
            // `key=value` is `key__eq=value`, unless the name is a parameter of its own (an
            // API key's `key`).
            if op == "eq" && is_filter(&stem) {
                out.push((stem.clone(), schema.clone()));
            }
            out.push((format!("{stem}__{op}"), schema));
        }
    }
    let mut params = Vec::new();
    if !plain.is_empty() {
        params.push(keys_param(
            "filters",
            plain,
            shares.filters,
            "Filters (`<field>`, `<field>__<op>`, `<fk>__<field>__<op>`), all of which the \
             objects must match",
        ));
    }
    if !patterns.is_empty() && shares.patterns > 0 {
        params.push(keys_param(
            "patterns",
            patterns,
            shares.patterns,
            "Pattern filters (`like`, `ilike`), all of which the objects must match",
        ));
    }
    params
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
    let list = Array::builder()
        .items(item)
        .unique_items(true)
        .max_items(Some(meta.fields.len()))
        .build();
    // `ordering=` is the default order (as in DRF). Tools read that value as an empty list or
    // as a list of one empty name: the description admits it either way, and nothing else
    // with an empty name (`ordering=a,` is a 400).
    let empty = Array::builder()
        .items(
            Object::builder()
                .schema_type(Type::String)
                .enum_values(Some([""])),
        )
        .max_items(Some(1))
        .build();
    let either = AnyOf::builder().item(list).item(empty).build();
    let mut param = query(
        ORDERING,
        either,
        "Columns to order by, comma-separated; `-` orders descending; `<fk>__<field>` orders \
         by a related row's field (a missing or hidden row's as NULL). The primary key breaks \
         ties. A column named twice (`a,-a` too) is a 400. Empty (`ordering=`): the default \
         order, by the primary key.",
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

/// The words `q` takes in the description (`fields`: its search fields), out of the pattern
/// share: each word counts once per search field, in the budget of the `like` and `ilike` values (half of it, or one word
/// where half holds none); what the words take is left out of `shares.patterns`.
fn words_share(fields: usize, shares: &mut Shares) -> usize {
    if fields == 0 || fields > shares.patterns {
        return 0;
    }
    let words = (shares.patterns / 2 / fields).max(1);
    shares.patterns -= words * fields;
    words
}

/// `q` with at most `words` words, if the resource has search fields and the share holds any.
fn search(doc: &ResourceDoc<'_>, words: usize) -> Option<Parameter> {
    let rules = doc.plan;
    if words == 0 {
        return None;
    }
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
            "Keeps the objects where every word (at most {words} here) is found in at least one \
             search field, case-insensitively and as typed (`%` and `_` are plain characters). \
             The server takes up to {} words, each counting once per search field against the \
             request's {} patterns, which `like` and `ilike` values share",
            rules.search_words(),
            rules.limits.max_patterns
        ),
    ))
}

/// `or` and `not`: groups of filter terms. The schema admits one group of each, of at most
/// `shares.terms` comparison terms (no `in`, `like` or `ilike`, no nested group), whose values
/// all parse; the description says what else the server takes.
fn groups(doc: &ResourceDoc<'_>, shares: Shares) -> Vec<Parameter> {
    if shares.terms == 0 {
        return Vec::new();
    }
    // A value inside a group is percent-decoded once more: no `%`, and no character of the
    // group syntax.
    let terms: Vec<String> = filter_stems(doc)
        .into_iter()
        .map(|(stem, field)| {
            let value = item(field.kind, field.constraints.choices, ",()%");
            let is = is_values(field.kind).join("|");
            let bare = if is_filter(&stem) { "?" } else { "" };
            format!("{stem}(__(eq|ne|lt|lte|gt|gte)){bare}={value}|{stem}__is=({is})")
        })
        .collect();
    if terms.is_empty() {
        return Vec::new();
    }
    let term = format!("({})", terms.join("|"));
    let pattern = format!(
        "^\\({term}(,{term}){{0,{}}}\\)$",
        shares.terms.saturating_sub(1)
    );
    let depth = doc.plan.limits.max_group_depth;
    let group = |name: &str, what: &str| {
        let text = Object::builder()
            .schema_type(Type::String)
            .pattern(Some(pattern.clone()))
            .build();
        query(
            name,
            text,
            &format!(
                "{what}: `({name}=...)` holds comma-separated filter terms `key=value` (the \
                 list's filter keys; values percent-encoded; `in` values separated by `|`) and \
                 nested `or=(...)`/`not=(...)` groups, at most {depth} deep. Repeat the \
                 parameter for several groups; each term counts against the filter limits. \
                 The schema shows a share that is always within them: comparisons, at most {} \
                 terms.",
                shares.terms
            ),
        )
    };
    vec![
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
                .enum_values(Some(["exact", "estimated", "auto"]))
                .build(),
            "Adds `meta.count` (the rows the filters match) and `meta.pages`: `exact` counts \
             them, `estimated` takes PostgreSQL's planner estimate (exact on SQLite), `auto` \
             counts exactly unless the planner estimates more rows than the \
             resource's `count_exact_up_to`, and then takes the estimate",
        ),
    ];
    params.push(fields(&doc.shape));
    if doc.keyset {
        params.push(query(
            CURSOR,
            Object::builder()
                .schema_type(Type::String)
                .min_length(Some(1))
                .build(),
            "The position after which the page starts, from a `next` link",
        ));
    }
    if doc.changes {
        params.push(query(
            CHANGES,
            Object::builder()
                .schema_type(Type::String)
                .enum_values(Some(["cursor"]))
                .build(),
            "Adds `meta.changes_cursor`: the id of the last change-feed event the page's \
             snapshot includes, to subscribe after",
        ));
    }
    params.extend(conditions(doc));
    params
}

/// The parameters of a change feed: where it resumes, `fields`, and the list's conditions.
pub(crate) fn feed(doc: &ResourceDoc<'_>) -> Vec<Parameter> {
    let id = || {
        Object::builder()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Int64,
            )))
            .minimum(Some(0))
            .build()
    };
    let mut last = query(
        "Last-Event-ID",
        id(),
        "Resumes after this event id (what a browser's EventSource sends when it reconnects); \
         wins over `after`",
    );
    last.parameter_in = ParameterIn::Header;
    let mut params = vec![
        query(
            AFTER,
            id(),
            "Replays the events after this id, then goes live (without it: live from now)",
        ),
        last,
        fields(&doc.shape),
    ];
    params.extend(conditions(doc));
    params
}

/// The parameters that choose the rows, a list's, an aggregate's and a write by filter's: `q`,
/// `or`, `not` and the filters, sharing the list's limits.
pub(crate) fn conditions(doc: &ResourceDoc<'_>) -> Vec<Parameter> {
    let mut shares = Shares::new(&doc.plan.limits);
    let words = words_share(doc.plan.search.len(), &mut shares);
    let mut params: Vec<Parameter> = search(doc, words).into_iter().collect();
    params.extend(groups(doc, shares));
    params.extend(filters(doc, shares));
    params
}

/// The fields (own, and one foreign key away) that filters may take, by their API names, for
/// which `fits` holds.
fn filterable(doc: &ResourceDoc<'_>, fits: impl Fn(&FieldMeta) -> bool) -> Vec<String> {
    filter_stems(doc)
        .into_iter()
        .filter(|(_, field)| fits(field))
        .map(|(stem, _)| stem)
        .collect()
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
        // The functions share the bound on values: each may take its share, so that every
        // request the document allows is within it.
        let share = MAX_AGGREGATE_VALUES / Func::ALL.len();
        let description = format!(
            "Adds `{name}_<field>` for each field named, comma-separated (at most {share} \
             here; the server takes {MAX_AGGREGATE_VALUES} across sum, avg, min and max): {}",
            match func {
                Func::Sum => "the sum of its values (an integer for an integer field)",
                Func::Avg => "the average of its values (a number; null over no values)",
                Func::Min => "its least value",
                Func::Max => "its greatest value",
            }
        );
        params.push(field_list(name, names, Some(share), &description));
    }
    params.extend(conditions(doc));
    params
}

/// The `on` parameter of an upsert: one of `fields`.
pub(crate) fn upsert_on(fields: &[&str]) -> Parameter {
    let mut param = query(
        ON,
        Object::builder()
            .schema_type(Type::String)
            .enum_values(Some(fields.to_vec()))
            .build(),
        "The unique field whose value, in each object, finds the row to change (none: it is \
         created)",
    );
    param.required = Required::True;
    param
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request the description allows is within the limits: all filters at once, each
    /// `in` list full, both groups full.
    #[test]
    fn shares_stay_within_the_limits() {
        let mut checked = 0;
        for conditions in [0, 1, 3, 8, 17, 64, 200] {
            for patterns in [0, 1, 16, 100] {
                for values in [0, 10, 500, 4_000] {
                    for in_values in [1, 50, 1_000] {
                        let limits = Limits {
                            max_conditions: conditions,
                            max_patterns: patterns,
                            max_values: values,
                            max_in_values: in_values,
                            ..Limits::default()
                        };
                        let s = Shares::new(&limits);
                        let groups = if s.terms == 0 { 0 } else { 2 * (s.terms + 1) };
                        assert!(s.filters + s.patterns + groups <= conditions, "{s:?}");
                        assert!(s.patterns <= patterns, "{s:?}");
                        assert!(s.in_items <= in_values, "{s:?}");
                        let most = s.filters * s.in_items.max(1) + s.patterns + 2 * s.terms;
                        assert!(most <= values, "{limits:?} {s:?}");
                        checked += 1;
                    }
                }
            }
        }
        let s = Shares::new(&Limits::default());
        assert_eq!(
            (s.filters, s.patterns, s.terms, s.in_items),
            (30, 16, 8, 100)
        );
        assert_eq!(checked, 336);
    }

    /// The words `q` takes in the description and the pattern filters it shows fit in the
    /// pattern share together: each word counts once per search field.
    #[test]
    fn search_words_and_pattern_filters_share_the_patterns() {
        for patterns in [0, 1, 2, 3, 16, 100] {
            for fields in 0..=20 {
                let mut s = Shares::new(&Limits {
                    max_patterns: patterns,
                    ..Limits::default()
                });
                let share = s.patterns;
                let words = words_share(fields, &mut s);
                assert!(
                    words * fields + s.patterns <= share,
                    "{fields} {words} {s:?}"
                );
                assert_eq!(words > 0, fields > 0 && fields <= share, "{fields} {share}");
            }
        }
        let mut s = Shares::new(&Limits::default());
        assert_eq!((words_share(2, &mut s), s.patterns), (4, 8));
    }
}
