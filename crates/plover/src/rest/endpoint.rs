//! The five REST operations of a prepared resource (docs/contract.md#endpoints), dispatched in
//! the order of checks of docs/contract.md#order-of-checks: verb, authentication, record
//! lookup, `check_*` hooks, input. The checks live in `checks`, the body's parsing in `body`,
//! the list in `list`, the writes in `write`, `upsert`, `filtered` and `children`.

use actix_web::http::Method;

use super::changes::FeedView;
use super::checks::ApiDefaults;
use super::hooks::Context;
use super::idempotency::Once;
use super::joins::JoinTarget;
use super::prepared::{Core, Prepared};
use super::rate::RateState;
use super::relation::Relation;
use super::request::{ApiRequest, Reply};
use crate::changes::feed::Start;
use crate::changes::ChangeEvent;
use crate::db::pending::{self, Author};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::listing::ListPlan;
use crate::model::{ModelMeta, RestModel};
use crate::openapi::{ChildDoc, ResourceDoc};
use crate::query::Param;

/// A registered resource, with its model type erased.
pub(crate) trait Endpoint: Send + Sync {
    /// The URL name.
    fn name(&self) -> &str;
    /// The rules that joins from other resources of the API into this model obey.
    fn join_target(&self) -> JoinTarget;
    /// Its list plan.
    fn list(&self) -> &ListPlan;
    /// What the API description needs of this resource; `api`'s authentication and rate limit apply when the
    /// resource sets none.
    fn describe<'a>(&'a self, api: &ApiDefaults) -> ResourceDoc<'a>;
    /// Whether `pk` (the path segment after the resource's) names its change feed.
    fn is_feed(&self, pk: Option<&str>) -> bool;
    /// The model it serves, whose events its feed reads.
    fn model(&self) -> &'static crate::model::ModelMeta;
    /// Admits a subscriber of its change feed, and says where its stream starts.
    fn open_feed(
        &self,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<(FeedView, Start), Error>;
    /// Appends the Server-Sent Events of `events` that `view`'s subscriber hears of.
    fn judge(
        &self,
        view: &FeedView,
        conn: &mut Conn<'_>,
        events: &[ChangeEvent],
        out: &mut String,
    ) -> Result<(), Error>;
    /// The object of a webhook's delivery of `event`, outside any request; `None` for a
    /// deletion.
    fn webhook_object(
        &self,
        conn: &mut Conn<'_>,
        event: &ChangeEvent,
    ) -> Result<Option<String>, Error>;
    /// Serves a request; `api`'s authentication and rate limit apply when the resource sets
    /// none, and `rate` receives where the request stands in its rate limit's window. The
    /// connection is checked out once authentication has decided (which may look a user up and
    /// give the connection back before it checks a password).
    fn handle(
        &self,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<Reply, Error>;
}

impl<M: RestModel> Endpoint for Prepared<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn join_target(&self) -> JoinTarget {
        JoinTarget::new(self.list.clone(), self.hooks.clone())
    }

    fn list(&self) -> &ListPlan {
        &self.list
    }

    fn describe<'a>(&'a self, api: &ApiDefaults) -> ResourceDoc<'a> {
        self.core.describe(api)
    }

    fn is_feed(&self, pk: Option<&str>) -> bool {
        self.core.is_feed(pk)
    }

    fn model(&self) -> &'static crate::model::ModelMeta {
        M::meta()
    }

    fn open_feed(
        &self,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<(FeedView, Start), Error> {
        self.core.open_feed(&self.hooks, req, db, api, rate)
    }

    fn judge(
        &self,
        view: &FeedView,
        conn: &mut Conn<'_>,
        events: &[ChangeEvent],
        out: &mut String,
    ) -> Result<(), Error> {
        self.judge_events(view, conn, events, out)
    }

    fn webhook_object(
        &self,
        conn: &mut Conn<'_>,
        event: &ChangeEvent,
    ) -> Result<Option<String>, Error> {
        Prepared::webhook_object(self, conn, event)
    }

    fn handle(
        &self,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<Reply, Error> {
        let verb = self.verb(req)?;
        if verb.served != Method::GET {
            db.writes();
        }
        let body = self.read_early(req, &verb);
        let admitted = self.admit(req, &verb, db, api, rate)?;
        if let Some(user) = admitted.user() {
            pending::set_author(Author::User(user.id));
        }
        let cx = admitted.context();
        if verb.aggregate {
            return self.core.aggregate(&self.hooks, &cx, req, &mut db.conn()?);
        }
        let Some(raw_pk) = &req.pk else {
            return match verb.served {
                Method::POST => {
                    let key = || admitted.checked_key();
                    let once = Once::of(req, cx.user, &key, api.idempotency_ttl);
                    self.create(&cx, req, db, body, once)
                }
                Method::PUT => self.upsert(&cx, req, db),
                Method::PATCH => self.update_matching(&cx, req, db),
                Method::DELETE => self.delete_matching(&cx, req, db),
                _ => self.list(&cx, req, db),
            };
        };
        let obj = self.found(&cx, db, raw_pk)?;
        match verb.method {
            Method::PUT => self.edit(&cx, req, db, obj, body),
            Method::DELETE => self.remove(&cx, req, db, obj),
            _ => self.detail(&cx, req, &mut db.conn()?, obj),
        }
    }
}

impl Core {
    /// [`Endpoint::describe`].
    fn describe<'a>(&'a self, api: &ApiDefaults) -> ResourceDoc<'a> {
        let meta = self.meta;
        ResourceDoc {
            name: &self.name,
            shape: self.shape(),
            writable: &self.writes.writable,
            owner: self.writes.owner,
            plan: &self.list,
            joins: &*self.joins,
            list: self.served_verbs(false),
            detail: self.served_verbs(true),
            aggregate: self.aggregate_served(),
            changes: self.access.changes && self.serves(false, &Method::GET),
            keyset: self.keyset,
            paginate_by: self.list.paginate_by,
            delete_recursive: self.writes.delete_recursive,
            auth: self.access.auth.as_deref().unwrap_or(&*api.auth).describe(),
            rate_limited: self.access.rate.is_some() || api.rate.is_some(),
            permissions: self.access.permissions.is_some(),
            etags: api.etags,
            require_if_match: self.writes.require_if_match,
            max_affected: self.access.max_affected,
            upsert_on: json_keys(meta, &mut self.upsert_fields()),
            children: child_docs(&self.writes.children),
        }
    }
}

/// The JSON keys of `fields` (indexes into `meta`'s fields). Takes a `dyn Iterator`, so that the
/// collecting is compiled once, not once per model.
fn json_keys(meta: &ModelMeta, fields: &mut dyn Iterator<Item = usize>) -> Vec<&'static str> {
    fields.map(|i| meta.fields[i].json_key()).collect()
}

/// The API description of writable nested relations, by body key.
fn child_docs(children: &[Relation]) -> Vec<(&str, ChildDoc<'_>)> {
    (children.iter())
        .map(|r| (r.key.as_str(), r.child.doc()))
        .collect()
}

impl<M: RestModel> Prepared<M> {
    /// The record that a detail path's key names, if this request sees it (else 404; a key
    /// that is not a value of the primary key's type names no record).
    fn found(&self, cx: &Context<'_>, db: &mut LazyConn<'_>, raw_pk: &str) -> Result<M, Error> {
        let pk = match Param::parse(M::meta().pk_field().kind, raw_pk) {
            Ok(Param::Int(pk)) => pk,
            _ => return Err(Error::NotFound),
        };
        self.find(cx, &mut db.conn()?, pk)?.ok_or(Error::NotFound)
    }

    /// `GET` on a record.
    fn detail(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        conn: &mut Conn<'_>,
        obj: M,
    ) -> Result<Reply, Error> {
        if !self.hooks.check_get(cx, Some(&obj)) {
            return Err(Error::Forbidden);
        }
        let sparse = self.sparse_of(&req.query)?;
        let body = self.serialize(cx, conn, &[obj], sparse.as_ref(), Vec::new())?;
        Ok(Reply::ok(body.buf))
    }
}
