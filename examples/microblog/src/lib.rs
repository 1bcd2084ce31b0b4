//! Plover's microblog example, flask-peewee's example app (a small Twitter clone) in Rust:
//! users who join, follow each other and post messages, and free-standing notes (the data set
//! of the benchmark peer). [`routes`] serves the HTML pages ([`pages`]), the REST API under
//! `/api/`, the login and logout views under `/accounts/` and the admin under `/admin/`;
//! [`seed_demo`] fills an empty database with a small demo data set.

use plover::prelude::*;

pub mod admin;
pub mod pages;
pub mod seed;

pub use seed::seed_demo;

/// A user of the microblog and of the accounts component.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = user)]
#[rest(table, display = "{username}")]
pub struct User {
    /// Primary key.
    pub id: i32,
    /// Unique login name. With the feature `search-index`, a search of messages (`q`) finds
    /// it through its search index.
    #[rest(username)]
    #[cfg_attr(feature = "search-index", rest(search_index))]
    pub username: String,
    /// bcrypt hash (`""`: no usable password); write-only: never shown, filtered or ordered.
    #[rest(password)]
    pub password: String,
    /// E-mail address: private (no resource shows it or filters on it; the user resource
    /// accepts it, write-only, and the admin shows it).
    #[rest(private)]
    pub email: String,
    /// When the user joined.
    #[rest(default = plover::value::now(), verbose_name = "Date joined")]
    pub join_date: chrono::NaiveDateTime,
    /// Whether the user may log in.
    #[rest(active, default = true)]
    pub active: bool,
    /// Whether the user is an administrator.
    #[rest(admin, default = false)]
    pub admin: bool,
}

/// `from_user` follows `to_user`.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = relationship)]
#[rest(table, display = "{from_user_id}->{to_user_id}")]
pub struct Relationship {
    /// Primary key.
    pub id: i32,
    /// The follower.
    #[rest(fk = User)]
    pub from_user_id: i32,
    /// The followed user.
    #[rest(fk = User)]
    pub to_user_id: i32,
}

/// A posted message. The indexes serve a user's timeline and the public one, newest first:
/// `ordering=-pub_date` sorts by `pub_date DESC, id` (the primary key breaks ties, ascending),
/// which is the order of these indexes read backwards, so the database reads a page without
/// sorting. Kept oldest first, they take each new message at their end, as the table does; kept
/// newest first, they would take it at their start, where page splits leave pages part empty.
/// The third serves `ordering=user__username` on SQLite: each author's messages in key order,
/// the order that breaks the ties between one author's messages, so none is sorted.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = message)]
#[rest(table, display = "{content}")]
#[rest(
    index = "user_id, pub_date, -id",
    index = "pub_date, -id",
    index = "user_id, id"
)]
pub struct Message {
    /// Primary key.
    pub id: i32,
    /// The author.
    #[rest(fk = User)]
    pub user_id: i32,
    /// The text: never blank, whoever writes it (the pages, the API, the admin and its
    /// inline on the user's page). With the feature `search-index`, its search index serves a
    /// search (`q`) of a rare word without reading every message.
    #[rest(not_blank)]
    #[cfg_attr(feature = "search-index", rest(search_index))]
    pub content: String,
    /// When it was posted.
    #[rest(default = plover::value::now(), verbose_name = "Date published")]
    pub pub_date: chrono::NaiveDateTime,
}

/// A free-standing note.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = note)]
#[rest(table, display = "{message}")]
pub struct Note {
    /// Primary key.
    pub id: i32,
    /// The text.
    pub message: String,
    /// When it was written.
    #[rest(default = plover::value::now())]
    pub created: chrono::NaiveDateTime,
}

/// The example's four models, the admin's history, the outbox of change feeds and the job
/// queue (the webhooks' deliveries), for [`plover::schema`].
pub fn models() -> [&'static plover::model::ModelMeta; 7] {
    [
        User::meta(),
        Relationship::meta(),
        Message::meta(),
        Note::meta(),
        plover::history::HistoryEntry::meta(),
        plover::changes::ChangeEvent::meta(),
        plover::jobs::Job::meta(),
    ]
}

/// Creates the tables and their indexes if they do not exist, on either engine, from the
/// models (see [`plover::schema::create_tables`]).
pub fn create_tables(conn: &mut plover::db::Conn<'_>) -> Result<(), plover::Error> {
    plover::schema::create_tables(conn, &models())
}

/// The user named `username` with the given password and admin flag, created if missing
/// (also when another process creates it at the same moment). An existing user is left as it
/// is, and costs no password hash.
pub fn ensure_user(
    db: &Database,
    auth: &Auth<User>,
    username: &str,
    password: &str,
    admin: bool,
) -> Result<(), plover::Error> {
    let existing = db.run_blocking(|conn| auth.find_user(conn, username))?;
    if existing.is_some() {
        return Ok(());
    }
    let hash = auth
        .make_password(password)
        .map_err(|e| plover::Error::field("password", e.to_string()))?;
    db.run_blocking(|conn| {
        if auth.find_user(conn, username)?.is_some() {
            return Ok(());
        }
        let changes = UserChanges {
            // Stored as every writer stores it (NFKC, trimmed), and as the login finds it.
            username: Some(plover::accounts::normalize_username(username)),
            password: Some(hash),
            email: Some(String::new()),
            join_date: Some(plover::value::now()),
            active: Some(true),
            admin: Some(admin),
        };
        match User::insert(conn, changes) {
            Ok(_) => Ok(()),
            // Another process starting at the same time made it first.
            Err(_) if auth.find_user(conn, username)?.is_some() => Ok(()),
            Err(e) => Err(e),
        }
    })
}

/// Everything the example serves except the session middleware (wrap the `App` with
/// `auth.session_middleware()`): the REST API under `/api/`, the login and logout views under
/// `/accounts/`, the admin under `/admin/`, and the HTML pages.
pub fn routes(
    db: &Database,
    auth: &Auth<User>,
) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone {
    routes_with(db, auth, RestApi::new(db.clone()))
}

/// [`routes`], with the REST API `api` as configured (a rate limit, ETags off, ...) before
/// its registrations.
pub fn routes_with(
    db: &Database,
    auth: &Auth<User>,
    api: RestApi,
) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone {
    let api = api_resources(auth, api).setup();
    let accounts = auth.setup();
    let admin = admin::admin(auth).setup();
    let db = actix_web::web::Data::new(db.clone());
    move |cfg| {
        cfg.app_data(db.clone());
        accounts(cfg);
        api(cfg);
        admin(cfg);
        pages::configure(cfg);
    }
}

/// The REST API's resources, registered on `api`: users (written by administrators, the
/// e-mail write-only, passwords hashed), relationships, messages (written by their authors,
/// searchable, with a change feed that the public timeline follows live) and notes.
pub fn api_resources(auth: &Auth<User>, mut api: RestApi) -> RestApi {
    let (user, message) = (User::FIELDS, Message::FIELDS);
    api.register_resource(
        Resource::<User>::new()
            .write_only([user.email])
            .hooks(plover::rest::HashPassword::new(auth))
            .auth(AdminAuthentication::new(auth)),
    )
    .register_resource(Resource::<Relationship>::new())
    .register_resource(
        Resource::<Message>::new()
            .keyset_pagination(true)
            .aggregates(true)
            .search_fields([message.content.into(), message.user_id.join(user.username)])
            .owner_field(message.user_id)
            .changes(true)
            .auth(UserAuthentication::new(auth)),
    )
    .register::<Note>();
    api
}

/// The webhook the example sends for each new user (`{"event": "created", "resource":
/// "user", "object": ...}`, signed with `secret`) to `url`, over the API's user resource.
/// `targets` says whether a loopback or private address may receive it.
pub fn new_user_webhook(
    db: &Database,
    auth: &Auth<User>,
    endpoint: &plover::webhooks::Endpoint,
) -> plover::webhooks::Webhooks {
    let api = api_resources(auth, RestApi::new(db.clone()));
    let endpoint = endpoint
        .clone()
        .resources(&["user"])
        .operations(&["created"]);
    plover::webhooks::Webhooks::new(&api).endpoint(endpoint)
}

/// The webhook endpoint of the environment, if `WEBHOOK_URL` is set: signed with
/// `WEBHOOK_SECRET` (`whsec_...`, required with it); `WEBHOOK_TARGETS=any` lets it be a
/// loopback or private address (default `public`: refused). The error says what is wrong.
pub fn webhook_from_env() -> Result<Option<plover::webhooks::Endpoint>, String> {
    use plover::webhooks::{Endpoint, Targets};
    let Ok(url) = std::env::var("WEBHOOK_URL") else {
        return Ok(None);
    };
    let secret = std::env::var("WEBHOOK_SECRET").map_err(|_| "WEBHOOK_URL needs WEBHOOK_SECRET")?;
    let targets = match std::env::var("WEBHOOK_TARGETS").as_deref() {
        Ok("any") => Targets::Any,
        Ok("public") | Err(_) => Targets::Public,
        Ok(_) => return Err("WEBHOOK_TARGETS takes public or any".into()),
    };
    match Endpoint::new(&url, &secret, targets) {
        Ok(endpoint) => Ok(Some(endpoint)),
        Err(e) => Err(format!("WEBHOOK_URL: {}", e.field_lines("; "))),
    }
}
