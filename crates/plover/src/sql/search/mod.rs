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
//! ([`Span::most_keys`]), it becomes `"message"."id" IN (<their keys>)`, which SQLite reads by key,
//! combined with the other conditions' indexes (through a join, `user_id IN (SELECT id FROM
//! "user" WHERE id IN (...))`).
//!
//! When the word is found in many rows the condition stays a `LIKE`: the word is frequent, and
//! reading the table in the page's order finds a page soon (one row in a hundred matches: about
//! two thousand rows read for a page of twenty), where the keys of every match would be read
//! first and their rows fetched and sorted. Measured at ten million rows: the `LIKE` reads about
//! 0.28 us a row, so a word of `k` rows in `n` costs `20 n / k` rows read (28 ms for a word of
//! 2,000 rows); a key costs 0.27 us to read from the index and about 2.5 us to fetch and sort
//! its row (a search of two fields is an `OR` of both, which SQLite answers by collecting every
//! key first). The two are even near `k = sqrt(2 n)`: so the index may give up to
//! [`Span::most_keys`] of a table of `n` rows, 1,000 up to half a million rows, 1,414 at a million,
//! 4,472 at ten million, at most [`MAX_KEYS`]. The index is read in two steps, so that a
//! frequent word costs little more than without the index: 1,001 keys first, whose spread over
//! the table's keys tells how many the word has in all; only when that is within the bound are
//! the rest read ([`keys`]). Many keys are given to SQLite as one JSON array (`sql::writer`'s
//! long lists). A word of fewer than three characters
//! has no trigram and stays a `LIKE`, as does a condition under `not` (there a `LIKE` of a
//! NULL text and a key not found differ), and one whose index does not exist yet (a database
//! made before the field was declared, not migrated: [`index_exists`]).
//!
//! A list's page in the order of its key reads a window of the word's first keys in that order
//! instead ([`Window`]), which costs the page at any size of word; its count, and a page in
//! another order, read the word as above.
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

mod window;

pub(crate) use window::Window;

/// The keys a search index gives a condition at any size of table, and the keys its first read
/// takes ([`keys`]).
const MIN_KEYS: usize = 1000;

/// The most keys a search index gives a condition, at any size of table ([`Span::most_keys`]).
const MAX_KEYS: usize = 20_000;

/// The keys of a table: the smallest and the largest (both 0 when it is empty).
#[derive(Debug, Clone, Copy)]
struct Span {
    first: i64,
    last: i64,
}

impl Span {
    /// The span of `table`'s keys (its `rowid`): two reads of its key's index, each its own
    /// subquery (SQLite reads every row for a `min` and a `max` in one `SELECT`).
    fn of(conn: &mut Conn<'_>, table: &str) -> Result<Span, Error> {
        #[derive(diesel::QueryableByName)]
        struct Ends {
            #[diesel(sql_type = BigInt)]
            first: i64,
            #[diesel(sql_type = BigInt)]
            last: i64,
        }
        let quoted = table.replace('"', "\"\"");
        let sql = format!(
            "SELECT coalesce((SELECT min(rowid) FROM \"{quoted}\"), 0) AS first, \
             coalesce((SELECT max(rowid) FROM \"{quoted}\"), 0) AS last"
        );
        let ends: Vec<Ends> = match conn {
            Conn::Sqlite(c) => diesel::sql_query(sql).load(*c)?,
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => Vec::new(),
        };
        Ok(ends.first().map_or(Span { first: 0, last: 0 }, |e| Span {
            first: e.first,
            last: e.last,
        }))
    }

    /// The keys from the first to `key`, both counted.
    fn up_to(self, key: i64) -> u64 {
        key.saturating_sub(self.first)
            .saturating_add(1)
            .max(1)
            .unsigned_abs()
    }

    /// How many keys a search index gives a condition on this table before the condition
    /// stays a `LIKE`: `sqrt(2 n)` for `n` keys, within [`MIN_KEYS`] and [`MAX_KEYS`] (the
    /// module's documentation says why).
    fn most_keys(self) -> usize {
        let n = self.up_to(self.last);
        usize::try_from(n.saturating_mul(2).isqrt())
            .map_or(MAX_KEYS, |k| k.clamp(MIN_KEYS, MAX_KEYS))
    }
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
/// there are few enough ([`Span::most_keys`]); on PostgreSQL, nothing.
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

/// Indexes by name, and for each that exists the span of its table's keys.
type Known = Vec<(String, Option<Span>)>;

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

/// The span of the keys of `table` when its search index `index` exists, asked once per
/// index ([`Known`]).
fn span(
    conn: &mut Conn<'_>,
    known: &mut Known,
    table: &str,
    index: &str,
) -> Result<Option<Span>, Error> {
    if let Some(&(_, span)) = known.iter().find(|(name, _)| name == index) {
        return Ok(span);
    }
    let span = if index_exists(conn, index)? {
        Some(Span::of(conn, table)?)
    } else {
        None
    };
    known.push((index.to_owned(), span));
    Ok(span)
}

/// Replaces `filter` by `<path to its model's key> IN (keys)` when it is a `contains` of one
/// word of a trigram or more, on a field whose search index exists and finds few enough rows
/// ([`Span::most_keys`]).
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
    let Some(span) = span(conn, known, model.table, &index)? else {
        return Ok(());
    };
    let Some(keys) = keys(conn, &index, text, span)? else {
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
/// `None` past the table's [`Span::most_keys`]. [`MIN_KEYS`] first: past them, the last of
/// them tells the word's share of the table's keys (a frequent word has its first thousand
/// among the first few thousand keys), and the rest are read only when that share of the
/// table is within the bound.
fn keys(
    conn: &mut Conn<'_>,
    index: &str,
    word: &str,
    span: Span,
) -> Result<Option<Vec<i64>>, Error> {
    let phrase = phrase(&fold_case(word));
    let mut found = read_keys(conn, index, &phrase, Toward::Up(None), MIN_KEYS + 1)?;
    let most = span.most_keys();
    let Some(&last) = found.last().filter(|_| found.len() > MIN_KEYS) else {
        return Ok(Some(found));
    };
    let share = found.len() as f64 / span.up_to(last) as f64;
    if share * span.up_to(span.last) as f64 > most as f64 {
        return Ok(None);
    }
    found.extend(read_keys(
        conn,
        index,
        &phrase,
        Toward::Up(Some(last)),
        most + 1 - found.len(),
    )?);
    Ok((found.len() <= most).then_some(found))
}

/// Which way a search index's keys are read, and from which key (not included; `None`: from
/// the first).
#[derive(Debug, Clone, Copy)]
enum Toward {
    /// Ascending, after the key.
    Up(Option<i64>),
    /// Descending, before the key.
    Down(Option<i64>),
}

/// At most `limit` keys of the rows of search index `index` that match `phrase`, in the order
/// and from the key that `toward` says.
fn read_keys(
    conn: &mut Conn<'_>,
    index: &str,
    phrase: &str,
    toward: Toward,
    limit: usize,
) -> Result<Vec<i64>, Error> {
    let quoted = index.replace('"', "\"\"");
    let (from, order) = match toward {
        Toward::Up(from) => (from.map(|key| ("> ", key)), "ASC"),
        Toward::Down(from) => (from.map(|key| ("< ", key)), "DESC"),
    };
    let bound = from.map_or(String::new(), |(op, _)| format!(" AND rowid {op}?"));
    let sql = format!(
        "SELECT rowid FROM \"{quoted}\" WHERE \"{quoted}\" MATCH ?{bound} \
         ORDER BY rowid {order} LIMIT {limit}"
    );
    let found: Vec<Key> = match conn {
        Conn::Sqlite(c) => {
            let query = diesel::sql_query(sql).bind::<Text, _>(phrase);
            match from {
                Some((_, key)) => query.bind::<BigInt, _>(key).load(*c)?,
                None => query.load(*c)?,
            }
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(_) => Vec::new(),
    };
    Ok(found.into_iter().map(|k| k.rowid).collect())
}

/// The FTS5 query of one phrase, the folded word: its double quotes doubled, so that every
/// character is matched as written.
fn phrase(folded: &str) -> String {
    format!("\"{}\"", folded.replace('"', "\"\""))
}
