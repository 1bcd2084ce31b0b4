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
    /// A plain enum deriving `Choice`, stored as text.
    Choice,
}

impl Kind {
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Kind::Int32 => "Int32",
            Kind::Int64 => "Int64",
            Kind::Float => "Float",
            Kind::Bool => "Bool",
            Kind::Text | Kind::Choice => "Text",
            Kind::Date => "Date",
            Kind::DateTime => "DateTime",
        }
    }
}

pub(crate) const SUPPORTED: &str = "i32, i64, f32, f64, bool, String, chrono::NaiveDate, \
chrono::NaiveDateTime, a plain enum deriving `Choice`, or an Option of one of them";

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

/// A supported (non-`Option`) field type: its kind, its `plover::schema::SqlType` variant and
/// the diesel SQL type of a generated `table!`.
pub(crate) struct Scalar {
    pub(crate) kind: Kind,
    pub(crate) sql_type: &'static str,
    pub(crate) diesel_type: &'static str,
}

const fn scalar(kind: Kind, sql_type: &'static str, diesel_type: &'static str) -> Scalar {
    Scalar {
        kind,
        sql_type,
        diesel_type,
    }
}

/// Every supported type, by the last segment of its path.
const SCALARS: &[(&str, Scalar)] = &[
    ("i32", scalar(Kind::Int32, "Integer", "Integer")),
    ("i64", scalar(Kind::Int64, "BigInt", "BigInt")),
    ("f32", scalar(Kind::Float, "Real", "Float")),
    ("f64", scalar(Kind::Float, "Double", "Double")),
    ("bool", scalar(Kind::Bool, "Boolean", "Bool")),
    ("String", scalar(Kind::Text, "Text", "Text")),
    ("NaiveDate", scalar(Kind::Date, "Date", "Date")),
    (
        "NaiveDateTime",
        scalar(Kind::DateTime, "Timestamp", "Timestamp"),
    ),
];

/// A type of another name: a plain enum deriving `Choice` (checked by the compiler, through
/// the trait), stored as text.
const CHOICE: Scalar = scalar(Kind::Choice, "Text", "Text");

/// Types of the language and of common crates that are not field types: reported by the derive,
/// not taken for choices (the compiler would then report each use of the field).
const UNSUPPORTED: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i128",
    "isize",
    "char",
    "str",
    "Uuid",
    "Decimal",
    "DateTime",
    "NaiveTime",
    "Duration",
    "Value",
];

/// What a (non-`Option`) type maps to, if it is supported: a known type, or any other path
/// without generic arguments, taken for a choice.
pub(crate) fn scalar_of(ty: &Type) -> Option<&'static Scalar> {
    let seg = last_segment(ty)?;
    if !seg.arguments.is_empty() || UNSUPPORTED.iter().any(|name| seg.ident == name) {
        return None;
    }
    Some(
        SCALARS
            .iter()
            .find(|(name, _)| seg.ident == name)
            .map_or(&CHOICE, |(_, scalar)| scalar),
    )
}

/// The SQL literal of a default expression that is a plain literal (`0`, `-1`, `0.5`, `true`,
/// `"text"`, `String::new()`), for the column's `DEFAULT` in the generated schema; `None` for
/// any other expression (it is evaluated at insert time only).
pub(crate) fn sql_literal(expr: &syn::Expr) -> Option<String> {
    use syn::{Expr, Lit, UnOp};
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => Some(i.base10_digits().to_owned()),
            Lit::Float(f) => Some(f.base10_digits().to_owned()),
            Lit::Bool(b) => Some(if b.value { "TRUE" } else { "FALSE" }.to_owned()),
            Lit::Str(s) => Some(format!("'{}'", s.value().replace('\'', "''"))),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
            let inner = sql_literal(&u.expr)?;
            inner
                .starts_with(|c: char| c.is_ascii_digit())
                .then(|| format!("-{inner}"))
        }
        Expr::Call(call) if call.args.is_empty() => match &*call.func {
            Expr::Path(p) if quote::quote!(#p).to_string().replace(' ', "") == "String::new" => {
                Some("''".to_owned())
            }
            _ => None,
        },
        _ => None,
    }
}
