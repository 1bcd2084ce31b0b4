//! The login throttle's failure counts in the database (table `plover_login_failure`, made at
//! first use), so that every process serving one database shares them: two processes do not
//! allow twice the attempts.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use diesel::sql_types::{BigInt, Integer, Text};
use diesel::RunQueryDsl;

use crate::db::by_engine;
use crate::db::{Conn, LazyConn};
use crate::error::Error;

/// A count of failures and the time of the last one, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count {
    pub(crate) failures: u32,
    pub(crate) last: u64,
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS plover_login_failure (\
     bucket TEXT PRIMARY KEY, failures INTEGER NOT NULL, last_ms BIGINT NOT NULL)";

/// Every this many failures counted by a process, it deletes the counts that ran out.
const PRUNE_EVERY: u32 = 1000;

/// The table of one throttle: whether this process made sure it exists, and how many failures
/// it added since it last deleted the expired ones.
#[derive(Debug, Default)]
pub(crate) struct Table {
    made: AtomicBool,
    added: AtomicU32,
}

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    bucket: String,
    #[diesel(sql_type = Integer)]
    failures: i32,
    #[diesel(sql_type = BigInt)]
    last_ms: i64,
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Table {
    /// Makes the table once per process (another process may make it at the same moment).
    fn make(&self, db: &mut LazyConn<'_>) {
        if self.made.load(Ordering::Relaxed) {
            return;
        }
        if db.write(|conn| conn.batch_execute(CREATE)).is_ok() {
            self.made.store(true, Ordering::Relaxed);
        }
    }

    /// The counts of `keys`; `None` when the database fails (logged: the caller counts in the
    /// process instead).
    pub(crate) fn read(
        &self,
        db: &mut LazyConn<'_>,
        keys: [&str; 2],
    ) -> Option<[Option<Count>; 2]> {
        self.make(db);
        let read = |conn: &mut Conn<'_>| -> Result<Vec<Row>, Error> {
            by_engine!(
                load,
                conn,
                "SELECT bucket, failures, last_ms FROM plover_login_failure \
                 WHERE bucket = ? OR bucket = ?",
                "SELECT bucket, failures, last_ms FROM plover_login_failure \
                 WHERE bucket = $1 OR bucket = $2",
                |q| q.bind::<Text, _>(keys[0]).bind::<Text, _>(keys[1])
            )
        };
        // On the primary: a replica's counts may be a failure or more behind (a throttle read
        // there would let a flood through).
        db.on_primary();
        let rows = db.conn().and_then(|mut conn| read(&mut conn));
        let rows = logged(rows)?;
        Some(keys.map(|key| {
            rows.iter().find(|r| r.bucket == key).map(|r| Count {
                failures: u32::try_from(r.failures).unwrap_or(0),
                last: u64::try_from(r.last_ms).unwrap_or(0),
            })
        }))
    }

    /// Adds a failure at `now` to `key`'s count (one that ran out, `window` after its last
    /// failure, starts again from one), in one statement that every process runs on the same
    /// row. Whether it was counted.
    pub(crate) fn add(&self, db: &mut LazyConn<'_>, key: &str, now: u64, window: u64) -> bool {
        self.make(db);
        let (now, window) = (as_i64(now), as_i64(window));
        let added = db.write(|conn| {
            by_engine!(
                execute,
                conn,
                "INSERT INTO plover_login_failure (bucket, failures, last_ms) VALUES (?1, 1, ?2) \
                 ON CONFLICT (bucket) DO UPDATE SET failures = CASE \
                 WHEN plover_login_failure.last_ms > ?2 - ?3 \
                 AND plover_login_failure.failures < 1000000000 \
                 THEN plover_login_failure.failures + 1 ELSE 1 END, last_ms = ?2",
                "INSERT INTO plover_login_failure (bucket, failures, last_ms) VALUES ($1, 1, $2) \
                 ON CONFLICT (bucket) DO UPDATE SET failures = CASE \
                 WHEN plover_login_failure.last_ms > $2 - $3 \
                 AND plover_login_failure.failures < 1000000000 \
                 THEN plover_login_failure.failures + 1 ELSE 1 END, last_ms = $2",
                |q| q
                    .bind::<Text, _>(key)
                    .bind::<BigInt, _>(now)
                    .bind::<BigInt, _>(window)
            )
        });
        if logged(added).is_none() {
            return false;
        }
        if self.added.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            let cutoff = now.saturating_sub(window);
            let pruned = db.write(|conn| {
                by_engine!(
                    execute,
                    conn,
                    "DELETE FROM plover_login_failure WHERE last_ms <= ?",
                    "DELETE FROM plover_login_failure WHERE last_ms <= $1",
                    |q| q.bind::<BigInt, _>(cutoff)
                )
            });
            logged(pruned);
        }
        true
    }

    /// Deletes `key`'s count.
    pub(crate) fn remove(&self, db: &mut LazyConn<'_>, key: &str) {
        let removed = db.write(|conn| {
            by_engine!(
                execute,
                conn,
                "DELETE FROM plover_login_failure WHERE bucket = ?",
                "DELETE FROM plover_login_failure WHERE bucket = $1",
                |q| q.bind::<Text, _>(key)
            )
        });
        logged(removed);
    }
}

/// The value, or `None` with the error logged.
fn logged<T>(result: Result<T, Error>) -> Option<T> {
    result
        .map_err(|e| log::warn!("accounts: the failed-login counts in the database: {e}"))
        .ok()
}
