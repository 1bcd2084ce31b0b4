//! The statements on `plover_job`: enqueue, claim, and the end of an attempt. Every value is a
//! bound parameter; each statement has its SQLite and its PostgreSQL text.

use std::time::Duration;

use chrono::NaiveDateTime;
use diesel::sql_types::{BigInt, Integer, Nullable, Text, Timestamp};
use diesel::RunQueryDsl;

use crate::db::{by_engine, Conn};
use crate::error::Error;

/// A job a worker claimed: what its handler needs, and the attempt that identifies the claim.
#[derive(Debug, Clone, diesel::QueryableByName)]
pub(crate) struct Claimed {
    #[diesel(sql_type = BigInt)]
    pub(crate) id: i64,
    #[diesel(sql_type = Text)]
    pub(crate) kind: String,
    #[diesel(sql_type = Text)]
    pub(crate) payload: String,
    /// This attempt's number, from 1: a later claim of the same job has a higher one.
    #[diesel(sql_type = Integer)]
    pub(crate) attempts: i32,
    #[diesel(sql_type = Integer)]
    pub(crate) max_attempts: i32,
}

#[derive(diesel::QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// `at` plus `by`, saturating.
pub(crate) fn later(at: NaiveDateTime, by: Duration) -> NaiveDateTime {
    chrono::Duration::from_std(by)
        .ok()
        .and_then(|by| at.checked_add_signed(by))
        .unwrap_or(NaiveDateTime::MAX)
}

/// Inserts a queued job; its id.
pub(crate) fn insert(
    conn: &mut Conn<'_>,
    kind: &str,
    payload: &str,
    serial_key: Option<&str>,
    max_attempts: i32,
    run_after: NaiveDateTime,
) -> Result<i64, Error> {
    let now = crate::value::now();
    let ids: Vec<Id> = by_engine!(
        load,
        conn,
        "INSERT INTO plover_job (kind, payload, serial_key, state, attempts, max_attempts, \
         run_after, created, updated) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?) RETURNING id",
        "INSERT INTO plover_job (kind, payload, serial_key, state, attempts, max_attempts, \
         run_after, created, updated) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $7) \
         RETURNING id",
        |q| q
            .bind::<Text, _>(kind)
            .bind::<Text, _>(payload)
            .bind::<Nullable<Text>, _>(serial_key)
            .bind::<Integer, _>(max_attempts)
            .bind::<Timestamp, _>(run_after)
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
    )
    .map_err(explained)?;
    ids.first()
        .map(|row| row.id)
        .ok_or_else(|| Error::Internal("the job insert returned no id".into()))
}

/// The condition on a candidate job `j` that no earlier job of its serial key is queued or
/// running.
macro_rules! first_of_its_key {
    () => {
        "(j.serial_key IS NULL OR NOT EXISTS (SELECT 1 FROM plover_job AS e \
         WHERE e.serial_key = j.serial_key AND e.id < j.id AND e.state <> 'failed'))"
    };
}

/// Whether there is work for a claim ([`claim`] or [`fail_lapsed`]): a read, so that idle
/// workers do not take SQLite's write lock on every look.
pub(crate) fn work_waits(conn: &mut Conn<'_>, kinds: &str) -> Result<bool, Error> {
    let now = crate::value::now();
    let found: Vec<Id> = by_engine!(
        load,
        conn,
        concat!(
            "SELECT id FROM plover_job AS j WHERE (state = 'queued' AND run_after <= ? \
             AND kind IN (SELECT value FROM json_each(?)) AND ",
            first_of_its_key!(),
            ") OR (state = 'running' AND locked_until <= ?) LIMIT 1"
        ),
        concat!(
            "SELECT id FROM plover_job AS j WHERE (state = 'queued' AND run_after <= $1 \
             AND kind IN (SELECT jsonb_array_elements_text($2::jsonb)) AND ",
            first_of_its_key!(),
            ") OR (state = 'running' AND locked_until <= $3) LIMIT 1"
        ),
        |q| q
            .bind::<Timestamp, _>(now)
            .bind::<Text, _>(kinds)
            .bind::<Timestamp, _>(now)
    )
    .map_err(explained)?;
    Ok(!found.is_empty())
}

/// Which jobs a claim may take: those of `kinds` (a JSON array of names) that are queued and
/// due, or running with a claim that lapsed (its worker died) and attempts left; the oldest
/// due first.
const CLAIM_SQLITE: &str = concat!(
    "UPDATE plover_job SET state = 'running', \
     attempts = attempts + 1, locked_until = ?, updated = ? \
     WHERE id = (SELECT j.id FROM plover_job AS j \
     WHERE j.kind IN (SELECT value FROM json_each(?)) \
     AND ((j.state = 'queued' AND j.run_after <= ? AND ",
    first_of_its_key!(),
    ") OR (j.state = 'running' AND j.locked_until <= ? AND j.attempts < j.max_attempts)) \
     ORDER BY j.run_after, j.id LIMIT 1) \
     RETURNING id, kind, payload, attempts, max_attempts"
);

/// [`CLAIM_SQLITE`] on PostgreSQL: rows another claim holds are skipped, not waited for.
#[cfg(feature = "postgres")]
const CLAIM_PG: &str = concat!(
    "UPDATE plover_job SET state = 'running', \
     attempts = attempts + 1, locked_until = $1, updated = $2 \
     WHERE id = (SELECT j.id FROM plover_job AS j \
     WHERE j.kind IN (SELECT jsonb_array_elements_text($3::jsonb)) \
     AND ((j.state = 'queued' AND j.run_after <= $4 AND ",
    first_of_its_key!(),
    ") OR (j.state = 'running' AND j.locked_until <= $5 AND j.attempts < j.max_attempts)) \
     ORDER BY j.run_after, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED) \
     RETURNING id, kind, payload, attempts, max_attempts"
);

/// Claims one job of `kinds` (a JSON array of names) until `lease` from now, in one
/// statement; `None` when none is due.
pub(crate) fn claim(
    conn: &mut Conn<'_>,
    kinds: &str,
    lease: Duration,
) -> Result<Option<Claimed>, Error> {
    let now = crate::value::now();
    let claimed: Vec<Claimed> = by_engine!(load, conn, CLAIM_SQLITE, CLAIM_PG, |q| q
        .bind::<Timestamp, _>(later(now, lease))
        .bind::<Timestamp, _>(now)
        .bind::<Text, _>(kinds)
        .bind::<Timestamp, _>(now)
        .bind::<Timestamp, _>(now))
    .map_err(explained)?;
    Ok(claimed.into_iter().next())
}

/// Ends the attempt `job` claimed with success: the job is deleted. Nothing happens when the
/// claim lapsed and another worker claimed the job since.
pub(crate) fn succeeded(conn: &mut Conn<'_>, job: &Claimed) -> Result<(), Error> {
    by_engine!(
        execute,
        conn,
        "DELETE FROM plover_job WHERE id = ? AND attempts = ? AND state = 'running'",
        "DELETE FROM plover_job WHERE id = $1 AND attempts = $2 AND state = 'running'",
        |q| q.bind::<BigInt, _>(job.id).bind::<Integer, _>(job.attempts)
    )?;
    Ok(())
}

/// Ends the attempt `job` claimed with `error`: queued again for `retry_at`, or `failed` when
/// `retry_at` is `None`. Nothing happens when the claim lapsed and another worker claimed the
/// job since.
pub(crate) fn failed(
    conn: &mut Conn<'_>,
    job: &Claimed,
    error: &str,
    retry_at: Option<NaiveDateTime>,
) -> Result<(), Error> {
    let now = crate::value::now();
    let state = if retry_at.is_some() {
        "queued"
    } else {
        "failed"
    };
    by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = ?, run_after = COALESCE(?, run_after), \
         locked_until = NULL, last_error = ?, updated = ? \
         WHERE id = ? AND attempts = ? AND state = 'running'",
        "UPDATE plover_job SET state = $1, run_after = COALESCE($2, run_after), \
         locked_until = NULL, last_error = $3, updated = $4 \
         WHERE id = $5 AND attempts = $6 AND state = 'running'",
        |q| q
            .bind::<Text, _>(state)
            .bind::<Nullable<Timestamp>, _>(retry_at)
            .bind::<Text, _>(error)
            .bind::<Timestamp, _>(now)
            .bind::<BigInt, _>(job.id)
            .bind::<Integer, _>(job.attempts)
    )?;
    Ok(())
}

/// Queues the failed job `id` again, due now, with its attempts counted from zero; whether
/// there was such a job.
pub(crate) fn requeue(conn: &mut Conn<'_>, id: i64) -> Result<bool, Error> {
    let now = crate::value::now();
    let changed = by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = 'queued', attempts = 0, run_after = ?, \
         locked_until = NULL, updated = ? WHERE id = ? AND state = 'failed'",
        "UPDATE plover_job SET state = 'queued', attempts = 0, run_after = $1, \
         locked_until = NULL, updated = $2 WHERE id = $3 AND state = 'failed'",
        |q| q
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
            .bind::<BigInt, _>(id)
    )
    .map_err(explained)?;
    Ok(changed > 0)
}

/// What a job whose worker died on its last attempt records.
pub(crate) const LAPSED: &str = "the worker stopped before the job's last attempt ended";

/// Marks `failed` the running jobs whose claim lapsed on their last attempt (a claim takes
/// only those with attempts left); the number marked.
pub(crate) fn fail_lapsed(conn: &mut Conn<'_>) -> Result<usize, Error> {
    let now = crate::value::now();
    by_engine!(
        execute,
        conn,
        "UPDATE plover_job SET state = 'failed', locked_until = NULL, last_error = ?, \
         updated = ? WHERE state = 'running' AND locked_until <= ? \
         AND attempts >= max_attempts",
        "UPDATE plover_job SET state = 'failed', locked_until = NULL, last_error = $1, \
         updated = $2 WHERE state = 'running' AND locked_until <= $3 \
         AND attempts >= max_attempts",
        |q| q
            .bind::<Text, _>(LAPSED)
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(now)
    )
    .map_err(explained)
}

/// `e`, or where it says that the table `plover_job` does not exist, an error that says how
/// to create it.
fn explained(e: Error) -> Error {
    e.explain_missing_table("the job table", "plover_job", "plover::jobs::Job::meta()")
}
