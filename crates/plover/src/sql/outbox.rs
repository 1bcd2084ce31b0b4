//! The outbox (docs/changes.md): the one place where writes record their events. The row
//! writes of this module's parent ([`insert`](super::insert), [`update`](super::update),
//! [`delete`](super::delete), [`nullify`](super::nullify)) call it for a model that records
//! its changes, so that every write path (REST, the admin, `views::Query`, cascades) appends
//! one event per row it creates, changes or deletes, in its own transaction: an event exists
//! if and only if its write committed.
//!
//! An event keeps the row as the database holds it before and after the write (a JSON object
//! of its columns, made by the database itself: `json_object` on SQLite, `row_to_json` on
//! PostgreSQL), so that readers can judge later what a subscriber could see of it.
//!
//! The events wait in `db::pending` for the transaction's commit, which writes them last.

use diesel::RunQueryDsl;

use super::column::KeyText;
use super::writer::field;
use super::{statement, Query, Writer, CHUNK};
use crate::db::pending::{self, Event};
use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::sql::Arg;

/// What a write did to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Created,
    Updated,
    Deleted,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Created => "created",
            Op::Updated => "updated",
            Op::Deleted => "deleted",
        }
    }
}

/// One row's event before it is written: the row's key and its JSON before and after.
struct Row {
    id: i64,
    before: Option<String>,
    after: Option<String>,
}

/// The JSON of rows `ids` of `meta`, by key, when `meta` records its changes (else nothing).
pub(crate) fn before(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    ids: &[i64],
) -> Result<Vec<(i64, String)>, Error> {
    if !meta.records_changes() {
        return Ok(Vec::new());
    }
    snapshots(conn, meta, ids)
}

/// Records the creation of row `id` of `meta` (when it records its changes).
pub(crate) fn created(conn: &mut Conn<'_>, meta: &ModelMeta, id: i64) -> Result<(), Error> {
    if !meta.records_changes() {
        return Ok(());
    }
    let after = snapshots(conn, meta, &[id])?;
    let rows = after.into_iter().map(|(id, json)| Row {
        id,
        before: None,
        after: Some(json),
    });
    record(conn, meta, Op::Created, rows.collect())
}

/// Records the change of the rows `before` (their JSON before the write, from [`before`])
/// of `meta`, read again now.
pub(crate) fn updated(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    before: Vec<(i64, String)>,
) -> Result<(), Error> {
    if before.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = before.iter().map(|(id, _)| *id).collect();
    let mut after = snapshots(conn, meta, &ids)?;
    after.sort_unstable_by_key(|(id, _)| *id);
    let rows = before.into_iter().filter_map(|(id, json)| {
        let now = after.binary_search_by_key(&id, |(id, _)| *id).ok()?;
        Some(Row {
            id,
            before: Some(json),
            after: Some(std::mem::take(&mut after[now].1)),
        })
    });
    record(conn, meta, Op::Updated, rows.collect())
}

/// Records the deletion of the rows `before` (their JSON before the write) of `meta`.
pub(crate) fn deleted(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    before: Vec<(i64, String)>,
) -> Result<(), Error> {
    let rows = before.into_iter().map(|(id, json)| Row {
        id,
        before: Some(json),
        after: None,
    });
    record(conn, meta, Op::Deleted, rows.collect())
}

/// The names of the fields whose value differs between two JSON rows (keyed by column); every
/// field where one of them is missing (then neither is read).
fn changed_fields(meta: &ModelMeta, before: Option<&str>, after: Option<&str>) -> String {
    let parse = |json: &str| -> Option<serde_json::Map<String, serde_json::Value>> {
        serde_json::from_str(json).ok()
    };
    let both = before.zip(after).map(|(b, a)| (parse(b), parse(a)));
    let names: Vec<&str> = (meta.fields.iter())
        .filter(|f| match &both {
            Some((Some(b), Some(a))) => b.get(f.column) != a.get(f.column),
            _ => true,
        })
        .map(|f| f.name)
        .collect();
    serde_json::to_string(&names).unwrap_or_else(|_| "[]".into())
}

/// Queues the events of `rows` for the commit, as the current author's.
fn record(conn: &mut Conn<'_>, meta: &ModelMeta, op: Op, rows: Vec<Row>) -> Result<(), Error> {
    let created = crate::value::now();
    let author = pending::author();
    let events = rows.into_iter().map(|row| Event {
        created,
        model: meta.name,
        object_id: row.id,
        op: op.as_str(),
        fields: changed_fields(meta, row.before.as_deref(), row.after.as_deref()),
        author,
        before: row.before,
        after: row.after,
    });
    pending::push(conn, events.collect())
}

/// Columns a `json_object` call of SQLite takes at most (two arguments each; SQLite's limit
/// of arguments may be as low as 127).
const JSON_COLUMNS: usize = 60;

/// The JSON objects of the rows `ids` of `meta`, keyed by column, with their keys, as the
/// database writes them.
fn snapshots(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    ids: &[i64],
) -> Result<Vec<(i64, String)>, Error> {
    let pk = meta.pk_field();
    let keys: Vec<Arg<'static>> = ids
        .iter()
        .filter_map(|&id| Arg::key(pk.sql_type, id))
        .collect();
    let mut out = Vec::with_capacity(ids.len());
    for keys in keys.chunks(CHUNK) {
        // One row (a single write, each row of a bulk create) is `= ?`, whose statement is
        // kept prepared and needs no writing: SQLite prepares an `IN` list every time.
        let one = keys.len() == 1;
        let write = |w: &mut Writer<'_>| {
            w.sql("SELECT ");
            w.column(meta, pk);
            w.sql(", ");
            if w.pg {
                w.sql("row_to_json(");
                w.ident(meta.table);
                w.sql(")::text");
            } else {
                json_object(w, meta)?;
            }
            w.from(meta);
            w.sql(" WHERE ");
            w.column(meta, pk);
            if let [key] = keys {
                w.sql(" = ");
                w.bind(key.clone());
                return Ok(());
            }
            w.bind_all(pk.sql_type, keys.to_vec(), false)
        };
        let known = one.then(|| keys.to_vec());
        let rows: Vec<KeyText> = on_engine!(conn, |c, pg| {
            let shape = |k: &mut Vec<usize>| {
                k.push(match (one, pg) {
                    (true, _) => 1,
                    (false, true) => 0,
                    (false, false) => keys.len(),
                });
            };
            statement(meta, Query::Snapshot, pg, &shape, &write, known.clone())?.load(c)?
        });
        out.extend(rows.into_iter().map(|r| (r.0, r.1)));
    }
    Ok(out)
}

/// SQLite's JSON object of a row of `meta`: `json_object('col', "table"."col", ...)`, joined
/// with `json_patch` past [`JSON_COLUMNS`] columns.
fn json_object(w: &mut Writer<'_>, meta: &ModelMeta) -> Result<(), Error> {
    let parts = meta.fields.len().div_ceil(JSON_COLUMNS).max(1);
    for _ in 1..parts {
        w.sql("json_patch(");
    }
    for (part, fields) in meta.fields.chunks(JSON_COLUMNS).enumerate() {
        w.sql(if part > 0 {
            ", json_object("
        } else {
            "json_object("
        });
        for (n, f) in fields.iter().enumerate() {
            w.sql(if n > 0 { ", '" } else { "'" });
            w.sql(&f.column.replace('\'', "''"));
            w.sql("', ");
            w.column(meta, field(meta, part * JSON_COLUMNS + n)?);
        }
        w.sql(if part > 0 { "))" } else { ")" });
    }
    Ok(())
}

/// `WITH "table" AS (...) `: the one row `row` (a JSON object of the columns of a row of
/// `meta`, as [`snapshots`] writes it) in place of the table, for the statement that follows.
pub(super) fn with_row<'a>(w: &mut Writer<'a>, meta: &ModelMeta, row: &str) -> Result<(), Error> {
    w.sql("WITH ");
    if w.pg {
        w.ident(meta.table);
        w.sql(" AS (SELECT * FROM json_populate_record(NULL::");
        w.ident(meta.table);
        w.sql(", ");
        w.bind(Arg::Text(row.to_owned().into()));
        w.sql("::json)) ");
        return Ok(());
    }
    w.sql("\"plover_row\"(j) AS (SELECT ");
    w.bind(Arg::Text(row.to_owned().into()));
    w.sql("), ");
    w.ident(meta.table);
    w.sql(" AS (SELECT ");
    for (n, f) in meta.fields.iter().enumerate() {
        w.sql(if n > 0 { ", " } else { "" });
        w.sql("json_extract(j, '$.\"");
        w.sql(&f.column.replace('\'', "''").replace('"', "\\\""));
        w.sql("\"') AS ");
        w.ident(f.column);
    }
    w.sql(" FROM \"plover_row\") ");
    Ok(())
}
