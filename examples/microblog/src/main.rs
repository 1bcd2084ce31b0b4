//! The microblog example: `cargo run -p microblog` serves its pages on http://127.0.0.1:8000/,
//! its REST API under /api/ and its admin under /admin/, from `microblog.db` (created on first
//! start). An empty database gets the demo data set first (`seed_demo`): log in as
//! `admin` / `admin`, or as `alice`, `bob` or `carol` with the password `password`.
//!
//! `microblog --help` lists the commands (`serve`, the default, `check`, `makemigrations`,
//! `migrate`, `createsuperuser`, `openapi`, `routes`) and the environment they read.

use std::process::ExitCode;

use microblog::seed::{DEMO_PASSWORD, DEMO_USERS};
use microblog::{
    ensure_user, models, new_user_webhook, routes_with, seed_demo, webhook_from_env, User,
};
use plover::manage::Commands;
use plover::rest::{RateLimit, RestApi};

/// What `--help` says of the program and of its environment.
const ABOUT: &str = "Plover's microblog example: HTML pages, a REST API under /api/ and an \
admin under /admin/. An empty database gets a demo data set first: log in as admin / admin, \
or as alice, bob or carol with the password \"password\".

Environment: DATABASE_URL (default sqlite://microblog.db), BIND (default 127.0.0.1:8000), \
SECRET_KEY (the session cookies' key, at least 32 bytes; default: random per start), RUST_LOG \
(default info), RATE_LIMIT (requests a minute per client on the REST API; db:N keeps the \
counts in the database, shared by every process), ETAGS (off: no ETag on the API's answers), \
WEBHOOK_URL and WEBHOOK_SECRET (a webhook for each new user, signed with the whsec_ secret; \
WEBHOOK_TARGETS=any lets it reach a loopback or private address).";

/// The REST API's rate limit of `RATE_LIMIT` (`N` or `db:N` requests a minute), if set.
fn rate_limit() -> Result<Option<RateLimit>, String> {
    let Ok(value) = std::env::var("RATE_LIMIT") else {
        return Ok(None);
    };
    let (in_database, count) = match value.strip_prefix("db:") {
        Some(count) => (true, count),
        None => (false, value.as_str()),
    };
    let count: u32 = count.parse().map_err(|_| "RATE_LIMIT takes N or db:N")?;
    let limit = RateLimit::per_minute(count);
    Ok(Some(if in_database {
        limit.in_database()
    } else {
        limit
    }))
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let (rate_limit, webhook) = match (rate_limit(), webhook_from_env()) {
        (Ok(limit), Ok(webhook)) => (limit, webhook),
        (Err(message), _) | (_, Err(message)) => {
            eprintln!("microblog: {message}");
            return ExitCode::from(2);
        }
    };
    // ETAGS=off: no ETag on the API's answers (the benchmark measures what they cost).
    let etags = std::env::var("ETAGS").map_or(true, |v| v != "off");
    let mut commands = Commands::<User>::new("microblog");
    if let Some(endpoint) = webhook {
        commands = commands.webhooks(move |db, auth| new_user_webhook(db, auth, &endpoint));
    }
    commands
        .about(ABOUT)
        .models(models())
        .on_start(|db, auth| {
            // Only on an empty database: a database with users (the benchmark's) is kept.
            if seed_demo(db, auth)? {
                eprintln!("microblog: seeded the demo data set");
            }
            ensure_user(db, auth, "admin", "admin", true)?;
            eprintln!(
                "microblog: log in as admin / admin (the administrator) or {} / {DEMO_PASSWORD}",
                DEMO_USERS.join(", ")
            );
            Ok(())
        })
        .run(|db, auth| {
            let api = RestApi::new(db.clone()).etags(etags);
            let api = match rate_limit {
                Some(limit) => api.rate_limit(limit),
                None => api,
            };
            routes_with(db, auth, api)
        })
}
