//! Every statement Plover runs for a model, built at run time from the model's metadata (its
//! table, columns and their types) and run by diesel on SQLite or PostgreSQL: the derive only
//! says how a row is read into the struct ([`FromRow`]) and which fields a write gives.
//!
//! Values are always bound; identifiers come only from metadata. The text of each statement is
//! kept per shape in the model's cache (`db::sql_text`), so a request of a known shape only
//! collects its arguments, and diesel keeps one prepared statement per text and connection.

pub(crate) mod arg;
pub(crate) mod column;
mod statement;
mod writer;

use std::borrow::Cow;
use std::cell::RefCell;

use diesel::connection::DefaultLoadingMode;
use diesel::RunQueryDsl;

use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::Select;

pub use arg::Arg;
pub use column::{Cells, Column, FromRow};
use column::{Key, Loaded};
use statement::Statement;
use writer::{field, Writer};

/// The queries, the first number of a shape key.
#[derive(Clone, Copy)]
enum Query {
    Rows,
    Ids,
    Count,
    ByPk,
    ByField,
    Insert,
    Update,
    Delete,
    Nullify,
}

/// Runs `$body` with `$c` the connection of either engine and `$pg` whether it is PostgreSQL.
macro_rules! on_engine {
    ($conn:expr, |$c:ident, $pg:ident| $body:expr) => {
        match $conn {
            Conn::Sqlite($c) => {
                let ($c, $pg) = (&mut **$c, false);
                $body
            }
            #[cfg(feature = "postgres")]
            Conn::Pg($c) => {
                let ($c, $pg) = (&mut **$c, true);
                $body
            }
        }
    };
}

thread_local! {
    /// The shape key of the current statement (kept to reuse its allocation).
    static KEY: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The statement of `query` on `meta` of the shape that `shape` appends to the key: its text
/// from the model's cache (written and kept on the shape's first use), its arguments from
/// `write`.
fn statement<'a>(
    meta: &ModelMeta,
    query: Query,
    pg: bool,
    shape: impl FnOnce(&mut Vec<usize>),
    write: impl Fn(&mut Writer<'a>) -> Result<(), Error>,
) -> Result<Statement<'a>, Error> {
    KEY.with_borrow_mut(|key| {
        key.clear();
        key.extend([query as usize, usize::from(pg)]);
        shape(key);
        if let Some(text) = meta.cache.get(key) {
            let mut w = Writer::new(pg, cfg!(debug_assertions));
            write(&mut w)?;
            let args = std::mem::take(&mut w.args);
            #[cfg(debug_assertions)]
            if w.into_text().as_deref() != Some(text) {
                return Err(Error::Internal(format!(
                    "the kept SQL text of a {} query is not its text",
                    meta.name
                )));
            }
            return Ok(Statement::new(Cow::Borrowed(text), args, true));
        }
        let mut w = Writer::new(pg, true);
        write(&mut w)?;
        let (args, prepared) = (std::mem::take(&mut w.args), w.prepared);
        let text = w.into_text().unwrap_or_default();
        let text = if prepared {
            meta.cache.keep(key, text)
        } else {
            Cow::Owned(text)
        };
        let prepared = matches!(text, Cow::Borrowed(_));
        Ok(Statement::new(text, args, prepared))
    })
}

/// The most rows a load reserves room for before the first one arrives.
const ROWS_RESERVED: i64 = 1000;

/// The rows of a statement, in a vector with room for `limit` of them (up to 1,000): the rows of
/// a page are made in place, never moved by the vector's growth.
macro_rules! collect {
    ($c:expr, $statement:expr, $limit:expr) => {{
        let room = $limit.map_or(0, |limit: i64| limit.clamp(0, ROWS_RESERVED));
        let mut out = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
        for row in $statement.load_iter::<Loaded<T>, DefaultLoadingMode>($c)? {
            out.push(row?.0);
        }
        Ok::<Vec<T>, Error>(out)
    }};
}

/// The rows of `meta` (read as `T`) that a selection selects, in its order and window.
pub(crate) fn rows<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &Select,
) -> Result<Vec<T>, Error> {
    on_engine!(conn, |c, pg| {
        let statement = statement(
            meta,
            Query::Rows,
            pg,
            |k| s.shape(k),
            |w| {
                w.select_fields(meta, s.columns.as_deref());
                w.from(meta);
                w.conditions(meta, s)?;
                w.order_and_window(meta, s)
            },
        )?;
        if s.pk_window(meta.pk).is_some() {
            // Every row in key order, a window of them: one text per model, which diesel finds
            // by the statement's type.
            collect!(c, statement.fixed::<(T, Page)>(), s.limit)
        } else {
            collect!(c, statement, s.limit)
        }
    })
}

/// The SQL text of the statement that loads a selection of `meta` (placeholders as `?`),
/// written anew each time: for benchmarks of the writing and tests of the text.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn rows_text(meta: &ModelMeta, s: &Select, pg: bool) -> Result<String, Error> {
    let mut w = Writer::new(pg, true);
    w.select_fields(meta, s.columns.as_deref());
    w.from(meta);
    w.conditions(meta, s)?;
    w.order_and_window(meta, s)?;
    Ok(w.into_text()
        .unwrap_or_default()
        .replace(writer::PLACEHOLDER, "?"))
}

/// Marker types of the statements of fixed text.
struct Page;
struct ByPk;

/// The key `pk` as an argument of the primary key's type (`None`: out of its range).
fn key_arg(meta: &ModelMeta, pk: i64) -> Option<Arg<'static>> {
    Arg::key(meta.pk_field().sql_type, pk)
}

/// The row of `meta` with primary key `pk`, if any.
pub(crate) fn by_pk<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
) -> Result<Option<T>, Error> {
    let Some(key) = key_arg(meta, pk) else {
        return Ok(None);
    };
    on_engine!(conn, |c, pg| {
        let statement = statement(
            meta,
            Query::ByPk,
            pg,
            |_| {},
            |w| {
                w.select_fields(meta, None);
                w.from(meta);
                w.sql(" WHERE ");
                w.column(meta, meta.pk_field());
                w.sql(" = ");
                w.bind(key.clone());
                w.sql(" LIMIT 1");
                Ok(())
            },
        )?;
        let rows = collect!(c, statement.fixed::<(T, ByPk)>(), Some(1))?;
        Ok(rows.into_iter().next())
    })
}

/// The row of `meta` whose field `index` equals `value`, if any (the first one: call it on
/// unique fields).
pub(crate) fn by_field<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    value: Arg<'_>,
) -> Result<Option<T>, Error> {
    let field = field(meta, index)?;
    on_engine!(conn, |c, pg| {
        let statement = statement(
            meta,
            Query::ByField,
            pg,
            |k| k.push(index),
            |w| {
                w.select_fields(meta, None);
                w.from(meta);
                w.sql(" WHERE ");
                w.column(meta, field);
                w.sql(" = ");
                w.bind(value.clone());
                w.sql(" LIMIT 1");
                Ok(())
            },
        )?;
        let rows = collect!(c, statement, Some(1))?;
        Ok(rows.into_iter().next())
    })
}

/// Inserts a row of `meta` with the `given` fields (the others take their SQL defaults) and
/// reads it back (`INSERT ... RETURNING`).
pub(crate) fn insert<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    given: &[(usize, Arg<'_>)],
) -> Result<T, Error> {
    on_engine!(conn, |c, pg| {
        let shape = |k: &mut Vec<usize>| k.extend(given.iter().map(|(i, _)| *i));
        let statement = statement(meta, Query::Insert, pg, shape, |w| {
            w.sql("INSERT INTO ");
            w.ident(meta.table);
            if given.is_empty() {
                w.sql(" DEFAULT VALUES");
            } else {
                w.sql(" (");
                for (n, (i, _)) in given.iter().enumerate() {
                    w.sql(if n > 0 { ", " } else { "" });
                    w.ident(field(meta, *i)?.column);
                }
                w.sql(") VALUES (");
                for (n, (_, arg)) in given.iter().enumerate() {
                    w.sql(if n > 0 { ", " } else { "" });
                    w.bind(arg.clone());
                }
                w.sql(")");
            }
            w.sql(" RETURNING ");
            returning(w, meta);
            Ok(())
        })?;
        collect!(c, statement, Some(1))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Internal("an insert returned no row".into()))
    })
}

/// The columns of every field, unqualified (for `RETURNING`).
fn returning(w: &mut Writer<'_>, meta: &ModelMeta) {
    for (n, field) in meta.fields.iter().enumerate() {
        w.sql(if n > 0 { ", " } else { "" });
        w.ident(field.column);
    }
}

/// Sets the `given` fields of the row of `meta` with key `pk`; the number of rows changed
/// (nothing given: no statement, 0).
pub(crate) fn update(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
    given: &[(usize, Arg<'_>)],
) -> Result<usize, Error> {
    let key = key_arg(meta, pk).ok_or(Error::NotFound)?;
    if given.is_empty() {
        return Ok(0);
    }
    on_engine!(conn, |c, pg| {
        let shape = |k: &mut Vec<usize>| k.extend(given.iter().map(|(i, _)| *i));
        let statement = statement(meta, Query::Update, pg, shape, |w| {
            w.sql("UPDATE ");
            w.ident(meta.table);
            w.sql(" SET ");
            for (n, (i, arg)) in given.iter().enumerate() {
                w.sql(if n > 0 { ", " } else { "" });
                w.ident(field(meta, *i)?.column);
                w.sql(" = ");
                w.bind(arg.clone());
            }
            w.sql(" WHERE ");
            w.ident(meta.pk_field().column);
            w.sql(" = ");
            w.bind(key.clone());
            Ok(())
        })?;
        Ok(statement.execute(c)?)
    })
}

/// The primary keys of the rows a selection selects, in its order and window.
pub(crate) fn ids(conn: &mut Conn<'_>, meta: &ModelMeta, s: &Select) -> Result<Vec<i64>, Error> {
    on_engine!(conn, |c, pg| {
        let statement = statement(
            meta,
            Query::Ids,
            pg,
            |k| s.shape(k),
            |w| {
                w.sql("SELECT ");
                w.column(meta, meta.pk_field());
                w.from(meta);
                w.conditions(meta, s)?;
                w.order_and_window(meta, s)
            },
        )?;
        let keys: Vec<Key> = statement.load(c)?;
        Ok(keys.into_iter().map(|k| k.0).collect())
    })
}

/// The number of rows a selection's conditions match (its ordering and window are ignored).
pub(crate) fn count(conn: &mut Conn<'_>, meta: &ModelMeta, s: &Select) -> Result<i64, Error> {
    on_engine!(conn, |c, pg| {
        // Keyed by the whole shape (ordering and window included) but written without them.
        let statement = statement(
            meta,
            Query::Count,
            pg,
            |k| s.shape(k),
            |w| {
                w.sql("SELECT COUNT(*)");
                w.from(meta);
                w.conditions(meta, s)
            },
        )?;
        let count: Key = statement.get_result(c)?;
        Ok(count.0)
    })
}

/// `ids` as arguments of `sql`'s type, those out of its range left out.
fn keys(sql: crate::kind::SqlType, ids: &[i64]) -> Vec<Arg<'static>> {
    ids.iter().filter_map(|&id| Arg::key(sql, id)).collect()
}

/// Deletes the rows of `meta` with these primary keys; the number deleted.
pub(crate) fn delete(conn: &mut Conn<'_>, meta: &ModelMeta, ids: &[i64]) -> Result<usize, Error> {
    let pk = meta.pk_field();
    where_in(
        conn,
        meta,
        Query::Delete,
        meta.pk,
        &keys(pk.sql_type, ids),
        |w| {
            w.sql("DELETE FROM ");
            w.ident(meta.table);
        },
    )
}

/// Sets the nullable foreign key `index` of `meta` to NULL where it holds one of `ids`.
pub(crate) fn nullify(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    ids: &[i64],
) -> Result<usize, Error> {
    let field = field(meta, index)?;
    if field.fk.is_none() || !field.nullable {
        return Err(Error::Internal("not a nullable foreign key".into()));
    }
    where_in(
        conn,
        meta,
        Query::Nullify,
        index,
        &keys(field.sql_type, ids),
        |w| {
            w.sql("UPDATE ");
            w.ident(meta.table);
            w.sql(" SET ");
            w.ident(field.column);
            w.sql(" = NULL");
        },
    )
}

/// Runs `head` followed by ` WHERE <field index> IN <keys>`; the number of rows changed.
fn where_in(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    query: Query,
    index: usize,
    keys: &[Arg<'static>],
    head: impl Fn(&mut Writer<'_>),
) -> Result<usize, Error> {
    if keys.is_empty() {
        return Ok(0);
    }
    let field = field(meta, index)?;
    on_engine!(conn, |c, pg| {
        let shape = |k: &mut Vec<usize>| k.extend([index, if pg { 0 } else { keys.len() }]);
        let statement = statement(meta, query, pg, shape, |w| {
            head(w);
            w.sql(" WHERE ");
            w.column(meta, field);
            w.bind_all(field.sql_type, keys.to_vec(), false)
        })?;
        Ok(statement.execute(c)?)
    })
}

#[cfg(test)]
mod tests;
