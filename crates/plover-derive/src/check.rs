//! The derive's second step: the checks of a model that `ast` has read, each error at the span
//! that caused it and saying what to write instead. `ast` reads the struct and its attributes
//! (reporting only what it cannot read); the rules between fields and attributes live here.

use syn::{DeriveInput, Ident};

use crate::attr::Default;
use crate::ctxt::Ctxt;
use crate::field::Field;
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
