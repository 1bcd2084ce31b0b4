//! Enqueueing: a job is a row written on the caller's connection, so inside a write's
//! transaction it exists if and only if the write commits.

use std::time::Duration;

use serde::Serialize;

use super::store;
use crate::db::Conn;
use crate::error::Error;

/// The attempts a job gets unless [`NewJob::max_attempts`] says otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// Wakes this process's idle workers when a job is enqueued (see [`super::worker`]).
pub(crate) static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// A job to enqueue, with its options: [`enqueue`] for the defaults.
///
/// ```
/// use plover::jobs::NewJob;
/// use std::time::Duration;
///
/// let job = NewJob::new("send_receipt", &serde_json::json!({"order": 7}))
///     .unwrap()
///     .max_attempts(3)
///     .delay(Duration::from_secs(60));
/// # let _ = job;
/// ```
#[derive(Debug, Clone)]
pub struct NewJob {
    kind: String,
    payload: String,
    serial_key: Option<String>,
    max_attempts: u32,
    delay: Duration,
}

impl NewJob {
    /// A job of `kind` (the name its handler is registered under, at most 100 characters)
    /// with `payload` as its JSON arguments; [`DEFAULT_MAX_ATTEMPTS`] attempts, due now.
    ///
    /// # Errors
    /// [`Error::Internal`] when `kind` is empty or longer than 100 characters, or `payload`
    /// does not serialize to JSON.
    pub fn new(kind: &str, payload: &impl Serialize) -> Result<NewJob, Error> {
        if kind.is_empty() || kind.chars().count() > 100 {
            return Err(Error::Internal(format!(
                "a job's kind has 1 to 100 characters, not {kind:?}"
            )));
        }
        let payload = serde_json::to_string(payload)
            .map_err(|e| Error::Internal(format!("the payload of job {kind:?}: {e}")))?;
        Ok(NewJob {
            kind: kind.to_owned(),
            payload,
            serial_key: None,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            delay: Duration::ZERO,
        })
    }

    /// The attempts after which a failing job is `failed` (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> NewJob {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Runs the job after the jobs enqueued before it with the same `key` (at most 200
    /// characters), one at a time: it is not claimed while one of them is queued or running,
    /// retries included (one that `failed` no longer holds it back). The deliveries of one
    /// webhook endpoint, say, keep the order of their events.
    pub fn serial(mut self, key: &str) -> NewJob {
        self.serial_key = Some(key.to_owned());
        self
    }

    /// Runs the job no sooner than `delay` from now.
    pub fn delay(mut self, delay: Duration) -> NewJob {
        self.delay = delay;
        self
    }

    /// Writes the job on `conn` and returns its id. Call it inside the transaction of the
    /// write the job belongs to: a rolled-back transaction leaves no job, and no worker sees
    /// the job before the transaction commits. Idle workers of this process are woken.
    ///
    /// # Errors
    /// [`Error::Internal`] when the serial key is longer than 200 characters; the database's
    /// error; a missing table is an [`Error::Internal`] that says how to create
    /// it.
    pub fn enqueue(self, conn: &mut Conn<'_>) -> Result<i64, Error> {
        if self
            .serial_key
            .as_ref()
            .is_some_and(|k| k.chars().count() > 200)
        {
            return Err(Error::Internal(
                "a job's serial key has at most 200 characters".into(),
            ));
        }
        let attempts = i32::try_from(self.max_attempts).unwrap_or(i32::MAX);
        let run_after = store::later(crate::value::now(), self.delay);
        let id = store::insert(
            conn,
            &self.kind,
            &self.payload,
            self.serial_key.as_deref(),
            attempts,
            run_after,
        )?;
        WAKE.notify_waiters();
        Ok(id)
    }
}

/// Enqueues a job of `kind` with `payload` as its JSON arguments, due now, with
/// [`DEFAULT_MAX_ATTEMPTS`] attempts: [`NewJob::enqueue`] of [`NewJob::new`]. Its id.
///
/// ```
/// use plover::prelude::*;
/// use plover::jobs::{self, Job};
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// db.run_blocking(|conn| {
///     plover::schema::create_tables(conn, &[Job::meta()])?;
///     conn.transaction(|conn| {
///         // ... the write the job belongs to ...
///         jobs::enqueue(conn, "send_receipt", &serde_json::json!({"order": 7}))
///     })
/// })
/// .unwrap();
/// ```
///
/// # Errors
/// As [`NewJob::new`] and [`NewJob::enqueue`].
pub fn enqueue(conn: &mut Conn<'_>, kind: &str, payload: &impl Serialize) -> Result<i64, Error> {
    NewJob::new(kind, payload)?.enqueue(conn)
}

/// Queues the `failed` job `id` again: due now, with all its attempts again (its
/// `last_error` stays until the next attempt). Returns whether such a job was there; a job
/// in another state is left alone. A failed job is removed like any row
/// (`DELETE FROM plover_job WHERE id = ...`, or the admin).
///
/// # Errors
/// The database's error.
pub fn retry(conn: &mut Conn<'_>, id: i64) -> Result<bool, Error> {
    let queued = store::requeue(conn, id)?;
    if queued {
        WAKE.notify_waiters();
    }
    Ok(queued)
}
