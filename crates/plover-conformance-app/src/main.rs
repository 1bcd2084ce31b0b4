//! The conformance app of `shared/conformance/APP.md`, built only from Plover's public API.
//!
//! ```text
//! plover-conformance-app --bind HOST:PORT --database URL [--admin USER:PASSWORD]
//!                        [--secret-key KEY] [--max-body-bytes N]
//! ```

mod models;

use actix_web::http::Method;
use actix_web::{web, App, HttpResponse, HttpServer};
use microblog::{ensure_user, HashPassword, Message, Note, Relationship, User};
use models::{AModel, ApiKey, BModel, CModel, DModel, EModel, FModel, HModel, Sample};
use plover::prelude::*;
use plover::rest::{Context, Data, Scope};
use serde_json::{Map, Value};

/// Command-line options.
struct Args {
    bind: String,
    database: String,
    admin: Option<(String, String)>,
    max_body_bytes: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bind: "127.0.0.1:8000".into(),
        database: "sqlite://conformance.db".into(),
        admin: None,
        max_body_bytes: plover::rest::DEFAULT_MAX_BODY_BYTES,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bind" => args.bind = value()?,
            "--database" => args.database = value()?,
            "--admin" => {
                let v = value()?;
                let (user, password) = v.split_once(':').ok_or("--admin takes USER:PASSWORD")?;
                args.admin = Some((user.to_owned(), password.to_owned()));
            }
            "--secret-key" => {
                value()?;
            }
            "--max-body-bytes" => {
                args.max_body_bytes = value()?
                    .parse()
                    .map_err(|_| "--max-body-bytes takes a number")?
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

/// `UserResource` of APP.md: active users only, passwords hashed on the way in.
struct UserHooks(HashPassword);

impl Hooks<User> for UserHooks {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope) {
        scope.eq("active", true);
    }

    fn save_object(
        &self,
        cx: &Context<'_>,
        changes: &mut microblog::UserChanges,
        raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.0.save_object(cx, changes, raw)
    }
}

/// `prepare_data` of `/api/note/`: the number of characters of the message.
struct NoteLength;

impl Hooks<Note> for NoteLength {
    fn prepare_data(&self, _cx: &Context<'_>, obj: &Note, data: &mut Data<'_>) {
        data.insert("message_length", obj.message.chars().count());
    }
}

/// The `check_*` hooks of `/api/hmodel/`.
struct HModelChecks;

impl Hooks<HModel> for HModelChecks {
    fn check_get(&self, _cx: &Context<'_>, obj: Option<&HModel>) -> bool {
        obj.is_none_or(|h| h.h_field != "private")
    }
    fn check_put(&self, _cx: &Context<'_>, obj: &HModel) -> bool {
        !obj.h_field.starts_with("locked")
    }
    fn check_delete(&self, _cx: &Context<'_>, obj: &HModel) -> bool {
        !obj.h_field.starts_with("locked")
    }
}

/// `check_post` of `/v2/note/`: never.
struct NoPost;

impl Hooks<Note> for NoPost {
    fn check_post(&self, _cx: &Context<'_>) -> bool {
        false
    }
}

fn user_resource(auth: &Auth<User>) -> Resource<User> {
    Resource::<User>::new()
        .exclude(["password", "email"])
        .filter_exclude(["password", "email"])
        .hooks(UserHooks(HashPassword(auth.clone())))
}

fn api(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    use Method as M;
    let open = || Authentication::new(vec![]);
    let all = || vec![M::GET, M::POST, M::PUT, M::DELETE];
    let mut api = RestApi::new(db).max_body_bytes(max_body);
    api.register_resource(user_resource(auth).auth(AdminAuthentication::new(auth)))
        .register_resource(
            Resource::<ApiKey>::new()
                .fields(["id", "key"])
                .auth(AdminAuthentication::with_methods(auth, all()))
                .allowed_methods([M::GET, M::POST, M::DELETE]),
        )
        .register_resource(
            Resource::<Message>::new()
                .owner_field("user")
                .include("user", user_resource(auth))
                .filter_exclude(["user__password", "user__email"])
                .auth(UserAuthentication::new(auth)),
        )
        .register_resource(
            Resource::<Relationship>::new()
                .include("to_user", user_resource(auth))
                .filter_exclude([
                    "from_user__password",
                    "from_user__email",
                    "to_user__password",
                    "to_user__email",
                ]),
        )
        .register_resource(
            Resource::<Note>::new()
                .hooks(NoteLength)
                .auth(ApiKeyAuthentication::<ApiKey>::new(all())),
        )
        .register_resource(Resource::<AModel>::new().auth(open()))
        .register_resource(
            Resource::<BModel>::new()
                .include("a", Resource::<AModel>::new())
                .auth(open()),
        )
        .register_resource(
            Resource::<CModel>::new()
                .include(
                    "b",
                    Resource::<BModel>::new().include("a", Resource::<AModel>::new()),
                )
                .auth(open()),
        )
        .register_resource(Resource::<DModel>::new().auth(open()))
        .register_resource(
            Resource::<EModel>::new()
                .paginate_by(5)
                .delete_recursive(false)
                .auth(open()),
        )
        .register_resource(
            Resource::<FModel>::new()
                .include("e", Resource::<EModel>::new())
                .filter_recursive(false)
                .auth(open()),
        )
        .register_resource(
            Resource::<HModel>::new()
                .filter_fields(["id", "h_field", "h_date", "h_day"])
                .hooks(HModelChecks)
                .auth(open()),
        )
        .register_resource(Resource::<Sample>::new().auth(Authentication::new(vec![M::DELETE])));
    api
}

fn v2(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    let mut api = RestApi::new(db)
        .prefix("/v2")
        .name("v2")
        .default_auth(UserAuthentication::new(auth))
        .max_body_bytes(max_body);
    api.register_resource(
        Resource::<Relationship>::new()
            .name("follow")
            .owner_field("from_user"),
    )
    .register_resource(
        Resource::<Note>::new()
            .hooks(NoPost)
            .allowed_methods([Method::GET, Method::POST]),
    );
    api
}

async fn homepage() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body("<!doctype html><title>Plover conformance app</title><p>[user:]</p>")
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args =
        parse_args().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let db = Database::from_url(&args.database).map_err(std::io::Error::other)?;
    db.run_blocking(|conn| {
        microblog::create_tables(conn, models::SCHEMA_SQLITE, models::SCHEMA_PG)
    })
    .map_err(std::io::Error::other)?;
    let auth = Auth::<User>::with_cost(4);
    if let Some((user, password)) = &args.admin {
        ensure_user(&db, &auth, user, password, true).map_err(std::io::Error::other)?;
    }
    let api = api(db.clone(), &auth, args.max_body_bytes).setup();
    let v2 = v2(db, &auth, args.max_body_bytes).setup();
    eprintln!("plover-conformance-app listening on {}", args.bind);
    HttpServer::new(move || {
        App::new()
            .configure(api.clone())
            .configure(v2.clone())
            .route("/", web::get().to(homepage))
    })
    .bind(&args.bind)?
    .run()
    .await
}
