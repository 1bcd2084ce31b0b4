//! Joining (`GET|POST /join/`): the sign-up form, which logs the new user in.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use plover::accounts::{Auth, CsrfToken, LoggedInUser};
use plover::askama::Template;
use plover::db::DbConn;
use plover::model::save;
use plover::query::Op;
use plover::views::{HtmlError, Query};
use plover::Error;
use serde::Deserialize;

use super::{render_status, see_other};
use crate::{User, UserChanges};

/// The longest username, in characters.
pub const MAX_USERNAME_CHARS: usize = 30;

/// `templates/join.html`: the form with the values typed so far (never the password) and a
/// message next to each field that is wrong.
#[derive(Template)]
#[template(path = "join.html", askama = plover::askama)]
struct JoinPage {
    me: Option<User>,
    csrf_token: String,
    username: String,
    email: String,
    errors: Errors,
}

/// What is wrong with each field.
#[derive(Debug, Default)]
struct Errors {
    username: Option<&'static str>,
    email: Option<&'static str>,
    password: Option<&'static str>,
    password2: Option<&'static str>,
}

impl Errors {
    fn any(&self) -> bool {
        self.username.is_some()
            || self.email.is_some()
            || self.password.is_some()
            || self.password2.is_some()
    }
}

const TAKEN: &str = "This username is taken; choose another one.";

/// The posted form; absent fields are empty.
#[derive(Debug, Default, Deserialize)]
pub struct JoinForm {
    #[serde(default)]
    username: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    password2: String,
    #[serde(default)]
    csrf_token: Option<String>,
}

impl JoinForm {
    /// The form again with `errors`, the username and e-mail kept, with `status`.
    fn again(
        &self,
        csrf: &CsrfToken,
        errors: Errors,
        status: StatusCode,
    ) -> Result<HttpResponse, HtmlError> {
        let page = JoinPage {
            me: None,
            csrf_token: csrf.value().to_owned(),
            username: self.username.trim().to_owned(),
            email: self.email.trim().to_owned(),
            errors,
        };
        render_status(status, &page)
    }

    /// Checks every field (usernames and e-mail addresses are trimmed first, passwords never).
    fn validate(&self) -> Errors {
        let username = self.username.trim();
        let email = self.email.trim();
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        Errors {
            username: if username.is_empty() {
                Some("Choose a username.")
            } else if username.chars().count() > MAX_USERNAME_CHARS {
                Some("A username may be at most 30 characters long.")
            } else if !username.chars().all(allowed) {
                Some("Use only letters, digits, and _ - . in a username.")
            } else {
                None
            },
            email: if email.is_empty() {
                Some("Enter your e-mail address.")
            } else if !email.contains('@') {
                Some("This does not look like an e-mail address.")
            } else {
                None
            },
            password: if self.password.is_empty() {
                Some("Choose a password.")
            } else if self.password.len() > 72 {
                Some("A password may be at most 72 bytes long.")
            } else {
                None
            },
            password2: (!self.password.is_empty() && self.password != self.password2)
                .then_some("The two passwords differ."),
        }
    }
}

/// `GET /join/`: the form; a logged-in user goes to the homepage instead.
pub async fn form(
    me: Option<LoggedInUser<User>>,
    csrf: CsrfToken,
) -> Result<HttpResponse, HtmlError> {
    if me.is_some() {
        return Ok(see_other("/"));
    }
    JoinForm::default().again(&csrf, Errors::default(), StatusCode::OK)
}

/// `POST /join/` (CSRF-checked): creates the user with a bcrypt hash of the password, logs
/// them in and goes to the homepage. Invalid fields: 400 with the form again; a taken
/// username: 409 with the form again, nothing written.
pub async fn submit(
    req: HttpRequest,
    me: Option<LoggedInUser<User>>,
    csrf: CsrfToken,
    form: web::Form<JoinForm>,
    auth: web::Data<Auth<User>>,
    db: DbConn,
) -> Result<HttpResponse, HtmlError> {
    if me.is_some() {
        return Ok(see_other("/"));
    }
    csrf.verify(form.csrf_token.as_deref())?;
    let errors = form.validate();
    if errors.any() {
        return form.again(&csrf, errors, StatusCode::BAD_REQUEST);
    }
    let taken = Errors {
        username: Some(TAKEN),
        ..Errors::default()
    };
    let username = form.username.trim().to_owned();
    let name = username.clone();
    let exists = db
        .run(move |conn| {
            let user = Query::<User>::new()
                .filter(User::FIELDS.username, Op::Eq, name)
                .first(conn)?;
            Ok(user.is_some())
        })
        .await?;
    if exists {
        return form.again(&csrf, taken, StatusCode::CONFLICT);
    }
    // bcrypt takes a while: off the async workers.
    let (hasher, password) = (auth.get_ref().clone(), form.password.clone());
    let hash = web::block(move || hasher.make_password(&password))
        .await
        .map_err(|e| Error::Internal(format!("blocking task failed: {e}")))?
        .map_err(|e| Error::Internal(format!("password hashing: {e}")))?;
    let changes = UserChanges {
        username: Some(username),
        password: Some(hash),
        email: Some(form.email.trim().to_owned()),
        join_date: Some(plover::value::now()),
        active: Some(true),
        admin: Some(false),
    };
    let created = db
        .run(move |conn| conn.transaction(|conn| save::<User>(conn, changes, None)))
        .await;
    let user = match created {
        Ok(user) => user,
        // Someone took the name between the check and the insert.
        Err(Error::Database(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _))) => {
            return form.again(&csrf, taken, StatusCode::CONFLICT);
        }
        Err(e) => return Err(e.into()),
    };
    auth.login_user(&req, &user)?;
    Ok(see_other("/"))
}
