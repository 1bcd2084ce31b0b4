//! Serves the library catalogue: `cargo run -p library` (SQLite file `library.db`; set
//! `DATABASE_URL` for another database). The first start creates an admin member
//! `librarian` with the password `librarian`.

use actix_web::App;
use library::{create_tables, routes, Member, MemberChanges};
use plover::prelude::*;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite://library.db".into());
    let db = Database::from_url(&url).map_err(std::io::Error::other)?;
    db.run_blocking(create_tables)
        .map_err(std::io::Error::other)?;
    let auth = Auth::<Member>::new(db.clone());
    let hash = auth
        .make_password("librarian")
        .map_err(std::io::Error::other)?;
    db.run_blocking(|conn| {
        if auth.find_user(conn, "librarian")?.is_none() {
            let librarian = MemberChanges {
                username: Some("librarian".into()),
                password: Some(hash),
                admin: Some(true),
            };
            Member::insert(conn, librarian)?;
        }
        Ok(())
    })
    .map_err(std::io::Error::other)?;
    let routes = routes(&db, &auth);
    println!("the library on http://127.0.0.1:8001/admin/ (librarian / librarian)");
    plover::server::Server::new(move || {
        App::new()
            .wrap(auth.session_middleware())
            .wrap(plover::server::Guard::default())
            .configure(routes.clone())
    })
    .bind("127.0.0.1:8001")?
    .run()
    .await
}
