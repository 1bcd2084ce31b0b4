//! The handlers of the job kinds, and the workers that claim and run jobs.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::enqueue::WAKE;
use super::{backoff, store};
use crate::db::{Conn, Database, Engine, LazyConn};
use crate::error::Error;

/// What a job's handler returns: `Err` fails the attempt (the job is retried while it has
/// attempts left), and its text is kept as the job's `last_error`. Any error converts with
/// `?`, text too (`Err("no such order".into())`).
pub type JobResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

type Running = Pin<Box<dyn Future<Output = JobResult>>>;
type Handler = Arc<dyn Fn(&str) -> Running + Send + Sync>;

/// The most characters of a failed attempt's error a job keeps.
const MAX_ERROR_CHARS: usize = 2_000;

/// After a wake-up, the first wait before looking again (the enqueueing transaction may not
/// have committed yet); it doubles up to the poll interval.
const QUICK: Duration = Duration::from_millis(10);

/// How long a claim outlives its handler's time bound, so that the claim does not lapse while
/// its worker records the outcome.
const SLACK: Duration = Duration::from_secs(5);

/// The job queue's handlers and the workers' settings: register a handler per kind, then
/// [`start`](Jobs::start) workers in each serving process (or run the `worker` management
/// command). See the [module documentation](super).
#[derive(Clone)]
pub struct Jobs {
    db: Database,
    handlers: BTreeMap<String, Handler>,
    /// The kinds whose retries wait otherwise than `retry_base` and `retry_cap` say.
    retries: BTreeMap<String, (Duration, Duration)>,
    timeout: Duration,
    retry_base: Duration,
    retry_cap: Duration,
    poll: Duration,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("kinds", &self.handlers.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

impl Jobs {
    /// A queue on `db` with no handler yet: each job may run 60 s, a failed attempt is retried
    /// after 5 s doubling up to 1 h (with jitter), idle workers look for due jobs every second.
    pub fn new(db: Database) -> Jobs {
        Jobs {
            db,
            handlers: BTreeMap::new(),
            retries: BTreeMap::new(),
            timeout: Duration::from_secs(60),
            retry_base: Duration::from_secs(5),
            retry_cap: Duration::from_secs(3600),
            poll: Duration::from_secs(1),
        }
    }

    /// Runs the jobs of `kind` with `handler`, given the job's payload as a `T` (a payload
    /// that does not deserialize fails the attempt). The future it returns runs on the
    /// worker's thread and need not be `Send`; it must not block (use
    /// [`Database::run`] for the database). Workers claim only the kinds they have a handler
    /// for; a second handler of a kind replaces the first.
    pub fn handle<T, F, Fut>(mut self, kind: &str, handler: F) -> Jobs
    where
        T: DeserializeOwned + 'static,
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = JobResult> + 'static,
    {
        let handler = Arc::new(handler);
        let run = move |payload: &str| -> Running {
            match serde_json::from_str::<T>(payload) {
                Ok(value) => Box::pin(handler(value)),
                Err(e) => {
                    let message = format!("the payload does not fit the handler: {e}");
                    Box::pin(std::future::ready(Err(message.into())))
                }
            }
        };
        self.handlers.insert(kind.to_owned(), Arc::new(run));
        self
    }

    /// How long one attempt may run (default 60 s): a handler still running then is
    /// cancelled and the attempt fails. A claim lasts this long and 5 s more (the visibility
    /// timeout): a job whose worker died is claimed again once it lapses.
    pub fn timeout(mut self, timeout: Duration) -> Jobs {
        self.timeout = timeout;
        self
    }

    /// The wait after a failed attempt: `base` after the first, doubling after each next one
    /// up to `cap`, each a random point between its half and itself (defaults 5 s and 1 h).
    /// Webhook deliveries keep their own schedule (`webhooks::Webhooks::retry`).
    pub fn retry(mut self, base: Duration, cap: Duration) -> Jobs {
        self.retry_base = base;
        self.retry_cap = cap;
        self
    }

    /// The waits of `kind`'s failed attempts, as [`Jobs::retry`] sets them for the others
    /// (webhook deliveries have their own).
    #[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
    pub(crate) fn retry_kind(mut self, kind: &str, base: Duration, cap: Duration) -> Jobs {
        self.retries.insert(kind.to_owned(), (base, cap));
        self
    }

    /// How often an idle worker looks for due jobs (default 1 s): the longest a job enqueued
    /// by another process, or due after a delay, waits for a worker. A job enqueued in this
    /// process wakes its idle workers at once.
    pub fn poll(mut self, every: Duration) -> Jobs {
        self.poll = every.max(QUICK);
        self
    }

    /// The JSON array of the kinds this queue has handlers for, as claims bind it.
    fn kinds(&self) -> String {
        serde_json::to_string(&self.handlers.keys().collect::<Vec<_>>()).unwrap_or_default()
    }

    /// Claims one due job (or marks failed the jobs whose last claim lapsed, when none is
    /// due), on a pooled connection given back before the job runs. On SQLite a read looks
    /// for work first, so that idle workers do not take the write lock; on PostgreSQL the
    /// claim skips rows other claims hold and locks nothing when it finds none, so it runs at
    /// once.
    async fn claim(&self) -> Result<Option<store::Claimed>, Error> {
        let (kinds, lease) = (self.kinds(), self.timeout + SLACK);
        self.db
            .run_lazy(move |db| {
                if db.engine() == Engine::Sqlite && !store::work_waits(&mut db.conn()?, &kinds)? {
                    return Ok(None);
                }
                write_each(db, |conn| match store::claim(conn, &kinds, lease)? {
                    Some(job) => Ok(Some(job)),
                    None => store::fail_lapsed(conn).map(|_| None),
                })
            })
            .await
    }

    /// Runs the claimed `job`'s handler (its own task: a panic fails the attempt, and so does
    /// the time bound), then records the outcome.
    async fn run(&self, job: store::Claimed) -> Result<(), Error> {
        let outcome = match self.handlers.get(&job.kind) {
            Some(handler) => self.attempt(handler(&job.payload)).await,
            None => Err(format!("no handler for jobs of kind {:?}", job.kind)),
        };
        let retry_at = (job.attempts < job.max_attempts).then(|| {
            let attempt = u32::try_from(job.attempts).unwrap_or(1);
            let (base, cap) = (self.retries.get(&job.kind))
                .copied()
                .unwrap_or((self.retry_base, self.retry_cap));
            let wait = backoff::random_wait(attempt, base, cap);
            store::later(crate::value::now(), wait)
        });
        if let Err(error) = &outcome {
            log::warn!("job {} ({}) failed: {error}", job.id, job.kind);
        }
        self.db
            .run_lazy(move |db| {
                write_each(db, |conn| match &outcome {
                    Ok(()) => store::succeeded(conn, &job),
                    Err(error) => store::failed(conn, &job, &cut(error), retry_at),
                })
            })
            .await
    }

    /// One attempt of a handler's future, bounded by the timeout; its error as text.
    async fn attempt(&self, running: Running) -> Result<(), String> {
        let mut task = actix_web::rt::spawn(running);
        match tokio::time::timeout(self.timeout, &mut task).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Err(e)) => Err(format!("the handler panicked: {e}")),
            Err(_) => {
                task.abort();
                Err(format!("the handler ran longer than {:?}", self.timeout))
            }
        }
    }

    /// Claims and runs the due jobs one after another until none is left; the number run.
    /// For tests and one-off runs (`worker --once`): a serving process [`start`]s workers.
    /// Must be called inside an actix runtime (`#[actix_web::main]`, `#[actix_web::test]`).
    ///
    /// # Errors
    /// The database's error (a job's failure is no error: it is recorded on the job).
    ///
    /// [`start`]: Jobs::start
    pub async fn run_due(&self) -> Result<usize, Error> {
        let mut ran = 0;
        while let Some(job) = self.claim().await? {
            self.run(job).await?;
            ran += 1;
        }
        Ok(ran)
    }

    /// Starts `count` workers on the current actix runtime (call it once, inside
    /// `#[actix_web::main]`, beside the `HttpServer`). Each claims a due job, runs it, and
    /// waits for the next (woken at once by an enqueue in this process, else after the poll
    /// interval). They run until [`Workers::stop`] or the end of the runtime.
    pub fn start(&self, count: usize) -> Workers {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = (0..count)
            .map(|_| actix_web::rt::spawn(self.clone().work(stop.clone())))
            .collect();
        Workers { stop, tasks }
    }

    /// One worker's loop.
    async fn work(self, stop: Arc<AtomicBool>) {
        let mut wait = self.poll;
        while !stop.load(Ordering::Relaxed) {
            match self.claim().await {
                Ok(Some(job)) => {
                    if let Err(e) = self.run(job).await {
                        log::error!("a job's outcome could not be recorded: {e}");
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => log::error!("no job could be claimed: {e}"),
            }
            let woken = tokio::time::timeout(wait, WAKE.notified()).await.is_ok();
            wait = if woken {
                QUICK
            } else {
                (wait * 2).min(self.poll)
            };
        }
    }
}

/// Runs `f`, whose statements each change the queue atomically on their own: on PostgreSQL as
/// they are (no `BEGIN` and `COMMIT` around them: two round trips fewer), on SQLite in a
/// transaction, whose `BEGIN IMMEDIATE` takes the write lock before a statement reads (a
/// statement alone would read first and fail when another process wrote meanwhile).
fn write_each<R>(
    db: &mut LazyConn<'_>,
    f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    if db.engine() == Engine::Sqlite {
        return db.write(f);
    }
    db.on_primary();
    f(&mut db.conn()?)
}

/// A failed attempt's error, at most [`MAX_ERROR_CHARS`] characters.
fn cut(error: &str) -> String {
    error.chars().take(MAX_ERROR_CHARS).collect()
}

/// The workers [`Jobs::start`] started.
#[derive(Debug)]
pub struct Workers {
    stop: Arc<AtomicBool>,
    tasks: Vec<actix_web::rt::task::JoinHandle<()>>,
}

impl Workers {
    /// Stops the workers: each finishes the job it runs (if any), and this returns once all
    /// have stopped (an idle worker notices within the poll interval).
    pub async fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        WAKE.notify_waiters();
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
