//! Who may do what (docs/permissions.md): model permissions, groups, and their check on REST
//! resources.
//!
//! Every model has four permissions, `<model>.view`, `.add`, `.change` and `.delete` (the
//! model's name as `RestModel::meta().name` gives it: `ticket.change`), and an application may
//! [`declare`] names of its own (`ticket.export`); no other name can be granted. A user holds
//! permissions directly ([`UserPermission`]) or through the groups it is in ([`UserGroup`],
//! [`GroupPermission`]); a superuser (the user model's admin flag) holds them all ([`Held`]).
//! [`ModelPermissions`] on a resource makes each verb need its permission.
//!
//! The four tables are models like the application's own: `manage::Commands` counts them
//! among the application's models by itself (their schema, drift check and migrations come
//! with the application's); an application that creates its tables with
//! `schema::create_tables` lists [`models()`] among them. They can be registered as REST
//! resources (`Resource::<Group>::new()`) and read with `views::Query`.
//!
//! ```
//! let sql = plover::schema::script(&plover::permissions::models(), plover::db::Engine::Sqlite)
//!     .unwrap();
//! assert!(sql.contains("CREATE TABLE IF NOT EXISTS \"plover_group_permission\""));
//! ```

mod grants;
mod held;
pub(crate) mod kept;
mod models;
mod names;
mod rest;

pub use grants::{add_to_group, create_group, grant, remove_from_group, revoke, Holder};
pub use held::{Action, Held};
pub use models::{
    Group, GroupChanges, GroupPermission, GroupPermissionChanges, PermissionStamp,
    PermissionStampChanges, UserGroup, UserGroupChanges, UserPermission, UserPermissionChanges,
};
#[cfg(feature = "admin")]
pub(crate) use names::by_model;
pub use names::{declare, exists};
pub use rest::ModelPermissions;

use crate::error::Error;
use crate::model::{ModelMeta, RestModel};

/// The models of the four tables and of the stamp that their writes raise, groups first (the
/// order their foreign keys need).
pub fn models() -> [&'static ModelMeta; 5] {
    [
        Group::meta(),
        GroupPermission::meta(),
        UserGroup::meta(),
        UserPermission::meta(),
        PermissionStamp::meta(),
    ]
}

/// `e`, or where it says that a table of permissions does not exist, an error that says how
/// to create them.
fn explained(e: Error) -> Error {
    // Longest first: `plover_group` is a part of `plover_group_permission`.
    let tables = [
        "plover_group_permission",
        "plover_user_permission",
        "plover_permission_stamp",
        "plover_user_group",
        "plover_group",
    ];
    let text = e.to_string();
    match tables.into_iter().find(|table| text.contains(table)) {
        Some(table) => e.explain_missing_table(
            "the permissions table",
            table,
            "plover::permissions::models()",
        ),
        None => e,
    }
}
