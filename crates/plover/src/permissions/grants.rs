//! Granting and revoking permissions, and group membership, in code (what the admin's forms
//! and the `grant` and `revoke` commands do).

use super::models::{
    Group, GroupChanges, GroupPermission, GroupPermissionChanges, UserGroup, UserGroupChanges,
    UserPermission, UserPermissionChanges,
};
use crate::db::Conn;
use crate::error::Error;
use crate::query::Op;
use crate::views::Query;

/// Who holds a permission: a user (by the primary key of the application's user model) or a
/// group (by its primary key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A user, directly.
    User(i64),
    /// A group, and through it each of its users.
    Group(i64),
}

/// Grants `permission` (`ticket.change`) to `holder`; `false` when it held it already.
///
/// ```
/// use plover::db::Database;
/// use plover::permissions::{self, Holder, Held};
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// db.run_blocking(|conn| {
///     plover::schema::create_tables(conn, &permissions::models())?;
///     let support = permissions::create_group(conn, "support")?;
///     permissions::grant(conn, Holder::Group(support.id), "user.change")?;
///     permissions::add_to_group(conn, 7, support.id)?;
///     assert!(Held::of_user_id(conn, 7)?.has("user.change"));
///     permissions::revoke(conn, Holder::Group(support.id), "user.change")?;
///     assert!(!Held::of_user_id(conn, 7)?.has("user.change"));
///     // A name that is no model's permission, nor declared:
///     assert!(permissions::grant(conn, Holder::User(7), "user.fly").is_err());
///     Ok::<_, plover::Error>(())
/// })
/// .unwrap();
/// ```
///
/// # Errors
/// [`Error::Validation`] for a name that names no permission ([`exists`](super::exists));
/// the database's error.
pub fn grant(conn: &mut Conn<'_>, holder: Holder, permission: &str) -> Result<bool, Error> {
    if holds(conn, holder, permission)? {
        return Ok(false);
    }
    conn.transaction(|conn| match holder {
        Holder::User(user_id) => {
            let changes = UserPermissionChanges {
                user_id: Some(user_id),
                permission: Some(permission.to_owned()),
            };
            crate::model::save::<UserPermission>(conn, changes, None).map(|_| true)
        }
        Holder::Group(group_id) => {
            let changes = GroupPermissionChanges {
                group_id: Some(group_id),
                permission: Some(permission.to_owned()),
            };
            crate::model::save::<GroupPermission>(conn, changes, None).map(|_| true)
        }
    })
    .map_err(super::explained)
}

/// Revokes `permission` from `holder` (the holder's own grant: a user keeps what a group
/// gives); `false` when it did not hold it.
///
/// # Errors
/// The database's error.
pub fn revoke(conn: &mut Conn<'_>, holder: Holder, permission: &str) -> Result<bool, Error> {
    let deleted = match holder {
        Holder::User(id) => user_grants(id, permission).delete(conn),
        Holder::Group(id) => group_grants(id, permission).delete(conn),
    };
    deleted.map(|n| n > 0).map_err(super::explained)
}

/// Creates the group named `name`.
///
/// # Errors
/// [`Error::Validation`] for a blank or taken name; the database's error.
pub fn create_group(conn: &mut Conn<'_>, name: &str) -> Result<Group, Error> {
    let changes = GroupChanges {
        name: Some(name.to_owned()),
    };
    conn.transaction(|conn| crate::model::save::<Group>(conn, changes, None))
        .map_err(super::explained)
}

/// Puts the user with primary key `user_id` in the group `group_id`; `false` when it was in it.
///
/// # Errors
/// [`Error::Validation`] for a group that does not exist; the database's error.
pub fn add_to_group(conn: &mut Conn<'_>, user_id: i64, group_id: i64) -> Result<bool, Error> {
    if membership(user_id, group_id).exists(conn)? {
        return Ok(false);
    }
    let changes = UserGroupChanges {
        user_id: Some(user_id),
        group_id: Some(group_id),
    };
    conn.transaction(|conn| crate::model::save::<UserGroup>(conn, changes, None))
        .map(|_| true)
        .map_err(super::explained)
}

/// Takes the user with primary key `user_id` out of the group `group_id`; `false` when it was
/// not in it.
///
/// # Errors
/// The database's error.
pub fn remove_from_group(conn: &mut Conn<'_>, user_id: i64, group_id: i64) -> Result<bool, Error> {
    (membership(user_id, group_id).delete(conn))
        .map(|n| n > 0)
        .map_err(super::explained)
}

/// Whether `holder` itself holds `permission` (not through a group).
fn holds(conn: &mut Conn<'_>, holder: Holder, permission: &str) -> Result<bool, Error> {
    match holder {
        Holder::User(id) => user_grants(id, permission).exists(conn),
        Holder::Group(id) => group_grants(id, permission).exists(conn),
    }
    .map_err(super::explained)
}

fn user_grants(user_id: i64, permission: &str) -> Query<UserPermission> {
    let f = UserPermission::FIELDS;
    Query::new()
        .filter(f.user_id, Op::Eq, user_id)
        .filter(f.permission, Op::Eq, permission)
}

fn group_grants(group_id: i64, permission: &str) -> Query<GroupPermission> {
    let f = GroupPermission::FIELDS;
    Query::new()
        .filter(f.group_id, Op::Eq, group_id)
        .filter(f.permission, Op::Eq, permission)
}

fn membership(user_id: i64, group_id: i64) -> Query<UserGroup> {
    let f = UserGroup::FIELDS;
    Query::new()
        .filter(f.user_id, Op::Eq, user_id)
        .filter(f.group_id, Op::Eq, group_id)
}
