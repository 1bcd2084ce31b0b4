//! The derive's checks: every rule of a model, each error at the span that caused it and
//! saying what to write instead. `attr` parses the attributes (reporting only what it cannot
//! read), `ast` builds the model and calls these as it reads each part, so that the errors come
//! in the order of the source; `expand` generates code from a model that passed them all.

use syn::{DeriveInput, Expr, FieldsNamed, Ident, LitStr, Path, Type};

use crate::attr::{
    Default, FieldAttrs, Number, UserRole, PRIVATE_AND_WRITE_ONLY, READ_AND_WRITE_ONLY,
};
use crate::ctxt::Ctxt;
use crate::field::{Constraints, Field};
use crate::types::{scalar_of, Kind, Scalar, SUPPORTED};

/// The named fields of a struct; an error (and `None`) for anything else.
pub(crate) fn named_fields<'a>(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<&'a FieldsNamed> {
    match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => Some(named),
        _ => {
            cx.error(
                &input.ident,
                "RestModel can only be derived for a struct with named fields, one per column",
            );
            None
        }
    }
}

/// A model is one table: no type parameters.
pub(crate) fn not_generic(cx: &mut Ctxt, input: &DeriveInput) {
    if !input.generics.params.is_empty() {
        cx.error(
            &input.generics,
            "RestModel cannot be derived for a generic struct",
        );
    }
}

/// What the field's value type `value_ty` (`T` of `Option<T>`) maps to; an error at the
/// declared type `ty` when Plover does not support it.
pub(crate) fn field_type(
    cx: &mut Ctxt,
    ty: &Type,
    value_ty: &Type,
    primary_key: bool,
) -> Option<&'static Scalar> {
    let scalar = scalar_of(value_ty);
    if scalar.is_none() {
        if primary_key {
            cx.error(ty, PK_TYPE);
        } else {
            cx.error(
                ty,
                format!("unsupported field type for RestModel; use {SUPPORTED}"),
            );
        }
    }
    scalar
}

/// The message for a primary key of another type.
const PK_TYPE: &str = "the primary key must be an i32 or i64 field";

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

/// The field that `#[rest(exclude = "...")]` names by `name`, if it can be made write-only:
/// an error when it names no field, or a field that is read-only or private.
pub(crate) fn exclude(
    cx: &mut Ctxt,
    input: &DeriveInput,
    fields: &[Field],
    name: &str,
    lit: &LitStr,
) -> Option<usize> {
    let at = fields
        .iter()
        .position(|f| f.name == name || f.ident == name);
    match at.map(|i| &fields[i]) {
        Some(f) if f.read_only => cx.error(lit, READ_AND_WRITE_ONLY),
        Some(f) if f.private => cx.error(lit, PRIVATE_AND_WRITE_ONLY),
        Some(_) => return at,
        None => cx.error(lit, not_a_field("exclude", name, input, fields)),
    }
    None
}

/// The field that `#[rest(index = "...")]` names by `name`; an error when there is none.
pub(crate) fn index_field<'a>(
    cx: &mut Ctxt,
    input: &DeriveInput,
    fields: &'a [Field],
    name: &str,
    lit: &LitStr,
) -> Option<&'a Field> {
    let found = fields.iter().find(|f| f.name == name || f.ident == name);
    if found.is_none() {
        cx.error(lit, not_a_field("index", name, input, fields));
    }
    found
}

/// The message for an attribute (`exclude`, `index`) that names no field of the model.
fn not_a_field(key: &str, name: &str, input: &DeriveInput, fields: &[Field]) -> String {
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

/// The model's table defaults to its name in lowercase, `lowercase`, which is no identifier.
pub(crate) fn table_name(cx: &mut Ctxt, model: &Ident, lowercase: &str) {
    cx.error(
        model,
        format!(
            "`{lowercase}` cannot name this model's table: add \
             #[diesel(table_name = <table>)]"
        ),
    );
}

/// The part `role` (with its key `path`) a field of `kind` plays in a user model: the type it
/// needs, a password hash never shown, and one field per part (`roles`: the parts met so far).
pub(crate) fn user_role(
    cx: &mut Ctxt,
    (role, path): (UserRole, &Path),
    kind: Kind,
    nullable: bool,
    fa: &FieldAttrs,
    roles: &[(UserRole, Path, usize)],
) {
    let wanted = match role {
        UserRole::Username | UserRole::Password => Kind::Text,
        UserRole::Active | UserRole::Admin => Kind::Bool,
    };
    if kind != wanted || nullable {
        let ty = if wanted == Kind::Text {
            "String"
        } else {
            "bool"
        };
        cx.error(
            path,
            format!("`#[rest({})]` marks a `{ty}` field", role.key()),
        );
    }
    if role == UserRole::Password && (fa.private || fa.read_only) {
        cx.error(path, PASSWORD_SHOWN);
    }
    if roles.iter().any(|(r, _, _)| *r == role) {
        cx.error(path, format!("only one field is `#[rest({})]`", role.key()));
    }
}

/// A user model (`model`, some field of which plays a part) marks its username and its
/// password hash.
pub(crate) fn user_model(cx: &mut Ctxt, model: &Ident, username: bool, password: bool) {
    for (role, found) in [
        (UserRole::Username, username),
        (UserRole::Password, password),
    ] {
        if !found {
            cx.error(
                model,
                format!(
                    "a user model marks its username and its password hash: add `#[rest({})]` \
                     to the field that holds the {}",
                    role.key(),
                    if role == UserRole::Username {
                        "username"
                    } else {
                        "password hash"
                    }
                ),
            );
        }
    }
}

/// The constraints of a field of `kind`, each key checked against the type: bounds on
/// numbers, lengths, blankness, choices and `long` on text.
pub(crate) fn constraints(cx: &mut Ctxt, fa: &FieldAttrs, kind: Kind) -> Constraints {
    let text = kind == Kind::Text;
    let mut out = Constraints::default();
    bounds(cx, fa, kind, &mut out);
    lengths(cx, fa, kind, &mut out);
    text_only(cx, fa, text);
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

/// `min` and `max`, on a number field (floats for a float field), `max` not below `min`.
fn bounds(cx: &mut Ctxt, fa: &FieldAttrs, kind: Kind, out: &mut Constraints) {
    let number = matches!(kind, Kind::Int32 | Kind::Int64 | Kind::Float);
    let text = kind == Kind::Text;
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
}

/// `min_len` and `max_len`, on a text field, `max_len` not below `min_len`.
fn lengths(cx: &mut Ctxt, fa: &FieldAttrs, kind: Kind, out: &mut Constraints) {
    let number = matches!(kind, Kind::Int32 | Kind::Int64 | Kind::Float);
    let text = kind == Kind::Text;
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
}

/// `not_blank`, `long`, `search_index` and `choices`, on a text field only.
fn text_only(cx: &mut Ctxt, fa: &FieldAttrs, text: bool) {
    let given = [
        (
            "not_blank",
            fa.not_blank.as_ref().map(quote::ToTokens::to_token_stream),
        ),
        (
            "long",
            fa.long.as_ref().map(quote::ToTokens::to_token_stream),
        ),
        (
            "search_index",
            fa.search_index
                .as_ref()
                .map(quote::ToTokens::to_token_stream),
        ),
        (
            "choices",
            fa.choices
                .as_ref()
                .map(|(_, e)| quote::ToTokens::to_token_stream(e)),
        ),
    ];
    for (key, tokens) in given {
        if let (Some(tokens), false) = (tokens, text) {
            let what = match key {
                "long" => "marks text of several lines (a textarea in the admin)",
                "search_index" => {
                    "indexes the substrings of text for a search; to index another kind of \
                     field, use `index`"
                }
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
}

/// The text of `verbose_name = "..."` or `verbose_name_plural = "..."` (`key`): a text
/// literal with something besides white space; else an error at `expr`, and `None`.
pub(crate) fn verbose_name(cx: &mut Ctxt, key: &str, expr: &Expr) -> Option<String> {
    if let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(lit),
        ..
    }) = expr
    {
        if !lit.value().trim().is_empty() {
            return Some(lit.value().trim().to_owned());
        }
    }
    let example = if key == "verbose_name_plural" {
        "People"
    } else {
        "Date joined"
    };
    cx.error(
        expr,
        format!(
            "`{key}` takes the name people read, as a text literal, e.g. \
             `{key} = \"{example}\"`"
        ),
    );
    None
}

/// The message for a password hash marked `private` or `read_only`.
const PASSWORD_SHOWN: &str = "the password hash is write-only (`#[rest(password)]` \
     makes it so): remove `private` or `read_only` from this field";
