//! `DbConn`: the request's database connection, as an actix-web extractor.

use std::future::{ready, Ready};
use std::sync::{Arc, Mutex};

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};

use super::work::{Done, Job, OnConn};
use super::{Conn, Database, Pooled};
use crate::error::Error;

type Slot = Arc<Mutex<Option<Pooled>>>;

/// The database connection of one request: checked out of the pool when a handler first runs
/// a query, reused by every later query of the same request, and returned to the pool when the
/// request ends. Requires the [`Database`] as app data (`App::app_data(web::Data::new(db))`).
///
/// ```no_run
/// # use plover::db::{Conn, DbConn};
/// async fn count(db: DbConn) -> Result<String, plover::Error> {
///     let n = db.run(|conn: &mut Conn<'_>| Ok(42)).await?;
///     Ok(n.to_string())
/// }
/// ```
#[derive(Clone)]
pub struct DbConn {
    db: Database,
    slot: Slot,
}

impl std::fmt::Debug for DbConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbConn").finish_non_exhaustive()
    }
}

impl DbConn {
    /// Runs `f` with the request's connection on actix's blocking thread pool.
    pub async fn run<R, F>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut Conn<'_>) -> Result<R, Error> + Send + 'static,
        R: Send + 'static,
    {
        let done = self.run_dyn(Job::boxed(f)).await?;
        Job::<F, R>::result(done)
    }

    /// [`DbConn::run`] of a job whose type is erased: the blocking task is compiled once, not
    /// once per closure. Returns the job, which holds its result.
    async fn run_dyn(&self, mut job: Box<dyn OnConn>) -> Result<Done, Error> {
        let (db, slot) = (self.db.clone(), self.slot.clone());
        web::block(move || {
            let mut guard = slot
                .lock()
                .map_err(|_| Error::Internal("connection slot poisoned".into()))?;
            let pooled = match guard.as_mut() {
                Some(pooled) => pooled,
                None => guard.insert(db.checkout()?),
            };
            let error = job.run(&mut pooled.conn());
            pooled.settle(error);
            Ok(job.done())
        })
        .await
        .map_err(|e| Error::Internal(format!("blocking task failed: {e}")))?
    }
}

impl FromRequest for DbConn {
    type Error = Error;
    type Future = Ready<Result<DbConn, Error>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let Some(db) = req.app_data::<web::Data<Database>>() else {
            return ready(Err(Error::Internal(
                "DbConn needs the Database as app data: App::app_data(web::Data::new(db))".into(),
            )));
        };
        let existing = req.extensions().get::<Slot>().cloned();
        let slot = existing.unwrap_or_else(|| {
            let slot = Slot::default();
            req.extensions_mut().insert(slot.clone());
            slot
        });
        ready(Ok(DbConn {
            db: db.get_ref().clone(),
            slot,
        }))
    }
}
