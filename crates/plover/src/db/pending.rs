//! Events of the outbox waiting for their transaction's commit (docs/changes.md). The writes
//! of a transaction queue their events here (on the thread that runs it); [`Conn::transaction`]
//! writes them just before it commits, drops those of a savepoint that rolls back, and after
//! the commit tells the readers of the outbox in this process ([`committed`]). On PostgreSQL
//! the first insert of a transaction writes its event in its own statement instead
//! ([`none_yet`], [`written`]); and the events of the rows created after it in a transaction
//! read their rows' JSON from the table at the commit, many by one statement ([`Snapshots`]).
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
use diesel::sql_types::{BigInt, Nullable, Text};
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
    /// A row created in this transaction whose JSON (`after`, `None` meanwhile) is read from
    /// its table when the event is written ([`Snapshots`]): the row as its insert left it,
    /// for nothing else writes it before the commit without [`settle`] first.
    pub(crate) later: Option<&'static dyn Snapshots>,
}

/// The outbox's side of the events whose JSON is read at the commit ([`Event::later`]): one
/// per model that records its changes.
pub(crate) trait Snapshots: Sync + std::fmt::Debug {
    /// Inserts `events` (rows created in this transaction, all of this model, in ascending
    /// key order and of one time and author) with each row's JSON read from its table by the
    /// same statement; with the notification of the other processes when `notify`.
    fn insert(&self, conn: &mut Conn<'_>, events: &[Event], notify: bool) -> Result<(), Error>;

    /// The JSON of the rows with these keys, as the events keep it, by key.
    fn read(&self, conn: &mut Conn<'_>, ids: &[i64]) -> Result<Vec<(i64, String)>, Error>;
}

/// Whether two events' JSON is read by the same [`Snapshots`].
fn same(a: &dyn Snapshots, b: &dyn Snapshots) -> bool {
    std::ptr::addr_eq(a as *const dyn Snapshots, b as *const dyn Snapshots)
}

thread_local! {
    /// The author of the writes running on this thread ([`written_by`]).
    static AUTHOR: Cell<Author> = const { Cell::new(Author::Nobody) };
    /// The events of the transaction running on this thread, not written yet.
    static QUEUE: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
    /// The time of the events of the transaction running on this thread ([`time`]).
    static TIME: Cell<Option<NaiveDateTime>> = const { Cell::new(None) };
    /// Whether the transaction running on this thread wrote events itself ([`written`]).
    static WRITTEN: Cell<bool> = const { Cell::new(false) };
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

/// The time of the events of the writes on `conn`: the same for every event of a
/// transaction (SQLite formats it once), taken at its first event; now outside one.
pub(crate) fn time(conn: &mut Conn<'_>) -> NaiveDateTime {
    if !conn.in_transaction() {
        return crate::value::now();
    }
    TIME.get().unwrap_or_else(|| {
        let now = crate::value::now();
        TIME.set(Some(now));
        now
    })
}

/// Whether the transaction running on this thread has no event yet, queued or [`written`]:
/// then its first write may insert its event itself, in its own statement, and the events
/// after it are queued (so that they keep the order of the writes, and the many events of a
/// bulk write are inserted by a few statements at the commit).
pub(crate) fn none_yet() -> bool {
    !WRITTEN.get() && QUEUE.with_borrow(Vec::is_empty)
}

/// Notes that the statement just run on `conn` inserted events itself: announced after the
/// commit of the transaction open on `conn`, or at once when none is (the statement has
/// committed).
pub(crate) fn written(conn: &mut Conn<'_>) {
    if conn.in_transaction() {
        WRITTEN.set(true);
    } else {
        announce();
    }
}

/// Reads now the JSON of the rows of `model` whose events would read it at the commit
/// ([`Event::later`]): called before a write changes or deletes rows of `model`.
pub(crate) fn settle(conn: &mut Conn<'_>, model: &dyn Snapshots) -> Result<(), Error> {
    let ids: Vec<i64> = QUEUE.with_borrow(|queue| {
        let waiting = queue
            .iter()
            .filter(|e| e.later.is_some_and(|l| same(l, model)));
        waiting.map(|e| e.object_id).collect()
    });
    if ids.is_empty() {
        return Ok(());
    }
    let mut rows = model.read(conn, &ids)?;
    rows.sort_unstable_by_key(|(id, _)| *id);
    QUEUE.with_borrow_mut(|queue| {
        for e in queue.iter_mut() {
            if e.later.is_some_and(|l| same(l, model)) {
                let at = rows.binary_search_by_key(&e.object_id, |(id, _)| *id);
                e.after = at.ok().map(|at| rows[at].1.clone());
                e.later = None;
            }
        }
    });
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

/// Writes the queued events, inside the transaction about to commit; whether the
/// transaction has any (queued or [`written`]).
pub(super) fn flush(conn: &mut Conn<'_>) -> Result<bool, Error> {
    let events = QUEUE.take();
    let written = WRITTEN.take();
    if events.is_empty() {
        return Ok(written);
    }
    write(conn, &events)?;
    Ok(true)
}

/// Forgets the time and the events of the transaction that ended on this thread (committed
/// or rolled back).
pub(super) fn end() {
    TIME.set(None);
    WRITTEN.set(false);
    QUEUE.with_borrow_mut(Vec::clear);
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
/// statements of 128, 64, ..., 1 rows (`n`'s binary digits), so that each connection keeps at
/// most eight of them prepared.
const INSERT_ROWS: usize = 128;

/// The insert of `ROWS` events, with their author ids and (SQLite) their times as text (each
/// bound from here). Its type names its text (`ROWS` rows, a notification with `NOTIFY`), so
/// diesel finds the prepared statement by the type alone: a text built again for the lookup
/// on every use was a sixth of what an event cost a bulk create on SQLite.
struct Insert<'a, const ROWS: usize, const NOTIFY: bool> {
    events: &'a [Event],
    authors: Vec<(Option<i64>, Option<i64>)>,
    /// SQLite: the events' times as diesel writes a timestamp, each distinct time formatted
    /// once (the events of one write share theirs), with the index of each event's.
    stamps: Stamps,
}

/// The distinct times of a chunk of events as SQLite keeps them (`%F %T%.f`), and which one
/// each event has.
#[derive(Default)]
struct Stamps {
    texts: Vec<String>,
    of: Vec<usize>,
}

impl Stamps {
    fn new(events: &[Event]) -> Stamps {
        let mut stamps = Stamps::default();
        let mut last = None;
        for e in events {
            if last != Some(e.created) {
                stamps.texts.push(e.created.format("%F %T%.f").to_string());
                last = Some(e.created);
            }
            stamps.of.push(stamps.texts.len() - 1);
        }
        stamps
    }
}

/// The type that names the text of an [`Insert`] of `ROWS` rows, for diesel's cache.
struct InsertText<const ROWS: usize, const NOTIFY: bool>;

/// Walks `$insert` (an [`Insert`]) into the AST pass `$pass`: the text, each value bound at
/// its placeholder, its time bound by `$stamp` (the event's index and the event); with
/// `$notify`, the rows are selected beside a call of `pg_notify` (the notification of the
/// channel named as the table, in the same statement).
macro_rules! walk_insert {
    ($insert:expr, $pass:ident, $notify:expr, |$r:ident, $e:ident| $stamp:expr) => {{
        let insert = $insert;
        $pass.push_sql("INSERT INTO ");
        $pass.push_sql(TABLE);
        $pass.push_sql(
            " (created, model, object_id, op, fields, user_id, api_key_id, row_before, \
             row_after) ",
        );
        $pass.push_sql(if $notify {
            "SELECT v.* FROM (VALUES "
        } else {
            "VALUES "
        });
        for ($r, ($e, (user, key))) in insert.events.iter().zip(&insert.authors).enumerate() {
            $pass.push_sql(if $r > 0 { ", (" } else { "(" });
            $stamp?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Text, _>($e.model)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<BigInt, _>(&$e.object_id)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Text, _>($e.op)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Text, _>(&$e.fields)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Nullable<BigInt>, _>(user)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Nullable<BigInt>, _>(key)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Nullable<Text>, _>(&$e.before)?;
            $pass.push_sql(", ");
            $pass.push_bind_param::<Nullable<Text>, _>(&$e.after)?;
            $pass.push_sql(")");
        }
        if $notify {
            $pass.push_sql(") AS v, pg_notify('");
            $pass.push_sql(TABLE);
            $pass.push_sql("', '') AS n");
        }
        Ok(())
    }};
}

impl<const ROWS: usize, const NOTIFY: bool> QueryFragment<diesel::sqlite::Sqlite>
    for Insert<'_, ROWS, NOTIFY>
{
    fn walk_ast<'b>(
        &'b self,
        mut pass: AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> QueryResult<()> {
        let stamps = &self.stamps;
        walk_insert!(self, pass, false, |r, e| {
            match stamps.of.get(r).and_then(|&i| stamps.texts.get(i)) {
                Some(text) => pass.push_bind_param::<Text, _>(text),
                None => Err(diesel::result::Error::QueryBuilderError(
                    "an event without its time".into(),
                )),
            }
        })
    }
}

#[cfg(feature = "postgres")]
impl<const ROWS: usize, const NOTIFY: bool> QueryFragment<diesel::pg::Pg>
    for Insert<'_, ROWS, NOTIFY>
{
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        walk_insert!(self, pass, NOTIFY, |r, e| pass
            .push_bind_param::<diesel::sql_types::Timestamp, _>(&e.created))
    }
}

impl<const ROWS: usize, const NOTIFY: bool> QueryId for Insert<'_, ROWS, NOTIFY> {
    type QueryId = InsertText<ROWS, NOTIFY>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<C, const ROWS: usize, const NOTIFY: bool> RunQueryDsl<C> for Insert<'_, ROWS, NOTIFY> {}

/// Whether a writer's insert notifies the other processes of its events: only when no
/// sequencer runs in this process. Otherwise this process's sequencer places them right after
/// the commit and notifies, and every process's sequencer runs once a second anyway: a
/// notification per write would only cost each listening connection a wake-up per commit.
pub(crate) fn notifies() -> bool {
    SEQUENCERS.load(Ordering::Relaxed) == 0
}

/// Inserts `events` into the outbox table, without a place; on PostgreSQL, when
/// [`notifies`], each insert also sends the notification that the commit delivers to the
/// other processes (one per transaction: PostgreSQL folds the same notification sent twice).
fn write(conn: &mut Conn<'_>, events: &[Event]) -> Result<(), Error> {
    let notify = notifies();
    let mut rest = events;
    while let Some(first) = rest.first() {
        // The longest run of events like the first: whose JSON is read by one statement
        // ([`Event::later`]: one model, one time and author, keys ascending), or not.
        let run = 1 + rest.windows(2).take_while(|p| alike(&p[0], &p[1])).count();
        let (run, next) = rest.split_at(run);
        rest = next;
        match first.later {
            Some(model) => model.insert(conn, run, notify)?,
            None => insert_run(conn, run, notify)?,
        }
    }
    Ok(())
}

/// Whether `b` is written by the statement of `a`, which comes before it: both with their
/// JSON ([`insert_run`]), or both read by one [`Snapshots::insert`].
fn alike(a: &Event, b: &Event) -> bool {
    match (a.later, b.later) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            same(x, y)
                && a.object_id < b.object_id
                && a.created == b.created
                && a.author == b.author
        }
        _ => false,
    }
}

/// Inserts `events`, each with its JSON, [`INSERT_ROWS`] at most a statement.
fn insert_run(conn: &mut Conn<'_>, events: &[Event], notify: bool) -> Result<(), Error> {
    let mut rest = events;
    while !rest.is_empty() {
        let rows = 1 << rest.len().min(INSERT_ROWS).ilog2();
        let (chunk, next) = rest.split_at(rows);
        rest = next;
        insert_chunk(conn, chunk, notify).map_err(|e| {
            Error::from(e).explain_missing_table(
                "the events table",
                TABLE,
                "plover::changes::ChangeEvent::meta()",
            )
        })?;
    }
    Ok(())
}

/// Runs the [`Insert`] of `chunk` (a power of two of at most [`INSERT_ROWS`] events).
fn insert_chunk(conn: &mut Conn<'_>, chunk: &[Event], notify: bool) -> QueryResult<usize> {
    fn run<const ROWS: usize, const NOTIFY: bool>(
        conn: &mut Conn<'_>,
        events: &[Event],
    ) -> QueryResult<usize> {
        let authors = events.iter().map(|e| e.author.ids()).collect();
        match conn {
            Conn::Sqlite(c) => {
                let stamps = Stamps::new(events);
                Insert::<ROWS, NOTIFY> {
                    events,
                    authors,
                    stamps,
                }
                .execute(&mut **c)
            }
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                let stamps = Stamps::default();
                Insert::<ROWS, NOTIFY> {
                    events,
                    authors,
                    stamps,
                }
                .execute(&mut **c)
            }
        }
    }
    macro_rules! sizes {
        ($($rows:literal)*) => {
            match (chunk.len(), notify) {
                $(
                    ($rows, false) => run::<$rows, false>(conn, chunk),
                    ($rows, true) => run::<$rows, true>(conn, chunk),
                )*
                (rows, _) => Err(diesel::result::Error::QueryBuilderError(
                    format!("no insert of {rows} events").into(),
                )),
            }
        };
    }
    sizes!(1 2 4 8 16 32 64 128)
}
