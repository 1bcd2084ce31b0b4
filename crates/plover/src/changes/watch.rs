//! The watch of a database's outbox, one thread per database in each process that serves a
//! feed or webhooks (docs/changes.md#across-processes): it wakes this process's streams when
//! another process commits events (PostgreSQL: `LISTEN`, which wakes the sequencer of
//! [`super::order`] first, a second thread; SQLite: a poll of the newest id every [`POLL`]),
//! and removes the events older than the retention, a bounded batch at a time. Commits of this
//! process wake its streams at once (through the sequencer on PostgreSQL), without it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::order::{self, bound};
use super::ChangeEvent;
use crate::db::{pending, Conn, Database, Engine, WeakDatabase};
use crate::error::Error;
use crate::query::Op;
use crate::views::Query;

/// How often the watch looks for events of other processes (SQLite: a query).
const POLL: Duration = Duration::from_millis(200);

/// How often the watch reads the notifications that arrived (PostgreSQL: a read of the
/// connection's socket that does not block, no statement): diesel gives no way to wait for
/// one, so the wait is this short poll.
#[cfg(feature = "postgres")]
const LISTEN_POLL: Duration = Duration::from_millis(20);

/// How often it removes old events.
const CLEAN_EVERY: Duration = Duration::from_secs(60);

/// The most events one clean-up removes.
const CLEAN_BATCH: i64 = 1_000;

/// The retention in seconds ([`super::retain`]); 7 days unless set.
static RETENTION: AtomicU64 = AtomicU64::new(7 * 24 * 3600);

/// Sets the retention of events.
pub(super) fn set_retention(keep: Duration) {
    RETENTION.store(keep.as_secs().max(1), Ordering::Relaxed);
}

/// Starts the watch of `db` unless this process watches it already.
pub(crate) fn start(db: &Database) {
    if !db.first_watch() {
        return;
    }
    let weak = db.downgrade();
    let engine = db.engine();
    if engine == Engine::Postgres {
        let weak = db.downgrade();
        spawn("plover-sequencer", move || order::run(&weak));
    }
    spawn("plover-outbox", move || match engine {
        Engine::Sqlite => poll(&weak),
        Engine::Postgres => listen(&weak),
    });
}

/// Starts the thread `name` running `f`.
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(f) {
        log::error!("the thread {name} of the outbox could not start: {e}");
    }
}

/// SQLite: wakes the streams when the newest event id changes.
fn poll(weak: &WeakDatabase) {
    let mut newest = None;
    let mut cleaned = Instant::now();
    while let Some(db) = weak.upgrade() {
        let seen = db.run_blocking(cursor);
        match seen {
            Ok(id) => {
                if newest.is_some_and(|n| n != id) {
                    pending::placed();
                }
                newest = Some(id);
            }
            Err(e) => log::warn!("the watch of the outbox: {e}"),
        }
        clean_if_due(&db, &mut cleaned);
        drop(db);
        std::thread::sleep(POLL);
    }
}

/// PostgreSQL: listens for the notification each commit of events sends, on a connection of
/// its own (made again after a failure).
#[cfg(feature = "postgres")]
fn listen(weak: &WeakDatabase) {
    use diesel::connection::SimpleConnection;
    let mut cleaned = Instant::now();
    'connect: while let Some(db) = weak.upgrade() {
        let Some(Ok(mut conn)) = db.dedicated() else {
            drop(db);
            std::thread::sleep(Duration::from_secs(1));
            continue;
        };
        if let Err(e) = conn.batch_execute(&format!("LISTEN {}", pending::CHANNEL)) {
            log::warn!("the watch of the outbox: {e}");
            continue;
        }
        // Events committed before LISTEN took effect: placed, then the streams look once more.
        order::heard();
        drop(db);
        loop {
            std::thread::sleep(LISTEN_POLL);
            let Some(db) = weak.upgrade() else { return };
            let mut heard = false;
            for note in conn.notifications_iter() {
                match note {
                    Ok(_) => heard = true,
                    Err(e) => {
                        log::warn!("the watch of the outbox: {e}");
                        continue 'connect;
                    }
                }
            }
            if heard {
                order::heard();
            }
            clean_if_due(&db, &mut cleaned);
        }
    }
}

#[cfg(not(feature = "postgres"))]
fn listen(_: &WeakDatabase) {}

/// The place of the newest event ([`ChangeEvent::place`]; 0: none): read in one
/// [snapshot](crate::db::Conn::snapshot) with a page, the position after which a change feed
/// has every change the page does not show (`?after=`), as the `changes_cursor` of a REST list
/// (`?changes=cursor`) is. On PostgreSQL the events of transactions that committed just before
/// the snapshot may not have their places yet: they get larger ones, so the feed after the
/// cursor still has them, and shows again those of their rows that the page shows.
pub fn cursor(conn: &mut Conn<'_>) -> Result<i64, Error> {
    Ok(bound(conn, true)?.unwrap_or(0))
}

fn clean_if_due(db: &Database, cleaned: &mut Instant) {
    if cleaned.elapsed() < CLEAN_EVERY {
        return;
    }
    *cleaned = Instant::now();
    if let Err(e) = db.run_blocking(clean) {
        log::warn!("the clean-up of the outbox: {e}");
    }
}

/// Removes up to [`CLEAN_BATCH`] of the oldest events, those placed before the first event
/// younger than the retention, never the newest event (a resuming stream tells by it whether
/// events after its position are gone), nor one without a place; the number removed. Writes
/// only when there is something to remove.
pub(crate) fn clean(conn: &mut Conn<'_>) -> Result<usize, Error> {
    let keep = Duration::from_secs(RETENTION.load(Ordering::Relaxed));
    let cutoff = crate::value::now() - chrono::Duration::from_std(keep).unwrap_or_default();
    let Some(newest) = bound(conn, true)? else {
        return Ok(0);
    };
    let engine = conn.engine();
    let young = Query::<ChangeEvent>::new().filter(ChangeEvent::FIELDS.created, Op::Gte, cutoff);
    let young = order::after(engine, young, 0).first(conn)?;
    let end = young.map_or(newest, |e| e.place().min(newest));
    let old = order::before(engine, end).limit(CLEAN_BATCH);
    if !old.exists(conn)? {
        return Ok(0);
    }
    conn.transaction(|conn| old.delete(conn))
}
