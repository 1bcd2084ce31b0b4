//! The admin's bearer tokens: a panel that issues a token for a user and shows it once; the
//! tokens themselves are listed, revoked and deleted through `ModelAdmin::<Token>`.

use std::sync::Mutex;

use super::panel::{AdminPanel, PanelData, PanelForm};
use crate::accounts::{Auth, UserModel};
use crate::auth::Token;
use crate::db::Conn;
use crate::error::Error;
use crate::model::RestModel;

/// A dashboard panel that issues bearer tokens ([`BearerAuthentication`](
/// crate::auth::BearerAuthentication)): a form takes a username and issues a token for that
/// user; the next rendering of the panel (the page the form's answer leads to) shows the token,
/// once, and it is never shown again (only its digest is stored). Register
/// `ModelAdmin::<Token>::new()` beside it to list tokens, revoke them (the `revoked` box) or
/// delete them.
///
/// ```
/// # use plover::prelude::*;
/// # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text } }
/// # #[derive(Clone, RestModel)] #[diesel(table_name = user)]
/// # pub struct User { pub id: i32, pub username: String, #[rest(write_only)] pub password: String }
/// # impl UserModel for User {
/// #     fn username(&self) -> &str { &self.username }
/// #     fn password_hash(&self) -> &str { &self.password }
/// #     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
/// # }
/// use plover::admin::{Admin, ModelAdmin, TokenPanel};
/// use plover::auth::Token;
///
/// let db = Database::from_url("sqlite://:memory:").unwrap();
/// let auth = Auth::<User>::new(db);
/// let mut admin = Admin::new(&auth);
/// admin
///     .register(ModelAdmin::<Token>::new())
///     .register_panel("Bearer tokens", TokenPanel::new(&auth));
/// ```
#[derive(Debug)]
pub struct TokenPanel<U: UserModel> {
    auth: Auth<U>,
    /// The token issued last, until it has been shown.
    issued: Mutex<Option<String>>,
}

impl<U: UserModel> TokenPanel<U> {
    /// A panel that issues tokens for the users of `auth`.
    pub fn new(auth: &Auth<U>) -> TokenPanel<U> {
        TokenPanel {
            auth: auth.clone(),
            issued: Mutex::new(None),
        }
    }
}

impl<U: UserModel> AdminPanel for TokenPanel<U> {
    fn data(&self, conn: &mut Conn<'_>) -> Result<PanelData, Error> {
        let shown = self
            .issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let active = crate::sql::count(
            conn,
            Token::meta(),
            &crate::query::Select {
                filters: vec![crate::query::Filter {
                    path: vec![Token::FIELDS.revoked.index()],
                    op: crate::query::Op::Eq,
                    values: vec![crate::query::Param::Bool(false)],
                }],
                ..Default::default()
            },
        )?;
        let mut items = vec![format!("{active} tokens in use")];
        if let Some(token) = shown {
            items.push(format!(
                "New token (copy it now, it is not shown again): {token}"
            ));
        }
        Ok(PanelData {
            items,
            forms: vec![PanelForm {
                action: "issue".into(),
                field: "username".into(),
                label: "Issue a token for the user".into(),
                button: "Issue".into(),
            }],
        })
    }

    fn post(
        &self,
        action: &str,
        form: &[(String, String)],
        conn: &mut Conn<'_>,
    ) -> Result<(), Error> {
        if action != "issue" {
            return Err(Error::NotFound);
        }
        let username = form
            .iter()
            .find(|(k, _)| k == "username")
            .map(|(_, v)| v.trim())
            .unwrap_or_default();
        let user = self
            .auth
            .find_user(conn, username)?
            .ok_or_else(|| Error::field("username", "no such user"))?;
        let name = format!("issued in the admin for {}", user.username());
        let token = conn.transaction(|conn| self.auth.issue_token(conn, user.pk(), &name))?;
        *self
            .issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(token);
        Ok(())
    }
}
