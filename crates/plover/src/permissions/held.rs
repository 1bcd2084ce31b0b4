//! What a user may do: the permissions held directly and through groups, read in one
//! statement, and the model actions they allow.

use std::collections::BTreeSet;

use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;

use crate::auth::AuthUser;
use crate::db::{by_engine, Conn};
use crate::error::Error;

/// One of the four actions every model has a permission for, named `<model>.<action>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read (list, detail, aggregate, change feed); `change` implies it.
    View,
    /// Create.
    Add,
    /// Update.
    Change,
    /// Delete.
    Delete,
}

impl Action {
    /// Every action, in the order above.
    pub const ALL: [Action; 4] = [Action::View, Action::Add, Action::Change, Action::Delete];

    /// The action's name in a permission: `view`, `add`, `change` or `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::View => "view",
            Action::Add => "add",
            Action::Change => "change",
            Action::Delete => "delete",
        }
    }

    /// The permission of this action on the model named `model` (`RestModel::meta().name`):
    /// `ticket.change`.
    pub fn on(self, model: &str) -> String {
        format!("{model}.{}", self.as_str())
    }
}

/// The permissions a user holds: directly, through the groups the user is in, or all of them
/// as a superuser (the user model's admin flag).
///
/// ```
/// use plover::permissions::{Action, Held};
///
/// let support = Held::of_names(["ticket.change", "user.view"]);
/// assert!(support.has("user.view"));
/// assert!(support.may("ticket", Action::View), "change implies view");
/// assert!(!support.may("ticket", Action::Delete));
/// assert!(Held::superuser().may("anything", Action::Delete));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    superuser: bool,
    names: BTreeSet<String>,
}

#[derive(diesel::QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    permission: String,
}

impl Held {
    /// Every permission (a superuser's).
    pub fn superuser() -> Held {
        Held {
            superuser: true,
            names: BTreeSet::new(),
        }
    }

    /// Exactly these permissions.
    pub fn of_names<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Held {
        Held {
            superuser: false,
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The permissions of `user`: all for an administrator, else those of the tables
    /// `plover_user_permission` and `plover_group_permission` (through `plover_user_group`),
    /// read in one statement.
    ///
    /// # Errors
    /// The database's error; a missing table is an [`Error::Internal`] that says how to
    /// create the tables.
    pub fn of(conn: &mut Conn<'_>, user: &AuthUser) -> Result<Held, Error> {
        if user.admin {
            return Ok(Held::superuser());
        }
        Held::of_user_id(conn, user.id)
    }

    /// The permissions held by the user with primary key `user_id`, directly or through its
    /// groups (superuser or not: the caller knows).
    ///
    /// # Errors
    /// As [`Held::of`].
    pub fn of_user_id(conn: &mut Conn<'_>, user_id: i64) -> Result<Held, Error> {
        let rows: Vec<Name> = by_engine!(
            load,
            conn,
            "SELECT permission FROM plover_user_permission WHERE user_id = ? \
             UNION SELECT p.permission FROM plover_group_permission AS p \
             JOIN plover_user_group AS g ON g.group_id = p.group_id WHERE g.user_id = ?",
            "SELECT permission FROM plover_user_permission WHERE user_id = $1 \
             UNION SELECT p.permission FROM plover_group_permission AS p \
             JOIN plover_user_group AS g ON g.group_id = p.group_id WHERE g.user_id = $2",
            |q| q.bind::<BigInt, _>(user_id).bind::<BigInt, _>(user_id)
        )
        .map_err(super::explained)?;
        Ok(Held::of_names(rows.into_iter().map(|row| row.permission)))
    }

    /// Whether this is a superuser's set: every permission.
    pub fn is_superuser(&self) -> bool {
        self.superuser
    }

    /// Whether the permission named `permission` is held (a superuser holds all).
    pub fn has(&self, permission: &str) -> bool {
        self.superuser || self.names.contains(permission)
    }

    /// Whether `action` on the model named `model` is allowed: its permission is held, or for
    /// [`Action::View`], that of [`Action::Change`] (as in Django's admin).
    pub fn may(&self, model: &str, action: Action) -> bool {
        self.has(&action.on(model))
            || (action == Action::View && self.has(&Action::Change.on(model)))
    }

    /// The permissions held, by name (empty for a superuser, who holds all without a list).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}
