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
//! The events wait in `db::pending` for the transaction's commit, which writes them last;
//! but on PostgreSQL the first insert of a transaction writes its created row's event in its
//! own statement ([`inline`]), so that a single create costs no statement more. The rows
//! created later in a transaction return no JSON: their events read it from the table at the
//! commit, a statement for many rows ([`created_later`]).

use diesel::RunQueryDsl;

use super::column::KeyText;
use super::{key_in, keys_shape, known, statement, Query, Writer, CHUNK};
use crate::db::pending::{self, Event, Snapshots};
use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::sql::Arg;
use crate::value::kind::SqlType;

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

/// The JSON of the rows of `meta` whose field `index` holds one of `keys`, by key, when
/// `meta` records its changes (else nothing): the rows as they are before an update.
pub(crate) fn before(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    keys: &[Arg<'static>],
) -> Result<Vec<(i64, String)>, Error> {
    if !meta.records_changes() {
        return Ok(Vec::new());
    }
    settle(conn, meta)?;
    snapshots(conn, meta, index, keys)
}

/// Before a write changes or deletes rows of `meta`: the events of the rows of `meta` created
/// earlier in the transaction read their JSON now ([`created_later`]), as the rows are before
/// the write.
pub(crate) fn settle(conn: &mut Conn<'_>, meta: &ModelMeta) -> Result<(), Error> {
    if !meta.records_changes() {
        return Ok(());
    }
    pending::settle(conn, meta)
}

/// ` RETURNING <key>, <JSON>`: the end of an update or delete of `meta` whose rows the outbox
/// records, so that the write itself gives each row's JSON (after an update, before a
/// delete), read as [`KeyText`](super::column::KeyText).
pub(super) fn returning(w: &mut Writer<'_>, meta: &ModelMeta) -> Result<(), Error> {
    w.sql(" RETURNING ");
    w.column(meta, meta.pk_field());
    w.sql(", ");
    json(w, meta)
}

/// The JSON object of a row of `meta` keyed by column, as the database writes it:
/// `row_to_json("table")::text` on PostgreSQL, [`json_object`] on SQLite. A select of the
/// table or a write's `RETURNING` takes it.
pub(super) fn json(w: &mut Writer<'_>, meta: &ModelMeta) -> Result<(), Error> {
    if w.pg {
        w.sql("row_to_json(");
        w.ident(meta.table);
        w.sql(")::text");
        return Ok(());
    }
    json_object(w, meta)
}

/// The event of a row of `meta` that an insert writes in its own statement (PostgreSQL):
/// its values, bound after the row's, and whether the statement notifies the other processes
/// ([`pending::notifies`]).
pub(super) struct Inline {
    pub(super) args: Vec<Arg<'static>>,
    pub(super) notify: bool,
}

/// PostgreSQL: the event of a row of `meta` about to be created on `conn`, for the insert to
/// write itself ([`insert_event`]), when `meta` records its changes and the transaction has no
/// event yet. Otherwise `None`: the insert returns the row's JSON and [`created`] queues the
/// event for the commit. Each statement is a round trip to the server, and one more per
/// single create was most of what the outbox cost it; but the events of a bulk write are
/// cheaper inserted together at the commit than each by its row's statement (measured:
/// docs/performance.md), so only a transaction's first event is written this way.
pub(super) fn inline(conn: &mut Conn<'_>, meta: &ModelMeta) -> Option<Inline> {
    if !(conn.engine() == crate::db::Engine::Postgres
        && meta.records_changes()
        && pending::none_yet())
    {
        return None;
    }
    let id = |id: Option<i64>| id.map_or(Arg::Null(SqlType::BigInt), Arg::I64);
    let (user, key) = pending::author().ids();
    let args = vec![
        Arg::DateTime(pending::time(conn)),
        Arg::Text(meta.name.into()),
        Arg::Text(changed_fields(meta, None, None).into()),
        id(user),
        id(key),
    ];
    Some(Inline {
        args,
        notify: pending::notifies(),
    })
}

/// `"plover_new_event" AS (INSERT INTO plover_event ... SELECT ... FROM "plover_new") `: the
/// part of an insert's `WITH` that writes the created row's event (PostgreSQL), from the row
/// the `WITH`'s `"plover_new"` inserted (`RETURNING *`), its JSON made there as
/// [`json`] makes it; with a notification when `event.notify`.
pub(super) fn insert_event(
    w: &mut Writer<'_>,
    meta: &ModelMeta,
    event: &Inline,
) -> Result<(), Error> {
    w.sql("\"plover_new_event\" AS (INSERT INTO ");
    w.ident(pending::TABLE);
    w.sql(" (created, model, object_id, op, fields, user_id, api_key_id, row_after) SELECT ");
    let [created, model, fields, user, key] = event.args.as_slice() else {
        return Err(Error::Internal("an event without its five values".into()));
    };
    w.bind(created.clone());
    w.sql(", ");
    w.bind(model.clone());
    w.sql(", ");
    w.ident(meta.pk_field().column);
    w.sql(", ");
    w.literal(Op::Created.as_str());
    w.sql(", ");
    w.bind(fields.clone());
    w.sql(", ");
    w.bind(user.clone());
    w.sql(", ");
    w.bind(key.clone());
    w.sql(", row_to_json(\"plover_new\")::text FROM \"plover_new\"");
    if event.notify {
        // The channel is named as the table.
        w.sql(", pg_notify(");
        w.literal(pending::TABLE);
        w.sql(", '') AS n");
    }
    w.sql(") ");
    Ok(())
}

/// Records the creation of row `id` of `meta`, whose JSON is `after` (an insert's `RETURNING`
/// gives it for a model that records its changes, and nothing for another).
pub(crate) fn created(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    id: i64,
    after: Option<String>,
) -> Result<(), Error> {
    let Some(after) = after else {
        return Ok(());
    };
    let row = Row {
        id,
        before: None,
        after: Some(after),
    };
    record(conn, meta, Op::Created, vec![row])
}

/// Whether the insert of a row of `meta` on `conn` leaves its event's JSON to be read at the
/// commit ([`created_later`]): `meta` records its changes, a transaction is open (so that no
/// other writer can change the row before it is read: on SQLite none writes meanwhile, on
/// PostgreSQL none sees the row), and the insert does not write its event itself
/// ([`inline`]: `inlined`).
pub(super) fn later(conn: &mut Conn<'_>, meta: &ModelMeta, inlined: bool) -> bool {
    !inlined && meta.records_changes() && conn.in_transaction()
}

/// Records the creation of row `id` of `meta` in the open transaction, its JSON to be read
/// from the table when the event is written: with the events of the rows created after it,
/// by one statement at the commit ([`Snapshots::insert`]), so that a bulk create's rows are
/// not sent back and forth as JSON. A later update or delete of `meta` in the transaction reads
/// it before it writes ([`settle`]).
pub(crate) fn created_later(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    id: i64,
) -> Result<(), Error> {
    let event = Event {
        created: pending::time(conn),
        model: meta.name,
        object_id: id,
        op: Op::Created.as_str(),
        fields: changed_fields(meta, None, None),
        author: pending::author(),
        before: None,
        after: None,
        later: Some(meta),
    };
    pending::push(conn, vec![event])
}

impl Snapshots for ModelMeta {
    /// `INSERT INTO plover_event (...) SELECT ..., <JSON> FROM "table" WHERE <key> IN <ids>
    /// ORDER BY <key>`: the events of the rows created with keys `ids`, in key order (their
    /// order of creation), their JSON made from the table as [`json`] makes it.
    fn insert(&self, conn: &mut Conn<'_>, events: &[Event], notify: bool) -> Result<(), Error> {
        let meta = self;
        let Some(first) = events.first() else {
            return Ok(());
        };
        let pk = meta.pk_field();
        let (user, key) = first.author.ids();
        let id = |id: Option<i64>| id.map_or(Arg::Null(SqlType::BigInt), Arg::I64);
        // PostgreSQL binds the keys one by one; SQLite takes them as one JSON array.
        let keys: Vec<Arg<'static>> = match conn.engine() {
            crate::db::Engine::Sqlite => Vec::new(),
            _ => (events.iter())
                .filter_map(|e| Arg::key(pk.sql_type, e.object_id))
                .collect(),
        };
        let write = |w: &mut Writer<'_>| {
            w.sql("INSERT INTO ");
            w.ident(pending::TABLE);
            w.sql(" (created, model, object_id, op, fields, user_id, api_key_id, row_after) ");
            w.sql("SELECT ");
            w.bind(Arg::DateTime(first.created));
            w.sql(", ");
            w.bind(Arg::Text(meta.name.into()));
            w.sql(", ");
            w.column(meta, pk);
            w.sql(", ");
            w.literal(Op::Created.as_str());
            w.sql(", ");
            w.bind(Arg::Text(first.fields.clone().into()));
            w.sql(", ");
            w.bind(id(user));
            w.sql(", ");
            w.bind(id(key));
            w.sql(", ");
            json(w, meta)?;
            w.from(meta);
            if notify && w.pg {
                // The channel is named as the table.
                w.sql(", pg_notify(");
                w.literal(pending::TABLE);
                w.sql(", '') AS n");
            }
            w.sql(" WHERE ");
            w.column(meta, pk);
            if w.pg {
                key_in(w, pk.sql_type, &keys)?;
            } else {
                // One text for any number of keys: a JSON array of them.
                let ids: Vec<i64> = events.iter().map(|e| e.object_id).collect();
                w.in_json_array(false, &ids)?;
            }
            w.sql(" ORDER BY ");
            w.column(meta, pk);
            Ok(())
        };
        on_engine!(conn, |c, pg| {
            let keys = if pg { keys_shape(pg, keys.len()) } else { 0 };
            let shape = |k: &mut Vec<usize>| k.extend([usize::from(notify), keys]);
            statement(meta, Query::CreatedEvents, pg, &shape, &write, None)?.execute(c)
        })
        .map_err(|e| {
            Error::from(e).explain_missing_table(
                "the events table",
                pending::TABLE,
                "plover::changes::ChangeEvent::meta()",
            )
        })?;
        Ok(())
    }

    fn read(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Vec<(i64, String)>, Error> {
        let keys: Vec<Arg<'static>> = (ids.iter())
            .filter_map(|&id| Arg::key(self.pk_field().sql_type, id))
            .collect();
        snapshots(conn, self, self.pk, &keys)
    }
}

/// Records the change of the rows `before` of `meta` (their JSON before the write, from
/// [`before`]) into `after` (their JSON after it, from the write's [`returning`]), in key
/// order; a row missing from either is left out.
pub(crate) fn updated(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    mut before: Vec<(i64, String)>,
    mut after: Vec<(i64, String)>,
) -> Result<(), Error> {
    if before.is_empty() {
        return Ok(());
    }
    before.sort_unstable_by_key(|(id, _)| *id);
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

/// Records the deletion of the rows `before` of `meta` (their JSON before the write, from the
/// delete's [`returning`]), in key order.
pub(crate) fn deleted(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    mut before: Vec<(i64, String)>,
) -> Result<(), Error> {
    before.sort_unstable_by_key(|(id, _)| *id);
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
    let created = pending::time(conn);
    let author = pending::author();
    // Every field, for each row created or deleted: written once.
    let every = (op != Op::Updated).then(|| changed_fields(meta, None, None));
    let events = rows.into_iter().map(|row| Event {
        created,
        model: meta.name,
        object_id: row.id,
        op: op.as_str(),
        fields: match &every {
            Some(every) => every.clone(),
            None => changed_fields(meta, row.before.as_deref(), row.after.as_deref()),
        },
        author,
        before: row.before,
        after: row.after,
        later: None,
    });
    pending::push(conn, events.collect())
}

/// Columns a `json_object` call of SQLite takes at most (two arguments each; SQLite's limit
/// of arguments may be as low as 127).
const JSON_COLUMNS: usize = 60;

/// The JSON objects of the rows of `meta` whose field `index` holds one of `keys`, with their
/// primary keys, as the database writes them.
fn snapshots(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    index: usize,
    keys: &[Arg<'static>],
) -> Result<Vec<(i64, String)>, Error> {
    let field = meta.field_at(index)?;
    let mut out = Vec::with_capacity(keys.len());
    for keys in keys.chunks(CHUNK) {
        let write = |w: &mut Writer<'_>| {
            w.sql("SELECT ");
            w.column(meta, meta.pk_field());
            w.sql(", ");
            json(w, meta)?;
            w.from(meta);
            w.sql(" WHERE ");
            w.column(meta, field);
            key_in(w, field.sql_type, keys)
        };
        let rows: Vec<KeyText> = on_engine!(conn, |c, pg| {
            let shape = |k: &mut Vec<usize>| k.extend([index, keys_shape(pg, keys.len())]);
            statement(meta, Query::Snapshot, pg, &shape, &write, known(keys))?.load(c)?
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
            w.sql(if n > 0 { ", " } else { "" });
            w.literal(f.column);
            w.sql(", ");
            w.column(meta, meta.field_at(part * JSON_COLUMNS + n)?);
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
