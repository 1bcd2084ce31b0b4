//! The checks every admin URL runs before its view (docs/contract.md#admin), as an actix
//! extractor: signed in (else a redirect to the login page), permitted (else 403), and for a
//! POST, a form within the size limit that carries the session's CSRF token (else 403) and no
//! NUL (else 400).

use std::future::Future;
use std::pin::Pin;

use actix_session::SessionExt;
use actix_web::dev::Payload;
use actix_web::http::{Method, StatusCode};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};

use super::page::error_page;
use super::state::State;
use super::views::Chrome;
use crate::accounts::{current_user, CsrfToken, LoginRedirect, UserModel};
use crate::body::{check_form_text, Body};
use crate::error::Error;

/// A request the admin lets through to a view.
pub(super) struct Admitted<U> {
    /// The signed-in user.
    pub(super) user: U,
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
    if !(state.permission)(&user) {
        return Err(bare(Error::Forbidden));
    }
    let csrf = CsrfToken::of(&req.get_session()).map_err(bare)?;
    let post = req.method() == Method::POST;
    let form = if post {
        Body::read(req, payload).await.map_err(bare)?.form_pairs()
    } else {
        Vec::new()
    };
    let chrome = state.chrome(&user, csrf.value());
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
    Ok(Admitted { user, chrome, form })
}
