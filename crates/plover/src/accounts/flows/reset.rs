//! Password reset by mail (Django's `PasswordResetView` and `PasswordResetConfirmView`): a
//! request by username or e-mail address, answered alike whether or not the account exists,
//! and the mailed link's form, which sets a new password once.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::token::{self, Purpose};
use super::{
    check_new_passwords, forbidden, form_page, mailing, message_page, password_input, redirect,
    too_many, Errors, Form, FormInput, FormPage, MessagePage, NEW_PASSWORDS,
};
use crate::accounts::session::CsrfToken;
use crate::accounts::user::{Auth, UserModel};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::http::body::{check_form_text, Body};
use crate::model::lock_row;
use crate::query::{Filter, Op, Param, Select};
use crate::server::ClientKey;

/// The accounts one request may mail at once, at most (several may share an address).
const MAX_RECIPIENTS: i64 = 10;

/// The request form.
fn request_page<U: UserModel>(auth: &Auth<U>, csrf: &CsrfToken, typed: &str) -> FormPage {
    FormPage {
        page: "password_reset",
        title: "Reset your password",
        intro: "Enter your username or e-mail address: we will mail you a link to choose a \
                new password.",
        action: auth.password_reset_url(),
        csrf_token: csrf.value().to_owned(),
        inputs: vec![FormInput {
            name: "username_or_email",
            label: "Username or e-mail address",
            kind: "text",
            autocomplete: "username",
            value: typed.to_owned(),
            error: None,
        }],
        errors: Vec::new(),
        submit: "Send me a link",
    }
}

/// `GET {prefix}/password_reset/`.
pub(super) async fn request_form<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
) -> Result<HttpResponse, Error> {
    form_page(&auth, &request_page(&auth, &csrf, ""), StatusCode::OK)
}

/// `POST {prefix}/password_reset/`: always a 302 to the `done/` page, in the same time whether
/// or not an account matches. Each active account that matches (by username, or by e-mail
/// address) and has a usable password gets one mail, at most 3 an hour. Counted per client
/// address with the login throttle's allowance: beyond it, the form again with 429.
pub(super) async fn request_submit<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
    body: Body,
) -> Result<HttpResponse, Error> {
    let form = Form::read(&body, &["username_or_email", "csrf_token"])?;
    if csrf.verify(form.given("csrf_token")).is_err() {
        return Ok(forbidden(&auth.password_reset_url()));
    }
    check_form_text(&body.form_pairs())?;
    let typed = form.get("username_or_email").trim().to_owned();
    let client = ClientKey::of(req.peer_addr().map(|a| a.ip()));
    let finder = auth.get_ref().clone();
    let found = auth
        .db()
        .run_lazy(move |db| {
            if let Err(wait) = finder.flow_limits().request(db, client) {
                return Ok(Err(wait));
            }
            let users = finder.reset_recipients(db, &typed)?;
            let limits = finder.flow_limits();
            Ok(Ok(users
                .into_iter()
                .filter(|user| limits.mail(db, user.pk()))
                .collect()))
        })
        .await?;
    let users = match found {
        Ok(users) => users,
        Err(wait) => {
            let page = request_page(&auth, &csrf, form.get("username_or_email"));
            return too_many(&auth, page, "username_or_email", wait);
        }
    };
    mailing::send(&auth, &req, Purpose::Reset, users).await;
    Ok(redirect(&auth.flow_url("password_reset/done/")))
}

/// `GET {prefix}/password_reset/done/`.
pub(super) async fn request_done<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
) -> Result<HttpResponse, Error> {
    let page = MessagePage {
        page: "password_reset_done",
        title: "Check your mail",
        text: "If an account matches what you entered, we have mailed it a link to choose a \
               new password. The link is valid for a short time and works once.",
        link: Some((auth.login_url(), "Back to the login page")),
    };
    message_page(&auth, &page, StatusCode::OK)
}

/// The form of a valid link.
fn confirm_page<U: UserModel>(auth: &Auth<U>, csrf: &CsrfToken, token: &str) -> FormPage {
    FormPage {
        page: "password_reset_confirm",
        title: "Choose a new password",
        intro: "Enter your new password twice.",
        action: auth.flow_url(&format!("reset/{token}/")),
        csrf_token: csrf.value().to_owned(),
        inputs: vec![
            password_input("new_password1", "New password", "new-password"),
            password_input("new_password2", "New password (again)", "new-password"),
        ],
        errors: Vec::new(),
        submit: "Set my password",
    }
}

/// The 400 page of a used, expired or altered link.
fn invalid<U: UserModel>(auth: &Auth<U>) -> Result<HttpResponse, Error> {
    let page = MessagePage {
        page: "password_reset_invalid",
        title: "This link is not valid",
        text: "This password reset link is not valid: it was used already, it has expired, or \
               it was altered. Ask for a new one.",
        link: Some((auth.password_reset_url(), "Ask for a new link")),
    };
    message_page(auth, &page, StatusCode::BAD_REQUEST)
}

/// `GET {prefix}/reset/<token>/`: the form, or a 400 page.
pub(super) async fn confirm_form<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    token: web::Path<String>,
    csrf: CsrfToken,
) -> Result<HttpResponse, Error> {
    let lifetime = auth.settings().session.flows.reset_lifetime;
    let Some(parsed) = token::parse(&token, lifetime) else {
        return invalid(&auth);
    };
    let checker = auth.get_ref().clone();
    let valid = auth
        .db()
        .run(move |conn| {
            let user = checker.find_user_by_id(conn, parsed.pk)?;
            Ok(user.is_some_and(|u| u.is_active() && checker.token_fits(&parsed, &u)))
        })
        .await?;
    if !valid {
        return invalid(&auth);
    }
    form_page(&auth, &confirm_page(&auth, &csrf, &token), StatusCode::OK)
}

/// `POST {prefix}/reset/<token>/`: sets the new password if the link is still valid (checked
/// again on the locked row, so that two uses at once set one password), then a 302 to the
/// login page. Every session of the user ends.
pub(super) async fn confirm_submit<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    token: web::Path<String>,
    csrf: CsrfToken,
    body: Body,
) -> Result<HttpResponse, Error> {
    let form = Form::read(&body, &["new_password1", "new_password2", "csrf_token"])?;
    if csrf.verify(form.given("csrf_token")).is_err() {
        return Ok(forbidden(&auth.flow_url(&format!("reset/{token}/"))));
    }
    check_form_text(&body.form_pairs())?;
    let lifetime = auth.settings().session.flows.reset_lifetime;
    let Some(parsed) = token::parse(&token, lifetime) else {
        return invalid(&auth);
    };
    let mut errors = Errors::default();
    let (new1, new2) = (form.get("new_password1"), form.get("new_password2"));
    check_new_passwords(&mut errors, NEW_PASSWORDS, new1, new2);
    if !errors.is_empty() {
        let mut page = confirm_page(&auth, &csrf, &token);
        errors.apply(&mut page.inputs);
        return form_page(&auth, &page, StatusCode::OK);
    }
    let hash = auth.hash_off_thread(new1).await?;
    let writer = auth.get_ref().clone();
    let set = auth
        .db()
        .run(move |conn| {
            conn.transaction(|conn| {
                let Some(user) = writer.locked_user(conn, parsed.pk)? else {
                    return Ok(false);
                };
                if !(user.is_active() && writer.token_fits(&parsed, &user)) {
                    return Ok(false);
                }
                writer.store_password_hash(conn, &user, hash)?;
                Ok(true)
            })
        })
        .await?;
    if !set {
        return invalid(&auth);
    }
    Ok(redirect(&auth.login_url()))
}

impl<U: UserModel + Clone + Send + 'static> Auth<U> {
    /// The accounts a reset request for `typed` mails: the active user of that username, and
    /// the active users of that e-mail address (whatever its case), each with a usable
    /// password and an address.
    fn reset_recipients(&self, db: &mut LazyConn<'_>, typed: &str) -> Result<Vec<U>, Error> {
        let mut conn = db.conn()?;
        let mut users: Vec<U> = self.find_user(&mut conn, typed)?.into_iter().collect();
        let by_address = U::EMAIL_FIELD.and_then(|name| U::meta().field(name));
        if let (Some((field, _)), true) = (by_address, typed.contains('@')) {
            // A literal, case-insensitive match in SQL (`%` and `_` are plain), then the
            // exact one here.
            let select = Select {
                filters: vec![Filter {
                    path: vec![field],
                    op: Op::Contains,
                    values: vec![Param::Text(typed.to_owned())],
                }],
                limit: Some(MAX_RECIPIENTS),
                ..Select::default()
            };
            let wanted = typed.to_lowercase();
            for user in U::load(&mut conn, &select)? {
                let same = mailing::address(&user).is_some_and(|a| a.to_lowercase() == wanted);
                if same && users.iter().all(|u| u.pk() != user.pk()) {
                    users.push(user);
                }
            }
        }
        users.retain(|u| {
            u.is_active() && !u.password_hash().is_empty() && mailing::address(u).is_some()
        });
        Ok(users)
    }

    /// The user with primary key `pk`, its row locked for the rest of the transaction.
    pub(super) fn locked_user(&self, conn: &mut Conn<'_>, pk: i64) -> Result<Option<U>, Error> {
        lock_row::<U>(conn, pk)?;
        self.find_user_by_id(conn, pk)
    }

    /// Whether the reset token `parsed` fits `user` as it is now.
    fn token_fits(&self, parsed: &token::Parsed, user: &U) -> bool {
        token::check(self, Purpose::Reset, parsed, user)
    }
}
