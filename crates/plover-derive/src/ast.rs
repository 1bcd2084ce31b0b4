//! The model as the derive understands it, built from the struct and the attributes `attr`
//! parsed. The rules it must follow are in `check`, called here as each part is read.

use proc_macro2::{Span, TokenStream};
use syn::{DeriveInput, Ident, Path, Visibility};

use crate::attr::{self, Default, FieldAttrs, UserRole};
use crate::check;
use crate::ctxt::Ctxt;
pub(crate) use crate::field::Field;
use crate::names::{humanize, humanize_camel, plural};
use crate::types::{option_inner, sql_literal, Kind};

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
    /// The name people read (`verbose_name`, else the struct's name humanized: `Blog post`).
    pub(crate) verbose_name: String,
    /// Its plural (`verbose_name_plural`, else the plural of `verbose_name`).
    pub(crate) verbose_name_plural: String,
}

/// The fields of a user model, by index.
pub(crate) struct UserFields {
    pub(crate) username: usize,
    pub(crate) password: usize,
    pub(crate) active: Option<usize>,
    pub(crate) admin: Option<usize>,
}

/// A field as `attr` read it: the declaration, its name and its attributes.
struct Parsed<'a> {
    field: &'a syn::Field,
    ident: Ident,
    attrs: FieldAttrs,
}

/// What reading the fields gathers besides the fields: the user roles (each with its key and
/// the index of its field) and the single-column indexes.
#[derive(std::default::Default)]
struct Gathered {
    fields: Vec<Field>,
    roles: Vec<(UserRole, Path, usize)>,
    indexes: Vec<Vec<(String, bool)>>,
}

impl Model {
    /// Reads and checks the model: `attr` parses the attributes, this builds the model and
    /// `check` applies the rules as each part is read, so that the errors come in the order
    /// of the source. Every error is collected; `Err` holds them all.
    pub(crate) fn from_input(input: &DeriveInput) -> Result<Model, TokenStream> {
        let mut cx = Ctxt::default();
        let Some(named) = check::named_fields(&mut cx, input) else {
            return Err(cx.check().err().unwrap_or_default());
        };
        check::not_generic(&mut cx, input);
        let attrs = attr::struct_attrs(&mut cx, &input.attrs);
        let parsed: Vec<Parsed<'_>> = named
            .named
            .iter()
            .filter_map(|f| {
                let ident = f.ident.clone()?;
                let attrs = attr::field_attrs(&mut cx, &f.attrs);
                Some(Parsed {
                    field: f,
                    ident,
                    attrs,
                })
            })
            .collect();
        let pk_ident = primary_key(&mut cx, &input.ident, &parsed);
        let mut gathered = Gathered::default();
        for field in parsed {
            let is_pk = pk_ident.as_ref() == Some(&field.ident);
            gathered.read(&mut cx, field, is_pk);
        }
        let Gathered {
            mut fields,
            roles,
            mut indexes,
        } = gathered;
        let pk = pk_ident.and_then(|pk| fields.iter().position(|f| f.ident == pk));
        check::fields(&mut cx, &fields, pk);
        for (name, lit) in &attrs.exclude {
            if let Some(at) = check::exclude(&mut cx, input, &fields, name, lit) {
                fields[at].excluded = true;
            }
        }
        indexes
            .extend((attrs.indexes.iter()).map(|lit| declared_index(&mut cx, input, &fields, lit)));
        let user = user_fields(&mut cx, &input.ident, &roles);
        let (verbose_name, verbose_name_plural) = verbose_names(&mut cx, input, &attrs);
        let table = attrs
            .table
            .or_else(|| default_table(&mut cx, input, attrs.table_malformed));
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
            verbose_name,
            verbose_name_plural,
        })
    }
}

/// The model's names for people, singular and plural: those declared, else the struct's name
/// humanized and its plural.
fn verbose_names(
    cx: &mut Ctxt,
    input: &DeriveInput,
    attrs: &attr::StructAttrs,
) -> (String, String) {
    let mut declared = |key, expr: &Option<syn::Expr>| {
        expr.as_ref()
            .and_then(|expr| check::verbose_name(cx, key, expr))
    };
    let singular = declared(attr::key::VERBOSE_NAME, &attrs.verbose_name);
    let plural_name = declared(attr::key::VERBOSE_NAME_PLURAL, &attrs.verbose_name_plural);
    let singular = singular.unwrap_or_else(|| humanize_camel(&input.ident.to_string()));
    let plural_name = plural_name.unwrap_or_else(|| plural(&singular));
    (singular, plural_name)
}

/// The primary key's name: the field marked `#[rest(primary_key)]`, else the field named `id`.
fn primary_key(cx: &mut Ctxt, model: &Ident, parsed: &[Parsed<'_>]) -> Option<Ident> {
    let marked: Vec<&Ident> = parsed
        .iter()
        .filter(|p| p.attrs.primary_key)
        .map(|p| &p.ident)
        .collect();
    let pk = (marked.first().copied())
        .or_else(|| parsed.iter().map(|p| &p.ident).find(|i| *i == "id"))
        .cloned();
    check::primary_keys(cx, model, &marked, pk.is_some());
    pk
}

impl Gathered {
    /// Reads one field (nothing for a type Plover does not support): its names, column type,
    /// constraints, default and user role.
    fn read(&mut self, cx: &mut Ctxt, parsed: Parsed<'_>, is_pk: bool) {
        let Parsed {
            field: f,
            ident,
            attrs: mut fa,
        } = parsed;
        let (value_ty, nullable) = match option_inner(&f.ty) {
            Some(inner) => (inner.clone(), true),
            None => (f.ty.clone(), false),
        };
        let Some(scalar) = check::field_type(cx, &f.ty, &value_ty, is_pk) else {
            return;
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
            self.indexes.push(vec![(column, false)]);
        }
        let constraints = check::constraints(cx, &fa, scalar.kind);
        let verbose_name = (fa.verbose_name.as_ref())
            .and_then(|expr| check::verbose_name(cx, attr::key::VERBOSE_NAME, expr))
            .unwrap_or_else(|| humanize(&name));
        let mut sql_default = match &fa.default {
            Default::Expr(expr) => sql_literal(expr),
            _ => None,
        };
        if matches!(fa.user_role, Some((UserRole::Password, _)))
            && matches!(fa.default, Default::None)
        {
            // No usable password until one is set (the admin's forms set it apart): empty
            // text, named by its absolute path (a model may live without the prelude).
            fa.default = Default::Expr(syn::parse_quote!(::std::string::String::new()));
            sql_default = Some("''".to_owned());
        }
        let (mut excluded, mut unique) = (fa.exclude, fa.unique);
        if let Some((role, path)) = &fa.user_role {
            check::user_role(cx, (*role, path), scalar.kind, nullable, &fa, &self.roles);
            match role {
                // The hash is never shown: write-only, as `Auth::new` requires.
                UserRole::Password => excluded = true,
                UserRole::Username => unique = true,
                _ => {}
            }
            self.roles.push((*role, path.clone(), self.fields.len()));
        }
        self.fields.push(Field {
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
            long: fa.long.is_some() && scalar.kind == Kind::Text,
            search_index: fa.search_index.is_some() && scalar.kind == Kind::Text,
            private: fa.private,
            verbose_name,
        });
    }
}

/// The columns of one `#[rest(index = "a, -b")]`: `-name` is the column in descending order,
/// as in `ordering`. A name that is no field is reported and left out.
fn declared_index(
    cx: &mut Ctxt,
    input: &DeriveInput,
    fields: &[Field],
    lit: &syn::LitStr,
) -> Vec<(String, bool)> {
    let mut columns = Vec::new();
    for entry in lit.value().split(',').map(str::trim) {
        let (name, descending) = match entry.strip_prefix('-') {
            Some(name) => (name, true),
            None => (entry, false),
        };
        if let Some(f) = check::index_field(cx, input, fields, name, lit) {
            columns.push((f.ident.to_string(), descending));
        }
    }
    columns
}

/// Without `#[diesel(table_name = ..)]`, the table is the struct's name in lowercase (an
/// error when that is no identifier, unless a malformed `table_name` was reported already).
fn default_table(cx: &mut Ctxt, input: &DeriveInput, malformed: bool) -> Option<Path> {
    let lowercase = input.ident.to_string().to_lowercase();
    let default = syn::parse_str::<syn::Ident>(&lowercase)
        .ok()
        .map(Path::from);
    if default.is_none() && !malformed {
        check::table_name(cx, &input.ident, &lowercase);
    }
    default
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
    check::user_model(cx, ident, username.is_some(), password.is_some());
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
