//! The admin area (docs/contract.md#admin): a dashboard with panels and the latest changes, and
//! per model an index (columns, sorting, REST-syntax filters, pages, bulk delete and the
//! application's [`Action`]s), add and edit forms (with [`Inline`] children), a delete page
//! with the dependent rows, each object's History page (every write is recorded: [`crate::history`]), CSV/JSON export, CSV
//! import with a preview, and foreign-key lookups. A model's pages can
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

mod action;
mod bulk;
mod cells;
mod checklist;
mod checks;
mod chips;
mod delete;
mod erased;
mod export;
mod facets;
mod form;
mod history;
mod import;
mod index;
mod inline;
mod inline_form;
mod lookup;
mod lookup_json;
mod model_admin;
mod names;
mod ops;
mod page;
mod panel;
mod prepared;
mod rights;
mod roles;
mod routes;
mod state;
mod templates;
mod tokens;
pub mod views;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use actix_web::web;

pub use action::Action;
pub use facets::ShowFacets;
pub use inline::Inline;
pub use model_admin::{Column, ModelAdmin, PageColumn};
pub use panel::{AdminPanel, PanelData, PanelForm, PanelView};
pub use templates::{AdminTemplates, DefaultTemplates};
pub use tokens::TokenPanel;

use crate::accounts::{Auth, UserModel};
use crate::model::RestModel;
use panel::Panel;
use prepared::{AdminModel, Exposure};
use state::State;

/// A registration, made at set-up from every registration's exposure and whether the tables
/// of permissions are registered ([`Admin::permissions`]).
type Registration = Box<dyn FnOnce(&HashMap<TypeId, Exposure>, bool) -> Arc<dyn AdminModel>>;

/// The admin area of an application, for the users of one [`Auth`].
pub struct Admin<U: UserModel> {
    auth: Auth<U>,
    prefix: String,
    permission: Option<state::EntryRule<U>>,
    exposures: HashMap<TypeId, Exposure>,
    registrations: Vec<Registration>,
    panels: Vec<Panel>,
    /// Whether [`Admin::permissions`] was called: the forms of groups and of the user model
    /// then edit their permissions and groups as checklists.
    roles: bool,
}

impl<U: UserModel> std::fmt::Debug for Admin<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl<U: UserModel + Clone + Send + 'static> Admin<U> {
    /// An admin at `/admin` for the users of `auth`. A superuser ([`UserModel::is_admin`])
    /// enters and may do everything; any other active user enters who holds a model
    /// permission (docs/permissions.md) on a registered model, and sees and does only what
    /// those permissions allow (docs/admin.md#permissions).
    pub fn new(auth: &Auth<U>) -> Admin<U> {
        Admin {
            auth: auth.clone(),
            prefix: "/admin".into(),
            permission: None,
            exposures: HashMap::new(),
            registrations: Vec::new(),
            panels: Vec::new(),
            roles: false,
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

    /// Who may enter, replacing the default rule (a superuser, or a holder of a permission on
    /// a registered model); others get 403. As in Django's `is_staff`, entering is all it
    /// decides: inside, a user who is not a superuser still sees and does only what their
    /// model permissions allow, and the panels are for superusers.
    pub fn permission(mut self, check: impl Fn(&U) -> bool + Send + Sync + 'static) -> Admin<U> {
        self.permission = Some(Arc::new(check));
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
        self.registrations.push(Box::new(move |exposures, roles| {
            let mut prepared = model_admin.prepare(exposures);
            prepared.forms.password = password_field;
            if roles {
                prepared.add_checklists(roles::checklists(TypeId::of::<M>(), TypeId::of::<U>()));
            }
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
    pub fn setup(self) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
        let exposures = self.exposures;
        let mut models: Vec<Arc<dyn AdminModel>> = self
            .registrations
            .into_iter()
            .map(|register| register(&exposures, self.roles))
            .collect();
        models.sort_by(|a, b| a.name().cmp(b.name()));
        for pair in models.windows(2) {
            assert!(
                pair[0].name() != pair[1].name(),
                "plover admin: two models are named `{}`",
                pair[0].name()
            );
        }
        let state = Arc::new(State {
            auth: self.auth,
            prefix: self.prefix,
            permission: self.permission,
            models,
            panels: self.panels,
        });
        crate::mounted::erased(move |cfg: &mut web::ServiceConfig| routes::mount(cfg, &state))
    }
}
