//! What the commands do with the accounts, the user model's type erased: the commands are then
//! compiled once, in Plover, not again in each application's `main` for its user model.

use std::sync::Arc;

use actix_session::storage::CookieSessionStore;
use actix_session::SessionMiddleware;

use crate::accounts::{Auth, UserModel};
use crate::db::Conn;
use crate::error::Error;

/// Makes the session middleware of a served app (one per worker).
pub(super) type Session = Arc<dyn Fn() -> SessionMiddleware<CookieSessionStore> + Send + Sync>;

/// The accounts ([`Auth`]) as the commands use them.
pub(super) trait Accounts {
    /// The key and the name of the user named `name`.
    fn find(&self, c: &mut Conn<'_>, name: &str) -> Result<Option<(i64, String)>, Error>;

    /// Sets the password of the user with key `id` (its sessions end).
    fn set_password(&self, c: &mut Conn<'_>, id: i64, password: &str) -> Result<(), Error>;

    /// Creates an active administrator; its name and key.
    fn create_superuser(
        &self,
        c: &mut Conn<'_>,
        username: &str,
        password: &str,
        fields: &[(&str, serde_json::Value)],
    ) -> Result<(String, i64), Error>;

    /// The session middleware of the served app.
    fn session(&self) -> Session;
}

impl<U: UserModel + Clone + Send + 'static> Accounts for Auth<U> {
    fn find(&self, c: &mut Conn<'_>, name: &str) -> Result<Option<(i64, String)>, Error> {
        let user = self.find_user(c, name)?;
        Ok(user.map(|u| (u.pk(), u.username().to_owned())))
    }

    fn set_password(&self, c: &mut Conn<'_>, id: i64, password: &str) -> Result<(), Error> {
        let user = (self.find_user_by_id(c, id)?)
            .ok_or_else(|| Error::Internal(format!("no user has the key {id}")))?;
        Auth::set_password(self, c, &user, password)
    }

    fn create_superuser(
        &self,
        c: &mut Conn<'_>,
        username: &str,
        password: &str,
        fields: &[(&str, serde_json::Value)],
    ) -> Result<(String, i64), Error> {
        let user = self.create_user_with(c, username, password, true, fields)?;
        Ok((user.username().to_owned(), user.pk()))
    }

    fn session(&self) -> Session {
        let auth = self.clone();
        Arc::new(move || auth.session_middleware())
    }
}
