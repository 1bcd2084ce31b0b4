//! The two engines: their tables and row types, a pool of either, and [`on_engine!`], which
//! runs one piece of diesel code on whichever engine the connection belongs to.
//!
//! The tables differ in one thing: on SQLite the timestamps are the text the peer's seed
//! stores (`"YYYY-MM-DD HH:MM:SS"`, already the output format, so rows are serialized as they
//! are read, as bench-limit does, cut after the seconds for the fractions of the rows a create
//! stores); on PostgreSQL they are `TIMESTAMP` columns (Plover's DDL), read as `NaiveDateTime`
//! and written out in the same form. A create stores its time to the microsecond on both, as
//! Plover does (fractional seconds are kept: docs/contract.md#objects).

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, PoolError, PooledConnection};
use diesel::{PgConnection, SqliteConnection};

/// SQLite: the peer's tables, timestamps as text.
pub mod sqlite {
    use diesel::prelude::*;
    use serde::Serialize;

    diesel::table! {
        message (id) {
            id -> Integer,
            user_id -> Integer,
            content -> Text,
            pub_date -> Text,
        }
    }

    diesel::table! {
        user (id) {
            id -> Integer,
            username -> Text,
            password -> Text,
            join_date -> Text,
            active -> Bool,
            admin -> Bool,
        }
    }

    diesel::allow_tables_to_appear_in_same_query!(message, user);

    /// A connection of this engine.
    pub type Connection = SqliteConnection;

    /// A message, as the API shows it.
    #[derive(Queryable, Selectable, Serialize)]
    #[diesel(table_name = message, check_for_backend(diesel::sqlite::Sqlite))]
    pub struct Msg {
        pub id: i32,
        pub user_id: i32,
        pub content: String,
        #[serde(serialize_with = "crate::list::text_timestamp")]
        pub pub_date: String,
    }

    /// A user, as the API shows it (no password, no e-mail).
    #[derive(Queryable, Selectable, Serialize)]
    #[diesel(table_name = user, check_for_backend(diesel::sqlite::Sqlite))]
    pub struct UserRow {
        pub id: i32,
        pub username: String,
        pub join_date: String,
        pub active: bool,
        pub admin: bool,
    }

    /// A timestamp as this engine stores it.
    pub fn stamp(t: chrono::NaiveDateTime) -> String {
        t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    }

    /// A write transaction. BEGIN IMMEDIATE: it reads (the user) before it writes, and a
    /// deferred transaction would then fail at once on a concurrent writer instead of waiting.
    pub fn write_transaction<T>(
        conn: &mut Connection,
        f: impl FnOnce(&mut Connection) -> QueryResult<T>,
    ) -> QueryResult<T> {
        conn.immediate_transaction(f)
    }
}

/// PostgreSQL: Plover's tables (the microblog example's DDL), timestamps as `TIMESTAMP`.
pub mod pg {
    use diesel::prelude::*;
    use diesel::Connection as _;
    use serde::Serialize;

    diesel::table! {
        message (id) {
            id -> Integer,
            user_id -> Integer,
            content -> Text,
            pub_date -> Timestamp,
        }
    }

    diesel::table! {
        user (id) {
            id -> Integer,
            username -> Text,
            password -> Text,
            join_date -> Timestamp,
            active -> Bool,
            admin -> Bool,
        }
    }

    diesel::allow_tables_to_appear_in_same_query!(message, user);

    /// A connection of this engine.
    pub type Connection = PgConnection;

    /// A message, as the API shows it.
    #[derive(Queryable, Selectable, Serialize)]
    #[diesel(table_name = message, check_for_backend(diesel::pg::Pg))]
    pub struct Msg {
        pub id: i32,
        pub user_id: i32,
        pub content: String,
        #[serde(serialize_with = "crate::list::timestamp")]
        pub pub_date: chrono::NaiveDateTime,
    }

    /// A user, as the API shows it (no password, no e-mail).
    #[derive(Queryable, Selectable, Serialize)]
    #[diesel(table_name = user, check_for_backend(diesel::pg::Pg))]
    pub struct UserRow {
        pub id: i32,
        pub username: String,
        #[serde(serialize_with = "crate::list::timestamp")]
        pub join_date: chrono::NaiveDateTime,
        pub active: bool,
        pub admin: bool,
    }

    /// A timestamp as this engine stores it.
    pub fn stamp(t: chrono::NaiveDateTime) -> chrono::NaiveDateTime {
        t
    }

    /// A write transaction (PostgreSQL's row locks need nothing more).
    pub fn write_transaction<T>(
        conn: &mut Connection,
        f: impl FnOnce(&mut Connection) -> QueryResult<T>,
    ) -> QueryResult<T> {
        conn.transaction(f)
    }
}

/// Runs `$body` with `$c` bound to the engine's connection and the engine's module in scope
/// as `db` (its tables, row types, `stamp` and `write_transaction`): the code is written once
/// and compiled once per engine, each with its own statically typed, cached statements.
macro_rules! on_engine {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::engine::Conn::Sqlite(pooled) => {
                use $crate::engine::sqlite as db;
                let $c: &mut db::Connection = pooled;
                $body
            }
            $crate::engine::Conn::Pg(pooled) => {
                use $crate::engine::pg as db;
                let $c: &mut db::Connection = pooled;
                $body
            }
        }
    };
}
pub(crate) use on_engine;

/// A pooled connection of either engine.
pub enum Conn {
    Sqlite(PooledConnection<ConnectionManager<SqliteConnection>>),
    Pg(PooledConnection<ConnectionManager<PgConnection>>),
}

/// The pool, for the engine the database URL names.
#[derive(Clone)]
pub enum Pools {
    Sqlite(Pool<ConnectionManager<SqliteConnection>>),
    Pg(Pool<ConnectionManager<PgConnection>>),
}

impl Pools {
    /// A pool of `size` connections to `url` (`sqlite://<file>` or `postgres://...`).
    pub fn open(url: &str, size: u32) -> Result<Pools, String> {
        if let Some(file) = url.strip_prefix("sqlite://") {
            Pool::builder()
                .max_size(size)
                .test_on_check_out(false)
                .connection_customizer(Box::new(SqlitePragmas))
                .build(ConnectionManager::new(file))
                .map(Pools::Sqlite)
                .map_err(|e| format!("{url}: {e}"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // Not tested on checkout: r2d2's test is a `SELECT 1`, one more round trip per
            // request (Plover tests its PostgreSQL connections, to survive a database restart).
            Pool::builder()
                .max_size(size)
                .test_on_check_out(false)
                .build(ConnectionManager::new(url))
                .map(Pools::Pg)
                .map_err(|e| format!("{url}: {e}"))
        } else {
            Err(format!(
                "{url}: not a database URL (sqlite://<file> or postgres://...)"
            ))
        }
    }

    /// A connection from the pool (waits up to r2d2's connection timeout, 30 s).
    pub fn get(&self) -> Result<Conn, PoolError> {
        Ok(match self {
            Pools::Sqlite(pool) => Conn::Sqlite(pool.get()?),
            Pools::Pg(pool) => Conn::Pg(pool.get()?),
        })
    }

    /// Whether this is SQLite, whose writers are serialized in process (see `main.rs`).
    pub fn is_sqlite(&self) -> bool {
        matches!(self, Pools::Sqlite(_))
    }
}

impl Conn {
    /// Runs SQL text (schema set-up only, never request data).
    pub fn batch_execute(&mut self, sql: &str) -> diesel::QueryResult<()> {
        match self {
            Conn::Sqlite(c) => c.batch_execute(sql),
            Conn::Pg(c) => c.batch_execute(sql),
        }
    }
}

/// The pragmas Plover sets on its SQLite connections that bear on speed and durability
/// (WAL, synchronous = NORMAL), so that both write to the file alike; bench-limit, which does
/// not write, sets only the first and the last.
#[derive(Debug)]
struct SqlitePragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; \
             PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}
