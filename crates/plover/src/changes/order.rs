//! The order of the outbox (docs/changes.md#order): every reader (a feed, the list's
//! snapshot cursor, the clean-up, the webhooks' dispatcher) reads and compares events by their
//! place ([`ChangeEvent::place`]) through this module, so that a reader that has seen place `N`
//! never later sees a smaller one appear.
//!
//! SQLite has one writer at a time: ids follow the commits, and the id is the place (the
//! `position` column stays empty; readers ask for `position IS NULL AND id > n`, a range of
//! the primary key, the table's only index). A write costs no more than its insert.
//!
//! PostgreSQL commits transactions in any order, so writers insert their events with no place
//! and no lock, and the *sequencer* gives places afterwards: one statement, serialized across
//! every process by a transaction-level advisory lock, numbers every committed event without a
//! place after the largest place, in id order, and commits. Each run sees the previous run's
//! commit, so places appear in increasing order, and an event whose transaction commits during
//! a run gets its place from the next one. Each process that serves a feed or webhooks runs a
//! sequencer thread, woken by this process's commits of events and by the notification other
//! processes' commits send; a list's snapshot cursor and a feed's start run it once first, so
//! that what committed before them has its place.

#[cfg(feature = "postgres")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "postgres")]
use std::time::Duration;

use super::ChangeEvent;
#[cfg(feature = "postgres")]
use crate::db::pending;
use crate::db::{Conn, Engine, WeakDatabase};
use crate::error::Error;
use crate::model::Field;
use crate::query::{Op, Param};
use crate::views::Query;

/// The advisory lock that serializes the sequencer's runs (`"ploevt"` in ASCII).
#[cfg(feature = "postgres")]
const ORDER_LOCK: i64 = 0x706c_6f65_7674;

/// The most events one run of the sequencer places: a larger backlog takes several runs.
#[cfg(feature = "postgres")]
const RUN: i64 = 10_000;

/// How often an idle sequencer runs anyway (a notification lost with a connection).
#[cfg(feature = "postgres")]
const IDLE: Duration = Duration::from_secs(1);

/// `query` narrowed to the events that have a place on `engine`, with the column that holds
/// it.
fn placed(engine: Engine, query: Query<ChangeEvent>) -> (Field<ChangeEvent>, Query<ChangeEvent>) {
    let f = ChangeEvent::FIELDS;
    match engine {
        Engine::Sqlite => (f.id, query.filter(f.position, Op::Is, Param::Null)),
        Engine::Postgres => (f.position, query.filter(f.position, Op::Gt, 0)),
    }
}

/// The events of `query` with a place after `after`, in place order.
pub(crate) fn after(engine: Engine, query: Query<ChangeEvent>, after: i64) -> Query<ChangeEvent> {
    let (place, query) = placed(engine, query);
    query.filter(place, Op::Gt, after).order_by(place)
}

/// The events with a place before `before`, oldest first.
pub(crate) fn before(engine: Engine, before: i64) -> Query<ChangeEvent> {
    let (place, query) = placed(engine, Query::new());
    query.filter(place, Op::Lt, before).order_by(place)
}

/// The place of the oldest (`newest` false) or newest event that has one.
pub(crate) fn bound(conn: &mut Conn<'_>, newest: bool) -> Result<Option<i64>, Error> {
    let (place, query) = placed(conn.engine(), Query::new());
    let query = match newest {
        true => query.order_by_desc(place),
        false => query.order_by(place),
    };
    Ok(query.first(conn)?.map(|e| e.place()))
}

/// PostgreSQL: gives their places to the events committed so far, unless a transaction is
/// open on `conn` (its work would commit with it); then wakes this process's readers. Nothing
/// on SQLite.
pub(crate) fn settle(conn: &mut Conn<'_>) -> Result<(), Error> {
    if conn.in_transaction() {
        return Ok(());
    }
    #[cfg(feature = "postgres")]
    if let Conn::Pg(c) = conn {
        while sequence(c)? == RUN as usize {}
        pending::placed();
    }
    Ok(())
}

/// The statement of a run: the next [`RUN`] events without a place (by id), numbered after
/// the largest place.
#[cfg(feature = "postgres")]
fn place() -> String {
    format!(
        "WITH top AS (SELECT COALESCE(MAX(position), 0) AS p FROM {t}), \
         todo AS (SELECT id, row_number() OVER (ORDER BY id) AS n \
         FROM (SELECT id FROM {t} WHERE position IS NULL ORDER BY id LIMIT {RUN}) AS t) \
         UPDATE {t} AS e SET position = top.p + todo.n FROM top, todo WHERE e.id = todo.id",
        t = pending::TABLE
    )
}

/// One run of the sequencer in a transaction of its own: the number of events placed. Runs
/// wait for each other (the lock); the statement, taken after the lock, sees the places of
/// the run before it. A run that placed events notifies the other processes at its commit.
#[cfg(feature = "postgres")]
fn sequence(c: &mut diesel::PgConnection) -> Result<usize, Error> {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, RunQueryDsl};
    let placed = c.transaction(|c| {
        c.batch_execute(&format!("SELECT pg_advisory_xact_lock({ORDER_LOCK})"))?;
        let placed = diesel::sql_query(place()).execute(c)?;
        if placed > 0 {
            c.batch_execute(&format!("NOTIFY {}", pending::CHANNEL))?;
        }
        diesel::QueryResult::Ok(placed)
    });
    placed.map_err(|e| {
        Error::from(e).explain_missing_table(
            "the events table",
            pending::TABLE,
            "plover::changes::ChangeEvent::meta()",
        )
    })
}

/// Whether another process's notification was heard since the sequencer's last run: its
/// events may have been placed by that process, and the readers of this one must look.
#[cfg(feature = "postgres")]
static HEARD: AtomicBool = AtomicBool::new(false);

/// The watch heard another process's notification: the sequencer runs, then the readers look.
#[cfg(feature = "postgres")]
pub(crate) fn heard() {
    HEARD.store(true, Ordering::Relaxed);
    pending::kick();
}

/// PostgreSQL: the sequencer's thread, on a connection of its own (made again after a
/// failure): a run after each commit of events in this process, each notification heard, and
/// every [`IDLE`]; after a run that placed events or follows a notification, the readers of
/// this process look.
#[cfg(feature = "postgres")]
pub(crate) fn run(weak: &WeakDatabase) {
    let _running = pending::sequencing();
    let mut seen = pending::kicks();
    let mut conn = None;
    while let Some(db) = weak.upgrade() {
        if conn.is_none() {
            conn = db.dedicated().and_then(Result::ok);
        }
        drop(db);
        let remote = HEARD.swap(false, Ordering::Relaxed);
        let mut full = false;
        if let Some(c) = conn.as_mut() {
            match sequence(c) {
                Ok(placed) => {
                    full = placed == RUN as usize;
                    if placed > 0 || remote {
                        pending::placed();
                    }
                }
                Err(e) => {
                    log::warn!("the sequencer of the outbox: {e}");
                    conn = None;
                }
            }
        }
        if !full {
            pending::wait_kick(&mut seen, IDLE);
        }
    }
}

#[cfg(not(feature = "postgres"))]
pub(crate) fn run(_: &WeakDatabase) {}
