//! The login and logout views, mounted by [`Auth::setup`].

use actix_session::{Session, SessionExt};
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::next::safe_next;
use super::session::{current_user, end_login, start_login, CsrfToken};
use super::user::{Auth, Credentials, UserModel};
use crate::db::LazyConn;
use crate::error::Error;
use crate::http::body::{check_form_text, Body, BodyLimit};
use crate::http::urlencoded::pairs;
use crate::mounted;
use crate::sql::{self, Arg};

/// The login form page (`templates/accounts/login.html`).
#[derive(Template)]
#[template(path = "accounts/login.html")]
struct LoginPage<'a> {
    /// Where the form posts: the login view.
    action: &'a str,
    /// The session's CSRF token.
    csrf_token: &'a str,
    /// Where to go after the login, as given.
    next: &'a str,
    /// The username typed in, kept after a failed attempt.
    username: &'a str,
    /// The error of a failed attempt.
    error: Option<&'a str>,
    /// The user already logged in, if any.
    user: Option<&'a str>,
    /// The logout view.
    logout: &'a str,
    /// The password reset view, where it is mounted.
    reset: Option<String>,
    /// The sign-up view, where it is mounted.
    signup: Option<String>,
}

/// The one message for every failed login: it does not tell which part was wrong.
const LOGIN_FAILED: &str = "Incorrect username or password.";

/// Largest login form read (16 KiB, actix's form limit).
const MAX_LOGIN_FORM_BYTES: usize = 16 * 1024;

/// The fields of the login form; absent ones are empty.
#[derive(Debug, Default)]
struct LoginForm {
    username: String,
    password: String,
    next: Option<String>,
    csrf_token: Option<String>,
}

impl LoginForm {
    /// The form of an urlencoded body; a field given twice is 400, as it is ambiguous.
    fn from_body(body: &Body) -> Result<LoginForm, Error> {
        let mut form = LoginForm::default();
        let mut seen = Vec::new();
        for (key, value) in body.form_pairs() {
            let slot = match key.as_str() {
                "username" => &mut form.username,
                "password" => &mut form.password,
                "next" => form.next.get_or_insert_default(),
                "csrf_token" => form.csrf_token.get_or_insert_default(),
                _ => continue,
            };
            if seen.contains(&key) {
                return Err(Error::BadBody(format!(
                    "the form field '{key}' is given twice"
                )));
            }
            *slot = value;
            seen.push(key);
        }
        Ok(form)
    }
}

impl<U: UserModel + Clone + Send + 'static> Auth<U> {
    /// Mounts `GET|POST {prefix}/login/`, `GET|POST {prefix}/logout/` and the password change
    /// views (`{prefix}/password_change/` and its `done/` page), and registers this
    /// `Auth` as app data for [`LoggedInUser`](super::LoggedInUser). Configure it on the `App`
    /// (not inside a scope), together with [`Auth::session_middleware`].
    pub fn setup(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
        let auth = self.clone();
        mounted::erased(move |cfg: &mut web::ServiceConfig| {
            if mounted::recording() {
                mounted::route("GET, POST", auth.login_url(), "the login form".into());
                mounted::route("GET, POST", auth.logout_url(), "logout".into());
            }
            cfg.app_data(web::Data::new(auth.clone()));
            cfg.service(
                web::resource(auth.login_url())
                    .app_data(BodyLimit(MAX_LOGIN_FORM_BYTES))
                    .route(web::get().to(login_page::<U>))
                    .route(web::post().to(login_submit::<U>)),
            );
            cfg.service(
                web::resource(auth.logout_url())
                    .route(web::get().to(logout::<U>))
                    .route(web::post().to(logout::<U>)),
            );
            super::flows::mount(&auth, cfg);
        })
    }
}

/// `next` from the query string.
fn query_next(req: &HttpRequest) -> Option<String> {
    pairs(req.query_string().as_bytes())
        .into_iter()
        .find(|(k, _)| k == "next")
        .map(|(_, v)| v)
}

/// A 302 to `next` if it is safe, else to the default next URL.
fn redirect_next<U: UserModel>(auth: &Auth<U>, next: Option<&str>) -> HttpResponse {
    let location = next
        .and_then(safe_next)
        .unwrap_or_else(|| auth.settings().session.default_next_url.clone());
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

fn render_login<U: UserModel>(
    auth: &Auth<U>,
    csrf: &CsrfToken,
    user: Option<&U>,
    next: &str,
    username: &str,
    error: Option<&str>,
) -> Result<HttpResponse, Error> {
    let flows = &auth.settings().session.flows;
    let page = LoginPage {
        action: &auth.login_url(),
        csrf_token: csrf.value(),
        next,
        username,
        error,
        user: user.map(UserModel::username),
        logout: &auth.logout_url(),
        reset: flows.mailer.is_some().then(|| auth.password_reset_url()),
        signup: (flows.mailer.is_some() && flows.signup).then(|| auth.signup_url()),
    };
    let body = page
        .render()
        .map_err(|e| Error::Internal(format!("login template: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body))
}

/// `GET {prefix}/login/`: the form, also for a user who is logged in already.
async fn login_page<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
) -> Result<HttpResponse, Error> {
    let user = current_user::<U>(&req).await?;
    let next = query_next(&req).unwrap_or_default();
    render_login(&auth, &csrf, user.as_ref(), &next, "", None)
}

/// `POST {prefix}/login/`: checks the CSRF token, then the credentials; on success renews the
/// session and redirects to `next`, else shows the form again with one error.
async fn login_submit<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
    body: Body,
) -> Result<HttpResponse, Error> {
    let form = LoginForm::from_body(&body)?;
    if csrf.verify(form.csrf_token.as_deref()).is_err() {
        return Ok(forbidden(&auth));
    }
    check_form_text(&body.form_pairs())?;
    let next = form
        .next
        .clone()
        .filter(|n| !n.is_empty())
        .or_else(|| query_next(&req));
    // The user is looked up with a pooled connection, which goes back to the pool before the
    // password check: a flood of wrong passwords never holds the pool.
    let checker = auth.get_ref().clone();
    let (client, username, password) = (
        req.peer_addr().map(|a| a.ip()),
        form.username.clone(),
        form.password,
    );
    let verified = auth
        .db()
        .run_lazy(move |db| {
            // Database trouble counts as no such user: a failed login, never an error page.
            let found = db
                .conn()
                .and_then(|mut conn| checker.find_user(&mut conn, &username))
                .unwrap_or(None);
            let creds = Credentials::new(client, &username, &password);
            let verified = checker.verify_releasing(creds, found, db);
            if let Ok(Some(user)) = &verified {
                record_login(db, user);
            }
            Ok(verified)
        })
        .await?;
    let user = match verified {
        Err(Error::TooManyRequests(wait)) => {
            let current = current_user::<U>(&req).await?;
            let message = format!(
                "Too many failed attempts; try again in {} seconds.",
                crate::error::retry_after_secs(wait)
            );
            let next = next.unwrap_or_default();
            let mut page = render_login(
                &auth,
                &csrf,
                current.as_ref(),
                &next,
                &form.username,
                Some(&message),
            )?;
            *page.status_mut() = actix_web::http::StatusCode::TOO_MANY_REQUESTS;
            page.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(crate::error::retry_after_secs(wait)),
            );
            return Ok(page);
        }
        other => other?,
    };
    let Some(user) = user else {
        let current = current_user::<U>(&req).await?;
        let next = next.unwrap_or_default();
        return render_login(
            &auth,
            &csrf,
            current.as_ref(),
            &next,
            &form.username,
            Some(LOGIN_FAILED),
        );
    };
    start_login(&auth, &req.get_session(), &user)?;
    Ok(redirect_next(&auth, next.as_deref()))
}

/// Sets the user's [`UserModel::LAST_LOGIN_FIELD`], if the model has one, to now: a
/// password reset link sent before dies. A failure is logged; the login goes on.
fn record_login<U: UserModel>(db: &mut LazyConn<'_>, user: &U) {
    let Some((field, _)) = U::LAST_LOGIN_FIELD.and_then(|name| U::meta().field(name)) else {
        return;
    };
    let now = Arg::DateTime(crate::value::now());
    let written = db
        .conn()
        .and_then(|mut conn| sql::update(&mut conn, U::meta(), user.pk(), &[(field, now)]));
    if let Err(e) = written {
        log::error!(
            "accounts: the last login of user {} was not recorded: {e}",
            user.pk()
        );
    }
}

/// `GET|POST {prefix}/logout/`: ends the session (no CSRF token needed) and redirects to a safe
/// `next` or the default.
async fn logout<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    session: Session,
) -> HttpResponse {
    end_login(&session);
    redirect_next(&auth, query_next(&req).as_deref())
}

/// 403 for a form posted without this session's CSRF token, as a page with a way back.
fn forbidden<U: UserModel>(auth: &Auth<U>) -> HttpResponse {
    HttpResponse::Forbidden()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><meta charset=\"utf-8\"><title>Form expired</title>\
             <p>This form has expired or did not come from this site. \
             <a href=\"{}\">Open the login page again</a>.</p>",
            auth.login_url()
        ))
}
