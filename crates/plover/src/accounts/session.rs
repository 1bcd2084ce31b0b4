//! Cookie sessions: who is logged in, the CSRF token, and the `LoggedInUser` extractor.
//!
//! The session is a small map in an encrypted, authenticated cookie (actix-session's private
//! cookie mode). It holds the user's primary key, the time the login ends, the CSRF token, and
//! a digest of the user's password hash at login: when the hash changes (a new password, from
//! any writer), every session that holds the old digest ends at its next request, with no
//! server-side store (as Django's `SESSION_HASH` does).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_session::config::{CookieContentSecurity, PersistentSession};
use actix_session::storage::CookieSessionStore;
use actix_session::{Session, SessionExt, SessionMiddleware};
use actix_web::cookie::{Key, SameSite};
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError};
use base64::Engine;
use rand::Rng;
use subtle::ConstantTimeEq;

use super::user::{Auth, UserModel};
use crate::error::Error;

/// Session key of the logged-in user's primary key.
const USER_ID: &str = "plover.uid";
/// Session key of the end of the login, in seconds since the Unix epoch.
const EXPIRES: &str = "plover.exp";
/// Session key of the CSRF token.
const CSRF: &str = "plover.csrf";
/// Session key of the digest of the user's password hash.
const PASSWORD_DIGEST: &str = "plover.pwd";

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "plover_session";

impl<U: UserModel> Auth<U> {
    /// Where the login and logout views are mounted (default `/accounts`).
    pub fn prefix(self, prefix: &str) -> Auth<U> {
        let prefix = prefix.trim_end_matches('/').to_owned();
        self.with(|s| s.session.prefix = prefix)
    }

    /// Where a login or logout without a usable `next` goes (default `/`, the homepage).
    pub fn default_next_url(self, url: &str) -> Auth<U> {
        let url = url.to_owned();
        self.with(|s| s.session.default_next_url = url)
    }

    /// The key that signs and encrypts session cookies, derived from `secret` (at least 32
    /// bytes of random material, from configuration). Every process that serves the same users
    /// needs the same secret. Without it, a random key per start: sessions end on restart.
    ///
    /// # Panics
    /// If `secret` is shorter than 32 bytes (a configuration mistake, found at start).
    pub fn secret_key(self, secret: &[u8]) -> Auth<U> {
        assert!(
            secret.len() >= 32,
            "Auth::secret_key needs at least 32 bytes of random material"
        );
        let key = Key::derive_from(secret);
        self.with(|s| s.session.key = key)
    }

    /// How long a login lasts (default 14 days): the cookie's `Max-Age`, and a limit checked on
    /// the server against the login time kept inside the encrypted session.
    pub fn session_lifetime(self, lifetime: Duration) -> Auth<U> {
        self.with(|s| s.session.lifetime = lifetime)
    }

    /// Whether the session cookie carries `Secure` (default false; set it when the site is
    /// served over HTTPS only).
    pub fn secure_cookie(self, secure: bool) -> Auth<U> {
        self.with(|s| s.session.secure = secure)
    }

    /// The login view's path, `{prefix}/login/`.
    pub fn login_url(&self) -> String {
        format!("{}/login/", self.settings().session.prefix)
    }

    /// The logout view's path, `{prefix}/logout/`.
    pub fn logout_url(&self) -> String {
        format!("{}/logout/", self.settings().session.prefix)
    }

    /// The session middleware: an encrypted and signed cookie (`plover_session`, HttpOnly,
    /// SameSite=Lax, `Max-Age` = the session lifetime). Wrap the whole application with it, so
    /// that every view sees the session.
    ///
    /// A server-side store (actix-session's Redis store, for instance) can be used instead:
    /// build the `SessionMiddleware` yourself with the same cookie settings; the views only use
    /// the `Session`.
    pub fn session_middleware(&self) -> SessionMiddleware<CookieSessionStore> {
        let s = &self.settings().session;
        let ttl = actix_web::cookie::time::Duration::seconds(
            i64::try_from(s.lifetime.as_secs()).unwrap_or(i64::MAX),
        );
        SessionMiddleware::builder(CookieSessionStore::default(), s.key.clone())
            .cookie_name(SESSION_COOKIE.into())
            .cookie_content_security(CookieContentSecurity::Private)
            .cookie_http_only(true)
            .cookie_same_site(SameSite::Lax)
            .cookie_secure(s.secure)
            .session_lifecycle(PersistentSession::default().session_ttl(ttl))
            .build()
    }

    /// Logs `user` in on this request's session (flask-peewee's `auth.login_user`), e.g. right
    /// after a sign-up. As with the login view, the session is renewed and gets a new CSRF
    /// token; the user is the request's user from the next request on.
    pub fn login_user(&self, req: &HttpRequest, user: &U) -> Result<(), Error> {
        start_login(self, &req.get_session(), user)
    }

    /// Keeps this request's session logged in after `user`'s password changed on it (Django's
    /// `update_session_auth_hash`): a password change ends the user's other sessions, and a
    /// view that changes the logged-in user's own password calls this with the saved user so
    /// that its own session goes on. The admin does it when people change their own password.
    pub fn update_session_password(&self, req: &HttpRequest, user: &U) -> Result<(), Error> {
        keep_password(self, &req.get_session(), user.pk(), user.password_hash())
    }

    /// The digest of a password hash kept in sessions: HMAC-SHA256 under the session key, the
    /// first 16 bytes in base64. Stable across processes that share the secret key.
    pub(crate) fn password_digest(&self, hash: &str) -> String {
        use hmac::{Hmac, KeyInit, Mac};
        let key = self.settings().session.key.signing();
        let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(key) else {
            return String::new();
        };
        mac.update(b"plover session password\0");
        mac.update(hash.as_bytes());
        let digest = mac.finalize().into_bytes();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16])
    }

    /// Ends this request's session (flask-peewee's `auth.logout_user`).
    pub fn logout_user(&self, req: &HttpRequest) {
        end_login(&req.get_session());
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A fresh random token (32 bytes, URL-safe base64).
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Starts a new session for `user`: the old session's content (its CSRF token included) is
/// dropped and the session is renewed, so nothing issued before the login carries over.
pub(crate) fn start_login<U: UserModel>(
    auth: &Auth<U>,
    session: &Session,
    user: &U,
) -> Result<(), Error> {
    session.renew();
    session.clear();
    let lifetime = auth.settings().session.lifetime;
    let lifetime = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
    let insert = |key: &str, value: serde_json::Value| {
        session
            .insert(key, value)
            .map_err(|e| Error::Internal(format!("session: {e}")))
    };
    insert(USER_ID, user.pk().into())?;
    insert(EXPIRES, unix_now().saturating_add(lifetime).into())?;
    insert(
        PASSWORD_DIGEST,
        auth.password_digest(user.password_hash()).into(),
    )?;
    insert(CSRF, new_token().into())
}

/// Keeps `session` logged in as `user_id` (if it is) with the password hash `hash`.
pub(crate) fn keep_password<U: UserModel>(
    auth: &Auth<U>,
    session: &Session,
    user_id: i64,
    hash: &str,
) -> Result<(), Error> {
    if session_user_id(session) != Some(user_id) {
        return Ok(());
    }
    session
        .insert(PASSWORD_DIGEST, auth.password_digest(hash))
        .map_err(|e| Error::Internal(format!("session: {e}")))
}

/// Ends the session: its content goes and the cookie is removed.
pub(crate) fn end_login(session: &Session) {
    session.purge();
}

/// The primary key of the logged-in user, if the session holds an unexpired login.
fn session_user_id(session: &Session) -> Option<i64> {
    let id = session.get::<i64>(USER_ID).ok().flatten()?;
    let expires = session.get::<i64>(EXPIRES).ok().flatten()?;
    (unix_now() < expires).then_some(id)
}

/// The logged-in user of this request: active, with an unexpired session; loaded once per
/// request (later calls reuse it).
pub async fn current_user<U>(req: &HttpRequest) -> Result<Option<U>, Error>
where
    U: UserModel + Clone + Send + 'static,
{
    if let Some(cached) = req.extensions().get::<CurrentUser<U>>() {
        return Ok(cached.0.clone());
    }
    let auth = auth_of::<U>(req)?;
    let session = req.get_session();
    let user = match session_user_id(&session) {
        None => None,
        Some(id) => {
            let finder = auth.clone();
            let (found, stamp) = auth
                .db()
                .run_lazy(move |db| {
                    let found = finder.find_user_by_id_stamped(db, id)?;
                    Ok((found, db.permissions_stamp()))
                })
                .await?;
            if let Some(stamp) = stamp {
                req.extensions_mut().insert(SessionStamp(stamp));
            }
            // Deleted, deactivated, or its password changed since this session's login: the
            // session ends.
            let digest = session.get::<String>(PASSWORD_DIGEST).ok().flatten();
            let current = found.filter(|u: &U| {
                u.is_active()
                    && digest.as_deref().is_some_and(|d| {
                        bool::from(
                            d.as_bytes()
                                .ct_eq(auth.password_digest(u.password_hash()).as_bytes()),
                        )
                    })
            });
            if current.is_none() {
                session.purge();
            }
            current
        }
    };
    req.extensions_mut().insert(CurrentUser(user.clone()));
    Ok(user)
}

/// The request's user, cached in the request's extensions.
struct CurrentUser<U>(Option<U>);

/// The permissions stamp read with the session's user (docs/permissions.md), where the
/// database has one.
#[cfg_attr(not(feature = "admin"), allow(dead_code))] // read by the admin alone
struct SessionStamp(i64);

/// The permissions stamp that [`current_user`] read with this request's user, if it did.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn session_stamp(req: &HttpRequest) -> Option<i64> {
    req.extensions().get::<SessionStamp>().map(|s| s.0)
}

/// The `Auth<U>` that `Auth::setup` registered as app data.
pub(crate) fn auth_of<U: UserModel>(req: &HttpRequest) -> Result<Auth<U>, Error> {
    req.app_data::<web::Data<Auth<U>>>()
        .map(|a| a.get_ref().clone())
        .ok_or_else(|| {
            Error::Internal(
                "no Auth for this user model: add `.configure(auth.setup())` to the App".into(),
            )
        })
}

/// The logged-in user, as an extractor: a view that takes `LoggedInUser<User>` is
/// `login_required`. An anonymous request (no session, an expired one, or the session of a user
/// who is no longer active or no longer exists) is redirected (302) to the login view with
/// `next` set to the original path and query, and comes back there after the login.
///
/// `Option<LoggedInUser<User>>` is the user or `None` (flask-peewee's `get_logged_in_user()`).
///
/// ```no_run
/// # use plover::accounts::LoggedInUser;
/// # use plover::prelude::*;
/// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text } }
/// # #[derive(Clone, RestModel)]
/// # #[diesel(table_name = user)]
/// # pub struct User { pub id: i32, pub username: String, #[rest(write_only)] pub password: String }
/// # impl UserModel for User {
/// #     fn username(&self) -> &str { &self.username }
/// #     fn password_hash(&self) -> &str { &self.password }
/// #     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
/// # }
/// async fn private(user: LoggedInUser<User>) -> String {
///     format!("hello {}", user.username)
/// }
/// async fn home(user: Option<LoggedInUser<User>>) -> String {
///     user.map_or("hello stranger".into(), |u| format!("hello {}", u.username))
/// }
/// ```
#[derive(Debug, Clone)]
pub struct LoggedInUser<U>(pub U);

impl<U> LoggedInUser<U> {
    /// The user.
    pub fn into_inner(self) -> U {
        self.0
    }
}

impl<U> std::ops::Deref for LoggedInUser<U> {
    type Target = U;
    fn deref(&self) -> &U {
        &self.0
    }
}

impl<U> FromRequest for LoggedInUser<U>
where
    U: UserModel + Clone + Send + 'static,
{
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match current_user::<U>(&req).await? {
                Some(user) => Ok(LoggedInUser(user)),
                None => {
                    let login = auth_of::<U>(&req)?.login_url();
                    Err(LoginRedirect::new(&login, &req).into())
                }
            }
        })
    }
}

/// The answer to an anonymous request for a `login_required` view: 302 to the login view with
/// `next` = the original path and query.
#[derive(Debug)]
pub struct LoginRedirect {
    location: String,
}

impl LoginRedirect {
    /// A redirect of `req` to `login_url`, with `next` = its path and query.
    pub fn new(login_url: &str, req: &HttpRequest) -> LoginRedirect {
        let original = req
            .uri()
            .path_and_query()
            .map_or_else(|| req.path().to_owned(), |pq| pq.as_str().to_owned());
        let next: String = form_urlencoded::byte_serialize(original.as_bytes()).collect();
        LoginRedirect {
            location: format!("{login_url}?next={next}"),
        }
    }
}

impl fmt::Display for LoginRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "login required")
    }
}

impl ResponseError for LoginRedirect {
    fn status_code(&self) -> actix_web::http::StatusCode {
        actix_web::http::StatusCode::FOUND
    }
    fn error_response(&self) -> HttpResponse {
        HttpResponse::Found()
            .insert_header((header::LOCATION, self.location.as_str()))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .finish()
    }
}

/// The session's CSRF token, as an extractor: put [`CsrfToken::value`] in a hidden
/// `csrf_token` field of every form that POSTs, and check the submitted value with
/// [`CsrfToken::verify`]. The token lives in the session (one is made on first use) and is
/// replaced at login, so a token from before a login is refused after it.
#[derive(Clone)]
pub struct CsrfToken {
    token: String,
}

impl fmt::Debug for CsrfToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CsrfToken(..)")
    }
}

impl CsrfToken {
    /// The session's token, made and stored if it has none.
    pub fn of(session: &Session) -> Result<CsrfToken, Error> {
        if let Some(token) = session.get::<String>(CSRF).ok().flatten() {
            return Ok(CsrfToken { token });
        }
        let token = new_token();
        session
            .insert(CSRF, &token)
            .map_err(|e| Error::Internal(format!("session: {e}")))?;
        Ok(CsrfToken { token })
    }

    /// The token, for the form's hidden field.
    pub fn value(&self) -> &str {
        &self.token
    }

    /// Whether `submitted` is this session's token (compared in constant time); a missing
    /// value is refused. Errors with [`Error::Forbidden`] (403).
    pub fn verify(&self, submitted: Option<&str>) -> Result<(), Error> {
        let ok = submitted.is_some_and(|s| bool::from(s.as_bytes().ct_eq(self.token.as_bytes())));
        if ok {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }
}

impl FromRequest for CsrfToken {
    type Error = Error;
    type Future = std::future::Ready<Result<CsrfToken, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(CsrfToken::of(&req.get_session()))
    }
}
