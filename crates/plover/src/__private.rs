//! Support for the code that `#[derive(RestModel)]` generates. Not a public API.

pub use chrono;
pub use diesel;
pub use inventory;
pub use serde_json;

pub use crate::accounts::UserModel;
pub use crate::convert::{from_json_required, to_json, write_json, FromJson, FromParam, JsonField};
pub use crate::db::sql_text::{shaped, SqlCache};
pub use crate::db::sqlite::plover_lower;
pub use crate::db::sqlite_dates::{SqliteDate, SqliteDateTime};
pub use crate::db::Conn;
pub use crate::error::Error;
pub use crate::meta::{BeforeDelete, LoadDisplay, LoadFields, ModelEntry, ModelOps};
pub use crate::model::choice::{Bind, Stored};
pub use crate::model::{
    Bound, Choice, Constraints, FieldKind, FieldMeta, IndexColumn, ModelMeta, RestModel, Rules,
};
pub use crate::query::{Filter, Op, Param, Select};
#[cfg(feature = "testing")]
pub use crate::rest::{registrations, ListParser, Registration};
pub use crate::schema::SqlType;

/// What `#[derive(RestModel)]` emits after reporting errors: an impl whose methods are never
/// called (the crate does not compile), so that code using the model reports no second error.
#[doc(hidden)]
#[macro_export]
macro_rules! __fallback_model {
    ($model:ident, $changes:ident) => {
        const _: () = {
            use ::plover::__private as __p;
            impl __p::RestModel for $model {
                type Changes = $changes;
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
                fn set_json(
                    _: &mut $changes,
                    _: usize,
                    _: &__p::serde_json::Value,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    ::core::unreachable!()
                }
                fn is_set(_: &$changes, _: usize) -> bool {
                    ::core::unreachable!()
                }
                fn changes_json(
                    _: &$changes,
                    _: usize,
                ) -> ::core::option::Option<__p::serde_json::Value> {
                    ::core::unreachable!()
                }
                fn fill_defaults(_: &mut $changes) {
                    ::core::unreachable!()
                }
                fn load(
                    _: &mut __p::Conn<'_>,
                    _: &__p::Select,
                ) -> ::core::result::Result<::std::vec::Vec<Self>, __p::Error> {
                    ::core::unreachable!()
                }
                fn load_pk(
                    _: &mut __p::Conn<'_>,
                    _: i64,
                ) -> ::core::result::Result<::core::option::Option<Self>, __p::Error> {
                    ::core::unreachable!()
                }
                fn load_unique(
                    _: &mut __p::Conn<'_>,
                    _: usize,
                    _: &str,
                ) -> ::core::result::Result<::core::option::Option<Self>, __p::Error> {
                    ::core::unreachable!()
                }
                fn insert_row(
                    _: &mut __p::Conn<'_>,
                    _: $changes,
                ) -> ::core::result::Result<Self, __p::Error> {
                    ::core::unreachable!()
                }
                fn update(
                    _: &mut __p::Conn<'_>,
                    _: i64,
                    _: $changes,
                ) -> ::core::result::Result<usize, __p::Error> {
                    ::core::unreachable!()
                }
            }
        };
    };
}

use diesel::backend::Backend;
use diesel::expression::expression_types::NotSelectable;
use diesel::expression::{Expression, TypedExpressionType};
use diesel::query_dsl::methods::{FilterDsl, LimitDsl, OffsetDsl, ThenOrderDsl};
use diesel::sql_types::{Bool, IntoNullable, Nullable};
use diesel::{BoolExpressionMethods, BoxableExpression, NullableExpressionMethods};

/// A boxed condition on table `T`.
pub type Cond<T, DB> = Box<dyn BoxableExpression<T, DB, SqlType = Nullable<Bool>>>;

/// A boxed ordering term on table `T`.
pub type Order<T, DB> = Box<dyn BoxableExpression<T, DB, SqlType = NotSelectable>>;

/// The typed queries of a model on one backend, generated per backend.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Plover model",
    label = "not a model",
    note = "add `#[derive(RestModel)]` to `{Self}`"
)]
pub trait SqlQueries<DB: Backend>: RestModel {
    /// The diesel table.
    type Table;
    /// `SELECT pk FROM table WHERE ...`, boxed.
    type PkQuery;

    /// The condition of `filter` from path position `depth` on.
    fn condition(filter: &Filter, depth: usize) -> Result<Cond<Self::Table, DB>, Error>;

    /// The primary keys of the rows matching `filter` from `depth` on (for joins).
    fn pk_subquery(filter: &Filter, depth: usize) -> Result<Self::PkQuery, Error>;

    /// The ordering term of field `field`.
    fn order(field: usize, desc: bool) -> Result<Order<Self::Table, DB>, Error>;
}

/// A boxed query `q` narrowed by a selection: its conditions, ordering and window. The same for
/// every model and backend: the generated code only supplies the model's table.
pub fn select<M, DB, Q>(mut q: Q, s: &Select) -> Result<Q, Error>
where
    DB: Backend,
    M: SqlQueries<DB>,
    Vec<Cond<M::Table, DB>>: AnyOf<Output = Cond<M::Table, DB>>,
    Q: FilterDsl<Cond<M::Table, DB>, Output = Q>
        + ThenOrderDsl<Order<M::Table, DB>, Output = Q>
        + LimitDsl<Output = Q>
        + OffsetDsl<Output = Q>,
{
    for f in &s.filters {
        q = FilterDsl::filter(q, M::condition(f, 0)?);
    }
    if !s.any_of.is_empty() {
        let mut ors = Vec::with_capacity(s.any_of.len());
        for conj in &s.any_of {
            let ands = conj
                .iter()
                .map(|f| M::condition(f, 0))
                .collect::<Result<Vec<_>, Error>>()?;
            ors.push(all(ands)?);
        }
        q = FilterDsl::filter(q, any(ors)?);
    }
    for &(field, desc) in &s.order {
        q = ThenOrderDsl::then_order_by(q, M::order(field, desc)?);
    }
    if let Some(limit) = s.limit {
        q = OffsetDsl::offset(LimitDsl::limit(q, limit), s.offset);
    }
    Ok(q)
}

/// `(primary key, display text)` of the rows of a selection (`ModelOps::load_display`).
pub fn load_display<M: RestModel>(
    conn: &mut Conn<'_>,
    s: &Select,
) -> Result<Vec<(i64, String)>, Error> {
    Ok(M::load(conn, s)?
        .iter()
        .map(|r| (r.pk(), r.display()))
        .collect())
}

/// The model's `before_delete` rule for each of the rows `ids` (`ModelOps::before_delete`).
pub fn before_delete<M: RestModel>(conn: &mut Conn<'_>, ids: &[i64]) -> Result<(), Error> {
    for row in M::load(conn, &Select::ids_in(M::meta().pk, ids))? {
        M::before_delete(conn, &row)?;
    }
    Ok(())
}

/// Some fields of the rows of a selection as JSON values (`ModelOps::load_fields`).
pub fn load_fields<M: RestModel>(
    conn: &mut Conn<'_>,
    s: &Select,
    fields: &[usize],
) -> Result<Vec<Vec<serde_json::Value>>, Error> {
    Ok(M::load(conn, s)?
        .iter()
        .map(|r| fields.iter().map(|&f| r.field_json(f)).collect())
        .collect())
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

/// One field's ordering term: `asc` or `desc`, boxed.
pub fn order_by<T, DB, A, D>(desc: bool, asc_term: A, desc_term: D) -> Result<Order<T, DB>, Error>
where
    DB: Backend,
    A: BoxableExpression<T, DB, SqlType = NotSelectable> + 'static,
    D: BoxableExpression<T, DB, SqlType = NotSelectable> + 'static,
{
    Ok(if desc {
        Box::new(desc_term)
    } else {
        Box::new(asc_term)
    })
}

/// Whether `filter` from path position `depth` on selects at most one row of `M`: a single
/// value compared for equality with a unique field (`#[rest(unique)]` or the primary key).
/// A foreign key then compares with a scalar subquery instead of `IN (...)`, so that both
/// engines can read an index on (foreign key, ordering column) in order and stop at the limit.
pub fn selects_one<M: RestModel>(filter: &Filter, depth: usize) -> bool {
    depth + 1 == filter.path.len()
        && filter.values.len() == 1
        && matches!(filter.op, Op::Eq | Op::In)
        && M::meta()
            .fields
            .get(filter.path[depth])
            .is_some_and(|f| f.unique)
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

/// A LIKE pattern for PostgreSQL, where `\` escapes by default: doubled, it is a plain
/// character, as on SQLite (only `%` and `_` are special on both).
pub fn pg_pattern(pattern: String) -> String {
    if pattern.contains('\\') {
        pattern.replace('\\', "\\\\")
    } else {
        pattern
    }
}

/// `%text%` with `\`, `%` and `_` escaped by `\`, for `LIKE ... ESCAPE '\'`: a literal
/// substring on both engines.
pub fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The most rows a load reserves room for before the first one arrives.
const ROWS_RESERVED: i64 = 1000;

/// Loaded rows made into models, in a vector with room for `limit` of them (up to
/// `ROWS_RESERVED`, 1,000): the rows of a page are made in place, never moved by the vector's
/// growth.
pub fn collect_rows<R, M>(
    rows: impl Iterator<Item = diesel::QueryResult<R>>,
    limit: Option<i64>,
    mut model: impl FnMut(R) -> M,
) -> Result<Vec<M>, Error> {
    let room = limit.map_or(0, |limit| limit.clamp(0, ROWS_RESERVED));
    let mut out = Vec::with_capacity(room as usize);
    for row in rows {
        out.push(model(row?));
    }
    Ok(out)
}

/// Primary keys in the model's key type, dropping those out of its range.
pub fn pks<T: TryFrom<i64>>(ids: &[i64]) -> Vec<T> {
    ids.iter().filter_map(|&i| T::try_from(i).ok()).collect()
}

/// Conditions of one backend that combine with OR or AND.
pub trait AnyOf: Sized {
    /// The combined condition.
    type Output;
    /// The OR of all (an error for none).
    fn any_of(self) -> Result<Self::Output, Error>;
    /// The AND of all (an error for none).
    fn all_of(self) -> Result<Self::Output, Error>;
}

macro_rules! any_of_impl {
    ($db:ty) => {
        impl<T: 'static> AnyOf for Vec<Cond<T, $db>> {
            type Output = Cond<T, $db>;
            fn any_of(self) -> Result<Self::Output, Error> {
                balanced(self, &|a, b| Box::new(a.or(b)))
                    .ok_or_else(|| Error::Internal("a filter without values".into()))
            }
            fn all_of(self) -> Result<Self::Output, Error> {
                balanced(self, &|a, b| Box::new(a.and(b)))
                    .ok_or_else(|| Error::Internal("an empty conjunction".into()))
            }
        }
    };
}

/// Combines the items pairwise into a balanced tree (`None` for no items): the SQL expression
/// of n values is then log2(n) deep, far inside SQLite's expression depth limit of 1,000,
/// where a left-deep chain of a long repeated filter would pass it.
fn balanced<C>(mut items: Vec<C>, join: &dyn Fn(C, C) -> C) -> Option<C> {
    while items.len() > 1 {
        let mut next = Vec::with_capacity(items.len().div_ceil(2));
        let mut iter = items.into_iter();
        while let Some(a) = iter.next() {
            next.push(match iter.next() {
                Some(b) => join(a, b),
                None => a,
            });
        }
        items = next;
    }
    items.pop()
}
any_of_impl!(diesel::sqlite::Sqlite);
#[cfg(feature = "postgres")]
any_of_impl!(diesel::pg::Pg);

/// The OR of conditions (one value of a repeated filter key each).
pub fn any<V: AnyOf>(conds: V) -> Result<V::Output, Error> {
    conds.any_of()
}

/// The AND of conditions (of `Select::any_of`).
pub fn all<V: AnyOf>(conds: V) -> Result<V::Output, Error> {
    conds.all_of()
}

/// `NULL` of SQL type `ST`, selected in place of a column that a list does not show (see
/// [`Select::columns`]). Unlike a SQL literal, diesel may keep a query with it prepared.
#[derive(Debug, Clone, Copy)]
pub struct Null<ST>(std::marker::PhantomData<ST>);

impl<ST> Null<ST> {
    /// The `NULL`.
    pub const fn new() -> Null<ST> {
        Null(std::marker::PhantomData)
    }
}

impl<ST> Default for Null<ST> {
    fn default() -> Null<ST> {
        Null::new()
    }
}

/// The column `column`, or [`Null`] in its place when it is not `loaded`, as a nullable
/// expression of its SQL type (a list's select clause, see [`Select::columns`]).
#[allow(clippy::type_complexity)]
pub fn column_or_null<T, DB, C>(
    loaded: bool,
    column: C,
) -> Box<dyn BoxableExpression<T, DB, SqlType = <C::SqlType as IntoNullable>::Nullable>>
where
    DB: Backend,
    C: Expression,
    C::SqlType: IntoNullable,
    <C::SqlType as IntoNullable>::Nullable: TypedExpressionType,
    diesel::dsl::Nullable<C>:
        BoxableExpression<T, DB, SqlType = <C::SqlType as IntoNullable>::Nullable> + 'static,
    Null<<C::SqlType as IntoNullable>::Nullable>:
        BoxableExpression<T, DB, SqlType = <C::SqlType as IntoNullable>::Nullable> + 'static,
{
    if loaded {
        Box::new(column.nullable())
    } else {
        Box::new(Null::new())
    }
}

mod null {
    use diesel::backend::Backend;
    use diesel::expression::{
        is_aggregate, AppearsOnTable, Expression, SelectableExpression, TypedExpressionType,
        ValidGrouping,
    };
    use diesel::query_builder::{AstPass, QueryFragment, QueryId};
    use diesel::QueryResult;

    use super::Null;

    impl<ST: TypedExpressionType> Expression for Null<ST> {
        type SqlType = ST;
    }

    impl<ST, DB: Backend> QueryFragment<DB> for Null<ST> {
        fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
            out.push_sql("NULL");
            Ok(())
        }
    }

    impl<ST: 'static> QueryId for Null<ST> {
        type QueryId = Null<ST>;
        const HAS_STATIC_QUERY_ID: bool = true;
    }

    impl<ST: TypedExpressionType, QS: ?Sized> AppearsOnTable<QS> for Null<ST> {}

    impl<ST: TypedExpressionType, QS: ?Sized> SelectableExpression<QS> for Null<ST> {}

    impl<ST, GB> ValidGrouping<GB> for Null<ST> {
        type IsAggregate = is_aggregate::Never;
    }
}

/// `expr COLLATE "C"`: code-point order of text on PostgreSQL, as SQLite's default.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
pub struct CollateC<T>(pub T);

#[cfg(feature = "postgres")]
mod collate {
    use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
    use diesel::pg::Pg;
    use diesel::query_builder::{AstPass, QueryFragment};
    use diesel::QueryResult;

    use super::CollateC;

    impl<T: Expression> Expression for CollateC<T> {
        type SqlType = T::SqlType;
    }

    impl<T: QueryFragment<Pg>> QueryFragment<Pg> for CollateC<T> {
        fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
            self.0.walk_ast(out.reborrow())?;
            out.push_sql(" COLLATE \"C\"");
            Ok(())
        }
    }

    impl<T: AppearsOnTable<QS>, QS: ?Sized> AppearsOnTable<QS> for CollateC<T> where
        CollateC<T>: Expression
    {
    }

    impl<T: SelectableExpression<QS>, QS: ?Sized> SelectableExpression<QS> for CollateC<T> where
        CollateC<T>: AppearsOnTable<QS>
    {
    }

    impl<T: ValidGrouping<GB>, GB> ValidGrouping<GB> for CollateC<T> {
        type IsAggregate = T::IsAggregate;
    }
}

/// Keeps its items only when Plover's `postgres` feature is on (generated PostgreSQL code).
#[cfg(feature = "postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __plover_if_postgres {
    ($($items:tt)*) => { $($items)* };
}

/// Keeps its items only when Plover's `postgres` feature is on (generated PostgreSQL code).
#[cfg(not(feature = "postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __plover_if_postgres {
    ($($items:tt)*) => {};
}

/// Calls the function of the connection's backend: `(conn, |c| sqlite(c), |c| pg(c))`.
#[cfg(feature = "postgres")]
#[doc(hidden)]
#[macro_export]
macro_rules! __plover_dispatch {
    ($conn:expr, |$c1:ident| $sqlite:expr, |$c2:ident| $pg:expr) => {
        match $conn {
            $crate::__private::Conn::Sqlite($c1) => $sqlite,
            $crate::__private::Conn::Pg($c2) => $pg,
        }
    };
}

/// Calls the function of the connection's backend: `(conn, |c| sqlite(c), |c| pg(c))`.
#[cfg(not(feature = "postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __plover_dispatch {
    ($conn:expr, |$c1:ident| $sqlite:expr, |$c2:ident| $pg:expr) => {
        match $conn {
            $crate::__private::Conn::Sqlite($c1) => $sqlite,
        }
    };
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
            }).collect::<::std::result::Result<::std::vec::Vec<$cond>, $crate::__private::Error>>()?),
            Op::Lt => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.lt(v).nullable()) as $cond).collect::<::std::vec::Vec<$cond>>()),
            Op::Lte => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.le(v).nullable()) as $cond).collect::<::std::vec::Vec<$cond>>()),
            Op::Gt => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.gt(v).nullable()) as $cond).collect::<::std::vec::Vec<$cond>>()),
            Op::Gte => $crate::__private::any($crate::__private::values::<$ty>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($c.ge(v).nullable()) as $cond).collect::<::std::vec::Vec<$cond>>()),
            Op::Like | Op::ILike | Op::Contains => $crate::__plover_condition!(@like $f, $c, $cond),
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
                .map(|v| ::std::boxed::Box::new(c.like(v).nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            $crate::__private::Op::ILike => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($crate::__private::plover_lower(c.nullable()).like($crate::value::fold_case(&v)).nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            $crate::__private::Op::Contains => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new($crate::__private::plover_lower(c.nullable()).like($crate::__private::contains_pattern(&$crate::value::fold_case(&v))).escape('\\').nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            _ => $crate::__plover_condition!(@common $f, c, $ty, __Cond),
        }
    }};
    ($f:ident, $c:expr, $ty:ty, pg, $table:ty, text) => {{
        use $crate::__private::diesel::prelude::*;
        type __Cond = $crate::__private::Cond<$table, $crate::__private::diesel::pg::Pg>;
        let c = $c;
        match $f.op {
            $crate::__private::Op::Like => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new(c.like($crate::__private::pg_pattern(v)).nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            $crate::__private::Op::ILike => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new(c.ilike($crate::__private::pg_pattern(v)).nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            $crate::__private::Op::Contains => $crate::__private::any($crate::__private::values::<::std::string::String>($f)?.into_iter()
                .map(|v| ::std::boxed::Box::new(c.ilike($crate::__private::contains_pattern(&v)).escape('\\').nullable()) as __Cond).collect::<::std::vec::Vec<__Cond>>()),
            // Comparisons by code point, as ordering, whatever the database's collation.
            $crate::__private::Op::Lt | $crate::__private::Op::Lte | $crate::__private::Op::Gt | $crate::__private::Op::Gte => {
                let c = $crate::__private::CollateC(c);
                $crate::__plover_condition!(@common $f, c, $ty, __Cond)
            }
            _ => $crate::__plover_condition!(@common $f, c, $ty, __Cond),
        }
    }};
    ($f:ident, $c:expr, $ty:ty, pg, $table:ty, plain) => {{
        type __Cond = $crate::__private::Cond<$table, $crate::__private::diesel::pg::Pg>;
        let c = $c;
        $crate::__plover_condition!(@common $f, c, $ty, __Cond)
    }};
    ($f:ident, $c:expr, $ty:ty, sqlite, $table:ty, plain) => {{
        type __Cond = $crate::__private::Cond<$table, $crate::__private::diesel::sqlite::Sqlite>;
        let c = $c;
        $crate::__plover_condition!(@common $f, c, $ty, __Cond)
    }};
}
