//! The password change view (Django's `PasswordChangeView`): old password, new one twice.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::{
    check_new_passwords, forbidden, form_page, message_page, password_input, redirect, too_many,
    Errors, Form, FormPage, MessagePage, NEW_PASSWORDS,
};
use crate::accounts::session::{CsrfToken, LoggedInUser};
use crate::accounts::user::{Auth, Credentials, UserModel};
use crate::error::Error;
use crate::http::body::{check_form_text, Body};

/// The form, with the messages of a failed attempt.
fn page<U: UserModel>(auth: &Auth<U>, csrf: &CsrfToken, errors: Errors) -> FormPage {
    let mut inputs = vec![
        password_input("old_password", "Old password", "current-password"),
        password_input("new_password1", "New password", "new-password"),
        password_input("new_password2", "New password (again)", "new-password"),
    ];
    let others = errors.apply(&mut inputs);
    FormPage {
        page: "password_change",
        title: "Change your password",
        intro: "Enter your old password, then your new password twice.",
        action: auth.password_change_url(),
        csrf_token: csrf.value().to_owned(),
        inputs,
        errors: others,
        submit: "Change my password",
    }
}

/// `GET {prefix}/password_change/` (login required).
pub(super) async fn form<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    _user: LoggedInUser<U>,
    csrf: CsrfToken,
) -> Result<HttpResponse, Error> {
    form_page(
        &auth,
        &page(&auth, &csrf, Errors::default()),
        StatusCode::OK,
    )
}

/// `POST {prefix}/password_change/` (login required): checks the CSRF token and the old
/// password (as a login does: throttled, never with a pooled connection held), then stores the
/// new one. Every other session of the user ends (their password digest is stale); this one
/// goes on with the new digest. Failures show the form again (200) with a message per field.
pub(super) async fn submit<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    user: LoggedInUser<U>,
    csrf: CsrfToken,
    body: Body,
) -> Result<HttpResponse, Error> {
    let names = [
        "old_password",
        "new_password1",
        "new_password2",
        "csrf_token",
    ];
    let form = Form::read(&body, &names)?;
    if csrf.verify(form.given("csrf_token")).is_err() {
        return Ok(forbidden(&auth.password_change_url()));
    }
    check_form_text(&body.form_pairs())?;
    let mut errors = Errors::default();
    let (new1, new2) = (form.get("new_password1"), form.get("new_password2"));
    check_new_passwords(&mut errors, NEW_PASSWORDS, new1, new2);
    let checker = auth.get_ref().clone();
    let (client, old, user) = (
        req.peer_addr().map(|a| a.ip()),
        form.get("old_password").to_owned(),
        user.into_inner(),
    );
    let verified = web::block(move || {
        let name = user.username().to_owned();
        checker.verify(Credentials::new(client, &name, &old), Some(user))
    })
    .await
    .map_err(|e| Error::Internal(format!("password check: {e}")))?;
    let user = match verified {
        Ok(Some(user)) => Some(user),
        Ok(None) => {
            let message = "Your old password was entered incorrectly. Please enter it again.";
            errors.add("old_password", message);
            None
        }
        Err(Error::TooManyRequests(wait)) => {
            return too_many(&auth, page(&auth, &csrf, errors), "old_password", wait);
        }
        Err(other) => return Err(other),
    };
    let Some(user) = user.filter(|_| errors.is_empty()) else {
        return form_page(&auth, &page(&auth, &csrf, errors), StatusCode::OK);
    };
    let user = auth.change_password(user, new1.to_owned()).await?;
    auth.update_session_password(&req, &user)?;
    Ok(redirect(&auth.password_change_done_url()))
}

/// `GET {prefix}/password_change/done/` (login required).
pub(super) async fn done<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    _user: LoggedInUser<U>,
) -> Result<HttpResponse, Error> {
    let page = MessagePage {
        page: "password_change_done",
        title: "Password changed",
        text: "Your password was changed. Your other sessions have been logged out.",
        link: Some((auth.settings().session.default_next_url.clone(), "Continue")),
    };
    message_page(&auth, &page, StatusCode::OK)
}

impl<U: UserModel + Clone + Send + 'static> Auth<U> {
    /// Hashes `raw` on a blocking thread, then stores it as `user`'s password with a pooled
    /// connection (held only for the statement): the user as stored now.
    pub(crate) async fn change_password(&self, user: U, raw: String) -> Result<U, Error> {
        let hash = self.hash_off_thread(&raw).await?;
        let (writer, id) = (self.clone(), user.pk());
        self.db()
            .run(move |conn| {
                conn.transaction(|conn| {
                    writer.store_password_hash(conn, &user, hash)?;
                    writer
                        .find_user_by_id(conn, id)?
                        .ok_or_else(|| Error::Internal("the user went away".into()))
                })
            })
            .await
    }
}
