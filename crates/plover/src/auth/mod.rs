//! Authentication of REST requests (docs/contract.md#authentication).

mod apikey;
mod basic;
mod bearer;
mod headers;

use actix_web::http::Method;

pub(crate) use apikey::api_key_of;
pub use apikey::{hash_secret, ApiKeyAuthentication};
pub use basic::{basic_credentials, AdminAuthentication, UserAuthentication};
pub use bearer::{BearerAuthentication, Token, TokenChanges};
pub use headers::Headers;

use crate::db::LazyConn;
use crate::error::Error;

/// The user a request was authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthUser {
    /// The user's primary key.
    pub id: i64,
    /// The user's name.
    pub username: String,
    /// Whether the user has the admin permission.
    pub admin: bool,
}

impl AuthUser {
    /// The identity the REST layer keeps of `user`.
    pub(crate) fn of<U: crate::accounts::UserModel>(user: &U) -> AuthUser {
        AuthUser {
            id: user.pk(),
            username: user.username().to_owned(),
            admin: user.is_admin(),
        }
    }
}

/// What an authenticator may look at.
#[derive(Debug, Clone, Copy)]
pub struct AuthRequest<'a> {
    /// The HTTP method.
    pub method: &'a Method,
    /// The client's address (the connection's peer; `None` when unknown): failed logins are
    /// throttled, and password checks shared, per address.
    pub client: Option<std::net::IpAddr>,
    /// The request headers.
    pub headers: &'a Headers,
    /// The decoded query string pairs.
    pub query: &'a [(String, String)],
    /// The decoded form fields of the body (empty for JSON bodies).
    pub form: &'a [(String, String)],
}

impl AuthRequest<'_> {
    /// Whether `protected` lists this request's method (HEAD counts as GET).
    pub fn is_protected(&self, protected: &[Method]) -> bool {
        let method = if self.method == Method::HEAD {
            &Method::GET
        } else {
            self.method
        };
        protected.contains(method)
    }
}

/// A way a client proves who it is, as the API description names it (OpenAPI security
/// schemes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// HTTP Basic: `Authorization: Basic base64(username:password)`.
    Basic,
    /// A `key` and a `secret`, both in the query string, or both in headers of those names.
    ApiKey,
    /// `Authorization: Bearer <token>`.
    Bearer,
}

/// What an authenticator tells the API description about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The verbs that need credentials (HEAD counts as GET); `None` when the authenticator
    /// cannot tell, and then every operation is described as possibly answering 401.
    pub protected_methods: Option<Vec<Method>>,
    /// The ways to give credentials; empty when no credentials are accepted (the protected
    /// verbs are refused to everyone).
    pub schemes: Vec<Scheme>,
}

/// Decides whether a request may proceed. Called for every request of a resource.
pub trait Authenticator: Send + Sync + 'static {
    /// `Ok(Some(user))`: authenticated; `Ok(None)`: allowed without a user (an unprotected
    /// method); `Err(Error::Unauthorized)`: refused with the 401 of
    /// docs/contract.md#authentication.
    ///
    /// `db` hands out a pooled connection on first use: release it
    /// ([`LazyConn::release`]) before any slow check such as a password hash, so that a flood
    /// of wrong credentials never holds the pool.
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error>;

    /// The verbs this authenticator protects and how a client gives credentials, for the API
    /// description (`{prefix}/openapi.json`). The default says nothing is known: every
    /// operation may answer 401, and no security scheme is named.
    fn describe(&self) -> Described {
        Described {
            protected_methods: None,
            schemes: Vec::new(),
        }
    }
}

/// The default verbs that need authorization: POST, PUT and DELETE.
pub fn default_protected_methods() -> Vec<Method> {
    vec![Method::POST, Method::PUT, Method::DELETE]
}

/// Base authentication: the `protected_methods` are refused, everything else is allowed.
/// With the default methods this is the read-only API (docs/contract.md#authentication).
#[derive(Debug, Clone)]
pub struct Authentication {
    protected_methods: Vec<Method>,
}

impl Default for Authentication {
    fn default() -> Self {
        Authentication::new(default_protected_methods())
    }
}

impl Authentication {
    /// Refuses the given methods (`vec![]` allows every method to everyone).
    pub fn new(protected_methods: Vec<Method>) -> Authentication {
        Authentication { protected_methods }
    }
}

impl Authenticator for Authentication {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        _db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        if req.is_protected(&self.protected_methods) {
            Err(Error::Unauthorized)
        } else {
            Ok(None)
        }
    }

    fn describe(&self) -> Described {
        Described {
            protected_methods: Some(self.protected_methods.clone()),
            schemes: Vec::new(),
        }
    }
}
