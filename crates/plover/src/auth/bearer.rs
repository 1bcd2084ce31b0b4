//! Bearer tokens: `Authorization: Bearer <token>` for the users of an [`Auth`] component, with
//! only a digest of each token stored, and revocation.

use actix_web::http::header::AUTHORIZATION;
use actix_web::http::Method;
use base64::Engine as _;
use plover_derive::RestModel;
use rand::Rng;

use super::{
    default_protected_methods, hash_secret, AuthRequest, AuthUser, Authenticator, Described, Scheme,
};
use crate::accounts::{Auth, UserModel};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::model::RestModel;

/// A bearer token of a user. The table (`plover_token`) keeps the token's digest
/// ([`hash_secret`]), never the token: the token is shown once, when it is issued
/// ([`Auth::issue_token`]). Revoke a token by setting `revoked` (the admin's form of this model
/// does it) or deleting its row. Create the table with the application's own:
/// `plover::schema::create_tables(conn, &[..., plover::auth::Token::meta()])`.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_token)]
#[rest(table, display = "{name}")]
pub struct Token {
    /// Primary key.
    pub id: i32,
    /// The primary key of the user the token stands for.
    pub user_id: i64,
    /// What the token is for (shown in the admin).
    pub name: String,
    /// `sha256$` and the hexadecimal SHA-256 of the token. A row made without one (the model
    /// admin's add form) gets a digest no token has: issue tokens with [`Auth::issue_token`] or
    /// the admin's [`TokenPanel`](crate::admin::TokenPanel).
    #[rest(unique, write_only, default = unusable_digest())]
    pub digest: String,
    /// When it was issued.
    #[rest(default = crate::value::now())]
    pub created: chrono::NaiveDateTime,
    /// A revoked token authenticates no one.
    #[rest(default = false)]
    pub revoked: bool,
}

/// A digest that no token has (`none$` and random hexadecimal).
fn unusable_digest() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("none${hex}")
}

impl<U: UserModel> Auth<U> {
    /// Issues a new bearer token for the user with primary key `user_id`, named `name`, and
    /// returns it: 32 random bytes in URL-safe base64. Only its digest is stored; the token
    /// itself cannot be shown again.
    pub fn issue_token(
        &self,
        conn: &mut Conn<'_>,
        user_id: i64,
        name: &str,
    ) -> Result<String, Error> {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        Token::insert(
            conn,
            TokenChanges {
                user_id: Some(user_id),
                name: Some(name.to_owned()),
                digest: Some(hash_secret(&token)),
                created: Some(crate::value::now()),
                revoked: Some(false),
            },
        )?;
        Ok(token)
    }

    /// Revokes the bearer token `token` (as [`issue_token`](Auth::issue_token) returned it):
    /// from now on it authenticates no one. Returns whether it was a token not yet revoked.
    pub fn revoke_token(&self, conn: &mut Conn<'_>, token: &str) -> Result<bool, Error> {
        let digest_field = Token::FIELDS.digest.index();
        match Token::load_unique(conn, digest_field, &hash_secret(token))? {
            Some(row) if !row.revoked => {
                let changes = TokenChanges {
                    revoked: Some(true),
                    ..TokenChanges::default()
                };
                Ok(Token::update(conn, row.pk(), changes)? == 1)
            }
            _ => Ok(false),
        }
    }
}

/// `Authorization: Bearer <token>` of a token issued by [`Auth::issue_token`], not revoked,
/// whose user is active, for the protected methods. The token is looked up by its digest; the
/// user is the request's user (`cx.user`), as with Basic authentication.
#[derive(Debug)]
pub struct BearerAuthentication<U: UserModel> {
    auth: Auth<U>,
    protected_methods: Vec<Method>,
}

impl<U: UserModel> BearerAuthentication<U> {
    /// Protects POST, PUT and DELETE.
    pub fn new(auth: &Auth<U>) -> BearerAuthentication<U> {
        BearerAuthentication::with_methods(auth, default_protected_methods())
    }

    /// Protects the given methods.
    pub fn with_methods(auth: &Auth<U>, protected_methods: Vec<Method>) -> BearerAuthentication<U> {
        BearerAuthentication {
            auth: auth.clone(),
            protected_methods,
        }
    }
}

/// The token of a `Bearer` `Authorization` header.
fn bearer_token(req: &AuthRequest<'_>) -> Option<String> {
    let value = req.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_owned())
}

impl<U: UserModel> Authenticator for BearerAuthentication<U> {
    fn authorize(
        &self,
        req: &AuthRequest<'_>,
        db: &mut LazyConn<'_>,
    ) -> Result<Option<AuthUser>, Error> {
        if !req.is_protected(&self.protected_methods) {
            return Ok(None);
        }
        let token = bearer_token(req).ok_or(Error::Unauthorized)?;
        let digest_field = Token::FIELDS.digest.index();
        let found = Token::load_unique(&mut db.conn()?, digest_field, &hash_secret(&token))?;
        let Some(token) = found.filter(|t| !t.revoked) else {
            return Err(Error::Unauthorized);
        };
        match self.auth.find_user_by_id_stamped(db, token.user_id)? {
            Some(user) if user.is_active() => Ok(Some(AuthUser::of(&user))),
            _ => Err(Error::Unauthorized),
        }
    }

    fn describe(&self) -> Described {
        Described {
            protected_methods: Some(self.protected_methods.clone()),
            schemes: vec![Scheme::Bearer],
        }
    }
}
