//! The microblog example: `cargo run -p microblog` serves its pages on http://127.0.0.1:8000/,
//! its REST API under /api/ and its admin under /admin/, from `microblog.db` (created on first
//! start). An empty database gets the demo data set first (`seed_demo`): log in as
//! `admin` / `admin`, or as `alice`, `bob` or `carol` with the password `password`.
//!
//! Environment: `DATABASE_URL` (default `sqlite://microblog.db`), `BIND` (default
//! `127.0.0.1:8000`), `SECRET_KEY` (at least 32 bytes; default: a random key per start),
//! `RUST_LOG` (default `info`: warnings, and every 5xx with its cause, go to stderr).

use actix_web::App;
use microblog::seed::{DEMO_PASSWORD, DEMO_USERS};
use microblog::{create_tables, ensure_user, seed_demo, User};
use plover::prelude::*;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
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

    let routes = microblog::routes(&db, &auth);

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
