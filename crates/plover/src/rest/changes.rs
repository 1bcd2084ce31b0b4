//! A resource's change feed (docs/changes.md#the-change-feed): who may open it and on which
//! conditions, and, per event of the outbox, what its subscriber hears of it: the event as the
//! subscriber's own detail `GET` would show the row right after the write, judged on the row
//! after the write, or before it for a row that the write took out of the subscriber's view.

use actix_web::http::Method;

use super::checks::{ApiDefaults, Verb};
use super::hooks::{Context, ReadChecks};
use super::prepared::{prepend, Core, Prepared};
use super::rate::RateState;
use super::request::ApiRequest;
use crate::auth::AuthUser;
use crate::changes::feed::{self, Start, AFTER, CHANGES as CHANGES_LIST};
use crate::changes::ChangeEvent;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::model::RestModel;
use crate::query::{Filter, Op, Param, Select};
use crate::sql;

/// The path segment of a feed under its resource: `{prefix}/{name}/changes/`.
pub(crate) const CHANGES: &str = "changes";

/// The one value of the list parameter `changes`.
const CURSOR_VALUE: &str = "cursor";

/// A subscriber of a feed as its resource admitted it.
pub(crate) struct FeedView {
    user: Option<AuthUser>,
    /// The stream's conditions with the resource's scope and joins' rules.
    full: Select,
    /// The scope and the joins' rules alone: what the subscriber may read at all.
    scoped: Select,
    /// The request's query pairs (its `fields=`).
    query: Vec<(String, String)>,
}

impl FeedView {
    /// The context of the hooks that judge its events: a GET by its subscriber.
    fn context(&self) -> Context<'_> {
        Context {
            method: &Method::GET,
            user: self.user.as_ref(),
        }
    }

    /// The subscriber's user, as the bounds on streams count it.
    pub(crate) fn user_key(&self) -> Option<String> {
        self.user.as_ref().map(|u| u.id.to_string())
    }
}

/// The pairs of a list or feed request without `after` and `changes`, which its conditions
/// do not read.
pub(crate) fn conditions_only(query: &[(String, String)]) -> Vec<(String, String)> {
    (query.iter())
        .filter(|(k, _)| k != AFTER && k != CHANGES_LIST)
        .cloned()
        .collect()
}

/// Whether a list request asks for `meta.changes_cursor`: a 400 naming `changes` for another
/// value, or where the resource has no feed.
pub(crate) fn wants_cursor(req: &ApiRequest, served: bool) -> Result<bool, Error> {
    match req.param(CHANGES_LIST) {
        None => Ok(false),
        Some(_) if !served => Err(Error::param(
            CHANGES_LIST,
            "this resource has no change feed",
        )),
        Some(CURSOR_VALUE) => Ok(true),
        Some(_) => Err(Error::param(CHANGES_LIST, "expected 'cursor'")),
    }
}

impl<M: RestModel> Prepared<M> {
    /// Appends the events of `events` that `view`'s subscriber hears of.
    pub(crate) fn judge_events(
        &self,
        view: &FeedView,
        conn: &mut Conn<'_>,
        events: &[ChangeEvent],
        out: &mut String,
    ) -> Result<(), Error> {
        let cx = view.context();
        let sparse = self.sparse_of(&view.query)?;
        let mut seen = |conn: &mut Conn<'_>, select: &Select, pk, row: Option<&str>, show: bool| {
            let Some(found) = self.as_of(&cx, conn, select, pk, row)? else {
                return Ok(None);
            };
            if !show {
                return Ok(Some(String::new()));
            }
            let body = self.serialize(&cx, conn, &[found], sparse.as_ref(), Vec::new())?;
            String::from_utf8(body.buf)
                .map(Some)
                .map_err(|e| Error::Internal(e.to_string()))
        };
        judge(conn, view, events, out, &mut seen)
    }

    /// Row `pk` as `row` (a JSON object the outbox kept) if `select` selects it and the
    /// per-object read check lets `cx` read it.
    fn as_of(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        select: &Select,
        pk: i64,
        row: Option<&str>,
    ) -> Result<Option<M>, Error> {
        let found = row_as_of::<M>(conn, select, pk, row)?;
        Ok(found.filter(|m| self.hooks.check_get(cx, Some(m))))
    }

    /// The object of a webhook's delivery of `event` (docs/changes.md#webhooks): the row after
    /// the write as this resource serializes it outside any request (its fields and
    /// exclusions; no scope, read check or `fields=`), as JSON text; `None` for a deletion.
    pub(crate) fn webhook_object(
        &self,
        conn: &mut Conn<'_>,
        event: &ChangeEvent,
    ) -> Result<Option<String>, Error> {
        let after = event.row_after.as_deref();
        let Some(row) = row_as_of::<M>(conn, &Select::default(), event.object_id, after)? else {
            return Ok(None);
        };
        let cx = Context {
            method: &Method::GET,
            user: None,
        };
        let body = self.serialize(&cx, conn, &[row], None, Vec::new())?;
        String::from_utf8(body.buf)
            .map(Some)
            .map_err(|e| Error::Internal(e.to_string()))
    }
}

impl Core {
    /// Admits a subscriber: GET only, the list's authentication and rate limit, its read
    /// check, its conditions (an unknown filter is the list's 400); then where its stream
    /// starts, from `Last-Event-ID` or `after`. `hooks` are the resource's.
    pub(crate) fn open_feed(
        &self,
        hooks: &dyn ReadChecks,
        req: &ApiRequest,
        db: &mut LazyConn<'_>,
        api: &ApiDefaults,
        rate: &mut Option<RateState>,
    ) -> Result<(FeedView, Start), Error> {
        let listed = self.serves(false, &Method::GET);
        if !listed {
            return Err(Error::MethodNotAllowed(Vec::new()));
        }
        if !matches!(req.method, Method::GET | Method::HEAD) {
            return Err(Error::MethodNotAllowed(vec![Method::GET, Method::HEAD]));
        }
        let verb = Verb {
            served: Method::GET,
            method: Method::GET,
            detail: false,
            aggregate: false,
        };
        let admitted = self.admit(req, &verb, db, api, rate)?;
        let cx = admitted.context();
        hooks.check_list_read(&cx)?;
        let header = req.headers.get("last-event-id");
        let header = header.map(|v| v.to_str().unwrap_or("not text"));
        let position = feed::position(header, req.param(AFTER))?;
        let query = conditions_only(&req.query);
        self.sparse_of(&query)?;
        let meta = self.meta;
        let mut full = self.list.conditions(&query, &*self.joins)?;
        prepend(hooks.scope_of(&cx), &mut full);
        full.within = self.joins.within(&cx, meta, &full)?;
        let mut scoped = Select::default();
        prepend(hooks.scope_of(&cx), &mut scoped);
        let conn = &mut db.conn()?;
        let start = feed::start(conn, position)?;
        let view = FeedView {
            user: admitted.user().cloned(),
            full,
            scoped,
            query,
        };
        Ok((view, start))
    }

    /// Whether `pk` (the path segment after the resource's) names its feed.
    pub(crate) fn is_feed(&self, pk: Option<&str>) -> bool {
        self.access.changes && pk == Some(CHANGES)
    }
}

/// Whether a subscriber sees row `pk` as `row` (a JSON object the outbox kept) under a
/// selection: `None` if not; else its object as JSON text when asked to show it (else empty).
type Seen<'a> = dyn FnMut(&mut Conn<'_>, &Select, i64, Option<&str>, bool) -> Result<Option<String>, Error>
    + 'a;

/// Appends the Server-Sent Events of `events` that `view`'s subscriber hears of, as `seen`
/// judges the rows: an event as the subscriber's detail `GET` would show the row after the
/// write; `left` for a row the write took out of the subscriber's view. Compiled once for
/// every model.
fn judge(
    conn: &mut Conn<'_>,
    view: &FeedView,
    events: &[ChangeEvent],
    out: &mut String,
    seen: &mut Seen<'_>,
) -> Result<(), Error> {
    for event in events {
        let (before, after) = (event.row_before.as_deref(), event.row_after.as_deref());
        let pk = event.object_id;
        let (kind, object) = match event.op.as_str() {
            "deleted" => match seen(conn, &view.full, pk, before, false)? {
                Some(_) => ("deleted", None),
                None => continue,
            },
            op => match seen(conn, &view.full, pk, after, true)? {
                Some(object) => (
                    if op == "created" {
                        "created"
                    } else {
                        "updated"
                    },
                    Some(object),
                ),
                None if op == "updated" && seen(conn, &view.full, pk, before, false)?.is_some() => {
                    ("left", seen(conn, &view.scoped, pk, after, true)?)
                }
                None => continue,
            },
        };
        let object = object.as_deref().unwrap_or("null");
        out.push_str(&format!(
            "id: {}\nevent: {kind}\ndata: {{\"id\":{},\"object\":{object}}}\n\n",
            event.place(),
            event.object_id
        ));
    }
    Ok(())
}

/// Row `pk` as `row` (a JSON object the outbox kept) if `select` selects it.
fn row_as_of<M: RestModel>(
    conn: &mut Conn<'_>,
    select: &Select,
    pk: i64,
    row: Option<&str>,
) -> Result<Option<M>, Error> {
    let Some(row) = row else { return Ok(None) };
    let mut select = select.clone();
    select.filters.push(Filter {
        path: vec![M::meta().pk],
        op: Op::Eq,
        values: vec![Param::Int(pk)],
    });
    select.limit = Some(1);
    let found: Vec<M> = sql::rows_as_of(conn, M::meta(), &select, row)?;
    Ok(found.into_iter().next())
}
