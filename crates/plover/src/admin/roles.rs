//! The admin pages of Plover's tables of groups and permissions ([`Admin::permissions`]):
//! plain [`ModelAdmin`]s, whose group and user pages edit the grants and memberships as
//! checklists (`checklist`).

use std::any::TypeId;

use super::checklist::{Checklist, Choice, Choices};
use super::inline::Inline;
use super::model_admin::{Column, ModelAdmin};
use super::prepared::ChecklistModel;
use super::Admin;
use crate::accounts::UserModel;
use crate::db::Conn;
use crate::error::Error;
use crate::model::RestModel;
use crate::permissions::{self, Group, GroupPermission, UserGroup, UserPermission};
use crate::query::{Order, Select};

impl<U: UserModel + Clone + Send + 'static> Admin<U> {
    /// Adds the pages of the tables of groups and permissions (docs/permissions.md):
    ///
    /// - "group": the groups (roles), searchable by name; a group's page edits its
    ///   permissions as checkboxes grouped by model (with a filter box), and its members
    ///   (users by primary key) in a table below;
    /// - "grouppermission", "usergroup", "userpermission": every grant, membership and direct
    ///   grant, with facets by group, searchable by permission or group name (the filter form
    ///   takes `user=7`);
    /// - the user model's page, when it is registered, edits the user's groups and direct
    ///   permissions as checkboxes too (inputs `groups` and `user_permissions`).
    ///
    /// Every write is in the history, and raises the permissions stamp like any other (the
    /// next request of every process sees it). A permission that names no model, nor one the
    /// application declared, is refused beside the field. The pages need the permissions of
    /// these models like any other (`group.change`...): give them to superusers, or to a role
    /// that manages roles. The checkboxes of a group's permissions are shown to a holder of
    /// `grouppermission.view`, and may be ticked by a holder of both `grouppermission.add` and
    /// `grouppermission.delete` (a user's, of `usergroup` and `userpermission`):
    /// docs/admin.md#groups-and-permissions.
    pub fn permissions(&mut self) -> &mut Admin<U> {
        let (g, gp, ug, up) = (
            Group::FIELDS,
            GroupPermission::FIELDS,
            UserGroup::FIELDS,
            UserPermission::FIELDS,
        );
        self.roles = true;
        self.register(
            ModelAdmin::<Group>::new()
                .columns([g.id, g.name].map(Column::field))
                .search_fields([g.name])
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

/// The checklists of the forms of the model of type `model`, once the tables of permissions
/// are registered: a group's permissions; the groups and direct permissions of a user (of the
/// model of type `user`). Not generic: the checklists are compiled once, in Plover.
pub(super) fn checklists(model: TypeId, user: TypeId) -> Vec<Box<dyn ChecklistModel>> {
    let (gp, ug, up) = (
        GroupPermission::FIELDS,
        UserGroup::FIELDS,
        UserPermission::FIELDS,
    );
    if model == TypeId::of::<Group>() {
        return vec![Box::new(Checklist {
            name: "permissions",
            title: "Permissions",
            noun: "permission",
            owner: gp.group_id,
            value: gp.permission,
            choices: permission_choices,
        })];
    }
    if model != user {
        return Vec::new();
    }
    vec![
        Box::new(Checklist {
            name: "groups",
            title: "Groups",
            noun: "group",
            owner: ug.user_id,
            value: ug.group_id,
            choices: group_choices,
        }),
        Box::new(Checklist {
            name: "user_permissions",
            title: "User permissions",
            noun: "permission",
            owner: up.user_id,
            value: up.permission,
            choices: permission_choices,
        }),
    ]
}

/// Every permission that can be granted, under its model's name, each box titled by its
/// action or codename (`change`, `export`).
fn permission_choices(_conn: &mut Conn<'_>) -> Result<Vec<Choices>, Error> {
    let by_model = permissions::by_model().into_iter();
    Ok(by_model
        .map(|(model, names)| Choices {
            heading: Some(model.to_owned()),
            choices: (names.into_iter())
                .map(|name| Choice {
                    label: name.split_once('.').map_or(&*name, |(_, c)| c).to_owned(),
                    value: name,
                })
                .collect(),
        })
        .collect())
}

/// Every group, by key, titled by its name.
fn group_choices(conn: &mut Conn<'_>) -> Result<Vec<Choices>, Error> {
    let select = Select {
        order: vec![Order::asc(Group::meta().pk)],
        ..Select::default()
    };
    Ok(vec![Choices {
        heading: None,
        choices: (Group::load(conn, &select)?.into_iter())
            .map(|group| Choice {
                value: group.id.to_string(),
                label: group.name,
            })
            .collect(),
    }])
}
