//! The admin pages of Plover's tables of groups and permissions ([`Admin::permissions`]):
//! plain [`ModelAdmin`]s, as an application would make them.

use super::inline::Inline;
use super::model_admin::{Column, ModelAdmin};
use super::Admin;
use crate::accounts::UserModel;
use crate::permissions::{Group, GroupPermission, UserGroup, UserPermission};

impl<U: UserModel + Clone + Send + 'static> Admin<U> {
    /// Adds the pages of the tables of groups and permissions (docs/permissions.md):
    ///
    /// - "group": the groups (roles), searchable by name; a group's page edits its
    ///   permissions and its members (users by primary key) in two tables below its name;
    /// - "grouppermission", "usergroup", "userpermission": every grant, membership and direct
    ///   grant, with facets by group, searchable by permission or group name (the filter form
    ///   takes `user=7`).
    ///
    /// Every write is in the history, and raises the permissions stamp like any other (the
    /// next request of every process sees it). A permission that names no model, nor one the
    /// application declared, is refused beside the field. The pages need the permissions of
    /// these models like any other (`group.change`...): give them to superusers, or to a role
    /// that manages roles.
    pub fn permissions(&mut self) -> &mut Admin<U> {
        let (g, gp, ug, up) = (
            Group::FIELDS,
            GroupPermission::FIELDS,
            UserGroup::FIELDS,
            UserPermission::FIELDS,
        );
        self.register(
            ModelAdmin::<Group>::new()
                .columns([g.id, g.name].map(Column::field))
                .search_fields([g.name])
                .inline(Inline::new(gp.group_id).fields([gp.permission]))
                .inline(Inline::new(ug.group_id).fields([ug.user_id])),
        )
        .register(
            ModelAdmin::<GroupPermission>::new()
                .columns([gp.id, gp.group_id, gp.permission].map(Column::field))
                .list_filter([gp.group_id])
                .search_fields([gp.permission]),
        )
        .register(
            ModelAdmin::<UserGroup>::new()
                .columns([ug.id, ug.user_id, ug.group_id].map(Column::field))
                .list_filter([ug.group_id])
                .search_fields([ug.group_id.join(g.name)]),
        )
        .register(
            ModelAdmin::<UserPermission>::new()
                .columns([up.id, up.user_id, up.permission].map(Column::field))
                .search_fields([up.permission]),
        )
    }
}
