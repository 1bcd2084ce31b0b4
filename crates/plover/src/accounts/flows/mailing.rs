//! The mail of the account flows: the link it holds, and sending it (never with a pooled
//! connection held; failures are logged, never shown).

use std::time::{Duration, Instant};

use actix_web::http::header;
use actix_web::HttpRequest;

use super::token::{self, Purpose};
use crate::accounts::pages::AccountMail;
use crate::accounts::user::{Auth, UserModel};

/// The site's address in links: [`Auth::site_url`], else the request's scheme and `Host`
/// header (a header that is no host name, or none, falls back to the server's own name).
fn site<U: UserModel>(auth: &Auth<U>, req: &HttpRequest) -> String {
    if let Some(url) = &auth.settings().session.flows.site_url {
        return url.clone();
    }
    let scheme = if req.app_config().secure() {
        "https"
    } else {
        "http"
    };
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| is_host(h))
        .unwrap_or_else(|| req.app_config().host());
    format!("{scheme}://{host}")
}

/// Whether `text` is a host name or address with an optional port, and nothing else.
fn is_host(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 255
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
}

/// The user's e-mail address, if the model has one and it is not empty.
pub(super) fn address<U: UserModel>(user: &U) -> Option<String> {
    let (i, _) = U::EMAIL_FIELD.and_then(|name| U::meta().field(name))?;
    match user.field_json(i) {
        serde_json::Value::String(address) if !address.trim().is_empty() => Some(address),
        _ => None,
    }
}

/// Mails each of `users` a link for `purpose` (the reset form, or the sign-up confirmation),
/// one after the other. With no user to mail, waits as long as a mail takes to send, so that
/// the answer's time does not tell whether an account exists.
pub(super) async fn send<U: UserModel>(
    auth: &Auth<U>,
    req: &HttpRequest,
    purpose: Purpose,
    users: Vec<U>,
) {
    let flows = &auth.settings().session.flows;
    let Some(mailer) = flows.mailer.clone() else {
        return;
    };
    let limits = auth.flow_limits();
    if users.is_empty() {
        actix_web::rt::time::sleep(limits.send_time()).await;
        return;
    }
    let site = site(auth, req);
    let (kind, path, lifetime) = match purpose {
        Purpose::Reset => ("password_reset", "reset", flows.reset_lifetime),
        Purpose::Confirm => ("signup_confirm", "confirm", flows.confirm_lifetime),
    };
    for user in users {
        let Some(to) = address(&user) else { continue };
        let made = token::make(auth, purpose, &user);
        let mail = AccountMail {
            kind,
            username: user.username().to_owned(),
            link: format!("{site}{}/{path}/{made}/", auth.settings().session.prefix),
            site: site.clone(),
            valid_hours: lifetime.as_secs().div_ceil(3600).max(1),
        };
        let (subject, text) = match auth.settings().session.templates.mail(&mail) {
            Ok(composed) => composed,
            Err(e) => {
                log::error!("mail: the {kind} mail to {to} was not composed: {e}");
                continue;
            }
        };
        let started = Instant::now();
        // A failure is logged by the mailer; the person who asked learns nothing of it.
        let _ = mailer.send(mailer.message(&to, &subject, &text)).await;
        limits.sent(started.elapsed().min(Duration::from_secs(10)));
    }
}

#[cfg(test)]
mod tests {
    use super::is_host;

    #[test]
    fn a_host_header_is_a_name_and_a_port_alone() {
        for good in [
            "example.com",
            "localhost:8000",
            "127.0.0.1:5000",
            "[::1]:80",
        ] {
            assert!(is_host(good), "{good}");
        }
        for bad in ["", "evil.com/x", "a b", "example.com@evil.com", "x\r\ny"] {
            assert!(!is_host(bad), "{bad:?}");
        }
    }
}
