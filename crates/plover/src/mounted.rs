//! What Plover's set-ups mount, recorded on request: the `routes` and `openapi` commands (see
//! `manage`) run an application's configuration once and read back the routes of its REST
//! APIs, admin and accounts views, and the OpenAPI document of each API. Nothing is recorded
//! while no one asks (a server's workers configure their apps without recording).

use std::cell::RefCell;

#[cfg(feature = "manage")]
use crate::server::under_prefix;

/// One route that Plover mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mounted {
    /// The methods, as `GET, POST`.
    pub(crate) methods: String,
    /// The path pattern, as `/api/user/{pk}/`.
    pub(crate) path: String,
    /// What serves it, in words.
    pub(crate) what: String,
    /// Whether it may read or write the session (every route but a REST API's).
    pub(crate) session: bool,
}

/// What one configuration mounted.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "manage"), allow(dead_code))]
pub(crate) struct Recorded {
    /// The routes, in the order they were mounted.
    pub(crate) routes: Vec<Mounted>,
    /// Each REST API's prefix and OpenAPI document.
    pub(crate) openapi: Vec<(String, serde_json::Value)>,
}

thread_local! {
    static LOG: RefCell<Option<Recorded>> = const { RefCell::new(None) };
}

/// Whether a recording is under way on this thread.
pub(crate) fn recording() -> bool {
    LOG.with(|log| log.borrow().is_some())
}

/// Records a route that may use the session, if a recording is under way.
#[cfg_attr(not(feature = "accounts"), allow(dead_code))]
pub(crate) fn route(methods: &str, path: String, what: String) {
    push(methods, path, what, true);
}

/// Records a route of a REST API (which authenticates by header and never uses the session),
/// if a recording is under way.
pub(crate) fn api_route(methods: &str, path: String, what: String) {
    push(methods, path, what, false);
}

fn push(methods: &str, path: String, what: String, session: bool) {
    LOG.with(|log| {
        if let Some(log) = log.borrow_mut().as_mut() {
            log.routes.push(Mounted {
                methods: methods.to_owned(),
                path,
                what,
                session,
            });
        }
    });
}

/// Records a REST API's OpenAPI document, if a recording is under way.
pub(crate) fn openapi(prefix: &str, document: serde_json::Value) {
    LOG.with(|log| {
        if let Some(log) = log.borrow_mut().as_mut() {
            log.openapi.push((prefix.to_owned(), document));
        }
    });
}

impl Recorded {
    /// The prefixes of the REST APIs under which no recorded route uses the session (a login
    /// view or an admin mounted under an API's prefix keeps the session for the whole prefix).
    #[cfg(feature = "manage")]
    pub(crate) fn sessionless_prefixes(&self) -> Vec<String> {
        (self.openapi.iter())
            .map(|(prefix, _)| prefix)
            .filter(|prefix| {
                !(self.routes.iter()).any(|r| r.session && under_prefix(&r.path, prefix))
            })
            .cloned()
            .collect()
    }
}

/// Runs `configure` and returns what it mounted.
#[cfg(feature = "manage")]
pub(crate) fn record(configure: impl FnOnce()) -> Recorded {
    LOG.with(|log| *log.borrow_mut() = Some(Recorded::default()));
    configure();
    LOG.with(|log| log.borrow_mut().take()).unwrap_or_default()
}

/// A set-up's configuration behind a pointer: the routes a set-up returns are compiled where
/// the set-up is called (with the application's library, for an application's models), not
/// again in every crate that configures an `App` with them, such as its `main`.
pub(crate) fn erased(
    configure: impl Fn(&mut actix_web::web::ServiceConfig) + Send + Sync + 'static,
) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone + Send + 'static {
    let configure: std::sync::Arc<dyn Fn(&mut actix_web::web::ServiceConfig) + Send + Sync> =
        std::sync::Arc::new(configure);
    move |cfg| configure(cfg)
}

#[cfg(all(test, feature = "manage"))]
mod tests {
    use super::*;

    #[test]
    fn an_api_prefix_keeps_the_session_where_a_session_route_lies_under_it() {
        let recorded = record(|| {
            api_route("GET, POST", "/api/note/".into(), "REST list of note".into());
            api_route("GET", "/api/openapi.json".into(), "the document".into());
            api_route("GET", "/v2/note/".into(), "REST list of note".into());
            route("GET, POST", "/v2/login/".into(), "the login form".into());
            route(
                "GET, POST",
                "/apiary/".into(),
                "a page beside the API".into(),
            );
            openapi("/api", serde_json::Value::Null);
            openapi("/v2", serde_json::Value::Null);
        });
        assert_eq!(recorded.sessionless_prefixes(), ["/api"]);
        assert!(!recording(), "the recording ends with `record`");
    }
}
