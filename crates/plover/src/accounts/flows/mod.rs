//! The account flows under the accounts prefix (docs/accounts.md): password change, password
//! reset by mail, and sign-up, with their pages and forms.

mod change;
mod mailing;
mod options;
mod reset;
mod signup;
mod token;

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpResponse, Route};

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
        self.flow_url("password_change/done/")
    }

    /// `{prefix}/{path}`.
    fn flow_url(&self, path: &str) -> String {
        format!("{}/{path}", self.settings().session.prefix)
    }
}

/// Mounts the account flows of `auth` (called by [`Auth::setup`]).
pub(super) fn mount<U: UserModel + Clone + Send + 'static>(
    auth: &Auth<U>,
    cfg: &mut web::ServiceConfig,
) {
    let form = |path: String, what: &str, get: Route, post: Route| {
        if mounted::recording() {
            mounted::route("GET, POST", path.clone(), what.to_owned());
        }
        web::resource(path)
            .app_data(BodyLimit(MAX_FORM_BYTES))
            .route(get)
            .route(post)
    };
    let page = |path: String, what: &str, get: Route| {
        if mounted::recording() {
            mounted::route("GET", path.clone(), what.to_owned());
        }
        web::resource(path).route(get)
    };
    cfg.service(form(
        auth.password_change_url(),
        "the password change form",
        web::get().to(change::form::<U>),
        web::post().to(change::submit::<U>),
    ));
    cfg.service(page(
        auth.password_change_done_url(),
        "after a password change",
        web::get().to(change::done::<U>),
    ));
    let flows = &auth.settings().session.flows;
    if flows.mailer.is_none() {
        return;
    }
    options::check_model::<U>(flows.signup);
    cfg.service(form(
        auth.password_reset_url(),
        "the password reset request form",
        web::get().to(reset::request_form::<U>),
        web::post().to(reset::request_submit::<U>),
    ));
    cfg.service(page(
        auth.flow_url("password_reset/done/"),
        "after a password reset request",
        web::get().to(reset::request_done::<U>),
    ));
    cfg.service(form(
        auth.flow_url("reset/{token}/"),
        "the form of a mailed password reset link",
        web::get().to(reset::confirm_form::<U>),
        web::post().to(reset::confirm_submit::<U>),
    ));
    if flows.signup {
        cfg.service(form(
            auth.signup_url(),
            "the sign-up form",
            web::get().to(signup::form::<U>),
            web::post().to(signup::submit::<U>),
        ));
        cfg.service(page(
            auth.flow_url("signup/done/"),
            "after a sign-up",
            web::get().to(signup::done::<U>),
        ));
        cfg.service(page(
            auth.flow_url("confirm/{token}/"),
            "a mailed sign-up confirmation link",
            web::get().to(signup::confirm::<U>),
        ));
    }
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

/// The messages of a failed form, by field, and about the whole form.
#[derive(Debug, Default)]
struct Errors {
    fields: HashMap<&'static str, String>,
    others: Vec<String>,
}

impl Errors {
    /// Notes `message` on `field` (the first message of a field wins).
    fn add(&mut self, field: &'static str, message: impl Into<String>) {
        self.fields.entry(field).or_insert_with(|| message.into());
    }

    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.others.is_empty()
    }

    /// Puts each message on its input; the messages of fields no input shows are returned,
    /// for the top of the form.
    fn apply(mut self, inputs: &mut [FormInput]) -> Vec<String> {
        for input in inputs {
            input.error = self.fields.remove(input.name);
        }
        let mut others: Vec<String> = self.fields.into_values().collect();
        others.sort();
        self.others.extend(others);
        self.others
    }

    /// The messages of a write that `U`'s rules refused, by the sign-up form's inputs (the
    /// username, e-mail and password fields; any other field's message goes to the top of the
    /// form); `Err` for an error that no form input can mend (a failure of the server).
    fn of_refusal<U: UserModel>(refused: Error) -> Result<Errors, Error> {
        let input = |field: &str| match field {
            f if f == U::USERNAME_FIELD => "username",
            f if Some(f) == U::EMAIL_FIELD => "email",
            f if f == U::PASSWORD_FIELD => "password1",
            _ => "",
        };
        let mut errors = Errors::default();
        match refused {
            Error::FieldConflict { field, message } => match input(&field) {
                "" => errors.add_other(format!("{field}: {message}")),
                name => errors.add(name, message),
            },
            Error::Validation { fields, message } => {
                for (field, text) in fields {
                    match input(&field) {
                        "" => errors.add_other(format!("{field}: {text}")),
                        name => errors.add(name, text),
                    }
                }
                if errors.is_empty() {
                    errors.add_other(message);
                }
            }
            Error::Conflict(text) => errors.add_other(text),
            other if actix_web::ResponseError::status_code(&other).is_client_error() => {
                errors.add_other(other.to_string());
            }
            other => return Err(other),
        }
        Ok(errors)
    }

    /// Notes a message about the whole form.
    fn add_other(&mut self, message: String) {
        self.others.push(message);
    }
}

/// The form `page` again with a message on `field` that the client must wait `wait`: 429
/// with `Retry-After`.
fn too_many<U: UserModel>(
    auth: &Auth<U>,
    mut page: FormPage,
    field: &'static str,
    wait: std::time::Duration,
) -> Result<HttpResponse, Error> {
    let secs = crate::error::retry_after_secs(wait);
    for input in &mut page.inputs {
        if input.name == field {
            input.error = Some(format!("Too many attempts; try again in {secs} seconds."));
        }
    }
    let mut answer = form_page(auth, &page, StatusCode::TOO_MANY_REQUESTS)?;
    answer
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    Ok(answer)
}

/// The messages of a new password (`fields`: its two inputs) that is empty, too long, or not
/// typed twice alike.
fn check_new_passwords(errors: &mut Errors, fields: [&'static str; 2], new1: &str, new2: &str) {
    if new1.is_empty() {
        errors.add(fields[0], "Enter a new password.");
    } else if new1.len() > 72 {
        errors.add(fields[0], "Passwords may be at most 72 bytes long.");
    }
    if new1 != new2 {
        errors.add(fields[1], "The two password fields didn't match.");
    }
}

/// The names of the new-password inputs of the password change and reset forms.
const NEW_PASSWORDS: [&str; 2] = ["new_password1", "new_password2"];

impl<U: UserModel + Clone + Send + 'static> Auth<U> {
    /// `raw` hashed at this component's cost on a blocking thread (no connection held).
    async fn hash_off_thread(&self, raw: &str) -> Result<String, Error> {
        let (hasher, raw) = (self.clone(), raw.to_owned());
        web::block(move || hasher.make_password(&raw))
            .await
            .map_err(|e| Error::Internal(format!("password hashing: {e}")))?
            .map_err(|e| Error::field(U::PASSWORD_FIELD, e.to_string()))
    }
}
