//! What the admin's handlers share: the registered models and panels, the authentication,
//! the permission, and the frame of its pages.

use std::sync::Arc;

use super::panel::Panel;
use super::prepared::AdminModel;
use super::views::Chrome;
use crate::accounts::{Auth, UserModel};

/// Everything the handlers need, shared by the workers.
pub(super) struct State<U: UserModel> {
    pub(super) auth: Auth<U>,
    pub(super) prefix: String,
    pub(super) permission: Arc<dyn Fn(&U) -> bool + Send + Sync>,
    pub(super) models: Vec<Arc<dyn AdminModel>>,
    pub(super) panels: Vec<Panel>,
}

impl<U: UserModel> State<U> {
    /// The frame of the admin's pages for `user`, whose session's CSRF token is `csrf`.
    pub(super) fn chrome(&self, user: &U, csrf: &str) -> Chrome {
        let prefix = &self.prefix;
        Chrome {
            prefix: prefix.clone(),
            user: user.username().to_owned(),
            logout: format!("{}?next={prefix}/", self.auth.logout_url()),
            models: (self.models.iter())
                .map(|m| (m.name().to_owned(), format!("{prefix}/{}/", m.name())))
                .collect(),
            csrf: csrf.to_owned(),
            notice: None,
        }
    }
}
