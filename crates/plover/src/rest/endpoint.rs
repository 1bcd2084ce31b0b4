//! The five REST operations of a prepared resource (docs/contract.md#endpoints), in the order
//! of checks of docs/contract.md#order-of-checks: verb, authentication, record lookup,
//! `check_*` hooks, input.

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::conditional;
use super::hooks::Context;
use super::idempotency::Once;
use super::joins::JoinTarget;
use super::prepared::Prepared;
use super::rate::{RateLimit, RateState};
use super::relation::{CreatedChildren, NewChildren};
use super::request::{ApiRequest, Objects, Reply};
use crate::auth::{AuthRequest, AuthUser, Authenticator};
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::history::{self, Actor, Entry};
use crate::listing::ListPlan;
use crate::model::{check_reference, constraints, save, RestModel};
use crate::openapi::ResourceDoc;
use crate::query::Param;
use crate::sql::cascade::delete_rows;
use crate::sql::rows_locked;

/// A registered resource, with its model type erased.
pub(crate) trait Endpoint: Send + Sync {
    /// The URL name.
    fn name(&self) -> &str;
    /// The verbs served on the list path (`detail = false`) or a detail path.
    fn allowed(&self, detail: bool) -> Vec<Method>;
    /// The verbs served on the aggregate path: GET where the resource serves aggregates and
    /// its list GET, else none.
    fn aggregate_verbs(&self) -> Vec<Method>;
    /// The rules that joins from other resources of the API into this model obey.
    fn join_target(&self) -> JoinTarget;
    /// Its list plan.
    fn list(&self) -> &ListPlan;
    /// What the API description needs of this resource; `api`'s authentication and rate limit apply when the
    /// resource sets none.
    fn describe<'a>(&'a self, api: &ApiDefaults) -> ResourceDoc<'a>;
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

/// What an API gives the resources that set none of their own.
pub(crate) struct ApiDefaults {
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) rate: Option<RateLimit>,
    /// Whether reads and updates send an `ETag` ([`RestApi::etags`](super::RestApi::etags)).
    pub(crate) etags: bool,
    /// How long idempotency keys are kept
    /// ([`RestApi::idempotency_ttl`](super::RestApi::idempotency_ttl)).
    pub(crate) idempotency_ttl: std::time::Duration,
}

impl<M: RestModel> Endpoint for Prepared<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn allowed(&self, detail: bool) -> Vec<Method> {
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

    fn aggregate_verbs(&self) -> Vec<Method> {
        if self.aggregates && self.allowed_methods.contains(&Method::GET) {
            vec![Method::GET]
        } else {
            Vec::new()
        }
    }

    fn join_target(&self) -> JoinTarget {
        JoinTarget::new(self.list.clone(), self.hooks.clone())
    }

    fn list(&self) -> &ListPlan {
        &self.list
    }

    fn describe<'a>(&'a self, api: &ApiDefaults) -> ResourceDoc<'a> {
        let meta = M::meta();
        ResourceDoc {
            name: &self.name,
            shape: self.shape(),
            writable: &self.writable,
            owner: self.owner,
            plan: &self.list,
            joins: &*self.joins,
            list: self.allowed(false),
            detail: self.allowed(true),
            aggregate: self.aggregate_verbs(),
            keyset: self.keyset,
            paginate_by: self.list.paginate_by,
            delete_recursive: self.delete_recursive,
            auth: self.auth.as_deref().unwrap_or(&*api.auth).describe(),
            rate_limited: self.rate.is_some() || api.rate.is_some(),
            etags: api.etags,
            require_if_match: self.require_if_match,
            max_affected: self.max_affected,
            upsert_on: self
                .upsert_fields()
                .map(|i| meta.fields[i].json_key())
                .collect(),
            children: (self.children.iter())
                .map(|r| (r.key.as_str(), r.child.doc()))
                .collect(),
        }
    }

    fn handle(
        &self,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<Reply, Error> {
        let aggregate = self.is_aggregate(req.pk.as_deref());
        let detail = req.pk.is_some() && !aggregate;
        let served = if req.method == Method::HEAD {
            Method::GET
        } else {
            req.method.clone()
        };
        if aggregate && !self.aggregate_verbs().contains(&served) {
            return Err(Error::MethodNotAllowed(self.aggregate_verbs()));
        }
        if !self.serves(detail, &served) {
            return Err(Error::MethodNotAllowed(self.allowed(detail)));
        }
        if served != Method::GET {
            db.writes();
        }
        // PATCH is the partial update PUT is, for authentication and hooks too.
        let method = if served == Method::PATCH {
            Method::PUT
        } else {
            served.clone()
        };
        let auth_req = AuthRequest {
            method: &method,
            client: req.client,
            headers: &req.headers,
            query: &req.query,
            form: req.form(),
        };
        // The body of a write is read before authentication, so that a unit that writes on
        // SQLite holds its turn among the writers no longer than it must; its errors answer
        // after authentication and the hooks' checks all the same.
        let body = match method {
            Method::POST => Some(self.read_create(req)),
            Method::PUT if detail => Some(self.read_body(req, false).map(Body::One)),
            _ => None,
        };
        let auth = self.auth.as_deref().unwrap_or(api.auth.as_ref());
        let user = auth.authorize(&auth_req, db)?;
        // After authentication, so that a limit by user knows the user; before any work.
        let limit = match (&self.rate, &api.rate) {
            (Some(own), _) => Some((own, self.name.as_str())),
            (None, Some(shared)) => Some((shared, "*")),
            (None, None) => None,
        };
        // An API key counts (for a rate limit, an idempotency key) only where this resource's
        // authentication checked it.
        let checked_key = || {
            let protected = auth.describe().protected_methods;
            protected
                .is_some_and(|protected| auth_req.is_protected(&protected))
                .then(|| crate::auth::api_key_of(&auth_req))
                .flatten()
        };
        if let Some((limit, scope)) = limit {
            let key = limit.by_api_key_wanted().then(checked_key).flatten();
            match limit.hit(scope, req.client, user.as_ref(), key.as_deref(), db) {
                Ok(state) => *rate = Some(state),
                Err((e, state)) => {
                    *rate = state;
                    return Err(e);
                }
            }
        }
        let cx = Context {
            method: &method,
            user: user.as_ref(),
        };
        if aggregate {
            return self.aggregate(&cx, req, &mut db.conn()?);
        }
        let Some(raw_pk) = &req.pk else {
            return match served {
                Method::POST => {
                    let once = Once::of(req, cx.user, checked_key, api.idempotency_ttl);
                    self.create(&cx, req, db, body, once)
                }
                Method::PUT => self.upsert(&cx, req, db),
                Method::PATCH => self.update_matching(&cx, req, db),
                Method::DELETE => self.delete_matching(&cx, req, db),
                _ => self.list(&cx, req, &mut db.conn()?),
            };
        };
        // A key that is not a value of the primary key's type names no record.
        let pk = match Param::parse(M::meta().pk_field().kind, raw_pk) {
            Ok(Param::Int(pk)) => pk,
            _ => return Err(Error::NotFound),
        };
        let obj = self
            .find(&cx, &mut db.conn()?, pk)?
            .ok_or(Error::NotFound)?;
        match method {
            Method::PUT => self.edit(&cx, req, db, obj, body),
            Method::DELETE => self.remove(&cx, req, db, obj),
            _ => {
                if !self.hooks.check_get(&cx, Some(&obj)) {
                    return Err(Error::Forbidden);
                }
                let sparse = self.sparse_of(&req.query)?;
                let body =
                    self.serialize(&cx, &mut db.conn()?, &[obj], sparse.as_ref(), Vec::new())?;
                Ok(Reply::ok(body.buf))
            }
        }
    }
}

/// The message of a required field a create lacks.
pub(super) const REQUIRED: &str = "this field is required";

/// The body of a POST or PUT as read before authentication: one object's changes, or the
/// objects of a bulk create (parsed after authentication, each on its own), or one object
/// of a resource with nested children (parsed after authentication with its children).
pub(super) enum Body<M: RestModel> {
    One(Parsed<M>),
    Many(Vec<Map<String, Value>>),
    Parent(Map<String, Value>),
}

/// A parsed body: the changes, and the key the client sent for each field given.
pub(super) struct Parsed<M: RestModel> {
    /// The body as sent (without nested children).
    pub(super) data: Map<String, Value>,
    pub(super) changes: M::Changes,
    pub(super) sent: Vec<(usize, String)>,
}

impl<M: RestModel> Prepared<M> {
    /// Whether a list path (`detail = false`) or a detail path serves `method` here: a verb
    /// of the path (the list's writes by filter and upsert only where enabled) that
    /// `allowed_methods` lists. Checked on every request, without building the list.
    fn serves(&self, detail: bool, method: &Method) -> bool {
        let of_path = if method == Method::GET {
            true
        } else if method == Method::POST {
            !detail
        } else if method == Method::PUT {
            detail || self.upsert
        } else if method == Method::PATCH || method == Method::DELETE {
            detail || self.max_affected.is_some()
        } else {
            false
        };
        of_path && self.allowed_methods.contains(method)
    }

    pub(super) fn one(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        obj: M,
    ) -> Result<Vec<u8>, Error> {
        self.serialize(cx, conn, std::slice::from_ref(&obj), None, Vec::new())?
            .into_single()
            .ok_or_else(|| Error::Internal("serialization lost the object".into()))
    }

    /// The body of a POST (`creating`) or PUT, parsed into changes.
    pub(super) fn read_body(&self, req: &ApiRequest, creating: bool) -> Result<Parsed<M>, Error> {
        self.parse_changes(req.json_object()?, creating)
    }

    /// The body of a POST: one object parsed into changes, or the objects of a bulk create
    /// (more than `max_bulk_rows` of them, or of their nested children: 413).
    fn read_create(&self, req: &ApiRequest) -> Result<Body<M>, Error> {
        match req.json_objects()? {
            Objects::One(data) if !self.children.is_empty() => {
                self.check_children_count([&data])?;
                Ok(Body::Parent(data))
            }
            Objects::One(data) => self.parse_changes(data, true).map(Body::One),
            Objects::Many(items) if items.len() > self.list.limits.max_bulk_rows => {
                Err(Error::TooManyItems(self.list.limits.max_bulk_rows))
            }
            Objects::Many(items) => {
                self.check_children_count(&items)?;
                Ok(Body::Many(items))
            }
        }
    }

    /// Parses the body into changes, with the key the client used for each field given.
    pub(super) fn parse_changes(
        &self,
        data: Map<String, Value>,
        creating: bool,
    ) -> Result<Parsed<M>, Error> {
        let meta = M::meta();
        let mut changes = M::Changes::default();
        let mut sent = Vec::new();
        let mut errors = BTreeMap::new();
        let mut invalid = Vec::new();
        for (key, value) in &data {
            match meta.field(key) {
                None => {
                    errors.insert(key.clone(), self.not_a_field(key).to_owned());
                }
                Some((idx, _)) if idx == meta.pk || Some(idx) == self.owner => {}
                Some((idx, field)) if !self.writable[idx] => {
                    let message = if field.read_only {
                        "this field is read-only"
                    } else {
                        "this field cannot be written here"
                    };
                    errors.insert(key.clone(), message.to_owned());
                }
                Some((idx, _)) => match M::set_json(&mut changes, idx, value) {
                    Ok(()) => sent.push((idx, key.clone())),
                    Err(message) => {
                        errors.insert(key.clone(), message);
                        invalid.push(idx);
                    }
                },
            }
        }
        if creating {
            for name in self.missing(&changes, &invalid) {
                errors.insert(name.to_owned(), REQUIRED.to_owned());
            }
        }
        // The field constraints of the values that parsed (`save` checks them again): one
        // answer names every mistake, and a body that could never be written is a 400 before
        // any condition or row is looked at.
        for (idx, key) in &sent {
            let violation = constraints::violation(&meta.fields[*idx], &data[key.as_str()]);
            if let Some(message) = violation {
                errors.insert(key.clone(), message);
            }
        }
        if errors.is_empty() {
            Ok(Parsed {
                data,
                changes,
                sent,
            })
        } else {
            Err(Error::Validation {
                message: "Validation failed".into(),
                fields: errors,
            })
        }
    }

    /// The required fields that a create must be given and `changes` lacks, but those in
    /// `refused` (whose value was given and refused).
    pub(super) fn missing<'a>(
        &'a self,
        changes: &'a M::Changes,
        refused: &'a [usize],
    ) -> impl Iterator<Item = &'static str> + 'a {
        let fields = M::meta().fields.iter().enumerate();
        fields
            .filter(move |&(idx, field)| {
                field.required
                    && self.writable[idx]
                    && Some(idx) != self.owner
                    && !M::is_set(changes, idx)
                    && !refused.contains(&idx)
            })
            .map(|(_, field)| field.name)
    }

    /// Checks that every foreign key given refers to an existing row (400 on the sent key).
    pub(super) fn check_references(
        conn: &mut Conn<'_>,
        data: &Map<String, Value>,
        sent: &[(usize, String)],
    ) -> Result<(), Error> {
        let meta = M::meta();
        for (idx, key) in sent {
            if let Some(id) = data.get(key).and_then(Value::as_i64) {
                check_reference(conn, &meta.fields[*idx], key, id)?;
            }
        }
        Ok(())
    }

    pub(super) fn owner_user<'a>(
        &self,
        cx: &Context<'a>,
    ) -> Result<Option<(&'a AuthUser, usize)>, Error> {
        match self.owner {
            None => Ok(None),
            Some(idx) => cx.user.map(|u| Some((u, idx))).ok_or(Error::Forbidden),
        }
    }

    /// With an owner field: 403 unless the authenticated user owns `obj` (PUT, DELETE).
    pub(super) fn check_owner(&self, cx: &Context<'_>, obj: &M) -> Result<(), Error> {
        match self.owner_user(cx)? {
            Some((user, idx)) if !self.hooks.validate_owner(user, obj, idx) => {
                Err(Error::Forbidden)
            }
            _ => Ok(()),
        }
    }

    /// The changes of a POST or PUT after the hooks' `save_object`, from the body read before
    /// authentication. A user's `save_object` may hash a password: never while a pooled
    /// connection is held. The default hooks do nothing there, and the connection serves the
    /// write.
    pub(super) fn changes_to_save(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        mut parsed: Parsed<M>,
    ) -> Result<Parsed<M>, Error> {
        if self.custom_hooks {
            db.release();
        }
        self.hooks
            .save_object(cx, &mut parsed.changes, &parsed.data)?;
        Ok(parsed)
    }

    fn create(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        body: Option<Result<Body<M>, Error>>,
        once: Result<Once, Error>,
    ) -> Result<Reply, Error> {
        if !self.hooks.check_post(cx) {
            return Err(Error::Forbidden);
        }
        // The idempotency key after the checks, so that a replay answers only its own client.
        let once = once?;
        if let Some(replay) = once.replay(db)? {
            return Ok(replay);
        }
        let (parsed, children) = match body.unwrap_or_else(|| self.read_create(req))? {
            Body::One(parsed) => (self.changes_to_save(cx, db, parsed)?, NewChildren::none()),
            Body::Parent(data) => self.parse_create(cx, db, data)?,
            Body::Many(items) => return self.create_many(cx, db, items, &once),
        };
        let Parsed {
            data,
            mut changes,
            sent,
        } = parsed;
        if let Some((user, idx)) = self.owner_user(cx)? {
            self.hooks.set_owner(&mut changes, user, idx)?;
        }
        once.write(db, |conn| {
            Self::check_references(conn, &data, &sent)?;
            let row = save::<M>(conn, changes, None)?;
            self.record(cx, conn, None, Some(&row))?;
            let pk = row.pk();
            let children = children.write(cx, conn, pk)?;
            let location = format!("{}{}/", req.list_path, pk);
            let body = children.add_to(self.one(cx, conn, row)?);
            Ok(Reply::created(body, Some(location)))
        })
    }

    fn edit(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: M,
        body: Option<Result<Body<M>, Error>>,
    ) -> Result<Reply, Error> {
        self.check_owner(cx, &obj)?;
        if !self.hooks.check_put(cx, &obj) {
            return Err(Error::Forbidden);
        }
        self.check_if_match_sent(req)?;
        let Parsed {
            data,
            changes,
            sent,
        } = self.changes_to_save(cx, db, self.one_body(req, body)?)?;
        let obj = db.write(|conn| {
            let obj = self.current(cx, req, conn, obj)?;
            Self::check_references(conn, &data, &sent)?;
            let row = save::<M>(conn, changes, Some(&obj))?;
            self.record(cx, conn, Some(&obj), Some(&row))?;
            self.one(cx, conn, row)
        })?;
        Ok(Reply::ok(obj))
    }

    fn remove(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        obj: M,
    ) -> Result<Reply, Error> {
        self.check_owner(cx, &obj)?;
        if !self.hooks.check_delete(cx, &obj) {
            return Err(Error::Forbidden);
        }
        self.check_if_match_sent(req)?;
        let ids = [obj.pk()];
        let delete = |conn: &mut Conn<'_>| match self.actor(cx) {
            Some(actor) => history::delete::<M>(conn, &actor, &ids, self.delete_recursive),
            None => delete_rows(conn, M::meta(), &ids, self.delete_recursive),
        };
        let deleted = if conditional::is_conditional(&req.headers) {
            db.write(|conn| {
                self.current(cx, req, conn, obj)?;
                delete(conn)
            })?
        } else {
            delete(&mut db.conn()?)?
        };
        if deleted == 0 {
            return Err(Error::NotFound); // a concurrent delete came first
        }
        Ok(Reply::ok(br#"{"deleted":1}"#.to_vec()))
    }

    /// The one object of a PUT's body, read before authentication or now.
    fn one_body(
        &self,
        req: &ApiRequest,
        body: Option<Result<Body<M>, Error>>,
    ) -> Result<Parsed<M>, Error> {
        match body {
            Some(Ok(Body::One(parsed))) => Ok(parsed),
            Some(Err(e)) => Err(e),
            Some(Ok(Body::Many(_) | Body::Parent(_))) | None => self.read_body(req, false),
        }
    }

    /// A bulk create (docs/contract.md#bulk-writes): every object parsed, given to the
    /// hooks' `save_object` and stamped with the owner, then all written in one transaction,
    /// each through the write path of a single create in a savepoint, so that every object's
    /// errors are found; any error and nothing is written (400 with `items`, by index).
    /// Answers 201 with the created objects, in the body's order. An object's nested
    /// children are parsed and written with it (their errors by path under its index).
    fn create_many(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        items: Vec<Map<String, Value>>,
        once: &Once,
    ) -> Result<Reply, Error> {
        let mut errors = BTreeMap::new();
        let mut parsed = Vec::with_capacity(items.len());
        let owner = self.owner_user(cx)?;
        for (index, data) in items.into_iter().enumerate() {
            // Parsing may hash a password per object: none more once the client has gone.
            crate::db::cancel::stop_if_client_gone()?;
            let item = self.parse_create(cx, db, data);
            let item = item.and_then(|(mut item, children)| {
                if let Some((user, idx)) = owner {
                    self.hooks.set_owner(&mut item.changes, user, idx)?;
                }
                Ok((item, children))
            });
            match item {
                Ok(item) => parsed.push(item),
                Err(e) => {
                    errors.insert(index, e.item_fields().ok_or(e)?);
                }
            }
        }
        if !errors.is_empty() {
            return Err(Error::Items(errors));
        }
        // Usernames are checked against one read of the user table, not one per object.
        once.write(db, |conn| {
            crate::model::usernames::in_bulk(|| {
                let mut rows = Vec::with_capacity(parsed.len());
                let mut created = Vec::with_capacity(parsed.len());
                for (index, (item, children)) in parsed.into_iter().enumerate() {
                    crate::db::cancel::stop_if_client_gone()?;
                    let saved = conn.transaction(|conn| {
                        Self::check_references(conn, &item.data, &item.sent)?;
                        let row = save::<M>(conn, item.changes, None)?;
                        self.record(cx, conn, None, Some(&row))?;
                        let children = children.write(cx, conn, row.pk())?;
                        Ok((row, children))
                    });
                    match saved {
                        Ok((row, children)) => {
                            rows.push(row);
                            created.push(children);
                        }
                        Err(e) => {
                            errors.insert(index, e.item_fields().ok_or(e)?);
                        }
                    }
                }
                if !errors.is_empty() {
                    return Err(Error::Items(std::mem::take(&mut errors)));
                }
                let objects = self.serialize(cx, conn, &rows, None, b"[".to_vec())?;
                let mut body = if self.children.is_empty() {
                    objects.buf
                } else {
                    CreatedChildren::add_to_each(objects, created)
                };
                body.push(b']');
                Ok(Reply::created(body, None))
            })
        })
    }

    /// 428 where this resource needs `If-Match` on writes and the request sends none.
    fn check_if_match_sent(&self, req: &ApiRequest) -> Result<(), Error> {
        if self.require_if_match && !conditional::has_if_match(&req.headers) {
            return Err(Error::PreconditionRequired);
        }
        Ok(())
    }

    /// The row `obj` as a write about to change it finds it, in the write's transaction: for
    /// a conditional request, read again (and locked on PostgreSQL) and checked against
    /// `If-Match` / `If-None-Match` by the `ETag` of its current representation (412 when it
    /// changed since the client read it; 404 when it is gone); else `obj` as read before.
    fn current(
        &self,
        cx: &Context<'_>,
        req: &ApiRequest,
        conn: &mut Conn<'_>,
        obj: M,
    ) -> Result<M, Error> {
        if !conditional::is_conditional(&req.headers) {
            return Ok(obj);
        }
        let mut rows: Vec<M> = rows_locked(conn, M::meta(), &[obj.pk()])?;
        let current = rows.pop().ok_or(Error::NotFound)?;
        let shown = self.serialize(cx, conn, std::slice::from_ref(&current), None, Vec::new())?;
        conditional::check_write(&req.headers, &crate::digest::tag(&shown.buf))?;
        Ok(current)
    }

    /// Who the history records as the author of this request's write; `None` when the
    /// resource keeps no history.
    pub(super) fn actor(&self, cx: &Context<'_>) -> Option<Actor> {
        self.history.then(|| Actor {
            user: cx.user.map(|u| (u.id, u.username.clone())),
            source: "api",
        })
    }

    /// Records a write of this resource in the history, if it keeps one (`before`/`after` as
    /// [`Entry::of`]).
    pub(super) fn record(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        before: Option<&M>,
        after: Option<&M>,
    ) -> Result<(), Error> {
        match self.actor(cx) {
            Some(actor) => history::record(conn, Entry::of(&actor, before, after).as_slice()),
            None => Ok(()),
        }
    }
}
