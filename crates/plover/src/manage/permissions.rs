//! `grant`, `revoke` and `changepassword`: roles and passwords from the command line
//! (docs/permissions.md).

use std::io::Write;

use super::Accounts;
use super::{Asker, Failure};
use crate::db::{Conn, Database};
use crate::error::Error;
use crate::permissions::{self, Group, Holder};
use crate::views::Query;

/// The arguments of `grant` and `revoke`.
#[derive(Debug, clap::Args)]
pub(super) struct Grants {
    /// The user's name, or with --group the group's
    name: String,
    /// Permissions: MODEL.ACTION (ticket.change; the actions are view, add, change and
    /// delete), or a name the application declares
    permissions: Vec<String>,
    /// NAME is a group's
    #[arg(long)]
    group: bool,
    /// With --group, grant creates the group if there is none of that name
    #[arg(long)]
    create: bool,
    /// A group the user joins (grant) or leaves (revoke); repeatable
    #[arg(long = "in-group", value_name = "GROUP")]
    groups: Vec<String>,
}

/// Whether a command grants or revokes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Grant,
    Revoke,
}

/// `grant` or `revoke`: every change in one transaction, one line each; an unknown user,
/// group or permission changes nothing and fails.
pub(super) fn grants(
    db: &Database,
    accounts: &dyn Accounts,
    args: &Grants,
    verb: Verb,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if args.permissions.is_empty() && args.groups.is_empty() {
        return Err(Failure(
            "name a permission, or a group with --in-group".into(),
        ));
    }
    if args.group && !args.groups.is_empty() {
        return Err(Failure(
            "--in-group puts a user in a group, not a group".into(),
        ));
    }
    if args.create && (verb == Verb::Revoke || !args.group) {
        return Err(Failure("--create is for `grant --group`".into()));
    }
    if let Some(unknown) = args.permissions.iter().find(|p| !permissions::exists(p)) {
        return Err(Failure(format!(
            "no permission is named {unknown:?}: MODEL.ACTION (view, add, change, delete) \
             of a model of the application, or a name it declares"
        )));
    }
    let lines = db.run_blocking(|c| {
        c.transaction(|c| match named(c, accounts, args)? {
            Ok(named) => apply(c, args, verb, named).map(Ok),
            Err(failure) => Ok(Err(failure)),
        })
    })??;
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The user or group a command names and the groups of `--in-group`, found before anything
/// is written.
struct Named {
    /// The holder; `None` for the group that `grant --group --create` makes.
    holder: Option<Holder>,
    /// How the lines name it: `user staff`, `group support`.
    who: String,
    /// The groups of `--in-group`.
    groups: Vec<Group>,
}

/// What the names of `args` name, or the failure of the first one that names nothing.
fn named(
    c: &mut Conn<'_>,
    accounts: &dyn Accounts,
    args: &Grants,
) -> Result<Result<Named, Failure>, Error> {
    let (holder, who) = if args.group {
        match group(c, &args.name)? {
            Some(group) => (
                Some(Holder::Group(group.id)),
                format!("group {}", group.name),
            ),
            None if args.create => (None, format!("group {}", args.name)),
            None => return Ok(Err(unknown("group", &args.name))),
        }
    } else {
        match accounts.find(c, &args.name)? {
            Some((id, username)) => (Some(Holder::User(id)), format!("user {username}")),
            None => return Ok(Err(unknown("user", &args.name))),
        }
    };
    let mut groups = Vec::with_capacity(args.groups.len());
    for name in &args.groups {
        match group(c, name)? {
            Some(group) => groups.push(group),
            None => return Ok(Err(unknown("group", name))),
        }
    }
    Ok(Ok(Named {
        holder,
        who,
        groups,
    }))
}

/// The changes of `grant` or `revoke` to what `named` names, a line each.
fn apply(c: &mut Conn<'_>, args: &Grants, verb: Verb, named: Named) -> Result<Vec<String>, Error> {
    let Named {
        holder,
        who,
        groups,
    } = named;
    let holder = match holder {
        Some(holder) => holder,
        None => Holder::Group(permissions::create_group(c, &args.name)?.id),
    };
    let mut lines = Vec::new();
    for permission in &args.permissions {
        let (changed, line) = match verb {
            Verb::Grant => (permissions::grant(c, holder, permission)?, "granted"),
            Verb::Revoke => (permissions::revoke(c, holder, permission)?, "revoked"),
        };
        let unchanged = match verb {
            Verb::Grant => "already held",
            Verb::Revoke => "was not held",
        };
        let what = if changed { line } else { unchanged };
        lines.push(format!("{who}: {permission} {what}"));
    }
    if let Holder::User(user_id) = holder {
        for group in groups {
            let line = match verb {
                Verb::Grant if permissions::add_to_group(c, user_id, group.id)? => "joined",
                Verb::Grant => "was already in",
                Verb::Revoke if permissions::remove_from_group(c, user_id, group.id)? => "left",
                Verb::Revoke => "was not in",
            };
            lines.push(format!("{who}: {line} group {}", group.name));
        }
    }
    Ok(lines)
}

/// The group named `name`.
fn group(c: &mut Conn<'_>, name: &str) -> Result<Option<Group>, Error> {
    Query::<Group>::new()
        .filter(Group::FIELDS.name, crate::query::Op::Eq, name)
        .first(c)
}

/// The failure of a name that names no user or group.
fn unknown(what: &str, name: &str) -> Failure {
    Failure(format!("no {what} is named {name:?}"))
}

/// `changepassword`: the new password of the user named `username`, asked twice (or from
/// `PLOVER_NEW_PASSWORD`); the user's sessions end.
pub(super) fn changepassword(
    db: &Database,
    accounts: &dyn Accounts,
    username: &str,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let (id, username) = db
        .run_blocking(|c| accounts.find(c, username))?
        .ok_or_else(|| Failure(format!("no user is named {username:?}")))?;
    let password = Asker::stdin().new_password("PLOVER_NEW_PASSWORD")?;
    db.run_blocking(|c| c.transaction(|c| accounts.set_password(c, id, &password)))?;
    writeln!(out, "changed the password of {username}")?;
    Ok(())
}
