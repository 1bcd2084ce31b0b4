//! The derive's second step: the checks of a model that `ast` has read, each error at the span
//! that caused it and saying what to write instead. `ast` reads the struct and its attributes
//! (reporting only what it cannot read); the rules between fields and attributes live here.

use syn::{DeriveInput, Ident};

use crate::attr::{Default, FieldAttrs, Number};
use crate::ctxt::Ctxt;
use crate::field::{Constraints, Field};
use crate::types::Kind;

/// The message for a primary key of another type.
pub(crate) const PK_TYPE: &str = "the primary key must be an i32 or i64 field";

/// One primary key: at most one field marked `#[rest(primary_key)]`, and some field (marked,
/// or named `id`) at all.
pub(crate) fn primary_keys(cx: &mut Ctxt, model: &Ident, marked: &[&Ident], found: bool) {
    for extra in marked.iter().skip(1) {
        cx.error(extra, "only one field may be #[rest(primary_key)]");
    }
    if !found {
        cx.error(
            model,
            "no primary key: add a field `id: i32` (or i64), or mark one #[rest(primary_key)]",
        );
    }
}

/// The rules of each field, and between fields: the primary key's type and default, integer
/// foreign keys, and one field per API name.
pub(crate) fn fields(cx: &mut Ctxt, fields: &[Field], pk: Option<usize>) {
    for (i, f) in fields.iter().enumerate() {
        let integer = matches!(f.kind, Kind::Int32 | Kind::Int64);
        if pk == Some(i) {
            if f.nullable || !integer {
                cx.error(&f.ty, PK_TYPE);
            }
            if !matches!(f.default, Default::None) {
                cx.error(
                    &f.ident,
                    "the database assigns the primary key: remove `default` from it",
                );
            }
        }
        if f.fk.is_some() && !integer {
            cx.error(
                &f.ty,
                "a foreign key (`fk`) must be an integer field: i32, i64 or an Option of them",
            );
        }
        let column = f.ident.to_string();
        let clash = fields[..i].iter().find(|other| {
            [&other.name, &other.key, &other.ident.to_string()]
                .iter()
                .any(|n| **n == f.name || **n == f.key || **n == column)
        });
        if let Some(other) = clash {
            cx.error(
                &f.ident,
                format!(
                    "`{}` and `{}` would share the API name `{}`; rename one with #[rest(name = \"...\")]",
                    f.ident, other.ident, f.name
                ),
            );
        }
    }
}

/// The message for an attribute (`exclude`, `index`) that names no field of the model.
pub(crate) fn not_a_field(key: &str, name: &str, input: &DeriveInput, fields: &[Field]) -> String {
    let names: Vec<String> = fields.iter().map(|f| f.ident.to_string()).collect();
    match key {
        "index" => format!(
            "`index` names `{name}`, which is not a field of `{}`; write field names separated \
             by commas (`-name` for descending order), from: {}",
            input.ident,
            names.join(", ")
        ),
        _ => format!(
            "`{key}` names `{name}`, which is not a field of `{}`; fields: {}",
            input.ident,
            names.join(", ")
        ),
    }
}

/// The constraints of a field of `kind`, each key checked against the type: bounds on
/// numbers, lengths, blankness, choices and `long` on text.
pub(crate) fn constraints(cx: &mut Ctxt, fa: &FieldAttrs, kind: Kind) -> Constraints {
    let number = matches!(kind, Kind::Int32 | Kind::Int64 | Kind::Float);
    let text = kind == Kind::Text;
    let mut out = Constraints::default();
    for (key, bound, slot) in [
        ("min", &fa.min, &mut out.min),
        ("max", &fa.max, &mut out.max),
    ] {
        let Some((value, expr)) = bound else { continue };
        if !number {
            let instead = if text {
                format!("for text write `{key}_len`")
            } else {
                "remove it".to_owned()
            };
            cx.error(
                expr,
                format!("`{key}` bounds a number field (i32, i64, f32, f64); {instead}"),
            );
            continue;
        }
        *slot = match (*value, kind) {
            (Number::Float(_), Kind::Int32 | Kind::Int64) => {
                cx.error(
                    expr,
                    format!("`{key}` of an integer field takes a whole number, e.g. `{key} = 1`"),
                );
                continue;
            }
            #[allow(clippy::cast_precision_loss)]
            (Number::Int(n), Kind::Float) => Some(Number::Float(n as f64)),
            (value, _) => Some(value),
        };
    }
    if let (Some(min), Some(max), Some((_, expr))) = (out.min, out.max, &fa.max) {
        let below = match (min, max) {
            (Number::Int(a), Number::Int(b)) => b < a,
            (Number::Float(a), Number::Float(b)) => b < a,
            _ => false,
        };
        if below {
            cx.error(expr, "`max` is below `min`: nothing could be accepted");
        }
    }
    for (key, lit, slot) in [
        ("min_len", &fa.min_len, &mut out.min_len),
        ("max_len", &fa.max_len, &mut out.max_len),
    ] {
        let Some(lit) = lit else { continue };
        if !text {
            let instead = if number {
                format!("for a number write `{}`", &key[..3])
            } else {
                "remove it".to_owned()
            };
            cx.error(
                lit,
                format!("`{key}` bounds a text field (String); {instead}"),
            );
            continue;
        }
        match lit.base10_parse::<u32>() {
            Ok(n) => *slot = Some(n),
            Err(_) => cx.error(
                lit,
                format!("`{key}` takes a number of characters, e.g. `{key} = 100`"),
            ),
        }
    }
    if let (Some(min), Some(max), Some(lit)) = (out.min_len, out.max_len, &fa.max_len) {
        if max < min {
            cx.error(
                lit,
                "`max_len` is below `min_len`: nothing could be accepted",
            );
        }
    }
    let text_only = [
        (
            "not_blank",
            fa.not_blank.as_ref().map(quote::ToTokens::to_token_stream),
        ),
        (
            "long",
            fa.long.as_ref().map(quote::ToTokens::to_token_stream),
        ),
        (
            "choices",
            fa.choices
                .as_ref()
                .map(|(_, e)| quote::ToTokens::to_token_stream(e)),
        ),
    ];
    for (key, tokens) in text_only {
        if let (Some(tokens), false) = (tokens, text) {
            let what = match key {
                "long" => "marks text of several lines (a textarea in the admin)",
                "choices" => {
                    "lists the values of a text field; for a fixed set of values of \
                              another kind, use a Rust enum deriving `Choice`"
                }
                _ => "refuses text of white space only",
            };
            cx.error(
                tokens,
                format!("`{key}` {what}: this field is not a String"),
            );
        }
    }
    if text {
        out.not_blank = fa.not_blank.is_some();
        out.choices = fa
            .choices
            .as_ref()
            .map(|(list, _)| list.iter().map(syn::LitStr::value).collect())
            .unwrap_or_default();
    }
    out
}

pub(crate) const PASSWORD_SHOWN: &str = "the password hash is write-only (`#[rest(password)]` \
     makes it so): remove `private` or `read_only` from this field";
