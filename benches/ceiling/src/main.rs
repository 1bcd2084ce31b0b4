//! Plover's own ceiling for the peer benchmark: a careful hand-written actix-web + diesel
//! server, no framework layer, for what ../shared/bench-limit (the SQLite read ceiling) does
//! not cover: the same reads on PostgreSQL, and the write, `create_message`, on both engines.
//! It answers in Plover's format (`user_id`, `"YYYY-MM-DD HH:MM:SS"`, `meta` with
//! model/page/previous/next and no count), reads `limit + 1` rows to know whether a next page
//! exists, keeps every statement in diesel's statement cache (static queries are cached by
//! type on both engines: PostgreSQL prepares each once per connection; SQLite is built with
//! SQLITE_ENABLE_QPSG, see .cargo/config.toml, so a bound LIMIT does not force a re-prepare),
//! and serializes with serde straight to bytes.
//!
//! Routes (the workloads of ../shared/peer/bench.sh):
//!   GET  /api/message/?page=N&limit=N                         list_message, list_message_page
//!   GET  /api/message/?user__username=U&ordering=-pub_date    filter_join
//!   GET  /api/message/?id__lt=A&id__gte=B&ordering=-id        filter_ops
//!   GET  /api/message/{id}/                                   detail_message
//!   GET  /api/user/?page=N&limit=N                            list_user
//!   POST /api/message/   Basic auth, {"user_id": N, "content": "..."}   create_message
//!   GET  /plain          the first list page, serialized once (no database)
//! Any other combination of query parameters is answered 400: this is a ceiling, not an API.
//!
//! POST /api/message/ does what Plover's message resource (an owner resource) does for it:
//! it checks the Basic credentials against the user's bcrypt hash, with a cache of verified
//! credentials (credentials.rs) so that bcrypt runs only on a miss, and then on a blocking
//! thread and with no pooled connection held; then, in one transaction, it reads the user and
//! inserts the message with the authenticated user as owner (the body's `user_id` is ignored),
//! `pub_date` now (UTC, whole seconds), and RETURNING the row. 201 with the object and
//! `Location: /api/message/{id}/`; 401 with `WWW-Authenticate: Basic realm="Login Required"`
//! for missing or wrong credentials, an unknown or inactive user; 400 with a JSON error for a
//! body that is not `{"content": "...", "user_id": ...}`.
//!
//! Usage: `plover-ceiling <database URL> [bind addr, default 127.0.0.1:8002]`;
//!        the URL: `sqlite://<file>` (the peer's tables) or `postgres://...` (Plover's tables,
//!        as the microblog example creates them)
//! Env:   POOL_SIZE (default 8), WORKERS (default: actix default = CPU count)
//!
//! At start it creates the indexes that a tuned schema has (IF NOT EXISTS), then runs ANALYZE:
//! bench-limit's three, with the two on message in the order Plover's lists read them, read
//! backwards: user(username) unique, message(user_id, pub_date, id DESC),
//! message(pub_date, id DESC).
//! They have the names and definitions of the microblog example's DDL
//! (`#[rest(index = ...)]` on Message in examples/microblog/src/lib.rs; the unique username is
//! PostgreSQL's `user_username_key`), so that on Plover's PostgreSQL tables IF NOT EXISTS finds
//! them instead of adding copies that every insert would maintain, and a SQLite copy ends up
//! with Plover's indexes (plus the unique username, which Plover's SQLite copy of the peer's
//! tables lacks). Keep them in step with the example.
//!
//! Differences from bench-limit:
//! - PostgreSQL too (timestamps are TIMESTAMP there, text on SQLite, see engine.rs), and the
//!   write route.
//! - filter_join orders `pub_date DESC, id ASC`: Plover appends the primary key, ascending, to
//!   any ordering; bench-limit orders `pub_date DESC, id DESC`, which lists the messages of one
//!   second in the other order. The two message indexes end in `pub_date, id DESC` to match,
//!   read backwards (bench-limit's end in `pub_date` and in `pub_date, id`).
//! - Pooled connections are not tested on checkout (r2d2's default runs `SELECT 1` each time: a
//!   round trip per request on PostgreSQL).
//! - Every response carries `X-Content-Type-Options: nosniff`, as Plover's do.
//! - `limit` above 20 is clamped to 20 and a `limit` or `page` below 1 is a 400, as Plover
//!   does; `next`/`previous` keep the request's other parameters in their order, form-encoded
//!   as Plover encodes them (bench-limit rebuilds them in a fixed order, unencoded).
//! - SQLite connections get Plover's WAL and synchronous = NORMAL, and writers are serialized
//!   in process (one mutex around the write transaction), so that they queue on the mutex
//!   rather than in SQLite's busy handler, which sleeps in steps of milliseconds.
//!
//! Not done (no workload needs it): unknown users are refused without spending a bcrypt
//! check's time, bcrypt checks are not bounded in number, bodies hold only `content` and the
//! owner key (no `pub_date`, no form bodies), cursors (Plover's message `next` links carry a
//! keyset cursor; here they carry page numbers, docs/contract.md#pagination).

mod credentials;
mod engine;
mod list;

use std::sync::{Arc, Mutex, PoisonError};

use actix_web::http::header::{
    ContentType, HeaderName, HeaderValue, LOCATION, WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS,
};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::Timelike;
use diesel::prelude::*;
use serde::de::IgnoredAny;
use serde::Deserialize;

use credentials::{CredentialCache, Credentials};
use engine::{on_engine, Conn, Pools};
use list::{ListQuery, MessageFilter};

/// What every worker shares.
struct State {
    pools: Pools,
    cache: CredentialCache,
    /// SQLite only: one writer at a time (see the crate documentation).
    writer: Mutex<()>,
}

/// The answer to a request, built on a blocking thread.
enum Outcome {
    Json(Vec<u8>),
    Created {
        id: i32,
        body: Vec<u8>,
    },
    NotFound,
    /// The JSON error body.
    BadRequest(String),
    Unauthorized,
}

const NOT_A_BENCHMARK_REQUEST: &str = r#"{"error":"not a benchmark request"}"#;

/// Every response carries it, as Plover's do (docs/contract.md#security).
const NOSNIFF: (HeaderName, &str) = (X_CONTENT_TYPE_OPTIONS, "nosniff");

fn respond(outcome: Result<Outcome, String>) -> HttpResponse {
    let json = ContentType::json();
    let mut response = match outcome {
        Ok(Outcome::Json(body)) => HttpResponse::Ok().content_type(json).body(body),
        Ok(Outcome::Created { id, body }) => HttpResponse::Created()
            .content_type(json)
            .insert_header((LOCATION, format!("/api/message/{id}/")))
            .body(body),
        Ok(Outcome::NotFound) => HttpResponse::NotFound()
            .content_type(json)
            .body(r#"{"error":"Not found"}"#),
        Ok(Outcome::BadRequest(body)) => HttpResponse::BadRequest().content_type(json).body(body),
        // The 401 of docs/contract.md#authentication, exactly.
        Ok(Outcome::Unauthorized) => HttpResponse::Unauthorized()
            .insert_header((WWW_AUTHENTICATE, r#"Basic realm="Login Required""#))
            .content_type("text/html; charset=utf-8")
            .body("Authentication failed"),
        Err(e) => {
            eprintln!("plover-ceiling: {e}");
            HttpResponse::InternalServerError()
                .content_type(json)
                .body(r#"{"error":"Internal error"}"#)
        }
    };
    response
        .headers_mut()
        .insert(NOSNIFF.0, HeaderValue::from_static(NOSNIFF.1));
    response
}

/// Runs `f` on a blocking thread with a pooled connection.
async fn run(
    state: web::Data<State>,
    f: impl FnOnce(&mut Conn) -> QueryResult<Outcome> + Send + 'static,
) -> HttpResponse {
    let outcome = web::block(move || {
        let mut conn = state.pools.get().map_err(|e| e.to_string())?;
        f(&mut conn).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()));
    respond(outcome)
}

fn list_messages(conn: &mut Conn, q: &ListQuery) -> QueryResult<Outcome> {
    let body = on_engine!(conn, c => {
        use db::message::dsl as m;
        let select = m::message.select(db::Msg::as_select());
        let rows: Vec<db::Msg> = match &q.filter {
            MessageFilter::All => select
                .order(m::id.asc())
                .limit(q.limit + 1)
                .offset(q.offset())
                .load(c)?,
            MessageFilter::ByUsername(name) => select
                .filter(
                    m::user_id.nullable().eq(db::user::table
                        .select(db::user::id)
                        .filter(db::user::username.eq(name))
                        .single_value()),
                )
                // As in Plover, the primary key, ascending, breaks the ties of any
                // ordering (bench-limit has `id DESC` here).
                .order((m::pub_date.desc(), m::id.asc()))
                .limit(q.limit + 1)
                .offset(q.offset())
                .load(c)?,
            MessageFilter::IdRange { lt, gte } => select
                .filter(m::id.lt(*lt).and(m::id.ge(*gte)))
                .order(m::id.desc())
                .limit(q.limit + 1)
                .offset(q.offset())
                .load(c)?,
        };
        q.page_json("message", "/api/message/", rows)
    });
    Ok(Outcome::Json(body))
}

fn list_users(conn: &mut Conn, q: &ListQuery) -> QueryResult<Outcome> {
    let body = on_engine!(conn, c => {
        use db::user::dsl as u;
        let rows: Vec<db::UserRow> = u::user
            .select(db::UserRow::as_select())
            .order(u::id.asc())
            .limit(q.limit + 1)
            .offset(q.offset())
            .load(c)?;
        q.page_json("user", "/api/user/", rows)
    });
    Ok(Outcome::Json(body))
}

fn find_message(conn: &mut Conn, id: i32) -> QueryResult<Outcome> {
    on_engine!(conn, c => {
        use db::message::dsl as m;
        let row: Option<db::Msg> = m::message
            .select(db::Msg::as_select())
            .filter(m::id.eq(id))
            .first(c)
            .optional()?;
        Ok(match row {
            Some(r) => Outcome::Json(serde_json::to_vec(&r).unwrap_or_default()),
            None => Outcome::NotFound,
        })
    })
}

/// The body of a POST. The owner key is accepted and ignored: the message belongs to the
/// authenticated user, as in Plover's owner resources.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewMessage {
    content: String,
    #[serde(default, rename = "user_id", alias = "user")]
    _owner: Option<IgnoredAny>,
}

impl NewMessage {
    /// The message, or the JSON body of the 400.
    fn parse(body: &[u8]) -> Result<NewMessage, String> {
        let error = |message: String| serde_json::json!({ "error": message }).to_string();
        // serde's derive would also take a struct from a JSON array.
        if body.trim_ascii_start().first() != Some(&b'{') {
            return Err(error("bad body: not a JSON object".into()));
        }
        let new: NewMessage =
            serde_json::from_slice(body).map_err(|e| error(format!("bad body: {e}")))?;
        if new.content.contains('\0') {
            return Err(error("bad body: content holds U+0000".into()));
        }
        Ok(new)
    }
}

/// A POST's input, shared by its passes.
struct CreateInput {
    creds: Credentials,
    body: Result<NewMessage, String>,
}

/// The end of one pass of a create.
enum Step {
    Done(Outcome),
    /// The credentials are not in the cache: check them against this stored hash, with no
    /// connection held, then pass again.
    Verify(String),
}

/// One pass: in one transaction, the user, then (credentials known, body good) the insert.
/// `verified`: the stored hash the credentials were just checked against.
fn create_message(
    conn: &mut Conn,
    cache: &CredentialCache,
    input: &CreateInput,
    verified: Option<&str>,
) -> QueryResult<Step> {
    on_engine!(conn, c => db::write_transaction(c, |c| {
        use db::message::dsl as m;
        use db::user::dsl as u;
        let found: Option<(i32, String, bool)> = u::user
            .select((u::id, u::password, u::active))
            .filter(u::username.eq(&input.creds.username))
            .first(c)
            .optional()?;
        let Some((user_id, hash, _)) = found.filter(|(_, _, active)| *active) else {
            return Ok(Step::Done(Outcome::Unauthorized));
        };
        if verified != Some(hash.as_str()) && !cache.hit(&input.creds, &hash) {
            return Ok(Step::Verify(hash)); // nothing written
        }
        let new = match &input.body {
            Ok(new) => new,
            Err(body) => return Ok(Step::Done(Outcome::BadRequest(body.clone()))),
        };
        let now = chrono::Utc::now().naive_utc();
        let row: db::Msg = diesel::insert_into(m::message)
            .values((
                m::user_id.eq(user_id),
                m::content.eq(&new.content),
                m::pub_date.eq(db::stamp(now.with_nanosecond(now.nanosecond() / 1_000 * 1_000).unwrap_or(now))),
            ))
            .returning(db::Msg::as_returning())
            .get_result(c)?;
        Ok(Step::Done(Outcome::Created {
            id: row.id,
            body: serde_json::to_vec(&row).unwrap_or_default(),
        }))
    }))
}

/// One pass of a create on a blocking thread.
async fn create_pass(
    state: &web::Data<State>,
    input: &Arc<CreateInput>,
    verified: Option<String>,
) -> Result<Step, String> {
    let (state, input) = (state.clone(), input.clone());
    web::block(move || {
        let _writer = state
            .pools
            .is_sqlite()
            .then(|| state.writer.lock().unwrap_or_else(PoisonError::into_inner));
        let mut conn = state.pools.get().map_err(|e| e.to_string())?;
        create_message(&mut conn, &state.cache, &input, verified.as_deref())
            .map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

async fn message_create(
    state: web::Data<State>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let Some(creds) = Credentials::from_request(&req) else {
        return respond(Ok(Outcome::Unauthorized));
    };
    let input = Arc::new(CreateInput {
        creds,
        body: NewMessage::parse(&body),
    });
    let outcome = match create_pass(&state, &input, None).await {
        Ok(Step::Done(outcome)) => Ok(outcome),
        Ok(Step::Verify(hash)) => {
            let checking = input.clone();
            let checked = web::block(move || checking.creds.verify(&hash).then_some(hash)).await;
            match checked {
                Ok(Some(hash)) => {
                    state.cache.insert(&input.creds, &hash);
                    match create_pass(&state, &input, Some(hash)).await {
                        // The stored hash changed between the passes.
                        Ok(Step::Verify(_)) => Ok(Outcome::Unauthorized),
                        Ok(Step::Done(outcome)) => Ok(outcome),
                        Err(e) => Err(e),
                    }
                }
                Ok(None) => Ok(Outcome::Unauthorized),
                Err(e) => Err(e.to_string()),
            }
        }
        Err(e) => Err(e),
    };
    respond(outcome)
}

async fn message_list(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some(q) = ListQuery::parse(req.query_string(), true) else {
        return respond(Ok(Outcome::BadRequest(NOT_A_BENCHMARK_REQUEST.into())));
    };
    run(state, move |conn| list_messages(conn, &q)).await
}

async fn user_list(state: web::Data<State>, req: HttpRequest) -> HttpResponse {
    let Some(q) = ListQuery::parse(req.query_string(), false) else {
        return respond(Ok(Outcome::BadRequest(NOT_A_BENCHMARK_REQUEST.into())));
    };
    run(state, move |conn| list_users(conn, &q)).await
}

async fn message_detail(state: web::Data<State>, path: web::Path<i32>) -> HttpResponse {
    let id = path.into_inner();
    run(state, move |conn| find_message(conn, id)).await
}

async fn plain(body: web::Data<web::Bytes>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .insert_header(NOSNIFF)
        .body(body.get_ref().clone())
}

/// The indexes of a tuned schema, named and defined as the microblog example's DDL does it
/// (see the crate documentation), and fresh planner statistics. The same text on both engines.
const SETUP: &str = r#"
CREATE UNIQUE INDEX IF NOT EXISTS "user_username_key" ON "user" ("username");
CREATE INDEX IF NOT EXISTS "message_user_id_pub_date_id_desc"
    ON "message" ("user_id", "pub_date", "id" DESC);
CREATE INDEX IF NOT EXISTS "message_pub_date_id_desc" ON "message" ("pub_date", "id" DESC);
ANALYZE;
"#;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(url) = args.next() else {
        eprintln!("usage: plover-ceiling <sqlite://FILE | postgres://...> [bind addr]");
        std::process::exit(2);
    };
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8002".to_string());
    let pool_size: u32 = std::env::var("POOL_SIZE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let pools = Pools::open(&url, pool_size).map_err(std::io::Error::other)?;

    let plain_body = {
        let mut conn = pools.get().map_err(std::io::Error::other)?;
        conn.batch_execute(SETUP).map_err(std::io::Error::other)?;
        let first_page = ListQuery::parse("", true)
            .ok_or_else(|| std::io::Error::other("the plain list is a list"))?;
        match list_messages(&mut conn, &first_page).map_err(std::io::Error::other)? {
            Outcome::Json(body) => web::Bytes::from(body),
            _ => return Err(std::io::Error::other("the plain list is a list")),
        }
    };
    let engine = if pools.is_sqlite() {
        "SQLite"
    } else {
        "PostgreSQL"
    };
    eprintln!(
        "plover-ceiling listening on {addr} ({engine}); /plain body {} bytes",
        plain_body.len()
    );

    let state = web::Data::new(State {
        pools,
        cache: CredentialCache::new()?,
        writer: Mutex::new(()),
    });
    let plain_body = web::Data::new(plain_body);
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(plain_body.clone())
            // Bodies up to 1 MiB, Plover's default.
            .app_data(web::PayloadConfig::new(1 << 20))
            .service(
                web::resource("/api/message/")
                    .route(web::get().to(message_list))
                    .route(web::post().to(message_create)),
            )
            .route("/api/message/{id}/", web::get().to(message_detail))
            .route("/api/user/", web::get().to(user_list))
            .route("/plain", web::get().to(plain))
    });
    if let Some(w) = std::env::var("WORKERS").ok().and_then(|v| v.parse().ok()) {
        server = server.workers(w);
    }
    server.bind(addr)?.run().await
}
