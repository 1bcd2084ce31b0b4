//! The tables of groups and permissions: models like the application's own, so that their
//! schema, drift check and migrations come with theirs, and so that they can be read with
//! `views::Query` and registered as REST resources or in the admin.
//!
//! A user is named by the primary key of the application's user model (`user_id`), not by a
//! foreign key: Plover does not know that model's table. Yet deleting a user deletes its rows
//! here, as a required foreign key's rows are, whoever deletes it (the REST API, the admin,
//! `views::Query`): each model an `Auth` is built for is a model of users, and these fields
//! refer to its rows. A new user that gets an old user's key (SQLite reuses the largest one)
//! inherits nothing.

use plover_derive::RestModel;

use crate::meta::UserReference;
use crate::model::RestModel;

inventory::submit! { UserReference { model: <UserGroup as RestModel>::meta, column: "user_id" } }
inventory::submit! { UserReference { model: <UserPermission as RestModel>::meta, column: "user_id" } }

/// A group of users (a role: "support", "accounting"): a user in it holds its permissions.
/// A row of the table `plover_group`.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_group)]
#[rest(table, display = "{name}")]
pub struct Group {
    /// Primary key.
    pub id: i64,
    /// The group's name, unique.
    #[rest(unique, not_blank, max_len = 150)]
    pub name: String,
}

/// A permission a group holds: a row of the table `plover_group_permission`. The index over
/// `group_id` and `permission` serves the look-up of a user's permissions.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_group_permission)]
#[rest(table, rules, display = "{permission}")]
#[rest(index = "group_id, permission")]
pub struct GroupPermission {
    /// Primary key.
    pub id: i64,
    /// The group.
    #[rest(fk = Group)]
    pub group_id: i64,
    /// The permission's name, `<model>.<action>` (`ticket.change`) for a model of the program,
    /// or one the application declares ([`declare`](super::declare)); any other name is refused.
    #[rest(not_blank, max_len = 150)]
    pub permission: String,
}

/// A user's membership of a group: a row of the table `plover_user_group`.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_user_group)]
#[rest(table, display = "user #{user_id} in group #{group_id}")]
#[rest(index = "user_id, group_id")]
pub struct UserGroup {
    /// Primary key.
    pub id: i64,
    /// The primary key of the user (of the application's user model); `user` in the API.
    #[rest(name = "user")]
    pub user_id: i64,
    /// The group.
    #[rest(fk = Group)]
    pub group_id: i64,
}

/// A permission a user holds directly (not through a group): a row of the table
/// `plover_user_permission`.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_user_permission)]
#[rest(table, rules, display = "{permission}")]
#[rest(index = "user_id, permission")]
pub struct UserPermission {
    /// Primary key.
    pub id: i64,
    /// The primary key of the user (of the application's user model); `user` in the API.
    #[rest(name = "user")]
    pub user_id: i64,
    /// The permission's name, as [`GroupPermission::permission`].
    #[rest(not_blank, max_len = 150)]
    pub permission: String,
}

/// The permissions stamp: the one row (key 1) of the table `plover_permission_stamp`, whose
/// counter every write to the four tables above raises in the write's transaction. A request
/// reads it with its user, so that the permissions a process keeps of a user are known to be
/// current without reading them again (docs/permissions.md). Plover writes it; an application
/// never needs to.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_permission_stamp)]
#[rest(table)]
pub struct PermissionStamp {
    /// Primary key (the row is 1).
    pub id: i64,
    /// Raised by one on every write to a table of permissions.
    pub stamp: i64,
}
