//! Plover turns annotated diesel models into a REST back office on actix-web.
//!
//! ```
//! use plover::prelude::*;
//!
//! diesel::table! {
//!     note (id) {
//!         id -> Integer,
//!         message -> Text,
//!     }
//! }
//!
//! #[derive(RestModel)]
//! #[diesel(table_name = note)]
//! pub struct Note {
//!     pub id: i32,
//!     pub message: String,
//! }
//!
//! let db = Database::from_url("sqlite://notes.db").expect("a valid URL"); // opened lazily
//! let mut api = RestApi::new(db);
//! api.register::<Note>();
//! let configure = api.setup();
//! let _app = actix_web::App::new().configure(configure);
//! ```
//!
//! See `docs/` for the guide and the reference of every attribute, option and hook.
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `admin` | on | the admin area (`plover::admin`); turns on `accounts` |
//! | `accounts` | on | cookie sessions: the login and logout views, `LoggedInUser`, CSRF tokens; turns on `html` |
//! | `html` | on | HTML pages of application views: `views::render`, `views::object_list`, `views::HtmlError` (askama) |
//! | `manage` | on | the command line of an application (`plover::manage`): `serve`, `check`, `makemigrations`, `migrate`, `createsuperuser`, `openapi`, `routes` (clap); turns on `accounts` |
//! | `postgres` | off | PostgreSQL next to the embedded SQLite (needs libpq) |
//! | `webhooks` | off | `webhooks::deliver`: actix's HTTP client (awc) with TLS (rustls with ring, the Mozilla root certificates); endpoints and signatures need no feature |
//! | `testing` | off | not for applications: hooks of Plover's own tests and benchmarks, no part of the public API |
//!
//! With `default-features = false` Plover is a REST back end alone: the REST API, every
//! authentication (users with passwords, API keys), the schema and the `views` query helpers;
//! none of askama, actix-session and clap is compiled.
//!
//! # Templates
//!
//! Plover's pages and those an application renders with `views::render` are askama templates,
//! and both must be compiled by one askama: a second version of askama in an application's
//! dependency tree makes its templates fail to build ("multiple different versions of crate
//! `askama`"). Plover re-exports its own as `plover::askama` (feature `html`),
//! so an application needs no askama dependency of its own: it imports `plover::askama::Template`
//! and names the re-export in each derive, `#[template(path = "...", askama = plover::askama)]`.
//! `askama.toml` and `templates/` are still read from the application's crate.

#![warn(unreachable_pub, missing_debug_implementations)]

extern crate self as plover;

pub mod accounts;
#[cfg(feature = "admin")]
pub mod admin;
pub mod auth;
pub mod changes;
pub mod db;
mod error;
pub mod history;
mod http;
pub mod jobs;
mod listing;
#[cfg(feature = "mail")]
pub mod mail;
#[cfg(feature = "manage")]
pub mod manage;
mod meta;
pub mod model;
mod mounted;
pub mod openapi;
pub mod permissions;
pub mod query;
pub mod rest;
pub mod schema;
pub mod server;
mod sql;
mod store;
pub mod value;
pub mod views;
pub mod webhooks;

#[doc(hidden)]
pub mod __private;

/// The askama this Plover is built with (askama 0.16), for the templates of an application:
/// import [`Template`](askama::Template) from here and name this path in the derive's `askama`
/// argument, so that the generated code uses this askama, whatever else the dependency tree
/// holds.
///
/// ```
/// use plover::askama::Template;
///
/// #[derive(Template)]
/// #[template(source = "Hello, {{ name }}!", ext = "txt", askama = plover::askama)]
/// struct Hello<'a> {
///     name: &'a str,
/// }
///
/// assert_eq!(Hello { name: "world" }.render().ok().as_deref(), Some("Hello, world!"));
/// ```
#[cfg(feature = "html")]
pub use askama;
pub use error::Error;
pub use model::{Choice, RestModel};
pub use plover_derive::{Choice, RestModel};

/// The names most applications use.
pub mod prelude {
    pub use crate::accounts::{check_password, make_password, Auth, Credentials, UserModel};
    #[cfg(feature = "accounts")]
    pub use crate::accounts::{CsrfToken, LoggedInUser};
    pub use crate::auth::{
        AdminAuthentication, ApiKeyAuthentication, Authentication, Authenticator,
        UserAuthentication,
    };
    pub use crate::db::{Config, Database};
    pub use crate::rest::{Hooks, Resource, RestApi};
    pub use crate::{Choice, Error, RestModel};
}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/getting-started.md")]
mod getting_started_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/reference.md")]
mod reference_doctests {}

#[cfg(all(doctest, feature = "html"))]
#[doc = include_str!("../../../docs/views.md")]
mod views_doctests {}

#[cfg(all(doctest, feature = "accounts"))]
#[doc = include_str!("../../../docs/accounts.md")]
mod accounts_doctests {}

#[cfg(all(doctest, feature = "admin"))]
#[doc = include_str!("../../../docs/admin.md")]
mod admin_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/openapi.md")]
mod openapi_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/changes.md")]
mod changes_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/deployment.md")]
mod deployment_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/security.md")]
mod security_doctests {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/permissions.md")]
mod permissions_doctests {}
