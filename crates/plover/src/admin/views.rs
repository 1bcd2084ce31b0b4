//! What the admin's model pages show: the data of the index, add, edit, delete, history and
//! export pages, as the crate's templates and an application's own ([`AdminTemplates`]) read it.
//!
//! The admin fills these in; an application only reads them (they are `#[non_exhaustive]`).
//! Every text is the raw value: a template escapes it (askama does by default, so never
//! `|safe` a field of a view). Each view is also the crate's own template:
//! `view.render()` gives the default page.
//!
//! [`AdminTemplates`]: super::AdminTemplates

use askama::Template;

use crate::error::Error;

pub use super::facets::{Facet, FacetSearch, FacetValue};
pub use crate::listing::page::RowCount;

/// The frame of every admin page: who is logged in, the models to navigate to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Chrome {
    /// The admin's URL prefix (`/admin`).
    pub prefix: String,
    /// The logged-in user's name.
    pub user: String,
    /// The logout URL (back to the login page afterwards).
    pub logout: String,
    /// `(name, url)` of every registered model: its name for people, plural (`Messages`),
    /// and its index (or add page, for a user who may only add).
    pub models: Vec<(String, String)>,
    /// The session's CSRF token: every POST form carries it as `csrf_token`.
    pub csrf: String,
    /// What the last save, delete, action or import did, shown once, on the page after it,
    /// in an element with `role="status"`.
    pub notice: Option<Notice>,
    /// The trail from the dashboard to this page (`Home › Messages › Hello`), the last one
    /// the page itself; empty on the dashboard.
    pub breadcrumbs: Vec<Crumb>,
}

/// One step of [`Chrome::breadcrumbs`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Crumb {
    /// Its text.
    pub text: String,
    /// Its link; `None` for the page itself.
    pub url: Option<String>,
}

impl Crumb {
    /// A step linked to `url`.
    pub(crate) fn link(text: impl Into<String>, url: impl Into<String>) -> Crumb {
        Crumb {
            text: text.into(),
            url: Some(url.into()),
        }
    }

    /// The page itself.
    pub(crate) fn here(text: impl Into<String>) -> Crumb {
        Crumb {
            text: text.into(),
            url: None,
        }
    }
}

/// What the last write did, kept in the session until the next page shows it: `lead`, then
/// the object written in quotes (linked to its edit page where it still exists), then `tail`.
/// `The message “Hello” was changed successfully.`
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Notice {
    /// The text before the object (or the whole text, without one).
    pub lead: String,
    /// The object's text and its edit page.
    pub object: Option<(String, Option<String>)>,
    /// The text after the object.
    pub tail: String,
}

impl Notice {
    /// A notice of text only ("3 users deactivated").
    pub(crate) fn text(text: impl Into<String>) -> Notice {
        Notice {
            lead: text.into(),
            object: None,
            tail: String::new(),
        }
    }

    /// `The {model} “{object}” was {done} successfully.{then}`, the object linked to `link`.
    pub(crate) fn about(
        model: &str,
        object: String,
        link: Option<String>,
        done: &str,
        then: &str,
    ) -> Notice {
        Notice {
            lead: format!("The {model} "),
            object: Some((object, link)),
            tail: format!(" was {done} successfully.{then}"),
        }
    }

    /// The notice with each text cut at `max` characters (it travels in the session cookie).
    pub(crate) fn cut(self, max: usize) -> Notice {
        let cut = |s: String| s.chars().take(max).collect::<String>();
        Notice {
            lead: cut(self.lead),
            object: self.object.map(|(text, link)| (cut(text), link)),
            tail: cut(self.tail),
        }
    }
}

/// The admin's layout around HTML that is already escaped.
#[derive(Template)]
#[template(path = "admin/page.html")]
struct Framed<'a> {
    chrome: &'a Chrome,
    title: &'a str,
    content: &'a str,
}

impl Chrome {
    /// A whole admin page: the crate's layout (head, stylesheet, script, navigation) titled
    /// `title` (escaped) around `content_html`, which is inserted as it is. Render
    /// `content_html` with a template of your own, which escapes what it inserts (askama
    /// does by default); never pass unescaped data.
    pub fn page(&self, title: &str, content_html: &str) -> Result<String, Error> {
        render(&Framed {
            chrome: self,
            title,
            content: content_html,
        })
    }
}

/// The index of a model, `GET {prefix}/{name}/` (template `admin/index.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/index.html")]
#[non_exhaustive]
pub struct IndexView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title: the model's name for people, plural (`Messages`,
    /// `#[rest(verbose_name_plural = "...")]`).
    pub title: String,
    /// The model's admin name, the `{name}` of its URLs.
    pub name: String,
    /// The model's name for one row, as it reads inside a sentence (`message`): the add
    /// link reads `Add {singular}`.
    pub singular: String,
    /// The index URL, `{prefix}/{name}/`; the add page is `{url}add/`.
    pub url: String,
    /// The "Add" link: the add page carrying this page's place (`_changelist`), so that its
    /// save leads back to this page of the index.
    pub add: String,
    /// The column headers.
    pub headers: Vec<Header>,
    /// The rows of this page.
    pub rows: Vec<Row>,
    /// The filters of the query, each with the link that removes it.
    pub filters: Vec<ActiveFilter>,
    /// The `field__op` keys the "add a filter" form offers (sent as `_fk`, the value as `_fv`).
    pub filter_keys: Vec<FilterKey>,
    /// The query pairs the filter form keeps (hidden inputs): all but `page`.
    pub keep: Vec<(String, String)>,
    /// The search box's text, when the model admin has `search_fields` (`None`: no box).
    pub search: Option<String>,
    /// The query pairs the search form keeps (hidden inputs): all but `q` and `page`.
    pub search_keep: Vec<(String, String)>,
    /// The page number, from 1.
    pub page: i64,
    /// The previous page's link, if any.
    pub previous: Option<String>,
    /// The next page's link, if any.
    pub next: Option<String>,
    /// Where the bulk form (`action`: `delete` or an action's name, and the selected `id`s)
    /// posts: this page.
    pub action: String,
    /// The application's actions on selected rows, `(name, label)`, offered after `delete`.
    pub actions: Vec<(String, String)>,
    /// The export page of the filtered rows.
    pub export: String,
    /// The import page, `{prefix}/{name}/import/`.
    pub import: String,
    /// The rows the filters and the search match (all pages).
    pub count: RowCount,
    /// The count as people read it (the model's names for people): `37 messages`, `about 120,000 messages`.
    pub count_text: String,
    /// The facets (`list_filter`), in order; empty without any.
    pub facets: Vec<Facet>,
    /// Whether the facets show counts.
    pub facets_counted: bool,
    /// The link that shows or hides the facets' counts (`ShowFacets::Allow` only).
    pub facets_toggle: Option<String>,
    /// Whether the rows are only shown ([`ModelAdmin::read_only`](super::ModelAdmin::read_only),
    /// or a user without the model's `change` permission): each row's link reads "View".
    pub read_only: bool,
    /// Whether the user may add rows (the model's `add` permission, and the model admin is
    /// not `read_only`): the add and import links.
    pub can_add: bool,
    /// Whether the user may delete rows (the model's `delete` permission): the bulk delete.
    pub can_delete: bool,
    /// The link that shows every matched row on one page (`?limit=` the model admin's
    /// `list_max_show_all`), while they are more than this page and at most that many.
    pub show_all: Option<String>,
    /// Why the request's `limit` was refused (over `list_max_show_all`); the page then shows
    /// `list_per_page` rows.
    pub limit_refused: Option<String>,
}

/// A column header of the index.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Header {
    /// The field's name for people (`Join date`, `#[rest(verbose_name = "...")]`), or a
    /// computed column's title.
    pub title: String,
    /// The link that sorts by this column (model fields only).
    pub sort: Option<String>,
    /// `"asc"` or `"desc"` when the index is sorted by this column, else `""`.
    pub sorted: &'static str,
    /// Whether the column's cells never wrap (dates and date-times: `2024-01-02` would break
    /// at its hyphens in a narrow column).
    pub nowrap: bool,
}

/// A row of the index.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Row {
    /// The primary key (the `id` value of the bulk form's checkbox).
    pub pk: i64,
    /// The cells, in the order of the headers: a foreign key as the related row's text.
    pub cells: Vec<String>,
    /// The row's edit page.
    pub edit: String,
}

/// A filter of the index query.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ActiveFilter {
    /// The `field__op` key, in the REST syntax.
    pub key: String,
    /// The value, as given.
    pub value: String,
    /// The value as people read it: on a foreign key, the related rows' texts with their keys
    /// (`carol (#4)`); else [`Self::value`].
    pub text: String,
    /// The index without this filter.
    pub remove: String,
}

/// A key of the "add a filter" form.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FilterKey {
    /// The `field__op` key (`content__like`, `user`...).
    pub key: String,
    /// For a key that takes one related row's key (`user`, `user__ne`) of a foreign key with
    /// a `foreign_key_lookup`: the JSON lookup URL, `{prefix}/{name}/lookup/{field}/`.
    pub lookup: Option<String>,
}

/// The add form, `{prefix}/{name}/add/`, and the edit form, `{prefix}/{name}/{pk}/`
/// (template `admin/form.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/form.html")]
#[non_exhaustive]
pub struct FormView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title: `Add {singular}` or `Edit {row's text}`.
    pub title: String,
    /// The model's admin name.
    pub name: String,
    /// The model's name for one row, as it reads inside a sentence (`message`).
    pub singular: String,
    /// The index as the user left it, with its search, filters, ordering and page (where
    /// Cancel and the saves lead).
    pub url: String,
    /// Where the form posts (it carries the index's place, `_changelist`).
    pub action: String,
    /// Whether the user may add rows: the "Save and add another" button.
    pub can_add: bool,
    /// The inputs, in model order.
    pub fields: Vec<FormField>,
    /// After a failed submit: what went wrong as a whole.
    pub error: Option<String>,
    /// On edit, the row's delete page; `None` on add, or for a user without the model's
    /// `delete` permission.
    pub delete: Option<String>,
    /// On edit, the row's History page; `None` on add.
    pub history: Option<String>,
    /// On edit, the version of the row the form shows, sent back as the hidden field
    /// `_version`: a save over another version is refused, the typed values kept.
    pub version: Option<String>,
    /// The children edited with the row ([`Inline`](super::Inline)s), each a table in the
    /// form; empty when the model admin has none.
    pub inlines: Vec<InlineView>,
    /// The rows of other models tied to the row edited as checkboxes: a group's permissions,
    /// a user's groups and permissions ([`Admin::permissions`](super::Admin::permissions)),
    /// each a fieldset of the form; empty for other models, and without those the user may
    /// not view.
    pub checklists: Vec<ChecklistView>,
    /// Whether the page only shows the row ([`ModelAdmin::read_only`](
    /// super::ModelAdmin::read_only), or a user without the model's `change` permission):
    /// every input read-only, no Save button.
    pub read_only: bool,
}

/// A checklist of the add and edit forms (template `admin/checklist.html`, included by
/// `admin/form.html`): one checkbox per choice, grouped under headings, with a filter box that
/// the admin's script shows (without it, every box is shown).
///
/// Each ticked box is sent as an input named [`Self::name`] whose value is the box's; an
/// editable checklist also sends an empty input of that name, so that unticking every box is
/// told from a form without the checklist (which changes nothing).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChecklistView {
    /// The name of its inputs: `permissions`, `groups` or `user_permissions`.
    pub name: String,
    /// Its legend: `Permissions`, `Groups`.
    pub title: String,
    /// The boxes, by heading (a permission's model).
    pub groups: Vec<ChecklistGroup>,
    /// Whether the boxes are only shown (disabled, never sent): on a page that only shows the
    /// row, and for a user who may not both add and delete the rows it writes.
    pub read_only: bool,
    /// After a failed submit: what is wrong with the values sent.
    pub error: Option<String>,
}

impl ChecklistView {
    /// Whether it has no box at all (no group exists yet).
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.boxes.is_empty())
    }
}

/// The boxes of a [`ChecklistView`] under one heading.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChecklistGroup {
    /// The heading (the model of the permissions below); `None` for a list without headings.
    pub heading: Option<String>,
    /// Its boxes, in order.
    pub boxes: Vec<ChecklistBox>,
}

/// One box of a [`ChecklistView`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChecklistBox {
    /// The value it sends (`ticket.change`, a group's key).
    pub value: String,
    /// Its text (`change`, a group's name).
    pub label: String,
    /// Whether it is ticked.
    pub checked: bool,
}

/// The children of one [`Inline`](super::Inline) in the add and edit forms: a table with a
/// row per child (template `admin/inline.html`, included by `admin/form.html`).
///
/// A row's inputs are named `{prefix}-{n}-{field}`; a stored child's row also sends its key as
/// `{prefix}-{n}-_pk` and its delete checkbox as `{prefix}-{n}-_delete`. New rows left empty
/// are ignored.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InlineView {
    /// The heading: the child model's name for people, plural (`Deposits`).
    pub title: String,
    /// The child model's name for one row, as it reads inside a sentence: the button reads
    /// `Add another {singular}`.
    pub singular: String,
    /// The beginning of the inputs' names: the child model's name.
    pub prefix: String,
    /// The column headers: the fields' names for people, in the order of each row's inputs.
    pub columns: Vec<String>,
    /// The rows: the stored children (key ascending, at most the inline's `max_shown`), then
    /// its `extra` empty rows; after a failed submit, the rows as submitted, with their errors.
    pub rows: Vec<InlineRow>,
    /// The empty row the "Add another" button copies, `__n__` in place of its number.
    pub template: InlineRow,
    /// The number the next added row takes.
    pub next: usize,
    /// The most child rows one submit may send (`Limits::max_bulk_rows`).
    pub max_rows: usize,
    /// Whether stored children have a delete checkbox.
    pub can_delete: bool,
    /// When the parent has more children than are shown: a sentence saying so.
    pub more: Option<String>,
    /// Then, when the child model has an admin: its index of this parent's children.
    pub all: Option<String>,
}

impl InlineView {
    /// The template row, as a one-row slice (for a template's loop).
    pub fn template_rows(&self) -> &[InlineRow] {
        std::slice::from_ref(&self.template)
    }

    /// The number of cells of a row (the inputs, and the delete checkbox's).
    pub fn width(&self) -> usize {
        self.columns.len() + usize::from(self.can_delete)
    }
}

impl InlineRow {
    /// Whether the row, or one of its inputs, has an error.
    pub fn invalid(&self) -> bool {
        !self.errors.is_empty() || self.fields.iter().any(|f| f.error.is_some())
    }
}

/// One row of an [`InlineView`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InlineRow {
    /// `{prefix}-{n}`: the beginning of the names of its inputs.
    pub prefix: String,
    /// The row for people: `deposit #3`, or `new deposit 4` (labels of its inputs).
    pub label: String,
    /// The stored child's key; `None` for a new row.
    pub pk: Option<i64>,
    /// Its inputs, in the order of the columns (each `name` is `{prefix}-{n}-{field}`).
    pub fields: Vec<FormField>,
    /// Whether its delete checkbox is checked.
    pub delete: bool,
    /// What is wrong with the row as a whole (a field's message is that field's `error`).
    pub errors: Vec<String>,
}

/// How a form field is entered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Widget {
    /// A read-only field (`#[rest(read_only)]`): its value, shown disabled and never sent.
    ReadOnly,
    /// A long text (`#[rest(long)]`) of a read-only admin's row: shown in full, in a
    /// read-only text area, never sent.
    ReadOnlyLong,
    /// A new password (the user model's forms): always empty, hashed when given.
    Password,
    /// A text input.
    Text,
    /// A text area: text of several lines (`#[rest(long)]`).
    TextArea,
    /// A number input.
    Number {
        /// Its `step`: `"1"` or `"any"`.
        step: &'static str,
    },
    /// A checkbox (absent from the POST = false).
    Checkbox,
    /// A date picker.
    Date,
    /// A date-time, typed as `YYYY-MM-DD HH:MM:SS` (a text input with that placeholder: a
    /// browser's date-time picker shows and takes the locale's format instead).
    DateTime,
    /// A foreign key's or a choice field's select: `(value, text, selected)` options; the
    /// first is empty when the field may be empty.
    Select(Vec<(String, String, bool)>),
    /// A foreign key's type-ahead: a number input for the key and a search over `url`.
    Lookup {
        /// The JSON lookup URL, `{prefix}/{name}/lookup/{field}/`.
        url: String,
        /// The current related row's text.
        text: String,
    },
}

/// An input of the add or edit form.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FormField {
    /// The field's name: the input's `name`.
    pub name: String,
    /// Its label: the field's name for people (`Join date`,
    /// `#[rest(verbose_name = "...")]`).
    pub label: String,
    /// How it is entered.
    pub widget: Widget,
    /// The value shown: the stored one, or after a failed submit the submitted one.
    pub value: String,
    /// Whether a checkbox is checked.
    pub checked: bool,
    /// What is wrong with the submitted value.
    pub error: Option<String>,
    /// A hint (may be empty).
    pub help: String,
    /// The input's HTML constraint attributes from the field's constraints (`required`,
    /// `min`, `max`, `minlength`, `maxlength`), each with a leading space; numbers and names
    /// only, so a template writes it unescaped.
    pub attrs: String,
}

/// The delete page, `GET {prefix}/{name}/{pk}/delete/` (template `admin/delete.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/delete.html")]
#[non_exhaustive]
pub struct DeleteView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title, `Delete {row's text}`.
    pub title: String,
    /// The index as the user left it (where Cancel leads, and the delete).
    pub url: String,
    /// The row's text.
    pub display: String,
    /// Where the confirmation posts.
    pub action: String,
    /// The rows that refer to it, per model (empty unless `delete_collect_objects`).
    pub groups: Vec<Group>,
    /// Whether the dependent rows were collected (`delete_collect_objects`).
    pub collected: bool,
    /// Whether the delete takes them along (`delete_recursive`); else it is refused while
    /// they exist.
    pub recursive: bool,
}

/// The rows of one model that a delete reaches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Group {
    /// The model's name for people, plural (`Messages`).
    pub model: String,
    /// Whether they are deleted (else their reference is set to NULL).
    pub deleted: bool,
    /// The rows' texts, at most 100.
    pub rows: Vec<String>,
    /// How many more there are.
    pub more: usize,
}

/// The History page of one object, `GET {prefix}/{name}/{pk}/history/` (template
/// `admin/history.html`): the writes recorded for it, newest first (docs/admin.md#history).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/history.html")]
#[non_exhaustive]
pub struct HistoryView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title, `History of {row's text}` (for a deleted row, its text when it was
    /// last recorded).
    pub title: String,
    /// The index URL.
    pub url: String,
    /// The row's edit page; `None` when the row no longer exists.
    pub edit: Option<String>,
    /// The entries of this page, newest first.
    pub entries: Vec<HistoryItem>,
    /// The page number, from 1.
    pub page: i64,
    /// The previous page's link (newer entries), if any.
    pub previous: Option<String>,
    /// The next page's link (older entries), if any.
    pub next: Option<String>,
}

/// One recorded write of a History page.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryItem {
    /// When it was made, `YYYY-MM-DD HH:MM:SS`, UTC.
    pub when: String,
    /// Who made it: the username, `None` for an anonymous REST write.
    pub user: Option<String>,
    /// Where it was made: `admin`, or `api` (a REST resource).
    pub source: String,
    /// `add`, `change` or `delete`.
    pub action: String,
    /// The fields it set, changed or removed, in field order.
    pub changes: Vec<ChangeLine>,
}

/// One field of a [`HistoryItem`]: its values as text (empty for NULL). A private or
/// write-only field's values read `***`, as do those of a field the model admin's forms hide;
/// a long value is cut at 1,000 characters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChangeLine {
    /// The field's name for people (`Join date`).
    pub field: String,
    /// The value before; `None` for an add.
    pub old: Option<String>,
    /// The value after; `None` for a delete.
    pub new: Option<String>,
}

/// The export form, `GET {prefix}/{name}/export/` (template `admin/export.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/export.html")]
#[non_exhaustive]
pub struct ExportView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title, `Export {name}`.
    pub title: String,
    /// The index URL (where Cancel leads).
    pub url: String,
    /// Where the form (`fields` checkboxes, `format` `csv` or `json`) posts.
    pub action: String,
    /// The exportable columns: the primary key and the form fields, but a private field
    /// that the model admin's `columns` does not name.
    pub columns: Vec<String>,
    /// The filters the export applies (`field__op`, value as people read it: on a foreign
    /// key, the related rows' texts with their keys, `carol (#4)`).
    pub filters: Vec<(String, String)>,
}

/// The confirmation page of an action, or of the bulk delete, on selected rows, answered to
/// the index's bulk form (template `admin/action.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/action.html")]
#[non_exhaustive]
pub struct ActionView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title: the action's label ("Delete the selected rows" for the bulk delete).
    pub title: String,
    /// The index it came from, with its filters (where Cancel leads).
    pub url: String,
    /// Where the confirmation posts (the index's bulk form again): `action` = [`Self::name`],
    /// the rows' `id`s and `confirm=yes`.
    pub action: String,
    /// The action's name (`delete` for the bulk delete).
    pub name: String,
    /// The selected rows that exist, `(primary key, text)`, key ascending.
    pub rows: Vec<(i64, String)>,
    /// After a failed run: why (nothing was written).
    pub error: Option<String>,
    /// For the bulk delete: the rows it would reach, by model (empty for an action).
    pub groups: Vec<Group>,
    /// Whether [`Self::groups`] were looked for (the bulk delete, when the model admin
    /// collects them).
    pub collected: bool,
    /// Whether a delete reaches the rows that refer to the deleted ones (else it is refused
    /// while they exist).
    pub recursive: bool,
}

/// The import page, `{prefix}/{name}/import/`: the upload form, and once a file is sent, its
/// preview (template `admin/import.html`).
#[derive(Debug, Clone, Template)]
#[template(path = "admin/import.html")]
#[non_exhaustive]
pub struct ImportView {
    /// The page frame.
    pub chrome: Chrome,
    /// The page title, `Import {name}`.
    pub title: String,
    /// The index URL (where Cancel leads).
    pub url: String,
    /// Where both forms post, as `multipart/form-data`: the upload (`file`) and the
    /// confirmation (`data`, the file in base64, and `confirm=yes`).
    pub action: String,
    /// The columns a file may have: the primary key and the form fields, as the export names
    /// them.
    pub columns: Vec<String>,
    /// The primary key's column: a row with a value there updates that row.
    pub key: String,
    /// The most rows one file may have.
    pub max_rows: usize,
    /// The largest file, for people (`2 MiB`).
    pub max_size: String,
    /// What is wrong with the file as a whole (nothing of it was read into rows).
    pub error: Option<String>,
    /// The rows of the file sent, checked; `None` before a file is sent.
    pub preview: Option<ImportPreview>,
}

/// The rows of an import file, each checked as its write would be, with nothing written.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ImportPreview {
    /// The file's columns, in its order.
    pub columns: Vec<String>,
    /// Its rows, in its order.
    pub rows: Vec<ImportRow>,
    /// The file in base64, posted back by the confirmation (`data`).
    pub data: String,
    /// How many rows create a row.
    pub created: usize,
    /// How many rows update one.
    pub updated: usize,
    /// How many rows have errors: the file can be imported only when none has.
    pub failed: usize,
}

/// A row of an import file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ImportRow {
    /// Its number in the file: 1 for the first row after the header.
    pub number: usize,
    /// The key of the row it updates; `None`: it creates one.
    pub pk: Option<i64>,
    /// Its values as they would be stored, in the order of the columns (a column it does not
    /// set, such as a read-only one, is empty).
    pub cells: Vec<String>,
    /// What is wrong with it: `(field, message)`, the field empty for the row as a whole.
    pub errors: Vec<(String, String)>,
}

/// The HTML of a template.
pub(crate) fn render(template: &impl Template) -> Result<String, Error> {
    template
        .render()
        .map_err(|e| Error::Internal(format!("admin template: {e}")))
}
