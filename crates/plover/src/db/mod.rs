//! The database wrapper (docs/contract.md#database): configuration, a pool, one connection
//! per unit of work, and blocking diesel calls kept off the actix worker threads.

pub(crate) mod cancel;
mod config;
mod extract;
mod gate;
pub(crate) mod pending;
#[cfg(feature = "postgres")]
mod pg_pool;
pub(crate) mod reading;
pub(crate) mod replicas;
pub(crate) mod sql_text;
pub(crate) mod sqlite;
pub(crate) mod sqlite_dates;
mod work;

/// `$run` (`load` or `execute`) of one statement written out for each engine (its text in
/// SQLite's `?` placeholders, then in PostgreSQL's `$1`), with the values `$bind` binds to
/// `$q`: for the tables Plover keeps itself (jobs, idempotency keys, login failures). The
/// result's error is Plover's [`Error`].
macro_rules! by_engine {
    ($run:ident, $conn:expr, $sqlite:expr, $pg:expr, |$q:ident| $bind:expr) => {
        match $conn {
            $crate::db::Conn::Sqlite(c) => {
                let $q = diesel::sql_query($sqlite);
                $bind.$run(&mut **c).map_err($crate::error::Error::from)
            }
            #[cfg(feature = "postgres")]
            $crate::db::Conn::Pg(c) => {
                let $q = diesel::sql_query($pg);
                $bind.$run(&mut **c).map_err($crate::error::Error::from)
            }
        }
    };
}
pub(crate) use by_engine;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};

use diesel::r2d2::{ConnectionManager, Pool, PooledConnection};
use diesel::SqliteConnection;
#[cfg(feature = "postgres")]
use diesel::{Connection, PgConnection};
#[cfg(feature = "postgres")]
use pg_pool::{Canceller, PgManager};

pub(crate) use cancel::PeerSocket;
use cancel::Unit;
pub use config::{Config, ConfigError, Engine, REPLICAS_VAR};
pub use extract::DbConn;
pub use replicas::{ServedBy, CONSISTENCY_HEADER, SERVED_BY_HEADER};

use crate::error::Error;
use work::{Body, Job, OnLazy};

/// A connection borrowed from the pool, of one of the supported engines.
pub enum Conn<'a> {
    /// An SQLite connection.
    Sqlite(&'a mut SqliteConnection),
    /// A PostgreSQL connection.
    #[cfg(feature = "postgres")]
    Pg(&'a mut PgConnection),
}

impl std::fmt::Debug for Conn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Sqlite(_) => "Conn::Sqlite",
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => "Conn::Pg",
        })
    }
}

impl Conn<'_> {
    /// Runs `f` in one write transaction: committed when it returns `Ok`, rolled back
    /// otherwise. Inside another transaction, `f` runs in a savepoint of it (on both engines):
    /// its `Err` rolls back what `f` did, and the outer transaction decides the rest.
    pub fn transaction<R>(
        &mut self,
        f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        work::in_body(f, |body| self.transaction_dyn(body))
    }

    /// [`Conn::transaction`] of a body whose type is erased: diesel's transaction is compiled
    /// once, not once per closure ([`work`]). The outbox's events are written last, just
    /// before the commit ([`pending`]).
    fn transaction_dyn(&mut self, f: &mut Body<'_>) -> Result<(), Error> {
        let nested = self.in_transaction();
        let mark = pending::mark();
        let mut events = false;
        let mut body = |conn: &mut Conn<'_>| -> Result<(), Error> {
            f(conn)?;
            if !nested {
                events = pending::flush(conn)?;
            }
            Ok(())
        };
        let result = match self {
            Conn::Sqlite(c) if nested => {
                diesel::Connection::transaction(&mut **c, |c| body(&mut Conn::Sqlite(c)))
            }
            // BEGIN IMMEDIATE: a write transaction that reads first (foreign-key checks,
            // dependent rows) would otherwise fail at once on a concurrent writer instead of
            // waiting for `busy_timeout`.
            Conn::Sqlite(c) => c.immediate_transaction(|c| body(&mut Conn::Sqlite(c))),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => c.transaction(|c| body(&mut Conn::Pg(c))),
        };
        if !nested {
            pending::end();
        }
        match result {
            Ok(()) if events => {
                pending::announce();
                Ok(())
            }
            Ok(()) => Ok(()),
            Err(e) => {
                pending::drop_since(mark);
                Err(e)
            }
        }
    }

    /// Runs the reads of `f` in one snapshot of the database (a read-only `REPEATABLE READ`
    /// transaction on PostgreSQL, a deferred one on SQLite), or in the transaction already
    /// open: every read sees the same committed writes. A page an application renders itself
    /// and the [`changes::cursor`](crate::changes::cursor) read with it give a change feed
    /// position that misses nothing (docs/changes.md#a-live-page-of-your-own).
    pub fn snapshot<R>(
        &mut self,
        f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        if self.in_transaction() {
            return f(self);
        }
        match self {
            Conn::Sqlite(c) => {
                diesel::Connection::transaction(&mut **c, |c| f(&mut Conn::Sqlite(c)))
            }
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => {
                (c.build_transaction().repeatable_read().read_only()).run(|c| f(&mut Conn::Pg(c)))
            }
        }
    }

    /// Whether a transaction is open on this connection.
    pub(crate) fn in_transaction(&mut self) -> bool {
        use diesel::connection::{AnsiTransactionManager, TransactionManager};
        let status = match self {
            Conn::Sqlite(c) => AnsiTransactionManager::transaction_manager_status_mut(&mut **c),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => AnsiTransactionManager::transaction_manager_status_mut(&mut **c),
        };
        status
            .transaction_depth()
            .is_ok_and(|depth| depth.is_some())
    }

    /// Executes SQL statements (schema creation, pragmas); not for request data. Blank SQL is
    /// a no-op on both engines (PostgreSQL would answer it with "empty query", SQLite accepts it).
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        use diesel::connection::SimpleConnection;
        if sql.trim().is_empty() {
            return Ok(());
        }
        match self {
            Conn::Sqlite(c) => c.batch_execute(sql).map_err(Error::from),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => c.batch_execute(sql).map_err(Error::from),
        }
    }

    /// The engine of this connection.
    pub fn engine(&self) -> Engine {
        match self {
            Conn::Sqlite(_) => Engine::Sqlite,
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => Engine::Postgres,
        }
    }
}

#[derive(Clone)]
enum Pools {
    Sqlite(Pool<ConnectionManager<SqliteConnection>>),
    #[cfg(feature = "postgres")]
    Pg(Pool<PgManager>),
}

/// A pooled database, cheap to clone (one reference count); share one per application.
#[derive(Clone)]
pub struct Database(Arc<Shared>);

/// A reference to a [`Database`] that does not keep it open.
pub(crate) struct WeakDatabase(std::sync::Weak<Shared>);

impl WeakDatabase {
    /// The database, while a clone of it is open.
    pub(crate) fn upgrade(&self) -> Option<Database> {
        self.0.upgrade().map(Database)
    }
}

/// What the clones of a [`Database`] share.
struct Shared {
    pool: Pools,
    /// SQLite only: the turn of this process's write transactions ([`LazyConn::write`]).
    writers: Option<Writers>,
    /// PostgreSQL only: the passes of the units that only read, keeping connections of the
    /// pool for writes (`reserved_for_writes`); `None` when none are reserved.
    readers: Option<gate::Gate>,
    /// The time a request's statements may run (`statement_timeout`; zero: no bound).
    budget: Duration,
    /// The bytes of text requests' reads may hold at once (`read_memory`).
    reading: Arc<reading::Budget>,
    /// PostgreSQL only: cancels the statements of requests whose clients went away.
    #[cfg(feature = "postgres")]
    canceller: Option<Arc<Canceller>>,
    /// PostgreSQL only: the read replicas, if any.
    #[cfg(feature = "postgres")]
    replicas: Option<Arc<replicas::Replicas>>,
    /// Whether a thread of this process watches the database's outbox (`changes::watch`).
    watched: std::sync::atomic::AtomicBool,
    /// This database among those the process opened (what caches of its rows are keyed by).
    id: u64,
    /// Whether the database has the permissions stamp's table (`sql::stamp`), once known.
    stamp_table: OnceLock<bool>,
}

/// The number of databases the process opened.
static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The next database's [`Shared::id`].
fn next_id() -> u64 {
    OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The queue of one SQLite database's writers in this process. SQLite lets one write
/// transaction run at a time; the others wait in its busy handler, which sleeps 1, 2, 5, 10 ms
/// and more between tries, so a burst of writes spends most of its time asleep. Writers that
/// take their turn here first are woken as soon as the one before them commits. Waiting is
/// bounded by the database's `busy_timeout`, as SQLite's own wait is, and by its
/// `connection_timeout` when that is shorter (a writer waiting for its turn waits for the
/// connection the writer ahead of it holds); SQLite's locking still guards the file against
/// other processes and other writers.
///
/// The turn keeps the connection of the last write (when the pool has more than one), and the
/// next write takes it: a connection's page cache is current only if no other connection wrote
/// since its last transaction, so writers that rotate through the pool re-read the pages of
/// every table and index they touch. Readers take the kept connection only when the pool has no
/// other to give ([`Database::checkout`]).
struct Writers {
    turn: Mutex<Option<SqlitePooled>>,
    wait: Duration,
    /// Whether the turn keeps the last writer's connection (`max_connections` above 1).
    keep: bool,
}

type SqlitePooled = PooledConnection<ConnectionManager<SqliteConnection>>;

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").finish_non_exhaustive()
    }
}

/// A connection checked out of the pool; back to the pool when dropped.
enum Pooled {
    Sqlite(PooledConnection<ConnectionManager<SqliteConnection>>),
    #[cfg(feature = "postgres")]
    Pg(PooledConnection<PgManager>),
}

impl Pooled {
    fn conn(&mut self) -> Conn<'_> {
        match self {
            Pooled::Sqlite(c) => Conn::Sqlite(c),
            #[cfg(feature = "postgres")]
            Pooled::Pg(c) => Conn::Pg(&mut c.conn),
        }
    }

    /// Runs the unit of work `f` on this connection, then [`Pooled::settle`]s it.
    fn run<R>(&mut self, f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>) -> Result<R, Error> {
        let result = f(&mut self.conn());
        self.settle(result.as_ref().err());
        result
    }

    /// Takes note of how a unit of work on this connection ended (`error`: how it failed, if
    /// it did): a PostgreSQL connection whose server went away is closed instead of going back
    /// to the pool ([`pg_pool`]).
    fn settle(&mut self, error: Option<&Error>) {
        #[cfg(feature = "postgres")]
        if let (Pooled::Pg(c), Some(e)) = (self, error) {
            c.lost |= e.is_connection_lost();
        }
        #[cfg(not(feature = "postgres"))]
        let _ = error;
    }
}

/// A connection taken from the pool only when first asked for, and given back early with
/// [`LazyConn::release`]: authentication looks a user up, gives the connection back, and only
/// then spends the time of a password check (a flood of wrong passwords never holds pooled
/// connections: docs/contract.md#bounded-cost).
///
/// On SQLite, a unit that writes ([`LazyConn::writes`]) takes its turn among the writers
/// before its first connection, and the connection the writers keep: what it reads before
/// writing (the user of its credentials, the row it changes) is read on the connection whose
/// page cache the last write left current, rather than on a reader whose cache every write
/// empties.
pub struct LazyConn<'a> {
    db: &'a Database,
    pooled: Option<Pooled>,
    /// The pass of a unit that only reads, held with its connection from the primary (after
    /// `pooled`, so that the connection goes back first).
    pass: Option<gate::Pass<'a>>,
    /// SQLite: this unit's turn among the writers, held while it holds a connection.
    turn: Option<MutexGuard<'a, Option<SqlitePooled>>>,
    writes: bool,
    /// The permissions stamp read with the unit's user (`sql::stamp`), if it was.
    stamp: Option<i64>,
    /// The unit's client, where its reads may go to a replica or it is remembered
    /// ([`LazyConn::read_from_replicas`], [`LazyConn::for_client`]).
    reader: Option<replicas::Reader>,
    /// Whether the unit's connections come from the primary only: it writes, or wrote. Such a
    /// unit takes its connection past the readers' gate ([`gate`]).
    primary: bool,
    /// The server of the unit's last connection.
    served: ServedBy,
}

impl std::fmt::Debug for LazyConn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyConn")
            .field("checked_out", &self.pooled.is_some())
            .field("writes", &self.writes)
            .finish()
    }
}

impl<'a> LazyConn<'a> {
    /// A handle on `db` that holds no connection yet.
    pub fn new(db: &'a Database) -> LazyConn<'a> {
        LazyConn {
            db,
            pooled: None,
            pass: None,
            turn: None,
            writes: false,
            stamp: None,
            reader: None,
            primary: false,
            served: ServedBy::Primary,
        }
    }

    /// Lets the reads of this unit go to a read replica of the database, one that has replayed
    /// all that `reader`'s client has seen (docs/deployment.md#read-replicas): for a unit that
    /// only reads, such as a GET. Once the unit writes ([`LazyConn::writes`],
    /// [`LazyConn::write`]) its connections come from the primary.
    pub(crate) fn read_from_replicas(&mut self, reader: replicas::Reader) {
        self.reader = Some(reader);
    }

    /// Keeps the unit on the primary, and remembers what `reader`'s client wrote there
    /// ([`LazyConn::consistency`]): for a unit that may write without saying so first.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) fn for_client(&mut self, reader: replicas::Reader) {
        self.reader = Some(reader);
        self.primary = true;
    }

    /// The server that the unit's last connection came from, where the database has replicas.
    pub(crate) fn served_by(&self) -> Option<ServedBy> {
        self.db.has_replicas().then_some(self.served)
    }

    /// The database.
    pub(crate) fn database(&self) -> &'a Database {
        self.db
    }

    /// The permissions stamp read with the unit's user, if it was.
    pub(crate) fn permissions_stamp(&self) -> Option<i64> {
        self.stamp
    }

    /// Keeps the permissions stamp read with the unit's user.
    pub(crate) fn set_permissions_stamp(&mut self, stamp: Option<i64>) {
        self.stamp = stamp;
    }

    /// The engine of the database.
    pub fn engine(&self) -> Engine {
        self.db.engine()
    }

    /// Marks this unit as one that writes: on SQLite, its connections are taken with its turn
    /// among the writers (see the type's documentation). Call it before the first
    /// [`LazyConn::conn`].
    pub fn writes(&mut self) {
        self.writes = true;
        self.primary = true;
    }

    /// The connection, checked out of the pool on first use. 503 when none comes within the
    /// pool's timeout ([`Error::Busy`] when every connection the pool may open is in use,
    /// [`Error::Unavailable`] when it cannot open one), or, for a unit that writes on SQLite,
    /// when its turn does not come within the database's `busy_timeout` ([`Error::Busy`]).
    pub fn conn(&mut self) -> Result<Conn<'_>, Error> {
        let pooled = match &mut self.pooled {
            Some(pooled) => pooled,
            empty => {
                let taken = match (self.writes, self.db.0.writers.as_ref()) {
                    (true, Some(writers)) => {
                        let mut turn = writers.take_turn()?;
                        let kept = turn.take();
                        self.turn = Some(turn);
                        match kept {
                            Some(conn) => Pooled::Sqlite(conn),
                            None => self.db.checkout()?,
                        }
                    }
                    _ => {
                        let reader = self.reader.filter(|_| !self.primary);
                        let db = self.db;
                        // A unit that may write (on the primary only) passes the readers' gate.
                        let (taken, served, pass) =
                            db.checkout_for(reader.as_ref(), !self.primary)?;
                        self.served = served;
                        self.pass = pass;
                        taken
                    }
                };
                // The canceller reaches the primary: a replica's statements end at the
                // statement timeout only.
                #[cfg(feature = "postgres")]
                if let (Pooled::Pg(c), Some(unit), ServedBy::Primary) =
                    (&taken, cancel::current(), self.served)
                {
                    *lock(&unit.pg_backend) = Some(c.backend);
                }
                empty.insert(taken)
            }
        };
        Ok(pooled.conn())
    }

    /// Gives the connection back to the pool (or, after a turn among the writers, to the
    /// writers); a later [`LazyConn::conn`] checks out another.
    pub fn release(&mut self) {
        // From now on the connection may serve another request: its statements are no longer
        // this unit's to cancel.
        #[cfg(feature = "postgres")]
        if let (Some(Pooled::Pg(_)), Some(unit)) = (&self.pooled, cancel::current()) {
            *lock(&unit.pg_backend) = None;
        }
        let pooled = self.pooled.take();
        let pass = self.pass.take();
        let (Some(mut turn), Some(writers)) = (self.turn.take(), self.db.0.writers.as_ref()) else {
            drop(pooled);
            drop(pass);
            return;
        };
        if let (true, Some(Pooled::Sqlite(mut conn))) = (writers.keep, pooled) {
            if !diesel::r2d2::R2D2Connection::is_broken(&mut *conn) {
                *turn = Some(conn);
            }
        }
    }

    /// Keeps the rest of this unit on the primary: for a read whose answer must be current
    /// (the counts of failed logins), in a unit whose reads may otherwise go to a replica. A
    /// replica's connection the unit holds is given back.
    pub(crate) fn on_primary(&mut self) {
        if self.served != ServedBy::Primary {
            self.release();
        }
        self.primary = true;
    }

    /// Runs `f` in one write transaction ([`Conn::transaction`]) on this unit's connection.
    /// On SQLite the transaction first waits for its turn among this process's writers to the
    /// same database (503 when it does not come within `busy_timeout`, or `connection_timeout`
    /// if shorter): they follow each other without the sleeps of SQLite's busy handler. The
    /// turn comes before the connection is checked out (unless this unit holds one already),
    /// so writers waiting for their turn do not keep pooled connections from the requests that
    /// only read. A unit that took its turn and the writers' connection gives both back when
    /// the transaction ends.
    pub fn write<R>(
        &mut self,
        f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        work::in_body(f, |body| self.write_dyn(body))
    }

    /// [`LazyConn::write`] of a body whose type is erased ([`work`]).
    fn write_dyn(&mut self, f: &mut Body<'_>) -> Result<(), Error> {
        let Some(writers) = self.db.0.writers.as_ref() else {
            self.on_primary();
            return self.conn()?.transaction_dyn(f);
        };
        if self.turn.is_none() {
            if self.pooled.is_some() {
                // A unit that holds a reader's connection writes on it, in its turn.
                let _turn = writers.take_turn()?;
                return self.conn()?.transaction_dyn(f);
            }
            self.writes = true;
        }
        let result = self.conn()?.transaction_dyn(f);
        self.release();
        result
    }
}

impl LazyConn<'_> {
    /// Runs `work` on this unit, and once more (on the primary) when it failed on a replica in
    /// a way the primary would not ([`LazyConn::retry_on_primary`]): a read whose replica went
    /// away still gets its answer. A write moves the unit to the primary before it starts, so
    /// a failed write is never run again.
    pub(crate) fn retrying<R>(
        &mut self,
        mut work: impl FnMut(&mut Self) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let first = work(self);
        match &first {
            Err(e) if self.retry_on_primary(e) => work(self),
            _ => first,
        }
    }
}

#[cfg(feature = "postgres")]
impl LazyConn<'_> {
    /// After `error` on a replica's connection that the primary would not give (the replica
    /// went away, cancelled the statement to replay, or refused a write): gives the
    /// connection up (a replica that went away is skipped until a check finds it well) and
    /// keeps the unit on the primary. True when the caller should run its reads again.
    pub(crate) fn retry_on_primary(&mut self, error: &Error) -> bool {
        let (ServedBy::Replica(i), Some(replicas)) = (self.served, &self.db.0.replicas) else {
            return false;
        };
        if !error.is_connection_lost() && !replicas::is_replica_refusal(error) {
            return false;
        }
        log::warn!(
            "a read on replica {} failed ({error}): read again on the primary",
            i + 1
        );
        if error.is_connection_lost() {
            if let Some(Pooled::Pg(c)) = &mut self.pooled {
                c.lost = true;
            }
            replicas.failed(i);
        }
        self.release();
        self.primary = true;
        self.served = ServedBy::Primary;
        true
    }

    /// The end of a unit of a client with replicas around (`succeeded`: whether it did what it
    /// was asked): a unit on the primary (one that wrote) gives the primary's WAL position, its
    /// consistency token, and the unit's client is remembered at it; a read of an identified
    /// client remembers the position it read at, so that its next reads never see less.
    /// `None` without replicas, after a failure, or for a read.
    pub(crate) fn consistency(&mut self, succeeded: bool) -> Option<replicas::Lsn> {
        let replicas = self.db.0.replicas.clone()?;
        let reader = self.reader?;
        if !succeeded || (!self.primary && (reader.client.is_none() || self.pooled.is_none())) {
            return None;
        }
        let served = if self.primary {
            ServedBy::Primary
        } else {
            self.served
        };
        let position = match self.conn() {
            Ok(Conn::Pg(c)) => replicas::position_of(c, served),
            Ok(Conn::Sqlite(_)) => return None,
            Err(e) => Err(e),
        };
        let lsn = position
            .inspect_err(|e| log::warn!("the WAL position after a unit was not read: {e}"))
            .ok()?;
        if let Some(client) = reader.client {
            replicas.remember(client, lsn);
        }
        self.primary.then_some(lsn)
    }
}

#[cfg(not(feature = "postgres"))]
impl LazyConn<'_> {
    /// Without PostgreSQL there are no replicas: never.
    pub(crate) fn retry_on_primary(&mut self, _error: &Error) -> bool {
        false
    }

    /// Without PostgreSQL there are no replicas: no position.
    pub(crate) fn consistency(&mut self, _succeeded: bool) -> Option<replicas::Lsn> {
        None
    }
}

impl Drop for LazyConn<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

impl Writers {
    /// This unit's turn ([`Error::Busy`], 503, when it does not come within `wait`).
    fn take_turn(&self) -> Result<MutexGuard<'_, Option<SqlitePooled>>, Error> {
        self.turn.try_lock_for(self.wait).ok_or_else(|| {
            log::warn!("no turn to write to the SQLite database within its busy_timeout");
            Error::Busy
        })
    }
}

/// The replicas of a PostgreSQL configuration, watched by their health check; `None` without.
#[cfg(feature = "postgres")]
fn open_replicas(
    config: &Config,
    max: u32,
    statement_timeout: u64,
) -> Result<Option<Arc<replicas::Replicas>>, ConfigError> {
    if config.replicas.is_empty() {
        return Ok(None);
    }
    let seconds = |key, default| config.number(key, default).map(Duration::from_secs_f64);
    let replicas = replicas::Replicas::open(
        &config.name,
        &config.replicas,
        max,
        statement_timeout,
        seconds("replica_max_lag", 5.0)?,
        seconds("replica_check_every", 0.5)?,
    )?;
    replicas.watch();
    Ok(Some(replicas))
}

/// A std mutex's guard, whether or not a holder panicked.
#[cfg(feature = "postgres")]
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The error of a pool that gave no connection within its `connection_timeout`: with every
/// connection it may open in use (`exhausted`), the server is busy ([`Error::Busy`]: 503, try
/// again in a moment); otherwise it could not open one, and the database is unavailable.
fn no_connection(e: diesel::r2d2::PoolError, exhausted: bool) -> Error {
    if exhausted {
        log::warn!("every pooled database connection stayed in use: {e}");
        Error::Busy
    } else {
        log::error!("database connection unavailable: {e}");
        Error::Unavailable
    }
}

/// A connection from `pool` within its timeout ([`no_connection`] otherwise).
fn get<M: diesel::r2d2::ManageConnection>(pool: &Pool<M>) -> Result<PooledConnection<M>, Error> {
    pool.get()
        .map_err(|e| no_connection(e, pool.state().connections >= pool.max_size()))
}

impl Database {
    /// Opens a database from a configuration; connections are made lazily by the pool.
    pub fn open(config: &Config) -> Result<Database, ConfigError> {
        let timeout = Duration::from_secs_f64(config.number("connection_timeout", 5.0)?);
        if timeout.is_zero() {
            return Err(ConfigError(
                "option 'connection_timeout' must be above 0".into(),
            ));
        }
        let max = config.number("max_connections", 8.0)? as u32;
        // Work a client left behind (or any runaway statement) ends at this bound, and its
        // connection goes back to the pool (docs/security.md).
        let statement_timeout = config.number("statement_timeout", 10_000.0)? as u64;
        let budget = Duration::from_millis(statement_timeout);
        let reading = reading::Budget::new(
            config.number("read_memory", reading::DEFAULT_BYTES as f64)? as usize,
        );
        match config.engine {
            Engine::Sqlite if !config.replicas.is_empty() => Err(ConfigError(
                "SQLite has no replicas: PLOVER_DATABASE_REPLICAS (or Config::replica) needs a \
                 PostgreSQL database"
                    .into(),
            )),
            Engine::Sqlite => {
                let mut known = config::OWN_OPTIONS.to_vec();
                known.extend(["busy_timeout", "cache_size", "mmap_size"]);
                config.check_options(&known)?;
                let manager = ConnectionManager::<SqliteConnection>::new(config.name.clone());
                let pool = Pool::builder()
                    .max_size(max.max(1))
                    .min_idle(Some(0))
                    .connection_timeout(timeout)
                    .test_on_check_out(false)
                    .connection_customizer(Box::new(sqlite::Customizer::from_config(config)?))
                    .build_unchecked(manager);
                let busy = config.number("busy_timeout", sqlite::DEFAULT_BUSY_MS)?;
                Ok(Database(Arc::new(Shared {
                    pool: Pools::Sqlite(pool),
                    readers: None,
                    writers: Some(Writers {
                        turn: Mutex::new(None),
                        wait: Duration::from_millis(busy as u64).min(timeout),
                        keep: max > 1,
                    }),
                    budget,
                    reading,
                    #[cfg(feature = "postgres")]
                    canceller: None,
                    #[cfg(feature = "postgres")]
                    replicas: None,
                    watched: Default::default(),
                    id: next_id(),
                    stamp_table: OnceLock::new(),
                })))
            }
            #[cfg(feature = "postgres")]
            Engine::Postgres => {
                let mut known = config::OWN_OPTIONS.to_vec();
                known.extend(config::REPLICA_OPTIONS);
                config.check_options(&known)?;
                let pool = pg_pool::pool(config.name.clone(), max, timeout, statement_timeout);
                let reserved = config.number(
                    "reserved_for_writes",
                    f64::from(gate::default_reserved(max.max(1))),
                )? as u32;
                Ok(Database(Arc::new(Shared {
                    pool: Pools::Pg(pool),
                    readers: gate::Gate::new(max, reserved, timeout),
                    writers: None,
                    budget,
                    reading,
                    canceller: Some(Arc::new(Canceller::new(&config.name))),
                    replicas: open_replicas(config, max, statement_timeout)?,
                    watched: Default::default(),
                    id: next_id(),
                    stamp_table: OnceLock::new(),
                })))
            }
            #[cfg(not(feature = "postgres"))]
            Engine::Postgres => Err(ConfigError(
                "PostgreSQL needs Plover's `postgres` feature".into(),
            )),
        }
    }

    /// True the first time it is called on this database (or a clone of it): the caller
    /// starts the watch of its outbox.
    pub(crate) fn first_watch(&self) -> bool {
        !self
            .0
            .watched
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether reads may go to read replicas (PostgreSQL with `replicas` configured).
    pub(crate) fn has_replicas(&self) -> bool {
        #[cfg(feature = "postgres")]
        if self.0.replicas.is_some() {
            return true;
        }
        false
    }

    /// This database among those the process opened: a clone has the same id, another
    /// database (even of the same file or URL) another one.
    pub(crate) fn id(&self) -> u64 {
        self.0.id
    }

    /// Whether the database has the permissions stamp's table, once someone looked.
    pub(crate) fn stamp_table(&self) -> &OnceLock<bool> {
        &self.0.stamp_table
    }

    /// A reference that does not keep the database open.
    pub(crate) fn downgrade(&self) -> WeakDatabase {
        WeakDatabase(Arc::downgrade(&self.0))
    }

    /// A PostgreSQL connection of its own, outside the pool (a listener's).
    #[cfg(feature = "postgres")]
    pub(crate) fn dedicated(&self) -> Option<Result<PgConnection, Error>> {
        let canceller = self.0.canceller.as_ref()?;
        Some(PgConnection::establish(canceller.url()).map_err(|e| {
            log::warn!("a connection to the database failed: {e}");
            Error::Unavailable
        }))
    }

    /// The engine of this database.
    pub fn engine(&self) -> Engine {
        match &self.0.pool {
            Pools::Sqlite(_) => Engine::Sqlite,
            #[cfg(feature = "postgres")]
            Pools::Pg(_) => Engine::Postgres,
        }
    }

    /// Opens a database from a URL such as `sqlite://app.db` (see [`Config::from_url`]).
    pub fn from_url(url: &str) -> Result<Database, ConfigError> {
        Database::open(&Config::from_url(url)?)
    }

    /// A connection for a unit of `reader` (`None`: from the primary): from a well replica that
    /// has replayed what its client saw, else from the primary.
    fn checkout_for(
        &self,
        reader: Option<&replicas::Reader>,
        reads_only: bool,
    ) -> Result<(Pooled, ServedBy, Option<gate::Pass<'_>>), Error> {
        #[cfg(feature = "postgres")]
        if let (Some(reader), Some(replicas)) = (reader, &self.0.replicas) {
            if let Some((i, conn)) = replicas.checkout(reader) {
                return Ok((Pooled::Pg(conn), ServedBy::Replica(i), None));
            }
        }
        #[cfg(not(feature = "postgres"))]
        let _ = reader;
        // A unit that only reads holds a connection of the primary with a pass.
        let gate = self.0.readers.as_ref().filter(|_| reads_only);
        let pass = gate.map(gate::Gate::enter).transpose()?;
        Ok((self.checkout()?, ServedBy::Primary, pass))
    }

    /// A connection from the pool. On SQLite, when the pool has no idle connection and may
    /// open no more, the one the writers keep serves if no write runs ([`Writers`]).
    fn checkout(&self) -> Result<Pooled, Error> {
        match &self.0.pool {
            Pools::Sqlite(p) => {
                if let Some(conn) = p.try_get() {
                    return Ok(Pooled::Sqlite(conn));
                }
                let state = p.state();
                if state.connections >= p.max_size() {
                    let kept = (self.0.writers.as_ref()).and_then(|w| w.turn.try_lock()?.take());
                    if let Some(conn) = kept {
                        return Ok(Pooled::Sqlite(conn));
                    }
                }
                get(p).map(Pooled::Sqlite)
            }
            #[cfg(feature = "postgres")]
            Pools::Pg(p) => get(p).map(Pooled::Pg),
        }
    }

    /// Runs `f` with one pooled connection, on the current thread. For start-up code and
    /// tests; request handlers use [`Database::run`].
    pub fn run_blocking<R>(
        &self,
        f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        self.checkout()?.run(f)
    }

    /// Runs `f` on actix's blocking thread pool with a connection that is checked out only when
    /// `f` first asks for it ([`LazyConn`]).
    pub async fn run_lazy<R, F>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut LazyConn<'_>) -> Result<R, Error> + Send + 'static,
        R: Send + 'static,
    {
        self.run_watched(None, f).await
    }

    /// [`Database::run_lazy`] for the request whose connection `peer` is: while the work runs
    /// (whether or not this future is still polled) it is on the watch list
    /// ([`cancel::watch`]), whose watcher looks at the client's socket every
    /// [`cancel::WATCH_EVERY`] once the work has run for a tick, and cancels the work when the
    /// client has gone (docs/security.md). Either way its statements are bounded by the
    /// database's `statement_timeout`.
    pub(crate) async fn run_watched<R, F>(
        &self,
        peer: Option<&PeerSocket>,
        f: F,
    ) -> Result<R, Error>
    where
        F: FnOnce(&mut LazyConn<'_>) -> Result<R, Error> + Send + 'static,
        R: Send + 'static,
    {
        let done = self.run_watched_dyn(peer, Job::boxed(f)).await?;
        Job::<F, R>::result(done)
    }

    /// [`Database::run_watched`] of a job whose type is erased: the blocking task is compiled
    /// once, not once per closure ([`work`]). Returns the job, which holds its result.
    async fn run_watched_dyn(
        &self,
        peer: Option<&PeerSocket>,
        mut job: Box<dyn OnLazy>,
    ) -> Result<work::Done, Error> {
        let unit = Unit::new(self.0.budget);
        let read_budget = self.0.reading.clone();
        let db = self.clone();
        // The unit is watched until the work ends: actix drops this future when the client's
        // connection breaks, and the work runs on.
        let watch = peer.map(|peer| {
            cancel::watch(
                peer,
                &unit,
                #[cfg(feature = "postgres")]
                self.0.canceller.clone(),
            )
        });
        let blocking = actix_web::web::block(move || {
            let _watch = watch;
            let _entered = cancel::enter(unit);
            let _reading = reading::enter(read_budget);
            let mut lazy = LazyConn::new(&db);
            let error = job.run(&mut lazy);
            if let Some(pooled) = &mut lazy.pooled {
                pooled.settle(error);
            }
            drop(lazy);
            job.done()
        });
        blocking
            .await
            .map_err(|e| Error::Internal(format!("blocking task failed: {e}")))
    }

    /// Runs `f` with one pooled connection on actix's blocking thread pool, so that diesel's
    /// blocking calls never stall the async workers. The connection is checked out when the
    /// closure starts and returned when it ends.
    pub async fn run<R, F>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut Conn<'_>) -> Result<R, Error> + Send + 'static,
        R: Send + 'static,
    {
        self.run_lazy(move |db| f(&mut db.conn()?)).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use super::*;

    /// A SQLite database in a new file, with a table `t (n)`; `options` go into its URL.
    fn database(name: &str, options: &str) -> Database {
        let dir = std::env::temp_dir().join(format!("plover-db-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("writers.db");
        let _ = std::fs::remove_file(&path);
        let url = format!("sqlite://{}?{options}", path.display());
        let db = Database::from_url(&url).unwrap();
        db.run_blocking(|c| c.batch_execute("CREATE TABLE t (n INTEGER)"))
            .unwrap();
        db
    }

    /// Starts a writer that inserts `n` and holds its transaction open until told to commit.
    fn holding_writer(
        db: &Database,
        n: i64,
    ) -> (
        mpsc::Receiver<()>,
        mpsc::Sender<()>,
        thread::JoinHandle<Result<(), Error>>,
    ) {
        let (started_tx, started) = mpsc::channel();
        let (commit, commit_rx) = mpsc::channel::<()>();
        let db = db.clone();
        let handle = thread::spawn(move || {
            LazyConn::new(&db).write(|c| {
                c.batch_execute(&format!("INSERT INTO t VALUES ({n})"))?;
                started_tx.send(()).unwrap();
                commit_rx.recv().unwrap();
                Ok(())
            })
        });
        (started, commit, handle)
    }

    fn rows(db: &Database) -> Vec<i64> {
        use diesel::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        db.run_blocking(|c| match c {
            Conn::Sqlite(c) => Ok(diesel::sql_query("SELECT n FROM t ORDER BY rowid")
                .load::<Row>(*c)?
                .into_iter()
                .map(|r| r.n)
                .collect()),
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => unreachable!(),
        })
        .unwrap()
    }

    /// A writer that comes while another holds its transaction waits for that commit and then
    /// writes.
    #[test]
    fn writers_follow_each_other() {
        let db = database("follow", "busy_timeout=5000");
        let (started, commit, first) = holding_writer(&db, 1);
        started.recv().unwrap();
        let second = {
            let db = db.clone();
            thread::spawn(move || {
                LazyConn::new(&db).write(|c| c.batch_execute("INSERT INTO t VALUES (2)"))
            })
        };
        commit.send(()).unwrap();
        first.join().unwrap().unwrap();
        second.join().unwrap().unwrap();
        assert_eq!(rows(&db), [1, 2]);
    }

    /// Whether this connection has the connection-local table `mark` (made by [`mark`]).
    fn marked(c: &mut Conn<'_>) -> bool {
        c.batch_execute("SELECT * FROM temp.mark").is_ok()
    }

    fn mark(c: &mut Conn<'_>) -> Result<(), Error> {
        c.batch_execute("CREATE TEMP TABLE IF NOT EXISTS mark (x)")
    }

    /// The next write runs on the connection of the last one (its page cache is current), and
    /// a failed write keeps it too.
    #[test]
    fn writes_keep_their_connection() {
        let db = database("keep", "");
        LazyConn::new(&db).write(mark).unwrap();
        // A reader that holds a connection meanwhile does not get the writers' one.
        let mut reader = LazyConn::new(&db);
        assert!(!marked(&mut reader.conn().unwrap()));
        let failed = LazyConn::new(&db).write(|c| -> Result<(), Error> {
            assert!(
                marked(c),
                "the second write runs on the first one's connection"
            );
            c.batch_execute("INSERT INTO t VALUES (1)")?;
            Err(Error::Forbidden)
        });
        assert!(matches!(failed, Err(Error::Forbidden)));
        assert_eq!(
            rows(&db),
            Vec::<i64>::new(),
            "the failed write left nothing"
        );
        assert!(LazyConn::new(&db).write(|c| Ok(marked(c))).unwrap());
    }

    /// A unit that writes reads first on the writers' connection, holding the turn until it
    /// gives the connection back, and writes on the same connection.
    #[test]
    fn a_unit_that_writes_reads_on_the_writers_connection() {
        let db = database("unit", "busy_timeout=100");
        LazyConn::new(&db).write(mark).unwrap();
        let mut unit = LazyConn::new(&db);
        unit.writes();
        assert!(marked(&mut unit.conn().unwrap()), "the writers' connection");
        let waiting = LazyConn::new(&db).write(|c| c.batch_execute("INSERT INTO t VALUES (9)"));
        assert!(
            matches!(waiting, Err(Error::Busy)),
            "another writer waits for the unit's turn"
        );
        assert!(unit.write(|c| Ok(marked(c))).unwrap());
        assert!(
            format!("{unit:?}").contains("checked_out: false"),
            "given back"
        );
        let mut after = LazyConn::new(&db);
        after.writes();
        assert!(marked(&mut after.conn().unwrap()), "kept for the next one");
        after.release();
        LazyConn::new(&db)
            .write(|c| c.batch_execute("INSERT INTO t VALUES (1)"))
            .unwrap();
        assert_eq!(rows(&db), [1]);
    }

    /// With one connection the writers keep none, and when every other connection is in use a
    /// reader gets the one they keep instead of waiting for the pool.
    #[test]
    fn readers_are_not_kept_from_the_writers_connection() {
        let one = database("keep-one", "max_connections=1&connection_timeout=5");
        LazyConn::new(&one).write(mark).unwrap();
        let idle = match &one.0.pool {
            Pools::Sqlite(pool) => pool.state().idle_connections,
            #[cfg(feature = "postgres")]
            Pools::Pg(_) => unreachable!(),
        };
        assert_eq!(idle, 1, "the only connection is back");
        assert!(one.run_blocking(|c| Ok(marked(c))).unwrap());

        let two = database("keep-two", "max_connections=2&connection_timeout=5");
        LazyConn::new(&two).write(mark).unwrap();
        let mut busy = LazyConn::new(&two);
        busy.conn().unwrap();
        assert!(two.run_blocking(|c| Ok(marked(c))).unwrap());
    }

    /// A writer whose turn does not come within `busy_timeout` is refused with 503 and writes
    /// nothing; the writer before it is not disturbed.
    #[test]
    fn a_writer_waits_no_longer_than_the_busy_timeout() {
        let db = database("timeout", "busy_timeout=100");
        let (started, commit, first) = holding_writer(&db, 1);
        started.recv().unwrap();
        let refused = LazyConn::new(&db).write(|c| c.batch_execute("INSERT INTO t VALUES (2)"));
        assert!(matches!(refused, Err(Error::Busy)), "{refused:?}");
        commit.send(()).unwrap();
        first.join().unwrap().unwrap();
        assert_eq!(rows(&db), [1]);
    }

    /// Waiting for the turn is waiting for the connection the writer ahead holds: no longer
    /// than `connection_timeout` either, when that is the shorter.
    #[test]
    fn a_writer_waits_no_longer_than_the_connection_timeout() {
        let db = database("conn-timeout", "busy_timeout=60000&connection_timeout=2");
        let (started, commit, first) = holding_writer(&db, 1);
        started.recv().unwrap();
        let asked = std::time::Instant::now();
        let refused = LazyConn::new(&db).write(|c| c.batch_execute("INSERT INTO t VALUES (2)"));
        assert!(matches!(refused, Err(Error::Busy)), "{refused:?}");
        // Far below the busy_timeout of 60 s: the refusal came from the connection timeout.
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "{:?}",
            asked.elapsed()
        );
        commit.send(()).unwrap();
        first.join().unwrap().unwrap();
        assert_eq!(rows(&db), [1]);
    }
}
