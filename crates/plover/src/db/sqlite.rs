//! SQLite connection set-up: pragmas and the Unicode-aware `plover_lower` function.

use diesel::connection::SimpleConnection;
use diesel::r2d2::{CustomizeConnection, Error as R2d2Error};
use diesel::serialize::{IsNull, Output, ToSql};
use diesel::sql_types::{Nullable, Text};
use diesel::sqlite::Sqlite;
use diesel::SqliteConnection;

use super::cancel::{self, Interrupted};
use super::{Config, ConfigError};

diesel::define_sql_function! {
    /// Lower-cases text for all of Unicode, one character at a time
    /// ([`crate::value::fold_case`]; SQLite's own `lower` handles ASCII only); used by the
    /// `ilike` filter on SQLite.
    fn plover_lower(x: Nullable<Text>) -> Nullable<Text>;
}

/// SQLite's page cache per connection, in KiB: half of SQLite's own default (2,000). Pages
/// beyond it come from the operating system's file cache, shared by every connection; eight
/// private caches of 2 MB each held the same pages eight times and pushed a server's memory
/// past 48 MiB under the benchmark, at no measurable gain in speed.
const DEFAULT_CACHE_KIB: f64 = 1000.0;

/// How long a writer waits for the database (milliseconds), by default.
pub(super) const DEFAULT_BUSY_MS: f64 = 5000.0;

/// Applies Plover's pragmas to every new SQLite connection.
#[derive(Debug)]
pub(super) struct Customizer {
    pragmas: String,
}

impl Customizer {
    pub(super) fn from_config(config: &Config) -> Result<Customizer, ConfigError> {
        let busy = config.number("busy_timeout", DEFAULT_BUSY_MS)? as u64;
        let cache = config.number("cache_size", DEFAULT_CACHE_KIB)? as u64;
        let mmap = config.number("mmap_size", 0.0)? as u64;
        Ok(Customizer {
            pragmas: format!(
                "PRAGMA busy_timeout = {busy}; PRAGMA journal_mode = WAL; \
                 PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                 PRAGMA case_sensitive_like = ON; PRAGMA cache_size = -{cache}; \
                 PRAGMA mmap_size = {mmap};"
            ),
        })
    }
}

impl CustomizeConnection<SqliteConnection, R2d2Error> for Customizer {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), R2d2Error> {
        conn.batch_execute(&self.pragmas)
            .map_err(R2d2Error::QueryError)?;
        plover_lower_utils::register_impl(conn, |s: Option<String>| match cancel::interrupted() {
            Some(why) => Lowered::Interrupted(why),
            None => Lowered::Text(s.map(|s| crate::value::fold_case(&s))),
        })
        .map_err(R2d2Error::QueryError)
    }
}

/// What `plover_lower` gives back: the folded text, or the end of its statement (an error
/// SQLite reports for the whole statement) once the request's unit of work is cancelled or
/// past its time budget.
#[derive(Debug)]
enum Lowered {
    Text(Option<String>),
    Interrupted(Interrupted),
}

impl ToSql<Nullable<Text>, Sqlite> for Lowered {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> diesel::serialize::Result {
        match self {
            Lowered::Text(Some(text)) => {
                out.set_value(text.as_str());
                Ok(IsNull::No)
            }
            Lowered::Text(None) => Ok(IsNull::Yes),
            Lowered::Interrupted(why) => Err(Box::new(*why)),
        }
    }
}
