//! The account flows under the accounts prefix (docs/accounts.md): password change, password
//! reset by mail, and sign-up, with their pages and forms.

mod change;

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpResponse};

use super::user::{Auth, UserModel};
use crate::error::Error;
use crate::http::body::{Body, BodyLimit};
use crate::mounted;

use super::pages::{AccountTemplates, FormInput, FormPage, MessagePage};

/// Largest account form read (16 KiB, as the login form's).
const MAX_FORM_BYTES: usize = 16 * 1024;

impl<U: UserModel> Auth<U> {
    /// The templates of the account flows' pages (default: the crate's,
    /// [`DefaultAccountTemplates`](super::DefaultAccountTemplates)); see [`AccountTemplates`].
    pub fn account_templates(self, templates: impl AccountTemplates) -> Auth<U> {
        let templates: Arc<dyn AccountTemplates> = Arc::new(templates);
        self.with(|s| s.session.templates = templates)
    }

    /// The password change view's path, `{prefix}/password_change/`.
    pub fn password_change_url(&self) -> String {
        format!("{}/password_change/", self.settings().session.prefix)
    }

    /// The path of the page after a password change, `{prefix}/password_change/done/`.
    pub(crate) fn password_change_done_url(&self) -> String {
        format!("{}/password_change/done/", self.settings().session.prefix)
    }
}

/// Mounts the account flows of `auth` (called by [`Auth::setup`]).
pub(super) fn mount<U: UserModel + Clone + Send + 'static>(
    auth: &Auth<U>,
    cfg: &mut web::ServiceConfig,
) {
    if mounted::recording() {
        let change = "the password change form".to_owned();
        mounted::route("GET, POST", auth.password_change_url(), change);
        let done = "after a password change".to_owned();
        mounted::route("GET", auth.password_change_done_url(), done);
    }
    cfg.service(
        web::resource(auth.password_change_url())
            .app_data(BodyLimit(MAX_FORM_BYTES))
            .route(web::get().to(change::form::<U>))
            .route(web::post().to(change::submit::<U>)),
    );
    cfg.service(
        web::resource(auth.password_change_done_url()).route(web::get().to(change::done::<U>)),
    );
}

/// The fields of an urlencoded form that a view reads; absent ones are empty.
#[derive(Debug, Default)]
struct Form(HashMap<&'static str, String>);

impl Form {
    /// The fields `names` of `body`; a field given twice is 400, as it is ambiguous.
    fn read(body: &Body, names: &[&'static str]) -> Result<Form, Error> {
        let mut form = Form::default();
        for (key, value) in body.form_pairs() {
            let Some(name) = names.iter().find(|n| **n == key) else {
                continue;
            };
            if form.0.insert(name, value).is_some() {
                return Err(Error::BadBody(format!(
                    "the form field '{key}' is given twice"
                )));
            }
        }
        Ok(form)
    }

    /// The value of `name` (`""` when absent).
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    /// The value of `name`, if given.
    fn given(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// An HTML answer with `status`, never cached.
fn html(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body)
}

/// A form page with `status`, through the application's templates.
fn form_page<U: UserModel>(
    auth: &Auth<U>,
    page: &FormPage,
    status: StatusCode,
) -> Result<HttpResponse, Error> {
    Ok(html(status, auth.settings().session.templates.form(page)?))
}

/// A message page with `status`, through the application's templates.
fn message_page<U: UserModel>(
    auth: &Auth<U>,
    page: &MessagePage,
    status: StatusCode,
) -> Result<HttpResponse, Error> {
    Ok(html(
        status,
        auth.settings().session.templates.message(page)?,
    ))
}

/// A 302 to `location`, never cached.
fn redirect(location: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// 403 for a form posted without this session's CSRF token, as a page with a way back.
fn forbidden(again: &str) -> HttpResponse {
    html(
        StatusCode::FORBIDDEN,
        format!(
            "<!doctype html><meta charset=\"utf-8\"><title>Form expired</title>\
             <p>This form has expired or did not come from this site. \
             <a href=\"{again}\">Open the form again</a>.</p>"
        ),
    )
}

/// A password input named `name`.
fn password_input(
    name: &'static str,
    label: &'static str,
    autocomplete: &'static str,
) -> FormInput {
    FormInput {
        name,
        label,
        kind: "password",
        autocomplete,
        value: String::new(),
        error: None,
    }
}

/// The messages of a failed form, by field.
#[derive(Debug, Default)]
struct Errors(HashMap<&'static str, String>);

impl Errors {
    /// Notes `message` on `field` (the first message of a field wins).
    fn add(&mut self, field: &'static str, message: impl Into<String>) {
        self.0.entry(field).or_insert_with(|| message.into());
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Puts each message on its input.
    fn apply(mut self, inputs: &mut [FormInput]) {
        for input in inputs {
            input.error = self.0.remove(input.name);
        }
    }
}

/// The message of a new password that is empty, too long, or not typed twice alike.
fn check_new_passwords(errors: &mut Errors, new1: &str, new2: &str) {
    if new1.is_empty() {
        errors.add("new_password1", "Enter a new password.");
    } else if new1.len() > 72 {
        errors.add("new_password1", "Passwords may be at most 72 bytes long.");
    }
    if new1 != new2 {
        errors.add("new_password2", "The two password fields didn't match.");
    }
}
