//! On SQLite, a search (`q`, an admin's search, a `contains` condition) of a field declared
//! `#[rest(search_index)]` reads the keys of the rows it finds from the field's search index
//! first, when they are few.
//!
//! SQLite has no index for a substring, so `plover_lower(content) LIKE '%word%'` reads every
//! row the other conditions leave: a rare word read the whole table (5.5 s at ten million
//! rows). The schema gives such a field an FTS5 table with the `trigram` tokenizer
//! (`"<table>_<column>_search"`, made by `crate::schema` with the triggers that keep it): it
//! holds each row's text folded by `plover_lower`, under the row's key, and the phrase of the
//! folded word (`"word"`) matches exactly the rows whose folded text contains it: the rows of
//! the `LIKE`. So the condition is read there first, and when it finds few enough rows
//! ([`most_keys`]), it becomes `"message"."id" IN (<their keys>)`, which SQLite reads by key, combined
//! with the other conditions' indexes (through a join, `user_id IN (SELECT id FROM "user"
//! WHERE id IN (...))`).
//!
//! Past a bound ([`most_keys`]) the condition stays a `LIKE`: the word is frequent, and reading
//! the table in the page's order finds a page soon (one row in a hundred matches: about two
//! thousand rows read for a page of twenty), where the keys of every match would be read first
//! (67 ms for a word of every row of 100,000). The bound grows with the table: a page of a word
//! found in `k` of `n` rows costs about `20 n / k` rows read by the `LIKE` (0.55 us each at ten
//! million rows) against `k` keys read from the index (0.67 us each), about even at `k` near
//! `sqrt(16 n)`: 1,000 keys up to 62,500 rows, 4,000 at a million, 12,649 at ten million, so
//! that a word between rare and frequent costs milliseconds at any size (with a fixed 1,000, a
//! word of 1,001 rows in ten million read 200,000 rows by `LIKE`). SQLite is given many keys
//! as one JSON array (`sql::writer`'s long lists). A word of fewer than three characters
//! has no trigram and stays a `LIKE`, as does a condition under `not` (there a `LIKE` of a
//! NULL text and a key not found differ), and one whose index does not exist yet (a database
//! made before the field was declared, not migrated: [`index_exists`]).
//!
//! PostgreSQL needs none of this: its trigram indexes serve the `ILIKE` as written, and its
//! planner weighs them against reading the table.

use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;

use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::{Filter, Group, Op, Param, Select, Term};
use crate::value::fold_case;

/// The fewest keys a search index may give a condition, at any size of table ([`most_keys`]).
const MIN_KEYS: usize = 1000;

/// The most keys a search index gives a condition, at any size of table ([`most_keys`]).
const MAX_KEYS: usize = 20_000;

/// How many keys a search index gives a condition on `table` before the condition stays a
/// `LIKE`: `sqrt(16 n)` for a table of `n` rows (by its largest key), within [`MIN_KEYS`] and
/// [`MAX_KEYS`] (the module's documentation says why).
fn most_keys(conn: &mut Conn<'_>, table: &str) -> Result<usize, Error> {
    let quoted = table.replace('"', "\"\"");
    let sql = format!("SELECT coalesce(max(rowid), 0) AS n FROM \"{quoted}\"");
    let rows: Vec<Count> = match conn {
        Conn::Sqlite(c) => diesel::sql_query(sql).load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(_) => return Ok(MIN_KEYS),
    };
    let n = rows.first().map_or(0, |r| r.n.max(0).unsigned_abs());
    Ok(usize::try_from(n.saturating_mul(16).isqrt())
        .map_or(MAX_KEYS, |k| k.clamp(MIN_KEYS, MAX_KEYS)))
}

/// The name of the FTS5 table (SQLite) or index (PostgreSQL) that indexes `column` of `table`
/// for a search.
pub(crate) fn table_name(table: &str, column: &str) -> String {
    format!("{table}_{column}_search")
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
struct Key {
    #[diesel(sql_type = BigInt)]
    rowid: i64,
}

/// Whether the search index named `name` ([`table_name`]) exists: a table on SQLite, an index
/// on PostgreSQL.
pub(crate) fn index_exists(conn: &mut Conn<'_>, name: &str) -> Result<bool, Error> {
    let found: Vec<Count> = match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?",
        )
        .bind::<Text, _>(name)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT count(*) AS n FROM pg_indexes WHERE schemaname = current_schema() \
             AND indexname = $1",
        )
        .bind::<Text, _>(name)
        .load(*c)?,
    };
    Ok(found.first().is_some_and(|f| f.n > 0))
}

/// On SQLite, replaces each `contains` condition of `select` (its own, and the terms of its
/// `or` groups) on a field with a search index by the keys of the rows the index finds, when
/// there are few enough ([`most_keys`]); on PostgreSQL, nothing.
pub(crate) fn read_search_keys(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    select: &mut Select,
) -> Result<(), Error> {
    if !matches!(conn, Conn::Sqlite(_)) {
        return Ok(());
    }
    // Whether each index asked about exists: the words of a search ask about the same ones.
    let mut known = Vec::new();
    for filter in &mut select.filters {
        replace(conn, meta, filter, &mut known)?;
    }
    for group in &mut select.groups {
        any_group(conn, meta, group, &mut known)?;
    }
    Ok(())
}

/// Indexes by name, and for each that exists the most keys it may give ([`most_keys`]).
type Known = Vec<(String, Option<usize>)>;

/// The conditions of an `or` group and of the `or` groups inside it (not of a `not` group).
fn any_group(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    group: &mut Group,
    known: &mut Known,
) -> Result<(), Error> {
    let Group::Any(terms) = group else {
        return Ok(());
    };
    for term in terms {
        match term {
            Term::Filter(filter) => replace(conn, meta, filter, known)?,
            Term::Group(inner) => any_group(conn, meta, inner, known)?,
        }
    }
    Ok(())
}

/// Replaces `filter` by `<path to its model's key> IN (keys)` when it is a `contains` of one
/// word of a trigram or more, on a field whose search index exists and finds few enough rows
/// ([`most_keys`]).
fn replace(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    filter: &mut Filter,
    known: &mut Known,
) -> Result<(), Error> {
    let [word @ Param::Text(text)] = filter.values.as_slice() else {
        return Ok(());
    };
    if filter.op != Op::Contains || !word.has_trigram() {
        return Ok(());
    }
    let (model, field) = meta.leaf(&filter.path)?;
    if !field.search_index {
        return Ok(());
    }
    let index = table_name(model.table, field.column);
    let most = match known.iter().find(|(name, _)| *name == index) {
        Some(&(_, most)) => most,
        None => {
            let most = if index_exists(conn, &index)? {
                Some(most_keys(conn, model.table)?)
            } else {
                None
            };
            known.push((index.clone(), most));
            most
        }
    };
    let Some(most) = most else {
        return Ok(());
    };
    let Some(keys) = keys(conn, &index, text, most)? else {
        return Ok(());
    };
    let mut path = filter.path.clone();
    if let Some(last) = path.last_mut() {
        *last = model.pk;
    }
    *filter = Filter {
        path,
        op: Op::In,
        values: keys.into_iter().map(Param::Int).collect(),
    };
    Ok(())
}

/// The keys of the rows of search index `index` whose folded text holds `word`, in key order;
/// `None` past `most`.
fn keys(
    conn: &mut Conn<'_>,
    index: &str,
    word: &str,
    most: usize,
) -> Result<Option<Vec<i64>>, Error> {
    let quoted = index.replace('"', "\"\"");
    let sql = format!(
        "SELECT rowid FROM \"{quoted}\" WHERE \"{quoted}\" MATCH ? ORDER BY rowid LIMIT {}",
        most + 1
    );
    let phrase = phrase(&fold_case(word));
    let found: Vec<Key> = match conn {
        Conn::Sqlite(c) => diesel::sql_query(sql).bind::<Text, _>(phrase).load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(_) => return Ok(None),
    };
    Ok((found.len() <= most).then(|| found.into_iter().map(|k| k.rowid).collect()))
}

/// The FTS5 query of one phrase, the folded word: its double quotes doubled, so that every
/// character is matched as written.
fn phrase(folded: &str) -> String {
    format!("\"{}\"", folded.replace('"', "\"\""))
}
