//! The typed diesel code of one backend. The same body is generated for SQLite and for
//! PostgreSQL; the few differences (ILIKE, NULLS FIRST/LAST, code-point collation) are here.
//! PostgreSQL items are wrapped in `__plover_if_postgres!`, which keeps them only when Plover's
//! `postgres` feature is on.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Field, Model};
use crate::types::Kind;

/// One database backend.
pub(crate) struct Backend {
    /// `sqlite` or `pg`: suffix of the generated functions, and the condition macro's marker.
    pub(crate) key: &'static str,
    pg: bool,
}

pub(crate) const SQLITE: Backend = Backend {
    key: "sqlite",
    pg: false,
};
pub(crate) const PG: Backend = Backend {
    key: "pg",
    pg: true,
};

impl Backend {
    fn db(&self) -> TokenStream {
        if self.pg {
            quote!(__p::diesel::pg::Pg)
        } else {
            quote!(__p::diesel::sqlite::Sqlite)
        }
    }

    fn connection(&self) -> TokenStream {
        if self.pg {
            quote!(__p::diesel::pg::PgConnection)
        } else {
            quote!(__p::diesel::sqlite::SqliteConnection)
        }
    }

    /// The name of a generated function of this backend: `__load_sqlite`.
    pub(crate) fn func(&self, op: &str) -> Ident {
        format_ident!("__{}_{}", op, self.key)
    }
}

/// The items of `backend` for `model`: selection, ordering, the `SqlQueries` impl, and the
/// load/insert/update/delete functions the dispatching code calls.
pub(crate) fn items(model: &Model, backend: &Backend) -> TokenStream {
    let ident = &model.ident;
    let table = &model.table;
    let pk = &model.fields[model.pk];
    let pk_ident = &pk.ident;
    let pk_ty = &pk.value_ty;
    let db = backend.db();
    let connection = backend.connection();
    let [select, load, load_pk, load_unique, load_page, load_ids, count, delete_ids, nullify, insert_row, update] =
        [
            "select",
            "load",
            "load_pk",
            "load_unique",
            "load_page",
            "load_ids",
            "count",
            "delete_ids",
            "nullify",
            "insert_row",
            "update",
        ]
        .map(|op| backend.func(op));
    let idents: Vec<_> = model.fields.iter().map(|f| &f.ident).collect();
    let (tys, values): (Vec<_>, Vec<_>) = model.fields.iter().map(|f| loaded(f, backend)).unzip();
    let indexes: Vec<usize> = (0..model.fields.len()).collect();
    let data_fields: Vec<&Field> = model
        .fields
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != model.pk)
        .map(|(_, f)| f)
        .collect();
    let data: Vec<_> = data_fields.iter().map(|f| &f.ident).collect();
    // What an insert or update binds: the value, or a choice's stored text.
    let bind = |f: &Field, value: TokenStream| match f.kind {
        Kind::Choice => quote!(__p::Bind::bind(&#value)),
        _ => value,
    };
    let bound_data: Vec<_> = data_fields
        .iter()
        .map(|f| {
            let id = &f.ident;
            bind(f, quote!(#id))
        })
        .collect();
    let bound_v: Vec<_> = data_fields.iter().map(|f| bind(f, quote!(v))).collect();
    let (asc, desc): (Vec<_>, Vec<_>) = model
        .fields
        .iter()
        .map(|f| order_terms(model, f, backend))
        .unzip();
    let conditions = model
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| condition_arm(model, i, f, backend));
    let nullify_arms = model
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.fk.is_some() && f.nullable)
        .map(|(i, f)| {
            let id = &f.ident;
            let vty = &f.value_ty;
            quote!(#i => __p::diesel::update(#table::table.filter(#table::#id.eq_any(__p::pks::<#vty>(ids))))
                .set(#table::#id.eq(::core::option::Option::None::<#vty>))
                .execute(c)
                .map_err(__p::Error::from),)
        });
    let unique_arms: Vec<_> = model
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.unique && f.kind == Kind::Text)
        .map(|(i, f)| {
            let id = &f.ident;
            quote!(#i => #table::table.filter(#table::#id.eq(value)).select((#(#table::#idents,)*)).first(c),)
        })
        .collect();
    let not_unique = quote!(__p::Error::Internal("not a unique text field".into()));
    let unique_body = if unique_arms.is_empty() {
        quote!({
            let _ = (c, field, value);
            ::core::result::Result::Err(#not_unique)
        })
    } else {
        quote!({
            use __p::diesel::prelude::*;
            let row: ::core::option::Option<(#(#tys,)*)> = match field {
                #(#unique_arms)*
                _ => return ::core::result::Result::Err(#not_unique),
            }
            .optional()?;
            ::core::result::Result::Ok(row.map(|(#(#idents,)*)| #ident { #(#values,)* }))
        })
    };
    let returning = quote!(.returning((#(#table::#idents,)*)).get_result(c)?);
    // Every column given: an insert of fixed shape, which diesel prepares once and caches. A
    // column left out takes its SQL default; diesel never caches such an insert.
    let insert_body = if data.is_empty() {
        quote!(__p::diesel::insert_into(#table::table).default_values() #returning)
    } else {
        quote!(match (#(changes.#data,)*) {
            (#(::core::option::Option::Some(#data),)*) => __p::diesel::insert_into(#table::table)
                .values((#(#table::#data.eq(#bound_data),)*))
                #returning,
            (#(#data,)*) => __p::diesel::insert_into(#table::table)
                .values((#(#data.map(|v| #table::#data.eq(#bound_v)),)*))
                #returning,
        })
    };
    let update_body = if data.is_empty() {
        quote!({
            let _ = (pk, changes, c);
            ::core::result::Result::Ok(0)
        })
    } else {
        quote!(::core::result::Result::Ok(
            __p::diesel::update(#table::table.filter(#table::#pk_ident.eq(pk)))
                .set((#(changes.#data.map(|v| #table::#data.eq(#bound_v)),)*))
                .execute(c)?,
        ))
    };
    let changes = format_ident!("{}Changes", ident);
    // A list that leaves out the columns it does not show (`Select::columns`): each column, or
    // NULL in its place, loaded as an `Option` that falls back to the type's default.
    let partial_exprs = model.fields.iter().enumerate().map(|(i, f)| {
        let id = &f.ident;
        quote!(__p::column_or_null(loaded(#i), #table::#id))
    });
    let (partial_tys, partial_values): (Vec<_>, Vec<_>) = model
        .fields
        .iter()
        .zip(&tys)
        .map(|(f, ty)| {
            let id = &f.ident;
            if f.nullable {
                (quote!(#ty), quote!(#id))
            } else {
                (
                    quote!(::core::option::Option<#ty>),
                    quote!(#id.unwrap_or_default()),
                )
            }
        })
        .unzip();
    let items = quote! {
        fn #select(
            s: &__p::Select,
        ) -> ::core::result::Result<#table::BoxedQuery<'static, #db>, __p::Error> {
            use __p::diesel::prelude::*;
            __p::select::<#ident, #db, _>(#table::table.into_boxed(), s)
        }

        fn #load(
            c: &mut #connection,
            s: &__p::Select,
        ) -> ::core::result::Result<::std::vec::Vec<#ident>, __p::Error> {
            use __p::diesel::prelude::*;
            static SQL: __p::SqlCache = __p::SqlCache::new();
            if let ::core::option::Option::Some(columns) = s.columns.as_deref() {
                let loaded = |field: usize| columns.get(field).copied().unwrap_or(true);
                let query = #select(s)?.select((#(#partial_exprs,)*));
                let rows = __p::shaped::<#db, _>(query, s, &SQL)?
                    .load_iter::<(#(#partial_tys,)*), __p::diesel::connection::DefaultLoadingMode>(c)?;
                return __p::collect_rows(rows, s.limit, |(#(#idents,)*)| {
                    #(let #idents = #partial_values;)*
                    #ident { #(#values,)* }
                });
            }
            let query = #select(s)?.select((#(#table::#idents,)*));
            let rows = __p::shaped::<#db, _>(query, s, &SQL)?
                .load_iter::<(#(#tys,)*), __p::diesel::connection::DefaultLoadingMode>(c)?;
            __p::collect_rows(rows, s.limit, |(#(#idents,)*)| #ident { #(#values,)* })
        }

        fn #load_pk(
            c: &mut #connection,
            pk: #pk_ty,
        ) -> ::core::result::Result<::core::option::Option<#ident>, __p::Error> {
            use __p::diesel::prelude::*;
            let row: ::core::option::Option<(#(#tys,)*)> = #table::table
                .filter(#table::#pk_ident.eq(pk))
                .select((#(#table::#idents,)*))
                .first(c)
                .optional()?;
            ::core::result::Result::Ok(row.map(|(#(#idents,)*)| #ident { #(#values,)* }))
        }

        fn #load_unique(
            c: &mut #connection,
            field: usize,
            value: &str,
        ) -> ::core::result::Result<::core::option::Option<#ident>, __p::Error> #unique_body

        fn #load_page(
            c: &mut #connection,
            limit: i64,
            offset: i64,
        ) -> ::core::result::Result<::std::vec::Vec<#ident>, __p::Error> {
            use __p::diesel::prelude::*;
            let rows = #table::table
                .select((#(#table::#idents,)*))
                .order(#table::#pk_ident.asc())
                .limit(limit)
                .offset(offset)
                .load_iter::<(#(#tys,)*), __p::diesel::connection::DefaultLoadingMode>(c)?;
            __p::collect_rows(rows, ::core::option::Option::Some(limit), |(#(#idents,)*)| {
                #ident { #(#values,)* }
            })
        }

        fn #load_ids(
            c: &mut #connection,
            s: &__p::Select,
        ) -> ::core::result::Result<::std::vec::Vec<i64>, __p::Error> {
            use __p::diesel::prelude::*;
            static SQL: __p::SqlCache = __p::SqlCache::new();
            let query = #select(s)?.select(#table::#pk_ident);
            let ids: ::std::vec::Vec<#pk_ty> = __p::shaped::<#db, _>(query, s, &SQL)?.load(c)?;
            ::core::result::Result::Ok(ids.into_iter().map(i64::from).collect())
        }

        fn #count(
            c: &mut #connection,
            s: &__p::Select,
        ) -> ::core::result::Result<i64, __p::Error> {
            use __p::diesel::prelude::*;
            static SQL: __p::SqlCache = __p::SqlCache::new();
            let s = s.conditions_only();
            let query = #select(&s)?.count();
            ::core::result::Result::Ok(__p::shaped::<#db, _>(query, &s, &SQL)?.get_result(c)?)
        }

        fn #delete_ids(
            c: &mut #connection,
            ids: &[i64],
        ) -> ::core::result::Result<usize, __p::Error> {
            use __p::diesel::prelude::*;
            ::core::result::Result::Ok(
                __p::diesel::delete(#table::table.filter(#table::#pk_ident.eq_any(__p::pks::<#pk_ty>(ids))))
                    .execute(c)?,
            )
        }

        #[allow(unused_variables)]
        fn #nullify(
            c: &mut #connection,
            field: usize,
            ids: &[i64],
        ) -> ::core::result::Result<usize, __p::Error> {
            use __p::diesel::prelude::*;
            match field {
                #(#nullify_arms)*
                _ => ::core::result::Result::Err(__p::Error::Internal("not a nullable foreign key".into())),
            }
        }

        fn #insert_row(
            c: &mut #connection,
            changes: #changes,
        ) -> ::core::result::Result<#ident, __p::Error> {
            use __p::diesel::prelude::*;
            let (#(#idents,)*): (#(#tys,)*) = #insert_body;
            ::core::result::Result::Ok(#ident { #(#values,)* })
        }

        fn #update(
            c: &mut #connection,
            pk: #pk_ty,
            changes: #changes,
        ) -> ::core::result::Result<usize, __p::Error> {
            use __p::diesel::prelude::*;
            #update_body
        }

        #[automatically_derived]
        impl __p::SqlQueries<#db> for #ident {
            type Table = #table::table;
            type PkQuery = #table::BoxedQuery<'static, #db, <#table::#pk_ident as __p::diesel::Expression>::SqlType>;

            fn condition(
                f: &__p::Filter,
                depth: usize,
            ) -> ::core::result::Result<__p::Cond<#table::table, #db>, __p::Error> {
                use __p::diesel::prelude::*;
                let field = *f.path.get(depth).ok_or_else(|| __p::Error::Internal("empty filter path".into()))?;
                let leaf = depth + 1 == f.path.len();
                match field {
                    #(#conditions)*
                    _ => ::core::result::Result::Err(__p::Error::Internal("filter on an unknown field".into())),
                }
            }

            fn order(
                field: usize,
                desc: bool,
            ) -> ::core::result::Result<__p::Order<#table::table, #db>, __p::Error> {
                use __p::diesel::prelude::*;
                match field {
                    #(#indexes => __p::order_by(desc, #asc, #desc),)*
                    _ => ::core::result::Result::Err(__p::Error::Internal("ordering on an unknown field".into())),
                }
            }

            fn pk_subquery(f: &__p::Filter, depth: usize) -> ::core::result::Result<Self::PkQuery, __p::Error> {
                use __p::diesel::prelude::*;
                ::core::result::Result::Ok(#table::table
                    .select(#table::#pk_ident)
                    .into_boxed()
                    .filter(<Self as __p::SqlQueries<#db>>::condition(f, depth)?))
            }
        }
    };
    if backend.pg {
        quote!(::plover::__plover_if_postgres! { #items })
    } else {
        items
    }
}

/// The Rust type a field's column is loaded as, and the field's initializer from the loaded
/// value (a variable named as the field). SQLite keeps dates as text: they are loaded
/// through Plover's decoder of the text it writes (`SqliteDate`, `SqliteDateTime`), which is
/// much faster than diesel's.
fn loaded(f: &Field, backend: &Backend) -> (TokenStream, TokenStream) {
    let (ty, id) = (&f.ty, &f.ident);
    let wrapper = match f.kind {
        Kind::Date if !backend.pg => quote!(__p::SqliteDate),
        Kind::DateTime if !backend.pg => quote!(__p::SqliteDateTime),
        Kind::Choice => {
            let vty = &f.value_ty;
            let stored = quote!(__p::Stored<#vty>);
            return if f.nullable {
                (
                    quote!(::core::option::Option<#stored>),
                    quote!(#id: #id.map(|stored| stored.0)),
                )
            } else {
                (stored, quote!(#id: #id.0))
            };
        }
        _ => return (quote!(#ty), quote!(#id)),
    };
    if f.nullable {
        (
            quote!(::core::option::Option<#wrapper>),
            quote!(#id: #id.map(::core::convert::Into::into)),
        )
    } else {
        (quote!(#wrapper), quote!(#id: #id.into()))
    }
}

/// The ascending and descending ordering terms of a field. On PostgreSQL NULLs go first
/// ascending and last descending, and text sorts by code point, as on SQLite.
fn order_terms(model: &Model, f: &Field, backend: &Backend) -> (TokenStream, TokenStream) {
    let table = &model.table;
    let id = &f.ident;
    let column = if backend.pg && f.kind.is_text() {
        quote!(__p::CollateC(#table::#id))
    } else {
        quote!(#table::#id)
    };
    if backend.pg && f.nullable {
        (
            quote!(#column.asc().nulls_first()),
            quote!(#column.desc().nulls_last()),
        )
    } else {
        (quote!(#column.asc()), quote!(#column.desc()))
    }
}

fn condition_arm(model: &Model, i: usize, f: &Field, backend: &Backend) -> TokenStream {
    let table = &model.table;
    let id = &f.ident;
    // A choice is compared as the text it is stored as.
    let vty = match f.kind {
        Kind::Choice => quote!(::std::string::String),
        _ => {
            let vty = &f.value_ty;
            quote!(#vty)
        }
    };
    let db = backend.db();
    let marker = format_ident!("{}", backend.key);
    let text = if f.kind.is_text() {
        quote!(text)
    } else {
        quote!(plain)
    };
    let leaf = quote!(#i => ::plover::__plover_condition!(f, #table::#id, #vty, #marker, #table::table, #text),);
    match &f.fk {
        None => leaf,
        Some(target) => {
            let column = if f.nullable {
                quote!(#table::#id.assume_not_null())
            } else {
                quote!(#table::#id)
            };
            // Spanned at the user's `fk = Type`, so that a type that is not a model, or whose
            // primary key has another type than the field, is reported there.
            let sub = quote_spanned!(target.span()=>
                <#target as __p::SqlQueries<#db>>::pk_subquery(f, depth + 1)?
            );
            let in_sub = quote_spanned!(target.span()=> eq_any(sub));
            let eq_sub = quote_spanned!(target.span()=> eq(sub.single_value()));
            quote! {
                #i if !leaf => {
                    let sub = #sub;
                    if __p::selects_one::<#target>(f, depth + 1) {
                        ::core::result::Result::Ok(::std::boxed::Box::new(
                            #table::#id.nullable().#eq_sub,
                        ) as __p::Cond<#table::table, #db>)
                    } else {
                        ::core::result::Result::Ok(::std::boxed::Box::new(#column.#in_sub.nullable())
                            as __p::Cond<#table::table, #db>)
                    }
                }
                #leaf
            }
        }
    }
}
