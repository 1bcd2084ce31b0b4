//! [`Guard`]: the per-request part of the bounds on what a request may cost
//! (docs/contract.md#bounded-cost).

use std::collections::HashMap;
use std::future::{ready, Future, Ready};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use actix_web::body::{BodySize, EitherBody, MessageBody};
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::rt::time::{sleep, Sleep};
use actix_web::web::Bytes;
use actix_web::{HttpMessage, ResponseError};
use futures_util::{Stream, StreamExt};

use super::client::ClientKey;
use crate::error::Error;

/// Middleware for an actix-web `App`: a time limit on request bodies, a bound on the memory
/// that responses waiting for their clients hold, refusal of protocol upgrades and `CONNECT`,
/// and safe response headers. See the [module](super) documentation.
///
/// ```
/// use std::time::Duration;
/// use plover::server::{Guard, ResponseMemory};
///
/// // One budget for every worker's app: create it once, outside the app factory.
/// let memory = ResponseMemory::new(64 << 20);
/// let guard = Guard::default()
///     .body_timeout(Duration::from_secs(10))
///     .response_memory(memory.clone());
/// let _app = actix_web::App::new().wrap(guard);
/// ```
#[derive(Debug, Clone)]
pub struct Guard {
    body_timeout: Duration,
    memory: ResponseMemory,
}

impl Default for Guard {
    fn default() -> Self {
        Guard {
            body_timeout: Duration::from_secs(30),
            memory: ResponseMemory::process_default().clone(),
        }
    }
}

impl Guard {
    /// Time for a whole request body to arrive (default 30 s); after it the request is
    /// answered 408 and the connection closed.
    pub fn body_timeout(mut self, timeout: Duration) -> Guard {
        self.body_timeout = timeout;
        self
    }

    /// The budget that large response bodies draw on (default: one budget of
    /// [`ResponseMemory::DEFAULT_BYTES`] for the whole process).
    pub fn response_memory(mut self, memory: ResponseMemory) -> Guard {
        self.memory = memory;
        self
    }
}

/// The memory that large response bodies may hold together while they are being sent: the
/// bound on what clients that ask for large pages and read them slowly, or never, can pin.
///
/// A body of [`ResponseMemory::COUNTED_FROM`] bytes or more reserves its size when its
/// response leaves the app and gives it back when the body is dropped: sent whole, or its
/// connection closed (a client that stops reading is dropped after the server's
/// `send_timeout`). A response that does not fit is dropped at once and answered 503 with
/// `Retry-After: 1` ([`Error::Busy`](crate::Error::Busy)).
///
/// A streamed body (one of unknown size, such as the admin's exports) is counted piece by
/// piece: each piece of [`ResponseMemory::COUNTED_FROM`] bytes or more is reserved from when
/// the body yields it until the connection has taken its last slice. Its head is sent by then,
/// so a piece that does not fit ends the body with an error: the connection is closed and the
/// client sees an incomplete response. Clones share one budget.
///
/// No client address holds more than its share of the budget (default an eighth): a response
/// that would take an address that already holds some of the budget past its share is
/// answered 429 with `Retry-After: 1` ([`Error::TooManyRequests`](crate::Error::TooManyRequests)),
/// so that one client's stalled downloads never turn another client's request into a 503.
/// Shed responses are summed up in the log once a minute, not logged one by one.
#[derive(Debug, Clone)]
pub struct ResponseMemory {
    held: Arc<AtomicUsize>,
    limit: usize,
    share: usize,
    by_client: Arc<Mutex<HashMap<ClientKey, usize>>>,
    shed: Arc<Mutex<ShedLog>>,
}

/// The count of shed responses since the last summary line.
#[derive(Debug)]
struct ShedLog {
    since: Instant,
    full: u64,
    over_share: u64,
}

impl ShedLog {
    /// Counts one shed response; logs the counts once a minute.
    fn count(&mut self, over_share: bool) {
        if over_share {
            self.over_share += 1;
        } else {
            self.full += 1;
        }
        let now = Instant::now();
        if now.duration_since(self.since) >= Duration::from_secs(60) {
            log::warn!(
                "response memory: {} responses shed in the last {} s ({} with the budget full, \
                 {} over their client's share)",
                self.full + self.over_share,
                now.duration_since(self.since).as_secs(),
                self.full,
                self.over_share
            );
            *self = ShedLog {
                since: now,
                full: 0,
                over_share: 0,
            };
        }
    }
}

/// Why a response did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shed {
    Full,
    OverShare,
}

impl Shed {
    fn error(self) -> Error {
        match self {
            Shed::Full => Error::Busy,
            Shed::OverShare => Error::TooManyRequests(Duration::from_secs(1)),
        }
    }
}

impl ResponseMemory {
    /// The default budget: 256 MiB.
    pub const DEFAULT_BYTES: usize = 256 << 20;
    /// Bodies smaller than this (64 KiB) are not counted.
    pub const COUNTED_FROM: usize = 64 << 10;

    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> ResponseMemory {
        ResponseMemory {
            held: Arc::default(),
            limit,
            share: limit / 8,
            by_client: Arc::default(),
            shed: Arc::new(Mutex::new(ShedLog {
                since: Instant::now(),
                full: 0,
                over_share: 0,
            })),
        }
    }

    /// The share of the budget one client address may hold, from 0 to 1 (default 0.125). An
    /// address that holds nothing may always take one response that fits the budget.
    pub fn client_share(mut self, share: f64) -> ResponseMemory {
        self.share = (self.limit as f64 * share.clamp(0.0, 1.0)) as usize;
        self
    }

    /// The process-wide budget that [`Guard::default`] uses.
    fn process_default() -> &'static ResponseMemory {
        static DEFAULT: OnceLock<ResponseMemory> = OnceLock::new();
        DEFAULT.get_or_init(|| ResponseMemory::new(ResponseMemory::DEFAULT_BYTES))
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Reserves `bytes` for `client`, unless they do not fit the budget or the client's share.
    fn reserve(&self, bytes: usize, client: ClientKey) -> Result<Reservation, Shed> {
        let shed = |why: Shed| {
            self.shed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .count(why == Shed::OverShare);
            Err(why)
        };
        let mut by_client = self
            .by_client
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mine = by_client.get(&client).copied().unwrap_or(0);
        if mine > 0 && mine.saturating_add(bytes) > self.share {
            drop(by_client);
            return shed(Shed::OverShare);
        }
        let fits = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok();
        if !fits {
            drop(by_client);
            return shed(Shed::Full);
        }
        *by_client.entry(client).or_default() += bytes;
        Ok(Reservation {
            memory: self.clone(),
            client,
            bytes,
        })
    }
}

/// Bytes of a [`ResponseMemory`], given back on drop.
#[derive(Debug)]
struct Reservation {
    memory: ResponseMemory,
    client: ClientKey,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut by_client = self
            .memory
            .by_client
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = by_client.get_mut(&self.client) {
            *held = held.saturating_sub(self.bytes);
            if *held == 0 {
                by_client.remove(&self.client);
            }
        }
        self.memory.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

pin_project_lite::pin_project! {
    /// A response body that holds its share of a [`ResponseMemory`] until it is dropped (a
    /// streamed body: each large piece, until the piece is taken). It hands its bytes to the
    /// connection in slices of [`Counted::SLICE`] bytes, so that the body (and its share) lives
    /// until its last slice is taken: the connection's own write buffer never holds more than a
    /// slice or two of it.
    pub struct Counted<B> {
        #[pin]
        body: B,
        pending: Bytes,
        reservation: Option<Reservation>,
        // For a streamed body: the budget its pieces are reserved from (for its client), and
        // the piece held.
        stream_memory: Option<(ResponseMemory, ClientKey)>,
        piece: Option<Reservation>,
    }
}

impl<B> Counted<B> {
    /// The largest piece handed to the connection at once (64 KiB).
    pub const SLICE: usize = 64 << 10;
}

impl<B: MessageBody> MessageBody for Counted<B> {
    /// The body's own error, or [`Error::Busy`](crate::Error::Busy) for a streamed piece that
    /// does not fit the budget.
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.project();
        if this.pending.is_empty() {
            match this.body.poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => {
                    if let Some((memory, client)) = this.stream_memory {
                        if bytes.len() >= ResponseMemory::COUNTED_FROM {
                            match memory.reserve(bytes.len(), *client) {
                                Ok(piece) => *this.piece = Some(piece),
                                Err(shed) => return Poll::Ready(Some(Err(Box::new(shed.error())))),
                            }
                        }
                    }
                    *this.pending = bytes;
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = this.pending.len().min(Self::SLICE);
        let slice = this.pending.split_to(n);
        if this.pending.is_empty() {
            // The last slice of a streamed piece goes: the piece is the connection's now.
            *this.piece = None;
        }
        Poll::Ready(Some(Ok(slice)))
    }
}

impl<S, B> Transform<S, ServiceRequest> for Guard
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<EitherBody<Counted<B>>>;
    type Error = actix_web::Error;
    type Transform = GuardService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(GuardService {
            service: Rc::new(service),
            body_timeout: self.body_timeout,
            memory: Rc::new(self.memory.clone()),
        }))
    }
}

/// The service [`Guard`] wraps around an app.
#[derive(Debug)]
pub struct GuardService<S> {
    service: Rc<S>,
    body_timeout: Duration,
    /// The worker's handle on the budget: a request takes a reference to it without touching
    /// the counts the workers share.
    memory: Rc<ResponseMemory>,
}

type LocalBoxFuture<T> = Pin<Box<dyn Future<Output = T>>>;

impl<S, B> Service<ServiceRequest> for GuardService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<EitherBody<Counted<B>>>;
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<Result<Self::Response, Self::Error>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, mut req: ServiceRequest) -> Self::Future {
        let refused = if req.method() == Method::CONNECT {
            Some("CONNECT is not served here")
        } else if req.headers().contains_key(header::UPGRADE) {
            Some("protocol upgrades are not served here")
        } else {
            None
        };
        if let Some(message) = refused {
            let resp = Error::BadBody(message.into()).error_response();
            let resp = req.into_response(resp).map_into_right_body();
            return Box::pin(ready(Ok(with_safe_headers(resp))));
        }
        // A request without a body (most GETs) has nothing to time.
        let payload = req.take_payload();
        if !matches!(payload, Payload::None) {
            let timed = Deadline {
                inner: payload,
                sleep: Box::pin(sleep(self.body_timeout)),
            };
            req.set_payload(Payload::from(
                Box::pin(timed) as Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>>
            ));
        }
        let service = self.service.clone();
        let memory = self.memory.clone();
        let client = ClientKey::of(req.peer_addr().map(|a| a.ip()));
        Box::pin(async move {
            let resp = service.call(req).await?;
            let body_size = resp.response().body().size();
            let size = match body_size {
                BodySize::Sized(n) => usize::try_from(n).unwrap_or(usize::MAX),
                _ => 0,
            };
            let stream_memory = matches!(body_size, BodySize::Stream)
                .then(|| (ResponseMemory::clone(&memory), client));
            let reservation = if size >= ResponseMemory::COUNTED_FROM {
                match memory.reserve(size, client) {
                    Ok(reservation) => Some(reservation),
                    Err(shed) => {
                        let (req, _dropped) = resp.into_parts();
                        let shed = ServiceResponse::new(req, shed.error().error_response());
                        return Ok(with_safe_headers(shed.map_into_right_body()));
                    }
                }
            } else {
                None
            };
            let mut resp = resp
                .map_body(|_, body| Counted {
                    body,
                    pending: Bytes::new(),
                    reservation,
                    stream_memory,
                    piece: None,
                })
                .map_into_left_body();
            set_safe_headers(resp.headers_mut());
            Ok(resp)
        })
    }
}

/// [`set_safe_headers`] on a response.
fn with_safe_headers<B>(mut resp: ServiceResponse<B>) -> ServiceResponse<B> {
    set_safe_headers(resp.headers_mut());
    resp
}

/// `nosniff` on every response; no framing of HTML pages.
fn set_safe_headers(headers: &mut header::HeaderMap) {
    let html = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    let mut set = |name: header::HeaderName, value: &'static str| {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    };
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    if html {
        set(header::X_FRAME_OPTIONS, "DENY");
        set(header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'");
    }
}

/// A request body that fails with a timeout once its time is up.
struct Deadline {
    inner: Payload,
    sleep: Pin<Box<Sleep>>,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(item) = self.inner.poll_next_unpin(cx) {
            return Poll::Ready(item);
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(PayloadError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body did not arrive in time",
            ))))),
            Poll::Pending => Poll::Pending,
        }
    }
}
