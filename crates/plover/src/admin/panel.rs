//! Dashboard panels.

use std::sync::Arc;

use askama::Template;

use super::views::render;
use crate::db::Conn;
use crate::error::Error;
use crate::permissions::Held;

/// What a panel shows on the dashboard: lines of text and forms that post to the panel.
#[derive(Debug, Clone, Default)]
pub struct PanelData {
    /// Lines of text, shown as a list (escaped).
    pub items: Vec<String>,
    /// One-field forms; each posts to `{prefix}/{panel}/{action}/`.
    pub forms: Vec<PanelForm>,
}

/// A one-field form of a panel.
#[derive(Debug, Clone)]
pub struct PanelForm {
    /// The URL segment the form posts to: `{prefix}/{panel}/{action}/`.
    pub action: String,
    /// The input's name.
    pub field: String,
    /// The input's label.
    pub label: String,
    /// The button's text.
    pub button: String,
}

/// What a panel's template gets.
#[derive(Debug)]
pub struct PanelView<'a> {
    /// The panel's title.
    pub title: &'a str,
    /// The panel's URL, `{prefix}/{panel}/`.
    pub url: &'a str,
    /// The session's CSRF token, for the forms.
    pub csrf_token: &'a str,
    /// What `data` returned.
    pub data: &'a PanelData,
}

/// A panel of the admin dashboard (flask-peewee's `AdminPanel`).
///
/// ```
/// # use plover::admin::{AdminPanel, PanelData, PanelForm};
/// # use plover::db::Conn;
/// struct Hello;
///
/// impl AdminPanel for Hello {
///     fn data(&self, _conn: &mut Conn<'_>) -> Result<PanelData, plover::Error> {
///         Ok(PanelData { items: vec!["hello".into()], forms: vec![] })
///     }
/// }
/// ```
pub trait AdminPanel: Send + Sync + 'static {
    /// What the dashboard shows, read with the request's connection.
    fn data(&self, conn: &mut Conn<'_>) -> Result<PanelData, Error>;

    /// The permission (docs/permissions.md) a user needs to see the panel and post to it,
    /// such as `note.view`; by default `None`: the panel is for superusers only.
    fn permission(&self) -> Option<&str> {
        None
    }

    /// Handles `POST {prefix}/{panel}/{action}/` (only users who may see the panel, with a
    /// valid CSRF token, get here); the admin then redirects to the dashboard. The default has
    /// no actions (404).
    fn post(
        &self,
        action: &str,
        form: &[(String, String)],
        conn: &mut Conn<'_>,
    ) -> Result<(), Error> {
        let _ = (action, form, conn);
        Err(Error::NotFound)
    }

    /// The panel's HTML: by default the crate's `admin/panels/default.html`. Override it to
    /// render a template of your own; escape what you insert.
    fn render(&self, view: &PanelView<'_>) -> Result<String, Error> {
        render(&DefaultPanel { view })
    }
}

#[derive(Template)]
#[template(path = "admin/panels/default.html")]
struct DefaultPanel<'a> {
    view: &'a PanelView<'a>,
}

/// A registered panel.
#[derive(Clone)]
pub(crate) struct Panel {
    pub(crate) title: String,
    pub(crate) slug: String,
    pub(crate) panel: Arc<dyn AdminPanel>,
}

impl Panel {
    /// Whether a user who holds `held` sees the panel and may post to it: a superuser, or a
    /// holder of the panel's permission.
    pub(crate) fn shown_to(&self, held: &Held) -> bool {
        held.is_superuser() || self.panel.permission().is_some_and(|p| held.has(p))
    }
}
