//! `Query`: a selection of one model built by field names, for application views.

use std::marker::PhantomData;

use crate::db::Conn;
use crate::error::Error;
use crate::model::{Field, FieldKind, Path, RestModel};
use crate::query::{Filter, Op, Order, Param, Select};
use crate::sql;
use crate::sql::cascade::delete_rows;

/// Rows of `M` to load: conditions on fields (named by their handles, through foreign keys with
/// [`Field::join`]), an ordering, a limit. Everything runs in SQL with bound values.
///
/// A join through a field that is not a foreign key, or a value that does not fit its field,
/// is a programming error: it is reported when the query runs, as a 500 with the details in
/// the log (never a panic).
///
/// ```no_run
/// # use plover::prelude::*;
/// # use plover::query::Op;
/// # use plover::views::Query;
/// # diesel::table! { user (id) { id -> Integer, username -> Text } }
/// # diesel::table! { message (id) { id -> Integer, user_id -> Integer, content -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = user)]
/// # pub struct User { pub id: i32, pub username: String }
/// # #[derive(RestModel)] #[diesel(table_name = message)]
/// # pub struct Message { pub id: i32, #[rest(fk = User)] pub user_id: i32, pub content: String }
/// # fn f(conn: &mut plover::db::Conn<'_>) -> Result<(), plover::Error> {
/// let (message, user) = (Message::FIELDS, User::FIELDS);
/// let newest: Vec<Message> = Query::new()
///     .filter(message.user_id.join(user.username), Op::Eq, "alice")
///     .order_by_desc(message.id)
///     .limit(10)
///     .all(conn)?;
/// # Ok(()) }
/// ```
pub struct Query<M: RestModel> {
    select: Select,
    /// The first mistake in building the query, reported when it runs.
    error: Option<String>,
    model: PhantomData<fn() -> M>,
}

impl<M: RestModel> Clone for Query<M> {
    fn clone(&self) -> Self {
        Query {
            select: self.select.clone(),
            error: self.error.clone(),
            model: PhantomData,
        }
    }
}

impl<M: RestModel> std::fmt::Debug for Query<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("model", &M::meta().name)
            .field("select", &self.select)
            .field("error", &self.error)
            .finish()
    }
}

impl<M: RestModel> Default for Query<M> {
    fn default() -> Self {
        Query::new()
    }
}

impl<M: RestModel> Query<M> {
    /// Every row, by primary key.
    pub fn new() -> Query<M> {
        Query {
            select: Select::default(),
            error: None,
            model: PhantomData,
        }
    }

    /// Rows whose field at `path` compares with `value` by `op`. `path` is a field handle
    /// (`Message::FIELDS.content`), or a join through foreign keys to a field of a related
    /// model (`Message::FIELDS.user_id.join(User::FIELDS.username)`); a foreign key alone
    /// compares its primary key. `Op::Is` takes `Param::Null`.
    pub fn filter(self, path: impl Into<Path<M>>, op: Op, value: impl Into<Param>) -> Query<M> {
        self.filter_any(path, op, [value])
    }

    /// Like [`Query::filter`] with several values, combined with OR (with AND for `Op::Ne`):
    /// `filter_any(User::FIELDS.id, Op::In, ids)`.
    pub fn filter_any<V: Into<Param>>(
        mut self,
        path: impl Into<Path<M>>,
        op: Op,
        values: impl IntoIterator<Item = V>,
    ) -> Query<M> {
        let path = path.into();
        let values: Vec<Param> = values.into_iter().map(Into::into).collect();
        match path.resolve().and_then(|(indexes, field)| {
            match values.iter().find(|v| !fits(field.kind, op, v)) {
                Some(v) => Err(format!("{v:?} does not fit the {:?} field", field.kind)),
                None => Ok(indexes),
            }
        }) {
            Ok(indexes) => self.select.filters.push(Filter {
                path: indexes,
                op,
                values,
            }),
            Err(e) => self.fail(format!("filter on `{}`: {e}", path.as_str())),
        }
        self
    }

    /// Orders by a field, ascending; call again for further keys. The primary key always
    /// breaks ties, so pages never overlap.
    pub fn order_by(mut self, field: Field<M>) -> Query<M> {
        self.select.order.push(Order::asc(field.index()));
        self
    }

    /// Orders by a field, descending (`order_by_desc(Message::FIELDS.pub_date)`: newest first).
    pub fn order_by_desc(mut self, field: Field<M>) -> Query<M> {
        self.select.order.push(Order::desc(field.index()));
        self
    }

    /// At most `n` rows.
    pub fn limit(mut self, n: i64) -> Query<M> {
        self.select.limit = Some(n.max(0));
        self
    }

    /// The rows.
    pub fn all(&self, conn: &mut Conn<'_>) -> Result<Vec<M>, Error> {
        M::load(conn, &self.ordered()?)
    }

    /// The first row, if any.
    pub fn first(&self, conn: &mut Conn<'_>) -> Result<Option<M>, Error> {
        let mut select = self.ordered()?;
        select.limit = Some(1);
        Ok(M::load(conn, &select)?.into_iter().next())
    }

    /// The first row, or [`Error::NotFound`] (a 404).
    pub fn get_or_404(&self, conn: &mut Conn<'_>) -> Result<M, Error> {
        self.first(conn)?.ok_or(Error::NotFound)
    }

    /// How many rows match (`SELECT COUNT(*)`; ordering and limit do not count).
    pub fn count(&self, conn: &mut Conn<'_>) -> Result<i64, Error> {
        self.check()?;
        sql::count(conn, M::meta(), &self.select)
    }

    /// Whether any row matches: `SELECT pk ... LIMIT 1`, which stops at the first match
    /// instead of counting them all. Like [`Query::count`], it ignores the ordering and the
    /// limit: `q.exists(conn)?` is `q.count(conn)? > 0`, for less work.
    ///
    /// ```no_run
    /// # use plover::prelude::*;
    /// # use plover::query::Op;
    /// # use plover::views::Query;
    /// # diesel::table! { user (id) { id -> Integer, username -> Text } }
    /// # #[derive(RestModel)] #[diesel(table_name = user)]
    /// # pub struct User { pub id: i32, pub username: String }
    /// # fn f(conn: &mut plover::db::Conn<'_>) -> Result<(), plover::Error> {
    /// let taken = Query::<User>::new()
    ///     .filter(User::FIELDS.username, Op::Eq, "alice")
    ///     .exists(conn)?;
    /// # Ok(()) }
    /// ```
    pub fn exists(&self, conn: &mut Conn<'_>) -> Result<bool, Error> {
        self.check()?;
        let mut select = self.select.conditions_only();
        select.limit = Some(1);
        Ok(!sql::ids(conn, M::meta(), &select)?.is_empty())
    }

    /// Deletes the matching rows, with the rows that depend on them, and returns how many rows
    /// of `M` it deleted. With a [`Query::limit`], it deletes the rows [`Query::all`] would
    /// load: the first `n` in the query's order.
    ///
    /// It runs in one transaction (inside an open one, [`Conn::transaction`], in a savepoint
    /// of it): it selects the primary keys of the matching rows, then deletes those rows as
    /// the REST API's `DELETE` deletes one, as Django's `QuerySet.delete()` does with
    /// `on_delete=CASCADE` on required foreign keys and `SET_NULL` on nullable ones:
    ///
    /// - a row of any model whose **non-nullable** foreign key refers to a deleted row is
    ///   deleted in turn, and so on down the chain;
    /// - a **nullable** foreign key that refers to a deleted row is set to `NULL`; that row
    ///   stays;
    /// - the model rules' [`before_delete`](crate::model::Rules::before_delete) of every model
    ///   with `#[rest(rules)]` runs for each of its rows before they are deleted (dependents
    ///   included), in the same transaction: an error from it deletes nothing.
    ///
    /// The count is of the rows of `M` only, not of their dependents. If anything fails,
    /// nothing is deleted: a row that a table no model describes still refers to is an
    /// [`Error::Conflict`] (409), and dependent rows that keep being inserted while the
    /// delete runs (PostgreSQL) a 503 that says a concurrent change conflicted (to retry).
    /// Every value is bound, a thousand keys at a time at most, so any number of rows can
    /// match.
    ///
    /// ```no_run
    /// # use plover::prelude::*;
    /// # use plover::query::Op;
    /// # use plover::views::Query;
    /// # diesel::table! { user (id) { id -> Integer, username -> Text } }
    /// # diesel::table! { message (id) { id -> Integer, user_id -> Integer, content -> Text } }
    /// # #[derive(RestModel)] #[diesel(table_name = user)]
    /// # pub struct User { pub id: i32, pub username: String }
    /// # #[derive(RestModel)] #[diesel(table_name = message)]
    /// # pub struct Message { pub id: i32, #[rest(fk = User)] pub user_id: i32, pub content: String }
    /// # fn f(conn: &mut plover::db::Conn<'_>) -> Result<(), plover::Error> {
    /// // alice's messages go with her.
    /// let deleted: usize = Query::<User>::new()
    ///     .filter(User::FIELDS.username, Op::Eq, "alice")
    ///     .delete(conn)?;
    /// # Ok(()) }
    /// ```
    pub fn delete(&self, conn: &mut Conn<'_>) -> Result<usize, Error> {
        let select = match self.select.limit {
            Some(_) => self.ordered()?,
            None => {
                self.check()?;
                self.select.conditions_only()
            }
        };
        let meta = M::meta();
        conn.transaction(|conn| {
            let ids = sql::ids(conn, meta, &select)?;
            delete_rows(conn, meta, &ids, true)
        })
    }

    /// One page window of the rows: `limit` rows after `offset`.
    pub(crate) fn window(
        &self,
        conn: &mut Conn<'_>,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<M>, Error> {
        let mut select = self.ordered()?;
        select.offset = offset;
        select.limit = Some(limit);
        M::load(conn, &select)
    }

    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    fn check(&self) -> Result<(), Error> {
        match &self.error {
            Some(e) => Err(Error::Internal(format!("{} query: {e}", M::meta().name))),
            None => Ok(()),
        }
    }

    /// The selection with the primary key appended as the last ordering key.
    fn ordered(&self) -> Result<Select, Error> {
        self.check()?;
        let mut select = self.select.clone();
        let pk = M::meta().pk;
        if !select.order.iter().any(|o| o.own_field() == Some(pk)) {
            select.order.push(Order::asc(pk));
        }
        Ok(select)
    }
}

/// Whether `value` can be compared with a field of `kind` by `op`.
fn fits(kind: FieldKind, op: Op, value: &Param) -> bool {
    match value {
        Param::Null => op == Op::Is,
        Param::Int(v) => match kind {
            FieldKind::Int32 => i32::try_from(*v).is_ok(),
            FieldKind::Int64 => true,
            _ => false,
        },
        Param::Float(v) => kind == FieldKind::Float && v.is_finite(),
        Param::Bool(_) => kind == FieldKind::Bool,
        Param::Text(_) => kind == FieldKind::Text,
        Param::Date(_) => kind == FieldKind::Date,
        Param::DateTime(_) => kind == FieldKind::DateTime,
    }
}
