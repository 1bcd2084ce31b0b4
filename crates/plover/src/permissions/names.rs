//! Which permission names exist: `<model>.<action>` for every model of the program, and the
//! names the application declares ([`declare`]). Grants of any other name are refused, by
//! every writer (the rules of [`GroupPermission`] and [`UserPermission`]).

use std::collections::BTreeSet;
use std::sync::RwLock;

use super::held::Action;
use super::models::{
    GroupPermission, GroupPermissionChanges, UserPermission, UserPermissionChanges,
};
use crate::db::Conn;
use crate::error::Error;
use crate::model::Rules;

/// The names the application declared.
static DECLARED: RwLock<BTreeSet<String>> = RwLock::new(BTreeSet::new());

/// Declares permissions of the application's own beyond the four of each model, each named
/// `<model>.<codename>` (`ticket.export`) after a model of the program, so that they can be
/// granted. Call it at start, before the server runs.
///
/// # Panics
/// When a name is not `<model>.<codename>` (a codename of letters, digits and `_`) or its
/// model is no model of the program: a programming error, reported at start.
///
/// ```
/// plover::permissions::declare(["user.export"]);
/// assert!(plover::permissions::exists("user.export"));
/// assert!(plover::permissions::exists("user.view"));
/// assert!(!plover::permissions::exists("user.fly"));
/// ```
pub fn declare<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        let codename_ok = name.split_once('.').is_some_and(|(model, codename)| {
            is_model(model)
                && !codename.is_empty()
                && codename
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        assert!(
            codename_ok,
            "plover: the permission '{name}' names no model: declare `<model>.<codename>`, \
             the model as RestModel::meta().name gives it (`ticket.export`)"
        );
        if let Ok(mut declared) = DECLARED.write() {
            declared.insert(name.to_owned());
        }
    }
}

/// Whether `name` can be granted: one of the four permissions of a model of the program
/// (`ticket.view`), or a name the application [declared](declare).
pub fn exists(name: &str) -> bool {
    let standard = name.split_once('.').is_some_and(|(model, action)| {
        Action::ALL.iter().any(|a| a.as_str() == action) && is_model(model)
    });
    standard
        || DECLARED
            .read()
            .is_ok_and(|declared| declared.contains(name))
}

/// Every permission that can be granted, by model (model names ascending): each model's
/// four (`view`, `add`, `change`, `delete`), then the names declared for it, ascending (the
/// admin's checklists).
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn by_model() -> Vec<(&'static str, Vec<String>)> {
    let mut models: Vec<&'static str> = crate::meta::all_models().map(|m| m.name).collect();
    models.sort_unstable();
    models.dedup();
    let declared = DECLARED.read().map(|d| d.clone()).unwrap_or_default();
    (models.into_iter())
        .map(|model| {
            let own = declared
                .iter()
                .filter(|name| name.split_once('.').is_some_and(|(m, _)| m == model))
                .cloned();
            let names = Action::ALL.iter().map(|a| a.on(model)).chain(own).collect();
            (model, names)
        })
        .collect()
}

/// Whether `name` is the name of a model of the program.
fn is_model(name: &str) -> bool {
    crate::meta::all_models().any(|meta| meta.name == name)
}

/// A field error on `permission` unless the name `given` exists.
fn check(given: Option<&String>) -> Result<(), Error> {
    match given {
        Some(name) if !exists(name) => Err(Error::field(
            "permission",
            format!("no such permission: '{name}' (`<model>.view`, `.add`, `.change`, `.delete`, or a declared one)"),
        )),
        _ => Ok(()),
    }
}

impl Rules for GroupPermission {
    fn validate(
        _conn: &mut Conn<'_>,
        changes: &GroupPermissionChanges,
        _existing: Option<&GroupPermission>,
    ) -> Result<(), Error> {
        check(changes.permission.as_ref())
    }
}

impl Rules for UserPermission {
    fn validate(
        _conn: &mut Conn<'_>,
        changes: &UserPermissionChanges,
        _existing: Option<&UserPermission>,
    ) -> Result<(), Error> {
        check(changes.permission.as_ref())
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_model_lists_its_four_then_its_declared_permissions() {
        declare(["user.export"]);
        let all = by_model();
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "by model name");
        let (_, user) = all
            .iter()
            .find(|(m, _)| *m == "user")
            .expect("a user model");
        assert_eq!(
            user[..4],
            ["user.view", "user.add", "user.change", "user.delete"]
        );
        assert!(user[4..].contains(&"user.export".to_owned()));
        assert!(all.iter().flat_map(|(_, names)| names).all(|n| exists(n)));
    }
}
