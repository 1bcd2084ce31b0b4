//! SQLite connection set-up: pragmas and the Unicode-aware `plover_lower` function.

use diesel::connection::SimpleConnection;
use diesel::r2d2::{CustomizeConnection, Error as R2d2Error};
use diesel::sql_types::{Nullable, Text};
use diesel::SqliteConnection;

use super::{Config, ConfigError};

diesel::define_sql_function! {
    /// Lower-cases text for all of Unicode (SQLite's own `lower` handles ASCII only); used by
    /// the `ilike` filter on SQLite.
    fn plover_lower(x: Nullable<Text>) -> Nullable<Text>;
}

/// Applies Plover's pragmas to every new SQLite connection.
#[derive(Debug)]
pub(super) struct Customizer {
    pragmas: String,
}

impl Customizer {
    pub(super) fn from_config(config: &Config) -> Result<Customizer, ConfigError> {
        let busy = config.number("busy_timeout", 5000.0)? as u64;
        Ok(Customizer {
            pragmas: format!(
                "PRAGMA busy_timeout = {busy}; PRAGMA journal_mode = WAL; \
                 PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                 PRAGMA case_sensitive_like = ON;"
            ),
        })
    }
}

impl CustomizeConnection<SqliteConnection, R2d2Error> for Customizer {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), R2d2Error> {
        conn.batch_execute(&self.pragmas)
            .map_err(R2d2Error::QueryError)?;
        plover_lower_utils::register_impl(conn, |s: Option<String>| s.map(|s| s.to_lowercase()))
            .map_err(R2d2Error::QueryError)
    }
}
