//! One field of a model, as the derive reads it.

use syn::{Ident, Type};

use crate::attr::{Default, Number};
use crate::types::Kind;

/// A field: its Rust side, its API names, its options and its column.
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
    /// The diesel SQL type of the column, for a generated `table!`.
    pub(crate) diesel_type: &'static str,
    /// The column's SQL `DEFAULT`, where the default is a plain literal.
    pub(crate) sql_default: Option<String>,
    /// The field's doc comment (a description in the API reference).
    pub(crate) doc: String,
    /// `min`, `max`, `min_len`, `max_len`, `not_blank`, `choices`, checked against the type.
    pub(crate) constraints: Constraints,
    /// `#[rest(long)]`.
    pub(crate) long: bool,
    /// `#[rest(search_index)]`.
    pub(crate) search_index: bool,
    /// `#[rest(private)]`.
    pub(crate) private: bool,
    /// The name people read: `verbose_name`, else the API name humanized (`Join date`).
    pub(crate) verbose_name: String,
}

/// What a field accepts beyond its type (the runtime's `Constraints`); bounds of a float
/// field are floats.
#[derive(Default)]
pub(crate) struct Constraints {
    pub(crate) min: Option<Number>,
    pub(crate) max: Option<Number>,
    pub(crate) min_len: Option<u32>,
    pub(crate) max_len: Option<u32>,
    pub(crate) not_blank: bool,
    pub(crate) choices: Vec<String>,
}
