//! The checks a REST request passes before its operation runs, in the order of
//! docs/contract.md#order-of-checks (the twin of the admin's `checks`): the verb served on the
//! path, then authentication and the rate limit; and the checks a write of a found record
//! adds (its owner, `If-Match` where the resource needs it).

use std::sync::Arc;

use actix_web::http::Method;

use super::conditional;
use super::hooks::Context;
use super::prepared::{Core, Prepared};
use super::rate::{RateLimit, RateState};
use super::request::ApiRequest;
use crate::auth::{AuthRequest, AuthUser, Authenticator};
use crate::db::LazyConn;
use crate::error::Error;
use crate::model::RestModel;
use crate::permissions::ModelPermissions;

/// What an API gives the resources that set none of their own.
pub(crate) struct ApiDefaults {
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) rate: Option<RateLimit>,
    /// Whether reads and updates send an `ETag` ([`RestApi::etags`](super::RestApi::etags)).
    pub(crate) etags: bool,
    /// How long idempotency keys are kept
    /// ([`RestApi::idempotency_ttl`](super::RestApi::idempotency_ttl)).
    pub(crate) idempotency_ttl: std::time::Duration,
    /// How many change-feed streams may be open
    /// ([`RestApi::stream_limits`](super::RestApi::stream_limits)).
    pub(crate) streams: crate::changes::StreamLimits,
}

/// What a request asks of a resource, by its verb and path.
pub(super) struct Verb {
    /// The verb as served: HEAD is served as GET.
    pub(super) served: Method,
    /// The verb as authentication and the hooks see it: PATCH is the partial update PUT is.
    pub(super) method: Method,
    /// Whether the path names one record.
    pub(super) detail: bool,
    /// Whether the path is the resource's `aggregate/`.
    pub(super) aggregate: bool,
}

/// A request that authentication and the rate limit let through.
pub(super) struct Admitted<'r> {
    /// The authenticated user, if any.
    user: Option<AuthUser>,
    /// The verb as the hooks see it.
    method: &'r Method,
    /// The resource's authentication, and the request as it saw it.
    auth: &'r dyn Authenticator,
    request: AuthRequest<'r>,
}

impl Admitted<'_> {
    /// The authenticated user, if any.
    pub(super) fn user(&self) -> Option<&AuthUser> {
        self.user.as_ref()
    }

    /// The context the hooks and the operation see.
    pub(super) fn context(&self) -> Context<'_> {
        Context {
            method: self.method,
            user: self.user.as_ref(),
        }
    }

    /// The request's API key where this resource's authentication checked it: only such a key
    /// counts (for a rate limit, an idempotency key).
    pub(super) fn checked_key(&self) -> Option<String> {
        let protected = self.auth.describe().protected_methods;
        protected
            .is_some_and(|protected| self.request.is_protected(&protected))
            .then(|| crate::auth::api_key_of(&self.request))
            .flatten()
    }
}

impl<M: RestModel> Prepared<M> {
    /// With an owner field: 403 unless the authenticated user owns `obj` (PUT, DELETE).
    pub(super) fn check_owner(&self, cx: &Context<'_>, obj: &M) -> Result<(), Error> {
        match self.owner_user(cx)? {
            Some((user, idx)) if !self.hooks.validate_owner(user, obj, idx) => {
                Err(Error::Forbidden)
            }
            _ => Ok(()),
        }
    }
}

impl Core {
    /// The verb and path of `req`: 405 where this resource does not serve the verb there.
    pub(super) fn verb(&self, req: &ApiRequest) -> Result<Verb, Error> {
        let aggregate = self.is_aggregate(req.pk.as_deref());
        let detail = req.pk.is_some() && !aggregate;
        let served = if req.method == Method::HEAD {
            Method::GET
        } else {
            req.method.clone()
        };
        if aggregate && !self.aggregate_served().contains(&served) {
            return Err(Error::MethodNotAllowed(self.aggregate_served()));
        }
        if !self.serves(detail, &served) {
            return Err(Error::MethodNotAllowed(self.served_verbs(detail)));
        }
        let method = if served == Method::PATCH {
            Method::PUT
        } else {
            served.clone()
        };
        Ok(Verb {
            served,
            method,
            detail,
            aggregate,
        })
    }

    /// The verbs served on the list path (`detail = false`) or a detail path.
    pub(super) fn served_verbs(&self, detail: bool) -> Vec<Method> {
        [
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ]
        .into_iter()
        .filter(|m| self.serves(detail, m))
        .collect()
    }

    /// The verbs served on the aggregate path: GET where the resource serves aggregates and
    /// its list GET, else none.
    pub(super) fn aggregate_served(&self) -> Vec<Method> {
        if self.access.aggregates && self.access.allowed_methods.contains(&Method::GET) {
            vec![Method::GET]
        } else {
            Vec::new()
        }
    }

    /// Whether a list path (`detail = false`) or a detail path serves `method` here: a verb
    /// of the path (the list's writes by filter and upsert only where enabled) that
    /// `allowed_methods` lists. Checked on every request, without building the list.
    pub(super) fn serves(&self, detail: bool, method: &Method) -> bool {
        let of_path = if method == Method::GET {
            true
        } else if method == Method::POST {
            !detail
        } else if method == Method::PUT {
            detail || self.access.upsert
        } else if method == Method::PATCH || method == Method::DELETE {
            detail || self.access.max_affected.is_some()
        } else {
            false
        };
        of_path && self.access.allowed_methods.contains(method)
    }

    /// Authentication (the resource's, else `api`'s), the model permissions where the
    /// resource needs them (before the row is looked up), then the rate limit (after them, so
    /// that a limit by user knows the user; before any work). `rate` receives where the request
    /// stands in its limit's window.
    pub(super) fn admit<'r>(
        &'r self,
        req: &'r ApiRequest,
        verb: &'r Verb,
        db: &mut LazyConn<'_>,
        api: &'r ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<Admitted<'r>, Error> {
        let auth = self.access.auth.as_deref().unwrap_or(api.auth.as_ref());
        let request = AuthRequest {
            method: &verb.method,
            client: req.client,
            headers: &req.headers,
            query: &req.query,
            form: req.form(),
        };
        let admitted = Admitted {
            user: auth.authorize(&request, db)?,
            method: &verb.method,
            auth,
            request,
        };
        if let Some(permissions) = self.access.permissions {
            let actions = ModelPermissions::actions(&verb.served, verb.detail);
            let user = admitted.user.as_ref();
            permissions.check(db, self.meta.name, actions, user)?;
        }
        let limit = match (&self.access.rate, &api.rate) {
            (Some(own), _) => Some((own, self.name.as_str())),
            (None, Some(shared)) => Some((shared, "*")),
            (None, None) => None,
        };
        if let Some((limit, scope)) = limit {
            let key = limit.by_api_key_wanted().then(|| admitted.checked_key());
            let user = admitted.user.as_ref();
            match limit.hit(scope, req.client, user, key.flatten().as_deref(), db) {
                Ok(state) => *rate = Some(state),
                Err((e, state)) => {
                    *rate = state;
                    return Err(e);
                }
            }
        }
        Ok(admitted)
    }

    /// The verbs this resource serves (on its list or detail path) that its authentication
    /// (else `api`'s) says it lets through without credentials (PATCH counting as PUT, as
    /// authentication sees it); none when the authentication cannot tell.
    pub(super) fn unprotected_verbs(&self, api: &ApiDefaults) -> Vec<Method> {
        let auth = self.access.auth.as_deref().unwrap_or(api.auth.as_ref());
        let Some(protected) = auth.describe().protected_methods else {
            return Vec::new();
        };
        let mut served = self.served_verbs(false);
        served.extend(self.served_verbs(true));
        unprotected(served, &protected)
    }

    /// With an owner field: the authenticated user and the field (403 without a user).
    pub(super) fn owner_user<'a>(
        &self,
        cx: &Context<'a>,
    ) -> Result<Option<(&'a AuthUser, usize)>, Error> {
        match self.writes.owner {
            None => Ok(None),
            Some(idx) => cx.user.map(|u| Some((u, idx))).ok_or(Error::Forbidden),
        }
    }

    /// 428 where this resource needs `If-Match` on writes and the request sends none.
    pub(super) fn check_if_match_sent(&self, req: &ApiRequest) -> Result<(), Error> {
        if self.writes.require_if_match && !conditional::has_if_match(&req.headers) {
            return Err(Error::PreconditionRequired);
        }
        Ok(())
    }
}

/// The verbs of `served` that `protected` does not name (PATCH counting as PUT), sorted, once
/// each.
fn unprotected(mut served: Vec<Method>, protected: &[Method]) -> Vec<Method> {
    served.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    served.dedup();
    served.retain(|verb| {
        let as_auth = if *verb == Method::PATCH {
            &Method::PUT
        } else {
            verb
        };
        !protected.contains(as_auth)
    });
    served
}
