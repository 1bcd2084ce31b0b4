//! The table of the queue, `plover_job`: a model like the application's own, so that its
//! schema, drift check and migrations come with theirs.

use plover_derive::RestModel;

/// One job of the queue: a row of the table `plover_job`.
///
/// A job is `queued` until a worker claims it (`running`, until `locked_until`), then deleted
/// when its handler succeeds, queued again for `run_after` when it fails with attempts left,
/// or `failed` when it has none (kept, with `last_error`, until it is retried or deleted).
/// Jobs with the same `serial_key` run one at a time, in the order of their ids. A claim reads
/// a few entries of two indexes however long the queue: the one over `state`, `serial_key`
/// and `run_after` finds the due jobs without a key and the lapsed claims, the one over
/// `serial_key` and `id` the first job of each key.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_job)]
#[rest(table, display = "{kind} #{id} ({state})")]
#[rest(index = "state, serial_key, run_after")]
#[rest(index = "serial_key, id")]
pub struct Job {
    /// Primary key, in the order the jobs were enqueued.
    pub id: i64,
    /// The name of the job's kind: which handler runs it.
    #[rest(max_len = 100)]
    pub kind: String,
    /// The job's arguments, as JSON.
    #[rest(long)]
    pub payload: String,
    /// `queued`, `running` or `failed`.
    #[rest(choices = ["queued", "running", "failed"])]
    pub state: String,
    /// Jobs with the same key run one at a time, in the order they were enqueued: one is not
    /// claimed while an earlier one is queued or running (a `failed` one no longer holds the
    /// later ones back). `None`: no order.
    #[rest(max_len = 200)]
    pub serial_key: Option<String>,
    /// The attempts claimed so far (the one running included).
    pub attempts: i32,
    /// The attempts after which a failing job is `failed`.
    pub max_attempts: i32,
    /// When the job may run (next): now, or later after a failed attempt (UTC).
    pub run_after: chrono::NaiveDateTime,
    /// While `running`: when the claim lapses and another worker may run the job again (the
    /// visibility timeout; UTC).
    pub locked_until: Option<chrono::NaiveDateTime>,
    /// The error of the last failed attempt.
    #[rest(long)]
    pub last_error: Option<String>,
    /// When the job was enqueued (UTC).
    #[rest(default = crate::value::now())]
    pub created: chrono::NaiveDateTime,
    /// When the job last changed state (UTC).
    #[rest(default = crate::value::now())]
    pub updated: chrono::NaiveDateTime,
}
