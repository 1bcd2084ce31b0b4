//! The model as the derive understands it, checked: every error is collected and reported
//! at the span that caused it.

use proc_macro2::{Span, TokenStream};
use syn::{Data, DeriveInput, Fields, Ident, Path, Type, Visibility};

use crate::attr::{self, Default};
use crate::ctxt::Ctxt;
use crate::types::{kind_of, option_inner, sql_literal, sql_type_of, Kind, SUPPORTED};

pub(crate) struct Field {
    pub(crate) ident: Ident,
    /// The declared type (`Option<T>` for nullable fields).
    pub(crate) ty: Type,
    /// `T` of `Option<T>`, else the declared type.
    pub(crate) value_ty: Type,
    pub(crate) nullable: bool,
    pub(crate) kind: Kind,
    /// API name: the column, or for a foreign key the column without `_id`.
    pub(crate) name: String,
    /// Key in serialized objects: the name, or `<name>_id` for a foreign key.
    pub(crate) key: String,
    pub(crate) fk: Option<Type>,
    pub(crate) default: Default,
    pub(crate) excluded: bool,
    /// `#[rest(read_only)]`.
    pub(crate) read_only: bool,
    /// `#[rest(unique)]`.
    pub(crate) unique: bool,
    /// The `plover::schema::SqlType` variant of the column.
    pub(crate) sql_type: &'static str,
    /// The column's SQL `DEFAULT`, where the default is a plain literal.
    pub(crate) sql_default: Option<String>,
}

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
    /// Declared indexes, each a list of columns.
    pub(crate) indexes: Vec<Vec<String>>,
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
        let marked: Vec<usize> = (0..parsed.len())
            .filter(|&i| parsed[i].2.primary_key)
            .collect();
        for &extra in marked.iter().skip(1) {
            cx.error(
                &parsed[extra].1,
                "only one field may be #[rest(primary_key)]",
            );
        }
        let pk_at = marked
            .first()
            .copied()
            .or_else(|| parsed.iter().position(|(_, ident, _)| ident == "id"));
        let mut fields: Vec<Field> = Vec::new();
        let mut indexes: Vec<Vec<String>> = Vec::new();
        let mut pk = None;
        for (i, (f, ident, fa)) in parsed.into_iter().enumerate() {
            let is_pk = pk_at == Some(i);
            let (value_ty, nullable) = match option_inner(&f.ty) {
                Some(inner) => (inner.clone(), true),
                None => (f.ty.clone(), false),
            };
            let kind = kind_of(&value_ty);
            if is_pk && (nullable || !matches!(kind, Some(Kind::Int32 | Kind::Int64))) {
                cx.error(&f.ty, "the primary key must be an i32 or i64 field");
                continue;
            }
            let Some(kind) = kind else {
                cx.error(
                    &f.ty,
                    format!("unsupported field type for RestModel; use {SUPPORTED}"),
                );
                continue;
            };
            if is_pk && !matches!(fa.default, Default::None) {
                cx.error(
                    &ident,
                    "the database assigns the primary key: remove `default` from it",
                );
            }
            let column = ident.to_string();
            if fa.fk.is_some() && !matches!(kind, Kind::Int32 | Kind::Int64) {
                cx.error(
                    &f.ty,
                    "a foreign key (`fk`) must be an integer field: i32, i64 or an Option of them",
                );
            }
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
            let clash = fields.iter().find(|other| {
                [&other.name, &other.key, &other.ident.to_string()]
                    .iter()
                    .any(|n| **n == name || **n == key || **n == column)
            });
            if let Some(other) = clash {
                cx.error(
                    &ident,
                    format!(
                        "`{ident}` and `{}` would share the API name `{name}`; rename one with #[rest(name = \"...\")]",
                        other.ident
                    ),
                );
            }
            if is_pk {
                pk = Some(fields.len());
            }
            if fa.index {
                indexes.push(vec![column.clone()]);
            }
            let sql_default = match &fa.default {
                Default::Expr(expr) => sql_literal(expr),
                _ => None,
            };
            fields.push(Field {
                sql_type: sql_type_of(&value_ty),
                sql_default,
                ident,
                ty: f.ty.clone(),
                value_ty,
                nullable,
                kind,
                name,
                key,
                fk: fa.fk,
                default: fa.default,
                excluded: fa.exclude,
                read_only: fa.read_only,
                unique: fa.unique,
            });
        }
        for (name, lit) in &attrs.exclude {
            match fields
                .iter_mut()
                .find(|f| &f.name == name || f.ident == name)
            {
                Some(f) if f.read_only => cx.error(lit, crate::attr::READ_AND_WRITE_ONLY),
                Some(f) => f.excluded = true,
                None => cx.error(
                    lit,
                    format!(
                        "`exclude` names `{name}`, which is not a field of `{}`; fields: {}",
                        input.ident,
                        fields
                            .iter()
                            .map(|f| f.ident.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            }
        }
        for lit in &attrs.indexes {
            let mut columns = Vec::new();
            for name in lit.value().split(',').map(str::trim) {
                match fields.iter().find(|f| f.name == name || f.ident == name) {
                    Some(f) => columns.push(f.ident.to_string()),
                    None => cx.error(
                        lit,
                        format!(
                            "`index` names `{name}`, which is not a field of `{}`; write field \
                             names separated by commas, from: {}",
                            input.ident,
                            fields
                                .iter()
                                .map(|f| f.ident.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                }
            }
            indexes.push(columns);
        }
        if attrs.table.is_none() && !attrs.table_malformed {
            cx.error(
                &input.ident,
                "missing table: add #[diesel(table_name = <table>)] naming the diesel `table!` of this model",
            );
        }
        if pk_at.is_none() {
            cx.error(
                &input.ident,
                "no primary key: add a field `id: i32` (or i64), or mark one #[rest(primary_key)]",
            );
        }
        cx.check()?;
        let (Some(table), Some(pk)) = (attrs.table, pk) else {
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
            indexes,
        })
    }
}
