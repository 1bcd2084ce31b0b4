//! What the admin's handlers share: the registered models and panels, the authentication,
//! the permission, and the frame of its pages.

use std::sync::Arc;

use super::panel::Panel;
use super::prepared::AdminModel;
use super::rights::Rights;
use super::views::Chrome;
use crate::accounts::{Auth, UserModel};
use crate::permissions::Held;

/// An application's rule of who enters the admin.
pub(super) type EntryRule<U> = Arc<dyn Fn(&U) -> bool + Send + Sync>;

/// Everything the handlers need, shared by the workers.
pub(super) struct State<U: UserModel> {
    pub(super) auth: Auth<U>,
    pub(super) prefix: String,
    /// The application's entry rule ([`Admin::permission`](super::Admin::permission)), if it
    /// set one; else a user enters who holds a permission on a registered model.
    pub(super) permission: Option<EntryRule<U>>,
    pub(super) models: Vec<Arc<dyn AdminModel>>,
    pub(super) panels: Vec<Panel>,
}

impl<U: UserModel> State<U> {
    /// Whether `user`, who holds `held`, may enter: the application's rule where it set one,
    /// else a superuser or a holder of a permission on a registered model.
    pub(super) fn admits(&self, user: &U, held: &Held) -> bool {
        match &self.permission {
            Some(check) => check(user),
            None => {
                held.is_superuser()
                    || self
                        .models
                        .iter()
                        .any(|m| Rights::of(held, m.model_name()).any())
            }
        }
    }

    /// The registered models `held` may see (view or change).
    pub(super) fn visible(&self, held: &Held) -> Vec<Arc<dyn AdminModel>> {
        (self.models.iter())
            .filter(|m| Rights::of(held, m.model_name()).view)
            .cloned()
            .collect()
    }

    /// The frame of the admin's pages for `user`, who holds `held` and whose session's CSRF
    /// token is `csrf`: the navigation lists the models `held` may view (their index) or only
    /// add to (their add page).
    pub(super) fn chrome(&self, user: &U, held: &Held, csrf: &str) -> Chrome {
        let prefix = &self.prefix;
        Chrome {
            prefix: prefix.clone(),
            user: user.username().to_owned(),
            logout: format!("{}?next={prefix}/", self.auth.logout_url()),
            models: (self.models.iter())
                .filter_map(|m| {
                    let rights = Rights::of(held, m.model_name());
                    let page = match (rights.view, rights.add) {
                        (true, _) => "",
                        (false, true) => "add/",
                        (false, false) => return None,
                    };
                    Some((
                        m.title().to_owned(),
                        format!("{prefix}/{}/{page}", m.name()),
                    ))
                })
                .collect(),
            csrf: csrf.to_owned(),
            notice: None,
            breadcrumbs: Vec::new(),
        }
    }
}
