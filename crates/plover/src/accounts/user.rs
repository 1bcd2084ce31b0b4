//! The user-model trait and `Auth`, which finds and checks users.

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use super::password::{check_password, make_password, PasswordError, DEFAULT_COST};
use crate::auth::{AuthUser, CredentialCache};
use crate::db::Conn;
use crate::error::Error;
use crate::model::RestModel;
use crate::query::{Filter, Op, Param, Select};

/// A model that is a user of the accounts component (flask-peewee's `BaseUser`).
///
/// ```
/// # use plover::prelude::*;
/// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text,
/// #     active -> Bool, admin -> Bool } }
/// #[derive(RestModel)]
/// #[diesel(table_name = user)]
/// #[rest(exclude = "password")]
/// pub struct User {
///     pub id: i32,
///     pub username: String,
///     pub password: String,
///     pub active: bool,
///     pub admin: bool,
/// }
///
/// impl UserModel for User {
///     fn username(&self) -> &str { &self.username }
///     fn password_hash(&self) -> &str { &self.password }
///     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
///     fn is_active(&self) -> bool { self.active }
///     fn is_admin(&self) -> bool { self.admin }
/// }
/// ```
pub trait UserModel: RestModel {
    /// The field that holds the username (unique).
    const USERNAME_FIELD: &'static str = "username";

    /// The username.
    fn username(&self) -> &str;
    /// The stored password hash (`""` = no usable password).
    fn password_hash(&self) -> &str;
    /// The stored password hash, to replace it.
    fn password_hash_mut(&mut self) -> &mut String;
    /// Whether the user may log in (default: always).
    fn is_active(&self) -> bool {
        true
    }
    /// Whether the user has the admin permission (default: never).
    fn is_admin(&self) -> bool {
        false
    }

    /// Stores a new bcrypt hash of `raw` (at the default cost).
    fn set_password(&mut self, raw: &str) -> Result<(), PasswordError> {
        *self.password_hash_mut() = make_password(raw, DEFAULT_COST)?;
        Ok(())
    }

    /// Whether `raw` is this user's password.
    fn check_password(&self, raw: &str) -> bool {
        check_password(raw, self.password_hash())
    }
}

/// The accounts component: finds users and checks their credentials. REST authentication
/// (`UserAuthentication`) and, later, the session login views share one `Auth`.
#[derive(Debug)]
pub struct Auth<U: UserModel> {
    inner: Arc<AuthInner>,
    _user: PhantomData<fn() -> U>,
}

#[derive(Debug)]
struct AuthInner {
    cost: u32,
    cache: CredentialCache,
    /// A hash at `cost`, checked against for unknown usernames.
    dummy: OnceLock<String>,
}

impl<U: UserModel> Clone for Auth<U> {
    fn clone(&self) -> Self {
        Auth {
            inner: self.inner.clone(),
            _user: PhantomData,
        }
    }
}

impl<U: UserModel> Default for Auth<U> {
    fn default() -> Self {
        Auth::new()
    }
}

impl<U: UserModel> Auth<U> {
    /// An accounts component for the user model `U`.
    pub fn new() -> Auth<U> {
        Auth {
            inner: Arc::new(AuthInner {
                cost: DEFAULT_COST,
                cache: CredentialCache::default(),
                dummy: OnceLock::new(),
            }),
            _user: PhantomData,
        }
    }

    /// Sets the bcrypt cost of [`Auth::make_password`] (4 to 31; tests use 4).
    pub fn with_cost(cost: u32) -> Auth<U> {
        Auth {
            inner: Arc::new(AuthInner {
                cost,
                cache: CredentialCache::default(),
                dummy: OnceLock::new(),
            }),
            _user: PhantomData,
        }
    }

    /// Hashes a password at this component's cost.
    pub fn make_password(&self, raw: &str) -> Result<String, PasswordError> {
        make_password(raw, self.inner.cost)
    }

    /// The user named `username`, active or not.
    pub fn find_user(&self, conn: &mut Conn<'_>, username: &str) -> Result<Option<U>, Error> {
        let meta = U::meta();
        let (field, _) = meta.field(U::USERNAME_FIELD).ok_or_else(|| {
            Error::Internal(format!("user model has no field '{}'", U::USERNAME_FIELD))
        })?;
        let select = Select {
            filters: vec![Filter {
                path: vec![field],
                op: Op::Eq,
                values: vec![Param::Text(username.to_owned())],
            }],
            limit: Some(1),
            ..Select::default()
        };
        Ok(U::load(conn, &select)?.into_iter().next())
    }

    /// The active user with these credentials, or `None`; database trouble counts as `None`,
    /// so that this never fails.
    pub fn authenticate(&self, conn: &mut Conn<'_>, username: &str, password: &str) -> Option<U> {
        let user = match self.find_user(conn, username) {
            Ok(Some(user)) => user,
            _ => {
                // Spend the time a real check would, so that timing does not reveal names.
                let dummy = self.inner.dummy.get_or_init(|| {
                    make_password("plover-dummy", self.inner.cost).unwrap_or_default()
                });
                let _ = check_password(password, dummy);
                return None;
            }
        };
        let verified = self
            .inner
            .cache
            .check(username, user.password_hash(), password, || {
                user.check_password(password)
            });
        (verified && user.is_active()).then_some(user)
    }

    /// `authenticate`, as the identity the REST layer keeps.
    pub(crate) fn authenticate_user(
        &self,
        conn: &mut Conn<'_>,
        username: &str,
        password: &str,
    ) -> Option<AuthUser> {
        self.authenticate(conn, username, password)
            .map(|u| AuthUser {
                id: u.pk(),
                username: u.username().to_owned(),
                admin: u.is_admin(),
            })
    }
}
