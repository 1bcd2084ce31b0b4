//! Events of the outbox waiting for their transaction's commit (docs/changes.md). The writes
//! of a transaction queue their events here (on the thread that runs it); [`Conn::transaction`]
//! writes them just before it commits, drops those of a savepoint that rolls back, and after
//! the commit tells the readers of the outbox in this process ([`committed`]).
//!
//! Writers take no lock: on PostgreSQL their events are inserted without a place, and the
//! sequencer ([`crate::changes::order`]) gives them their places in commit order once they
//! have committed. A commit of events wakes the sequencers of this process ([`kick`]), which
//! notify the other processes once they placed the events (a process that runs none notifies
//! them at its commit instead); the sequencer then wakes the readers ([`placed`]). Without a sequencer in this process (SQLite,
//! or no feed served yet), a commit wakes the readers at once.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
#[cfg(feature = "postgres")]
use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamp};
use diesel::{QueryResult, RunQueryDsl};
use tokio::sync::watch;

use super::Conn;
use crate::error::Error;

/// The table of events (`changes::ChangeEvent` describes it).
pub(crate) const TABLE: &str = "plover_event";

/// The PostgreSQL notification channel a committed event is announced on.
#[cfg(feature = "postgres")]
pub(crate) const CHANNEL: &str = "plover_event";

/// Who makes the writes of the current unit of work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Author {
    /// Nobody known (a management command, an anonymous request).
    #[default]
    Nobody,
    /// A user, by primary key.
    User(i64),
    /// An API key, by primary key.
    ApiKey(i64),
}

impl Author {
    /// The user's and the API key's primary keys.
    pub(crate) fn ids(self) -> (Option<i64>, Option<i64>) {
        match self {
            Author::Nobody => (None, None),
            Author::User(id) => (Some(id), None),
            Author::ApiKey(id) => (None, Some(id)),
        }
    }
}

/// One event, as the outbox table keeps it.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) created: NaiveDateTime,
    pub(crate) model: &'static str,
    pub(crate) object_id: i64,
    pub(crate) op: &'static str,
    /// A JSON array of field names.
    pub(crate) fields: String,
    pub(crate) author: Author,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

thread_local! {
    /// The author of the writes running on this thread ([`written_by`]).
    static AUTHOR: Cell<Author> = const { Cell::new(Author::Nobody) };
    /// The events of the transaction running on this thread, not written yet.
    static QUEUE: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (the database work of one request) with its events recorded as `author`'s.
pub(crate) fn written_by<R>(author: Author, f: impl FnOnce() -> R) -> R {
    let before = AUTHOR.replace(author);
    let out = f();
    AUTHOR.set(before);
    out
}

/// Makes `author` the author of the writes that follow on this thread, until the
/// [`written_by`] around them ends.
pub(crate) fn set_author(author: Author) {
    AUTHOR.set(author);
}

/// The author of the writes running on this thread.
pub(crate) fn author() -> Author {
    AUTHOR.get()
}

/// Queues `events` for the commit of the transaction open on `conn`; outside a transaction,
/// writes them at once (the statement that made them has committed already).
pub(crate) fn push(conn: &mut Conn<'_>, events: Vec<Event>) -> Result<(), Error> {
    if events.is_empty() {
        return Ok(());
    }
    if conn.in_transaction() {
        QUEUE.with_borrow_mut(|queue| queue.extend(events));
        return Ok(());
    }
    write(conn, &events)?;
    announce();
    Ok(())
}

/// How many events are queued: where a savepoint starts.
pub(super) fn mark() -> usize {
    QUEUE.with_borrow(Vec::len)
}

/// Drops the events queued since `mark` (a savepoint rolled back, or the whole transaction).
pub(super) fn drop_since(mark: usize) {
    QUEUE.with_borrow_mut(|queue| queue.truncate(mark));
}

/// Writes the queued events, inside the transaction about to commit; whether there were any.
pub(super) fn flush(conn: &mut Conn<'_>) -> Result<bool, Error> {
    let events = QUEUE.take();
    if events.is_empty() {
        return Ok(false);
    }
    write(conn, &events)?;
    Ok(true)
}

/// The counter of the times events may have become readable (committed on SQLite, placed on
/// PostgreSQL): readers of the outbox wait for it to change.
fn commits() -> &'static watch::Sender<u64> {
    static COMMITS: OnceLock<watch::Sender<u64>> = OnceLock::new();
    COMMITS.get_or_init(|| watch::Sender::new(0))
}

/// A receiver that changes when events may have become readable since.
pub(crate) fn committed() -> watch::Receiver<u64> {
    commits().subscribe()
}

/// Tells the readers of the outbox in this process that events may have become readable.
pub(crate) fn placed() {
    commits().send_modify(|n| *n = n.wrapping_add(1));
}

/// Tells this process that events were committed: its sequencers run (they wake the readers
/// after), or, when none runs, its readers look at once.
pub(crate) fn announce() {
    if SEQUENCERS.load(Ordering::Relaxed) > 0 {
        kick();
    } else {
        placed();
    }
}

/// The number of sequencer threads running in this process.
static SEQUENCERS: AtomicUsize = AtomicUsize::new(0);

/// Counts a running sequencer while it is kept.
#[cfg(feature = "postgres")]
pub(crate) struct Sequencing(());

/// Counts the calling sequencer among the running ones until the value is dropped.
#[cfg(feature = "postgres")]
pub(crate) fn sequencing() -> Sequencing {
    SEQUENCERS.fetch_add(1, Ordering::Relaxed);
    Sequencing(())
}

#[cfg(feature = "postgres")]
impl Drop for Sequencing {
    fn drop(&mut self) {
        SEQUENCERS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The counter of the sequencers' wake-ups, and its signal.
fn kicks_signal() -> &'static (Mutex<u64>, Condvar) {
    static KICKS: OnceLock<(Mutex<u64>, Condvar)> = OnceLock::new();
    KICKS.get_or_init(|| (Mutex::new(0), Condvar::new()))
}

/// Wakes the sequencers of this process.
pub(crate) fn kick() {
    let (count, signal) = kicks_signal();
    let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
    *n = n.wrapping_add(1);
    signal.notify_all();
}

/// The wake-ups so far: where a sequencer starts waiting from.
#[cfg(feature = "postgres")]
pub(crate) fn kicks() -> u64 {
    *kicks_signal().0.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits until a wake-up after `seen` (then moves `seen` to it) or for `timeout`.
#[cfg(feature = "postgres")]
pub(crate) fn wait_kick(seen: &mut u64, timeout: Duration) {
    let (count, signal) = kicks_signal();
    let n = count.lock().unwrap_or_else(|e| e.into_inner());
    let (n, _) = signal
        .wait_timeout_while(n, timeout, |n| *n == *seen)
        .unwrap_or_else(|e| e.into_inner());
    *seen = *n;
}

/// The most events one insert statement writes: a chunk of `n` events is written by
/// statements of 64, 32, ..., 1 rows (`n`'s binary digits), so that each connection keeps at
/// most seven of them prepared.
const INSERT_ROWS: usize = 64;

/// The insert of a chunk of events, with its author ids (each bound from here). Its text
/// depends only on the number of rows, so diesel keeps it prepared (`sql_query`'s never is:
/// SQLite parsed the text of every insert again, a tenth of a bulk create's time).
struct Insert<'a> {
    events: &'a [Event],
    authors: Vec<(Option<i64>, Option<i64>)>,
    /// PostgreSQL: whether the insert also notifies the other processes ([`notifies`]).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    notify: bool,
}

/// Walks `$insert` (an [`Insert`]) into the AST pass `$pass`: the text, each value bound at
/// its placeholder; with `$notify`, the rows are selected beside a call of `pg_notify` (the
/// notification of the channel named as the table, in the same statement).
macro_rules! walk_insert {
    ($insert:expr, $pass:expr, $notify:expr) => {{
        let (insert, pass) = ($insert, &mut $pass);
        pass.push_sql("INSERT INTO ");
        pass.push_sql(TABLE);
        pass.push_sql(
            " (created, model, object_id, op, fields, user_id, api_key_id, row_before, \
             row_after) ",
        );
        pass.push_sql(if $notify {
            "SELECT v.* FROM (VALUES "
        } else {
            "VALUES "
        });
        for (r, (e, (user, key))) in insert.events.iter().zip(&insert.authors).enumerate() {
            pass.push_sql(if r > 0 { ", (" } else { "(" });
            pass.push_bind_param::<Timestamp, _>(&e.created)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Text, _>(e.model)?;
            pass.push_sql(", ");
            pass.push_bind_param::<BigInt, _>(&e.object_id)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Text, _>(e.op)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Text, _>(&e.fields)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Nullable<BigInt>, _>(user)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Nullable<BigInt>, _>(key)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Nullable<Text>, _>(&e.before)?;
            pass.push_sql(", ");
            pass.push_bind_param::<Nullable<Text>, _>(&e.after)?;
            pass.push_sql(")");
        }
        if $notify {
            pass.push_sql(") AS v, pg_notify('");
            pass.push_sql(TABLE);
            pass.push_sql("', '') AS n");
        }
        Ok(())
    }};
}

impl QueryFragment<diesel::sqlite::Sqlite> for Insert<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut pass: AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> QueryResult<()> {
        walk_insert!(self, pass, false)
    }
}

#[cfg(feature = "postgres")]
impl QueryFragment<diesel::pg::Pg> for Insert<'_> {
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        walk_insert!(self, pass, self.notify)
    }
}

impl QueryId for Insert<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<C> RunQueryDsl<C> for Insert<'_> {}

/// Whether a writer's insert notifies the other processes of its events: only when no
/// sequencer runs in this process. Otherwise this process's sequencer places them right after
/// the commit and notifies, and every process's sequencer runs once a second anyway: a
/// notification per write would only cost each listening connection a wake-up per commit.
fn notifies() -> bool {
    SEQUENCERS.load(Ordering::Relaxed) == 0
}

/// Inserts `events` into the outbox table, without a place; on PostgreSQL, when
/// [`notifies`], each insert also sends the notification that the commit delivers to the
/// other processes (one per transaction: PostgreSQL folds the same notification sent twice).
fn write(conn: &mut Conn<'_>, events: &[Event]) -> Result<(), Error> {
    let mut rest = events;
    while !rest.is_empty() {
        let rows = 1 << rest.len().min(INSERT_ROWS).ilog2();
        let (chunk, next) = rest.split_at(rows);
        rest = next;
        let insert = Insert {
            events: chunk,
            authors: chunk.iter().map(|e| e.author.ids()).collect(),
            notify: notifies(),
        };
        let done = match conn {
            Conn::Sqlite(c) => insert.execute(&mut **c),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => insert.execute(&mut **c),
        };
        done.map_err(|e| {
            Error::from(e).explain_missing_table(
                "the events table",
                TABLE,
                "plover::changes::ChangeEvent::meta()",
            )
        })?;
    }
    Ok(())
}
