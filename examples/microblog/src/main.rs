//! The microblog example: `cargo run -p microblog` serves its REST API on
//! http://127.0.0.1:8000/api/ from `microblog.db` (created on first start).

use actix_web::{web, App, HttpResponse, HttpServer};
use microblog::{create_tables, ensure_user, HashPassword, Message, Note, Relationship, User};
use plover::prelude::*;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite://microblog.db".into());
    let bind = std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:8000".into());
    let db = Database::from_url(&url).map_err(std::io::Error::other)?;
    db.run_blocking(|conn| create_tables(conn, "", ""))
        .map_err(std::io::Error::other)?;
    let auth = Auth::<User>::new();
    ensure_user(&db, &auth, "admin", "admin", true).map_err(std::io::Error::other)?;

    let user_resource = || Resource::<User>::new().exclude(["password", "email"]);
    let mut api = RestApi::new(db);
    api.register_resource(
        user_resource()
            .filter_exclude(["password", "email"])
            .hooks(HashPassword(auth.clone()))
            .auth(AdminAuthentication::new(&auth)),
    )
    .register::<Relationship>()
    .register_resource(
        Resource::<Message>::new()
            .keyset_pagination(true)
            .filter_exclude(["user__password", "user__email"])
            .owner_field("user")
            .auth(UserAuthentication::new(&auth)),
    )
    .register::<Note>();
    let api = api.setup();

    eprintln!("microblog: http://{bind}/api/message/ (admin login: admin / admin)");
    HttpServer::new(move || {
        App::new()
            .configure(api.clone())
            .route("/", web::get().to(|| async {
                HttpResponse::Ok()
                    .content_type("text/html; charset=utf-8")
                    .body("<h1>Plover microblog</h1><p>The API is at <a href=\"/api/message/\">/api/</a>.</p>")
            }))
    })
    .bind(bind)?
    .run()
    .await
}
