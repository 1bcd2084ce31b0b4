//! `ModelPermissions` on a REST resource: which actions a request needs, checked after
//! authentication and before the row is looked up.

use actix_web::http::Method;

use super::held::Action;
use crate::auth::AuthUser;
use crate::db::LazyConn;
use crate::error::Error;

/// Requires model permissions of the users of a REST resource
/// ([`Resource::permissions`](crate::rest::Resource::permissions)): GET (list, detail,
/// aggregate, change feed) needs `<model>.view` (or `change`), POST `add`, PUT and PATCH
/// `change`, DELETE `delete`; a PATCH or DELETE by filter needs its verb's permission, an
/// upsert (PUT on the list) both `add` and `change`. Superusers hold every permission.
///
/// A request without a user is refused with 401, one whose user lacks a permission with 403,
/// before the row is looked up: a missing and a forbidden id answer alike. The resource's
/// authentication must protect every verb it serves
/// (`UserAuthentication::with_methods(&auth, vec![GET, POST, PUT, PATCH, DELETE])`):
/// registration panics otherwise. Object rules (an owner field, `check_*` hooks) still apply
/// after it.
///
/// A revoked permission is refused on the very next request, in every process that shares
/// the database; yet a request needs no statement for its user's permissions while they are
/// unchanged: they are kept with the permissions stamp, a counter that every write to the
/// tables of permissions raises and that the request reads with its user (Basic and bearer
/// authentication of the accounts component; a request authenticated otherwise reads them in
/// one statement).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelPermissions;

impl ModelPermissions {
    /// The actions a request with `method` (PATCH as itself, HEAD as GET) needs, on a detail
    /// path (`detail`) or the list path.
    pub(crate) fn actions(method: &Method, detail: bool) -> &'static [Action] {
        match *method {
            Method::POST => &[Action::Add],
            Method::PUT if !detail => &[Action::Add, Action::Change],
            Method::PUT | Method::PATCH => &[Action::Change],
            Method::DELETE => &[Action::Delete],
            _ => &[Action::View],
        }
    }

    /// 401 without `user`; 403 unless `user` may do every one of `actions` on the model named
    /// `model`.
    pub(crate) fn check(
        self,
        db: &mut LazyConn<'_>,
        model: &str,
        actions: &[Action],
        user: Option<&AuthUser>,
    ) -> Result<(), Error> {
        let user = user.ok_or(Error::Unauthorized)?;
        let held = super::kept::held(db, user)?;
        if actions.iter().all(|&action| held.may(model, action)) {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_verb_needs_its_action() {
        let needs = |method: Method, detail| ModelPermissions::actions(&method, detail);
        assert_eq!(needs(Method::GET, false), [Action::View]);
        assert_eq!(needs(Method::GET, true), [Action::View]);
        assert_eq!(needs(Method::HEAD, true), [Action::View]);
        assert_eq!(needs(Method::POST, false), [Action::Add]);
        assert_eq!(needs(Method::PUT, true), [Action::Change]);
        assert_eq!(needs(Method::PATCH, true), [Action::Change]);
        assert_eq!(needs(Method::PATCH, false), [Action::Change]);
        assert_eq!(needs(Method::PUT, false), [Action::Add, Action::Change]);
        assert_eq!(needs(Method::DELETE, true), [Action::Delete]);
        assert_eq!(needs(Method::DELETE, false), [Action::Delete]);
    }
}
