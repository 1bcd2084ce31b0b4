//! Units of work with their types erased at the database's boundaries.
//!
//! Every closure handed to [`Database::run`](super::Database::run) and its kin, to
//! [`Conn::transaction`](super::Conn::transaction) or to
//! [`LazyConn::write`](super::LazyConn::write) has a type of its own. Were those functions
//! generic all the way down, the application's crate would compile a copy of tokio's blocking
//! task and of diesel's transaction for each closure it writes (with the models' routes, some
//! hundreds of copies). Instead their generic fronts only wrap the closure: into a [`Job`] (one
//! box holding the closure and the place of its result) for the blocking pool, into a
//! `&mut dyn FnMut` on the stack for a transaction; the code behind them is compiled once, in
//! Plover.

use std::any::Any;

use super::{Conn, LazyConn};
use crate::error::Error;

/// A closure `f` and the place of its result: one allocation that crosses to the blocking pool
/// and back.
pub(super) struct Job<F, R> {
    f: Option<F>,
    out: Option<Result<R, Error>>,
}

impl<F, R> Job<F, R> {
    /// The job of running `f`, in a box.
    pub(super) fn boxed(f: F) -> Box<Job<F, R>> {
        Box::new(Job {
            f: Some(f),
            out: None,
        })
    }

    /// Calls the closure with `arg` (once; later calls do nothing) and keeps its result: its
    /// error, if any, is returned for a look.
    fn call<A>(&mut self, arg: A) -> Option<&Error>
    where
        F: FnOnce(A) -> Result<R, Error>,
    {
        if let Some(f) = self.f.take() {
            self.out = Some(f(arg));
        }
        self.out.as_ref().and_then(|out| out.as_ref().err())
    }
}

/// What a job's result is taken from once it comes back from the blocking pool: the box,
/// whose type [`Job::result`] knows.
pub(super) type Done = Box<dyn Any + Send>;

impl<F: Send + 'static, R: Send + 'static> Job<F, R> {
    /// The result of the job that came back as `done`.
    pub(super) fn result(done: Done) -> Result<R, Error> {
        match done.downcast::<Job<F, R>>() {
            Ok(job) => job.out.unwrap_or_else(|| Err(lost())),
            Err(_) => Err(lost()),
        }
    }
}

/// The error of a job whose result is missing (it did not run): not expected to happen.
fn lost() -> Error {
    Error::Internal("a unit of work ended without a result".into())
}

/// A unit of work on a [`LazyConn`], to run on the blocking pool.
pub(super) trait OnLazy: Send {
    /// Runs the work; returns its error, if it failed.
    fn run(&mut self, db: &mut LazyConn<'_>) -> Option<&Error>;
    /// The job itself, for [`Job::result`].
    fn done(self: Box<Self>) -> Done;
}

impl<F, R> OnLazy for Job<F, R>
where
    F: FnOnce(&mut LazyConn<'_>) -> Result<R, Error> + Send + 'static,
    R: Send + 'static,
{
    fn run(&mut self, db: &mut LazyConn<'_>) -> Option<&Error> {
        self.call(db)
    }

    fn done(self: Box<Self>) -> Done {
        self
    }
}

/// A unit of work on a [`Conn`], to run on the blocking pool.
pub(super) trait OnConn: Send {
    /// Runs the work; returns its error, if it failed.
    fn run(&mut self, conn: &mut Conn<'_>) -> Option<&Error>;
    /// The job itself, for [`Job::result`].
    fn done(self: Box<Self>) -> Done;
}

impl<F, R> OnConn for Job<F, R>
where
    F: FnOnce(&mut Conn<'_>) -> Result<R, Error> + Send + 'static,
    R: Send + 'static,
{
    fn run(&mut self, conn: &mut Conn<'_>) -> Option<&Error> {
        self.call(conn)
    }

    fn done(self: Box<Self>) -> Done {
        self
    }
}

/// The body of a transaction with its type erased: called once, it returns the outcome the
/// transaction commits or rolls back on, and keeps the value elsewhere ([`in_body`]).
pub(super) type Body<'f> = dyn FnMut(&mut Conn<'_>) -> Result<(), Error> + 'f;

/// Runs `f` as the [`Body`] that `run` takes (a transaction), and returns what `f` returned.
pub(super) fn in_body<R>(
    f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>,
    run: impl FnOnce(&mut Body<'_>) -> Result<(), Error>,
) -> Result<R, Error> {
    let (mut f, mut out) = (Some(f), None);
    run(&mut |conn| {
        let f = f.take().ok_or_else(lost)?;
        out = Some(f(conn)?);
        Ok(())
    })?;
    out.ok_or_else(lost)
}
