//! API-key authentication: a model with `key` and `secret` fields.

use std::marker::PhantomData;

use actix_web::http::Method;
use serde_json::Value;
use subtle::ConstantTimeEq;

use super::{default_protected_methods, AuthRequest, AuthUser, Authenticator, Described, Scheme};
use crate::accounts::throttle::{Refusal, Store, Throttle};
use crate::accounts::LoginLimits;
use crate::db::pending::{self, Author};
use crate::db::LazyConn;
use crate::error::Error;
use crate::model::RestModel;
use crate::query::{Filter, Op, Param, Select};
use crate::server::ClientKey;

/// Checks a `key`/`secret` pair against the rows of the model `K`. The pair is read from the
/// query string, then from headers named `key` and `secret`, then from form fields; the first
/// source that holds both is used.
///
/// The `secret` column holds the secret itself, or, with
/// [`ApiKeyAuthentication::hashed_secrets`], its digest ([`hash_secret`]): a leaked table then
/// gives no usable secret. Either way the comparison takes constant time.
///
/// Wrong pairs are throttled as wrong passwords are ([`LoginLimits`]): by default the 6th
/// failure for one key from one address within 15 minutes, and the 51st from one address, are
/// answered 429 with `Retry-After` without a look at the secret, with growing delays. The
/// counts live in the database (table `plover_login_failure`) on PostgreSQL, in the process on
/// SQLite.
#[derive(Debug)]
pub struct ApiKeyAuthentication<K: RestModel> {
    protected_methods: Vec<Method>,
    hashed: bool,
    throttle: Throttle,
    _model: PhantomData<fn() -> K>,
}

/// The digest of an API-key secret as [`ApiKeyAuthentication::hashed_secrets`] stores it:
/// `sha256$` and the SHA-256 of the secret in hexadecimal. A fast hash fits: secrets are long
/// random strings, not passwords people choose.
///
/// ```
/// let stored = plover::auth::hash_secret("s3cr3t-from-the-key-issuer");
/// assert!(stored.starts_with("sha256$") && stored.len() == 7 + 64);
/// ```
pub fn hash_secret(secret: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(secret.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256$");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

impl<K: RestModel> Default for ApiKeyAuthentication<K> {
    fn default() -> Self {
        ApiKeyAuthentication::new(default_protected_methods())
    }
}

impl<K: RestModel> ApiKeyAuthentication<K> {
    /// Protects the given methods. Panics if `K` has no `key` or no `secret` field.
    pub fn new(protected_methods: Vec<Method>) -> ApiKeyAuthentication<K> {
        let meta = K::meta();
        for name in ["key", "secret"] {
            assert!(
                meta.field(name).is_some(),
                "plover: ApiKeyAuthentication needs a `{name}` field on `{}`",
                meta.name
            );
        }
        ApiKeyAuthentication {
            protected_methods,
            hashed: false,
            throttle: Self::throttle(LoginLimits::default()),
            _model: PhantomData,
        }
    }

    fn throttle(limits: LoginLimits) -> Throttle {
        Throttle::new(limits, &format!("apikey:{}", K::meta().table), Store::Auto).of_keys()
    }

    /// How wrong pairs are throttled (default [`LoginLimits::default`]; `per_username` counts
    /// the failures of one key from one address).
    pub fn limits(mut self, limits: LoginLimits) -> ApiKeyAuthentication<K> {
        self.throttle = Self::throttle(limits);
        self
    }

    /// The `secret` column holds digests made by [`hash_secret`], not secrets.
    pub fn hashed_secrets(mut self) -> ApiKeyAuthentication<K> {
        self.hashed = true;
        self
    }
}

/// The `key`/`secret` pair of a request: from the query string, then from headers named `key`
/// and `secret`, then from form fields; the first source that holds both.
fn pair(req: &AuthRequest<'_>) -> Option<(String, String)> {
    let from_pairs = |pairs: &[(String, String)]| {
        let get = |n: &str| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        Some((get("key")?, get("secret")?))
    };
    let from_headers = || {
        let get = |n: &str| req.headers.get(n)?.to_str().ok().map(str::to_owned);
        Some((get("key")?, get("secret")?))
    };
    from_pairs(req.query)
        .or_else(from_headers)
        .or_else(|| from_pairs(req.form))
}

/// The `key` of a request's API-key pair, if it has one (for rate limits by key).
pub(crate) fn api_key_of(req: &AuthRequest<'_>) -> Option<String> {
    pair(req).map(|(key, _)| key)
}

impl<K: RestModel> Authenticator for ApiKeyAuthentication<K> {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        if !req.is_protected(&self.protected_methods) {
            return Ok(None);
        }
        let (key, secret) = pair(req).ok_or(Error::Unauthorized)?;
        if key.is_empty() || secret.is_empty() {
            return Err(Error::Unauthorized);
        }
        for (name, text) in [("key", &key), ("secret", &secret)] {
            crate::value::check_text(text).map_err(|m| Error::param(name, m))?;
        }
        let client = ClientKey::of(req.client);
        let counted = match self.throttle.check(db, client, &key) {
            Ok(counted) => counted,
            Err(wait) => {
                self.throttle.refused(client, Refusal::Throttled);
                return Err(Error::TooManyRequests(wait));
            }
        };
        let meta = K::meta();
        let field = |name: &str| {
            meta.field(name)
                .map(|(i, _)| i)
                .ok_or_else(|| Error::Internal(format!("API key model has no field '{name}'")))
        };
        let (key_field, secret_field) = (field("key")?, field("secret")?);
        let select = Select {
            filters: vec![Filter {
                path: vec![key_field],
                op: Op::Eq,
                values: vec![Param::Text(key.clone())],
            }],
            limit: Some(1),
            ..Select::default()
        };
        let row = K::load(&mut db.conn()?, &select)?.into_iter().next();
        let id = row.as_ref().map(|r| r.pk());
        let stored = row.map(|r| r.field_json(secret_field));
        let given = if self.hashed {
            hash_secret(&secret)
        } else {
            secret
        };
        let ok = match &stored {
            Some(Value::String(s)) => bool::from(s.as_bytes().ct_eq(given.as_bytes())),
            _ => false,
        };
        if ok {
            if counted {
                self.throttle.succeeded(db, client, &key);
            }
            if let Some(id) = id {
                // The request's writes are this key's (docs/changes.md).
                pending::set_author(Author::ApiKey(id));
            }
            Ok(None)
        } else {
            self.throttle.failed(db, client, &key);
            self.throttle.refused(client, Refusal::Wrong);
            Err(Error::Unauthorized)
        }
    }

    fn describe(&self) -> Described {
        Described {
            protected_methods: Some(self.protected_methods.clone()),
            schemes: vec![Scheme::ApiKey],
        }
    }
}
