//! What the admin's user may do (docs/admin.md#permissions): what the model permissions of
//! docs/permissions.md allow on each registered model.

use crate::error::Error;
use crate::permissions::{Action, Held};

/// The four actions a user may do on one model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rights {
    /// List, show, export, history (`view`, or `change`).
    pub(crate) view: bool,
    /// The add page and importing new rows.
    pub(crate) add: bool,
    /// Saving the edit page, importing updates, and the actions that need it.
    pub(crate) change: bool,
    /// The delete page and the bulk delete.
    pub(crate) delete: bool,
}

impl Rights {
    /// What `held` allows on the model named `model` (`RestModel::meta().name`).
    pub(crate) fn of(held: &Held, model: &str) -> Rights {
        Rights {
            view: held.may(model, Action::View),
            add: held.may(model, Action::Add),
            change: held.may(model, Action::Change),
            delete: held.may(model, Action::Delete),
        }
    }

    /// Whether any of the four is allowed: the model is shown to the user.
    pub(crate) fn any(self) -> bool {
        self.view || self.add || self.change || self.delete
    }

    /// Whether `action` is allowed.
    pub(crate) fn allows(self, action: Action) -> bool {
        match action {
            Action::View => self.view,
            Action::Add => self.add,
            Action::Change => self.change,
            Action::Delete => self.delete,
        }
    }
}

/// `Ok(())` when `allowed`, else 403.
pub(crate) fn require(allowed: bool) -> Result<(), Error> {
    if allowed {
        Ok(())
    } else {
        Err(Error::Forbidden)
    }
}
