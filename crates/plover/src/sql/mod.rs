//! Every statement Plover runs for a model, built at run time from the model's metadata (its
//! table, columns and their types) and run by diesel on SQLite or PostgreSQL: the derive only
//! says how a row is read into the struct ([`FromRow`]) and which fields a write gives.
//!
//! Values are always bound; identifiers come only from metadata. The text of each statement is
//! kept per shape in the model's cache (`db::sql_text`), so a request of a known shape only
//! collects its arguments, and diesel keeps one prepared statement per text and connection.

pub(crate) mod arg;
pub(crate) mod cascade;
pub(crate) mod column;
mod lateral;
mod related_keys;
pub(crate) mod search;
mod statement;
mod writer;

use std::cell::RefCell;

use diesel::connection::DefaultLoadingMode;
use diesel::RunQueryDsl;

use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::Select;

pub use arg::Arg;
pub use column::{Cells, Column, FromRow};
use column::{Key, KeyText, Loaded, Snapshot};
use statement::{Statement, Text};
use writer::Writer;

/// The queries, the first number of a shape key.
#[derive(Clone, Copy)]
enum Query {
    Rows,
    Ids,
    Count,
    #[cfg(feature = "postgres")]
    Estimate,
    ByPk,
    ByField,
    ByPkStamped,
    ByFieldStamped,
    Insert,
    InsertMany,
    RowsLocked,
    Update,
    Delete,
    Nullify,
    Aggregate,
    Snapshot,
    CreatedEvents,
    AsOf,
    #[cfg(feature = "admin")]
    Facet,
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
/// `write`. With the arguments known in advance (`known`), a kept text needs no writing at all
/// (but in debug builds, which check that `write` gives the same). Not generic, so that a
/// model's code holds none of it.
fn statement<'a>(
    meta: &ModelMeta,
    query: Query,
    pg: bool,
    shape: &dyn Fn(&mut Vec<usize>),
    write: &dyn Fn(&mut Writer<'a>) -> Result<(), Error>,
    known: Option<Vec<Arg<'a>>>,
) -> Result<Statement<'a>, Error> {
    KEY.with_borrow_mut(|key| {
        key.clear();
        key.extend([query as usize, usize::from(pg)]);
        shape(key);
        if let Some(pieces) = meta.cache.get(key) {
            if let (Some(args), false) = (known, cfg!(debug_assertions)) {
                return Ok(Statement::new(Text::Kept(pieces), args, true));
            }
            let mut w = Writer::new(pg, cfg!(debug_assertions));
            write(&mut w)?;
            let args = std::mem::take(&mut w.args);
            #[cfg(debug_assertions)]
            if w.into_text() != Some(pieces.join("\0")) {
                return Err(Error::Internal(format!(
                    "the kept SQL text of a {} query is not its text",
                    meta.name
                )));
            }
            return Ok(Statement::new(Text::Kept(pieces), args, true));
        }
        let mut w = Writer::new(pg, true);
        write(&mut w)?;
        let (args, prepared) = (std::mem::take(&mut w.args), w.prepared);
        let text = w.into_text().unwrap_or_default();
        let kept = if prepared {
            meta.cache.keep(key, text)
        } else {
            Err(text)
        };
        Ok(match kept {
            Ok(pieces) => Statement::new(Text::Kept(pieces), args, true),
            Err(text) => Statement::new(Text::Owned(text), args, false),
        })
    })
}

/// The most rows a load reserves room for before the first one arrives.
const ROWS_RESERVED: i64 = 1000;

/// The rows of a statement read as `T`, in a vector with room for `limit` of them (up to
/// 1,000): the rows of a page are made in place, never moved by the vector's growth. The only
/// code generic over the model. A query whose `LIMIT` is `limit` (the `select` form) is not
/// stepped again after its `limit`th row: that step could only find that no row follows, and
/// on SQLite it ends the statement for more than the reset diesel gives it when it is dropped
/// (a read by primary key: about 400 instructions of 10,000).
macro_rules! collect {
    (select $c:expr, $statement:expr, $limit:expr) => {{
        let limit: Option<i64> = $limit;
        collect!($c, $statement, limit, limit)
    }};
    ($c:expr, $statement:expr, $limit:expr) => {
        collect!($c, $statement, $limit, None::<i64>)
    };
    ($c:expr, $statement:expr, $limit:expr, $last:expr) => {{
        let room = $limit.map_or(0, |limit: i64| limit.clamp(0, ROWS_RESERVED));
        let last = $last.and_then(|last: i64| usize::try_from(last).ok());
        let mut out = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
        for row in $statement.load_iter::<Loaded<T>, DefaultLoadingMode>($c)? {
            out.push(row?.0);
            if Some(out.len()) == last {
                break;
            }
        }
        Ok::<Vec<T>, Error>(out)
    }};
}

/// Marker types of the statements of fixed text, with the model's type.
struct Page;
struct ByPk;

/// The rows of `meta` (read as `T`) that a selection selects, in its order and window.
pub(crate) fn rows<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &Select,
) -> Result<Vec<T>, Error> {
    // Every row in key order, a window of them: one text per model, which diesel finds by the
    // statement's type.
    let page = s.pk_window(meta.pk).is_some();
    on_engine!(conn, |c, pg| {
        let statement = rows_statement(meta, s, pg)?;
        if page {
            collect!(select c, statement.fixed::<(T, Page)>(), s.limit)
        } else {
            column::selecting(
                s.columns.as_ref(),
                || collect!(select c, statement, s.limit),
            )
        }
    })
}

fn rows_statement<'a>(meta: &ModelMeta, s: &'a Select, pg: bool) -> Result<Statement<'a>, Error> {
    statement(
        meta,
        Query::Rows,
        pg,
        &|k| rows_shape(meta, s, pg, k),
        &|w| write_rows(w, meta, s),
        None,
    )
}

/// `SELECT` of the rows of a selection, in its order and window.
fn write_rows<'a>(w: &mut Writer<'a>, meta: &ModelMeta, s: &'a Select) -> Result<(), Error> {
    w.select_fields(meta, s.columns.as_deref());
    write_from(w, meta, s)
}

/// What follows the selected columns of a selection's rows: the table, the joins of its
/// ordering, its conditions, its order and its window; on PostgreSQL, the page of an ordering
/// through a required foreign key reads each related row's first rows ([`lateral`]).
fn write_from<'a>(w: &mut Writer<'a>, meta: &ModelMeta, s: &'a Select) -> Result<(), Error> {
    if lateral::applies(meta, s, w.pg) {
        return lateral::from_and_window(w, meta, s);
    }
    w.from(meta);
    w.order_joins(meta, s)?;
    w.conditions(meta, s)?;
    w.order_and_window(meta, s)
}

/// The shape key of a statement that [`write_from`] ends: the selection's shape, and whether
/// it reads through a lateral join, which its window decides (a window's size is no part of
/// a shape).
fn rows_shape(meta: &ModelMeta, s: &Select, pg: bool, key: &mut Vec<usize>) {
    s.shape(key);
    key.push(usize::from(lateral::applies(meta, s, pg)));
}

/// The rows of `meta` (read as `T`) that a selection selects from one version of a row: the
/// JSON of its columns that the outbox kept (docs/changes.md) stands in for the table, so that
/// the selection's conditions (a feed's filters, a resource's scope) are judged on the row as
/// it was. Joins to other tables read them as they are now.
pub(crate) fn rows_as_of<'s, T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
    row: &str,
) -> Result<Vec<T>, Error> {
    let write = |w: &mut Writer<'s>| {
        outbox::with_row(w, meta, row)?;
        write_rows(w, meta, s)
    };
    on_engine!(conn, |c, pg| {
        let shape = |k: &mut Vec<usize>| rows_shape(meta, s, pg, k);
        let statement = statement(meta, Query::AsOf, pg, &shape, &write, None)?;
        column::selecting(
            s.columns.as_ref(),
            || collect!(select c, statement, s.limit),
        )
    })
}

/// The SQL text of the statement that loads a selection of `meta` (placeholders as `?`),
/// written anew each time: for benchmarks of the writing and tests of the text.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn rows_text(meta: &ModelMeta, s: &Select, pg: bool) -> Result<String, Error> {
    let mut w = Writer::new(pg, true);
    write_rows(&mut w, meta, s)?;
    Ok(w.into_text()
        .unwrap_or_default()
        .replace(writer::PLACEHOLDER, "?"))
}

/// The row of `meta` with primary key `pk`, if any.
pub(crate) fn by_pk<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
) -> Result<Option<T>, Error> {
    by_pk_as(conn, meta, pk, Query::ByPk)
}

/// [`by_pk`], with the permissions stamp read in the same statement ([`stamp`]).
pub(crate) fn by_pk_stamped<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
) -> Result<Option<(T, i64)>, Error> {
    let row = by_pk_as::<Stamped<T>>(conn, meta, pk, Query::ByPkStamped)?;
    Ok(row.map(|Stamped(row, stamp)| (row, stamp)))
}

fn by_pk_as<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
    query: Query,
) -> Result<Option<T>, Error> {
    let Some(key) = Arg::key(meta.pk_field().sql_type, pk) else {
        return Ok(None);
    };
    on_engine!(conn, |c, pg| {
        let statement = by_field_statement(meta, query, meta.pk, &key, pg)?;
        let rows = collect!(select c, statement.fixed::<(T, ByPk)>(), Some(1))?;
        Ok(rows.into_iter().next())
    })
}

/// The row of `meta` whose field `index` equals `value`, if any (the first one: call it on
/// unique fields).
pub(crate) fn by_field<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    value: &Arg<'_>,
) -> Result<Option<T>, Error> {
    by_field_as(conn, meta, index, value, Query::ByField)
}

/// [`by_field`], with the permissions stamp read in the same statement ([`stamp`]).
pub(crate) fn by_field_stamped<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    value: &Arg<'_>,
) -> Result<Option<(T, i64)>, Error> {
    let row = by_field_as::<Stamped<T>>(conn, meta, index, value, Query::ByFieldStamped)?;
    Ok(row.map(|Stamped(row, stamp)| (row, stamp)))
}

fn by_field_as<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    value: &Arg<'_>,
    query: Query,
) -> Result<Option<T>, Error> {
    on_engine!(conn, |c, pg| {
        let statement = by_field_statement(meta, query, index, value, pg)?;
        let rows = collect!(select c, statement, Some(1))?;
        Ok(rows.into_iter().next())
    })
}

fn by_field_statement<'a>(
    meta: &ModelMeta,
    query: Query,
    index: usize,
    value: &Arg<'a>,
    pg: bool,
) -> Result<Statement<'a>, Error> {
    let field = meta.field_at(index)?;
    let stamped = matches!(query, Query::ByPkStamped | Query::ByFieldStamped);
    let write = |w: &mut Writer<'a>| {
        w.select_fields(meta, None);
        if stamped {
            stamp::select(w);
        }
        w.from(meta);
        w.sql(" WHERE ");
        w.column(meta, field);
        w.sql(" = ");
        w.bind(value.clone());
        w.sql(" LIMIT 1");
        Ok(())
    };
    let known = Some(vec![value.clone()]);
    statement(meta, query, pg, &|k| k.push(index), &write, known)
}

/// Inserts a row of `meta` with the `given` fields (the others take their SQL defaults) and
/// reads it back (`INSERT ... RETURNING`), with its event for the outbox when `meta` records
/// its changes (docs/changes.md): on PostgreSQL the first of a transaction written by the
/// insert's own statement ([`outbox::inline`]); the others inside a transaction queued to read
/// the row's JSON at the commit ([`outbox::created_later`]); outside one, queued with the JSON
/// the insert returns. `pk` reads the new row's primary key (its event names it).
pub(crate) fn insert<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    given: &[(usize, Arg<'_>)],
    pk: fn(&T) -> i64,
) -> Result<T, Error> {
    let event = outbox::inline(conn, meta);
    let later = outbox::later(conn, meta, event.is_some());
    let records = meta.records_changes() && !later;
    let Snapshot(row, after) = on_engine!(conn, |c, pg| {
        let statement = insert_statement(meta, given, pg, records, event.as_ref())?;
        // The insert is done by the first step; the one row it returns is all there is.
        let mut rows = statement.load_iter::<Snapshot<T>, DefaultLoadingMode>(c)?;
        rows.next()
            .ok_or_else(|| Error::Internal("an insert returned no row".into()))?
            .map_err(|e| {
                Error::from(e).explain_missing_table(
                    "the events table",
                    crate::db::pending::TABLE,
                    "plover::changes::ChangeEvent::meta()",
                )
            })
    })?;
    match event {
        Some(_) => crate::db::pending::written(conn),
        None if later => outbox::created_later(conn, meta, pk(&row))?,
        None => outbox::created(conn, meta, pk(&row), after)?,
    }
    stamp::touched(conn, meta)?;
    Ok(row)
}

/// `INSERT ... RETURNING` every field, and the row's JSON after them when the outbox
/// records it (`records`); with `event`, the insert in a `WITH` that also inserts the row's
/// event ([`outbox::insert_event`]), every field selected from it.
fn insert_statement<'a>(
    meta: &ModelMeta,
    given: &[(usize, Arg<'a>)],
    pg: bool,
    records: bool,
    event: Option<&outbox::Inline>,
) -> Result<Statement<'a>, Error> {
    // 0: the row; 1: and its JSON; 2: and its event; 3: and its event with a notification.
    let form = match event {
        Some(event) => 2 + usize::from(event.notify),
        None => usize::from(records),
    };
    let shape = |k: &mut Vec<usize>| {
        k.push(form);
        k.extend(given.iter().map(|(i, _)| *i));
    };
    let fields = |w: &mut Writer<'a>| {
        for (n, field) in meta.fields.iter().enumerate() {
            w.sql(if n > 0 { ", " } else { "" });
            w.ident(field.column);
        }
    };
    // The values given, then the event's, are the only arguments, in order.
    let known = given.iter().map(|(_, arg)| arg.clone());
    let known = known.chain(event.into_iter().flat_map(|e| e.args.iter().cloned()));
    statement(
        meta,
        Query::Insert,
        pg,
        &shape,
        &|w| {
            if event.is_some() {
                w.sql("WITH \"plover_new\" AS (");
            }
            w.sql("INSERT INTO ");
            w.ident(meta.table);
            if given.is_empty() {
                w.sql(" DEFAULT VALUES");
            } else {
                w.sql(" (");
                for (n, (i, _)) in given.iter().enumerate() {
                    w.sql(if n > 0 { ", " } else { "" });
                    w.ident(meta.field_at(*i)?.column);
                }
                w.sql(") VALUES (");
                for (n, (_, arg)) in given.iter().enumerate() {
                    w.sql(if n > 0 { ", " } else { "" });
                    w.bind(arg.clone());
                }
                w.sql(")");
            }
            if let Some(event) = event {
                w.sql(" RETURNING *), ");
                outbox::insert_event(w, meta, event)?;
                w.sql("SELECT ");
                fields(w);
                w.sql(" FROM \"plover_new\"");
                return Ok(());
            }
            w.sql(" RETURNING ");
            fields(w);
            if records {
                w.sql(", ");
                outbox::json(w, meta)?;
            }
            Ok(())
        },
        Some(known.collect()),
    )
}

/// Rows a statement of [`insert_many`] inserts: a hundred rows of ten fields bind a thousand
/// values, well under what an SQLite statement binds.
const INSERT_ROWS: usize = 100;

/// Inserts rows of `meta` that give the fields `fields`, each row one argument per field in
/// that order (the other fields take their SQL defaults), [`INSERT_ROWS`] rows a statement;
/// the number of rows inserted.
pub(crate) fn insert_many<'a>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    fields: &[usize],
    rows: &[Vec<Arg<'a>>],
) -> Result<usize, Error> {
    if rows.iter().any(|row| row.len() != fields.len()) {
        return Err(Error::Internal(format!(
            "an insert into {} gives a row with another number of values than fields",
            meta.table
        )));
    }
    let mut inserted = 0;
    for chunk in rows.chunks(INSERT_ROWS) {
        let shape = |k: &mut Vec<usize>| {
            k.push(chunk.len());
            k.extend_from_slice(fields);
        };
        let write = |w: &mut Writer<'a>| {
            w.sql("INSERT INTO ");
            w.ident(meta.table);
            w.sql(" (");
            for (n, &i) in fields.iter().enumerate() {
                w.sql(if n > 0 { ", " } else { "" });
                w.ident(meta.field_at(i)?.column);
            }
            w.sql(") VALUES ");
            for (r, row) in chunk.iter().enumerate() {
                w.sql(if r > 0 { ", (" } else { "(" });
                for (n, arg) in row.iter().enumerate() {
                    w.sql(if n > 0 { ", " } else { "" });
                    w.bind(arg.clone());
                }
                w.sql(")");
            }
            Ok(())
        };
        inserted += on_engine!(conn, |c, pg| {
            statement(meta, Query::InsertMany, pg, &shape, &write, None)?.execute(c)?
        });
    }
    stamp::touched(conn, meta)?;
    Ok(inserted)
}

/// The rows of `meta` (read as `T`) with these primary keys, in no particular order, locked
/// until the end of the transaction on PostgreSQL (`FOR UPDATE`): what a write reads of the
/// rows it is about to change or delete, so that no other write changes them meanwhile. On
/// SQLite a write transaction holds the whole database already.
pub(crate) fn rows_locked<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    ids: &[i64],
) -> Result<Vec<T>, Error> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        out.extend(locked(conn, meta, &Select::ids_in(meta.pk, chunk))?);
    }
    Ok(out)
}

/// The rows of a selection, locked for the rest of the transaction on PostgreSQL
/// (`FOR UPDATE`; SQLite's write transaction holds the whole database already). The
/// selection must not order through a join.
pub(crate) fn locked<T: FromRow>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &Select,
) -> Result<Vec<T>, Error> {
    on_engine!(conn, |c, pg| {
        let statement = locked_statement(meta, s, pg)?;
        column::selecting(s.columns.as_ref(), || collect!(c, statement, s.limit))
    })
}

fn locked_statement<'a>(meta: &ModelMeta, s: &'a Select, pg: bool) -> Result<Statement<'a>, Error> {
    let write = |w: &mut Writer<'a>| {
        write_rows(w, meta, s)?;
        w.sql(if pg { " FOR UPDATE" } else { "" });
        Ok(())
    };
    let shape = |k: &mut Vec<usize>| rows_shape(meta, s, pg, k);
    statement(meta, Query::RowsLocked, pg, &shape, &write, None)
}

/// Sets the `given` fields of the row of `meta` with key `pk`; the number of rows changed
/// (nothing given: no statement, 0).
pub(crate) fn update<'a>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    pk: i64,
    given: &[(usize, Arg<'a>)],
) -> Result<usize, Error> {
    let key = Arg::key(meta.pk_field().sql_type, pk).ok_or(Error::NotFound)?;
    if given.is_empty() {
        return Ok(0);
    }
    let records = meta.records_changes();
    let shape = |k: &mut Vec<usize>| {
        k.push(usize::from(records));
        k.extend(given.iter().map(|(i, _)| *i));
    };
    let write = |w: &mut Writer<'a>| {
        w.sql("UPDATE ");
        w.ident(meta.table);
        w.sql(" SET ");
        for (n, (i, arg)) in given.iter().enumerate() {
            w.sql(if n > 0 { ", " } else { "" });
            w.ident(meta.field_at(*i)?.column);
            w.sql(" = ");
            w.bind(arg.clone());
        }
        w.sql(" WHERE ");
        w.ident(meta.pk_field().column);
        w.sql(" = ");
        w.bind(key.clone());
        if records {
            outbox::returning(w, meta)?;
        }
        Ok(())
    };
    let before = outbox::before(conn, meta, meta.pk, std::slice::from_ref(&key))?;
    let (changed, after) = run_write(conn, records, &|pg| {
        statement(meta, Query::Update, pg, &shape, &write, None)
    })?;
    outbox::updated(conn, meta, before, after)?;
    stamp::touched(conn, meta)?;
    Ok(changed)
}

/// Runs the write statement that `statement` makes for an engine (PostgreSQL or not): the
/// number of rows it wrote, and with `returning` (the statement ends in
/// [`outbox::returning`]) each row's key and JSON.
#[allow(clippy::type_complexity)]
fn run_write<'a>(
    conn: &mut Conn<'_>,
    returning: bool,
    statement: &dyn Fn(bool) -> Result<Statement<'a>, Error>,
) -> Result<(usize, Vec<(i64, String)>), Error> {
    on_engine!(conn, |c, pg| {
        let statement = statement(pg)?;
        if !returning {
            return Ok((statement.execute(c)?, Vec::new()));
        }
        let rows: Vec<KeyText> = statement.load(c)?;
        Ok((rows.len(), rows.into_iter().map(|r| (r.0, r.1)).collect()))
    })
}

/// The primary keys of the rows a selection selects, in its order and window.
pub(crate) fn ids<'s>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
) -> Result<Vec<i64>, Error> {
    let write = |w: &mut Writer<'s>| {
        w.sql("SELECT ");
        w.column(meta, meta.pk_field());
        write_from(w, meta, s)
    };
    let keys: Vec<Key> = on_engine!(conn, |c, pg| {
        let shape = |k: &mut Vec<usize>| rows_shape(meta, s, pg, k);
        statement(meta, Query::Ids, pg, &shape, &write, None)?.load(c)?
    });
    Ok(keys.into_iter().map(|k| k.0).collect())
}

/// The PostgreSQL planner's estimate of the number of rows a selection's conditions match
/// (`EXPLAIN`, nothing run); the exact number on SQLite.
#[cfg_attr(not(feature = "postgres"), allow(clippy::needless_lifetimes))]
pub(crate) fn estimate<'s>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
) -> Result<i64, Error> {
    #[cfg(feature = "postgres")]
    if let Conn::Pg(c) = conn {
        let write = |w: &mut Writer<'s>| {
            w.sql("EXPLAIN (FORMAT JSON) SELECT 1");
            w.from(meta);
            w.conditions(meta, s)
        };
        let statement = statement(meta, Query::Estimate, true, &|k| s.shape(k), &write, None)?;
        let plan: column::Plan = statement.get_result(&mut **c)?;
        return Ok(plan.0);
    }
    count(conn, meta, s)
}

/// The number of rows a selection's conditions match (its ordering and window are ignored).
pub(crate) fn count(conn: &mut Conn<'_>, meta: &ModelMeta, s: &Select) -> Result<i64, Error> {
    counted(conn, meta, s, None)
}

/// The number of rows a selection's conditions match, counted up to `bound` and no further:
/// `SELECT COUNT(*) FROM (SELECT 1 ... LIMIT ?)` reads at most `bound` rows, so the answer is
/// exact below `bound`, and `bound` itself means "at least that many".
pub(crate) fn count_up_to(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &Select,
    bound: i64,
) -> Result<i64, Error> {
    counted(conn, meta, s, Some(bound.max(0)))
}

/// [`count`], bounded or not.
fn counted<'s>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
    bound: Option<i64>,
) -> Result<i64, Error> {
    // Keyed by the whole shape (ordering and window included) but written without them.
    let shape = |k: &mut Vec<usize>| {
        k.push(usize::from(bound.is_some()));
        s.shape(k);
    };
    let write = |w: &mut Writer<'s>| {
        if let Some(bound) = bound {
            w.sql("SELECT COUNT(*) FROM (SELECT 1 AS plover_one");
            w.from(meta);
            w.conditions(meta, s)?;
            w.sql(" LIMIT ");
            w.bind(Arg::I64(bound));
            w.sql(") AS plover_bounded");
            return Ok(());
        }
        w.sql("SELECT COUNT(*)");
        w.from(meta);
        w.conditions(meta, s)
    };
    let count: Key = on_engine!(conn, |c, pg| {
        statement(meta, Query::Count, pg, &shape, &write, None)?.get_result(c)?
    });
    Ok(count.0)
}

/// Keys bound per statement of [`delete`], [`nullify`] and [`referring`]: well under the values an
/// SQLite statement binds (32766), however many rows a delete reaches.
pub(crate) const CHUNK: usize = 1000;

/// The primary keys of the rows of `meta` whose field `index` holds one of `ids`.
pub(crate) fn referring(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    ids: &[i64],
) -> Result<Vec<i64>, Error> {
    let mut out = Vec::new();
    for chunk in ids.chunks(CHUNK) {
        out.extend(self::ids(conn, meta, &Select::ids_in(index, chunk))?);
    }
    Ok(out)
}

/// `ids` as arguments of `sql`'s type, those out of its range left out.
fn keys(sql: crate::value::kind::SqlType, ids: &[i64]) -> Vec<Arg<'static>> {
    ids.iter().filter_map(|&id| Arg::key(sql, id)).collect()
}

/// Deletes the rows of `meta` with these primary keys; the number deleted.
pub(crate) fn delete(conn: &mut Conn<'_>, meta: &ModelMeta, ids: &[i64]) -> Result<usize, Error> {
    let keys = keys(meta.pk_field().sql_type, ids);
    let records = meta.records_changes();
    outbox::settle(conn, meta)?;
    let (deleted, before) = where_in(conn, meta, Query::Delete, meta.pk, &keys, records, &|w| {
        w.sql("DELETE FROM ");
        w.ident(meta.table);
    })?;
    outbox::deleted(conn, meta, before)?;
    stamp::touched(conn, meta)?;
    Ok(deleted)
}

/// Sets the nullable foreign key `index` of `meta` to NULL where it holds one of `ids`.
pub(crate) fn nullify(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    ids: &[i64],
) -> Result<usize, Error> {
    let field = meta.field_at(index)?;
    if field.fk.is_none() || !field.nullable {
        return Err(Error::Internal("not a nullable foreign key".into()));
    }
    let keys = keys(field.sql_type, ids);
    let records = meta.records_changes();
    let before = outbox::before(conn, meta, index, &keys)?;
    let (changed, after) = where_in(conn, meta, Query::Nullify, index, &keys, records, &|w| {
        w.sql("UPDATE ");
        w.ident(meta.table);
        w.sql(" SET ");
        w.ident(field.column);
        w.sql(" = NULL");
    })?;
    outbox::updated(conn, meta, before, after)?;
    stamp::touched(conn, meta)?;
    Ok(changed)
}

/// Runs `head` followed by ` WHERE <field index> IN <keys>`, [`CHUNK`] keys a statement; the
/// number of rows written, and with `returning` each row's key and JSON
/// ([`outbox::returning`]: after an update, before a delete).
fn where_in(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    query: Query,
    index: usize,
    keys: &[Arg<'static>],
    returning: bool,
    head: &dyn Fn(&mut Writer<'_>),
) -> Result<(usize, Vec<(i64, String)>), Error> {
    let field = meta.field_at(index)?;
    let (mut changed, mut rows) = (0, Vec::new());
    for keys in keys.chunks(CHUNK) {
        let write = |w: &mut Writer<'_>| {
            head(w);
            w.sql(" WHERE ");
            w.column(meta, field);
            key_in(w, field.sql_type, keys)?;
            if returning {
                outbox::returning(w, meta)?;
            }
            Ok(())
        };
        let (n, written) = run_write(conn, returning, &|pg| {
            let shape = |k: &mut Vec<usize>| {
                k.extend([index, keys_shape(pg, keys.len()), usize::from(returning)]);
            };
            statement(meta, query, pg, &shape, &write, known(keys))
        })?;
        changed += n;
        rows.extend(written);
    }
    Ok((changed, rows))
}

/// ` = ?` for one key (a text SQLite keeps prepared), else ` IN (...)` of `keys` (of type
/// `sql`; PostgreSQL: ` = ANY(?)`): what follows a column that must hold one of `keys`.
fn key_in(
    w: &mut Writer<'_>,
    sql: crate::value::kind::SqlType,
    keys: &[Arg<'static>],
) -> Result<(), Error> {
    if let [key] = keys {
        w.sql(" = ");
        w.bind(key.clone());
        return Ok(());
    }
    w.bind_all(sql, keys.to_vec(), false)
}

/// The part of a shape key that tells the texts [`key_in`] writes for `n` keys apart: one
/// key, a PostgreSQL array, or an SQLite `IN` list of `n`.
fn keys_shape(pg: bool, n: usize) -> usize {
    match (n, pg) {
        (1, _) => 1,
        (_, true) => 0,
        (n, false) => n,
    }
}

/// The arguments of a statement whose only ones are `keys`, known in advance when
/// [`key_in`] binds them as they are (one key; a PostgreSQL array is one argument of all).
fn known(keys: &[Arg<'static>]) -> Option<Vec<Arg<'static>>> {
    (keys.len() == 1).then(|| keys.to_vec())
}

mod aggregate;
pub(crate) use aggregate::aggregate;
pub(crate) use related_keys::read_related_keys;
#[cfg(feature = "admin")]
mod facet;
mod outbox;
pub(crate) mod stamp;
#[cfg(feature = "admin")]
pub(crate) use facet::{facet_counts, FacetRow, FacetTerm};
use stamp::Stamped;

#[cfg(test)]
mod tests;
