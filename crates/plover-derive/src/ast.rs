//! The model as the derive understands it, checked: every error is collected and reported
//! at the span that caused it.

use proc_macro2::{Span, TokenStream};
use syn::{Data, DeriveInput, Fields, Ident, Path, Visibility};

use crate::attr::{self, Default, UserRole};
use crate::check;
use crate::ctxt::Ctxt;
pub(crate) use crate::field::Field;
use crate::types::{option_inner, scalar_of, sql_literal, Kind, SUPPORTED};

pub(crate) struct Model {
    pub(crate) ident: Ident,
    pub(crate) vis: Visibility,
    pub(crate) name: String,
    pub(crate) table: Path,
    pub(crate) fields: Vec<Field>,
    pub(crate) pk: usize,
    /// `#[rest(display = "...")]`.
    pub(crate) display: Option<syn::LitStr>,
    /// `#[rest(rules)]`: writes run the model's `Rules`.
    pub(crate) rules: bool,
    /// Declared indexes, each a list of `(column, descending)`.
    pub(crate) indexes: Vec<Vec<(String, bool)>>,
    /// `#[rest(table)]`: declare the diesel `table!` too.
    pub(crate) generate_table: bool,
    /// The struct's doc comment (the API reference describes the resource with it).
    pub(crate) doc: String,
    /// The fields marked `#[rest(username)]`, `password`, `active`, `admin`: the derive
    /// implements `UserModel` when there are any.
    pub(crate) user: Option<UserFields>,
}

/// The fields of a user model, by index.
pub(crate) struct UserFields {
    pub(crate) username: usize,
    pub(crate) password: usize,
    pub(crate) active: Option<usize>,
    pub(crate) admin: Option<usize>,
}

impl Model {
    pub(crate) fn from_input(input: &DeriveInput) -> Result<Model, TokenStream> {
        let mut cx = Ctxt::default();
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => Some(named),
                _ => None,
            },
            _ => None,
        };
        let Some(named) = named else {
            cx.error(
                &input.ident,
                "RestModel can only be derived for a struct with named fields, one per column",
            );
            return Err(cx.check().err().unwrap_or_default());
        };
        if !input.generics.params.is_empty() {
            cx.error(
                &input.generics,
                "RestModel cannot be derived for a generic struct",
            );
        }
        let attrs = attr::struct_attrs(&mut cx, &input.attrs);
        let parsed: Vec<(&syn::Field, Ident, attr::FieldAttrs)> = named
            .named
            .iter()
            .filter_map(|f| Some((f, f.ident.clone()?, attr::field_attrs(&mut cx, &f.attrs))))
            .collect();
        // The primary key: the field marked #[rest(primary_key)], else the field named `id`.
        let marked: Vec<&Ident> = parsed
            .iter()
            .filter(|(_, _, fa)| fa.primary_key)
            .map(|(_, ident, _)| ident)
            .collect();
        let pk_ident = marked
            .first()
            .copied()
            .or_else(|| {
                parsed
                    .iter()
                    .map(|(_, ident, _)| ident)
                    .find(|i| *i == "id")
            })
            .cloned();
        check::primary_keys(&mut cx, &input.ident, &marked, pk_ident.is_some());
        let mut fields: Vec<Field> = Vec::new();
        let mut roles: Vec<(UserRole, Path, usize)> = Vec::new();
        let mut indexes: Vec<Vec<(String, bool)>> = Vec::new();
        for (f, ident, mut fa) in parsed {
            let (value_ty, nullable) = match option_inner(&f.ty) {
                Some(inner) => (inner.clone(), true),
                None => (f.ty.clone(), false),
            };
            let Some(scalar) = scalar_of(&value_ty) else {
                let message = if pk_ident.as_ref() == Some(&ident) {
                    check::PK_TYPE.to_owned()
                } else {
                    format!("unsupported field type for RestModel; use {SUPPORTED}")
                };
                cx.error(&f.ty, message);
                continue;
            };
            let column = ident.to_string();
            let name = match (&fa.name, &fa.fk) {
                (Some(lit), _) => lit.value(),
                (None, Some(_)) => column.strip_suffix("_id").unwrap_or(&column).to_owned(),
                (None, None) => column.clone(),
            };
            let key = if fa.fk.is_some() {
                format!("{name}_id")
            } else {
                name.clone()
            };
            if fa.index {
                indexes.push(vec![(column.clone(), false)]);
            }
            let constraints = check::constraints(&mut cx, &fa, scalar.kind);
            if matches!(fa.user_role, Some((UserRole::Password, _)))
                && matches!(fa.default, Default::None)
            {
                // No usable password until one is set (the admin's forms set it apart).
                fa.default = Default::Expr(syn::parse_quote!(String::new()));
            }
            let long = fa.long.is_some() && scalar.kind == crate::types::Kind::Text;
            let sql_default = match &fa.default {
                Default::Expr(expr) => sql_literal(expr),
                _ => None,
            };
            let (mut excluded, mut unique) = (fa.exclude, fa.unique);
            if let Some((role, path)) = &fa.user_role {
                let wanted = match role {
                    UserRole::Username | UserRole::Password => Kind::Text,
                    UserRole::Active | UserRole::Admin => Kind::Bool,
                };
                if scalar.kind != wanted || nullable {
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
                match role {
                    // The hash is never shown: write-only, as `Auth::new` requires.
                    UserRole::Password if fa.private || fa.read_only => {
                        cx.error(path, check::PASSWORD_SHOWN);
                    }
                    UserRole::Password => excluded = true,
                    UserRole::Username => unique = true,
                    _ => {}
                }
                if roles.iter().any(|(r, _, _)| r == role) {
                    cx.error(path, format!("only one field is `#[rest({})]`", role.key()));
                }
                roles.push((*role, path.clone(), fields.len()));
            }
            fields.push(Field {
                kind: scalar.kind,
                sql_type: scalar.sql_type,
                diesel_type: scalar.diesel_type,
                sql_default,
                ident,
                ty: f.ty.clone(),
                value_ty,
                nullable,
                name,
                key,
                fk: fa.fk,
                default: fa.default,
                excluded,
                read_only: fa.read_only,
                unique,
                doc: doc_comment(&f.attrs),
                constraints,
                long,
                private: fa.private,
            });
        }
        let pk = pk_ident.and_then(|pk| fields.iter().position(|f| f.ident == pk));
        check::fields(&mut cx, &fields, pk);
        for (name, lit) in &attrs.exclude {
            match fields
                .iter_mut()
                .find(|f| &f.name == name || f.ident == name)
            {
                Some(f) if f.read_only => cx.error(lit, crate::attr::READ_AND_WRITE_ONLY),
                Some(f) if f.private => cx.error(lit, crate::attr::PRIVATE_AND_WRITE_ONLY),
                Some(f) => f.excluded = true,
                None => cx.error(lit, check::not_a_field("exclude", name, input, &fields)),
            }
        }
        for lit in &attrs.indexes {
            let mut columns = Vec::new();
            for entry in lit.value().split(',').map(str::trim) {
                // `-name`: the column in descending order, as in `ordering`.
                let (name, descending) = match entry.strip_prefix('-') {
                    Some(name) => (name, true),
                    None => (entry, false),
                };
                match fields.iter().find(|f| f.name == name || f.ident == name) {
                    Some(f) => columns.push((f.ident.to_string(), descending)),
                    None => cx.error(lit, check::not_a_field("index", name, input, &fields)),
                }
            }
            indexes.push(columns);
        }
        let user = user_fields(&mut cx, &input.ident, &roles);
        // Without `#[diesel(table_name = ..)]`, the table is the struct's name in lowercase.
        let table = attrs.table.or_else(|| {
            let lowercase = input.ident.to_string().to_lowercase();
            let default = syn::parse_str::<syn::Ident>(&lowercase)
                .ok()
                .map(Path::from);
            if default.is_none() && !attrs.table_malformed {
                cx.error(
                    &input.ident,
                    format!(
                        "`{lowercase}` cannot name this model's table: add \
                         #[diesel(table_name = <table>)]"
                    ),
                );
            }
            default
        });
        cx.check()?;
        let (Some(table), Some(pk)) = (table, pk) else {
            return Err(
                syn::Error::new(Span::call_site(), "RestModel: incomplete model")
                    .to_compile_error(),
            );
        };
        Ok(Model {
            name: attrs
                .name
                .map_or_else(|| input.ident.to_string().to_lowercase(), |l| l.value()),
            ident: input.ident.clone(),
            vis: input.vis.clone(),
            table,
            fields,
            pk,
            display: attrs.display,
            rules: attrs.rules,
            generate_table: attrs.generate_table,
            // The API's description of the resource: the summary, not the Rust-only rest.
            doc: doc_comment(&input.attrs)
                .split("\n\n")
                .next()
                .unwrap_or_default()
                .to_owned(),
            indexes,
            user,
        })
    }
}

/// The user model's fields, if any field has a part in one: the username and the password
/// are required then.
fn user_fields(
    cx: &mut Ctxt,
    ident: &Ident,
    roles: &[(UserRole, Path, usize)],
) -> Option<UserFields> {
    let find = |role| {
        roles
            .iter()
            .find(|(r, _, _)| *r == role)
            .map(|(_, _, i)| *i)
    };
    if roles.is_empty() {
        return None;
    }
    let (username, password) = (find(UserRole::Username), find(UserRole::Password));
    for (role, found) in [
        (UserRole::Username, username),
        (UserRole::Password, password),
    ] {
        if found.is_none() {
            cx.error(
                ident,
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
    Some(UserFields {
        username: username?,
        password: password?,
        active: find(UserRole::Active),
        admin: find(UserRole::Admin),
    })
}

/// The text of the `///` comments among `attrs`, one line each, trimmed.
fn doc_comment(attrs: &[syn::Attribute]) -> String {
    let lines = attrs.iter().filter_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value().trim().to_owned()),
            _ => None,
        },
        _ => None,
    });
    lines.collect::<Vec<_>>().join("\n").trim().to_owned()
}
