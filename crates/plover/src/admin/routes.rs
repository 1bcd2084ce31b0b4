//! The admin's URLs as actix resources, and the checks every one of them runs first (login,
//! permission, CSRF: docs/contract.md#admin), then its view on a blocking thread.

use std::sync::Arc;

use actix_session::SessionExt;
use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};

use super::checks::Admitted;
use super::form::NEW_PASSWORD;
use super::history::{recent, RecentChange};
use super::page::{error_page, Reply};
use super::panel::PanelView;
use super::prepared::{AdminModel, AdminRequest, Cx};
use super::rights::{require, Rights};
use super::state::State;
use super::views::Chrome;
use crate::accounts::{keep_password, Auth, UserModel};
use crate::db::pending::{written_by, Author};
use crate::db::{replicas, Conn, LazyConn, PeerSocket};
use crate::error::Error;
use crate::history::Actor;
use crate::http::body::BodyLimit;
use crate::http::urlencoded::pairs;
use crate::mounted;
use crate::permissions::Held;

/// Largest form body the admin reads (1 MiB); the import page reads more
/// ([`AdminModel::import_body_limit`]).
const MAX_FORM_BYTES: usize = 1024 * 1024;

/// The session key of the notice the next page shows once ([`Reply::Done`]).
const NOTICE: &str = "admin_notice";

/// The most characters of a notice kept (it travels in the session cookie).
const MAX_NOTICE_CHARS: usize = 300;

/// The view an admin URL names; path parameters (`pk`, `field`, `file`, `action`) are read
/// from the match.
#[derive(Clone)]
enum View {
    Dashboard,
    Static,
    /// The index (GET) or a bulk action (POST).
    Index(Arc<dyn AdminModel>),
    Add(Arc<dyn AdminModel>),
    Export(Arc<dyn AdminModel>),
    Import(Arc<dyn AdminModel>),
    Lookup(Arc<dyn AdminModel>),
    Edit(Arc<dyn AdminModel>),
    Delete(Arc<dyn AdminModel>),
    History(Arc<dyn AdminModel>),
    Panel(usize),
    /// Any other path: 404, once the checks have passed.
    NotFound,
}

impl View {
    /// The model whose pages this view is.
    fn model(&self) -> Option<&Arc<dyn AdminModel>> {
        match self {
            View::Index(m)
            | View::Add(m)
            | View::Export(m)
            | View::Import(m)
            | View::Lookup(m)
            | View::Edit(m)
            | View::Delete(m)
            | View::History(m) => Some(m),
            View::Dashboard | View::Static | View::Panel(_) | View::NotFound => None,
        }
    }
}

/// Mounts `{prefix}` (a redirect to `{prefix}/`) and every admin URL below it, each with and
/// without its trailing slash.
pub(super) fn mount<U: UserModel + Clone + Send + 'static>(
    cfg: &mut web::ServiceConfig,
    state: &Arc<State<U>>,
) {
    let to = format!("{}/", state.prefix);
    cfg.service(
        web::resource(state.prefix.clone()).route(web::get().to(move || {
            let to = to.clone();
            async move {
                HttpResponse::MovedPermanently()
                    .insert_header((header::LOCATION, to))
                    .finish()
            }
        })),
    );
    let mut routes = vec![
        ("/".to_owned(), View::Dashboard),
        ("/static/{file}".to_owned(), View::Static),
    ];
    for model in &state.models {
        let name = model.name();
        routes.extend([
            (format!("/{name}"), View::Index(model.clone())),
            (format!("/{name}/add"), View::Add(model.clone())),
            (format!("/{name}/export"), View::Export(model.clone())),
            (format!("/{name}/import"), View::Import(model.clone())),
            (
                format!("/{name}/lookup/{{field}}"),
                View::Lookup(model.clone()),
            ),
            (format!("/{name}/{{pk}}"), View::Edit(model.clone())),
            (
                format!("/{name}/{{pk}}/delete"),
                View::Delete(model.clone()),
            ),
            (
                format!("/{name}/{{pk}}/history"),
                View::History(model.clone()),
            ),
        ]);
    }
    for (i, panel) in state.panels.iter().enumerate() {
        routes.push((format!("/{}/{{action}}", panel.slug), View::Panel(i)));
    }
    if mounted::recording() {
        for (path, view) in &routes {
            let what = match view {
                View::Dashboard => "the admin's dashboard".to_owned(),
                View::Static => "the admin's styles and scripts".to_owned(),
                View::Index(m) => format!("the admin's index of {}", m.name()),
                View::Add(m) => format!("the admin's add form of {}", m.name()),
                View::Export(m) => format!("the admin's CSV export of {}", m.name()),
                View::Import(m) => format!("the admin's CSV import of {}", m.name()),
                View::Lookup(m) => format!("the admin's lookups of {}", m.name()),
                View::Edit(m) => format!("the admin's edit form of {}", m.name()),
                View::Delete(m) => format!("the admin's delete page of {}", m.name()),
                View::History(m) => format!("the admin's history pages of {}", m.name()),
                View::Panel(_) => "an admin panel".to_owned(),
                View::NotFound => continue,
            };
            let slash = if matches!(view, View::Static) || path == "/" {
                ""
            } else {
                "/"
            };
            let path = format!("{}{path}{slash}", state.prefix);
            mounted::route("GET, POST", path, what);
        }
    }
    let mut scope = web::scope(&state.prefix)
        .app_data(BodyLimit(MAX_FORM_BYTES))
        .app_data(web::Data::from(state.clone()))
        .default_service(handler(web::route(), state, View::NotFound));
    for (path, view) in routes {
        let paths = match path.as_str() {
            "/" => vec![path],
            _ => vec![format!("{path}/"), path],
        };
        let mut resource = web::resource(paths);
        if let View::Import(model) = &view {
            // The file, and its base64 copy in the confirmation, are larger than a form.
            resource = resource.app_data(BodyLimit(model.import_body_limit()));
        }
        scope = scope.service(
            resource
                .route(handler(web::get(), state, view.clone()))
                .route(handler(web::post(), state, view)),
        );
    }
    cfg.service(scope);
}

/// `route` leading to `view`.
fn handler<U: UserModel + Clone + Send + 'static>(
    route: actix_web::Route,
    state: &Arc<State<U>>,
    view: View,
) -> actix_web::Route {
    let state = state.clone();
    route.to(move |req: HttpRequest, admitted: Admitted<U>| {
        dispatch(state.clone(), view.clone(), req, admitted)
    })
}

/// Every admin URL, once its request passed the checks (`Admitted`): the view, on a blocking
/// thread with a pooled connection.
async fn dispatch<U: UserModel + Clone + Send + 'static>(
    state: Arc<State<U>>,
    view: View,
    req: HttpRequest,
    admitted: Admitted<U>,
) -> HttpResponse {
    let Admitted {
        user,
        held,
        mut chrome,
        form,
    } = admitted;
    let post = req.method() == Method::POST;
    if let (View::Static, false) = (&view, post) {
        return static_file(req.match_info().get("file").unwrap_or_default());
    }
    if !post && !matches!(view, View::Lookup(_)) {
        chrome.notice = req.get_session().remove_as(NOTICE).and_then(Result::ok);
    }
    let takes_password = post && view.model().is_some_and(|m| m.takes_password());
    let new_password = if takes_password {
        hash_new_password(&state.auth, &form).await
    } else {
        None
    };
    let param = |name: &str| req.match_info().get(name).unwrap_or_default().to_owned();
    let arg = match &view {
        View::Lookup(_) => param("field"),
        View::Edit(_) | View::Delete(_) | View::History(_) => param("pk"),
        View::Panel(_) => param("action"),
        _ => String::new(),
    };
    // People who change their own password stay logged in; their other sessions end.
    let own_new_hash = match (&view, &new_password) {
        (View::Edit(_), Some(Ok(hash))) if arg == user.pk().to_string() => Some(hash.clone()),
        _ => None,
    };
    let admin_req = AdminRequest {
        post,
        path: req.path().to_owned(),
        query: pairs(req.query_string().as_bytes()),
        form,
        new_password,
        actor: Actor {
            user: Some((user.pk(), user.username().to_owned())),
            source: "admin",
        },
    };
    let user_pk = user.pk();
    let is_lookup = matches!(view, View::Lookup(_));
    let author = Author::User(user.pk());
    let reply_chrome = chrome.clone();
    let db = state.auth.db().clone();
    let auth = state.auth.clone();
    let result = db
        .run_watched(req.conn_data::<PeerSocket>(), move |lazy| {
            // Pages may read from a replica that has what this user saw; forms write on the
            // primary, and the user is remembered at what they wrote.
            let reader = replicas::user_reader(user_pk);
            match post {
                true => lazy.for_client(reader),
                false => lazy.read_from_replicas(reader),
            }
            let view_only = match &view {
                View::Edit(model) => !Rights::of(&held, model.model_name()).change,
                _ => false,
            };
            let cx = Cx {
                chrome: &chrome,
                req: &admin_req,
                held: &held,
                view_only,
            };
            let run = |lazy: &mut LazyConn<'_>| {
                written_by(author, || {
                    run_view(&state, &view, &arg, &cx, &mut lazy.conn()?)
                })
            };
            let mut reply = run(lazy);
            if reply.as_ref().is_err_and(|e| lazy.retry_on_primary(e)) {
                reply = run(lazy);
            }
            lazy.consistency(reply.is_ok());
            reply
        })
        .await;
    if let Ok(Reply::Done { notice, .. }) = &result {
        let notice = notice.clone().cut(MAX_NOTICE_CHARS);
        if let Err(e) = req.get_session().insert(NOTICE, notice) {
            log::warn!("admin: the notice of a done action was not kept: {e}");
        }
    }
    if let (Ok(Reply::Redirect(_) | Reply::Done { .. }), Some(hash)) = (&result, own_new_hash) {
        if let Err(e) = keep_password(&auth, &req.get_session(), user.pk(), &hash) {
            return error_page(Some(&reply_chrome), &e);
        }
    }
    match result {
        Ok(reply) => reply.into_response(&db),
        // The lookup is JSON: its errors are JSON too (docs/contract.md#errors).
        Err(e) if is_lookup => e.error_response(),
        Err(e) => error_page(Some(&reply_chrome), &e),
    }
}

/// The hash of a form's non-empty `new_password`, made here, before the view takes a pooled
/// connection; or the message why it could not be.
async fn hash_new_password<U: UserModel>(
    auth: &Auth<U>,
    form: &[(String, String)],
) -> Option<Result<String, String>> {
    let raw = (form.iter())
        .find(|(k, v)| k == NEW_PASSWORD && !v.is_empty())
        .map(|(_, v)| v.clone())?;
    let auth = auth.clone();
    let hashed = web::block(move || auth.make_password(&raw)).await;
    Some(
        hashed
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string())),
    )
}

/// Runs a view on a blocking thread; `arg` is its path parameter.
fn run_view<U: UserModel>(
    state: &State<U>,
    view: &View,
    arg: &str,
    cx: &Cx<'_>,
    conn: &mut Conn<'_>,
) -> Result<Reply, Error> {
    let post = cx.req.post;
    allowed(view, post, cx.held)?;
    match view {
        View::Dashboard if post => Err(Error::MethodNotAllowed(vec![Method::GET])),
        View::Dashboard => dashboard(state, cx, conn),
        View::Index(model) if post => model.bulk(cx, conn),
        View::Index(model) => model.index(cx, conn),
        View::Add(model) => model.add(cx, conn),
        View::Export(model) => model.export(cx, conn),
        View::Import(model) => model.import(cx, conn),
        View::Lookup(model) if !post => model.lookup(cx, conn, arg),
        View::Edit(model) => model.edit(cx, conn, arg),
        View::Delete(model) => model.delete(cx, conn, arg),
        View::History(model) if !post => model.history(cx, conn, arg),
        View::Panel(i) if post => {
            let panel = state.panels.get(*i).ok_or(Error::NotFound)?;
            require(panel.shown_to(cx.held))?;
            panel.panel.post(arg, &cx.req.form, conn)?;
            Ok(Reply::Redirect(format!("{}/", cx.chrome.prefix)))
        }
        View::History(_) => Err(Error::MethodNotAllowed(vec![Method::GET])),
        View::Lookup(_) | View::Panel(_) | View::Static | View::NotFound => Err(Error::NotFound),
    }
}

/// 403 unless the user who holds `held` may open `view` (docs/admin.md#permissions): a
/// model's index, export and history need `view` (or `change`), its add and import pages
/// `add`, saving an edit `change`, its delete page `delete`, its lookups any of the four.
/// The bulk form checks its action, the import its updates, a panel its own permission.
fn allowed(view: &View, post: bool, held: &Held) -> Result<(), Error> {
    let Some(model) = view.model() else {
        return Ok(()); // the panels check theirs
    };
    let rights = Rights::of(held, model.model_name());
    require(match view {
        View::Index(_) if post => true,
        View::Index(_) | View::Export(_) | View::History(_) => rights.view,
        View::Add(_) | View::Import(_) => rights.add,
        View::Edit(_) if post => rights.change,
        View::Edit(_) => rights.view,
        View::Delete(_) => rights.delete,
        _ => rights.any(),
    })
}

/// A rendered panel.
struct RenderedPanel {
    html: String,
}

/// A model on the dashboard: its page (the index, or the add page for a user who may only
/// add) and the add page beside it where the user may view and add.
struct Card {
    name: String,
    url: String,
    add: Option<String>,
}

impl Card {
    /// The card of `model` for the request's user; `None` when it may not see the model.
    fn of(model: &dyn AdminModel, cx: &Cx<'_>) -> Option<Card> {
        let rights = model.rights_of(cx);
        let index = format!("{}/{}/", cx.chrome.prefix, model.name());
        let add = rights.add.then(|| format!("{index}add/"));
        let (url, add) = match (rights.view, add) {
            (true, add) => (index, add),
            (false, Some(add)) => (add, None),
            (false, None) => return None,
        };
        Some(Card {
            name: model.title().to_owned(),
            url,
            add,
        })
    }
}

#[derive(askama::Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage<'a> {
    chrome: &'a Chrome,
    title: String,
    cards: Vec<Card>,
    recent: Vec<RecentChange>,
    panels: Vec<RenderedPanel>,
}

/// `GET {prefix}/`: the models the user may see (with an add link where it may add), the
/// latest changes and the panels it may see.
fn dashboard<U: UserModel>(
    state: &State<U>,
    cx: &Cx<'_>,
    conn: &mut Conn<'_>,
) -> Result<Reply, Error> {
    let mut panels = Vec::with_capacity(state.panels.len());
    for panel in state.panels.iter().filter(|p| p.shown_to(cx.held)) {
        let data = panel.panel.data(conn)?;
        let url = format!("{}/{}/", cx.chrome.prefix, panel.slug);
        let html = panel.panel.render(&PanelView {
            title: &panel.title,
            url: &url,
            csrf_token: &cx.chrome.csrf,
            data: &data,
        })?;
        panels.push(RenderedPanel { html });
    }
    Reply::page(&DashboardPage {
        chrome: cx.chrome,
        title: "Dashboard".into(),
        cards: (state.models.iter())
            .filter_map(|m| Card::of(m.as_ref(), cx))
            .collect(),
        recent: recent(&state.visible(cx.held), &cx.chrome.prefix, conn)?,
        panels,
    })
}

/// The admin's stylesheet and script, served by the crate (no CDN).
fn static_file(name: &str) -> HttpResponse {
    let (body, content_type) = match name {
        "admin.css" => (
            include_str!("../../static/admin.css"),
            "text/css; charset=utf-8",
        ),
        "admin.js" => (
            include_str!("../../static/admin.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return error_page(None, &Error::NotFound),
    };
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(body)
}
