//! Support for the code that `#[derive(RestModel)]` generates. Not a public API.

pub use chrono;
pub use diesel;
pub use inventory;
pub use serde_json;

pub use crate::db::{plover_lower, Conn};
pub use crate::error::Error;
pub use crate::model::{FieldKind, FieldMeta, ModelEntry, ModelMeta, ModelOps, RestModel};
pub use crate::query::{Filter, Op, Param, Select};
pub use crate::value::{from_json_required, FromJson, FromParam, ToJson};

use diesel::backend::Backend;
use diesel::expression::expression_types::NotSelectable;
use diesel::sql_types::{Bool, Nullable};
use diesel::sqlite::Sqlite;
use diesel::{BoolExpressionMethods, BoxableExpression};

/// A boxed condition on table `T`.
pub type Cond<T, DB> = Box<dyn BoxableExpression<T, DB, SqlType = Nullable<Bool>>>;

/// A boxed ordering term on table `T`.
pub type Order<T, DB> = Box<dyn BoxableExpression<T, DB, SqlType = NotSelectable>>;

/// The typed queries of a model on one backend, generated per backend.
pub trait SqlQueries<DB: Backend>: RestModel {
    /// The diesel table.
    type Table;
    /// `SELECT pk FROM table WHERE ...`, boxed.
    type PkQuery;

    /// The condition of `filter` from path position `depth` on.
    fn condition(filter: &Filter, depth: usize) -> Result<Cond<Self::Table, DB>, Error>;

    /// The primary keys of the rows matching `filter` from `depth` on (for joins).
    fn pk_subquery(filter: &Filter, depth: usize) -> Result<Self::PkQuery, Error>;
}

/// The values of a filter as the field's Rust type.
pub fn values<T: FromParam>(filter: &Filter) -> Result<Vec<T>, Error> {
    filter.values.iter().map(value::<T>).collect()
}

/// One filter value as the field's Rust type.
pub fn value<T: FromParam>(param: &Param) -> Result<T, Error> {
    T::from_param(param)
        .ok_or_else(|| Error::Internal(format!("filter value {param:?} does not fit its field")))
}

/// A primary key in the model's key type; a key out of its range matches nothing.
pub fn pk<T: TryFrom<i64>>(pk: i64) -> Result<T, Error> {
    T::try_from(pk).map_err(|_| Error::NotFound)
}

/// Primary keys in the model's key type, dropping those out of its range.
pub fn pks<T: TryFrom<i64>>(ids: &[i64]) -> Vec<T> {
    ids.iter().filter_map(|&i| T::try_from(i).ok()).collect()
}

/// The OR of conditions (one value of a repeated filter key each).
pub fn any<T: 'static>(conds: Vec<Cond<T, Sqlite>>) -> Result<Cond<T, Sqlite>, Error> {
    let mut iter = conds.into_iter();
    let first = iter
        .next()
        .ok_or_else(|| Error::Internal("a filter without values".into()))?;
    Ok(iter.fold(first, |acc, c| Box::new(acc.or(c)) as Cond<T, Sqlite>))
}

/// The condition of one field, for the derive: `(filter, column, rust type, backend, table,
/// text|plain)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __plover_condition {
    (@common $f:ident, $c:ident, $ty:ty, $cond:ty) => {{
        use $crate::__private::diesel::prelude::*;
        use $crate::__private::{Op, Param};
        match $f.op {
            Op::Eq | Op::In => {
                let mut vals = $crate::__private::values::<$ty>($f)?;
                if vals.len() == 1 {
                    let v = vals.remove(0);
                    ::std::result::Result::Ok(::std::boxed::Box::new($c.eq(v).nullable()) as $cond)
                } else {
                    ::std::result::Result::Ok(::std::boxed::Box::new($c.eq_any(vals).nullable()) as $cond)
                }
            }
            Op::Ne => {
                let vals = $crate::__private::values::<$ty>($f)?;
                ::std::result::Result::Ok(::std::boxed::Box::new($c.ne_all(vals).nullable()) as $cond)
            }
            Op::Is => $crate::__private::any($f.values.iter().map(|p| match p {
                Param::Null => ::std::result::Result::Ok(::std::boxed::Box::new($c.is_null().nullable()) as $cond),
                other => ::std::result::Result::Ok(::std::boxed::Box::new(
                    $c.eq($crate::__private::value::<$ty>(other)?).nullable()) as $cond),
            }).collect::<::std::result::Result<::std::vec::Vec<_>, $crate::__private::Error>>()?),
            Op::Lt => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.lt(v).nullable()) as $cond).collect()),
            Op::Lte => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.le(v).nullable()) as $cond).collect()),
            Op::Gt => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.gt(v).nullable()) as $cond).collect()),
            Op::Gte => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.ge(v).nullable()) as $cond).collect()),
            Op::Like | Op::ILike => $crate::__plover_condition!(@like $f, $c, $cond),
        }
    }};
    (@like $f:ident, $c:ident, $cond:ty) => {
        ::std::result::Result::Err($crate::__private::Error::Internal("like on a non-text field".into()))
    };
    ($f:ident, $c:expr, $ty:ty, sqlite, $table:ty, text) => {{
        use $crate::__private::diesel::prelude::*;
        type __Cond = $crate::__private::Cond<$table, $crate::__private::diesel::sqlite::Sqlite>;
        let c = $c;
        match $f.op {
            $crate::__private::Op::Like => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new(c.like(v).nullable()) as __Cond).collect()),
            $crate::__private::Op::ILike => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($crate::__private::plover_lower(c.nullable()).like(v.to_lowercase()).nullable()) as __Cond).collect()),
            _ => $crate::__plover_condition!(@common $f, c, $ty, __Cond),
        }
    }};
    ($f:ident, $c:expr, $ty:ty, sqlite, $table:ty, plain) => {{
        type __Cond = $crate::__private::Cond<$table, $crate::__private::diesel::sqlite::Sqlite>;
        let c = $c;
        $crate::__plover_condition!(@common $f, c, $ty, __Cond)
    }};
}
