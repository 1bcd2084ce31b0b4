//! A job queue in the application's own database (docs/changes.md#jobs): work enqueued in
//! the same transaction as a write, run after it commits by worker tasks in every serving
//! process, or by the `worker` management command. Webhook deliveries run on it.
//!
//! - [`enqueue`] (or [`NewJob`] for the options) writes a job on the caller's connection:
//!   inside a write's transaction, the job exists if and only if the write commits.
//! - [`Jobs`] maps each kind to an async handler, and [`Jobs::start`] starts workers.
//! - At least once: a worker claims a job for the handler's time bound (the visibility
//!   timeout); a job whose worker died is claimed again once the claim lapses. A handler may
//!   therefore run more than once for one job: make it idempotent.
//! - A failed attempt (an `Err`, a panic, the time bound) is retried after an exponential
//!   wait with jitter while the job has attempts left, then the job is `failed` and kept
//!   with its last error. A job that succeeds is deleted.
//! - Jobs with the same serial key ([`NewJob::serial`]) run one at a time, in the order
//!   they were enqueued.
//! - Claims take one statement: on PostgreSQL `FOR UPDATE SKIP LOCKED`, so that workers of
//!   any number of processes never wait for each other nor take the same job; on SQLite an
//!   `UPDATE ... WHERE id = (SELECT ...) RETURNING` in a write transaction.
//!
//! The table is the model [`Job`] (`plover_job`): `manage::Commands` counts it among the
//! application's models by itself; an application that creates its tables with
//! `schema::create_tables` lists [`Job::meta`](crate::model::RestModel::meta) among them.
//!
//! ```
//! use plover::prelude::*;
//! use plover::jobs::{self, Job, Jobs};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Receipt { order: i64 }
//!
//! # actix_web::rt::System::new().block_on(async {
//! let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
//! db.run_blocking(|conn| plover::schema::create_tables(conn, &[Job::meta()])).unwrap();
//!
//! let queue = Jobs::new(db.clone()).handle("send_receipt", |receipt: Receipt| async move {
//!     println!("receipt for order {}", receipt.order);
//!     Ok(())
//! });
//! // In a write's transaction: the job commits with the write.
//! db.run_blocking(|conn| conn.transaction(|conn| {
//!     jobs::enqueue(conn, "send_receipt", &Receipt { order: 7 })
//! }))
//! .unwrap();
//!
//! // A serving process starts workers once: `let workers = queue.start(2);`
//! assert_eq!(queue.run_due().await.unwrap(), 1);
//! # });
//! ```

pub(crate) mod backoff;
mod enqueue;
mod row;
mod store;
mod worker;

pub use enqueue::{enqueue, retry, NewJob, DEFAULT_MAX_ATTEMPTS};
pub use row::Job;
pub use worker::{JobResult, Jobs, Workers};
