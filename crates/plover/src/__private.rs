//! Support for the code that `#[derive(RestModel)]` generates. Not a public API.

pub use diesel;
pub use inventory;
pub use serde_json;

/// For Plover's benchmarks: the cache every `Auth` keeps of verified credentials.
pub use crate::accounts::cache::CredentialCache;
pub use crate::accounts::UserModel;
pub use crate::db::Conn;
pub use crate::error::Error;
pub use crate::meta::ModelEntry;
use crate::meta::ModelOps;
use crate::model::convert::from_json_required;
// The traits too, so that a compiler error names them by this path.
pub use crate::model::convert::{to_json, write_json, FromJson, JsonField};
pub use crate::model::{
    Bound, Choice, Constraints, FieldKind, FieldMeta, IndexColumn, ModelMeta, RestModel, Rules,
};
pub use crate::query::select::Select;
#[cfg(feature = "testing")]
pub use crate::rest::{registrations, ListParser, Registration};
pub use crate::schema::SqlType;

pub use crate::sql::{Arg, Cells, Column, FromRow};

/// What `#[derive(RestModel)]` emits after reporting errors: an impl whose methods are never
/// called (the crate does not compile), so that code using the model reports no second error.
#[doc(hidden)]
#[macro_export]
macro_rules! __fallback_model {
    ($model:ident, $changes:ident, $key:ty) => {
        const _: () = {
            use ::plover::__private as __p;
            impl __p::FromRow for $model {
                fn read<C: __p::Cells>(_: &mut C) -> __p::diesel::deserialize::Result<Self> {
                    ::core::unreachable!()
                }
            }
            impl __p::RestModel for $model {
                type Changes = $changes;
                type Key = $key;
                fn meta() -> &'static __p::ModelMeta {
                    ::core::unreachable!()
                }
                fn pk(&self) -> i64 {
                    ::core::unreachable!()
                }
                fn display(&self) -> ::std::string::String {
                    ::core::unreachable!()
                }
                fn field_json(&self, _: usize) -> __p::serde_json::Value {
                    ::core::unreachable!()
                }
                fn write_field(&self, _: usize, _: &mut ::std::vec::Vec<u8>) {
                    ::core::unreachable!()
                }
                fn field_arg(&self, _: usize) -> __p::Arg<'_> {
                    ::core::unreachable!()
                }
                fn set_json(
                    _: &mut $changes,
                    _: usize,
                    _: &__p::serde_json::Value,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    ::core::unreachable!()
                }
                fn set_arg(
                    _: &mut $changes,
                    _: usize,
                    _: __p::Arg<'_>,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    ::core::unreachable!()
                }
                fn change(_: &$changes, _: usize) -> ::core::option::Option<__p::Arg<'_>> {
                    ::core::unreachable!()
                }
                fn changes_json(
                    _: &$changes,
                    _: usize,
                ) -> ::core::option::Option<__p::serde_json::Value> {
                    ::core::unreachable!()
                }
                fn copy_changes(_: &$changes) -> $changes {
                    ::core::unreachable!()
                }
                fn fill_defaults(_: &mut $changes) {
                    ::core::unreachable!()
                }
            }
        };
    };
}

/// The metadata of the model `M`, with the operations that need its type.
pub const fn model<M: RestModel + 'static>(
    name: &'static str,
    table: &'static str,
    fields: &'static [FieldMeta],
    pk: usize,
    rules: bool,
) -> ModelMeta {
    let ops = ModelOps {
        before_delete: if rules {
            Some(before_delete::<M>)
        } else {
            None
        },
        load_display: load_display::<M>,
        load_fields: load_fields::<M>,
    };
    ModelMeta::new(name, table, fields, pk, std::any::TypeId::of::<M>, ops)
}

/// `(primary key, display text)` of the rows of a selection (`ModelOps::load_display`).
/// Plain loops, here and in [`load_fields`]: an iterator chain would compile its adapters
/// once per model in the application's crate.
fn load_display<M: RestModel>(
    conn: &mut Conn<'_>,
    s: &Select,
) -> Result<Vec<(i64, String)>, Error> {
    let rows = M::load(conn, s)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        out.push((row.pk(), row.display()));
    }
    Ok(out)
}

/// The model's `before_delete` rule for each of the rows `ids` (`ModelOps::before_delete`).
fn before_delete<M: RestModel>(conn: &mut Conn<'_>, ids: &[i64]) -> Result<(), Error> {
    for row in M::load(conn, &Select::ids_in(M::meta().pk, ids))? {
        M::before_delete(conn, &row)?;
    }
    Ok(())
}

/// Some fields of the rows of a selection as JSON values (`ModelOps::load_fields`).
fn load_fields<M: RestModel>(
    conn: &mut Conn<'_>,
    s: &Select,
    fields: &[usize],
) -> Result<Vec<Vec<serde_json::Value>>, Error> {
    let rows = M::load(conn, s)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut values = Vec::with_capacity(fields.len());
        for &f in fields {
            values.push(row.field_json(f));
        }
        out.push(values);
    }
    Ok(out)
}

/// Sets a changes slot of a non-nullable field from JSON (`null` has its own message).
pub fn set_required<T: FromJson>(
    slot: &mut Option<T>,
    value: &serde_json::Value,
) -> Result<(), String> {
    *slot = Some(from_json_required(value)?);
    Ok(())
}

/// Sets a changes slot of a nullable field (`Option<T>`) from JSON.
pub fn set_nullable<T: FromJson>(
    slot: &mut Option<T>,
    value: &serde_json::Value,
) -> Result<(), String> {
    *slot = Some(T::from_json(value)?);
    Ok(())
}

/// Sets a changes slot from a typed value (`RestModel::set_arg`); the error says the value is
/// of another type (or NULL for a non-nullable field).
pub fn set_arg<T: Column>(slot: &mut Option<T>, arg: Arg<'_>) -> Result<(), String> {
    let value = T::from_arg(arg).ok_or("the value does not fit this field")?;
    *slot = Some(value);
    Ok(())
}

/// The SQL text that loads a selection of a model, written anew (placeholders as `?`): the
/// benchmark of writing a list's SQL.
#[cfg(feature = "testing")]
pub fn rows_text(meta: &ModelMeta, s: &Select, pg: bool) -> Result<String, Error> {
    crate::sql::rows_text(meta, s, pg)
}

/// A foreign key field's type `F` is the type `K` of its target's primary key.
#[diagnostic::on_unimplemented(
    message = "a foreign key to a model whose primary key is `{K}` cannot be `{Self}`",
    label = "the target model's primary key is `{K}`",
    note = "declare the foreign key field as `{K}` (or `Option<{K}>`)"
)]
pub trait SameKey<K> {}

impl<K> SameKey<K> for K {}

/// Compiles only when `F` is `K` (generated for each foreign key).
pub const fn same_key<K, F: SameKey<K>>() {}
