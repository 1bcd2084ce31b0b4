//! Fixtures shared by Plover's integration tests.
//!
//! One test application ([`TestApp`]) registers every model and every resource option the
//! integration tests use, over a fresh database per test: a temporary SQLite file, or, when
//! `PLOVER_TEST_PG_URL` holds a PostgreSQL admin URL
//! (`postgres://postgres@127.0.0.1:5432/postgres`), a new PostgreSQL database created through
//! it and dropped with the application:
//!
//! - `/api`: the microblog's models (with the conformance app's options), the A <- B <- C <- D
//!   chain, a nullable foreign key (F -> E), `HModel` with `check_*` hooks, API keys, a sample
//!   of every scalar type, a model with a model-level `exclude` (`Vault`) and further
//!   registrations of the same models with other options (`slim`, `dchain`, `msgff`, ...; the
//!   `tracked` and `tracked_open` samples record their writes in the history);
//! - `/v2`: an API whose default authentication is `UserAuthentication` (`follow`, `note`);
//! - `/v3`: `ticket` and `sample` behind `UserAuthentication` on every verb and
//!   `ModelPermissions`;
//! - `/small`: an API with a 64-byte body limit.
//!
//! Tests seed rows with SQL ([`TestApp::sql`]) or users with [`TestApp::user`], send requests
//! with [`TestApp::send`] (or the `get`/`post`/`put`/`delete` shortcuts) and read back a [`Resp`].
//! Seeds are SQL that both engines accept (booleans as `TRUE`/`FALSE`, `"user"` quoted); after a
//! seed with explicit ids, PostgreSQL's sequences are moved past them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderMap, CONTENT_TYPE};
use actix_web::http::{Method, StatusCode};
use actix_web::test::{self, TestRequest};
use actix_web::web::Bytes;
use actix_web::App;
use base64::Engine as _;
use plover::auth::{AuthRequest, AuthUser};
use plover::db::{Conn, Engine};
use plover::prelude::*;
use plover::query::Op;
use plover::rest::{Context, Scope};
use serde_json::{Map, Value};

mod views_routes;

pub use microblog::{Message, Note, Relationship, User, UserChanges};

/// The diesel schema of the models defined here (the conformance app's are in
/// `plover_conformance_app::models::schema`, the microblog's in `microblog` (each struct declares its table)).
#[allow(missing_docs)]
pub mod schema {
    diesel::table! {
        /// A model with a field excluded at the model level.
        vault (id) { id -> Integer, label -> Text, pin -> Text, }
    }
    diesel::table! {
        /// Refers to a Vault.
        deposit (id) { id -> Integer, vault_id -> Integer, amount -> Integer, }
    }
    diesel::table! {
        /// A model with a read-only field.
        job (id) { id -> Integer, title -> Text, status -> Text, }
    }
}

pub use plover_conformance_app::models::{
    AModel, ApiKey, BModel, CModel, DModel, EModel, FModel, HModel, Sample, Status, Ticket,
};

/// A model whose `pin` is excluded at the model level: never serialized, filtered or ordered.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = vault)]
#[rest(exclude = "pin")]
pub struct Vault {
    /// Primary key.
    pub id: i32,
    /// Text.
    pub label: String,
    /// Excluded everywhere.
    #[rest(default = String::new())]
    pub pin: String,
}

/// Refers to a Vault: joins through it must not reach `pin`. Its model rules (every writer):
/// a deposit into a vault labelled `closed...` is refused; a deposit appends `+<amount>` to its
/// vault's label, in the same transaction, and is refused afterwards when that label grows
/// past 12 characters (so a refused deposit shows that the vault's change was rolled back).
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = deposit)]
#[rest(rules)]
pub struct Deposit {
    /// Primary key.
    pub id: i32,
    /// The Vault.
    #[rest(fk = Vault)]
    pub vault_id: i32,
    /// An amount.
    pub amount: i32,
}

/// A model whose `status` is read-only: serialized, never written by a client.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = job)]
pub struct Job {
    /// Primary key.
    pub id: i32,
    /// Text.
    pub title: String,
    /// Set by the application only.
    #[rest(read_only, default = "open".to_owned())]
    pub status: String,
}

impl plover::model::Rules for Deposit {
    fn validate(
        conn: &mut Conn<'_>,
        changes: &DepositChanges,
        _existing: Option<&Deposit>,
    ) -> Result<(), Error> {
        let Some(vault) = changes.vault_id else {
            return Ok(());
        };
        match Vault::load_pk(conn, i64::from(vault))? {
            Some(v) if v.label.starts_with("closed") => {
                Err(Error::field("vault_id", "this vault is closed"))
            }
            _ => Ok(()),
        }
    }

    fn before_save(
        conn: &mut Conn<'_>,
        changes: &mut DepositChanges,
        existing: Option<&Deposit>,
    ) -> Result<(), Error> {
        let vault = changes
            .vault_id
            .or(existing.map(|d| d.vault_id))
            .unwrap_or_default();
        let amount = changes
            .amount
            .or(existing.map(|d| d.amount))
            .unwrap_or_default();
        let Some(current) = Vault::load_pk(conn, i64::from(vault))? else {
            return Ok(()); // the foreign-key check reports it
        };
        let label = format!("{}+{amount}", current.label);
        let too_long = label.chars().count() > 12;
        let mark = VaultChanges {
            label: Some(label),
            ..VaultChanges::default()
        };
        Vault::update(conn, i64::from(vault), mark)?;
        if too_long {
            return Err(Error::field("amount", "the vault is full"));
        }
        Ok(())
    }
}

/// The admin of the fixture app: the conformance app's (its APP.md section 5), with `vault`,
/// whose index has the action `close` ([`close_vaults`]) and whose pages edit its deposits
/// (an inline: the amounts, 3 empty rows, at most 5 shown), `deposit` (model rules that read
/// and write vaults; facets of its vault always counted) and `sample` (every scalar type;
/// facets of its boolean and dates, and exact counts up to 3 rows only).
pub fn admin(auth: &Auth<User>) -> plover::admin::Admin<User> {
    use plover::admin::{Action, Inline, ModelAdmin, ShowFacets};
    let mut admin = plover_conformance_app::admin(auth);
    admin
        .register(
            ModelAdmin::<Vault>::new()
                .action(Action::new("close", "Close the vaults", close_vaults))
                .inline(
                    Inline::<Deposit>::new(Deposit::FIELDS.vault_id)
                        .fields([Deposit::FIELDS.amount])
                        .extra(3)
                        .max_shown(5),
                ),
        )
        .register(
            ModelAdmin::<Deposit>::new()
                .list_filter([Deposit::FIELDS.vault_id])
                .show_facets(ShowFacets::Always),
        )
        .register(
            ModelAdmin::<Sample>::new()
                .list_filter([
                    Sample::FIELDS.flag,
                    Sample::FIELDS.day,
                    Sample::FIELDS.stamp,
                ])
                .count_exact_up_to(3),
        );
    admin
}

/// The `close` action of the vault admin: puts `closed ` before each vault's label, key
/// ascending; a vault labelled `stuck` refuses (409), after the vaults before it were changed.
pub fn close_vaults(conn: &mut Conn<'_>, vaults: &[Vault]) -> Result<String, Error> {
    for vault in vaults {
        if vault.label == "stuck" {
            return Err(Error::Conflict(format!("the vault #{} is stuck", vault.id)));
        }
        let changes = VaultChanges {
            label: Some(format!("closed {}", vault.label)),
            ..VaultChanges::default()
        };
        Vault::update(conn, i64::from(vault.id), changes)?;
    }
    Ok(format!("{} vaults closed", vaults.len()))
}

/// Every model of the fixture app: the conformance app's (with the microblog's) and the ones
/// defined here. The tables come from these models ([`plover::schema`]).
pub fn models() -> Vec<&'static plover::model::ModelMeta> {
    let mut out = plover_conformance_app::models::models();
    out.extend([
        Vault::meta(),
        Deposit::meta(),
        Job::meta(),
        plover::auth::Token::meta(),
    ]);
    out
}

/// Moves every `SERIAL` sequence of the public schema past the largest `id` of its table, so
/// that rows seeded with explicit ids do not collide with later inserts (PostgreSQL).
const RESET_SEQUENCES_PG: &str = r#"
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT table_name FROM information_schema.columns
             WHERE table_schema = 'public' AND column_name = 'id'
               AND column_default LIKE 'nextval(%'
    LOOP
        EXECUTE format(
            'SELECT setval(pg_get_serial_sequence(%L, ''id''), COALESCE(MAX(id), 0) + 1, false) FROM %I',
            quote_ident(t), t);
    END LOOP;
END $$;
"#;

/// The environment variable that selects PostgreSQL: an admin URL such as
/// `postgres://postgres@127.0.0.1:5432/postgres`. Unset (or empty): SQLite.
pub const PG_URL_VAR: &str = "PLOVER_TEST_PG_URL";

/// The PostgreSQL admin URL of [`PG_URL_VAR`], if the tests run on PostgreSQL.
pub fn pg_admin_url() -> Option<String> {
    std::env::var(PG_URL_VAR)
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// Whether the tests run on PostgreSQL (see [`PG_URL_VAR`]).
pub fn on_postgres() -> bool {
    pg_admin_url().is_some()
}

/// The calls that recording hooks and authenticators saw, in order (e.g. `check_get:list`).
pub type CallLog = Arc<Mutex<Vec<String>>>;

/// `check_get` of `/api/nolist/`: the list is refused, details are allowed.
struct NoList;

impl Hooks<AModel> for NoList {
    fn check_get(&self, _cx: &Context<'_>, obj: Option<&AModel>) -> bool {
        obj.is_some()
    }
}

/// `get_query` of `/api/scoped/`: rows whose `a_field` is `hidden` do not exist.
struct HideHidden;

impl Hooks<AModel> for HideHidden {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope<AModel>) {
        scope.filter(AModel::FIELDS.a_field, Op::Ne, "hidden");
    }
}

/// Hides the sample named `secret` (`/api/upserted/`).
struct HideSecret;

impl Hooks<Sample> for HideSecret {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope<Sample>) {
        scope.filter(Sample::FIELDS.name, Op::Ne, "secret");
    }
}

/// Hooks of `/api/audited/` that record every `check_*` call in the app's [`CallLog`].
struct Audit(CallLog);

impl Audit {
    fn record(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }
}

impl Hooks<EModel> for Audit {
    fn check_get(&self, _cx: &Context<'_>, obj: Option<&EModel>) -> bool {
        self.record(match obj {
            None => "check_get:list".to_owned(),
            Some(e) => format!("check_get:{}", e.id),
        });
        obj.is_none_or(|e| e.e_field != "private")
    }
    fn check_post(&self, _cx: &Context<'_>) -> bool {
        self.record("check_post".to_owned());
        true
    }
    fn check_put(&self, _cx: &Context<'_>, obj: &EModel) -> bool {
        self.record(format!("check_put:{}", obj.id));
        true
    }
    fn check_delete(&self, _cx: &Context<'_>, obj: &EModel) -> bool {
        self.record(format!("check_delete:{}", obj.id));
        true
    }
}

/// The hooks of the deposits a vault is created with (`vault_deposits`): `save_object`
/// refuses an amount of 13 and stores an amount of 7 as 77.
struct DepositHooks;

impl Hooks<Deposit> for DepositHooks {
    fn save_object(
        &self,
        _cx: &Context<'_>,
        changes: &mut DepositChanges,
        _raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        match changes.amount {
            Some(13) => Err(Error::field("amount", "unlucky")),
            Some(7) => {
                changes.amount = Some(77);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// An authenticator that records every call (`authorize:<METHOD>`) and refuses requests that
/// carry the header `x-deny`.
struct Recording(CallLog);

impl Authenticator for Recording {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        _db: &mut plover::db::LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        self.0
            .lock()
            .unwrap()
            .push(format!("authorize:{}", req.method));
        if req.headers.contains_key("x-deny") {
            Err(Error::Unauthorized)
        } else {
            Ok(None)
        }
    }
}

fn open() -> Authentication {
    Authentication::new(vec![])
}

/// The `/api` registrations: the conformance app's, and more registrations of the same models
/// with other options.
/// Every verb a resource can serve, PATCH included.
const EVERY_METHOD: [Method; 5] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
];

/// A user resource that shows neither the password hash nor the e-mail address (which it
/// accepts, write-only), without hooks: it hides no user itself.
fn plain_users() -> Resource<User> {
    Resource::<User>::new().write_only([User::FIELDS.email])
}

fn api(db: Database, auth: &Auth<User>, log: &CallLog) -> RestApi {
    let mut api = plover_conformance_app::api(db, auth, plover::rest::DEFAULT_MAX_BODY_BYTES);
    let (sample, message) = (Sample::FIELDS, Message::FIELDS);
    api.register_resource(
        Resource::<Sample>::new()
            .name("slim")
            .fields([sample.id, sample.name, sample.qty])
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("lean")
            .exclude([sample.body, sample.remark, sample.stamp])
            .auth(open()),
    )
    .register_resource(Resource::<Vault>::new().auth(open()))
    .register_resource(Resource::<Deposit>::new().auth(open()))
    .register_resource(Resource::<Job>::new().auth(open()))
    .register_resource(
        Resource::<Sample>::new()
            .name("narrow")
            .fields([sample.id, sample.name, sample.qty])
            .writable([sample.name, sample.qty])
            .auth(open()),
    )
    .register_resource(
        Resource::<DModel>::new()
            .name("dchain")
            .include(
                DModel::FIELDS.c_id,
                Resource::<CModel>::new()
                    .filter_exclude([CModel::FIELDS.c_field])
                    .include(
                        CModel::FIELDS.b_id,
                        Resource::<BModel>::new()
                            .exclude([BModel::FIELDS.b_field])
                            .include(BModel::FIELDS.a_id, Resource::<AModel>::new()),
                    ),
            )
            .auth(open()),
    )
    .register_resource(Resource::<Message>::new().name("msgff").filter_fields([
        message.content.into(),
        message.user_id.join(User::FIELDS.username),
    ]))
    .register_resource(
        Resource::<Message>::new()
            .name("msgfk")
            .filter_fields([message.user_id]),
    )
    .register_resource(
        Resource::<EModel>::new()
            .name("audited")
            .hooks(Audit(log.clone()))
            .auth(Recording(log.clone())),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("nolist")
            .hooks(NoList)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("scoped")
            .hooks(HideHidden)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("a_norec")
            .delete_recursive(false)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("readonly_a")
            .allowed_methods([Method::GET])
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("cursor")
            .keyset_pagination(true)
            .paginate_by(3)
            .auth(open()),
    )
    .register_resource(
        Resource::<Message>::new()
            .name("message_pages")
            .keyset_pagination(true)
            .search_fields([
                message.content.into(),
                message.user_id.join(User::FIELDS.username),
            ])
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("searched")
            .search_fields([sample.name, sample.body, sample.remark])
            .auth(open()),
    )
    .register_resource({
        // Counts exactly up to 2 rows, past them (on PostgreSQL) the planner's estimate.
        let mut limits = plover::query::Limits::default();
        limits.count_exact_up_to = 2;
        Resource::<Message>::new()
            .name("smallcount_message")
            .limits(limits)
            .count(plover::query::Count::Auto)
            .auth(open())
    })
    .register_resource(
        Resource::<Sample>::new()
            .name("counted")
            .count(plover::query::Count::Exact)
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("noid")
            .fields([sample.name, sample.qty])
            .auth(open()),
    )
    .register_resource(
        Resource::<Ticket>::new()
            .name("tally")
            .filter_exclude([Ticket::FIELDS.body])
            .aggregates(true)
            .auth(open()),
    )
    .register_resource(
        // Includes a user resource without hooks: the registered user resource's scope
        // still hides Carol's nested object.
        Resource::<Message>::new()
            .name("msgplainuser")
            .include(message.user_id, plain_users())
            .auth(open()),
    )
    .register_resource(
        Resource::<Message>::new()
            .name("msgagg")
            .include(message.user_id, plover_conformance_app::user_resource(auth))
            .aggregates(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("scoped_tally")
            .hooks(HideHidden)
            .aggregates(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("nolist_tally")
            .hooks(NoList)
            .aggregates(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("postonly_tally")
            .allowed_methods([Method::POST])
            .aggregates(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("patchable")
            .allowed_methods(EVERY_METHOD)
            .auth(UserAuthentication::new(auth)),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("tracked")
            .history(true)
            .allowed_methods(EVERY_METHOD)
            .auth(UserAuthentication::new(auth)),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("tracked_open")
            .history(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("a_bulk")
            .hooks(HideHidden)
            .filtered_writes(true)
            .max_affected(3)
            .history(true)
            .allowed_methods(EVERY_METHOD)
            .auth(open()),
    )
    .register_resource(
        Resource::<AModel>::new()
            .name("a_bulk_norec")
            .delete_recursive(false)
            .filtered_writes(true)
            .allowed_methods(EVERY_METHOD)
            .auth(open()),
    )
    .register_resource(
        Resource::<HModel>::new()
            .name("h_bulk")
            .hooks(plover_conformance_app::HModelChecks)
            .filtered_writes(true)
            .allowed_methods(EVERY_METHOD)
            .auth(open()),
    )
    .register_resource(
        Resource::<Message>::new()
            .name("msg_bulk")
            .owner_field(message.user_id)
            .filtered_writes(true)
            .allowed_methods(EVERY_METHOD)
            .auth(UserAuthentication::new(auth)),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("upserted")
            .hooks(HideSecret)
            .upsert(true)
            .history(true)
            .auth(open()),
    )
    .register_resource(
        Resource::<Vault>::new()
            .name("vault_deposits")
            .history(true)
            .nested_children(
                "deposits",
                Deposit::FIELDS.vault_id,
                Resource::<Deposit>::new().hooks(DepositHooks),
            )
            .allowed_methods(EVERY_METHOD)
            .auth(open()),
    )
    .register_resource(
        plain_users()
            .name("user_followed")
            .hooks(plover::rest::HashPassword::new(auth))
            .nested_children(
                "followers",
                Relationship::FIELDS.to_user_id,
                Resource::<Relationship>::new().owner_field(Relationship::FIELDS.from_user_id),
            )
            .auth(UserAuthentication::new(auth)),
    )
    .register_resource(
        // A user created with their posts, which include a user resource without hooks: the
        // registered user resource's scope still hides an inactive author there.
        plain_users()
            .name("user_posts")
            .hooks(plover::rest::HashPassword::new(auth))
            .nested_children(
                "posts",
                message.user_id,
                Resource::<Message>::new().include(message.user_id, plain_users()),
            )
            .auth(open()),
    )
    .register_resource(
        Resource::<Sample>::new()
            .name("guarded")
            .require_if_match(true)
            .allowed_methods(EVERY_METHOD)
            .auth(open()),
    );
    api
}

/// The `/small` registrations: a 64-byte body limit, no `ETag`s, and a `default_auth` set
/// last.
fn small(db: Database) -> RestApi {
    let mut api = RestApi::new(db)
        .prefix("/small")
        .name("small")
        .etags(false)
        .max_body_bytes(SMALL_BODY_LIMIT);
    api.register_resource(Resource::<AModel>::new().auth(open()))
        .register_resource(Resource::<EModel>::new());
    // Set after the registrations: it still applies to `emodel`, which sets no authentication.
    api.default_auth(open())
}

/// The body limit of the `/small` API.
pub const SMALL_BODY_LIMIT: usize = 64;

/// A directory under the system's temporary directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new, empty, uniquely named directory.
    pub fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "plover-tests-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Default for TempDir {
    fn default() -> Self {
        TempDir::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A PostgreSQL database created for one test, dropped (with its connections) on drop.
#[derive(Debug)]
pub struct PgDatabase {
    admin_url: String,
    name: String,
}

impl PgDatabase {
    /// Creates a new, empty, uniquely named database through the admin URL.
    pub fn create(admin_url: &str) -> PgDatabase {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "plover_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let db = PgDatabase {
            admin_url: admin_url.to_owned(),
            name,
        };
        db.admin(&format!(
            "DROP DATABASE IF EXISTS \"{0}\" WITH (FORCE); CREATE DATABASE \"{0}\"",
            db.name
        ));
        db
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The URL of this database (the admin URL with another database name), with these
    /// options (a query string, possibly empty) added to the admin URL's own.
    pub fn url(&self, options: &str) -> String {
        with_database(&self.admin_url, &self.name, options)
    }

    /// Runs SQL statements over a separate admin connection.
    fn admin(&self, sql: &str) {
        use diesel::connection::SimpleConnection;
        use diesel::Connection;
        let mut conn = diesel::PgConnection::establish(&self.admin_url)
            .unwrap_or_else(|e| panic!("connect to {} ({e})", self.admin_url));
        // CREATE / DROP DATABASE cannot run in a transaction block: one statement at a time.
        for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
            conn.batch_execute(statement)
                .unwrap_or_else(|e| panic!("admin SQL failed ({e}): {statement}"));
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let statement = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        if std::thread::panicking() {
            // Do not turn a failing test into an abort: best effort.
            let _ = std::panic::catch_unwind(|| self.admin(&statement));
        } else {
            self.admin(&statement);
        }
    }
}

/// `url` (a PostgreSQL URL) naming the database `name`, with `options` added to its query.
fn with_database(url: &str, name: &str, options: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (scheme, rest) = base.split_once("://").expect("a postgres:// URL");
    let authority = rest
        .split_once('/')
        .map_or(rest, |(authority, _)| authority);
    let query: Vec<&str> = [query, options]
        .into_iter()
        .filter(|q| !q.is_empty())
        .collect();
    if query.is_empty() {
        format!("{scheme}://{authority}/{name}")
    } else {
        format!("{scheme}://{authority}/{name}?{}", query.join("&"))
    }
}

/// Where a test's database lives ([`fresh_database`]); removed on drop.
#[derive(Debug)]
pub enum Store {
    /// The directory of an SQLite file.
    Sqlite(TempDir),
    /// A PostgreSQL database.
    Pg(PgDatabase),
}

impl Store {
    /// The URL of the database of [`fresh_database`], without options: another process's way to
    /// it.
    pub fn url(&self) -> String {
        match self {
            Store::Sqlite(dir) => format!("sqlite://{}", dir.path().join("test.db").display()),
            Store::Pg(pg) => pg.url(""),
        }
    }
}

/// A new, empty database for one test, whose URL carries these driver options (a query string
/// such as `max_connections=1&connection_timeout=0.3`): a file in a temporary directory on
/// SQLite, or, on PostgreSQL ([`PG_URL_VAR`]), a new database. Keep the [`Store`] as long as
/// the database is used: dropping it removes the database.
pub fn fresh_database(options: &str) -> (Database, Store) {
    match pg_admin_url() {
        None => {
            let dir = TempDir::new();
            let url = format!(
                "sqlite://{}?{options}",
                dir.path().join("test.db").display()
            );
            (
                Database::from_url(&url).expect("a valid database URL"),
                Store::Sqlite(dir),
            )
        }
        Some(admin) => {
            let pg = PgDatabase::create(&admin);
            (
                Database::from_url(&pg.url(options)).expect("a valid database URL"),
                Store::Pg(pg),
            )
        }
    }
}

type Caller = Box<dyn Fn(TestRequest) -> Pin<Box<dyn Future<Output = ServiceResponse>>>>;

/// The result of a one-value query on `db` as text (`CAST(... AS TEXT)`), on either engine.
pub fn scalar(db: &Database, sql: &str) -> Option<String> {
    use diesel::dsl::sql as raw;
    use diesel::sql_types::{Nullable, Text};
    use diesel::RunQueryDsl;
    let select = format!("CAST(({sql}) AS TEXT)");
    db.run_blocking(|conn| match conn {
        Conn::Sqlite(c) => Ok(diesel::select(raw::<Nullable<Text>>(&select))
            .get_result::<Option<String>>(&mut **c)?),
        Conn::Pg(c) => Ok(diesel::select(raw::<Nullable<Text>>(&select))
            .get_result::<Option<String>>(&mut **c)?),
    })
    .unwrap_or_else(|e| panic!("query failed ({e}): {sql}"))
}

/// An application as an in-process service: sends requests and reads whole responses.
pub struct TestService(Caller);

impl std::fmt::Debug for TestService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestService").finish_non_exhaustive()
    }
}

impl TestService {
    /// Initializes `app` (an actix-web `App`) as a test service.
    pub async fn new<T, B>(app: App<T>) -> TestService
    where
        T: ServiceFactory<
                ServiceRequest,
                Config = (),
                Response = ServiceResponse<B>,
                Error = actix_web::Error,
                InitError = (),
            > + 'static,
        B: MessageBody + 'static,
    {
        let service = Rc::new(test::init_service(app).await);
        TestService(Box::new(move |req: TestRequest| {
            let service = service.clone();
            Box::pin(async move {
                test::call_service(&*service, req.to_request())
                    .await
                    .map_into_boxed_body()
            })
        }))
    }

    /// Serves one request.
    pub async fn send(&self, req: TestRequest) -> Resp {
        let resp = (self.0)(req).await;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = test::read_body(resp).await;
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Serves one request whose body is read as it comes (a stream of Server-Sent Events).
    pub async fn stream(&self, req: TestRequest) -> Streamed {
        let resp = (self.0)(req).await;
        Streamed {
            status: resp.status(),
            headers: resp.headers().clone(),
            body: resp.into_body(),
            text: String::new(),
        }
    }

    /// A new client without cookies.
    pub fn browser(&self) -> Browser<'_> {
        Browser {
            service: self,
            cookie: std::cell::RefCell::new(None),
            peer: None,
        }
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// Its `id:` line, if any.
    pub id: Option<i64>,
    /// Its `event:` line (`message` without one).
    pub event: String,
    /// Its `data:` line as JSON (`Null` without one).
    pub data: Value,
}

/// A response whose body is read as it comes.
pub struct Streamed {
    /// The status code.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    body: actix_web::body::BoxBody,
    /// What arrived and is not read as events yet.
    text: String,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl Streamed {
    /// The events that arrive until `n` of them did, or `wait` passed, or the stream ended
    /// (comment lines are left out).
    pub async fn events(&mut self, n: usize, wait: std::time::Duration) -> Vec<SseEvent> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut out = Vec::new();
        loop {
            while let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                if let Some(event) = parse_event(&block) {
                    out.push(event);
                }
            }
            if out.len() >= n {
                return out;
            }
            let next = std::future::poll_fn(|cx| Pin::new(&mut self.body).poll_next(cx));
            match tokio::time::timeout_at(deadline, next).await {
                Ok(Some(Ok(chunk))) => self.text.push_str(&String::from_utf8_lossy(&chunk)),
                _ => return out,
            }
        }
    }
}

/// The event of one block of an event stream; `None` for a comment.
fn parse_event(block: &str) -> Option<SseEvent> {
    let (mut id, mut event, mut data) = (None, None, None);
    for line in block.lines() {
        match line.split_once(": ") {
            Some(("id", v)) => id = v.parse().ok(),
            Some(("event", v)) => event = Some(v.to_owned()),
            Some(("data", v)) => data = serde_json::from_str(v).ok(),
            _ => {}
        }
    }
    if id.is_none() && event.is_none() && data.is_none() {
        return None;
    }
    Some(SseEvent {
        id,
        event: event.unwrap_or_else(|| "message".into()),
        data: data.unwrap_or(Value::Null),
    })
}

/// A response, read in full.
#[derive(Debug, Clone)]
pub struct Resp {
    /// The status code.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

impl Resp {
    /// The status as a number.
    pub fn code(&self) -> u16 {
        self.status.as_u16()
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).expect("a UTF-8 body")
    }

    /// The body as JSON; panics (showing the body) if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.text()))
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, showing the body when it differs; returns `self`.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Resp {
        assert_eq!(
            self.code(),
            status,
            "unexpected status; body: {}",
            String::from_utf8_lossy(&self.body)
        );
        self
    }

    /// Asserts a JSON response with this status and returns its body.
    #[track_caller]
    pub fn json_with(&self, status: u16) -> Value {
        self.expect(status);
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "JSON content type"
        );
        self.json()
    }

    /// The `objects` of a list response with status 200.
    #[track_caller]
    pub fn objects(&self) -> Vec<Value> {
        match self.json_with(200).get("objects") {
            Some(Value::Array(objects)) => objects.clone(),
            other => panic!("no objects in a list response: {other:?}"),
        }
    }

    /// The `id`s of the `objects` of a list response with status 200.
    #[track_caller]
    pub fn ids(&self) -> Vec<i64> {
        self.objects()
            .iter()
            .map(|o| o["id"].as_i64().expect("an integer id"))
            .collect()
    }
}

/// The test application over its own temporary database.
pub struct TestApp {
    service: TestService,
    /// The database the application serves.
    pub db: Database,
    /// The accounts component (bcrypt cost 4) that `UserAuthentication` checks against.
    pub auth: Auth<User>,
    /// What the recording hooks and authenticator of `/api/audited/` saw.
    pub log: CallLog,
    /// The registrations of each REST API, by prefix (`/api`, `/v2`, `/small`).
    pub registrations: Vec<(&'static str, Vec<plover::__private::Registration>)>,
    store: Store,
}

impl std::fmt::Debug for TestApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestApp").finish_non_exhaustive()
    }
}

impl TestApp {
    /// A fresh application over a new temporary database holding the schema and no rows.
    pub async fn new() -> TestApp {
        TestApp::with_seed("").await
    }

    /// A fresh application whose database also holds the rows of `seed` (SQL statements).
    pub async fn with_seed(seed: &str) -> TestApp {
        TestApp::with_options(seed, "").await
    }

    /// A fresh application with `seed`, whose database URL carries these driver options
    /// (a query string such as `max_connections=1&connection_timeout=0.3`).
    ///
    /// On SQLite, a new file in a temporary directory; on PostgreSQL ([`PG_URL_VAR`]), a new
    /// database, dropped with the application.
    pub async fn with_options(seed: &str, options: &str) -> TestApp {
        TestApp::build(seed, options, |auth| auth).await
    }

    /// A fresh application without rows whose accounts component is configured by `configure`
    /// (from `Auth::new(db).cost(4)`).
    pub async fn with_auth(configure: impl FnOnce(Auth<User>) -> Auth<User>) -> TestApp {
        TestApp::build("", "", configure).await
    }

    /// A fresh application without rows whose sessions last `lifetime`.
    pub async fn with_session_lifetime(lifetime: std::time::Duration) -> TestApp {
        TestApp::build("", "", |auth| auth.session_lifetime(lifetime)).await
    }

    async fn build(
        seed: &str,
        options: &str,
        configure: impl FnOnce(Auth<User>) -> Auth<User>,
    ) -> TestApp {
        let (db, store) = fresh_database(options);
        db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
            .expect("schema");
        let auth = configure(Auth::<User>::new(db.clone()).cost(4));
        let app = TestApp::serve(db, store, auth).await;
        app.sql(seed);
        app
    }

    /// The application over `db`, whose storage is `store`.
    async fn serve(db: Database, store: Store, auth: Auth<User>) -> TestApp {
        let log = CallLog::default();
        let api = api(db.clone(), &auth, &log);
        let v2 =
            plover_conformance_app::v2(db.clone(), &auth, plover::rest::DEFAULT_MAX_BODY_BYTES);
        let v3 =
            plover_conformance_app::v3(db.clone(), &auth, plover::rest::DEFAULT_MAX_BODY_BYTES);
        let small = small(db.clone());
        let registrations = vec![
            ("/api", plover::__private::registrations(&api)),
            ("/v2", plover::__private::registrations(&v2)),
            ("/small", plover::__private::registrations(&small)),
        ];
        let (api, v2, small) = (api.setup(), v2.setup(), small.setup());
        let service = TestService::new(
            App::new()
                .wrap(auth.session_middleware())
                .configure(auth.setup())
                .configure(api)
                .configure(v2)
                .configure(v3.setup())
                .configure(small)
                .configure(admin(&auth).setup())
                .configure(plover_conformance_app::pages)
                .configure(views_routes::routes(db.clone())),
        )
        .await;
        TestApp {
            service,
            db,
            auth,
            log,
            registrations,
            store,
        }
    }

    /// The same application over this one's database, with an accounts component of its own
    /// (`configure` from `Auth::new(db).cost(4)`), as another process serving the database has:
    /// nothing kept in this process is shared with it.
    pub async fn another_process(
        &self,
        configure: impl FnOnce(Auth<User>) -> Auth<User>,
    ) -> TestService {
        let auth = configure(Auth::<User>::new(self.db.clone()).cost(4));
        let api = api(self.db.clone(), &auth, &CallLog::default());
        let v3 = plover_conformance_app::v3(
            self.db.clone(),
            &auth,
            plover::rest::DEFAULT_MAX_BODY_BYTES,
        );
        TestService::new(
            App::new()
                .wrap(auth.session_middleware())
                .configure(auth.setup())
                .configure(api.setup())
                .configure(v3.setup()),
        )
        .await
    }

    /// The URL of this application's database, without options: another process's way to it.
    pub fn database_url(&self) -> String {
        self.store.url()
    }

    /// Whether this application runs on PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.store, Store::Pg(_))
    }

    /// An application whose database cannot be reached, with a short pool timeout: every
    /// request that needs the database is a 503. On SQLite, the database's directory does not
    /// exist; on PostgreSQL, the URL names a closed loopback port.
    pub async fn unreachable() -> TestApp {
        let dir = TempDir::new();
        let url = if on_postgres() {
            // A port that was free a moment ago: nothing listens there.
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            format!("postgres://postgres@127.0.0.1:{port}/nowhere?connection_timeout=0.3")
        } else {
            format!(
                "sqlite://{}?connection_timeout=0.3",
                dir.path().join("missing").join("test.db").display()
            )
        };
        let db = Database::from_url(&url).expect("a valid database URL");
        let auth = Auth::new(db.clone()).cost(4);
        TestApp::serve(db, Store::Sqlite(dir), auth).await
    }

    /// Runs SQL statements on the database (seeding). On PostgreSQL, the `SERIAL` sequences
    /// are then moved past the largest ids, as SQLite's keys are.
    pub fn sql(&self, sql: &str) {
        if sql.trim().is_empty() {
            // PostgreSQL refuses an empty query.
            return;
        }
        self.db
            .run_blocking(|conn| {
                conn.batch_execute(sql)?;
                match conn.engine() {
                    Engine::Sqlite => Ok(()),
                    Engine::Postgres => conn.batch_execute(RESET_SEQUENCES_PG),
                }
            })
            .unwrap_or_else(|e| panic!("SQL failed ({e}): {sql}"));
    }

    /// The result of a one-value query as text (`CAST(... AS TEXT)`), on either engine.
    fn scalar(&self, sql: &str) -> Option<String> {
        scalar(&self.db, sql)
    }

    /// The integer result of a query (`SELECT COUNT(*) ...`); a boolean reads as 1 or 0.
    pub fn query_i64(&self, sql: &str) -> i64 {
        match self.scalar(sql).as_deref() {
            Some("true") => 1,
            Some("false") => 0,
            Some(n) => n
                .parse()
                .unwrap_or_else(|e| panic!("not an integer ({e}): {n:?} from {sql}")),
            None => panic!("NULL from {sql}"),
        }
    }

    /// The text (or NULL) result of a query.
    pub fn query_text(&self, sql: &str) -> Option<String> {
        self.scalar(sql)
    }

    /// The number of rows of `table`.
    pub fn count(&self, table: &str) -> i64 {
        self.query_i64(&format!("SELECT COUNT(*) FROM \"{table}\""))
    }

    /// Creates an active, non-admin user with this password; returns its id.
    pub fn user(&self, username: &str, password: &str) -> i64 {
        self.user_with(username, password, true, false)
    }

    /// Creates a user; an empty password stores no usable password. Returns its id.
    pub fn user_with(&self, username: &str, password: &str, active: bool, admin: bool) -> i64 {
        let hash = self
            .auth
            .make_password(password)
            .expect("a hashable password");
        self.db
            .run_blocking(|conn| {
                User::insert(
                    conn,
                    UserChanges {
                        username: Some(username.to_owned()),
                        password: Some(hash),
                        email: Some(format!("{username}@example.com")),
                        join_date: Some(datetime("2020-01-01 00:00:00")),
                        active: Some(active),
                        admin: Some(admin),
                    },
                )
            })
            .expect("insert a user")
    }

    /// Serves one request.
    pub async fn send(&self, req: TestRequest) -> Resp {
        self.service.send(req).await
    }

    /// `GET uri`, its body read as it comes (a change feed).
    pub async fn stream(&self, uri: &str) -> Streamed {
        self.service.stream(TestRequest::get().uri(uri)).await
    }

    /// Serves one request, its body read as it comes.
    pub async fn service_stream(&self, req: TestRequest) -> Streamed {
        self.service.stream(req).await
    }

    /// `GET uri`.
    pub async fn get(&self, uri: &str) -> Resp {
        self.send(TestRequest::get().uri(uri)).await
    }

    /// `POST uri` with a JSON body.
    pub async fn post(&self, uri: &str, body: Value) -> Resp {
        self.send(json_request(Method::POST, uri, &body)).await
    }

    /// `PUT uri` with a JSON body.
    pub async fn put(&self, uri: &str, body: Value) -> Resp {
        self.send(json_request(Method::PUT, uri, &body)).await
    }

    /// `DELETE uri`.
    pub async fn delete(&self, uri: &str) -> Resp {
        self.send(TestRequest::delete().uri(uri)).await
    }
}

/// A client that keeps the session cookie between requests, as a browser does.
pub struct Browser<'a> {
    service: &'a TestService,
    cookie: std::cell::RefCell<Option<String>>,
    /// The address its requests come from (none: unknown, as for a Unix socket).
    peer: Option<std::net::SocketAddr>,
}

impl TestApp {
    /// A new client without cookies.
    pub fn browser(&self) -> Browser<'_> {
        self.service.browser()
    }
}

impl<'a> Browser<'a> {
    /// This client, its requests coming from `ip` (a loopback address such as `127.0.0.2`).
    pub fn from_address(mut self, ip: &str) -> Browser<'a> {
        self.peer = Some(std::net::SocketAddr::new(
            ip.parse().expect("an IP address"),
            40000,
        ));
        self
    }

    /// The session cookie's value, if the client holds one.
    pub fn cookie(&self) -> Option<String> {
        self.cookie.borrow().clone()
    }

    /// Replaces the session cookie (`None`: no cookie).
    pub fn set_cookie(&self, value: Option<String>) {
        *self.cookie.borrow_mut() = value;
    }

    /// Sends `req` with the session cookie and keeps the one the response sets.
    pub async fn send(&self, req: TestRequest) -> Resp {
        let req = match self.peer {
            Some(peer) => req.peer_addr(peer),
            None => req,
        };
        let req = match self.cookie() {
            Some(value) => req.insert_header((
                "cookie",
                format!("{}={value}", plover::accounts::SESSION_COOKIE),
            )),
            None => req,
        };
        let resp = self.service.send(req).await;
        for set in resp.headers.get_all("set-cookie") {
            let set = set.to_str().expect("an ASCII Set-Cookie");
            let Some((name, rest)) = set.split_once('=') else {
                continue;
            };
            if name.trim() != plover::accounts::SESSION_COOKIE {
                continue;
            }
            let value = rest.split(';').next().unwrap_or_default().trim().to_owned();
            // A removal sets an empty value. The `Max-Age` is not applied: this client keeps
            // sending what it got, as a stolen copy of a cookie would be sent.
            self.set_cookie((!value.is_empty()).then_some(value));
        }
        resp
    }

    /// `GET uri`.
    pub async fn get(&self, uri: &str) -> Resp {
        self.send(TestRequest::get().uri(uri)).await
    }

    /// `POST uri` with a form body.
    pub async fn post_form(&self, uri: &str, fields: &[(&str, &str)]) -> Resp {
        self.send(form_request(Method::POST, uri, fields)).await
    }

    /// The CSRF token in the page at `uri`.
    pub async fn csrf(&self, uri: &str) -> String {
        let page = self.get(uri).await;
        page.expect(200);
        input_value(&page.text(), "csrf_token").expect("a csrf_token input")
    }

    /// Logs in through the form (with its CSRF token); returns the POST's response.
    pub async fn login(&self, username: &str, password: &str) -> Resp {
        let token = self.csrf("/accounts/login/").await;
        self.post_form(
            "/accounts/login/",
            &[
                ("username", username),
                ("password", password),
                ("csrf_token", &token),
            ],
        )
        .await
    }

    /// The username on the homepage's `[user:...]` marker (`""`: anonymous).
    pub async fn whoami(&self) -> String {
        let text = self.get("/").await.expect(200).text();
        let start = text.find("[user:").expect("the [user:] marker") + "[user:".len();
        let end = start + text[start..].find(']').expect("the marker's end");
        text[start..end].to_owned()
    }
}

/// The `value` of the `<input>` named `name` in an HTML page, with its character references
/// decoded.
pub fn input_value(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let tag_start = html[..at].rfind('<')?;
    let tag_end = at + html[at..].find('>')?;
    let tag = &html[tag_start..tag_end];
    let value = tag.find("value=\"")? + "value=\"".len();
    Some(unescape_html(&tag[value..value + tag[value..].find('"')?]))
}

/// The `href` of the link with this `rel` in a page (`rel="next" href="..."`), unescaped.
pub fn link(html: &str, rel: &str) -> Option<String> {
    let start = html.find(&format!("rel=\"{rel}\" href=\""))? + rel.len() + 13;
    let end = start + html[start..].find('"')?;
    Some(unescape_html(&html[start..end]))
}

/// Decodes the character references of HTML text (`&amp;`, `&#34;`, `&#x27;`...).
pub fn unescape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.find(';') else { break };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A request with a JSON body.
pub fn json_request(method: Method, uri: &str, body: &Value) -> TestRequest {
    TestRequest::default()
        .method(method)
        .uri(uri)
        .insert_header((CONTENT_TYPE, "application/json"))
        .set_payload(serde_json::to_vec(body).expect("serializable JSON"))
}

/// A request with a raw body of the given content type.
pub fn raw_request(
    method: Method,
    uri: &str,
    content_type: &str,
    body: impl Into<Bytes>,
) -> TestRequest {
    TestRequest::default()
        .method(method)
        .uri(uri)
        .insert_header((CONTENT_TYPE, content_type.to_owned()))
        .set_payload(body.into())
}

/// A request with an urlencoded form body.
pub fn form_request(method: Method, uri: &str, fields: &[(&str, &str)]) -> TestRequest {
    raw_request(
        method,
        uri,
        "application/x-www-form-urlencoded",
        query(fields),
    )
}

/// The boundary of [`multipart_request`] bodies.
pub const BOUNDARY: &str = "plover-test-boundary-7MA4YWxkTrZu0gW";

/// A request with a `multipart/form-data` body of text fields.
pub fn multipart_request(method: Method, uri: &str, fields: &[(&str, &str)]) -> TestRequest {
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    raw_request(
        method,
        uri,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        body,
    )
}

/// A `multipart/form-data` POST as a browser sends a form with a file input: the text `fields`,
/// then the file `(input name, file name, content)` as `text/csv`.
pub fn upload_request(
    uri: &str,
    fields: &[(&str, &str)],
    file: (&str, &str, &[u8]),
) -> TestRequest {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    let (name, filename, content) = file;
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; \
             filename=\"{filename}\"\r\nContent-Type: text/csv\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    raw_request(
        Method::POST,
        uri,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        body,
    )
}

/// An urlencoded query string (or form body) of these pairs, in order.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// `path?` followed by the urlencoded pairs.
pub fn url(path: &str, pairs: &[(&str, &str)]) -> String {
    format!("{path}?{}", query(pairs))
}

/// The `Authorization` header of HTTP Basic credentials.
pub fn basic(username: &str, password: &str) -> (&'static str, String) {
    let encoded =
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    ("Authorization", format!("Basic {encoded}"))
}

/// The `Authorization` header of raw Basic credentials (`user:password` as given bytes).
pub fn basic_raw(raw: &[u8]) -> (&'static str, String) {
    (
        "Authorization",
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        ),
    )
}

/// A date-time from `YYYY-MM-DD HH:MM:SS`.
pub fn datetime(raw: &str) -> chrono::NaiveDateTime {
    chrono::NaiveDateTime::parse_from_str(raw, "%Y-%m-%d %H:%M:%S").expect("a date-time")
}

/// Asserts the exact 401 (docs/contract.md#authentication).
#[track_caller]
pub fn assert_401(resp: &Resp) {
    assert_eq!(
        resp.code(),
        401,
        "body: {}",
        String::from_utf8_lossy(&resp.body)
    );
    assert_eq!(
        resp.header("www-authenticate"),
        Some(r#"Basic realm="Login Required""#)
    );
    assert_eq!(
        resp.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(resp.text(), "Authentication failed");
}

/// Asserts a JSON error with this status and exactly the key `error`; returns its message.
#[track_caller]
pub fn assert_error(resp: &Resp, status: u16) -> String {
    let body = resp.json_with(status);
    let obj = body.as_object().expect("an error object");
    assert_eq!(obj.len(), 1, "only `error` expected: {body}");
    let message = obj["error"].as_str().expect("a string error").to_owned();
    assert!(!message.is_empty());
    message
}

/// Asserts the 400 of a refused query parameter: a JSON error naming the parameter.
#[track_caller]
pub fn assert_param_error(resp: &Resp, param: &str) {
    let message = assert_error(resp, 400);
    assert!(
        message.contains(&format!("'{param}'")),
        "the error should name '{param}': {message}"
    );
}

/// Asserts a 400 validation error whose `fields` has exactly these keys; returns `fields`.
#[track_caller]
pub fn assert_fields(resp: &Resp, keys: &[&str]) -> Map<String, Value> {
    let body = resp.json_with(400);
    let obj = body.as_object().expect("an error object");
    assert!(
        obj["error"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(obj.len(), 2, "`error` and `fields` expected: {body}");
    let fields = obj["fields"].as_object().expect("a fields object").clone();
    let mut got: Vec<&str> = fields.keys().map(String::as_str).collect();
    got.sort_unstable();
    let mut want = keys.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "fields: {body}");
    assert!(fields
        .values()
        .all(|v| v.as_str().is_some_and(|m| !m.is_empty())));
    fields
}

/// Two A <- B <- C <- D chains: ids 1 (`a1`, `b1`, `c1`, `d1`) and 2 (`a2`, ...).
pub const CHAINS: &str = r#"
INSERT INTO amodel (id, a_field) VALUES (1, 'a1'), (2, 'a2');
INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, 'b1'), (2, 2, 'b2');
INSERT INTO cmodel (id, b_id, c_field) VALUES (1, 1, 'c1'), (2, 2, 'c2');
INSERT INTO dmodel (id, c_id, d_field) VALUES (1, 1, 'd1'), (2, 2, 'd2');
"#;
