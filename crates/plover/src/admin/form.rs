//! Add and edit forms: typed inputs, validation messages next to the fields, and nothing
//! written (or lost) when a submit fails.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::ResponseError;
use serde_json::Value;

use super::erased::Changes;
use super::page::{plain_text, Reply};
use super::prepared::{Cx, PreparedAdmin};
use super::views::{ChecklistView, Crumb, FormField, FormView, InlineView, Notice, Widget};
use crate::db::Conn;
use crate::error::Error;
use crate::history::{self, Entry};
use crate::model::row::Row;
use crate::model::{check_reference, FieldKind, FieldMeta, ModelMeta};
use crate::query::{Order, Select};

/// Most rows a foreign-key select lists; above, a number input takes the key.
const MAX_SELECT_OPTIONS: i64 = 500;

/// The hidden field of the edit form that carries the version of the row it shows.
const VERSION: &str = "_version";

/// The button "Save and continue editing": back to the row's edit page.
const CONTINUE: &str = "_continue";

/// The button "Save and add another": on to the add page.
const ADD_ANOTHER: &str = "_addanother";

/// A submitted form, parsed: the changes, and a message per field key for what failed.
struct Submitted<C> {
    changes: C,
    errors: BTreeMap<String, String>,
}

/// The JSON value of a submitted text for a field (`None`: a message for the person).
pub(super) fn parse_input(field: &FieldMeta, raw: &str) -> Result<Value, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() && field.kind != FieldKind::Text {
        return if field.nullable {
            Ok(Value::Null)
        } else {
            Err("This field is required.".into())
        };
    }
    match field.kind {
        FieldKind::Int32 | FieldKind::Int64 => trimmed
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "Enter a whole number.".into()),
        FieldKind::Float => match trimmed.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Value::from(v)),
            _ => Err("Enter a number.".into()),
        },
        FieldKind::Text => Ok(Value::String(raw.to_owned())),
        FieldKind::Date => Ok(Value::String(trimmed.to_owned())),
        // Typed as the help says (`YYYY-MM-DD HH:MM:SS`), or as a picker sends it
        // (`YYYY-MM-DDTHH:MM`, without seconds when they are zero): minutes get `:00`.
        FieldKind::DateTime if trimmed.len() == 16 => Ok(Value::String(format!("{trimmed}:00"))),
        FieldKind::DateTime | FieldKind::Bool => Ok(Value::String(trimmed.to_owned())),
    }
}

/// Why a write was refused, for the person: messages per field, and for a conflict one about
/// the whole (`None`: invalid values).
pub(super) struct Refusal {
    pub(super) fields: BTreeMap<String, String>,
    pub(super) message: Option<String>,
}

/// The messages of a write that the fields' constraints, the model's rules or a unique index
/// refused; any other error as it is.
pub(super) fn refusal(meta: &ModelMeta, error: Error) -> Result<Refusal, Error> {
    let mut fields = BTreeMap::new();
    let message = match error {
        Error::Validation { fields: found, .. } => {
            fields = found;
            None
        }
        Error::Conflict(conflict) => Some(conflict),
        Error::PreconditionFailed => Some(format!(
            "Someone changed this {} after you opened this page (its History says what). Your \
             values are kept below: compare them with the stored ones, then save again to \
             overwrite.",
            meta.name
        )),
        Error::FieldConflict { field, message } => {
            let whole = format!("{field}: {message}");
            fields.insert(field, format!("{message}."));
            Some(whole)
        }
        // A unique value that is taken: the database reports it, and which one.
        e if e.status_code() == StatusCode::CONFLICT => {
            if let Some(field) = e.unique_column().and_then(|c| meta.field(c)) {
                fields.insert(
                    field.1.name.to_owned(),
                    "This value is already taken.".into(),
                );
            }
            Some("A unique value is already taken; change it.".into())
        }
        other => return Err(other),
    };
    Ok(Refusal { fields, message })
}

/// Whether the checkbox `name` was sent checked (absent = false).
fn checked(cx: &Cx<'_>, name: &str) -> bool {
    cx.req
        .field(name)
        .is_some_and(|v| !matches!(v, "" | "0" | "false" | "off"))
}

/// The input of the user model's forms that sets a new password (APP.md section 7).
pub(crate) const NEW_PASSWORD: &str = "new_password";

impl PreparedAdmin {
    /// Parses the submitted form. On add every form field counts; on edit a field absent
    /// from the POST stays as it is, but for checkboxes (absent = false).
    fn parse_form(&self, cx: &Cx<'_>, adding: bool) -> Submitted<Changes> {
        let meta = self.meta;
        let mut changes = self.model.changes();
        let mut errors = BTreeMap::new();
        for &idx in &self.forms.fields {
            let field = &meta.fields[idx];
            if field.read_only {
                continue; // shown disabled, never taken from a form
            }
            let value = if field.kind == FieldKind::Bool {
                Value::Bool(checked(cx, field.name))
            } else {
                match cx.req.field(field.name) {
                    Some(raw) => match parse_input(field, raw) {
                        Ok(value) => value,
                        Err(message) => {
                            errors.insert(field.name.to_owned(), message);
                            continue;
                        }
                    },
                    None if adding && field.required => {
                        errors.insert(field.name.to_owned(), "This field is required.".into());
                        continue;
                    }
                    None => continue,
                }
            };
            if let Err(message) = self.model.set_json(&mut changes, idx, &value) {
                errors.insert(field.name.to_owned(), message);
            }
        }
        if let (Some(idx), Some(hashed)) = (self.forms.password, &cx.req.new_password) {
            match hashed {
                Ok(hash) => {
                    let _ = (self.model).set_json(&mut changes, idx, &Value::String(hash.clone()));
                }
                Err(message) => {
                    errors.insert(NEW_PASSWORD.to_owned(), message.clone());
                }
            }
        }
        Submitted { changes, errors }
    }

    /// Checks the submitted foreign keys, runs the model's rules, writes and records the write
    /// in the history, in one transaction (inside the import's, a savepoint of it): every write
    /// of the add and edit forms and of the import goes through here.
    pub(super) fn save(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        mut changes: Changes,
        existing: Option<&dyn Row>,
    ) -> Result<Box<dyn Row>, Error> {
        let meta = self.meta;
        conn.transaction(|conn| {
            if let Some(clean) = &self.forms.clean {
                clean(conn, &mut changes, existing)?;
            }
            for &idx in &self.forms.fields {
                if let Some(id) = (self.model.changes_json(&changes, idx)).and_then(|v| v.as_i64())
                {
                    check_reference(conn, &meta.fields[idx], meta.fields[idx].name, id)?;
                }
            }
            let row = self.model.save(conn, changes, existing)?;
            let entry = Entry::of_rows(meta, &cx.req.actor, existing, Some(&*row));
            history::record(conn, entry.as_slice())?;
            Ok(row)
        })
    }

    /// The row an edit is about to change, read again in the write's transaction (locked on
    /// PostgreSQL): refused with [`Error::PreconditionFailed`] when the form was rendered from
    /// another version of it (its `_version` field), so that one editor never silently
    /// overwrites another's change. `None` on the add page.
    pub(super) fn current(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        row: Option<&dyn Row>,
    ) -> Result<Option<Box<dyn Row>>, Error> {
        let Some(row) = row else {
            return Ok(None);
        };
        let current = (self.model.load_locked(conn, &[row.pk()])?.pop()).ok_or(Error::NotFound)?;
        match cx.req.field(VERSION) {
            Some(sent) if sent != self.version(&*current) => Err(Error::PreconditionFailed),
            _ => Ok(Some(current)),
        }
    }

    /// `GET|POST {prefix}/{name}/add/` (`row` = None) and `{prefix}/{name}/{pk}/`.
    pub(crate) fn form_view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        row: Option<Box<dyn Row>>,
    ) -> Result<Reply, Error> {
        let adding = row.is_none();
        let row = row.as_deref();
        if !cx.req.post {
            let mut defaults = self.model.changes();
            self.model.fill_defaults(&mut defaults);
            // The add page takes initial values from its query, as Django's does
            // (`add/?user=2&content=hi`), shown as if typed: the save checks them.
            let given = |idx: usize| {
                let name = self.meta.fields[idx].name;
                let (_, v) = cx.req.query.iter().find(|(k, _)| k == name)?;
                Some(match self.meta.fields[idx].kind {
                    FieldKind::Bool => Value::Bool(matches!(v.as_str(), "1" | "true" | "on")),
                    _ => Value::String(v.clone()),
                })
            };
            let values = |idx: usize| match row {
                Some(r) => Some(r.field_json(idx)),
                None => given(idx).or_else(|| self.model.changes_json(&defaults, idx)),
            };
            let fields = self.form_fields(cx, conn, &|idx| values(idx), &BTreeMap::new())?;
            let parts = self.part_views(cx, conn, row, None)?;
            return self.render_form(cx, row, fields, parts, None, StatusCode::OK);
        }
        let Submitted {
            changes,
            mut errors,
        } = self.parse_form(cx, adding);
        let mut message = None;
        let mut parts = self.parse_parts(cx)?;
        if self.has_parts() {
            let (errors, message) = (&mut errors, &mut message);
            if let Some(saved) =
                self.save_with_inlines(cx, conn, changes, row, errors, message, &mut parts)?
            {
                return Ok(self.saved(cx, &*saved, adding));
            }
        } else if errors.is_empty() {
            let saved = conn.transaction(|conn| {
                let current = self.current(cx, conn, row)?;
                self.save(cx, conn, changes, current.as_deref())
            });
            match saved {
                Ok(saved) => return Ok(self.saved(cx, &*saved, adding)),
                Err(e) => {
                    let refusal = refusal(self.meta, e)?;
                    errors.extend(refusal.fields);
                    message = refusal.message;
                }
            }
        }
        let status = if message.is_some() {
            StatusCode::CONFLICT
        } else {
            StatusCode::BAD_REQUEST
        };
        // Show what was submitted, not what is stored.
        let submitted = |idx: usize| {
            let field = &self.meta.fields[idx];
            match cx.req.field(field.name) {
                _ if field.kind == FieldKind::Bool => Some(Value::Bool(checked(cx, field.name))),
                Some(raw) => Some(Value::String(raw.to_owned())),
                None => row.map(|r| r.field_json(idx)),
            }
        };
        let fields = self.form_fields(cx, conn, &submitted, &errors)?;
        let parts = self.part_views(cx, conn, row, Some(&parts))?;
        let summary = message.or_else(|| Some("Please correct the errors below.".into()));
        self.render_form(cx, row, fields, parts, summary, status)
    }

    /// Where a save leads, with its notice: the index as the user left it; the row's edit page
    /// after "Save and continue editing" (`_continue`), the add page after "Save and add
    /// another" (`_addanother`, for a user who may add), both still carrying the index's place.
    fn saved(&self, cx: &Cx<'_>, row: &dyn Row, added: bool) -> Reply {
        let url = self.url(cx);
        let edit = format!("{url}{}/", row.pk());
        let singular = self.singular();
        let (to, then) = if cx.req.field(CONTINUE).is_some() {
            (
                self.keeping_place(cx, &edit),
                " You may edit it again below.".to_owned(),
            )
        } else if cx.req.field(ADD_ANOTHER).is_some() && self.rights(cx).add {
            (
                self.keeping_place(cx, &format!("{url}add/")),
                format!(" You may add another {singular} below."),
            )
        } else {
            (self.list_place(cx), String::new())
        };
        let done = if added { "added" } else { "changed" };
        let link = self.keeping_place(cx, &edit);
        Reply::Done {
            to,
            notice: Notice::about(&singular, row.display(), Some(link), done, &then),
        }
    }

    fn render_form(
        &self,
        cx: &Cx<'_>,
        row: Option<&dyn Row>,
        fields: Vec<FormField>,
        (inlines, checklists): (Vec<InlineView>, Vec<ChecklistView>),
        error: Option<String>,
        status: StatusCode,
    ) -> Result<Reply, Error> {
        let url = self.url(cx);
        let (title, action, delete, history) = match row {
            None => (
                format!("Add {}", self.singular()),
                self.keeping_place(cx, &format!("{url}add/")),
                None,
                None,
            ),
            Some(row) => (
                format!(
                    "{} {}",
                    if self.shown_only(cx) { "View" } else { "Edit" },
                    row.display()
                ),
                self.keeping_place(cx, &format!("{url}{}/", row.pk())),
                (self.rights(cx).delete)
                    .then(|| self.keeping_place(cx, &format!("{url}{}/delete/", row.pk()))),
                Some(self.keeping_place(cx, &format!("{url}{}/history/", row.pk()))),
            ),
        };
        let here = match row {
            None => title.clone(),
            Some(row) => row.display(),
        };
        let view = FormView {
            chrome: self.chrome(cx, vec![Crumb::here(here)]),
            title,
            name: self.name.clone(),
            singular: self.singular(),
            url: self.list_place(cx),
            action,
            can_add: self.rights(cx).add,
            fields,
            error,
            delete,
            history,
            inlines,
            checklists,
            version: row.map(|row| self.version(row)),
            read_only: self.shown_only(cx),
        };
        let html = match row {
            None => self.templates.add(&view)?,
            Some(_) => self.templates.edit(&view)?,
        };
        Ok(Reply::Html(status, html))
    }

    /// The inputs, with the values `value` gives and the messages of `errors`.
    pub(super) fn form_fields(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        value: &dyn Fn(usize) -> Option<Value>,
        errors: &BTreeMap<String, String>,
    ) -> Result<Vec<FormField>, Error> {
        let meta = self.meta;
        let mut out = Vec::with_capacity(self.forms.fields.len());
        for &idx in &self.forms.fields {
            let field = &meta.fields[idx];
            let current = value(idx).unwrap_or(Value::Null);
            let text = plain_text(&current);
            let (widget, help) = match (field.kind, field.fk) {
                _ if self.shown_only(cx) && field.long => (Widget::ReadOnlyLong, ""),
                _ if self.shown_only(cx) => (Widget::ReadOnly, ""),
                _ if field.read_only => (Widget::ReadOnly, "Read-only."),
                (_, Some(target)) => {
                    let target = target();
                    match self.lookups.by_field.get(&idx) {
                        Some(_) => {
                            // Stored (a number) or submitted (text) key.
                            let key = current
                                .as_i64()
                                .or_else(|| current.as_str().and_then(|s| s.trim().parse().ok()));
                            let shown = match key {
                                Some(id) => (target.ops.load_display)(
                                    conn,
                                    &Select::ids_in(target.pk, &[id]),
                                )?
                                .into_iter()
                                .next()
                                .map(|(_, t)| t)
                                .unwrap_or_default(),
                                None => String::new(),
                            };
                            (
                                Widget::Lookup {
                                    url: self.lookup_url(cx, field),
                                    text: shown,
                                },
                                "Type to search; the number is the key.",
                            )
                        }
                        None => self.select_or_number(conn, field, target, &text)?,
                    }
                }
                (FieldKind::Bool, _) => (Widget::Checkbox, ""),
                (FieldKind::Int32 | FieldKind::Int64, _) => (Widget::Number { step: "1" }, ""),
                (FieldKind::Float, _) => (Widget::Number { step: "any" }, ""),
                (FieldKind::Date, _) => (Widget::Date, "YYYY-MM-DD"),
                (FieldKind::DateTime, _) => (Widget::DateTime, "YYYY-MM-DD HH:MM:SS"),
                (FieldKind::Text, _) if !field.constraints.choices.is_empty() => {
                    (choice_select(field, &text), "")
                }
                (FieldKind::Text, _) if field.long => (Widget::TextArea, ""),
                (FieldKind::Text, _) => (Widget::Text, ""),
            };
            let attrs = constraint_attrs(field, &widget);
            out.push(FormField {
                name: field.name.to_owned(),
                label: field.verbose_name.to_owned(),
                widget,
                checked: current == Value::Bool(true),
                value: text,
                error: errors.get(field.name).cloned(),
                help: help.to_owned(),
                attrs,
            });
        }
        if self.forms.password.is_some() {
            out.push(FormField {
                name: NEW_PASSWORD.to_owned(),
                label: "New password".to_owned(),
                widget: Widget::Password,
                value: String::new(),
                checked: false,
                attrs: String::new(),
                error: errors.get(NEW_PASSWORD).cloned(),
                help: "The password is stored hashed and never shown; leave this empty to keep \
                       the current one."
                    .to_owned(),
            });
        }
        Ok(out)
    }

    /// A select of the related rows, or a number input when there are too many to list.
    fn select_or_number(
        &self,
        conn: &mut Conn<'_>,
        field: &FieldMeta,
        target: &'static crate::model::ModelMeta,
        current: &str,
    ) -> Result<(Widget, &'static str), Error> {
        let select = Select {
            order: vec![Order::asc(target.pk)],
            limit: Some(MAX_SELECT_OPTIONS + 1),
            ..Select::default()
        };
        let rows = (target.ops.load_display)(conn, &select)?;
        if rows.len() as i64 > MAX_SELECT_OPTIONS {
            return Ok((Widget::Number { step: "1" }, "The key of the related row."));
        }
        let mut options = Vec::with_capacity(rows.len() + 1);
        if field.nullable || current.is_empty() {
            options.push((String::new(), "---------".to_owned(), current.is_empty()));
        }
        for (id, text) in rows {
            let value = id.to_string();
            let selected = value == current;
            options.push((value, format!("{text} (#{id})"), selected));
        }
        Ok((Widget::Select(options), ""))
    }
}

/// The select of a text field with choices; an empty first option when it may be empty or has
/// no value yet.
fn choice_select(field: &FieldMeta, current: &str) -> Widget {
    let mut options = Vec::with_capacity(field.constraints.choices.len() + 1);
    if field.nullable || current.is_empty() {
        options.push((String::new(), "---------".to_owned(), current.is_empty()));
    }
    for &choice in field.constraints.choices {
        options.push((choice.to_owned(), choice.to_owned(), choice == current));
    }
    Widget::Select(options)
}

/// The HTML constraint attributes of an input (`required`, `min`, `max`, `minlength`,
/// `maxlength`), each with its leading space. Made of numbers and names only: the template
/// writes it as it is.
fn constraint_attrs(field: &FieldMeta, widget: &Widget) -> String {
    use std::fmt::Write;
    let c = &field.constraints;
    let mut out = String::new();
    let entered = !matches!(widget, Widget::Checkbox | Widget::ReadOnly);
    if entered && (field.required || c.not_blank) {
        out.push_str(" required");
    }
    if matches!(widget, Widget::Number { .. }) {
        if let Some(min) = c.min {
            let _ = write!(out, " min=\"{min}\"");
        }
        if let Some(max) = c.max {
            let _ = write!(out, " max=\"{max}\"");
        }
    }
    if matches!(widget, Widget::Text | Widget::TextArea) {
        if let Some(n) = c.min_len {
            let _ = write!(out, " minlength=\"{n}\"");
        }
        if let Some(n) = c.max_len {
            let _ = write!(out, " maxlength=\"{n}\"");
        }
    }
    out
}
