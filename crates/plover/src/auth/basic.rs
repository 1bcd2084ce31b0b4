//! HTTP Basic authentication against the users of an [`Auth`] component.

use actix_web::http::header::AUTHORIZATION;
use actix_web::http::Method;
use base64::Engine as _;

use super::{
    default_protected_methods, AuthRequest, AuthUser, Authenticator, Described, Headers, Scheme,
};
use crate::accounts::{Auth, Credentials, UserModel};
use crate::db::LazyConn;
use crate::error::Error;

/// The `(username, password)` of a Basic `Authorization` header: UTF-8, split at the first
/// colon (a password may hold colons).
pub fn basic_credentials(headers: &Headers) -> Option<(String, String)> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (user, password) = text.split_once(':')?;
    if user.is_empty() {
        return None;
    }
    Some((user.to_owned(), password.to_owned()))
}

/// Basic credentials of an active user of the accounts component, for the protected methods.
#[derive(Debug)]
pub struct UserAuthentication<U: UserModel> {
    auth: Auth<U>,
    protected_methods: Vec<Method>,
    admin_only: bool,
}

impl<U: UserModel> UserAuthentication<U> {
    /// Protects POST, PUT and DELETE.
    pub fn new(auth: &Auth<U>) -> UserAuthentication<U> {
        UserAuthentication::with_methods(auth, default_protected_methods())
    }

    /// Protects the given methods.
    pub fn with_methods(auth: &Auth<U>, protected_methods: Vec<Method>) -> UserAuthentication<U> {
        UserAuthentication {
            auth: auth.clone(),
            protected_methods,
            admin_only: false,
        }
    }
}

impl<U: UserModel> Authenticator for UserAuthentication<U> {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        if !req.is_protected(&self.protected_methods) {
            return Ok(None);
        }
        let (username, password) = basic_credentials(req.headers).ok_or(Error::Unauthorized)?;
        // Database trouble counts as no such user: this never fails but with a 401.
        let found = self.auth.find_user_stamped(db, &username).ok().flatten();
        // A full password check runs without a pooled connection.
        let creds = Credentials::new(req.client, &username, &password);
        match self
            .auth
            .verify_releasing(creds, found, db)?
            .map(|u| AuthUser::of(&u))
        {
            Some(user) if user.admin || !self.admin_only => Ok(Some(user)),
            _ => Err(Error::Unauthorized),
        }
    }

    fn describe(&self) -> Described {
        Described {
            protected_methods: Some(self.protected_methods.clone()),
            schemes: vec![Scheme::Basic],
        }
    }
}

/// Like [`UserAuthentication`], and the user must be an admin; a valid non-admin user gets the
/// same 401.
#[derive(Debug)]
pub struct AdminAuthentication<U: UserModel>(UserAuthentication<U>);

impl<U: UserModel> AdminAuthentication<U> {
    /// Protects POST, PUT and DELETE.
    pub fn new(auth: &Auth<U>) -> AdminAuthentication<U> {
        AdminAuthentication::with_methods(auth, default_protected_methods())
    }

    /// Protects the given methods.
    pub fn with_methods(auth: &Auth<U>, protected_methods: Vec<Method>) -> AdminAuthentication<U> {
        let mut inner = UserAuthentication::with_methods(auth, protected_methods);
        inner.admin_only = true;
        AdminAuthentication(inner)
    }
}

impl<U: UserModel> Authenticator for AdminAuthentication<U> {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        self.0.authorize(req, db)
    }

    fn describe(&self) -> Described {
        self.0.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn header(value: &str) -> Headers {
        HeaderValue::from_str(value)
            .into_iter()
            .map(|v| (AUTHORIZATION, v))
            .collect()
    }

    #[test]
    fn splits_at_first_colon_and_decodes_utf8() {
        let enc = base64::engine::general_purpose::STANDARD.encode("jos\u{e9}:pa:ss");
        assert_eq!(
            basic_credentials(&header(&format!("Basic {enc}"))),
            Some(("jos\u{e9}".to_owned(), "pa:ss".to_owned()))
        );
    }

    #[test]
    fn malformed_headers() {
        for h in [
            "Basic",
            "Basic ",
            "Basic !!!",
            "Bearer abc",
            "Basic bm8tY29sb24=",
            "Basic Og==",
        ] {
            assert_eq!(basic_credentials(&header(h)), None, "{h}");
        }
    }
}
