//! The application `benches/changes.py` measures (docs/performance.md, "Changes: outbox, feed,
//! webhooks"): two identical models, `plain`, whose writes record nothing, and `fed`, which
//! serves a change feed and so records one event per row it writes, so that one process, one
//! database and one run compare writes with the outbox off and on.
//!
//! ```text
//! plover-bench-changes --database URL [--bind HOST:PORT] [--webhook URL]
//! ```
//!
//! - `GET/POST/PUT/DELETE /api/plain/` and `/api/fed/` for anyone (no authentication); a POST
//!   of an array is a bulk create (at most 1,000 objects).
//! - `GET /api/fed/changes/`: the feed, with the bounds on open streams raised to 10,000 per
//!   address, per user and in the process, so that one client can open the idle streams that
//!   are measured.
//! - `--webhook URL`: an endpoint (loopback allowed) that wants every event of `fed`, sent by
//!   two job workers polling every 50 ms, and the dispatcher.
//!
//! The tables are created at start when missing; the driver gives each run a fresh database.

use std::time::Duration;

use actix_web::App;
use plover::changes::{ChangeEvent, StreamLimits};
use plover::jobs::{Job, Jobs};
use plover::prelude::*;
use plover::webhooks::{Endpoint, Targets, Webhooks};

/// A row whose writes record no event.
#[derive(Debug, RestModel)]
#[diesel(table_name = plain)]
pub struct Plain {
    /// Primary key.
    pub id: i32,
    /// A short text.
    pub title: String,
    /// A longer text.
    pub body: String,
    /// A number.
    pub score: i32,
    /// A flag.
    pub done: bool,
}

/// The same row, whose writes record their events (its resource serves a feed).
#[derive(Debug, RestModel)]
#[diesel(table_name = fed)]
pub struct Fed {
    /// Primary key.
    pub id: i32,
    /// A short text.
    pub title: String,
    /// A longer text.
    pub body: String,
    /// A number.
    pub score: i32,
    /// A flag.
    pub done: bool,
}

/// The secret the webhooks are signed with (the receiver does not check it).
const SECRET: &str = "whsec_Y29uZm9ybWFuY2Utc2VjcmV0LWtleQ==";

/// Command-line options.
struct Args {
    database: String,
    bind: String,
    webhook: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        database: String::new(),
        bind: "127.0.0.1:8010".into(),
        webhook: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--database" => args.database = value,
            "--bind" => args.bind = value,
            "--webhook" => args.webhook = Some(value),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.database.is_empty() {
        return Err(
            "usage: plover-bench-changes --database URL [--bind HOST:PORT] [--webhook URL]".into(),
        );
    }
    Ok(args)
}

/// The API: both models open to anyone, the feed on `fed` with raised bounds.
fn api(db: &Database) -> RestApi {
    let many = 10_000;
    let mut api = RestApi::new(db.clone())
        .default_auth(Authentication::new(vec![]))
        .stream_limits(StreamLimits {
            per_client: many,
            per_user: many,
            per_process: many,
        });
    api.register_resource(Resource::<Plain>::new())
        .register_resource(Resource::<Fed>::new().changes(true));
    api
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args =
        parse_args().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let db = Database::from_url(&args.database).map_err(std::io::Error::other)?;
    let tables = [Plain::meta(), Fed::meta(), ChangeEvent::meta(), Job::meta()];
    db.run_blocking(|conn| plover::schema::create_tables(conn, &tables))
        .map_err(std::io::Error::other)?;
    let api = api(&db);
    let hooks = match &args.webhook {
        Some(url) => {
            let endpoint =
                Endpoint::new(url, SECRET, Targets::Any).map_err(std::io::Error::other)?;
            Some(Webhooks::new(&api).endpoint(endpoint.resources(&["fed"])))
        }
        None => None,
    };
    let api = api.setup();
    let server =
        plover::server::Server::new(move || App::new().configure(api.clone())).bind(&args.bind)?;
    let running = match &hooks {
        Some(hooks) => {
            let jobs = Jobs::new(db.clone()).poll(Duration::from_millis(50));
            Some(
                hooks
                    .start_with_workers(jobs, 2)
                    .map_err(std::io::Error::other)?,
            )
        }
        None => None,
    };
    eprintln!("plover-bench-changes listening on {}", args.bind);
    let served = server.run().await;
    if let Some(running) = running {
        running.stop().await;
    }
    served
}
