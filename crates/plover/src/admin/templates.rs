//! The templates of a model's pages, which an application may replace.

use super::views::render;
use super::views::{
    ActionView, DeleteView, ExportView, FormView, HistoryView, ImportView, IndexView,
};
use crate::error::Error;

/// The HTML of one model's pages (flask-peewee's `ModelAdmin.templates`, Django's
/// `change_list_template`), set with [`ModelAdmin::templates`](super::ModelAdmin::templates).
///
/// Each method gets the page's data ([`views`](super::views)) and returns the page's HTML;
/// the admin answers it with the status it chose (200, or 400 and 409 when a form comes back
/// with errors). Every method defaults to the crate's template; override the pages you
/// want, with askama templates of your own (they escape by default), and wrap them in the
/// admin's layout with [`Chrome::page`](super::views::Chrome::page) if you like. A page's
/// POST forms need the `csrf_token` input ([`Chrome::csrf`](super::views::Chrome::csrf)).
pub trait AdminTemplates: Send + Sync + 'static {
    /// The index.
    fn index(&self, view: &IndexView) -> Result<String, Error> {
        render(view)
    }

    /// The add form (`view.delete` is `None`).
    fn add(&self, view: &FormView) -> Result<String, Error> {
        render(view)
    }

    /// The edit form.
    fn edit(&self, view: &FormView) -> Result<String, Error> {
        render(view)
    }

    /// The delete page.
    fn delete(&self, view: &DeleteView) -> Result<String, Error> {
        render(view)
    }

    /// The export form.
    fn export(&self, view: &ExportView) -> Result<String, Error> {
        render(view)
    }

    /// The import page: the upload form and the preview of a file.
    fn import(&self, view: &ImportView) -> Result<String, Error> {
        render(view)
    }

    /// The confirmation page of an action on selected rows.
    fn action(&self, view: &ActionView) -> Result<String, Error> {
        render(view)
    }

    /// The History page of an object.
    fn history(&self, view: &HistoryView) -> Result<String, Error> {
        render(view)
    }
}

/// The crate's own templates, for every page (what an override can fall back to).
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultTemplates;

impl AdminTemplates for DefaultTemplates {}
