//! The history of changes (docs/admin.md#history): every add, change and delete made in the
//! admin, and those of the REST resources that opt in ([`Resource::history`]), is recorded in
//! the table `plover_history` ([`HistoryEntry`]), in the same transaction as the write: who
//! made it, when (UTC), the object (its model's table, primary key and text) and, per field,
//! the value before and after. Values of private and write-only fields are never stored
//! ([`MASK`] instead), and a long value is cut at [`MAX_VALUE_CHARS`] characters.
//!
//! The table is a model like the application's own: `manage::Commands` counts it among the
//! application's models by itself (its schema, drift check and migrations come with theirs);
//! an application that creates its tables with `schema::create_tables` lists
//! [`HistoryEntry::meta`] among them.
//!
//! ```
//! use plover::prelude::*;
//! use plover::history::HistoryEntry;
//!
//! let sql = plover::schema::script(&[HistoryEntry::meta()], plover::db::Engine::Sqlite).unwrap();
//! assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"plover_history\""));
//! assert!(sql.contains("ON \"plover_history\" (\"object_table\", \"object_id\", \"id\")"));
//! ```
//!
//! [`Resource::history`]: crate::rest::Resource::history

use plover_derive::RestModel;
use serde_json::{json, Map, Value};

use crate::db::Conn;
use crate::error::Error;
use crate::model::row::{Row, Rows};
use crate::model::{FieldMeta, ModelMeta, RestModel};
use crate::sql::cascade::delete_rows;
use crate::sql::{self, Arg};
use crate::value::kind::SqlType;

/// What a change records instead of the value of a private or write-only field.
pub const MASK: &str = "***";

/// The most characters of one value a change records: a longer text is cut there and ends
/// with `… (N characters)`, N its whole length. The text of the object is cut at
/// [`MAX_TEXT_CHARS`].
pub const MAX_VALUE_CHARS: usize = 1_000;

/// The most characters of an object's text ([`HistoryEntry::object_text`]) an entry keeps.
pub const MAX_TEXT_CHARS: usize = 200;

/// One recorded write: a row of the table `plover_history`. The index over `object_table`,
/// `object_id` and `id` serves an object's history, newest first; the newest entries of all
/// are read by the primary key.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_history)]
#[rest(table, display = "{action} {object_table} #{object_id}")]
#[rest(index = "object_table, object_id, id")]
pub struct HistoryEntry {
    /// Primary key, in the order the entries were recorded.
    pub id: i64,
    /// When the write was made, UTC.
    #[rest(default = crate::value::now())]
    pub created: chrono::NaiveDateTime,
    /// The primary key of the user who made it (`None`: anonymous). Not a foreign key: the
    /// history outlives its users.
    pub user_id: Option<i64>,
    /// That user's name at the time.
    pub username: Option<String>,
    /// Where it was made: `admin`, or `api` (a REST resource).
    pub source: String,
    /// The table of the object's model.
    pub object_table: String,
    /// The object's primary key.
    pub object_id: i64,
    /// The object's text (`RestModel::display`) at the time, at most [`MAX_TEXT_CHARS`]
    /// characters.
    pub object_text: String,
    /// `add`, `change` or `delete`.
    #[rest(choices = ["add", "change", "delete"])]
    pub action: String,
    /// The changes as JSON: `[{"field": "title", "old": "Draft", "new": "Final"}, ...]`, `old`
    /// absent for an add, `new` absent for a delete (see [`HistoryEntry::field_changes`]).
    #[rest(long)]
    pub changes: String,
}

/// One field's change in a [`HistoryEntry`].
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// The field's API name.
    pub field: String,
    /// The value before (`None` for an add), as JSON: [`MASK`] for a private or write-only
    /// field, a text cut at [`MAX_VALUE_CHARS`] characters.
    pub old: Option<Value>,
    /// The value after (`None` for a delete), as `old`.
    pub new: Option<Value>,
}

impl HistoryEntry {
    /// The changes of the entry, in field order (none when `changes` is not the JSON that
    /// Plover writes).
    pub fn field_changes(&self) -> Vec<FieldChange> {
        let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&self.changes) else {
            return Vec::new();
        };
        items
            .into_iter()
            .filter_map(|item| {
                let Value::Object(mut item) = item else {
                    return None;
                };
                Some(FieldChange {
                    field: item.get("field")?.as_str()?.to_owned(),
                    old: item.remove("old"),
                    new: item.remove("new"),
                })
            })
            .collect()
    }
}

/// Who makes a write, and through what.
#[derive(Debug, Clone)]
pub(crate) struct Actor {
    /// The user's primary key and name (`None`: anonymous).
    pub(crate) user: Option<(i64, String)>,
    /// `admin` or `api`: [`HistoryEntry::source`].
    pub(crate) source: &'static str,
}

/// A write to record: [`Entry::of`] makes it, [`record`] writes it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    actor: Actor,
    table: &'static str,
    object_id: i64,
    object_text: String,
    action: &'static str,
    /// The JSON of [`HistoryEntry::changes`].
    changes: String,
}

impl Entry {
    /// The entry of a write of a row of `M` by `actor`: an add (`before` is `None`), a change
    /// (both), or a delete (`after` is `None`), with each field's values from the model's
    /// metadata: every field but the key with a value for an add or a delete, the fields whose
    /// value differs for a change. `None` for a change that changed no field, or when both are
    /// `None`.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) fn of<M: RestModel + 'static>(
        actor: &Actor,
        before: Option<&M>,
        after: Option<&M>,
    ) -> Option<Entry> {
        let before = before.map(|row| row as &dyn Row);
        Entry::of_rows(M::meta(), actor, before, after.map(|row| row as &dyn Row))
    }

    /// [`Entry::of`] for rows of `meta` whose type is erased.
    pub(crate) fn of_rows(
        meta: &'static ModelMeta,
        actor: &Actor,
        before: Option<&dyn Row>,
        after: Option<&dyn Row>,
    ) -> Option<Entry> {
        let (row, action) = match (before, after) {
            (None, Some(row)) => (row, "add"),
            (Some(_), Some(row)) => (row, "change"),
            (Some(row), None) => (row, "delete"),
            (None, None) => return None,
        };
        let mut changes = Vec::new();
        for (idx, field) in meta.fields.iter().enumerate() {
            if idx == meta.pk {
                continue;
            }
            let old = before.map(|r| r.field_json(idx));
            let new = after.map(|r| r.field_json(idx));
            let recorded = match (&old, &new) {
                (Some(old), Some(new)) => old != new,
                (Some(value), None) | (None, Some(value)) => !value.is_null(),
                (None, None) => false,
            };
            if recorded {
                changes.push(change_json(field, old, new));
            }
        }
        if action == "change" && changes.is_empty() {
            return None;
        }
        Some(Entry {
            actor: actor.clone(),
            table: meta.table,
            object_id: row.pk(),
            object_text: cut(&row.display(), MAX_TEXT_CHARS),
            action,
            changes: Value::Array(changes).to_string(),
        })
    }
}

/// One field's change as [`HistoryEntry::changes`] keeps it.
fn change_json(field: &FieldMeta, old: Option<Value>, new: Option<Value>) -> Value {
    let kept = |value: Value| {
        if field.private || field.excluded {
            Value::String(MASK.to_owned())
        } else {
            match value {
                Value::String(text) => Value::String(cut(&text, MAX_VALUE_CHARS)),
                other => other,
            }
        }
    };
    let mut out = Map::new();
    out.insert("field".into(), json!(field.name));
    if let Some(old) = old {
        out.insert("old".into(), kept(old));
    }
    if let Some(new) = new {
        out.insert("new".into(), kept(new));
    }
    Value::Object(out)
}

/// `text`, cut at `max` characters with `… (N characters)` after the cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
    }
}

/// Writes `entries` (all at one time, now) into `plover_history`, a hundred a statement. Call
/// it inside the write's transaction, after the write: a failed write then records nothing,
/// and a failed record fails the write.
///
/// # Errors
/// The database's error; a missing table is an [`Error::Internal`] that says how to create it
/// ([`explained`]).
pub(crate) fn record(conn: &mut Conn<'_>, entries: &[Entry]) -> Result<(), Error> {
    if entries.is_empty() {
        return Ok(());
    }
    let f = HistoryEntry::FIELDS;
    let fields = [
        f.created,
        f.user_id,
        f.username,
        f.source,
        f.object_table,
        f.object_id,
        f.object_text,
        f.action,
        f.changes,
    ]
    .map(|field| field.index());
    let now = crate::value::now();
    let rows: Vec<Vec<Arg<'_>>> = entries
        .iter()
        .map(|e| {
            let (user_id, username) = match &e.actor.user {
                Some((id, name)) => (Arg::I64(*id), Arg::Text(name.as_str().into())),
                None => (Arg::Null(SqlType::BigInt), Arg::Null(SqlType::Text)),
            };
            vec![
                Arg::DateTime(now),
                user_id,
                username,
                Arg::Text(e.actor.source.into()),
                Arg::Text(e.table.into()),
                Arg::I64(e.object_id),
                Arg::Text(e.object_text.as_str().into()),
                Arg::Text(e.action.into()),
                Arg::Text(e.changes.as_str().into()),
            ]
        })
        .collect();
    sql::insert_many(conn, HistoryEntry::meta(), &fields, &rows)
        .map(|_| ())
        .map_err(explained)
}

/// `e`, or where it says that the table `plover_history` does not exist, an error that says
/// how to create it.
pub(crate) fn explained(e: Error) -> Error {
    e.explain_missing_table(
        "the history table",
        "plover_history",
        "plover::history::HistoryEntry::meta()",
    )
}

/// Deletes the rows `ids` of `M` (with their dependent rows, as `delete_rows` does) and
/// records each row deleted by `actor`, in one transaction; the number of rows deleted. The
/// rows are read (and on PostgreSQL locked) in that transaction before the delete, so that
/// what is recorded is what was deleted.
pub(crate) fn delete<M: RestModel + 'static>(
    conn: &mut Conn<'_>,
    actor: &Actor,
    ids: &[i64],
    recursive: bool,
) -> Result<usize, Error> {
    let lock = |conn: &mut Conn<'_>, ids: &[i64]| -> Result<Box<dyn Rows>, Error> {
        Ok(Box::new(sql::rows_locked::<M>(conn, M::meta(), ids)?))
    };
    delete_recorded(conn, M::meta(), actor, ids, recursive, &lock)
}

/// Reads (and on PostgreSQL locks) the rows of some keys, their type erased.
type LockRows<'a> = dyn Fn(&mut Conn<'_>, &[i64]) -> Result<Box<dyn Rows>, Error> + 'a;

/// [`delete`] of rows of `meta` whose type is erased: `lock` reads (and locks) the rows of
/// some keys. Compiled once, not once per model.
fn delete_recorded(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    actor: &Actor,
    ids: &[i64],
    recursive: bool,
    lock: &LockRows<'_>,
) -> Result<usize, Error> {
    conn.transaction(|conn| {
        let rows = lock(conn, ids)?;
        let deleted = delete_rows(conn, meta, ids, recursive)?;
        let entries: Vec<Entry> = (0..rows.len())
            .filter_map(|i| Entry::of_rows(meta, actor, Some(rows.row(i)), None))
            .collect();
        record(conn, &entries)?;
        Ok(deleted)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_their_length() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 5), "ééééé");
        assert_eq!(cut("éééééé", 5), "ééééé… (6 characters)");
    }

    #[test]
    fn field_changes_read_what_record_writes_and_nothing_else() {
        let entry = |changes: &str| HistoryEntry {
            id: 1,
            created: crate::value::now(),
            user_id: None,
            username: None,
            source: "admin".into(),
            object_table: "t".into(),
            object_id: 1,
            object_text: String::new(),
            action: "change".into(),
            changes: changes.into(),
        };
        let read = entry(r#"[{"field":"a","old":null,"new":"x"},{"field":"b","old":1}]"#);
        assert_eq!(
            read.field_changes(),
            vec![
                FieldChange {
                    field: "a".into(),
                    old: Some(Value::Null),
                    new: Some(json!("x"))
                },
                FieldChange {
                    field: "b".into(),
                    old: Some(json!(1)),
                    new: None
                },
            ]
        );
        assert!(entry("not json").field_changes().is_empty());
        assert!(entry(r#"[1, {"old": 2}]"#).field_changes().is_empty());
    }
}
