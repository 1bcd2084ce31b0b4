//! The admin area (SPEC.md section 10): a dashboard with panels, and per model an index
//! (columns, sorting, REST-syntax filters, pages, bulk delete), add and edit forms, a delete
//! page with the dependent rows, CSV/JSON export and foreign-key lookups. A model's pages can
//! be rendered by the application's own templates ([`AdminTemplates`], over the data of
//! [`views`]).
//!
//! ```no_run
//! # use plover::prelude::*;
//! # use plover::admin::{Admin, Column, ModelAdmin};
//! # diesel::table! { user (id) { id -> Integer, username -> Text, password -> Text, admin -> Bool } }
//! # #[derive(Clone, RestModel)] #[diesel(table_name = user)] #[rest(display = "{username}")]
//! # pub struct User { pub id: i32, pub username: String, #[rest(write_only)] pub password: String, pub admin: bool }
//! # impl UserModel for User {
//! #     fn username(&self) -> &str { &self.username }
//! #     fn password_hash(&self) -> &str { &self.password }
//! #     fn password_hash_mut(&mut self) -> &mut String { &mut self.password }
//! #     fn is_admin(&self) -> bool { self.admin }
//! # }
//! let db = Database::from_url("sqlite://app.db").expect("a valid URL");
//! let auth = Auth::<User>::new(db);
//! let mut admin = Admin::new(&auth);
//! admin.register(ModelAdmin::<User>::new().exclude([User::FIELDS.password]));
//! let admin = admin.setup();
//! let app = actix_web::App::new()
//!     .wrap(auth.session_middleware())
//!     .configure(auth.setup())
//!     .configure(admin);
//! ```

mod delete;
mod export;
mod form;
mod index;
mod lookup;
mod model_admin;
mod page;
mod panel;
mod prepared;
mod templates;
pub mod views;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use actix_session::SessionExt;
use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};

pub use model_admin::{Column, ModelAdmin, PageColumn};
pub use panel::{AdminPanel, PanelData, PanelForm, PanelView};
pub use templates::{AdminTemplates, DefaultTemplates};

use crate::accounts::{current_user, Auth, CsrfToken, LoginRedirect, UserModel};
use crate::error::Error;
use crate::model::RestModel;
use page::{error_page, Reply};
use prepared::{AdminModel, AdminRequest, Cx, Exposure};
use views::Chrome;

/// Largest form body the admin reads (1 MiB).
const MAX_FORM_BYTES: usize = 1024 * 1024;

type Registration = Box<dyn FnOnce(&HashMap<TypeId, Exposure>) -> Arc<dyn AdminModel>>;

/// The admin area of an application, for the users of one [`Auth`].
pub struct Admin<U: UserModel> {
    auth: Auth<U>,
    prefix: String,
    permission: Arc<dyn Fn(&U) -> bool + Send + Sync>,
    exposures: HashMap<TypeId, Exposure>,
    registrations: Vec<Registration>,
    panels: Vec<Panel>,
}

/// A registered panel.
#[derive(Clone)]
struct Panel {
    title: String,
    slug: String,
    panel: Arc<dyn AdminPanel>,
}

impl<U: UserModel> std::fmt::Debug for Admin<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl<U: UserModel + Clone + Send + 'static> Admin<U> {
    /// An admin at `/admin` for the users of `auth`; a user may enter when
    /// [`UserModel::is_admin`] says so.
    pub fn new(auth: &Auth<U>) -> Admin<U> {
        Admin {
            auth: auth.clone(),
            prefix: "/admin".into(),
            permission: Arc::new(|u: &U| u.is_admin()),
            exposures: HashMap::new(),
            registrations: Vec::new(),
            panels: Vec::new(),
        }
    }

    /// The URL prefix (default `/admin`).
    pub fn prefix(mut self, prefix: &str) -> Admin<U> {
        let trimmed = prefix.trim_matches('/');
        assert!(
            !trimmed.is_empty(),
            "plover: the admin prefix must not be empty"
        );
        self.prefix = format!("/{trimmed}");
        self
    }

    /// Who may enter (default: [`UserModel::is_admin`]). Others get 403.
    pub fn permission(mut self, check: impl Fn(&U) -> bool + Send + Sync + 'static) -> Admin<U> {
        self.permission = Arc::new(check);
        self
    }

    /// Registers a model. Its options are checked at [`Admin::setup`], which panics on a
    /// field name that does not exist or a form that hides a required field.
    pub fn register<M: RestModel>(&mut self, model_admin: ModelAdmin<M>) -> &mut Admin<U> {
        self.exposures
            .insert(TypeId::of::<M>(), model_admin.exposure());
        // The user model's forms take a new password, hashed by the accounts component.
        let password_field = (TypeId::of::<M>() == TypeId::of::<U>())
            .then(|| M::meta().field(U::PASSWORD_FIELD).map(|(idx, _)| idx))
            .flatten();
        self.registrations.push(Box::new(move |exposures| {
            let mut prepared = model_admin.prepare(exposures);
            prepared.password_field = password_field;
            Arc::new(prepared) as Arc<dyn AdminModel>
        }));
        self
    }

    /// Adds a panel to the dashboard, titled `title`; its URLs are
    /// `{prefix}/{slug of the title}/{action}/`.
    pub fn register_panel(&mut self, title: &str, panel: impl AdminPanel) -> &mut Admin<U> {
        let slug: String = title
            .to_lowercase()
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '-' })
            .collect();
        self.panels.push(Panel {
            title: title.to_owned(),
            slug,
            panel: Arc::new(panel),
        });
        self
    }

    /// Finishes the registrations: mounts `{prefix}/...`. Configure it on the `App`, with
    /// the session middleware and the accounts views of the same `Auth`.
    pub fn setup(self) -> impl Fn(&mut web::ServiceConfig) + Clone {
        let exposures = self.exposures;
        let mut models: Vec<Arc<dyn AdminModel>> = self
            .registrations
            .into_iter()
            .map(|register| register(&exposures))
            .collect();
        models.sort_by(|a, b| a.name().cmp(b.name()));
        for pair in models.windows(2) {
            assert!(
                pair[0].name() != pair[1].name(),
                "plover admin: two models are named `{}`",
                pair[0].name()
            );
        }
        let state = web::Data::new(State {
            auth: self.auth,
            prefix: self.prefix,
            permission: self.permission,
            models,
            panels: self.panels,
        });
        move |cfg: &mut web::ServiceConfig| {
            let prefix = state.prefix.clone();
            cfg.service(web::resource(prefix.clone()).route(web::get().to(move || {
                let to = format!("{prefix}/");
                async move {
                    HttpResponse::MovedPermanently()
                        .insert_header((header::LOCATION, to))
                        .finish()
                }
            })));
            cfg.service(
                web::resource(format!("{}/{{tail:.*}}", state.prefix))
                    .app_data(state.clone())
                    .route(web::get().to(dispatch::<U>))
                    .route(web::post().to(dispatch::<U>)),
            );
        }
    }
}

/// Everything the handler needs, shared by the workers.
struct State<U: UserModel> {
    auth: Auth<U>,
    prefix: String,
    permission: Arc<dyn Fn(&U) -> bool + Send + Sync>,
    models: Vec<Arc<dyn AdminModel>>,
    panels: Vec<Panel>,
}

/// 403 as a page.
fn forbidden(chrome: Option<&Chrome>) -> HttpResponse {
    error_page(chrome, &Error::Forbidden)
}

/// Every admin URL: the checks of SPEC.md section 10 in order (login, permission, CSRF), then
/// the view.
async fn dispatch<U: UserModel + Clone + Send + 'static>(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<State<U>>,
) -> HttpResponse {
    let user = match current_user::<U>(&req).await {
        Ok(Some(user)) => user,
        Ok(None) => {
            return LoginRedirect::new(&state.auth.login_url(), &req).error_response();
        }
        Err(e) => return error_page(None, &e),
    };
    if !(state.permission)(&user) {
        return forbidden(None);
    }
    let csrf = match CsrfToken::of(&req.get_session()) {
        Ok(token) => token,
        Err(e) => return error_page(None, &e),
    };
    let post = req.method() == Method::POST;
    let form = if post {
        match read_form(body).await {
            Ok(form) => form,
            Err(e) => return error_page(None, &e),
        }
    } else {
        Vec::new()
    };
    let chrome = Chrome {
        prefix: state.prefix.clone(),
        user: user.username().to_owned(),
        logout: format!("{}?next={}/", state.auth.logout_url(), state.prefix),
        models: state
            .models
            .iter()
            .map(|m| {
                (
                    m.name().to_owned(),
                    format!("{}/{}/", state.prefix, m.name()),
                )
            })
            .collect(),
        csrf: csrf.value().to_owned(),
    };
    if post {
        let submitted = form
            .iter()
            .find(|(k, _)| k == "csrf_token")
            .map(|(_, v)| v.as_str());
        if csrf.verify(submitted).is_err() {
            return forbidden(Some(&chrome));
        }
    }
    let tail = req.match_info().get("tail").unwrap_or_default().to_owned();
    let segments: Vec<String> = tail
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if segments.first().map(String::as_str) == Some("static") && !post {
        return static_file(segments.get(1).map(String::as_str).unwrap_or_default());
    }
    // A new password is hashed here, before the view takes a pooled connection.
    let takes_password = segments.first().is_some_and(|name| {
        state
            .models
            .iter()
            .any(|m| m.name() == name && m.takes_password())
    });
    let raw = form
        .iter()
        .find(|(k, _)| k == form::NEW_PASSWORD)
        .map(|(_, v)| v.clone())
        .filter(|v| post && takes_password && !v.is_empty());
    let new_password = match raw {
        Some(raw) => {
            let auth = state.auth.clone();
            let hashed = web::block(move || auth.make_password(&raw))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            Some(hashed)
        }
        None => None,
    };
    let admin_req = AdminRequest {
        post,
        path: req.path().to_owned(),
        query: form_urlencoded::parse(req.query_string().as_bytes())
            .into_owned()
            .collect(),
        form,
        new_password,
    };
    let is_lookup = segments.get(1).map(String::as_str) == Some("lookup");
    let state = state.into_inner();
    let reply_chrome = chrome.clone();
    let result = state
        .auth
        .db()
        .clone()
        .run(move |conn| route(&state, &chrome, &admin_req, &segments, conn))
        .await;
    match result {
        Ok(reply) => reply.into_response(),
        // The lookup is JSON: its errors are JSON too (SPEC.md section 7).
        Err(e) if is_lookup => e.error_response(),
        Err(e) => error_page(Some(&reply_chrome), &e),
    }
}

/// Reads a form body (urlencoded), at most [`MAX_FORM_BYTES`].
async fn read_form(mut body: web::Payload) -> Result<Vec<(String, String)>, Error> {
    use futures_util::StreamExt;
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|e| Error::BadBody(format!("the body could not be read: {e}")))?;
        if bytes.len() + chunk.len() > MAX_FORM_BYTES {
            return Err(Error::PayloadTooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(form_urlencoded::parse(&bytes).into_owned().collect())
}

/// Picks the view of a path below the prefix; runs on a blocking thread.
fn route<U: UserModel>(
    state: &State<U>,
    chrome: &Chrome,
    req: &AdminRequest,
    segments: &[String],
    conn: &mut crate::db::Conn<'_>,
) -> Result<Reply, Error> {
    let cx = Cx { chrome, req };
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    let Some(first) = parts.first() else {
        return match req.post {
            true => Err(Error::MethodNotAllowed(vec![Method::GET])),
            false => dashboard(state, &cx, conn),
        };
    };
    if let Some(model) = state.models.iter().find(|m| m.name() == *first) {
        return match (&parts[1..], req.post) {
            ([], false) => model.index(&cx, conn),
            ([], true) => model.bulk(&cx, conn),
            (["add"], _) => model.add(&cx, conn),
            (["export"], _) => model.export(&cx, conn),
            (["lookup", field], false) => model.lookup(&cx, conn, field),
            ([pk], _) => model.edit(&cx, conn, pk),
            ([pk, "delete"], _) => model.delete(&cx, conn, pk),
            _ => Err(Error::NotFound),
        };
    }
    if let Some(panel) = state.panels.iter().find(|p| p.slug == *first) {
        return match (&parts[1..], req.post) {
            ([action], true) => {
                panel.panel.post(action, &req.form, conn)?;
                Ok(Reply::Redirect(format!("{}/", chrome.prefix)))
            }
            _ => Err(Error::NotFound),
        };
    }
    Err(Error::NotFound)
}

/// A rendered panel.
struct RenderedPanel {
    html: String,
}

#[derive(askama::Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage<'a> {
    chrome: &'a Chrome,
    title: String,
    panels: Vec<RenderedPanel>,
}

/// `GET {prefix}/`: every model and every panel.
fn dashboard<U: UserModel>(
    state: &State<U>,
    cx: &Cx<'_>,
    conn: &mut crate::db::Conn<'_>,
) -> Result<Reply, Error> {
    let mut panels = Vec::with_capacity(state.panels.len());
    for panel in &state.panels {
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
