//! The database schema, from the models (docs/contract.md#schema): `CREATE TABLE IF NOT EXISTS`
//! and `CREATE INDEX IF NOT EXISTS` statements for SQLite and PostgreSQL, generated from what
//! `#[derive(RestModel)]` knows of each model: column types, `NOT NULL`, the primary key (on
//! SQLite `INTEGER PRIMARY KEY AUTOINCREMENT`, so that no id is given twice, as on PostgreSQL),
//! `DEFAULT` for a `#[rest(default = ...)]` that is a plain literal,
//! `UNIQUE` (`#[rest(unique)]`), a `CHECK` of the field's constraints (`min`, `max`,
//! `min_len`, `max_len`, `not_blank`, choices), `REFERENCES` plus an index for each foreign key (unless a
//! declared index starts with its column), and the declared indexes (`#[rest(index)]` on a
//! field, `#[rest(index = "a, b")]` on the struct, `-b` for a column in descending order),
//! and the search indexes of `#[rest(search_index)]` fields (`search`: a trigram index on
//! PostgreSQL, an FTS5 table and its triggers on SQLite, filled with the rows already there).
//! On PostgreSQL, text columns are `COLLATE "C"` and an index names where a nullable column's
//! NULLs go, so that the indexes serve Plover's orderings (code point order, NULLs first
//! ascending: docs/deployment.md#text-order-and-indexes).
//!
//! With `#[rest(table)]` on the struct the derive declares the diesel `table!` as well, so
//! that the struct is the only declaration of a table.
//!
//! [`create_tables`] creates a list of models in foreign-key order, in one transaction (on
//! PostgreSQL under an advisory lock, so that processes that start together do not race);
//! [`script`] gives the same statements as text, for a migration file.
//!
//! ```
//! use plover::prelude::*;
//! use plover::schema;
//!
//! diesel::table! { author (id) { id -> Integer, name -> Text, } }
//! diesel::table! {
//!     book (id) { id -> Integer, author_id -> Integer, isbn -> Text, year -> Nullable<Integer>, }
//! }
//!
//! #[derive(Debug, RestModel)]
//! #[diesel(table_name = author)]
//! pub struct Author { pub id: i32, pub name: String }
//!
//! #[derive(Debug, RestModel)]
//! #[diesel(table_name = book)]
//! #[rest(index = "-year, author_id")]
//! pub struct Book {
//!     pub id: i32,
//!     #[rest(fk = Author)]
//!     pub author_id: i32,
//!     #[rest(unique)]
//!     pub isbn: String,
//!     pub year: Option<i32>,
//! }
//!
//! // The book is listed first: the authors' table is created before it all the same.
//! let models = [Book::meta(), Author::meta()];
//! let sql = schema::script(&models, plover::db::Engine::Postgres).unwrap();
//! assert_eq!(sql, r#"CREATE TABLE IF NOT EXISTS "author" (
//!     "id" SERIAL PRIMARY KEY,
//!     "name" TEXT COLLATE "C" NOT NULL
//! );
//! CREATE TABLE IF NOT EXISTS "book" (
//!     "id" SERIAL PRIMARY KEY,
//!     "author_id" INTEGER NOT NULL REFERENCES "author" ("id"),
//!     "isbn" TEXT COLLATE "C" NOT NULL UNIQUE,
//!     "year" INTEGER
//! );
//! CREATE INDEX IF NOT EXISTS "book_author_id" ON "book" ("author_id");
//! CREATE INDEX IF NOT EXISTS "book_year_desc_author_id" ON "book" ("year" DESC NULLS LAST, "author_id");
//! "#);
//!
//! let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
//! db.run_blocking(|conn| schema::create_tables(conn, &models)).unwrap();
//! ```

mod drift;
pub mod migrations;
mod search;

pub use crate::value::kind::SqlType;
pub use drift::{differences, leftover_tables, report, table_exists, Difference};

use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::{FieldMeta, IndexColumn, ModelMeta};

/// A quoted identifier. Identifiers come from the derive (Rust identifiers), never from input.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The collation of text columns on PostgreSQL: code point order, as SQLite's and as the
/// `COLLATE "C"` of Plover's orderings and comparisons, so that the column's plain indexes
/// serve them.
pub const TEXT_COLLATION: &str = " COLLATE \"C\"";

/// One column's definition (`UNIQUE` only if `unique`: SQLite cannot add a UNIQUE column).
fn column(field: &FieldMeta, engine: Engine, unique: bool) -> String {
    let name = ident(field.column);
    if field.primary_key {
        // SQLite: `INTEGER PRIMARY KEY` is the rowid (numbered on insert) for both widths;
        // `AUTOINCREMENT` never gives a deleted row's id again, as PostgreSQL's sequences do
        // not (a new row must never inherit what was tied to a deleted one's id).
        return match (engine, field.sql_type) {
            (Engine::Sqlite, _) => format!("{name} INTEGER PRIMARY KEY AUTOINCREMENT"),
            (Engine::Postgres, SqlType::BigInt) => format!("{name} BIGSERIAL PRIMARY KEY"),
            (Engine::Postgres, _) => format!("{name} SERIAL PRIMARY KEY"),
        };
    }
    let mut out = format!("{name} {}", field.sql_type.name());
    if engine == Engine::Postgres && field.sql_type == SqlType::Text {
        // Text orders and compares by code point (docs/deployment.md#text-order-and-indexes):
        // the queries say `COLLATE "C"`, which an index serves only in the same collation.
        out.push_str(TEXT_COLLATION);
    }
    if !field.nullable {
        out.push_str(" NOT NULL");
    }
    if let Some(literal) = field.sql_default {
        out.push_str(" DEFAULT ");
        out.push_str(literal);
    }
    if unique {
        out.push_str(" UNIQUE");
    }
    if let Some(target) = field.fk {
        let target = target();
        out.push_str(&format!(
            " REFERENCES {} ({})",
            ident(target.table),
            ident(target.pk_field().column)
        ));
    }
    if let Some(check) = check(field, engine) {
        out.push_str(&format!(" CHECK ({check})"));
    }
    out
}

/// The condition of the column's `CHECK`: its [`Constraints`](crate::model::Constraints), so
/// that rows written around Plover obey them too (`NULL` passes, as SQL has it).
fn check(field: &FieldMeta, engine: Engine) -> Option<String> {
    let c = &field.constraints;
    let name = ident(field.column);
    let mut terms = Vec::new();
    if let Some(min) = c.min {
        terms.push(format!("{name} >= {min}"));
    }
    if let Some(max) = c.max {
        terms.push(format!("{name} <= {max}"));
    }
    // `length` counts characters of text on both engines.
    if let Some(min) = c.min_len {
        terms.push(format!("length({name}) >= {min}"));
    }
    if let Some(max) = c.max_len {
        terms.push(format!("length({name}) <= {max}"));
    }
    if c.not_blank {
        // The ASCII white space; Plover's own check also refuses other Unicode white space.
        terms.push(match engine {
            Engine::Sqlite => format!("trim({name}, char(32, 9, 10, 11, 12, 13)) <> ''"),
            Engine::Postgres => format!(
                "btrim({name}, chr(32) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) <> ''"
            ),
        });
    }
    if !c.choices.is_empty() {
        let quoted: Vec<String> = c
            .choices
            .iter()
            .map(|choice| format!("'{}'", choice.replace('\'', "''")))
            .collect();
        terms.push(format!("{name} IN ({})", quoted.join(", ")));
    }
    (!terms.is_empty()).then(|| terms.join(" AND "))
}

/// The statements that create `model`'s table and its indexes, if they do not exist: the
/// table, an index for each foreign key (unless UNIQUE or a declared index starting with its
/// column serves it), then each declared index.
pub fn statements(model: &ModelMeta, engine: Engine) -> Vec<String> {
    let columns: Vec<String> = model
        .fields
        .iter()
        .map(|f| format!("    {}", column(f, engine, f.unique)))
        .collect();
    let mut out = vec![format!(
        "CREATE TABLE IF NOT EXISTS {} (\n{}\n)",
        ident(model.table),
        columns.join(",\n")
    )];
    // A foreign key's index is left out where UNIQUE or a declared index that starts with
    // its column serves the same lookups.
    let foreign_keys: Vec<[IndexColumn; 1]> = model
        .fields
        .iter()
        .filter(|f| f.fk.is_some() && !f.unique)
        .filter(|f| {
            !model
                .indexes
                .iter()
                .any(|i| i.first().is_some_and(|c| c.column == f.column))
        })
        .map(|f| {
            [IndexColumn {
                column: f.column,
                descending: false,
            }]
        })
        .collect();
    let declared = model.indexes.iter().copied();
    for columns in foreign_keys.iter().map(|c| &c[..]).chain(declared) {
        // `-year, id`: `book_year_desc_id` over `"year" DESC, "id"`.
        let (mut name, mut list) = (model.table.to_owned(), Vec::new());
        for c in columns {
            name.push('_');
            name.push_str(c.column);
            let mut column = ident(c.column);
            if c.descending {
                name.push_str("_desc");
                column.push_str(" DESC");
            }
            // PostgreSQL puts NULLs last ascending; Plover orders them first ascending and
            // last descending (as SQLite), which an index read in either direction serves
            // only when it says so.
            let nullable = model
                .fields
                .iter()
                .any(|f| f.column == c.column && f.nullable);
            if engine == Engine::Postgres && nullable {
                column.push_str(if c.descending {
                    " NULLS LAST"
                } else {
                    " NULLS FIRST"
                });
            }
            list.push(column);
        }
        let statement = format!(
            "CREATE INDEX IF NOT EXISTS {} ON {} ({})",
            ident(&name),
            ident(model.table),
            list.join(", ")
        );
        if !out.contains(&statement) {
            out.push(statement);
        }
    }
    if model.table == OUTBOX {
        let drops = OUTBOX_EARLIER
            .iter()
            .map(|i| format!("DROP INDEX IF EXISTS {}", ident(i)));
        out.extend(drops);
        if engine == Engine::Postgres {
            out.extend(OUTBOX_PG.iter().map(|s| (*s).to_owned()));
        }
    }
    for field in search::fields(model) {
        for statement in search::create(model, field, engine) {
            // `CREATE EXTENSION` once for all the model's search fields.
            if !out.contains(&statement) {
                out.push(statement);
            }
        }
    }
    out
}

/// The outbox's table (`plover::changes::ChangeEvent`). Its indexes differ by engine because
/// its readers do (docs/changes.md#order). Every write of a recorded model adds events in its
/// own transaction, so each index an event enters is paid by the write. On SQLite the place is
/// the id: the readers, the clean-up and the dispatcher read ranges of the primary key, and no
/// other index is kept (each one an event entered was one more page the commit wrote). On
/// PostgreSQL the places are given after the commit: [`OUTBOX_PG`].
const OUTBOX: &str = "plover_event";

/// The outbox's indexes of earlier schemas, dropped where they exist.
const OUTBOX_EARLIER: [&str; 4] = [
    "plover_event_model_id",
    "plover_event_created",
    "plover_event_model_position",
    "plover_event_position",
];

/// The outbox's indexes on PostgreSQL: partial indexes over the placed events serve the readers
/// (by model, and all models), and one over the unplaced serves the sequencer, so that an event
/// enters one index besides its key when it is written.
const OUTBOX_PG: [&str; 3] = [
    "CREATE INDEX IF NOT EXISTS \"plover_event_model_placed\" ON \"plover_event\" \
     (\"model\", \"position\") WHERE \"position\" IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS \"plover_event_placed\" ON \"plover_event\" \
     (\"position\") WHERE \"position\" IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS \"plover_event_unplaced\" ON \"plover_event\" \
     (\"id\") WHERE \"position\" IS NULL",
];

/// `models` in foreign-key order: each after the models it refers to (among those listed;
/// others must exist already). A model may refer to itself.
///
/// # Errors
/// [`Error::Internal`] when the foreign keys of the listed models form a cycle.
pub fn fk_order(models: &[&'static ModelMeta]) -> Result<Vec<&'static ModelMeta>, Error> {
    let listed = |m: &ModelMeta| models.iter().position(|n| n.table == m.table);
    let mut done: Vec<&'static ModelMeta> = Vec::with_capacity(models.len());
    let mut left: Vec<&'static ModelMeta> = models.to_vec();
    while !left.is_empty() {
        let ready = left.iter().position(|m| {
            m.fields.iter().filter_map(|f| f.fk).all(|target| {
                let target = target();
                target.table == m.table
                    || listed(target).is_none()
                    || done.iter().any(|d| d.table == target.table)
            })
        });
        let Some(i) = ready else {
            let tables: Vec<&str> = left.iter().map(|m| m.table).collect();
            return Err(Error::Internal(format!(
                "the foreign keys of these tables form a cycle: {}",
                tables.join(", ")
            )));
        };
        done.push(left.remove(i));
    }
    Ok(done)
}

/// The statements of [`create_tables`] as one script, each ending with `;` and a line break:
/// what a migration file holds.
///
/// # Errors
/// As [`fk_order`].
pub fn script(models: &[&'static ModelMeta], engine: Engine) -> Result<String, Error> {
    let mut out = String::new();
    for model in fk_order(models)? {
        let fills = search::fields(model).filter_map(|f| search::fill(model, f, engine));
        for statement in statements(model, engine).into_iter().chain(fills) {
            out.push_str(&statement);
            out.push_str(";\n");
        }
    }
    Ok(out)
}

/// The advisory lock that serializes schema creation on PostgreSQL (`"plover"` in ASCII).
const SCHEMA_LOCK: i64 = 0x706c_6f76_6572;

/// Creates the tables and indexes of `models` that do not exist yet, in foreign-key order, in
/// one transaction; on PostgreSQL under an advisory lock, so that several processes starting
/// at once do not race on the catalog. The tables that existed are checked against the models
/// ([`differences`]) before any index is created: a missing column, or a column of another type
/// or nullability, is an error that lists every difference and the statements that fix what
/// can be fixed safely, so that the application stops before it serves ([`migrations`] writes
/// those statements as a migration and applies it).
///
/// # Errors
/// As [`fk_order`], the database's error, or [`Error::Internal`] with the drift [`report`].
pub fn create_tables(conn: &mut Conn<'_>, models: &[&'static ModelMeta]) -> Result<(), Error> {
    let engine = conn.engine();
    let ordered = fk_order(models)?;
    // `statements` gives the table first, then its indexes.
    let (mut tables, mut indexes) = (String::new(), String::new());
    for model in &ordered {
        for (i, statement) in statements(model, engine).into_iter().enumerate() {
            let out = if i == 0 { &mut tables } else { &mut indexes };
            out.push_str(&statement);
            out.push_str(";\n");
        }
    }
    conn.transaction(|conn| {
        if engine == Engine::Postgres {
            conn.batch_execute(&format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK});"))?;
        }
        conn.batch_execute(&tables)?;
        // Before the indexes: an index on a column the table lacks would fail less clearly.
        drift::check(conn, models)?;
        // A search index made now takes the rows already in its table (SQLite).
        let mut fills = String::new();
        for model in &ordered {
            for field in search::missing(conn, model)? {
                if let Some(fill) = search::fill(model, field, engine) {
                    fills.push_str(&fill);
                    fills.push_str(";\n");
                }
            }
        }
        conn.batch_execute(&indexes)?;
        conn.batch_execute(&fills)
    })
}
