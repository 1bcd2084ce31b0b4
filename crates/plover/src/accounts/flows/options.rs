//! The settings of the flows that send mail (password reset, sign-up), as `Auth` builder
//! methods, and the check of the user model they need.

use std::time::Duration;

use crate::accounts::user::{Auth, UserModel};
use crate::mail::Mailer;
use crate::value::kind::FieldKind;

impl<U: UserModel> Auth<U> {
    /// Sends the account flows' mail through `mailer`, and so mounts the password reset views
    /// (docs/accounts.md#password-reset): `{prefix}/password_reset/` (the request form, by
    /// username or e-mail address), its `done/` page, and `{prefix}/reset/<token>/`, the
    /// mailed link's form. The user model needs an e-mail field
    /// ([`UserModel::EMAIL_FIELD`]); [`Auth::setup`] panics without one.
    ///
    /// ```
    /// # use plover::prelude::*;
    /// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text,
    /// #     email -> Text } }
    /// # #[derive(Clone, RestModel)]
    /// # #[diesel(table_name = user)]
    /// # pub struct User { pub id: i32, #[rest(username)] pub username: String,
    /// #     #[rest(password)] pub password: String, #[rest(private)] pub email: String }
    /// use plover::mail::{FolderBackend, Mailer};
    ///
    /// let db = Database::from_url("sqlite://:memory:").expect("a valid URL");
    /// let mailer = Mailer::new(FolderBackend::new("mail"), "Example <noreply@example.com>");
    /// let auth = Auth::<User>::new(db)
    ///     .secret_key(b"at least 32 bytes of random secret material")
    ///     .mailer(mailer)
    ///     .site_url("https://example.com");
    /// # let _ = auth;
    /// ```
    pub fn mailer(self, mailer: Mailer) -> Auth<U> {
        self.with(|s| s.session.flows.mailer = Some(mailer))
    }

    /// Mounts the sign-up views as well (default off; needs [`Auth::mailer`] and an active
    /// field, [`UserModel::ACTIVE_FIELD`]): `{prefix}/signup/` creates an inactive user and
    /// mails a link to `{prefix}/confirm/<token>/`, which activates it once.
    pub fn signup(self, enabled: bool) -> Auth<U> {
        self.with(|s| s.session.flows.signup = enabled)
    }

    /// The site's address in mailed links (`https://example.com`, without a trailing slash).
    /// Without it, a link is made of the request's `Host` header, which a client chooses:
    /// set it in production, or have the proxy in front refuse unknown hosts.
    pub fn site_url(self, url: &str) -> Auth<U> {
        let url = url.trim_end_matches('/').to_owned();
        self.with(|s| s.session.flows.site_url = Some(url))
    }

    /// How long a password reset link is valid (default 1 hour). A link is also void once
    /// used, once the password changes, and once the user logs in (with
    /// [`UserModel::LAST_LOGIN_FIELD`]).
    pub fn reset_link_lifetime(self, lifetime: Duration) -> Auth<U> {
        self.with(|s| s.session.flows.reset_lifetime = lifetime)
    }

    /// How long a sign-up confirmation link is valid (default 7 days). A link is also void
    /// once used.
    pub fn signup_link_lifetime(self, lifetime: Duration) -> Auth<U> {
        self.with(|s| s.session.flows.confirm_lifetime = lifetime)
    }

    /// The password reset request view's path, `{prefix}/password_reset/`.
    pub fn password_reset_url(&self) -> String {
        self.flow_url("password_reset/")
    }

    /// The sign-up view's path, `{prefix}/signup/`.
    pub fn signup_url(&self) -> String {
        self.flow_url("signup/")
    }
}

/// Panics unless the user model has what the mailed flows need: a text e-mail field, and for
/// sign-up an active field.
pub(super) fn check_model<U: UserModel>(signup: bool) {
    let meta = U::meta();
    let email = U::EMAIL_FIELD.and_then(|name| meta.field(name));
    assert!(
        email.is_some_and(|(_, f)| f.kind == FieldKind::Text),
        "plover: password reset mails need an e-mail address, but user model `{}` has no text \
         field `{}`: add one, or name it in UserModel::EMAIL_FIELD",
        meta.name,
        U::EMAIL_FIELD.unwrap_or("email"),
    );
    if signup {
        assert!(
            U::ACTIVE_FIELD.is_some_and(|name| meta.field(name).is_some()),
            "plover: sign-up creates inactive users, but user model `{}` has no active field: \
             mark a bool field #[rest(active)]",
            meta.name,
        );
    }
}
