//! The user-model trait and `Auth`, which finds and checks users.

use std::fmt;
use std::marker::PhantomData;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::cache::CredentialCache;
use super::flight::Flights;
use super::gate::{Gate, Refused};
use super::password::{check_password, make_password, PasswordError, DEFAULT_COST};
use super::settings::Settings;
use super::throttle::{LoginLimits, Refusal, Store, Throttle};
use crate::db::{Conn, Database, LazyConn};
use crate::error::Error;
use crate::model::RestModel;
use crate::query::{Filter, Op, Param, Select};
use crate::server::ClientKey;
use crate::sql::{self, stamp, Arg};
use crate::value::kind::FieldKind;

/// A model that is a user of the accounts component (flask-peewee's `BaseUser`).
///
/// ```
/// # use plover::prelude::*;
/// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text,
/// #     active -> Bool, admin -> Bool } }
/// #[derive(RestModel)]
/// #[diesel(table_name = user)]
/// #[rest(exclude = "password")]
/// pub struct User {
///     pub id: i32,
///     pub username: String,
///     pub password: String,
///     pub active: bool,
///     pub admin: bool,
/// }
///
/// impl UserModel for User {
///     fn username(&self) -> &str { &self.username }
///     fn password_hash(&self) -> &str { &self.password }
///     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
///     fn is_active(&self) -> bool { self.active }
///     fn is_admin(&self) -> bool { self.admin }
/// }
/// ```
pub trait UserModel: RestModel {
    /// The field that holds the username (unique).
    const USERNAME_FIELD: &'static str = "username";
    /// The field that holds the password hash. It must be write-only at the model level
    /// (`#[rest(write_only)]`): [`Auth::new`] refuses a user model whose hash some resource,
    /// filter or admin page could show.
    const PASSWORD_FIELD: &'static str = "password";
    /// The boolean field that says whether the user may log in, if the model has one:
    /// [`Auth::create_user`] sets it.
    const ACTIVE_FIELD: Option<&'static str> = None;
    /// The boolean field of the admin permission, if the model has one: [`Auth::create_user`]
    /// sets it.
    const ADMIN_FIELD: Option<&'static str> = None;
    /// The field of the user's e-mail address, where password reset and sign-up mail go
    /// (default `email`; `None`: the model has none, and those flows cannot be enabled).
    const EMAIL_FIELD: Option<&'static str> = Some("email");
    /// The date-time field of the user's last session login, if the model has one: the login
    /// view sets it, and a password reset link dies once the user logs in after it was sent.
    const LAST_LOGIN_FIELD: Option<&'static str> = None;

    /// The username.
    fn username(&self) -> &str;
    /// The stored password hash (`""` = no usable password).
    fn password_hash(&self) -> &str;
    /// The stored password hash, to replace it.
    fn password_hash_mut(&mut self) -> &mut String;
    /// Whether the user may log in (default: always).
    fn is_active(&self) -> bool {
        true
    }
    /// Whether the user has the admin permission (default: never).
    fn is_admin(&self) -> bool {
        false
    }

    /// Stores a new bcrypt hash of `raw` (at the default cost).
    fn set_password(&mut self, raw: &str) -> Result<(), PasswordError> {
        *self.password_hash_mut() = make_password(raw, DEFAULT_COST)?;
        Ok(())
    }

    /// Whether `raw` is this user's password.
    fn check_password(&self, raw: &str) -> bool {
        check_password(raw, self.password_hash())
    }
}

/// The accounts component: finds users and checks their credentials for
/// the REST layer (`UserAuthentication`), and serves session login and logout.
///
/// Built once at start, then cloned freely (clones share one state). Sessions, login and
/// logout need the `accounts` feature:
///
#[cfg_attr(feature = "accounts", doc = "```")]
#[cfg_attr(not(feature = "accounts"), doc = "```ignore")]
/// # use plover::prelude::*;
/// # use std::time::Duration;
/// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text } }
/// # #[derive(Clone, RestModel)]
/// # #[diesel(table_name = user)]
/// # pub struct User { pub id: i32, pub username: String, #[rest(write_only)] pub password: String }
/// # impl UserModel for User {
/// #     fn username(&self) -> &str { &self.username }
/// #     fn password_hash(&self) -> &str { &self.password }
/// #     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
/// # }
/// let db = Database::from_url("sqlite://app.db").expect("a valid URL");
/// let auth = Auth::<User>::new(db)
///     .prefix("/accounts")                                  // the default
///     .default_next_url("/")                                // the default
///     .secret_key(b"at least 32 bytes of random secret material")
///     .session_lifetime(Duration::from_secs(14 * 24 * 3600)); // the default
/// let app = actix_web::App::new()
///     .wrap(auth.session_middleware())
///     .configure(auth.setup());
/// ```
#[derive(Debug)]
pub struct Auth<U: UserModel> {
    inner: Arc<AuthInner>,
    _user: PhantomData<fn() -> U>,
}

#[derive(Debug)]
struct AuthInner {
    settings: Settings,
    cache: CredentialCache,
    /// A hash at `cost`, checked against for unknown usernames.
    dummy: OnceLock<String>,
    /// The bound on password checks that run at once.
    gate: Gate,
    /// The checks running now, which requests with the same credentials wait for.
    flights: Flights,
    /// The counts of failed logins.
    throttle: Throttle,
    /// The counts of the account flows that send mail.
    #[cfg(feature = "accounts")]
    flows: super::flow_limits::Limits,
}

/// One login attempt: the client's address and the credentials it sent. Its `Debug` output
/// leaves the password out.
///
/// ```
/// use plover::accounts::Credentials;
///
/// let creds = Credentials::new("127.0.0.2".parse().ok(), "alice", "secret");
/// assert!(!format!("{creds:?}").contains("secret"));
/// ```
#[derive(Clone, Copy)]
pub struct Credentials<'a> {
    /// The address the attempt came from (`None` when unknown): failed attempts are counted
    /// per address, and each address has a fair share of the password checks.
    pub client: Option<IpAddr>,
    /// The username as sent.
    pub username: &'a str,
    /// The password as sent.
    pub password: &'a str,
}

impl<'a> Credentials<'a> {
    /// An attempt from `client` with these credentials.
    pub fn new(client: Option<IpAddr>, username: &'a str, password: &'a str) -> Credentials<'a> {
        Credentials {
            client,
            username,
            password,
        }
    }
}

impl fmt::Debug for Credentials<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("client", &self.client)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl<U: UserModel> Clone for Auth<U> {
    fn clone(&self) -> Self {
        Auth {
            inner: self.inner.clone(),
            _user: PhantomData,
        }
    }
}

impl<U: UserModel> Auth<U> {
    /// An accounts component for the user model `U`, whose users live in `db`. Sessions are
    /// keyed by a random key until [`Auth::secret_key`] sets one.
    ///
    /// # Panics
    /// If the model's [`UserModel::PASSWORD_FIELD`] is not a write-only field
    /// (`#[rest(write_only)]`): a hash that a client could read or search is a programming
    /// error, reported at start.
    pub fn new(db: Database) -> Auth<U> {
        let meta = U::meta();
        let write_only = meta
            .field(U::PASSWORD_FIELD)
            .is_some_and(|(_, field)| field.excluded);
        assert!(
            write_only,
            "plover: the password field `{}` of user model `{}` must be write-only: mark it \
             #[rest(write_only)]",
            U::PASSWORD_FIELD,
            meta.name
        );
        if let Some((field, _)) = meta.field(U::USERNAME_FIELD) {
            crate::model::usernames::register(meta, field);
        }
        // Deleting a user deletes its groups and permissions.
        crate::meta::note_user_model(meta);
        Auth::from_settings(Settings::new(db))
    }

    fn from_settings(settings: Settings) -> Auth<U> {
        Auth {
            inner: Arc::new(AuthInner {
                gate: Gate::new(
                    settings.password_checks,
                    settings.check_share,
                    settings.limits.window,
                ),
                flights: Flights::default(),
                throttle: Throttle::new(
                    settings.limits,
                    &format!("login:{}", U::meta().table),
                    settings.login_store,
                ),
                #[cfg(feature = "accounts")]
                flows: super::flow_limits::Limits::new(
                    settings.limits,
                    U::meta().table,
                    settings.login_store,
                ),
                settings,
                cache: CredentialCache::default(),
                dummy: OnceLock::new(),
            }),
            _user: PhantomData,
        }
    }

    /// This `Auth` with its settings changed (a new one: the cache and the gate are per setting).
    pub(crate) fn with(self, change: impl FnOnce(&mut Settings)) -> Auth<U> {
        let mut settings = self.inner.settings.clone();
        change(&mut settings);
        Auth::from_settings(settings)
    }

    /// Sets the bcrypt cost of [`Auth::make_password`] (4 to 31; default 12; tests use 4).
    pub fn cost(self, cost: u32) -> Auth<U> {
        self.with(|s| s.cost = cost)
    }

    /// How many password checks may run at once (default: half the machine's cores, at least
    /// one). Up to 16 more per place wait, first come first served, each at most 10 s; beyond
    /// that a check is refused with [`Error::Busy`] (503), so that a flood of wrong passwords
    /// slows only the requests that carry them.
    pub fn password_checks(self, at_once: usize) -> Auth<U> {
        self.with(|s| s.password_checks = at_once)
    }

    /// The share of the password-check places (running and waiting) one client address may
    /// hold, from 0 to 1 (default 0.125, an eighth; at least one place). A check beyond its
    /// address's share is refused at once with [`Error::TooManyRequests`] (429), so that one
    /// address's flood never fills the line in front of another address's login.
    pub fn password_check_share(self, share: f64) -> Auth<U> {
        self.with(|s| s.check_share = share)
    }

    /// How failed logins are throttled (see [`LoginLimits`]; default: the 6th failure of one
    /// username from one address within 15 minutes, and the 51st from one address, are
    /// refused with 429 and `Retry-After`, with growing delays).
    pub fn login_limits(self, limits: LoginLimits) -> Auth<U> {
        self.with(|s| s.limits = limits)
    }

    /// Where the counts of failed logins live: `true`, in the database's table
    /// `plover_login_failure` (made at first use), which every process serving the database
    /// shares, so that two processes do not allow twice the attempts; `false`, in this process.
    /// The default is the database on PostgreSQL (where several processes usually serve one
    /// database) and the process on SQLite; set `true` when several processes share one SQLite
    /// file. In the database, each password check reads the counts (one statement) and each
    /// failure writes them; when the database fails, the process counts instead.
    pub fn login_counts_in_database(self, shared: bool) -> Auth<U> {
        let store = if shared {
            Store::Database
        } else {
            Store::Memory
        };
        self.with(|s| s.login_store = store)
    }

    /// The settings.
    #[cfg(feature = "accounts")]
    pub(crate) fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The counts of the account flows that send mail.
    #[cfg(feature = "accounts")]
    pub(crate) fn flow_limits(&self) -> &super::flow_limits::Limits {
        &self.inner.flows
    }

    /// The database of the users.
    pub fn db(&self) -> &Database {
        &self.inner.settings.db
    }

    /// Hashes a password at this component's cost.
    pub fn make_password(&self, raw: &str) -> Result<String, PasswordError> {
        make_password(raw, self.inner.settings.cost)
    }

    /// Creates a user named `username` with `password` (hashed here), active, and an
    /// administrator if `admin` (the `createsuperuser` command). The row is written as every
    /// writer writes it ([`model::save`](crate::model::save): constraints, the username rules,
    /// the model's rules), in one transaction; the model's other fields take their defaults.
    ///
    /// # Errors
    /// [`Error::Validation`] naming each field that was refused, or that the model requires
    /// without a default; the database's error.
    pub fn create_user(
        &self,
        conn: &mut Conn<'_>,
        username: &str,
        password: &str,
        admin: bool,
    ) -> Result<U, Error> {
        self.create_user_with(conn, username, password, admin, &[])
    }

    /// [`create_user`](Auth::create_user) with values for the model's other fields, by field
    /// name, as a REST body gives them (`("email", json!("root@example.com"))`): what the
    /// `createsuperuser` command asks for when the user model requires more than a username
    /// and a password.
    ///
    /// # Errors
    /// As [`create_user`](Auth::create_user); a name that is no field of the model is an
    /// [`Error::Validation`] naming it.
    pub fn create_user_with(
        &self,
        conn: &mut Conn<'_>,
        username: &str,
        password: &str,
        admin: bool,
        fields: &[(&str, serde_json::Value)],
    ) -> Result<U, Error> {
        let hash = self
            .make_password(password)
            .map_err(|e| Error::field(U::PASSWORD_FIELD, e.to_string()))?;
        let new = NewUser {
            username,
            hash,
            admin,
            active: true,
        };
        self.insert_user(conn, new, fields)
    }

    /// Inserts `new` with the values `fields` of the model's other fields: what
    /// [`Auth::create_user_with`] does once the password is hashed.
    pub(crate) fn insert_user(
        &self,
        conn: &mut Conn<'_>,
        new: NewUser<'_>,
        fields: &[(&str, serde_json::Value)],
    ) -> Result<U, Error> {
        let mut errors = std::collections::BTreeMap::new();
        let mut changes = U::Changes::default();
        let meta = U::meta();
        for (name, value) in fields {
            let set = match meta.field(name) {
                Some((i, _)) => U::set_json(&mut changes, i, value),
                None => Err("the user model has no such field".to_owned()),
            };
            if let Err(message) = set {
                errors.insert((*name).to_owned(), message);
            }
        }
        let given = [
            (
                Some(U::USERNAME_FIELD),
                serde_json::Value::from(new.username),
            ),
            (Some(U::PASSWORD_FIELD), serde_json::Value::from(new.hash)),
            (U::ACTIVE_FIELD, serde_json::Value::from(new.active)),
            (U::ADMIN_FIELD, serde_json::Value::from(new.admin)),
        ];
        for (name, value) in given {
            let Some(name) = name else { continue };
            let Some((i, _)) = meta.field(name) else {
                return Err(Error::Internal(format!("user model has no field '{name}'")));
            };
            if let Err(message) = U::set_json(&mut changes, i, &value) {
                errors.insert(name.to_owned(), message);
            }
        }
        U::fill_defaults(&mut changes);
        for (i, field) in meta.fields.iter().enumerate() {
            if field.required && !U::is_set(&changes, i) {
                errors.insert(field.name.to_owned(), "this field is required".to_owned());
            }
        }
        if !errors.is_empty() {
            return Err(Error::Validation {
                message: "Validation failed".into(),
                fields: errors,
            });
        }
        conn.transaction(|conn| crate::model::save::<U>(conn, changes, None))
    }

    /// Sets the password of `user` to `raw`, hashed at the component's cost, in one statement.
    /// The user's sessions end: a session holds a digest of the password hash it logged in
    /// with. Call it inside the transaction of the rest of the change, if any.
    ///
    /// # Errors
    /// [`Error::Validation`] on the password field for a password that cannot be hashed (over
    /// 72 bytes); the database's error.
    pub fn set_password(&self, conn: &mut Conn<'_>, user: &U, raw: &str) -> Result<(), Error> {
        let hash = self
            .make_password(raw)
            .map_err(|e| Error::field(U::PASSWORD_FIELD, e.to_string()))?;
        self.store_password_hash(conn, user, hash)
    }

    /// Stores `hash` (made by [`Auth::make_password`]) as `user`'s password hash, in one
    /// statement: [`Auth::set_password`] without the hashing, for callers that hash before
    /// they take a connection.
    pub(crate) fn store_password_hash(
        &self,
        conn: &mut Conn<'_>,
        user: &U,
        hash: String,
    ) -> Result<(), Error> {
        let meta = U::meta();
        let (field, _) = meta.field(U::PASSWORD_FIELD).ok_or_else(|| {
            Error::Internal(format!("user model has no field '{}'", U::PASSWORD_FIELD))
        })?;
        sql::update(conn, meta, user.pk(), &[(field, Arg::Text(hash.into()))])?;
        Ok(())
    }

    /// The user with primary key `id`, active or not.
    pub fn find_user_by_id(&self, conn: &mut Conn<'_>, id: i64) -> Result<Option<U>, Error> {
        U::load_pk(conn, id)
    }

    /// [`Auth::find_user_by_id`] for a request's credentials, reading the permissions stamp
    /// as [`Auth::find_user_stamped`] does.
    pub(crate) fn find_user_by_id_stamped(
        &self,
        db: &mut LazyConn<'_>,
        id: i64,
    ) -> Result<Option<U>, Error> {
        if !stamp::present(db)? {
            return self.find_user_by_id(&mut db.conn()?, id);
        }
        let found = sql::by_pk_stamped::<U>(&mut db.conn()?, U::meta(), id)?;
        db.set_permissions_stamp(found.as_ref().map(|(_, stamp)| *stamp));
        Ok(found.map(|(user, _)| user))
    }

    /// The user named `username` (NFKC-normalised and without surrounding whitespace, as names
    /// are stored: [`normalize_username`](super::normalize_username)), active or not.
    pub fn find_user(&self, conn: &mut Conn<'_>, username: &str) -> Result<Option<U>, Error> {
        let Some(username) = stored_name(username) else {
            return Ok(None);
        };
        let meta = U::meta();
        let (field, spec) = meta.field(U::USERNAME_FIELD).ok_or_else(|| {
            Error::Internal(format!("user model has no field '{}'", U::USERNAME_FIELD))
        })?;
        if spec.unique && spec.kind == FieldKind::Text {
            return U::load_unique(conn, field, &username);
        }
        let select = Select {
            filters: vec![Filter {
                path: vec![field],
                op: Op::Eq,
                values: vec![Param::Text(username.into_owned())],
            }],
            limit: Some(1),
            ..Select::default()
        };
        Ok(U::load(conn, &select)?.into_iter().next())
    }

    /// [`Auth::find_user`] for a request's credentials: where the database has the
    /// permissions stamp (docs/permissions.md), it is read in the same statement and kept on
    /// `db`, so that the user's permissions need no statement while they are current.
    pub(crate) fn find_user_stamped(
        &self,
        db: &mut LazyConn<'_>,
        username: &str,
    ) -> Result<Option<U>, Error> {
        let meta = U::meta();
        let unique = meta
            .field(U::USERNAME_FIELD)
            .filter(|(_, spec)| spec.unique && spec.kind == FieldKind::Text);
        match (unique, stored_name(username)) {
            (Some((field, _)), Some(name)) if stamp::present(db)? => {
                let key = Arg::Text(name);
                let found = sql::by_field_stamped::<U>(&mut db.conn()?, meta, field, &key)?;
                db.set_permissions_stamp(found.as_ref().map(|(_, stamp)| *stamp));
                Ok(found.map(|(user, _)| user))
            }
            _ => self.find_user(&mut db.conn()?, username),
        }
    }

    /// The active user with these credentials, or `None`. The connection stays checked out
    /// during the password check;
    /// where the pool matters, look the user up with [`Auth::find_user`], give the connection
    /// back, then call [`Auth::verify`].
    ///
    /// # Errors
    /// As [`Auth::verify`].
    pub fn authenticate(
        &self,
        conn: &mut Conn<'_>,
        creds: Credentials<'_>,
    ) -> Result<Option<U>, Error> {
        self.verify(creds, self.find_user(conn, creds.username)?)
    }

    /// `user` (found by `creds.username`) if `creds.password` is its password and it is
    /// active: the bcrypt check (spared by a short-lived cache of verified credentials). For
    /// `None`, the time a real check would take is spent all the same, so that timing does not
    /// reveal which names exist. A wrong password counts against the client's address and the
    /// username from it ([`Auth::login_limits`]); where those counts live in the database
    /// ([`Auth::login_counts_in_database`]), they are read and written with a connection of
    /// their own, never held during the check.
    ///
    /// # Errors
    /// [`Error::TooManyRequests`] (429) when the address, or the username from it, is
    /// throttled, or the address holds its share of the password checks
    /// ([`Auth::password_check_share`]); [`Error::Busy`] (503) when more checks wait than
    /// [`Auth::password_checks`] allows.
    pub fn verify(&self, creds: Credentials<'_>, user: Option<U>) -> Result<Option<U>, Error> {
        let db = self.db().clone();
        let mut unit = LazyConn::new(&db);
        let verified = self.verify_releasing(creds, user, &mut unit);
        drop(unit);
        verified
    }

    /// [`Auth::verify`] with the unit of work `db` (of this component's database): its
    /// connection goes back to the pool ([`LazyConn::release`]) before a full password check,
    /// so that a flood of wrong passwords never holds the pool (docs/security.md). Credentials
    /// the cache recognizes keep the connection: the unit goes on with it.
    ///
    /// # Errors
    /// As [`Auth::verify`].
    pub fn verify_releasing(
        &self,
        creds: Credentials<'_>,
        user: Option<U>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<U>, Error> {
        let client = ClientKey::of(creds.client);
        let (throttle, gate) = (&self.inner.throttle, &self.inner.gate);
        // Before anything else, the cache included: a throttled client must not learn from a
        // cache hit that a guess was right.
        let counted = match throttle.check(db, client, creds.username) {
            Ok(counted) => counted,
            Err(wait) => {
                throttle.refused(client, Refusal::Throttled);
                return Err(Error::TooManyRequests(wait));
            }
        };
        let refused = |why: Refused| {
            throttle.refused(client, Refusal::Busy);
            match why {
                Refused::OverShare => Error::TooManyRequests(Duration::from_secs(1)),
                Refused::Full => Error::Busy,
            }
        };
        let password = creds.password;
        let Some(user) = user else {
            db.release();
            let dummy = self.inner.dummy.get_or_init(|| {
                make_password("plover-dummy", self.inner.settings.cost).unwrap_or_default()
            });
            gate.run(client, None, || check_password(password, dummy))
                .map_err(refused)?;
            throttle.failed(db, client, creds.username);
            throttle.refused(client, Refusal::Wrong);
            return Ok(None);
        };
        let cache = &self.inner.cache;
        let (name, hash) = (user.username(), user.password_hash());
        let (mut busy, mut checked) = (None, false);
        let verified = cache.check(name, hash, password, || {
            db.release();
            checked = true;
            // Requests with the same credentials that miss the cache together wait for the
            // first one's check, without a place of their own in the gate.
            let key = cache.digest(name, hash, password);
            self.inner
                .flights
                .once(key, || {
                    gate.run(client, Some(name), || {
                        cache.hit(name, hash, password) || user.check_password(password)
                    })
                })
                .unwrap_or_else(|why| {
                    busy = Some(why);
                    false
                })
        });
        if let Some(why) = busy {
            return Err(refused(why));
        }
        if checked {
            if verified {
                gate.succeeded(name);
            } else {
                gate.failed(name);
            }
        }
        if !verified {
            throttle.failed(db, client, creds.username);
            throttle.refused(client, Refusal::Wrong);
            return Ok(None);
        }
        if counted {
            throttle.succeeded(db, client, creds.username);
        }
        Ok(user.is_active().then_some(user))
    }
}

/// A user about to be inserted by [`Auth::insert_user`].
#[derive(Debug)]
pub(crate) struct NewUser<'a> {
    pub(crate) username: &'a str,
    /// The password's hash ([`Auth::make_password`]).
    pub(crate) hash: String,
    pub(crate) admin: bool,
    pub(crate) active: bool,
}

/// `username` as names are stored (NFKC-normalised, without surrounding whitespace; most
/// names are ASCII and need no copy), or `None` for a name no stored one can equal (one
/// holding U+0000).
fn stored_name(username: &str) -> Option<std::borrow::Cow<'_, str>> {
    if crate::value::check_text(username).is_err() {
        return None;
    }
    Some(if username.is_ascii() {
        username.trim().into()
    } else {
        crate::model::usernames::normalize_username(username).into()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::thread;
    use std::time::Duration;

    use plover_derive::RestModel;

    use super::*;

    diesel::table! { tuser (id) { id -> Integer, username -> Text, password -> Text } }

    /// A user whose password check counts its calls and, while `HOLD` is set, waits.
    #[derive(Clone, RestModel)]
    #[diesel(table_name = tuser)]
    struct TUser {
        id: i32,
        username: String,
        #[rest(write_only)]
        password: String,
    }

    static CHECKS: AtomicUsize = AtomicUsize::new(0);
    static HOLD: AtomicBool = AtomicBool::new(true);

    impl UserModel for TUser {
        fn username(&self) -> &str {
            &self.username
        }
        fn password_hash(&self) -> &str {
            &self.password
        }
        fn password_hash_mut(&mut self) -> &mut String {
            &mut self.password
        }
        fn check_password(&self, raw: &str) -> bool {
            CHECKS.fetch_add(1, Ordering::SeqCst);
            while HOLD.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
            raw == "right"
        }
    }

    fn wait_for(what: impl Fn() -> bool) {
        while !what() {
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Two requests with the same credentials miss the cache together: the second waits for
    /// the first's check and takes its answer, without a check (or a place in the gate) of its
    /// own.
    #[test]
    fn a_check_that_waited_is_answered_by_the_one_before_it() {
        let db = Database::from_url("sqlite://:memory:").unwrap();
        let auth = Auth::<TUser>::new(db).password_checks(1);
        let user = TUser {
            id: 1,
            username: "u".into(),
            password: "stored hash".into(),
        };
        let verify = |auth: Auth<TUser>, user: TUser| {
            thread::spawn(move || {
                let creds = Credentials::new(None, "u", "right");
                auth.verify(creds, Some(user)).unwrap().is_some()
            })
        };
        let first = verify(auth.clone(), user.clone());
        wait_for(|| CHECKS.load(Ordering::SeqCst) == 1);
        let second = verify(auth.clone(), user);
        wait_for(|| auth.inner.flights.waiting() == 1);
        HOLD.store(false, Ordering::SeqCst);
        assert!(first.join().unwrap());
        assert!(second.join().unwrap());
        assert_eq!(
            CHECKS.load(Ordering::SeqCst),
            1,
            "the second request ran no check"
        );
    }
}
