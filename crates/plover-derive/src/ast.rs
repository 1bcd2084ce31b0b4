//! The model as the derive understands it, checked: every error is collected and reported
//! at the span that caused it.

use proc_macro2::{Span, TokenStream};
use syn::{Data, DeriveInput, Fields, Ident, Path, Type, Visibility};

use crate::attr::{self, Default};
use crate::ctxt::Ctxt;
use crate::types::{kind_of, option_inner, Kind, SUPPORTED};

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
    pub(crate) fk: Option<Type>,
    pub(crate) default: Default,
    pub(crate) excluded: bool,
}

pub(crate) struct Model {
    pub(crate) ident: Ident,
    pub(crate) vis: Visibility,
    pub(crate) name: String,
    pub(crate) table: Path,
    pub(crate) fields: Vec<Field>,
    pub(crate) pk: usize,
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
        let mut fields = Vec::new();
        let mut pk = None;
        for f in &named.named {
            let Some(ident) = f.ident.clone() else {
                continue;
            };
            let fa = attr::field_attrs(&mut cx, &f.attrs);
            let (value_ty, nullable) = match option_inner(&f.ty) {
                Some(inner) => (inner.clone(), true),
                None => (f.ty.clone(), false),
            };
            let Some(kind) = kind_of(&value_ty) else {
                cx.error(
                    &f.ty,
                    format!("unsupported field type for RestModel; use {SUPPORTED}"),
                );
                continue;
            };
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
            if fa.primary_key || (column == "id" && pk.is_none()) {
                if fa.primary_key
                    && pk.is_some_and(|p: usize| {
                        fields.get(p).is_some_and(|x: &Field| x.ident != "id")
                    })
                {
                    cx.error(&ident, "only one field may be #[rest(primary_key)]");
                }
                if !matches!(kind, Kind::Int32 | Kind::Int64) || nullable {
                    cx.error(&f.ty, "the primary key must be an i32 or i64 field");
                }
                pk = Some(fields.len());
            }
            fields.push(Field {
                ident,
                ty: f.ty.clone(),
                value_ty,
                nullable,
                kind,
                name,
                fk: fa.fk,
                default: fa.default,
                excluded: fa.exclude,
            });
        }
        for (name, lit) in &attrs.exclude {
            match fields
                .iter_mut()
                .find(|f| &f.name == name || f.ident == name)
            {
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
        if attrs.table.is_none() {
            cx.error(
                &input.ident,
                "missing table: add #[diesel(table_name = <table>)] naming the diesel `table!` of this model",
            );
        }
        if pk.is_none() && !fields.is_empty() {
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
        })
    }
}
