//! `RestApi`: registrations, `setup()`, and the actix-web service that dispatches to them.

use std::rc::Rc;
use std::sync::Arc;

use actix_web::dev::{fn_service, Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{ContentType, HeaderValue, CONTENT_TYPE, ETAG, LOCATION};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use percent_encoding::percent_decode_str;

use super::changes::FeedView;
use super::checks::ApiDefaults;
use super::endpoint::Endpoint;
use super::idempotency::{DEFAULT_IDEMPOTENCY_TTL, REPLAYED};
use super::joins::Joins;
use super::prepared::Prepared;
use super::rate::RateLimit;
use super::request::{parse_body, ApiRequest, Content};
use super::resource::Resource;
use crate::auth::{Authentication, Authenticator, Scheme};
use crate::changes::feed::{self, Judge};
use crate::changes::slots::Slot;
use crate::changes::ChangeEvent;
use crate::changes::StreamLimits;
use crate::db::pending::{written_by, Author};
use crate::db::replicas;
use crate::db::{Conn, Database, PeerSocket, ServedBy, CONSISTENCY_HEADER, SERVED_BY_HEADER};
use crate::error::Error;
use crate::http::body::{Body, BodyLimit, DEFAULT_MAX_BODY_BYTES};
use crate::http::urlencoded::pairs;
use crate::model::RestModel;
use crate::mounted;
use crate::openapi::{self, spec::OpenApi};

/// An application's change to the OpenAPI document ([`RestApi::openapi`]).
type Edit = Box<dyn FnOnce(&mut OpenApi) + Send>;

/// A REST API: a URL prefix, a default authentication and registered resources.
///
/// ```no_run
/// # use plover::prelude::*;
/// # diesel::table! { note (id) { id -> Integer, message -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = note)] pub struct Note { pub id: i32, pub message: String }
/// # async fn run() -> std::io::Result<()> {
/// let db = Database::from_url("sqlite://app.db").map_err(std::io::Error::other)?;
/// let mut api = RestApi::new(db);
/// api.register::<Note>();
/// let api = api.setup();
/// actix_web::HttpServer::new(move || actix_web::App::new().configure(api.clone()))
///     .bind("127.0.0.1:8000")?
///     .run()
///     .await
/// # }
/// ```
pub struct RestApi {
    db: Database,
    prefix: String,
    name: String,
    defaults: ApiDefaults,
    cors: Option<Arc<[String]>>,
    max_body_bytes: usize,
    endpoints: Vec<Arc<dyn Endpoint>>,
    /// What joins into each model obey, shared with the resources.
    joins: Arc<Joins>,
    edits: Vec<Edit>,
}

impl std::fmt::Debug for RestApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestApi")
            .field("prefix", &self.prefix)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RestApi {
    /// An API at `/api`, named `api`, read-only unless a resource says otherwise.
    pub fn new(db: Database) -> RestApi {
        RestApi {
            db,
            prefix: "/api".into(),
            name: "api".into(),
            defaults: ApiDefaults {
                auth: Arc::new(Authentication::default()),
                rate: None,
                etags: true,
                idempotency_ttl: DEFAULT_IDEMPOTENCY_TTL,
                streams: StreamLimits::default(),
            },
            cors: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            endpoints: Vec::new(),
            joins: Arc::default(),
            edits: Vec::new(),
        }
    }

    /// The URL prefix (default `/api`). Panics on an empty prefix: the API needs a path of
    /// its own.
    pub fn prefix(mut self, prefix: &str) -> RestApi {
        let trimmed = prefix.trim_matches('/');
        assert!(
            !trimmed.is_empty(),
            "plover: the API prefix must not be empty or `/`"
        );
        self.prefix = format!("/{trimmed}");
        self
    }

    /// The API's name (default `api`).
    pub fn name(mut self, name: &str) -> RestApi {
        self.name = name.to_owned();
        self
    }

    /// The authentication of resources that set none (default: read-only), also of those
    /// registered before this call.
    pub fn default_auth(mut self, auth: impl Authenticator) -> RestApi {
        self.defaults.auth = Arc::new(auth);
        self
    }

    /// A rate limit for the resources that set none of their own: one budget per client across
    /// all of them (see [`RateLimit`]; default: none).
    pub fn rate_limit(mut self, limit: RateLimit) -> RestApi {
        self.defaults.rate = Some(limit);
        self
    }

    /// Lets pages of these origins (`https://app.example.com`, scheme and host as the browser
    /// sends them in `Origin`) call the API from the browser (CORS, through `actix-cors`):
    /// every verb the API serves, the request headers `Authorization`, `Content-Type`,
    /// `Accept`, `If-Match`, `If-None-Match`, `Idempotency-Key` and `Plover-Consistency`, the
    /// response headers `Location`, `ETag`, `Retry-After`, `RateLimit-*`,
    /// `Idempotent-Replayed`, `Plover-Consistency` and `Plover-Served-By` readable by the page,
    /// preflights cached for an hour. Credentials (cookies) are not sent: the API
    /// authenticates by header. Requests from other origins get no CORS headers (the browser
    /// refuses them); requests without `Origin` (other servers, scripts) are served as
    /// before. Default: none.
    pub fn cors_origins<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> RestApi {
        self.cors = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Whether GETs (lists, objects, aggregates) and PUT/PATCH answers carry a strong `ETag`
    /// (default true), so that clients revalidate with `If-None-Match` (304, no body) and
    /// write with `If-Match` (412 when the row changed meanwhile; see
    /// [`Resource::require_if_match`](super::Resource::require_if_match)). Off, responses carry
    /// none and spare hashing the body; `If-Match` on writes is still honoured.
    pub fn etags(mut self, on: bool) -> RestApi {
        self.defaults.etags = on;
        self
    }

    /// How long the API keeps an idempotency key (default a day,
    /// [`DEFAULT_IDEMPOTENCY_TTL`](super::DEFAULT_IDEMPOTENCY_TTL)). A POST that sends
    /// `Idempotency-Key: <key>` creates once: until the key expires, the same POST from the
    /// same credentials (the user it authenticated as, else the API key its authentication
    /// checked, else the client's address) answers the first answer again, with
    /// `Idempotent-Replayed: true`, and another POST with that key is 422. Other verbs ignore
    /// the header. The keys live in the table `plover_idempotency`, made at first use
    /// (docs/contract.md#idempotency-keys).
    ///
    /// ```
    /// # use plover::prelude::*;
    /// use std::time::Duration;
    ///
    /// # fn api(db: Database) -> RestApi {
    /// // Clients retry within the hour; their keys need not be kept longer.
    /// RestApi::new(db).idempotency_ttl(Duration::from_secs(60 * 60))
    /// # }
    /// ```
    pub fn idempotency_ttl(mut self, ttl: std::time::Duration) -> RestApi {
        self.defaults.idempotency_ttl = ttl;
        self
    }

    /// How many change-feed streams may be open at once (docs/changes.md#bounds): per client
    /// address and per user (default 16 each), and in the process (default 10,000); a stream
    /// over a bound is refused with 429 and `Retry-After`.
    pub fn stream_limits(mut self, limits: StreamLimits) -> RestApi {
        self.defaults.streams = limits;
        self
    }

    /// The largest accepted request body (default 1 MiB); larger ones are 413.
    pub fn max_body_bytes(mut self, limit: usize) -> RestApi {
        self.max_body_bytes = limit;
        self
    }

    /// Changes the OpenAPI document that `setup()` builds from the registrations (served at
    /// `{prefix}/openapi.json`, and as the page `{prefix}/docs/`): add the application's own
    /// operations, a title, descriptions. Edits run in the order given. See
    /// [`openapi`](crate::openapi).
    pub fn openapi(mut self, edit: impl FnOnce(&mut OpenApi) + Send + 'static) -> RestApi {
        self.edits.push(Box::new(edit));
        self
    }

    /// The API's database and resources, in registration order (for webhook deliveries).
    pub(crate) fn resources(&self) -> (&Database, &[Arc<dyn Endpoint>]) {
        (&self.db, &self.endpoints)
    }

    /// Registers `M` with the default options.
    pub fn register<M: RestModel>(&mut self) -> &mut RestApi {
        self.register_resource(Resource::<M>::new())
    }

    /// Registers a resource. Panics if its options are inconsistent with the model, or if its
    /// name is taken: both are programming errors, reported before the server starts.
    pub fn register_resource<M: RestModel>(&mut self, resource: Resource<M>) -> &mut RestApi {
        let mut prepared = Prepared::new(resource);
        prepared.share_joins(&self.joins);
        if prepared.name == DOCS {
            panic!(
                "plover: API '{}' serves its reference at `{DOCS}/`: name the resource of `{}` \
                 otherwise (Resource::name)",
                self.name,
                M::meta().name
            );
        }
        let access = &prepared.access;
        if prepared.writes.require_if_match && (access.upsert || access.max_affected.is_some()) {
            panic!(
                "plover: the resource '{}' requires If-Match on writes, which writes by filter \
                 and upserts cannot send (they name no one version): turn off \
                 Resource::require_if_match, or Resource::filtered_writes and Resource::upsert",
                prepared.name
            );
        }
        if access.upsert && prepared.upsert_fields().next().is_none() {
            panic!(
                "plover: the resource '{}' upserts (Resource::upsert) but has no field to find \
                 rows by: mark a field of `{}` #[rest(unique)] that the resource lets clients \
                 filter on and write",
                prepared.name,
                M::meta().name
            );
        }
        let unprotected = prepared.unprotected_verbs(&self.defaults);
        if access.permissions.is_some() && !unprotected.is_empty() {
            panic!(
                "plover: the resource '{}' needs model permissions (Resource::permissions), but \
                 its authentication lets {unprotected:?} through without credentials, which \
                 would then always answer 401: protect every verb it serves \
                 (UserAuthentication::with_methods)",
                prepared.name
            );
        }
        if self.endpoints.iter().any(|e| e.name() == prepared.name) {
            panic!(
                "plover: API '{}' already has a resource named '{}'",
                self.name, prepared.name
            );
        }
        self.endpoints.push(Arc::new(prepared));
        self
    }

    /// Ends the registrations (the API is consumed, so none can follow) and returns the
    /// service configuration for `App::new().configure(...)`; clone it for each worker.
    ///
    /// The API is one actix scope at its prefix. Under it, `{name}` and `{name}/` are a
    /// resource's list, `{name}/{pk}` and `{name}/{pk}/` its detail (the key percent-decoded,
    /// as actix's `Path` does); any other path under the prefix is 404 before the body is read.
    /// The API's description is built here, once: `{prefix}/openapi.json` and
    /// `{prefix}/docs/` serve it as bytes.
    pub fn setup(mut self) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
        let targets = self.endpoints.iter().map(|e| e.join_target()).collect();
        self.joins.set(targets);
        for endpoint in &self.endpoints {
            endpoint.list().check_search(endpoint.name(), &*self.joins);
        }
        let description = self.description();
        let db = self.db;
        let api = Arc::new(self.defaults);
        let limit = BodyLimit(self.max_body_bytes);
        let routes: Arc<[Arc<Route>]> = self
            .endpoints
            .into_iter()
            .map(|endpoint| {
                let schemes = endpoint.describe(&api).auth.schemes;
                Arc::new(Route {
                    name: endpoint.name().into(),
                    list_path: format!("{}/{}/", self.prefix, endpoint.name()).into(),
                    bearer_only: schemes.contains(&Scheme::Bearer)
                        && !schemes.contains(&Scheme::Basic),
                    endpoint,
                    db: db.clone(),
                    api: api.clone(),
                })
            })
            .collect();
        let prefix = self.prefix;
        let cors_origins = self.cors;
        mounted::erased(move |cfg: &mut web::ServiceConfig| {
            if mounted::recording() {
                record(&prefix, &routes, &description);
            }
            // This worker's own copy: a request takes it without touching a count that the
            // workers share.
            let served = Rc::new(Served {
                routes: routes.to_vec(),
                description: description.clone(),
            });
            let dispatch = fn_service(move |sreq: ServiceRequest| {
                let served = Rc::clone(&served);
                async move {
                    let (req, mut payload) = sreq.into_parts();
                    let resp = dispatch(&served, &req, payload.take()).await;
                    Ok::<_, actix_web::Error>(ServiceResponse::new(req, resp))
                }
            });
            let cors = cors_origins.as_deref().map(cors);
            cfg.service(
                web::scope(&prefix)
                    .app_data(limit)
                    .default_service(dispatch)
                    .wrap(actix_web::middleware::Condition::new(
                        cors.is_some(),
                        cors.unwrap_or_default(),
                    )),
            );
        })
    }
}

/// What a worker serves under the API's prefix.
struct Served {
    routes: Vec<Arc<Route>>,
    description: Description,
}

/// Records the API's routes and document for the `routes` and `openapi` commands.
fn record(prefix: &str, routes: &[Arc<Route>], description: &Description) {
    let methods = |verbs: &[Method]| {
        let names: Vec<&str> = verbs.iter().map(Method::as_str).collect();
        names.join(", ")
    };
    for route in routes {
        let doc = route.endpoint.describe(&route.api);
        let (name, model) = (doc.name, doc.shape.meta.name);
        let list = format!("{prefix}/{name}/");
        mounted::api_route(
            &methods(&doc.list),
            list.clone(),
            format!("REST list of {model}"),
        );
        if !doc.detail.is_empty() {
            let what = format!("REST detail of {model}");
            mounted::api_route(&methods(&doc.detail), format!("{list}{{pk}}/"), what);
        }
        if !doc.aggregate.is_empty() {
            let what = format!("REST aggregates of {model}");
            mounted::api_route(&methods(&doc.aggregate), format!("{list}aggregate/"), what);
        }
        if doc.changes {
            let what = format!("REST change feed of {model}");
            mounted::api_route("GET", format!("{list}changes/"), what);
        }
    }
    let json = format!("{prefix}/openapi.json");
    mounted::api_route("GET", json, "the API's OpenAPI document".into());
    let page = format!("{prefix}/{DOCS}/");
    mounted::api_route("GET", page, "the API's reference page".into());
    let document = serde_json::from_slice(&description.json).unwrap_or_default();
    mounted::openapi(prefix, document);
}

/// The CORS policy of [`RestApi::cors_origins`].
fn cors(origins: &[String]) -> actix_cors::Cors {
    use actix_web::http::header;
    let mut cors = actix_cors::Cors::default()
        .allowed_methods([
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            header::HeaderName::from_static("idempotency-key"),
            header::HeaderName::from_static("plover-consistency"),
        ])
        .expose_headers([
            header::LOCATION,
            header::ETAG,
            header::RETRY_AFTER,
            header::HeaderName::from_static("ratelimit-limit"),
            header::HeaderName::from_static("ratelimit-remaining"),
            header::HeaderName::from_static("ratelimit-reset"),
            header::HeaderName::from_static(REPLAYED),
            header::HeaderName::from_static("plover-consistency"),
            header::HeaderName::from_static("plover-served-by"),
        ])
        .max_age(3600);
    for origin in origins {
        cors = cors.allowed_origin(origin);
    }
    cors
}

/// Serves one request under the API's prefix: finds its resource and key, reads the body,
/// runs the endpoint.
async fn dispatch(served: &Served, req: &HttpRequest, payload: Payload) -> HttpResponse {
    let path = req.match_info().unprocessed();
    if let Some(resp) = served.description.answer(path, req.method()) {
        return resp;
    }
    let Some((route, pk)) = find_route(&served.routes, path) else {
        return Error::NotFound.error_response();
    };
    if route.endpoint.is_feed(pk.as_deref()) {
        return route.serve_feed(req).await;
    }
    match Body::read(req, payload).await {
        Ok(body) => route.serve(req, pk, body).await,
        Err(e) => e.error_response(),
    }
}

/// The resource of `path` (what follows the prefix) and, for a detail path, its decoded key.
fn find_route<'a>(
    routes: &'a [Arc<Route>],
    path: &str,
) -> Option<(&'a Arc<Route>, Option<String>)> {
    let path = path.strip_prefix('/')?;
    let (name, rest) = path.split_once('/').unwrap_or((path, ""));
    let route = routes.iter().find(|r| *r.name == *name)?;
    if rest.is_empty() {
        return Some((route, None));
    }
    let pk = rest.strip_suffix('/').unwrap_or(rest);
    if pk.is_empty() || pk.contains('/') {
        return None;
    }
    let pk = percent_decode_str(pk).decode_utf8_lossy().into_owned();
    Some((route, Some(pk)))
}

impl RestApi {
    /// The OpenAPI document of the registrations, after the application's edits, and the
    /// reference page made from it.
    fn description(&mut self) -> Description {
        let resources: Vec<_> = self
            .endpoints
            .iter()
            .map(|e| e.describe(&self.defaults))
            .collect();
        let mut doc = openapi::document(&self.prefix, &self.name, &resources);
        for edit in self.edits.drain(..) {
            edit(&mut doc);
        }
        let json_path = format!("{}/openapi.json", self.prefix);
        // The document is plain data: it always serializes.
        let value = serde_json::to_value(&doc).unwrap_or_default();
        let page = openapi::page(&value, &json_path);
        Description {
            json: Bytes::from(value.to_string()),
            page: Bytes::from(page),
        }
    }
}

/// One registration as tests see it: the URL name, the model, the verbs of the list path and
/// of the detail path (feature `testing`).
#[cfg(feature = "testing")]
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Registration {
    /// The URL name.
    pub name: String,
    /// The model.
    pub meta: &'static crate::model::ModelMeta,
    /// The verbs of `{prefix}/{name}/`.
    pub list: Vec<Method>,
    /// The verbs of `{prefix}/{name}/{pk}/`.
    pub detail: Vec<Method>,
    /// The verbs of `{prefix}/{name}/aggregate/` (none where it is not served).
    pub aggregate: Vec<Method>,
    /// The verbs of `{prefix}/{name}/changes/` (none where it is not served).
    pub changes: Vec<Method>,
}

/// The registrations of `api`, for tests that check the API's description against them
/// (feature `testing`).
#[cfg(feature = "testing")]
#[doc(hidden)]
pub fn registrations(api: &RestApi) -> Vec<Registration> {
    api.endpoints
        .iter()
        .map(|e| {
            let doc = e.describe(&api.defaults);
            Registration {
                name: doc.name.to_owned(),
                meta: doc.shape.meta,
                list: doc.list,
                detail: doc.detail,
                aggregate: doc.aggregate,
                changes: match doc.changes {
                    true => vec![Method::GET],
                    false => Vec::new(),
                },
            }
        })
        .collect()
}

/// The URL name under the prefix of the reference page.
const DOCS: &str = "docs";

/// The API's description as served: the OpenAPI document and the reference page.
#[derive(Clone)]
struct Description {
    json: Bytes,
    page: Bytes,
}

impl Description {
    /// The answer to a request for `openapi.json` or `docs/` (also `docs`), if `path` (what
    /// follows the API's prefix) names one: GET and HEAD (actix leaves out HEAD's body) are
    /// served, other verbs get the JSON 405.
    fn answer(&self, path: &str, method: &Method) -> Option<HttpResponse> {
        let name = path.strip_prefix('/')?;
        let json = name == "openapi.json";
        if !json && name.strip_suffix('/').unwrap_or(name) != DOCS {
            return None;
        }
        if method != Method::GET && method != Method::HEAD {
            return Some(Error::MethodNotAllowed(vec![Method::GET, Method::HEAD]).error_response());
        }
        Some(if json {
            HttpResponse::Ok()
                .content_type(ContentType::json())
                .body(self.json.clone())
        } else {
            HttpResponse::Ok()
                .content_type(ContentType::html())
                .insert_header(("Content-Security-Policy", PAGE_POLICY))
                .insert_header(("X-Frame-Options", "DENY"))
                .body(self.page.clone())
        })
    }
}

/// The reference page loads nothing and runs nothing: its style is inline.
const PAGE_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/// An admitted subscriber with the resource that judges its events.
pub(crate) struct Subscriber {
    pub(crate) endpoint: Arc<dyn Endpoint>,
    pub(crate) view: FeedView,
    pub(crate) model: &'static str,
}

impl Judge for Subscriber {
    fn model(&self) -> &'static str {
        self.model
    }

    fn judge(
        &self,
        conn: &mut Conn<'_>,
        events: &[ChangeEvent],
        out: &mut String,
    ) -> Result<(), Error> {
        self.endpoint.judge(&self.view, conn, events, out)
    }
}

/// One registered resource as the server sees it.
struct Route {
    endpoint: Arc<dyn Endpoint>,
    /// The resource's name, the path segment after the prefix.
    name: Box<str>,
    /// `{prefix}/{name}/`, the canonical list path.
    list_path: Arc<str>,
    db: Database,
    api: Arc<ApiDefaults>,
    /// Whether bearer tokens are the resource's only credentials (decided at set-up).
    bearer_only: bool,
}

impl Route {
    /// The 401 of this resource: the challenge names Bearer where bearer tokens are its only
    /// credentials (RFC 6750), Basic otherwise (flask-peewee's challenge).
    fn unauthorized(&self) -> HttpResponse {
        let mut resp = Error::Unauthorized.error_response();
        if self.bearer_only {
            resp.headers_mut().insert(
                actix_web::http::header::WWW_AUTHENTICATE,
                actix_web::http::header::HeaderValue::from_static("Bearer realm=\"api\""),
            );
        }
        resp
    }

    /// Opens a stream of the resource's change feed: admits the subscriber on a blocking
    /// thread, then streams (docs/changes.md).
    async fn serve_feed(self: &Arc<Self>, req: &HttpRequest) -> HttpResponse {
        let query = pairs(req.query_string().as_bytes());
        // Its replay may go to a replica that has what its client has seen.
        let reader = match replicas::reader_of(req.headers(), &query, self.db.has_replicas()) {
            Ok(reader) => reader,
            Err(e) => return e.error_response(),
        };
        let api_req = ApiRequest {
            method: req.method().clone(),
            client: req.peer_addr().map(|a| a.ip()),
            pk: None,
            query,
            headers: req.headers().into(),
            body: Content::Form(Vec::new()),
            list_path: self.list_path.clone(),
        };
        let route = Arc::clone(self);
        let opened = self
            .db
            .run_lazy(move |db| {
                let (view, start) = route
                    .endpoint
                    .open_feed(&api_req, db, &route.api, &mut None)?;
                let user = view.user_key();
                let slot = Slot::take(&route.api.streams, api_req.client, user)?;
                Ok((view, start, slot))
            })
            .await;
        match opened {
            Ok((view, start, slot)) => {
                let subscriber = Subscriber {
                    endpoint: Arc::clone(&self.endpoint),
                    model: self.endpoint.model().name,
                    view,
                };
                let judge = Arc::new(subscriber);
                feed::respond(self.db.clone(), judge, start, reader, slot)
            }
            Err(Error::Unauthorized) => self.unauthorized(),
            Err(e) => e.error_response(),
        }
    }

    /// Runs the endpoint on a blocking thread with a lazily checked-out connection.
    async fn serve(
        self: &Arc<Self>,
        req: &HttpRequest,
        pk: Option<String>,
        body: Body,
    ) -> HttpResponse {
        let body = parse_body(req.headers(), body.0).await;
        let query = pairs(req.query_string().as_bytes());
        let reader = match replicas::reader_of(req.headers(), &query, self.db.has_replicas()) {
            Ok(reader) => reader,
            Err(e) => return e.error_response(),
        };
        let api_req = ApiRequest {
            method: req.method().clone(),
            client: req.peer_addr().map(|a| a.ip()),
            pk,
            query,
            headers: req.headers().into(),
            body,
            list_path: self.list_path.clone(),
        };
        let route = Arc::clone(self);
        let outcome = self
            .db
            .run_watched(req.conn_data::<PeerSocket>(), move |db| {
                // The unit's reads may go to a replica until it writes (the endpoint says so
                // before its first statement when its verb writes).
                db.read_from_replicas(reader);
                let (api, mut rate) = (&route.api, None);
                let mut reply = db.retrying(|db| {
                    rate = None;
                    written_by(Author::Nobody, || {
                        route.endpoint.handle(&api_req, db, api, &mut rate)
                    })
                });
                // Reads, and updates of an object (its new representation), carry an ETag.
                let read = matches!(api_req.method, Method::GET | Method::HEAD);
                let update =
                    api_req.pk.is_some() && matches!(api_req.method, Method::PUT | Method::PATCH);
                if api.etags && (read || update) {
                    reply = reply.map(|r| r.tagged(&api_req.headers, read));
                }
                let succeeded = reply.as_ref().is_ok_and(|r| r.status.is_success());
                let seen = Seen {
                    token: db.consistency(succeeded),
                    served: db.served_by(),
                };
                Ok((reply, rate, seen))
            })
            .await;
        let (reply, rate, seen) = match outcome {
            Ok(done) => done,
            Err(e) => (Err(e), None, Seen::default()),
        };
        let mut resp = match reply {
            Ok(reply) => {
                let mut resp = HttpResponse::build(reply.status);
                if let Some(tag) = reply.etag {
                    resp.insert_header((ETAG, tag.header_value()));
                }
                if reply.status == StatusCode::NOT_MODIFIED {
                    resp.finish()
                } else {
                    resp.insert_header((
                        CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    ));
                    if let Some(location) = reply.location {
                        resp.insert_header((LOCATION, location));
                    }
                    if reply.replayed {
                        resp.insert_header((REPLAYED, "true"));
                    }
                    resp.body(reply.body)
                }
            }
            Err(Error::Unauthorized) => self.unauthorized(),
            Err(e) => e.error_response(),
        };
        if let Some(rate) = rate {
            for (name, value) in rate.headers() {
                resp.headers_mut().insert(name, value);
            }
        }
        seen.headers(resp.headers_mut());
        resp
    }
}

/// What a unit of a database with replicas tells its client: the consistency token of a write
/// and the server of a read (docs/deployment.md#read-replicas).
#[derive(Default)]
pub(crate) struct Seen {
    /// The WAL position of the unit's write.
    pub(crate) token: Option<replicas::Lsn>,
    /// The server of the unit's last statements.
    pub(crate) served: Option<ServedBy>,
}

impl Seen {
    /// Adds the headers of what was seen to a response's.
    pub(crate) fn headers(&self, headers: &mut actix_web::http::header::HeaderMap) {
        use actix_web::http::header::HeaderName;
        let pairs = [
            (CONSISTENCY_HEADER, self.token.map(replicas::format_lsn)),
            (SERVED_BY_HEADER, self.served.map(|s| s.to_string())),
        ];
        for (name, value) in pairs {
            let name = HeaderName::from_bytes(name.as_bytes()).ok();
            let value = value.and_then(|v| HeaderValue::from_str(&v).ok());
            if let (Some(name), Some(value)) = (name, value) {
                headers.insert(name, value);
            }
        }
    }
}
