//! The Rust field types Plover supports, and what they map to.

use syn::{GenericArgument, PathArguments, Type};

/// A supported value type (the runtime's `FieldKind`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int32,
    Int64,
    Float,
    Bool,
    Text,
    Date,
    DateTime,
}

impl Kind {
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Kind::Int32 => "Int32",
            Kind::Int64 => "Int64",
            Kind::Float => "Float",
            Kind::Bool => "Bool",
            Kind::Text => "Text",
            Kind::Date => "Date",
            Kind::DateTime => "DateTime",
        }
    }
}

pub(crate) const SUPPORTED: &str = "i32, i64, f32, f64, bool, String, chrono::NaiveDate, \
chrono::NaiveDateTime, or an Option of one of them";

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// `Option<T>` -> `Some(T)`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let seg = last_segment(ty)?;
    if seg.ident != "Option" {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The kind of a (non-`Option`) type.
pub(crate) fn kind_of(ty: &Type) -> Option<Kind> {
    let seg = last_segment(ty)?;
    if !seg.arguments.is_empty() {
        return None;
    }
    Some(match seg.ident.to_string().as_str() {
        "i32" => Kind::Int32,
        "i64" => Kind::Int64,
        "f32" | "f64" => Kind::Float,
        "bool" => Kind::Bool,
        "String" => Kind::Text,
        "NaiveDate" => Kind::Date,
        "NaiveDateTime" => Kind::DateTime,
        _ => return None,
    })
}
