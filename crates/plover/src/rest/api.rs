//! `RestApi`: registrations, `setup()`, and the actix-web service that dispatches to them.

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::header::{ContentType, LOCATION};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};

use super::endpoint::Endpoint;
use super::prepared::Prepared;
use super::request::{parse_body, query_pairs, read_body, ApiRequest};
use super::resource::Resource;
use crate::auth::{Authentication, Authenticator};
use crate::db::Database;
use crate::error::Error;
use crate::model::RestModel;

/// Default limit of request bodies: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

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
    default_auth: Arc<dyn Authenticator>,
    max_body_bytes: usize,
    endpoints: Vec<Arc<dyn Endpoint>>,
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
            default_auth: Arc::new(Authentication::default()),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            endpoints: Vec::new(),
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
        self.default_auth = Arc::new(auth);
        self
    }

    /// The largest accepted request body (default 1 MiB); larger ones are 413.
    pub fn max_body_bytes(mut self, limit: usize) -> RestApi {
        self.max_body_bytes = limit;
        self
    }

    /// Registers `M` with the default options.
    pub fn register<M: RestModel>(&mut self) -> &mut RestApi {
        self.register_resource(Resource::<M>::new())
    }

    /// Registers a resource. Panics if its options are inconsistent with the model, or if its
    /// name is taken: both are programming errors, reported before the server starts.
    pub fn register_resource<M: RestModel>(&mut self, resource: Resource<M>) -> &mut RestApi {
        let prepared = Prepared::new(resource);
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
    pub fn setup(self) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
        let inner = Arc::new(ApiService {
            db: self.db,
            prefix: self.prefix,
            default_auth: self.default_auth,
            max_body_bytes: self.max_body_bytes,
            endpoints: self
                .endpoints
                .into_iter()
                .map(|e| (e.name().to_owned(), e))
                .collect(),
        });
        move |cfg: &mut web::ServiceConfig| {
            let service = inner.clone();
            cfg.service(web::scope(&inner.prefix).default_service(web::to(
                move |req: HttpRequest, payload: web::Payload| {
                    let service = service.clone();
                    async move { service.dispatch(req, payload).await }
                },
            )));
        }
    }
}

struct ApiService {
    db: Database,
    prefix: String,
    default_auth: Arc<dyn Authenticator>,
    max_body_bytes: usize,
    endpoints: HashMap<String, Arc<dyn Endpoint>>,
}

impl ApiService {
    async fn dispatch(&self, req: HttpRequest, payload: web::Payload) -> HttpResponse {
        match self.serve(req, payload).await {
            Ok(resp) => resp,
            Err(e) => e.error_response(),
        }
    }

    async fn serve(&self, req: HttpRequest, payload: web::Payload) -> Result<HttpResponse, Error> {
        let bytes = read_body(payload, self.max_body_bytes).await?;
        let rest = req.path().strip_prefix(&self.prefix).unwrap_or("");
        let segments: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
        let (name, pk) = match segments.as_slice() {
            [name] | [name, ""] if !name.is_empty() => (*name, None),
            [name, pk] | [name, pk, ""] if !name.is_empty() && !pk.is_empty() => (*name, Some(*pk)),
            _ => return Err(Error::NotFound),
        };
        let endpoint = self.endpoints.get(name).ok_or(Error::NotFound)?.clone();
        let body = parse_body(req.headers(), bytes).await;
        let api_req = ApiRequest {
            method: req.method().clone(),
            pk: pk.map(str::to_owned),
            query: query_pairs(req.query_string()),
            headers: req.headers().clone(),
            body,
            list_path: format!("{}/{}/", self.prefix, name),
        };
        let default_auth = self.default_auth.clone();
        let reply = self
            .db
            .run_lazy(move |db| endpoint.handle(&api_req, db, default_auth.as_ref()))
            .await?;
        let mut resp = HttpResponse::build(reply.status);
        resp.content_type(ContentType::json());
        if let Some(location) = reply.location {
            resp.insert_header((LOCATION, location));
        }
        Ok(resp.body(reply.body))
    }
}
