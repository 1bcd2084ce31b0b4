//! The dispatcher's position in the outbox: the place of the last event it handed out, in the
//! table `plover_webhook_cursor` (made at first use, one row per dispatcher name), so that
//! every event is handed out once, whichever process dispatches and however often they
//! restart. Every value is a bound parameter.

use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;

use crate::db::Conn;
use crate::error::Error;

/// The table, made at first use.
const CREATE: &str = "CREATE TABLE IF NOT EXISTS plover_webhook_cursor (\
     name VARCHAR(100) NOT NULL PRIMARY KEY, after_id BIGINT NOT NULL)";

/// The advisory lock a PostgreSQL dispatcher holds for its transaction (`"plowhk"` in ASCII).
#[cfg(feature = "postgres")]
const HOLD: i64 = 0x706c_6f77_686b;

#[derive(diesel::QueryableByName)]
struct Position {
    #[diesel(sql_type = BigInt)]
    after_id: i64,
}

/// Whether this write transaction may hand out events: on PostgreSQL, when no other
/// dispatcher holds the transaction-level advisory lock (it is not waited for: the one holding
/// it hands the events out); on SQLite the write transaction is the only one.
pub(super) fn hold(conn: &mut Conn<'_>) -> Result<bool, Error> {
    match conn {
        Conn::Sqlite(_) => Ok(true),
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            #[derive(diesel::QueryableByName)]
            struct Held {
                #[diesel(sql_type = diesel::sql_types::Bool)]
                held: bool,
            }
            let held: Held = diesel::sql_query("SELECT pg_try_advisory_xact_lock($1) AS held")
                .bind::<BigInt, _>(HOLD)
                .get_result(&mut **c)?;
            Ok(held.held)
        }
    }
}

/// Makes the table if it is missing (inside the transaction that [`hold`]s the position).
pub(super) fn create(conn: &mut Conn<'_>) -> Result<(), Error> {
    conn.batch_execute(CREATE)
}

/// The position of the dispatcher `name`: the place of the last event it handed out, or `None` before
/// it ever ran (or when the table is missing: a read outside the held transaction).
pub(super) fn read(conn: &mut Conn<'_>, name: &str) -> Result<Option<i64>, Error> {
    let found: Vec<Position> = match conn {
        Conn::Sqlite(c) => {
            diesel::sql_query("SELECT after_id FROM plover_webhook_cursor WHERE name = ?")
                .bind::<Text, _>(name)
                .load(&mut **c)?
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            diesel::sql_query("SELECT after_id FROM plover_webhook_cursor WHERE name = $1")
                .bind::<Text, _>(name)
                .load(&mut **c)?
        }
    };
    Ok(found.first().map(|p| p.after_id))
}

/// The position of `name`, made at the newest event when it has none: a dispatcher that runs
/// for the first time on a database hands out the events committed from then on.
pub(super) fn position(conn: &mut Conn<'_>, name: &str) -> Result<i64, Error> {
    if let Some(after) = read(conn, name)? {
        return Ok(after);
    }
    let newest = crate::changes::cursor(conn)?;
    let insert = "INSERT INTO plover_webhook_cursor (name, after_id) VALUES (?, ?)";
    match conn {
        Conn::Sqlite(c) => diesel::sql_query(insert)
            .bind::<Text, _>(name)
            .bind::<BigInt, _>(newest)
            .execute(&mut **c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            diesel::sql_query("INSERT INTO plover_webhook_cursor (name, after_id) VALUES ($1, $2)")
                .bind::<Text, _>(name)
                .bind::<BigInt, _>(newest)
                .execute(&mut **c)?
        }
    };
    Ok(read(conn, name)?.unwrap_or(0))
}

/// Moves the position of `name` to `after`.
pub(super) fn advance(conn: &mut Conn<'_>, name: &str, after: i64) -> Result<(), Error> {
    match conn {
        Conn::Sqlite(c) => {
            diesel::sql_query("UPDATE plover_webhook_cursor SET after_id = ? WHERE name = ?")
                .bind::<BigInt, _>(after)
                .bind::<Text, _>(name)
                .execute(&mut **c)?
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            diesel::sql_query("UPDATE plover_webhook_cursor SET after_id = $1 WHERE name = $2")
                .bind::<BigInt, _>(after)
                .bind::<Text, _>(name)
                .execute(&mut **c)?
        }
    };
    Ok(())
}
