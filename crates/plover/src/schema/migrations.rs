//! Migrations: the schema changes of a project, kept as diesel migration folders
//! (`<version>_<name>/up.sql` and `down.sql`) and applied in order, each recorded in diesel's
//! own `__diesel_schema_migrations` table, so that the `diesel` command-line tool reads and runs
//! the same folders.
//!
//! [`make`] compares the models with the database (as [`create_tables`](super::create_tables)
//! does at start) and writes what can be fixed safely: the tables that do not exist, and the
//! [`differences`](super::differences) that have a fix (a new column that every existing row
//! can take). A difference without one (a column of another type, a new `NOT NULL` column
//! without a default) stops it, naming the difference: write that migration yourself, in the
//! folder that `make` writes with `empty` set. [`apply`] runs the folders not applied yet,
//! each in one transaction; [`pending`] lists them.
//!
//! The folders of each engine are kept apart, under `sqlite/` and `postgres/` in the
//! migrations directory: a statement written for one engine may not run on the other.
//!
//! ```
//! use plover::prelude::*;
//! use plover::schema::{self, migrations};
//!
//! #[derive(Debug, RestModel)]
//! #[diesel(table_name = note)]
//! #[rest(table)]
//! pub struct Note { pub id: i32, pub text: String, pub title: Option<String> }
//!
//! let dir = std::env::temp_dir().join(format!("plover-doc-migrations-{}", std::process::id()));
//! let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
//! db.run_blocking(|conn| {
//!     // A database made before `title` was added to the model.
//!     conn.batch_execute("CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")?;
//!     assert!(schema::create_tables(conn, &[Note::meta()]).is_err()); // the drift report
//!
//!     let written = migrations::make(conn, &[Note::meta()], &dir, "add_title", false)?;
//!     let folder = written.expect("a change to write");
//!     let up = std::fs::read_to_string(folder.join("up.sql")).unwrap();
//!     assert!(up.contains(r#"ALTER TABLE "note" ADD COLUMN "title" TEXT"#));
//!
//!     assert_eq!(migrations::apply(conn, &dir)?.len(), 1);
//!     schema::create_tables(conn, &[Note::meta()]) // no drift left
//! })
//! .unwrap();
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use diesel_migrations::{FileBasedMigrations, MigrationHarness};

use super::{drift, fk_order, ident, statements};
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::ModelMeta;

/// The folder of `engine`'s migrations under the migrations directory `dir`.
pub fn engine_dir(dir: &Path, engine: Engine) -> PathBuf {
    dir.join(match engine {
        Engine::Sqlite => "sqlite",
        Engine::Postgres => "postgres",
    })
}

/// A migration failed, or a folder could not be read or written.
fn failed(what: &str, err: impl std::fmt::Display) -> Error {
    Error::Internal(format!("{what}: {err}"))
}

/// The migrations under `dir` (for the connection's engine) that are not applied yet, by
/// folder name, in the order [`apply`] runs them.
///
/// # Errors
/// [`Error::Internal`] when a folder is not a migration, or the database's error.
pub fn pending(conn: &mut Conn<'_>, dir: &Path) -> Result<Vec<String>, Error> {
    let dir = engine_dir(dir, conn.engine());
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let source = FileBasedMigrations::from_path(&dir).map_err(|e| failed("migrations", e))?;
    let found = match conn {
        Conn::Sqlite(c) => c.pending_migrations(source).map(names),
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => c.pending_migrations(source).map(names),
    };
    found.map_err(|e| failed("migrations", e))
}

fn names<M: ?Sized + diesel::migration::Migration<B>, B: diesel::backend::Backend>(
    found: Vec<Box<M>>,
) -> Vec<String> {
    found.iter().map(|m| m.name().to_string()).collect()
}

/// The advisory lock that serializes migrations on PostgreSQL (`"plovem"` in ASCII).
#[cfg(feature = "postgres")]
const MIGRATION_LOCK: i64 = 0x706c_6f76_656d;

/// Applies the migrations under `dir` (for the connection's engine) that are not applied yet,
/// in the order of their versions, each in one transaction, and records each in
/// `__diesel_schema_migrations`. Returns the folder names applied (none when `dir` does not
/// exist). On PostgreSQL several processes may call it at once: one applies, the others wait,
/// then find nothing left.
///
/// # Errors
/// [`Error::Internal`] naming the migration that failed (it and the later ones are not
/// applied; those before it stay applied).
pub fn apply(conn: &mut Conn<'_>, dir: &Path) -> Result<Vec<String>, Error> {
    let waiting = pending(conn, dir)?;
    if waiting.is_empty() {
        return Ok(waiting);
    }
    let source = FileBasedMigrations::from_path(engine_dir(dir, conn.engine()))
        .map_err(|e| failed("migrations", e))?;
    let applied = match conn {
        Conn::Sqlite(c) => c.run_pending_migrations(source).map(|v| v.len()),
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            use diesel::connection::SimpleConnection;
            c.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))?;
            let applied = c.run_pending_migrations(source).map(|v| v.len());
            c.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))?;
            applied
        }
    };
    let applied = applied.map_err(|e| failed("a migration failed", e))?;
    // Diesel applies the waiting folders in this order; under the lock, another process may
    // have applied the first ones already.
    Ok(waiting[waiting.len().saturating_sub(applied)..].to_vec())
}

/// Writes a migration folder `<version>_<name>` under `dir` (for the connection's engine)
/// that brings the database to `models`: the tables that do not exist (in foreign-key order,
/// with their indexes) and the safe fixes of the tables that do, with the `down.sql` that
/// reverts them. With `empty` it writes the folder even when nothing can be fixed safely, its
/// comments listing the differences that need statements written by hand.
///
/// Returns the folder written, or `None` when the database already matches the models.
///
/// # Errors
/// [`Error::Internal`] when `name` is not lowercase letters, digits and `_`; when migrations
/// are pending (apply them first: `make` compares with the database as it is); when a
/// difference needs a migration written by hand (the message lists it); on a file error.
pub fn make(
    conn: &mut Conn<'_>,
    models: &[&'static ModelMeta],
    dir: &Path,
    name: &str,
    empty: bool,
) -> Result<Option<PathBuf>, Error> {
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if name.is_empty() || !name.chars().all(valid) {
        return Err(Error::Internal(format!(
            "a migration's name is lowercase letters, digits and `_` (add_title), not {name:?}"
        )));
    }
    let waiting = pending(conn, dir)?;
    if !waiting.is_empty() {
        return Err(Error::Internal(format!(
            "migrations are not applied yet ({}): apply them first with `migrate`",
            waiting.join(", ")
        )));
    }
    let engine = conn.engine();
    let (mut up, mut down, mut manual) = (Vec::new(), Vec::new(), Vec::new());
    for model in fk_order(models)? {
        if !drift::table_exists(conn, model.table)? {
            up.extend(statements(model, engine));
            down.push(format!("DROP TABLE {}", ident(model.table)));
            continue;
        }
        for difference in drift::differences(conn, model)? {
            match &difference.fix {
                Some(fix) => {
                    up.push(fix.clone());
                    down.extend(difference.undo);
                }
                None => manual.push(difference),
            }
        }
    }
    if !manual.is_empty() && !empty {
        return Err(Error::Internal(format!(
            "{}these need a migration written by hand: `makemigrations {name} --empty` writes \
             its folder\n",
            drift::report(&manual)
        )));
    }
    if up.is_empty() && manual.is_empty() && !empty {
        return Ok(None);
    }
    let version = chrono::Utc::now().format("%Y-%m-%d-%H%M%S");
    let folder = engine_dir(dir, engine).join(format!("{version}_{name}"));
    if folder.exists() {
        return Err(Error::Internal(format!(
            "{} exists already: wait a second and run it again",
            folder.display()
        )));
    }
    let header = format!("-- {name}: written by Plover's makemigrations on {version} UTC.\n");
    let (mut up_sql, mut down_sql) = (header.clone(), header);
    for statement in &up {
        let _ = writeln!(up_sql, "{statement};");
    }
    for statement in down.iter().rev() {
        let _ = writeln!(down_sql, "{statement};");
    }
    if empty {
        for difference in &manual {
            let _ = writeln!(up_sql, "-- table {}: {}", difference.table, difference.what);
        }
        up_sql.push_str("-- Write the statements of this migration here.\n");
        down_sql.push_str("-- Write the statements that revert up.sql here.\n");
    }
    std::fs::create_dir_all(&folder).map_err(|e| failed(&folder.display().to_string(), e))?;
    for (file, text) in [("up.sql", up_sql), ("down.sql", down_sql)] {
        let path = folder.join(file);
        std::fs::write(&path, text).map_err(|e| failed(&path.display().to_string(), e))?;
    }
    Ok(Some(folder))
}
