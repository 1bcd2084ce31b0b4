//! Sign-up (opt-in, [`Auth::signup`]): a form creating an inactive user, who is mailed a link
//! that activates the account once.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::token::{self, Purpose};
use super::{
    check_new_passwords, forbidden, form_page, mailing, message_page, password_input, redirect,
    too_many, Errors, Form, FormInput, FormPage, MessagePage,
};
use crate::accounts::session::CsrfToken;
use crate::accounts::user::{Auth, NewUser, UserModel};
use crate::error::Error;
use crate::http::body::{check_form_text, Body};
use crate::server::ClientKey;
use crate::sql::{self, Arg};

/// The form, with what was typed (passwords aside) and the messages of a failed attempt.
fn page<U: UserModel>(auth: &Auth<U>, csrf: &CsrfToken, form: &Form, errors: Errors) -> FormPage {
    let text = |name, label, kind, autocomplete| FormInput {
        name,
        label,
        kind,
        autocomplete,
        value: form.get(name).to_owned(),
        error: None,
    };
    let mut inputs = vec![
        text("username", "Username", "text", "username"),
        text("email", "E-mail address", "email", "email"),
        password_input("password1", "Password", "new-password"),
        password_input("password2", "Password (again)", "new-password"),
    ];
    let others = errors.apply(&mut inputs);
    FormPage {
        page: "signup",
        title: "Sign up",
        intro: "Choose a username and a password; we will mail you a link to confirm your \
                account.",
        action: auth.signup_url(),
        csrf_token: csrf.value().to_owned(),
        inputs,
        errors: others,
        submit: "Sign up",
    }
}

/// `GET {prefix}/signup/`.
pub(super) async fn form<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
) -> Result<HttpResponse, Error> {
    let empty = Form::default();
    form_page(
        &auth,
        &page(&auth, &csrf, &empty, Errors::default()),
        StatusCode::OK,
    )
}

/// The names of the form's fields.
const FIELDS: [&str; 5] = ["username", "email", "password1", "password2", "csrf_token"];

/// `POST {prefix}/signup/`: creates the user, inactive, as every writer writes a row (the
/// model's constraints and rules, the username rules), mails the confirmation link and
/// answers a 302 to the `done/` page; a refused field shows the form again (200) with its
/// message. Counted per client address with the login throttle's allowance.
pub(super) async fn submit<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    auth: web::Data<Auth<U>>,
    csrf: CsrfToken,
    body: Body,
) -> Result<HttpResponse, Error> {
    let form = Form::read(&body, &FIELDS)?;
    if csrf.verify(form.given("csrf_token")).is_err() {
        return Ok(forbidden(&auth.signup_url()));
    }
    check_form_text(&body.form_pairs())?;
    let client = ClientKey::of(req.peer_addr().map(|a| a.ip()));
    let counter = auth.get_ref().clone();
    let counted = auth
        .db()
        .run_lazy(move |db| Ok(counter.flow_limits().request(db, client)))
        .await?;
    if let Err(wait) = counted {
        let page = page(&auth, &csrf, &form, Errors::default());
        return too_many(&auth, page, "username", wait);
    }
    let mut errors = Errors::default();
    let (username, email) = (form.get("username").trim(), form.get("email").trim());
    if username.is_empty() {
        errors.add("username", "Enter a username.");
    }
    if !email.contains('@') {
        errors.add("email", "Enter a valid e-mail address.");
    }
    let (password1, password2) = (form.get("password1"), form.get("password2"));
    check_new_passwords(
        &mut errors,
        ["password1", "password2"],
        password1,
        password2,
    );
    if !errors.is_empty() {
        return form_page(&auth, &page(&auth, &csrf, &form, errors), StatusCode::OK);
    }
    let hash = auth.hash_off_thread(password1).await?;
    let (writer, username, email) = (
        auth.get_ref().clone(),
        username.to_owned(),
        email.to_owned(),
    );
    let created = auth
        .db()
        .run(move |conn| {
            let new = NewUser {
                username: &username,
                hash,
                admin: false,
                active: false,
            };
            let email_field = U::EMAIL_FIELD.unwrap_or("email");
            let fields = [(email_field, serde_json::Value::from(email))];
            conn.transaction(|conn| writer.insert_user(conn, new, &fields))
        })
        .await;
    let user = match created {
        Ok(user) => user,
        Err(refused) => {
            let errors = Errors::of_refusal::<U>(refused)?;
            return form_page(&auth, &page(&auth, &csrf, &form, errors), StatusCode::OK);
        }
    };
    mailing::send(&auth, &req, Purpose::Confirm, vec![user]).await;
    Ok(redirect(&auth.flow_url("signup/done/")))
}

/// `GET {prefix}/signup/done/`.
pub(super) async fn done<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
) -> Result<HttpResponse, Error> {
    let page = MessagePage {
        page: "signup_done",
        title: "Check your mail",
        text: "We have mailed you a link to confirm your account. Open it to log in.",
        link: None,
    };
    message_page(&auth, &page, StatusCode::OK)
}

/// `GET {prefix}/confirm/<token>/`: activates the user once (checked on the locked row) and
/// answers a 302 to the login page; a used, expired or altered link is a 400 page.
pub(super) async fn confirm<U: UserModel + Clone + Send + 'static>(
    auth: web::Data<Auth<U>>,
    token: web::Path<String>,
) -> Result<HttpResponse, Error> {
    let lifetime = auth.settings().session.flows.confirm_lifetime;
    let parsed = token::parse(&token, lifetime);
    let writer = auth.get_ref().clone();
    let activated = match parsed {
        None => false,
        Some(parsed) => {
            auth.db()
                .run(move |conn| {
                    conn.transaction(|conn| {
                        let Some(user) = writer.locked_user(conn, parsed.pk)? else {
                            return Ok(false);
                        };
                        let fits = token::check(&writer, Purpose::Confirm, &parsed, &user);
                        let active = U::ACTIVE_FIELD.and_then(|name| U::meta().field(name));
                        let (Some((field, _)), true, false) = (active, fits, user.is_active())
                        else {
                            return Ok(false);
                        };
                        sql::update(conn, U::meta(), user.pk(), &[(field, Arg::Bool(true))])?;
                        Ok(true)
                    })
                })
                .await?
        }
    };
    if activated {
        return Ok(redirect(&auth.login_url()));
    }
    let page = MessagePage {
        page: "signup_invalid",
        title: "This link is not valid",
        text: "This confirmation link is not valid: it was used already, it has expired, or it \
               was altered.",
        link: Some((auth.login_url(), "Go to the login page")),
    };
    message_page(&auth, &page, StatusCode::BAD_REQUEST)
}
