//! The microblog example: `cargo run -p microblog` serves its pages on http://127.0.0.1:8000/
//! and its REST API under /api/, from `microblog.db` (created on first start).
//!
//! Environment: `DATABASE_URL` (default `sqlite://microblog.db`), `BIND` (default
//! `127.0.0.1:8000`), `SECRET_KEY` (at least 32 bytes; default: a random key per start).

use actix_web::{App, HttpServer};
use microblog::{create_tables, ensure_user, User};
use plover::prelude::*;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite://microblog.db".into());
    let bind = std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:8000".into());
    let db = Database::from_url(&url).map_err(std::io::Error::other)?;
    db.run_blocking(|conn| create_tables(conn, "", ""))
        .map_err(std::io::Error::other)?;
    let mut auth = Auth::<User>::new(db.clone());
    if let Ok(key) = std::env::var("SECRET_KEY") {
        if key.len() < 32 {
            return Err(std::io::Error::other("SECRET_KEY needs at least 32 bytes"));
        }
        auth = auth.secret_key(key.as_bytes());
    }
    ensure_user(&db, &auth, "admin", "admin", true).map_err(std::io::Error::other)?;

    let routes = microblog::routes(&db, &auth);

    eprintln!("microblog: http://{bind}/ (log in as admin / admin)");
    HttpServer::new(move || {
        App::new()
            .wrap(auth.session_middleware())
            .configure(routes.clone())
    })
    .bind(bind)?
    .run()
    .await
}
