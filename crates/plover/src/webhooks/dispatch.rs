//! Deliveries from the outbox (docs/changes.md#deliveries-from-the-outbox): the endpoints an
//! application registers over a REST API's resources, and the dispatcher that turns each event
//! into one delivery job per endpoint that wants it, in the event's order per endpoint.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::cursor;
use super::endpoint::Endpoint;
use super::guard::Targets;
use super::stored;
use crate::changes::{order, ChangeEvent};
use crate::db::{pending, Conn, Database};
use crate::error::Error;
use crate::jobs::{backoff, NewJob};
use crate::model::ModelMeta;
use crate::query::Op;
use crate::rest::{ResourceEndpoint, RestApi};
use crate::views::Query;

/// The kind of the delivery jobs.
pub const DELIVERY_JOB: &str = "plover.webhook";

/// The name of the dispatcher's position in `plover_webhook_cursor`.
const CURSOR: &str = "default";

/// Events one pass of the dispatcher reads at most.
const BATCH: usize = 100;

/// How often an idle dispatcher looks for events that no commit it heard of announced.
const POLL: Duration = Duration::from_secs(1);

/// How long the retries of a delivery last at least, unless [`Webhooks::max_attempts`] says
/// otherwise.
pub const RETRY_FOR: Duration = Duration::from_secs(24 * 3600);

/// The most attempts a delivery gets when its retries are counted to last [`RETRY_FOR`].
const MOST_ATTEMPTS: u32 = 1_000;

/// A delivery job's payload: the endpoint (by URL), the event id (`webhook-id`) and the body,
/// made once so that every attempt sends the same bytes.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Delivery {
    pub(crate) endpoint: String,
    pub(crate) id: i64,
    pub(crate) body: String,
}

/// The webhooks of a REST API: its endpoints, and the deliveries of the API's resources'
/// changes to them. See the [module documentation](super).
///
/// ```
/// use plover::prelude::*;
/// use plover::webhooks::{Endpoint, Targets, Webhooks};
/// # #[derive(RestModel)] pub struct Ticket { pub id: i32, pub title: String }
///
/// # fn hooks(db: Database) -> Result<(), Error> {
/// let mut api = RestApi::new(db);
/// api.register::<Ticket>();
/// let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// let hooks = Webhooks::new(&api).endpoint(
///     Endpoint::new("https://billing.example.com/hooks", secret, Targets::Public)?
///         .resources(&["ticket"])
///         .operations(&["created"]),
/// );
/// # let _ = hooks; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Webhooks {
    db: Database,
    resources: Vec<Arc<dyn ResourceEndpoint>>,
    endpoints: Vec<Endpoint>,
    /// With [`Webhooks::stored_endpoints`]: the addresses the stored endpoints may reach.
    stored: Option<Targets>,
    /// The models of the resources the endpoints want.
    models: Vec<&'static str>,
    retry_base: Duration,
    retry_cap: Duration,
    max_attempts: Option<u32>,
    /// Whether the position's table is known to exist.
    ready: Arc<AtomicBool>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("endpoints", &self.endpoints)
            .field("max_attempts", &self.attempts())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// The webhooks of `api`'s resources (call it before `api.setup()`): an endpoint names
    /// the resources it wants by their names in `api`, and each delivery's object is the row
    /// as its resource serializes it. No endpoint yet; a failed delivery is retried after 5 s,
    /// then after waits that double up to 1 h (with jitter), for at least 24 h.
    pub fn new(api: &RestApi) -> Webhooks {
        let (db, resources) = api.resources();
        Webhooks {
            db: db.clone(),
            resources: resources.to_vec(),
            endpoints: Vec::new(),
            stored: None,
            models: Vec::new(),
            retry_base: Duration::from_secs(5),
            retry_cap: Duration::from_secs(3600),
            max_attempts: None,
            ready: Arc::default(),
        }
    }

    /// Registers `endpoint`: it receives the changes of the resources it wants (all of the
    /// API's by default), and their models record their changes from now on in this process.
    ///
    /// Panics when the endpoint names a resource the API does not have, or when an endpoint
    /// with the same URL is registered already: both are programming errors, reported before
    /// the server starts.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Webhooks {
        let url = endpoint.url();
        if let Some(name) = (endpoint.resource_names().iter())
            .find(|n| !self.resources.iter().any(|r| r.name() == n.as_str()))
        {
            panic!("plover: the webhook endpoint {url} wants the resource '{name}', which the API does not have");
        }
        if self.endpoints.iter().any(|e| e.url() == url) {
            panic!("plover: the webhook endpoint {url} is registered twice");
        }
        let wanted: Vec<&'static ModelMeta> = (self.resources.iter())
            .filter(|r| endpoint.wants_resource(r.name()))
            .map(|r| r.model())
            .collect();
        self.record(wanted);
        self.endpoints.push(endpoint);
        self
    }

    /// Also delivers to the endpoints stored in the table `plover_webhook_endpoint` (the
    /// model [`WebhookEndpoint`](super::WebhookEndpoint), which the admin's
    /// "webhook-endpoints" pages edit: [`Admin::webhooks`](crate::admin::Admin::webhooks)),
    /// read at each pass of the dispatcher: one added is delivered the events committed from
    /// then on, one removed or deactivated gets no new delivery. `targets` says which
    /// addresses they may reach ([`Targets::Public`] unless a receiver of your own network is
    /// meant); the admin refuses the others. Since any resource may be wanted later, every
    /// resource of the API records its changes from now on in this process.
    pub fn stored_endpoints(mut self, targets: Targets) -> Webhooks {
        self.stored = Some(targets);
        let all: Vec<&'static ModelMeta> = self.resources.iter().map(|r| r.model()).collect();
        self.record(all);
        self
    }

    /// Makes `models` record their changes, and the dispatcher read their events.
    fn record(&mut self, models: Vec<&'static ModelMeta>) {
        for meta in models {
            meta.record_changes();
            if !self.models.contains(&meta.name) {
                self.models.push(meta.name);
            }
        }
    }

    /// The addresses stored endpoints may reach; `None` without
    /// [`Webhooks::stored_endpoints`].
    #[cfg(feature = "admin")]
    pub(crate) fn stored_targets(&self) -> Option<Targets> {
        self.stored
    }

    /// The names of the resources endpoints may want.
    #[cfg(feature = "admin")]
    pub(crate) fn resource_names(&self) -> Vec<&str> {
        self.resources.iter().map(|r| r.name()).collect()
    }

    /// The URLs of the endpoints in code.
    #[cfg(feature = "admin")]
    pub(crate) fn code_urls(&self) -> Vec<String> {
        self.endpoints.iter().map(Endpoint::url).collect()
    }

    /// The wait after a failed delivery: `base` after the first attempt, doubling after each
    /// next one up to `cap`, each a random point between its half and itself (defaults 5 s
    /// and 1 h). Unless [`Webhooks::max_attempts`] says otherwise, a delivery gets as many
    /// attempts as its retries need to last at least [`RETRY_FOR`] (24 h).
    pub fn retry(mut self, base: Duration, cap: Duration) -> Webhooks {
        self.retry_base = base;
        self.retry_cap = cap;
        self
    }

    /// The attempts after which a failing delivery is dead-lettered (its job `failed`),
    /// instead of as many as last 24 h.
    pub fn max_attempts(mut self, attempts: u32) -> Webhooks {
        self.max_attempts = Some(attempts.max(1));
        self
    }

    /// The attempts each delivery gets.
    fn attempts(&self) -> u32 {
        self.max_attempts
            .unwrap_or_else(|| attempts_lasting(RETRY_FOR, self.retry_base, self.retry_cap))
    }

    /// Adds the handler of the delivery jobs (kind [`DELIVERY_JOB`]) to `jobs`, with this
    /// retry schedule: the workers of `jobs` then send the deliveries (Cargo feature
    /// `webhooks`). Each attempt posts the delivery's body, signed, to its endpoint (a stored
    /// one as the table has it then); a delivery whose endpoint is no longer registered, or
    /// no longer active, fails.
    #[cfg(feature = "webhooks")]
    pub fn jobs(&self, jobs: crate::jobs::Jobs) -> crate::jobs::Jobs {
        let endpoints: Arc<[Endpoint]> = self.endpoints.clone().into();
        let (db, stored) = (self.db.clone(), self.stored);
        jobs.retry_kind(DELIVERY_JOB, self.retry_base, self.retry_cap)
            .handle(DELIVERY_JOB, move |delivery: Delivery| {
                let endpoint = (endpoints.iter())
                    .find(|e| e.url() == delivery.endpoint)
                    .cloned();
                let db = db.clone();
                async move {
                    let endpoint = match (endpoint, stored) {
                        (Some(endpoint), _) => Some(endpoint),
                        (None, Some(targets)) => {
                            let url = delivery.endpoint.clone();
                            db.run(move |conn| {
                                let found = stored::active(conn, targets)?;
                                Ok(found.into_iter().find(|e| e.url() == url))
                            })
                            .await?
                        }
                        (None, None) => None,
                    };
                    let Some(endpoint) = endpoint else {
                        let url = delivery.endpoint;
                        return Err(format!("no webhook endpoint {url} is registered").into());
                    };
                    let id = delivery.id.to_string();
                    super::deliver(&endpoint, &id, delivery.body.as_bytes()).await?;
                    Ok(())
                }
            })
    }

    /// Starts the dispatcher on the current actix runtime (call it once, inside
    /// `#[actix_web::main]`, beside the job workers): after each commit of events in this
    /// process, on another process's commit (within a second), and every second, it queues
    /// the deliveries of the events after its position. Before it returns, the position is
    /// made if the database has none (at the newest event: deliveries start with the events
    /// committed from then on). Any number of processes may run one: each event is handed out
    /// once.
    ///
    /// # Errors
    /// The database's error (the events table `plover_event` must exist).
    pub fn start(&self) -> Result<Dispatcher, Error> {
        self.db
            .run_blocking(|conn| conn.transaction(|conn| self.prepare(conn).map(|_| ())))?;
        crate::changes::watch::start(&self.db);
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let task = actix_web::rt::spawn(Arc::new(self.clone()).run(stopped));
        Ok(Dispatcher { stop, task })
    }

    /// Starts everything that sends this application's webhooks, on the current actix
    /// runtime (call it inside `#[actix_web::main]`, beside the server): `count` workers of
    /// `jobs` with the delivery handler added ([`jobs`](Webhooks::jobs); the application's own
    /// job handlers run in the same workers), and the dispatcher ([`start`](Webhooks::start)).
    /// With `count` 0 only the dispatcher runs: the deliveries are sent by the workers of
    /// another process (the `worker` management command). [`Running::stop`] stops both.
    /// The management commands' `serve` and `worker` call it for
    /// [`Commands::webhooks`](crate::manage::Commands::webhooks).
    ///
    /// # Errors
    /// The database's error (the events table `plover_event` must exist).
    ///
    /// ```no_run
    /// # use plover::prelude::*;
    /// # use plover::jobs::Jobs;
    /// # use plover::webhooks::Webhooks;
    /// # async fn serve(db: Database, hooks: Webhooks, server: actix_web::dev::Server) -> std::io::Result<()> {
    /// let running = hooks
    ///     .start_with_workers(Jobs::new(db.clone()), 2)
    ///     .map_err(std::io::Error::other)?;
    /// let served = server.await;
    /// running.stop().await; // the dispatcher, then the workers (each finishes its job)
    /// served
    /// # }
    /// ```
    #[cfg(feature = "webhooks")]
    pub fn start_with_workers(
        &self,
        jobs: crate::jobs::Jobs,
        count: usize,
    ) -> Result<Running, Error> {
        let dispatcher = self.start()?;
        let workers = self.jobs(jobs).start(count);
        Ok(Running {
            dispatcher,
            workers,
        })
    }

    /// Queues the deliveries of every event after the dispatcher's position, then moves the
    /// position past them (one transaction per hundred events); the number of deliveries
    /// queued. For tests and one-off runs: a serving process [`start`](Webhooks::start)s the
    /// dispatcher. A first call on a database makes the position at the newest event, and
    /// queues nothing.
    ///
    /// # Errors
    /// The database's error.
    pub async fn dispatch(&self) -> Result<usize, Error> {
        // The events committed so far first get their places (PostgreSQL).
        self.db.run(order::settle).await?;
        let this = Arc::new(self.clone());
        let mut queued = 0;
        loop {
            let (read, more) = Arc::clone(&this).pass().await?;
            queued += more;
            if read < BATCH {
                return Ok(queued);
            }
        }
    }

    /// The dispatcher's loop.
    async fn run(self: Arc<Self>, mut stop: tokio::sync::oneshot::Receiver<()>) {
        let mut commits = pending::committed();
        loop {
            commits.borrow_and_update();
            match Arc::clone(&self).pass().await {
                Ok((read, _)) if read == BATCH => continue,
                Ok(_) => {}
                Err(e) => log::warn!("webhooks: the dispatcher: {e}"),
            }
            tokio::select! {
                _ = commits.changed() => {}
                () = tokio::time::sleep(POLL) => {}
                _ = &mut stop => return,
            }
        }
    }

    /// One pass on a pooled connection: the events read and the deliveries queued. A read
    /// first: no write transaction while no event is new.
    async fn pass(self: Arc<Self>) -> Result<(usize, usize), Error> {
        if self.models.is_empty() {
            return Ok((0, 0)); // no endpoint, or the API has no resource
        }
        self.db
            .clone()
            .run_lazy(move |db| {
                if self.ready.load(Ordering::Relaxed) && !self.news(&mut db.conn()?)? {
                    return Ok((0, 0));
                }
                db.write(|conn| self.hand_out(conn))
            })
            .await
    }

    /// Whether an event of a wanted model follows the position.
    fn news(&self, conn: &mut Conn<'_>) -> Result<bool, Error> {
        let after = cursor::read(conn, CURSOR)?.unwrap_or(0);
        self.events_after(conn, after).limit(1).exists(conn)
    }

    /// The events of the wanted models after the place `after`, in place order.
    fn events_after(&self, conn: &mut Conn<'_>, after: i64) -> Query<ChangeEvent> {
        let wanted = Query::<ChangeEvent>::new().filter_any(
            ChangeEvent::FIELDS.model,
            Op::In,
            self.models.iter().copied(),
        );
        order::after(conn.engine(), wanted, after)
    }

    /// In the transaction that holds the position: its value, the table made when this
    /// process has not seen it yet; `None` when another dispatcher holds it.
    fn prepare(&self, conn: &mut Conn<'_>) -> Result<Option<i64>, Error> {
        if !cursor::hold(conn)? {
            return Ok(None);
        }
        if !self.ready.load(Ordering::Relaxed) {
            cursor::create(conn)?;
        }
        let after = cursor::position(conn, CURSOR)?;
        self.ready.store(true, Ordering::Relaxed);
        Ok(Some(after))
    }

    /// Queues the deliveries of the events after the position (at most [`BATCH`]) and moves
    /// the position past them.
    fn hand_out(&self, conn: &mut Conn<'_>) -> Result<(usize, usize), Error> {
        let Some(after) = self.prepare(conn)? else {
            return Ok((0, 0));
        };
        let events = self
            .events_after(conn, after)
            .limit(BATCH as i64)
            .all(conn)?;
        let mut endpoints = self.endpoints.clone();
        if let (Some(targets), false) = (self.stored, events.is_empty()) {
            endpoints.extend(stored::active(conn, targets)?);
        }
        let mut queued = 0;
        for event in &events {
            queued += self.queue_deliveries(conn, &endpoints, event)?;
        }
        if let Some(last) = events.last() {
            cursor::advance(conn, CURSOR, last.place())?;
        }
        Ok((events.len(), queued))
    }

    /// Queues one delivery of `event` per endpoint of `endpoints` that wants it: the body as
    /// the first resource of its model that the endpoint wants serializes the row.
    fn queue_deliveries(
        &self,
        conn: &mut Conn<'_>,
        endpoints: &[Endpoint],
        event: &ChangeEvent,
    ) -> Result<usize, Error> {
        let mut bodies: Vec<(&str, String)> = Vec::new();
        let mut queued = 0;
        for endpoint in endpoints {
            let Some(resource) = (self.resources.iter())
                .find(|r| r.model().name == event.model && endpoint.wants(r.name(), &event.op))
            else {
                continue;
            };
            let body = match bodies.iter().find(|(name, _)| *name == resource.name()) {
                Some((_, body)) => body.clone(),
                None => {
                    let body = body(conn, resource.as_ref(), event)?;
                    bodies.push((resource.name(), body.clone()));
                    body
                }
            };
            let url = endpoint.url();
            let delivery = Delivery {
                endpoint: url.clone(),
                id: event.id,
                body,
            };
            NewJob::new(DELIVERY_JOB, &delivery)?
                .serial(&serial_key(&url))
                .max_attempts(self.attempts())
                .enqueue(conn)?;
            queued += 1;
        }
        Ok(queued)
    }
}

/// The body of the delivery of `event` as `resource` shows it:
/// `{"id", "event", "resource", "object"}`.
fn body(
    conn: &mut Conn<'_>,
    resource: &dyn ResourceEndpoint,
    event: &ChangeEvent,
) -> Result<String, Error> {
    let object = match event.op.as_str() {
        "deleted" => None,
        _ => resource.webhook_object(conn, event)?,
    };
    let text = |value: &str| serde_json::to_string(value).unwrap_or_default();
    Ok(format!(
        "{{\"id\":{},\"event\":{},\"resource\":{},\"object\":{}}}",
        event.id,
        text(&event.op),
        text(resource.name()),
        object.as_deref().unwrap_or("null")
    ))
}

/// The serial key of an endpoint's deliveries: `webhook <url>`, or for a URL too long for a
/// key, `webhook sha256:<hex of the URL's hash>`.
fn serial_key(url: &str) -> String {
    let key = format!("webhook {url}");
    if key.chars().count() <= 200 {
        return key;
    }
    let hash = Sha256::digest(url.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("webhook sha256:{hex}")
}

/// The fewest attempts whose waits (each at its shortest: half of what
/// [`backoff::wait`] doubles to) last at least `total`, at most [`MOST_ATTEMPTS`].
fn attempts_lasting(total: Duration, base: Duration, cap: Duration) -> u32 {
    let mut waited = Duration::ZERO;
    for attempt in 1..MOST_ATTEMPTS {
        if waited >= total {
            return attempt;
        }
        waited += backoff::wait(attempt, base, cap, 0.0);
    }
    MOST_ATTEMPTS
}

/// The dispatcher [`Webhooks::start`] started.
#[derive(Debug)]
pub struct Dispatcher {
    stop: tokio::sync::oneshot::Sender<()>,
    task: actix_web::rt::task::JoinHandle<()>,
}

impl Dispatcher {
    /// Stops the dispatcher after the pass it runs (if any).
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// The dispatcher and the job workers [`Webhooks::start_with_workers`] started.
#[cfg(feature = "webhooks")]
#[derive(Debug)]
pub struct Running {
    dispatcher: Dispatcher,
    workers: crate::jobs::Workers,
}

#[cfg(feature = "webhooks")]
impl Running {
    /// Stops the dispatcher after its pass, then the workers, each after the job it runs:
    /// no delivery is left half sent.
    pub async fn stop(self) {
        self.dispatcher.stop().await;
        self.workers.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_retries_last_a_day_and_long_urls_get_a_hashed_key() {
        let (base, cap) = (Duration::from_secs(5), Duration::from_secs(3600));
        let n = attempts_lasting(RETRY_FOR, base, cap);
        let shortest: Duration = (1..n).map(|a| backoff::wait(a, base, cap, 0.0)).sum();
        let one_less: Duration = (1..n - 1).map(|a| backoff::wait(a, base, cap, 0.0)).sum();
        assert!(shortest >= RETRY_FOR && one_less < RETRY_FOR, "{n}");
        assert_eq!(
            attempts_lasting(RETRY_FOR, Duration::ZERO, cap),
            MOST_ATTEMPTS
        );
        assert_eq!(serial_key("http://a/"), "webhook http://a/");
        let long = format!("http://a/{}", "x".repeat(300));
        assert!(serial_key(&long).starts_with("webhook sha256:"));
        assert_eq!(serial_key(&long).len(), "webhook sha256:".len() + 64);
    }
}
