//! Database configuration: a mapping with `name`, `engine` and driver options, or a URL.

use std::collections::BTreeMap;

/// Options that Plover reads itself (the pool, the statements' time budget); every engine
/// accepts them (`reserved_for_writes` matters on PostgreSQL only: SQLite's writes have a
/// turn of their own).
pub(crate) const OWN_OPTIONS: [&str; 6] = [
    "max_connections",
    "reserved_for_writes",
    "connection_timeout",
    "threadlocals",
    "statement_timeout",
    "read_memory",
];

/// The environment variable listing a database's read replicas: PostgreSQL URLs separated by
/// commas ([`Config::replicas_from_env`]).
pub const REPLICAS_VAR: &str = "PLOVER_DATABASE_REPLICAS";

/// Options of a PostgreSQL database with replicas: the lag past which a replica is skipped
/// (seconds, default 5) and the time between health checks (seconds, default 0.5).
#[cfg(feature = "postgres")]
pub(crate) const REPLICA_OPTIONS: [&str; 2] = ["replica_max_lag", "replica_check_every"];

/// A supported database engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// SQLite, embedded (the default).
    Sqlite,
    /// PostgreSQL (Plover's `postgres` feature): `name` is a libpq connection URL.
    Postgres,
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("database configuration: {0}")]
pub struct ConfigError(pub String);

/// The database configuration mapping (docs/contract.md#database).
#[derive(Debug, Clone)]
pub struct Config {
    /// The database file (SQLite) or name.
    pub name: String,
    /// The engine.
    pub engine: Engine,
    /// Driver options: `max_connections`, `connection_timeout` (seconds), `busy_timeout`
    /// (milliseconds, SQLite), `cache_size` (KiB per connection, SQLite), `mmap_size` (bytes,
    /// SQLite); `threadlocals` is accepted and has no effect.
    pub options: BTreeMap<String, String>,
    /// URLs of PostgreSQL streaming replicas of this database, which may serve reads
    /// (docs/deployment.md#read-replicas); empty by default. SQLite refuses them.
    pub replicas: Vec<String>,
}

impl Config {
    /// An SQLite database in the file `name`.
    pub fn sqlite(name: impl Into<String>) -> Config {
        Config {
            name: name.into(),
            engine: Engine::Sqlite,
            options: BTreeMap::new(),
            replicas: Vec::new(),
        }
    }

    /// A PostgreSQL URL: Plover's own options are taken out of the query string, the rest
    /// (e.g. `sslmode`) stays in the URL for libpq.
    fn postgres_url(base: &str, query: &str) -> Config {
        let mut options = BTreeMap::new();
        let mut driver = form_urlencoded::Serializer::new(String::new());
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            if OWN_OPTIONS.contains(&k.as_ref()) {
                options.insert(k.into_owned(), v.into_owned());
            } else {
                driver.append_pair(&k, &v);
            }
        }
        // libpq does not read `+` as a space: a `+` here can only be an encoded space, since
        // the serializer encodes a literal `+` as `%2B`.
        let driver = driver.finish().replace('+', "%20");
        let name = if driver.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{driver}")
        };
        Config {
            name,
            engine: Engine::Postgres,
            options,
            replicas: Vec::new(),
        }
    }

    /// Adds a driver option.
    pub fn option(mut self, key: impl Into<String>, value: impl ToString) -> Config {
        self.options.insert(key.into(), value.to_string());
        self
    }

    /// Adds a streaming replica (a PostgreSQL URL) that may serve reads.
    pub fn replica(mut self, url: impl Into<String>) -> Config {
        self.replicas.push(url.into());
        self
    }

    /// Adds the replicas of the environment variable [`REPLICAS_VAR`]
    /// (`PLOVER_DATABASE_REPLICAS`: PostgreSQL URLs separated by commas), if it is set.
    pub fn replicas_from_env(self) -> Config {
        let listed = std::env::var(REPLICAS_VAR).unwrap_or_default();
        self.replicas_from_list(&listed)
    }

    /// Adds the replicas of a comma-separated list of URLs (blank items are ignored).
    pub fn replicas_from_list(mut self, list: &str) -> Config {
        let urls = list.split(',').map(str::trim).filter(|u| !u.is_empty());
        self.replicas.extend(urls.map(str::to_owned));
        self
    }

    /// Reads a configuration mapping: `engine` (`sqlite`, the default), `name`, and options.
    pub fn from_map<'a>(
        map: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Config, ConfigError> {
        let mut engine = Engine::Sqlite;
        let mut name = None;
        let mut options = BTreeMap::new();
        for (k, v) in map {
            match k {
                "engine" => {
                    engine = match v {
                        "sqlite" | "sqlite3" => Engine::Sqlite,
                        "postgres" | "postgresql" => Engine::Postgres,
                        other => return Err(ConfigError(format!("unsupported engine '{other}'"))),
                    }
                }
                "name" | "database" => name = Some(v.to_owned()),
                _ => {
                    options.insert(k.to_owned(), v.to_owned());
                }
            }
        }
        let name = name.ok_or_else(|| ConfigError("missing 'name'".into()))?;
        Ok(Config {
            name,
            engine,
            options,
            replicas: Vec::new(),
        })
    }

    /// Reads a URL: `sqlite://path/to/file.db` (`sqlite:///abs/path.db` for an absolute path),
    /// or `postgres://user:pass@host:port/db` (`postgresql://` too), with options as a query
    /// string (`?max_connections=4`). A plain path means SQLite.
    pub fn from_url(url: &str) -> Result<Config, ConfigError> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        if let Some(("postgres" | "postgresql", _)) = base.split_once("://") {
            return Ok(Config::postgres_url(base, query));
        }
        let mut config = match base.split_once("://") {
            Some(("sqlite", path)) if !path.is_empty() => Config::sqlite(path),
            Some((scheme, _)) => {
                return Err(ConfigError(format!(
                    "unsupported database URL scheme '{scheme}'"
                )))
            }
            None if !base.is_empty() => Config::sqlite(base),
            None => return Err(ConfigError("empty database URL".into())),
        };
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            config.options.insert(k.into_owned(), v.into_owned());
        }
        Ok(config)
    }

    /// Refuses options that no engine reads, so that a typo does not go unnoticed.
    pub(crate) fn check_options(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self.options.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(ConfigError(format!(
                "unknown option '{k}' (known: {})",
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// A numeric option, or its default.
    pub(crate) fn number(&self, key: &str, default: f64) -> Result<f64, ConfigError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| ConfigError(format!("option '{key}' must be a number, not '{v}'"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let c = Config::from_url("sqlite:///tmp/x.db?max_connections=3").map_err(|e| e.0);
        let c = c
            .as_ref()
            .map(|c| (c.name.as_str(), c.options.get("max_connections").cloned()));
        assert_eq!(c, Ok(("/tmp/x.db", Some("3".to_owned()))));
        assert!(Config::from_url("mysql://x").is_err());
        assert_eq!(
            Config::from_url("app.db").map(|c| c.name).ok(),
            Some("app.db".to_owned())
        );
    }

    #[test]
    fn postgres_urls_keep_driver_options() {
        let c = Config::from_url(
            "postgresql://u:p@h:5/db?max_connections=3&sslmode=disable&application_name=a%20b",
        );
        let c = c.map(|c| (c.engine, c.name, c.options.get("max_connections").cloned()));
        assert_eq!(
            c.ok(),
            Some((
                Engine::Postgres,
                "postgresql://u:p@h:5/db?sslmode=disable&application_name=a%20b".to_owned(),
                Some("3".to_owned())
            ))
        );
    }

    #[test]
    fn mapping() {
        let c = Config::from_map([
            ("name", "a.db"),
            ("engine", "sqlite"),
            ("threadlocals", "true"),
        ]);
        assert!(c.is_ok_and(|c| c.name == "a.db" && c.options.contains_key("threadlocals")));
        assert!(Config::from_map([("engine", "oracle"), ("name", "x")]).is_err());
    }

    #[test]
    fn replica_lists() {
        let c = Config::sqlite("x").replicas_from_list(" postgres://a/x , ,postgres://b/x,");
        assert_eq!(c.replicas, ["postgres://a/x", "postgres://b/x"]);
    }
}
