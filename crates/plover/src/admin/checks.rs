//! The checks every admin URL runs before its view (docs/contract.md#admin), as an actix
//! extractor: signed in (else a redirect to the login page), permitted (else 403: docs/admin.md#permissions), and for a
//! POST, a form within the size limit (urlencoded, or multipart for the import's upload; a
//! multipart body that cannot be read, or a field of it that is not UTF-8, is 400) that carries
//! the session's CSRF token (else 403) and no NUL (else 400).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use actix_session::SessionExt;
use actix_web::dev::Payload;
use actix_web::http::header::CONTENT_TYPE;
use actix_web::http::{Method, StatusCode};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};

use super::page::error_page;
use super::state::State;
use super::views::Chrome;
use crate::accounts::{current_user, session_stamp, CsrfToken, LoginRedirect, UserModel};
use crate::auth::AuthUser;
use crate::error::Error;
use crate::http::body::{check_form_text, multipart_pairs, Body};
use crate::permissions::{kept, Held};
use crate::sql::stamp;

/// A request the admin lets through to a view.
pub(super) struct Admitted<U> {
    /// The signed-in user.
    pub(super) user: U,
    /// The user's permissions.
    pub(super) held: Arc<Held>,
    /// The page's frame for this user.
    pub(super) chrome: Chrome,
    /// The decoded form fields of a POST (empty for a GET).
    pub(super) form: Vec<(String, String)>,
}

/// A request the checks refused, with what it is answered.
#[derive(Debug)]
pub(super) enum Refused {
    /// Not signed in: to the login page, back here after.
    Login(LoginRedirect),
    /// An error page, in the admin's frame once the user is known to be allowed in.
    Page(Option<Box<Chrome>>, Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Login(redirect) => redirect.fmt(f),
            Refused::Page(_, error) => error.fmt(f),
        }
    }
}

impl ResponseError for Refused {
    fn status_code(&self) -> StatusCode {
        match self {
            Refused::Login(redirect) => redirect.status_code(),
            Refused::Page(_, error) => error.status_code(),
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Refused::Login(redirect) => redirect.error_response(),
            Refused::Page(chrome, error) => error_page(chrome.as_deref(), error),
        }
    }
}

impl<U: UserModel + Clone + Send + 'static> FromRequest for Admitted<U> {
    type Error = Refused;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Refused>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move { admit(&req, payload).await })
    }
}

/// The checks, in order.
async fn admit<U: UserModel + Clone + Send + 'static>(
    req: &HttpRequest,
    payload: Payload,
) -> Result<Admitted<U>, Refused> {
    let bare = |error: Error| Refused::Page(None, error);
    let state = req
        .app_data::<web::Data<State<U>>>()
        .ok_or_else(|| bare(Error::Internal("the admin's state is not mounted".into())))?;
    let user = match current_user::<U>(req).await.map_err(bare)? {
        Some(user) => user,
        None => {
            return Err(Refused::Login(LoginRedirect::new(
                &state.auth.login_url(),
                req,
            )))
        }
    };
    let held = held(state, req, &user).await.map_err(bare)?;
    if !state.admits(&user, &held) {
        return Err(bare(Error::Forbidden));
    }
    let csrf = CsrfToken::of(&req.get_session()).map_err(bare)?;
    let post = req.method() == Method::POST;
    let chrome = state.chrome(&user, &held, csrf.value());
    let form = if post {
        let body = Body::read(req, payload).await.map_err(bare)?;
        let multipart = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
        if multipart {
            // The import's upload: its fields, the file's content as text among them.
            match Box::pin(multipart_pairs(req.headers(), body.0)).await {
                Ok(pairs) => pairs,
                Err(message) => {
                    return Err(Refused::Page(
                        Some(Box::new(chrome)),
                        Error::BadBody(message),
                    ))
                }
            }
        } else {
            body.form_pairs()
        }
    } else {
        Vec::new()
    };
    if post {
        let submitted = form
            .iter()
            .find(|(k, _)| k == "csrf_token")
            .map(|(_, v)| v.as_str());
        let checked = csrf.verify(submitted).and_then(|()| check_form_text(&form));
        if let Err(error) = checked {
            return Err(Refused::Page(Some(Box::new(chrome)), error));
        }
    }
    Ok(Admitted {
        user,
        held,
        chrome,
        form,
    })
}

/// The permissions of `user`, signed in on `req`: all for a superuser; else those kept for
/// the permissions stamp read with the session's user (no statement, no thread), or read now
/// (one statement). Without the tables of permissions, none.
async fn held<U: UserModel>(
    state: &State<U>,
    req: &HttpRequest,
    user: &U,
) -> Result<Arc<Held>, Error> {
    let user = AuthUser::of(user);
    if user.admin {
        return Ok(Arc::new(Held::superuser()));
    }
    let stamp = session_stamp(req);
    let db = state.auth.db();
    if let Some(held) = stamp.and_then(|s| kept::cached(db, user.id, s)) {
        return Ok(held);
    }
    db.run_lazy(move |lazy| {
        lazy.set_permissions_stamp(stamp);
        if stamp.is_none() && !stamp::present(lazy)? {
            return Ok(Arc::new(Held::default()));
        }
        kept::held(lazy, &user)
    })
    .await
}
