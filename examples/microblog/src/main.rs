//! The microblog example: `cargo run -p microblog` serves its pages on http://127.0.0.1:8000/,
//! its REST API under /api/ and its admin under /admin/, from `microblog.db` (created on first
//! start). An empty database gets the demo data set first (`seed_demo`): log in as
//! `admin` / `admin`, or as `alice`, `bob` or `carol` with the password `password`.
//!
//! Environment: `DATABASE_URL` (default `sqlite://microblog.db`), `BIND` (default
//! `127.0.0.1:8000`), `SECRET_KEY` (at least 32 bytes; default: a random key per start),
//! `RUST_LOG` (default `info`: warnings, and every 5xx with its cause, go to stderr).
//! `microblog --help` prints this and ends, before it opens a database.

use actix_web::App;
use microblog::seed::{DEMO_PASSWORD, DEMO_USERS};
use microblog::{create_tables, ensure_user, seed_demo, User};
use plover::prelude::*;

/// What `--help` prints: what the program does and the environment variables it reads.
fn usage() -> String {
    format!(
        "Plover's microblog example: HTML pages, a REST API under /api/ and an admin under /admin/.

Usage: microblog [--help]

Environment variables:
  DATABASE_URL  the database (default sqlite://microblog.db, created if missing;
                postgres://user:password@host/name works too)
  BIND          the address to serve on (default 127.0.0.1:8000)
  SECRET_KEY    the key of the session cookies, at least 32 bytes (default: a random key
                per start, so logins end when the program restarts)
  RUST_LOG      what is logged on stderr (default info: warnings, and every 5xx error with
                its cause)
  RATE_LIMIT    requests a minute per client address on the REST API (default: no limit);
                db:N keeps the counts in the database, shared by every process

An empty database gets a demo data set first. Log in as admin / admin (the administrator),
or as {} with the password \"{DEMO_PASSWORD}\".
",
        DEMO_USERS.join(", ")
    )
}

/// Answers the command line before anything else happens: `--help` (or `-h`) prints
/// [`usage`] and ends the program; any other argument is an error (exit status 2).
fn answer_arguments() {
    let Some(arg) = std::env::args_os().nth(1) else {
        return;
    };
    if arg == "--help" || arg == "-h" {
        print!("{}", usage());
        std::process::exit(0);
    }
    eprint!("microblog: unknown argument {arg:?}\n\n{}", usage());
    std::process::exit(2);
}

/// The REST API's rate limit of `RATE_LIMIT` (`N` or `db:N` requests a minute), if set.
fn rate_limit() -> std::io::Result<Option<plover::rest::RateLimit>> {
    let Ok(value) = std::env::var("RATE_LIMIT") else {
        return Ok(None);
    };
    let (in_database, count) = match value.strip_prefix("db:") {
        Some(count) => (true, count),
        None => (false, value.as_str()),
    };
    let count: u32 = count
        .parse()
        .map_err(|_| std::io::Error::other("RATE_LIMIT takes N or db:N"))?;
    let limit = plover::rest::RateLimit::per_minute(count);
    Ok(Some(if in_database {
        limit.in_database()
    } else {
        limit
    }))
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    answer_arguments();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite://microblog.db".into());
    let bind = std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:8000".into());
    let db = Database::from_url(&url).map_err(std::io::Error::other)?;
    db.run_blocking(create_tables)
        .map_err(std::io::Error::other)?;
    let mut auth = Auth::<User>::new(db.clone());
    if let Ok(key) = std::env::var("SECRET_KEY") {
        if key.len() < 32 {
            return Err(std::io::Error::other("SECRET_KEY needs at least 32 bytes"));
        }
        auth = auth.secret_key(key.as_bytes());
    }
    // Only on an empty database: a database with users (the benchmark's) is left as it is.
    if seed_demo(&db, &auth).map_err(std::io::Error::other)? {
        eprintln!("microblog: seeded the demo data set");
    }
    ensure_user(&db, &auth, "admin", "admin", true).map_err(std::io::Error::other)?;

    let routes = microblog::routes_limited(&db, &auth, rate_limit()?);

    eprintln!(
        "microblog: http://{bind}/ (log in as admin / admin, the administrator, or {} / {DEMO_PASSWORD})",
        DEMO_USERS.join(", ")
    );
    // Plover's server and guard bound what each connection may cost: time limits on headers,
    // bodies and unread responses, no upgrades, safe headers.
    plover::server::Server::new(move || {
        App::new()
            .wrap(auth.session_middleware())
            .wrap(plover::server::Guard::default())
            .configure(routes.clone())
    })
    .bind(bind)?
    .run()
    .await
}
