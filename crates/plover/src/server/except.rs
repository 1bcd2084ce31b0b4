//! [`Except`]: a middleware applied to every request but those under some path prefixes.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use futures_util::future::Either;

/// Wraps an app in the middleware `inner`, except for requests whose path is one of `prefixes`
/// or lies under one (`/api` covers `/api` and `/api/...`, not `/apiary`): those go straight
/// to the app.
///
/// Plover's server puts the session middleware behind it, with the prefixes of the REST APIs:
/// the API authenticates by header and never reads or writes the session, and the session
/// middleware would otherwise parse the cookies, set up an empty session and look for changes
/// to it on every API request (a few percent of a small read's cost; see
/// docs/performance.md).
pub(crate) struct Except<T> {
    inner: T,
    prefixes: Arc<[String]>,
}

impl<T> Except<T> {
    /// `inner`, skipped for the paths under `prefixes` (each `/name`, without a trailing `/`).
    pub(crate) fn new(inner: T, prefixes: Arc<[String]>) -> Except<T> {
        Except { inner, prefixes }
    }
}

/// Whether `path` is `prefix` or lies under it (`/api` covers `/api` and `/api/...`, not
/// `/apiary`).
pub(crate) fn under_prefix(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The app's service, shared by the request path that skips the middleware and by the
/// middleware itself.
pub(crate) struct Shared<S>(Rc<S>);

impl<S: Service<ServiceRequest>> Service<ServiceRequest> for Shared<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&self, req: ServiceRequest) -> Self::Future {
        self.0.call(req)
    }
}

type LocalBoxFuture<T> = Pin<Box<dyn Future<Output = T>>>;

impl<S, T, B> Transform<S, ServiceRequest> for Except<T>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    T: Transform<
        Shared<S>,
        ServiceRequest,
        Response = ServiceResponse<B>,
        Error = actix_web::Error,
    >,
    T::Future: 'static,
    T::Transform: 'static,
    B: 'static,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Transform = ExceptService<S, T::Transform>;
    type InitError = T::InitError;
    type Future = LocalBoxFuture<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        let service = Rc::new(service);
        let wrapped = self.inner.new_transform(Shared(service.clone()));
        let prefixes = self.prefixes.clone();
        Box::pin(async move {
            Ok(ExceptService {
                direct: service,
                wrapped: wrapped.await?,
                prefixes,
            })
        })
    }
}

/// The service [`Except`] makes.
pub(crate) struct ExceptService<S, W> {
    direct: Rc<S>,
    wrapped: W,
    prefixes: Arc<[String]>,
}

impl<S, W, B> Service<ServiceRequest> for ExceptService<S, W>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    W: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Future = Either<S::Future, W::Future>;

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // The middleware's readiness is the app's (it forwards to it).
        self.wrapped.poll_ready(cx)
    }

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let path = req.path();
        if self
            .prefixes
            .iter()
            .any(|prefix| under_prefix(path, prefix))
        {
            Either::Left(self.direct.call(req))
        } else {
            Either::Right(self.wrapped.call(req))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use actix_web::http::header::{HeaderName, HeaderValue};
    use actix_web::middleware::DefaultHeaders;
    use actix_web::test::{call_service, init_service, TestRequest};
    use actix_web::{web, App, HttpResponse};

    use super::*;

    #[test]
    fn prefixes_cover_their_own_segments_only() {
        assert!(under_prefix("/api", "/api"));
        assert!(under_prefix("/api/", "/api"));
        assert!(under_prefix("/api/message/1/", "/api"));
        assert!(!under_prefix("/apiary", "/api"));
        assert!(!under_prefix("/", "/api"));
        assert!(!under_prefix("/admin/api/", "/api"));
    }

    #[actix_web::test]
    async fn the_middleware_runs_everywhere_but_under_the_prefixes() {
        let marked = DefaultHeaders::new().add(("x-wrapped", "yes"));
        let prefixes: Arc<[String]> = vec!["/api".to_owned()].into();
        let app = init_service(
            App::new()
                .wrap(Except::new(marked, prefixes))
                .default_service(web::to(HttpResponse::Ok)),
        )
        .await;
        let name = HeaderName::from_static("x-wrapped");
        for (path, wrapped) in [
            ("/api", false),
            ("/api/message/?page=2", false),
            ("/apiary/", true),
            ("/admin/", true),
            ("/", true),
        ] {
            let req = TestRequest::get().uri(path).to_request();
            let resp = call_service(&app, req).await;
            assert!(resp.status().is_success(), "{path}");
            assert_eq!(
                resp.headers().get(&name) == Some(&HeaderValue::from_static("yes")),
                wrapped,
                "{path}"
            );
        }
    }
}
