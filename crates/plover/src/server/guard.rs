//! [`Guard`]: the per-request part of the bounds of SPEC.md section 15.

use std::future::{ready, Future, Ready};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::EitherBody;
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::rt::time::{sleep, Sleep};
use actix_web::web::Bytes;
use actix_web::{HttpMessage, ResponseError};
use futures_util::{Stream, StreamExt};

use crate::error::Error;

/// Middleware for an actix-web `App`: a time limit on request bodies, refusal of protocol
/// upgrades and `CONNECT`, and safe response headers. See the [module](super) documentation.
///
/// ```
/// use std::time::Duration;
/// let guard = plover::server::Guard::default().body_timeout(Duration::from_secs(10));
/// let _app = actix_web::App::new().wrap(guard);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    body_timeout: Duration,
}

impl Default for Guard {
    fn default() -> Self {
        Guard {
            body_timeout: Duration::from_secs(30),
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
}

impl<S, B> Transform<S, ServiceRequest> for Guard
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Transform = GuardService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(GuardService {
            service: Rc::new(service),
            body_timeout: self.body_timeout,
        }))
    }
}

/// The service [`Guard`] wraps around an app.
#[derive(Debug)]
pub struct GuardService<S> {
    service: Rc<S>,
    body_timeout: Duration,
}

type LocalBoxFuture<T> = Pin<Box<dyn Future<Output = T>>>;

impl<S, B> Service<ServiceRequest> for GuardService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
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
        let payload = req.take_payload();
        let timed = Deadline {
            inner: payload,
            sleep: Box::pin(sleep(self.body_timeout)),
        };
        req.set_payload(Payload::from(
            Box::pin(timed) as Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>>
        ));
        let service = self.service.clone();
        Box::pin(async move {
            let resp = service.call(req).await?;
            Ok(with_safe_headers(resp.map_into_left_body()))
        })
    }
}

/// `nosniff` on every response; no framing of HTML pages.
fn with_safe_headers<B>(mut resp: ServiceResponse<B>) -> ServiceResponse<B> {
    let headers = resp.headers_mut();
    let html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
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
    resp
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
