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

use super::{drift, fk_order, ident, statements, Difference};
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::{FieldMeta, ModelMeta};

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
    let options = Options {
        name: name.to_owned(),
        empty,
        ..Options::default()
    };
    make_with(conn, models, dir, &options)
}

/// What [`make_with`] writes beyond the safe fixes, as the `makemigrations` command's options
/// give it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The migration's name, lowercase letters, digits and `_`; empty: a name made from the
    /// changes, as Django's `makemigrations` makes one (`initial`, `note_title`,
    /// `remove_note_title`, `alter_note_code`; `_and_more` when there are several).
    pub name: String,
    /// Write the folder even where a difference needs statements written by hand (its
    /// comments list them).
    pub empty: bool,
    /// Drop the columns and tables the models no longer have (their data is lost). Without it
    /// `make` refuses while there are any, naming them.
    pub allow_drop: bool,
    /// One-off values for new required columns without a default, by field (`size`, or
    /// `item.size` where several models have the field; the model's name or its table): the
    /// rows already there take the value, the column keeps no default.
    pub defaults: Vec<(String, String)>,
    /// Renamed fields, old column to new field (`label=title`, or `note.label=title`): the
    /// column is renamed, its data kept, instead of one dropped and one added.
    pub renames: Vec<(String, String)>,
}

/// Whether `key` (`field`, or `model.field` with the model's name or table) names `field` of
/// `model`.
fn key_names(model: &ModelMeta, key: &str, column: &str) -> bool {
    match key.split_once('.') {
        Some((owner, rest)) => {
            (owner.eq_ignore_ascii_case(model.name) || owner.eq_ignore_ascii_case(model.table))
                && rest.eq_ignore_ascii_case(column)
        }
        None => key.eq_ignore_ascii_case(column),
    }
}

/// The SQL literal of `raw` for `field`'s column: a number, `TRUE`/`FALSE`, or quoted text
/// (a date or date-time checked first).
fn literal(field: &FieldMeta, raw: &str) -> Result<String, Error> {
    use crate::value::kind::FieldKind;
    let bad = |what: &str| {
        Error::Internal(format!(
            "--default {}={raw}: the field takes {what}",
            field.name()
        ))
    };
    let quoted = |text: &str| format!("'{}'", text.replace('\'', "''"));
    Ok(match field.kind() {
        FieldKind::Int32 | FieldKind::Int64 => raw
            .trim()
            .parse::<i64>()
            .map_err(|_| bad("a whole number"))?
            .to_string(),
        FieldKind::Float => raw
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad("a number"))?
            .to_string(),
        FieldKind::Bool => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => "TRUE".to_owned(),
            "false" | "0" => "FALSE".to_owned(),
            _ => return Err(bad("true or false")),
        },
        FieldKind::Text => {
            crate::value::check_text(raw).map_err(|_| bad("text without U+0000"))?;
            quoted(raw)
        }
        FieldKind::Date => quoted(
            &crate::value::parse_date(raw.trim())
                .ok_or_else(|| bad("a date, YYYY-MM-DD"))?
                .to_string(),
        ),
        FieldKind::DateTime => quoted(
            &crate::value::parse_datetime(raw.trim())
                .ok_or_else(|| bad("a date and time, YYYY-MM-DDTHH:MM:SS"))?
                .format("%Y-%m-%d %H:%M:%S%.f")
                .to_string(),
        ),
    })
}

/// The part of a migration's automatic name that stands for `difference`.
fn slug(difference: &Difference) -> String {
    let table = difference.table;
    match (&difference.column, difference.drops) {
        (None, true) => "delete_model".to_owned(),
        (None, false) => table.to_owned(),
        (Some(column), true) => format!("remove_{table}_{column}"),
        (Some(column), false) if difference.what.contains("is missing") => {
            format!("{table}_{column}")
        }
        (Some(column), false) => format!("alter_{table}_{column}"),
    }
}

/// The automatic name of a migration of these parts: the one, or the first `_and_more`.
fn auto_name(slugs: &[String]) -> String {
    let name = match slugs {
        [] => "auto".to_owned(),
        [one] => one.clone(),
        [first, ..] => format!("{first}_and_more"),
    };
    let name: String = name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(60)
        .collect();
    name
}

/// Like [`make`], with the [`Options`] of the `makemigrations` command: an automatic name, the
/// columns and tables the models no longer have dropped (only with `allow_drop`; otherwise a
/// refusal that names them), one-off values for new required columns, renamed fields.
///
/// # Errors
/// As [`make`]; also when a default or a rename names no field of the models, or a default's
/// value does not fit its field.
pub fn make_with(
    conn: &mut Conn<'_>,
    models: &[&'static ModelMeta],
    dir: &Path,
    options: &Options,
) -> Result<Option<PathBuf>, Error> {
    let given = &options.name;
    check_name(given)?;
    let waiting = pending(conn, dir)?;
    if !waiting.is_empty() {
        return Err(Error::Internal(format!(
            "migrations are not applied yet ({}): apply them first with `migrate`",
            waiting.join(", ")
        )));
    }
    let engine = conn.engine();
    let mut plan = Plan::default();
    for model in fk_order(models)? {
        plan.model(conn, model, options)?;
    }
    for (i, (old, new)) in options.renames.iter().enumerate() {
        if !plan.used.contains(&i) {
            return Err(Error::Internal(format!(
                "--rename {old}={new}: no column {old} that the models no longer have, and no \
                 new field {new} whose column is missing, in one table"
            )));
        }
    }
    plan.drops.extend(drift::leftover_tables(conn, models)?);
    plan.drop_leftovers(options.allow_drop)?;
    let empty = options.empty;
    if !plan.manual.is_empty() && !empty {
        let name = if given.is_empty() {
            "NAME".to_owned()
        } else {
            given.clone()
        };
        return Err(Error::Internal(format!(
            "{}these need a migration written by hand: `makemigrations {name} --empty` writes \
             its folder\n",
            drift::report(&plan.manual)
        )));
    }
    if plan.up.is_empty() && plan.manual.is_empty() && !empty {
        return Ok(None);
    }
    let name = match given.as_str() {
        "" if plan.created == models.len() && plan.created > 0 => "initial".to_owned(),
        "" => auto_name(&plan.slugs),
        given => given.to_owned(),
    };
    plan.write(&engine_dir(dir, engine), &name, empty).map(Some)
}

/// A migration's name: lowercase letters, digits and `_` (or empty, for a name made from the
/// changes).
fn check_name(given: &str) -> Result<(), Error> {
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if given.chars().all(valid) {
        return Ok(());
    }
    Err(Error::Internal(format!(
        "a migration's name is lowercase letters, digits and `_` (add_title), not {given:?}"
    )))
}

/// What a migration being made holds, gathered table by table.
#[derive(Default)]
struct Plan {
    /// The statements of `up.sql`, in order.
    up: Vec<String>,
    /// The statements of `down.sql`, in the order of `up` (written reversed).
    down: Vec<String>,
    /// The differences without a safe fix: a migration written by hand.
    manual: Vec<Difference>,
    /// The differences that drop a column or a table (only with `allow_drop`).
    drops: Vec<Difference>,
    /// A word or two per change, for an automatic name.
    slugs: Vec<String>,
    /// The indexes of the renames applied.
    used: Vec<usize>,
    /// The number of tables created.
    created: usize,
}

impl Plan {
    /// The changes of one model's table: its creation, or its renames and differences.
    fn model(
        &mut self,
        conn: &mut Conn<'_>,
        model: &'static ModelMeta,
        options: &Options,
    ) -> Result<(), Error> {
        let engine = conn.engine();
        if !drift::table_exists(conn, model.table)? {
            self.up.extend(statements(model, engine));
            self.down.push(format!("DROP TABLE {}", ident(model.table)));
            self.slugs.push(model.table.to_owned());
            self.created += 1;
            return Ok(());
        }
        let mut found = drift::differences(conn, model)?;
        // Renames first: the old column and the new field's are then one difference.
        self.renames(model, &mut found, options);
        for mut difference in found {
            if difference.fix.is_none() && !difference.drops {
                // A required column without a default: a one-off value, if given.
                if let Some(fixed) = one_off_value(model, &difference, options, engine)? {
                    difference = fixed;
                }
            }
            match &difference.fix {
                Some(_) if difference.drops => self.drops.push(difference),
                Some(fix) => {
                    self.up.push(fix.clone());
                    self.down.extend(difference.undo.clone());
                    self.slugs.push(slug(&difference));
                }
                None => self.manual.push(difference),
            }
        }
        Ok(())
    }

    /// The renames of `options` that match a column `model`'s table has and the models no
    /// longer have, and a field whose column is missing: one `RENAME COLUMN` each, the two
    /// differences taken out of `found`.
    fn renames(&mut self, model: &ModelMeta, found: &mut Vec<Difference>, options: &Options) {
        for (i, (old, new)) in options.renames.iter().enumerate() {
            let gone = found.iter().position(|d| {
                d.drops
                    && d.column
                        .as_deref()
                        .is_some_and(|c| key_names(model, old, c))
            });
            let field = model
                .fields
                .iter()
                .find(|f| new.eq_ignore_ascii_case(f.column) || new.eq_ignore_ascii_case(f.name));
            let (Some(gone), Some(field)) = (gone, field) else {
                continue;
            };
            let Some(added) = found
                .iter()
                .position(|d| !d.drops && d.column.as_deref() == Some(field.column))
            else {
                continue;
            };
            let old_column = found[gone].column.clone().unwrap_or_default();
            let (table, from, to) = (ident(model.table), ident(&old_column), ident(field.column));
            self.up
                .push(format!("ALTER TABLE {table} RENAME COLUMN {from} TO {to}"));
            self.down
                .push(format!("ALTER TABLE {table} RENAME COLUMN {to} TO {from}"));
            self.slugs
                .push(format!("rename_{}_{}", model.table, field.column));
            self.used.push(i);
            let (first, second) = (gone.max(added), gone.min(added));
            found.remove(first);
            found.remove(second);
        }
    }

    /// The drops: a refusal that names them, unless `allow_drop`.
    fn drop_leftovers(&mut self, allow_drop: bool) -> Result<(), Error> {
        if !self.drops.is_empty() && !allow_drop {
            return Err(Error::Internal(format!(
                "{}these columns or tables are not in the models: `makemigrations --allow-drop` \
                 drops them and their data; `--rename OLD=NEW` renames a column instead\n",
                drift::report(&self.drops)
            )));
        }
        for difference in std::mem::take(&mut self.drops) {
            self.up.push(difference.fix.clone().unwrap_or_default());
            self.down.extend(difference.undo.clone());
            self.slugs.push(slug(&difference));
        }
        Ok(())
    }

    /// Writes the folder `<version>_<name>` under `engine_dir`: `up.sql` and `down.sql`, with
    /// placeholders for the statements to write by hand when `empty`.
    fn write(&self, engine_dir: &Path, name: &str, empty: bool) -> Result<PathBuf, Error> {
        let version = chrono::Utc::now().format("%Y-%m-%d-%H%M%S");
        let folder = engine_dir.join(format!("{version}_{name}"));
        if folder.exists() {
            return Err(Error::Internal(format!(
                "{} exists already: wait a second and run it again",
                folder.display()
            )));
        }
        let header = format!("-- {name}: written by Plover's makemigrations on {version} UTC.\n");
        let (mut up_sql, mut down_sql) = (header.clone(), header);
        for statement in &self.up {
            let _ = writeln!(up_sql, "{statement};");
        }
        for statement in self.down.iter().rev() {
            let _ = writeln!(down_sql, "{statement};");
        }
        if empty {
            for difference in &self.manual {
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
        Ok(folder)
    }
}

/// A missing required column without a default (`difference`), fixed with the one-off value
/// `options` gives for its field, if any.
fn one_off_value(
    model: &'static ModelMeta,
    difference: &Difference,
    options: &Options,
    engine: Engine,
) -> Result<Option<Difference>, Error> {
    let field = model
        .fields
        .iter()
        .find(|f| difference.column.as_deref() == Some(f.column));
    let value = field.and_then(|f| {
        options
            .defaults
            .iter()
            .find(|(key, _)| key_names(model, key, f.column) || key_names(model, key, f.name))
            .map(|(_, v)| (f, v))
    });
    let missing = difference.what.contains("is missing");
    match (value, missing) {
        (Some((field, value)), true) => {
            let literal = literal(field, value)?;
            Ok(Some(drift::missing(model, field, engine, Some(&literal))))
        }
        _ => Ok(None),
    }
}
