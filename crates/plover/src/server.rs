//! An HTTP server that bounds what each connection may cost (docs/contract.md#bounded-cost),
//! and the middleware that goes with it.
//!
//! [`Server`] is actix-web's `HttpServer` with limits on every stage of a connection:
//!
//! - the request head must arrive within `header_timeout` (default 5 s);
//! - a client that stops reading its response is dropped after `send_timeout` (default 30 s,
//!   through the kernel's `TCP_USER_TIMEOUT`), and the memory its response held is returned;
//! - `Expect: 100-continue` with a declared body over `max_body_bytes` is answered 413 at once,
//!   never `100 Continue`.
//!
//! [`Guard`] wraps an `App`:
//!
//! - a request body must arrive whole within `body_timeout` (default 30 s): else the request
//!   is answered 408 and the connection is closed;
//! - large response bodies (64 KiB and more) together hold at most a [`ResponseMemory`]
//!   budget (default 256 MiB for the process) until they are sent or their connection is
//!   dropped; a response that does not fit is answered 503 with `Retry-After: 1`. A streamed
//!   body holds each large piece until the connection has taken it, and one that does not fit
//!   ends the response early. With the send timeout, this bounds the memory that clients who
//!   never read can pin;
//! - a protocol upgrade (`Upgrade: websocket`) or `CONNECT` is answered 400 at once;
//! - every response carries `X-Content-Type-Options: nosniff`, and HTML pages forbid framing
//!   (`X-Frame-Options: DENY`, `Content-Security-Policy: frame-ancestors 'none'`).
//!
//! [`ClientKey`] is how a client is told apart from another: by the guard's fair shares of
//! response memory, the login throttles and the rate limits of resources.
//!
//! ```no_run
//! use actix_web::{web, App};
//! use plover::server::{Guard, Server};
//!
//! # async fn run() -> std::io::Result<()> {
//! Server::new(|| {
//!     App::new()
//!         .wrap(Guard::default())
//!         .route("/", web::get().to(|| async { "hello" }))
//! })
//! .bind("127.0.0.1:8000")?
//! .run()
//! .await
//! # }
//! ```

mod client;
#[cfg(feature = "manage")]
mod except;
mod guard;

use std::fmt;
use std::future::ready;
use std::marker::PhantomData;
use std::net::{TcpListener, ToSocketAddrs};
use std::time::Duration;

use actix_http::body::MessageBody;
use actix_http::{HttpMessage, HttpService, Protocol, Request, Response};
use actix_server::ServerBuilder;
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;

pub use client::ClientKey;
#[cfg(feature = "manage")]
pub(crate) use except::{under_prefix, Except};
pub use guard::{Counted, Guard, ResponseMemory};

use crate::db::PeerSocket;
use crate::error::Error;
use crate::http::body::DEFAULT_MAX_BODY_BYTES;

/// Time limits and sizes of a [`Server`]; every field has a default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerLimits {
    /// Time for the request line and headers to arrive (default 5 s): 408 after it.
    pub header_timeout: Duration,
    /// Time a response may wait for the client to read it (default 30 s): the connection is
    /// dropped after it.
    pub send_timeout: Duration,
    /// Time an idle connection is kept open between requests (default 5 s).
    pub keep_alive: Duration,
    /// Largest body announced with `Expect: 100-continue` that gets `100 Continue` (default
    /// 1 MiB, as the REST API's `max_body_bytes`): larger ones are 413 at once.
    pub max_body_bytes: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            header_timeout: Duration::from_secs(5),
            send_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(5),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// The type parameters a [`Server`] carries without holding values of them.
type Types<I, S, B> = fn() -> (I, S, B);

/// An HTTP/1.1 server for an actix-web `App` factory, with the bounds of [`ServerLimits`]. Its type
/// parameters are those of actix-web's `HttpServer`.
pub struct Server<F, I, S, B> {
    factory: F,
    limits: ServerLimits,
    builder: ServerBuilder,
    addrs: Vec<std::net::SocketAddr>,
    _types: PhantomData<Types<I, S, B>>,
}

impl<F, I, S, B> fmt::Debug for Server<F, I, S, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("limits", &self.limits)
            .field("addrs", &self.addrs)
            .finish_non_exhaustive()
    }
}

impl<F, I, S, B> Server<F, I, S, B>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    B: MessageBody + 'static,
{
    /// A server for the apps that `factory` makes (one per worker thread), with the default
    /// [`ServerLimits`].
    pub fn new(factory: F) -> Self {
        Server {
            factory,
            limits: ServerLimits::default(),
            builder: ServerBuilder::default(),
            addrs: Vec::new(),
            _types: PhantomData,
        }
    }

    /// Sets the limits; call before [`Server::bind`].
    pub fn limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The number of worker threads (default: one per CPU).
    pub fn workers(mut self, n: usize) -> Self {
        self.builder = self.builder.workers(n);
        self
    }

    /// Listens on every address `addr` resolves to.
    pub fn bind(mut self, addr: impl ToSocketAddrs) -> std::io::Result<Self> {
        for addr in addr.to_socket_addrs()? {
            self = self.listen(TcpListener::bind(addr)?)?;
        }
        Ok(self)
    }

    /// The addresses bound so far (with the port the system chose for port 0).
    pub fn addrs(&self) -> &[std::net::SocketAddr] {
        &self.addrs
    }

    /// Listens on an already bound socket.
    pub fn listen(mut self, listener: TcpListener) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let (factory, limits) = (self.factory.clone(), self.limits);
        self.builder = self
            .builder
            .listen(format!("plover-{addr}"), listener, move || {
                let app = factory()
                    .into_factory()
                    .map_err(|err| err.into().error_response());
                let http = HttpService::build()
                    .on_connect_ext(|io: &TcpStream, data: &mut actix_http::Extensions| {
                        // To notice a client that goes away while its request runs.
                        #[cfg(unix)]
                        if let Some(peer) = PeerSocket::of(io) {
                            data.insert(peer);
                        }
                    })
                    .client_request_timeout(limits.header_timeout)
                    .client_disconnect_timeout(Duration::from_secs(1))
                    // A client that closes its side has gone: its connection ends at once, so
                    // a change feed it was reading frees its slot without waiting for a write
                    // to fail.
                    .h1_allow_half_closed(false)
                    .keep_alive(limits.keep_alive)
                    .local_addr(addr)
                    .expect(fn_service(move |req: Request| {
                        ready(refuse_large_expect(req, limits.max_body_bytes))
                    }))
                    .finish(map_config(app, move |_| AppConfig::default()));
                fn_service(move |io: TcpStream| {
                    prepare_socket(&io, limits.send_timeout);
                    let peer = io.peer_addr().ok();
                    ready(Ok((io, Protocol::Http1, peer)))
                })
                .and_then(http)
            })?;
        self.addrs.push(addr);
        Ok(self)
    }

    /// Starts the server; the returned handle resolves when it stops (SIGINT or SIGTERM).
    pub fn run(self) -> actix_server::Server {
        self.builder.run()
    }
}

/// `Expect: 100-continue` is answered `100 Continue` only for a body the server would read.
fn refuse_large_expect(
    req: Request,
    limit: usize,
) -> Result<Request, Response<actix_http::body::BoxBody>> {
    let declared = req
        .headers()
        .get(actix_http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > limit as u64 => {
            use actix_web::ResponseError as _;
            let mut resp = actix_http::Response::from(Error::PayloadTooLarge.error_response());
            // Answered before the app (and its Guard) runs: the Guard's header is added here.
            resp.headers_mut().insert(
                actix_http::header::X_CONTENT_TYPE_OPTIONS,
                actix_http::header::HeaderValue::from_static("nosniff"),
            );
            Err(resp)
        }
        _ => Ok(req),
    }
}

/// No Nagle delay, and a send timeout: the kernel drops a connection whose sent data stays
/// unacknowledged (a client that stopped reading) for longer than `send_timeout`.
fn prepare_socket(io: &TcpStream, send_timeout: Duration) {
    let _ = io.set_nodelay(true);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = socket2::SockRef::from(io).set_tcp_user_timeout(Some(send_timeout)) {
        log::warn!("could not set the send timeout of a connection: {e}");
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = send_timeout;
}
