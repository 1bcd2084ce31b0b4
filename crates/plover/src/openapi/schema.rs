//! JSON schemas of field values and of objects, as responses show them and as request bodies
//! give them (docs/contract.md#objects and #request-bodies).

use utoipa::openapi::schema::{
    AdditionalProperties, KnownFormat, Object, ObjectBuilder, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{RefOr, Schema};
use utoipa::Number;

use super::Shape;
use crate::meta::{Bound, FieldMeta};
use crate::value::kind::FieldKind;

/// A date as responses write it.
const DATE_OUT: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
/// A date-time as responses write it.
const DATE_TIME_OUT: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$";
/// The text of [`DATE_IN`], which [`DATE_TIME_IN`] begins with.
macro_rules! date_in {
    () => {
        "[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
    };
}
/// A date a client sends, as a regular expression that only dates that exist match: years
/// 1000 to 9999, days up to 28 (the server takes every date; the description states a part
/// of them that is easy to write down exactly).
pub(crate) const DATE_IN: &str = date_in!();
/// A date-time a client sends: a date, then a space or `T` and the time of day, with
/// fractional seconds or without, or the date alone (midnight).
pub(crate) const DATE_TIME_IN: &str = concat!(
    date_in!(),
    "([ T]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?)?"
);
/// Text a client sends: anything but U+0000 (docs/contract.md#bounded-cost).
pub(crate) const TEXT_IN: &str = "^[^\\u0000]*$";

/// Whether a schema describes what a client sends or what the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// Request bodies and query parameters.
    In,
    /// Response bodies.
    Out,
}

/// `kind` alone, or `kind` or `null`.
fn schema_type(kind: Type, nullable: bool) -> SchemaType {
    if nullable {
        SchemaType::Array(vec![kind, Type::Null])
    } else {
        SchemaType::Type(kind)
    }
}

fn format(known: KnownFormat) -> Option<SchemaFormat> {
    Some(SchemaFormat::KnownFormat(known))
}

/// A value of `kind`, the way it travels.
pub(crate) fn value(kind: FieldKind, nullable: bool, way: Way) -> ObjectBuilder {
    let of = |t: Type| Object::builder().schema_type(schema_type(t, nullable));
    match kind {
        FieldKind::Int32 => of(Type::Integer)
            .format(format(KnownFormat::Int32))
            .minimum(Some(i32::MIN))
            .maximum(Some(i32::MAX)),
        FieldKind::Int64 => of(Type::Integer)
            .format(format(KnownFormat::Int64))
            .minimum(Some(i64::MIN))
            .maximum(Some(i64::MAX)),
        FieldKind::Float => of(Type::Number).format(format(KnownFormat::Double)),
        FieldKind::Bool => of(Type::Boolean),
        FieldKind::Text => match way {
            Way::In => of(Type::String).pattern(Some(TEXT_IN)),
            Way::Out => of(Type::String),
        },
        FieldKind::Date => of(Type::String)
            .format(format(KnownFormat::Date))
            .pattern(Some(match way {
                Way::In => format!("^{DATE_IN}$"),
                Way::Out => DATE_OUT.to_owned(),
            })),
        FieldKind::DateTime => match way {
            Way::In => of(Type::String)
                .pattern(Some(format!("^{DATE_TIME_IN}$")))
                .description(Some(
                "`YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` (either with fractional seconds) \
                 or `YYYY-MM-DD` (midnight)",
            )),
            Way::Out => of(Type::String)
                .pattern(Some(DATE_TIME_OUT))
                .description(Some("`YYYY-MM-DD HH:MM:SS`")),
        },
    }
}

/// Text a client sends that is not blank: some character other than white space, the
/// characters Rust's `char::is_whitespace` names, listed (regular expression engines disagree
/// on `\s`).
const NOT_BLANK_IN: &str = "^[^\\u0000]*[^\\u0000\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\u0000]*$";

/// The field's value schema with its constraints, its title (its name for people) and its
/// description (its doc comment).
fn described(builder: ObjectBuilder, field: &FieldMeta, way: Way) -> ObjectBuilder {
    let c = &field.constraints;
    let number = |bound: Bound| match bound {
        Bound::Int(n) => isize::try_from(n).map_or(Number::Float(bound.as_f64()), Number::Int),
        Bound::Float(x) => Number::Float(x),
    };
    let mut builder = builder.title(Some(field.verbose_name));
    if let Some(min) = c.min {
        builder = builder.minimum(Some(number(min)));
    }
    if let Some(max) = c.max {
        builder = builder.maximum(Some(number(max)));
    }
    builder = builder
        .min_length(c.min_len.map(|n| n as usize))
        .max_length(c.max_len.map(|n| n as usize));
    if c.not_blank && way == Way::In {
        builder = builder.pattern(Some(NOT_BLANK_IN));
    }
    if !c.choices.is_empty() {
        let mut values: Vec<serde_json::Value> = c.choices.iter().map(|&v| v.into()).collect();
        if field.nullable {
            values.push(serde_json::Value::Null);
        }
        builder = builder.enum_values(Some(values));
    }
    if field.doc.is_empty() {
        builder
    } else {
        builder.description(Some(field.doc))
    }
}

/// An object as responses show it: the exposed fields, nested objects for included
/// resources. No key is required: `fields=` may leave any out (without it, every key is
/// present); `prepare_data` hooks may add more.
pub(crate) fn read_object(shape: &Shape<'_>) -> Schema {
    let meta = shape.meta;
    let mut object = Object::builder()
        .schema_type(Type::Object)
        .title(Some(meta.verbose_name));
    if !meta.doc.is_empty() {
        object = object.description(Some(meta.doc));
    }
    for (idx, field) in meta.fields.iter().enumerate() {
        if !shape.exposed[idx] {
            continue;
        }
        let nested = shape.nested.iter().find(|(i, _)| *i == idx);
        let (key, schema) = match nested {
            Some((_, inner)) => {
                let Schema::Object(mut inner) = read_object(inner) else {
                    continue;
                };
                inner.schema_type = schema_type(Type::Object, field.nullable);
                (field.name, inner)
            }
            None => {
                let mut value = value(field.kind, field.nullable, Way::Out);
                if field.primary_key || field.read_only {
                    value = value.read_only(true);
                }
                (field.json_key(), described(value, field, Way::Out).build())
            }
        };
        object = object.property(key, schema);
    }
    Schema::Object(object.build())
}

/// A request body of POST (`creating`: required fields listed) or PUT and PATCH: the fields a
/// client may write here (per field, `writable`; never the owner field `owner`). Fields the
/// resource does not show are `writeOnly`; any other key is refused.
pub(crate) fn write_object(
    shape: &Shape<'_>,
    writable: &[bool],
    owner: Option<usize>,
    creating: bool,
) -> Schema {
    let meta = shape.meta;
    let mut object = Object::builder()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for (idx, field) in meta.fields.iter().enumerate() {
        if idx == meta.pk || Some(idx) == owner || !writable[idx] {
            continue;
        }
        let mut value = value(field.kind, field.nullable, Way::In);
        if !shape.exposed[idx] {
            value = value.write_only(true);
        }
        let key = field.json_key();
        object = object.property(key, described(value, field, Way::In).build());
        if creating && field.required {
            object = object.required(key);
        }
    }
    Schema::Object(object.build())
}

/// `{"error": "...", "fields": {"<key>": "..."}}` (docs/contract.md#errors).
pub(crate) fn error() -> Schema {
    let text = || Object::with_type(Type::String);
    let map_of = |values: Schema, description: &str| {
        Object::builder()
            .schema_type(Type::Object)
            .additional_properties(Some(AdditionalProperties::RefOr(RefOr::T(values))))
            .description(Some(description))
            .build()
    };
    let fields = map_of(
        Schema::Object(text()),
        "A message per field of the body, under the key the client sent",
    );
    let items = map_of(
        Schema::Object(fields.clone()),
        "Of a bulk create: the messages of each object that has errors, under its index in the \
         array (`\"2\"`), per field (`error` where no field is to blame)",
    );
    Schema::Object(
        Object::builder()
            .schema_type(Type::Object)
            .property("error", text())
            .required("error")
            .property("fields", fields)
            .property("items", items)
            .build(),
    )
}

#[cfg(test)]
mod not_blank_tests {
    /// The white space the pattern lists is exactly what `char::is_whitespace` says, which the
    /// server's `not_blank` check uses.
    #[test]
    fn the_pattern_lists_rusts_white_space() {
        let rust: Vec<u32> = (0..=0x10_FFFF)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .map(u32::from)
            .collect();
        let listed: Vec<u32> = (0x9..=0xD)
            .chain([0x20, 0x85, 0xA0, 0x1680])
            .chain(0x2000..=0x200A)
            .chain([0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
            .collect();
        assert_eq!(rust, listed);
        for c in [0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000] {
            assert!(
                super::NOT_BLANK_IN.contains(&format!("\\u{c:04x}")),
                "{c:x}"
            );
        }
    }
}
