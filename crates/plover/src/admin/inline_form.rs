//! The inlines' part of the add and edit forms (docs/admin.md#inlines): each [`Inline`] checked
//! and prepared, its table of child rows, and the save of the parent with its children.
//!
//! Each child row's inputs are named `{prefix}-{n}-{field}` (the prefix is the child model's
//! name, `n` the row's number in the form), with `{prefix}-{n}-_pk` holding a stored child's
//! key and `{prefix}-{n}-_delete` its delete checkbox. A save locks the parent and the
//! submitted children (`FOR UPDATE` on PostgreSQL), refuses (400) a key that is not one of the
//! parent's children, then writes every row through the child's own write path
//! ([`PreparedAdmin::save`]: types, constraints, foreign keys, unique values, the model's
//! rules, the history), each in a savepoint so that every row's errors are collected; one
//! error anywhere rolls the whole transaction back.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};

use actix_web::ResponseError;
use serde_json::Value;

use super::erased::{Changes, Typed};
use super::form::{parse_input, refusal};
use super::inline::{ErasedInline, Inline, Posted, PostedRow};
use super::names::in_sentence;
use super::page::plain_text;
use super::prepared::{
    bad_request, AdminRequest, Cx, Exposure, InlineModel, ListOptions, Parts, Plain, PreparedAdmin,
};
use super::views::{FormField, InlineRow, InlineView, Widget};
use crate::db::{cancel, Conn};
use crate::error::Error;
use crate::model::row::Row;
use crate::model::{usernames, FieldKind, ModelMeta, RestModel};
use crate::query::{Filter, Op, Order, Param, Select};

/// Where a template row's number goes in its inputs' names; the "Add another" script puts the
/// next free number there.
const NUMBER_SLOT: &str = "__n__";

/// The input of a stored child's key, after `{prefix}-{n}-`.
const PK_INPUT: &str = "_pk";

/// The delete checkbox of a stored child, after `{prefix}-{n}-`.
const DELETE_INPUT: &str = "_delete";

impl<C: RestModel> Inline<C> {
    /// This inline with its child type erased, for the model admin to keep.
    pub(crate) fn erase(self) -> ErasedInline {
        ErasedInline {
            meta: C::meta(),
            child: TypeId::of::<C>(),
            fk: self.fk.index(),
            fields: (self.fields).map(crate::model::indexes),
            extra: self.extra,
            max_shown: self.max_shown,
            can_delete: self.can_delete,
            model: Box::new(Typed::<C>::default()),
        }
    }
}

impl ErasedInline {
    /// Checks the inline against the parent's model and builds its tables; panics on a
    /// misconfiguration.
    fn prepare(
        self,
        parent: &'static ModelMeta,
        parent_name: &str,
        exposures: &HashMap<TypeId, Exposure>,
    ) -> Box<dyn InlineModel> {
        let meta = self.meta;
        let fk = self.fk;
        let fk_field = &meta.fields[fk];
        let at = format!("plover admin: the inline of {} on {parent_name}", meta.name);
        match fk_field.target() {
            None => panic!(
                "{at}: `{}` is not a foreign key; name the field of {} that refers to {}",
                fk_field.name, meta.name, parent.name
            ),
            Some(target) => assert!(
                std::ptr::eq(target, parent),
                "{at}: `{}` refers to {}, not to {}",
                fk_field.name,
                target.name,
                parent.name
            ),
        }
        // The child's write path: a model admin whose forms are the inline's fields (and the
        // foreign key, set by the inline, not shown). By default, what the child model's forms
        // show (never a write-only field).
        let fields = self.fields.map(|given| {
            for &idx in &given {
                let name = meta.fields[idx].name;
                assert!(idx != meta.pk, "{at}: `fields` names the key `{name}`");
                assert!(
                    idx != fk,
                    "{at}: `fields` names `{name}`, the foreign key the inline sets itself"
                );
            }
            for (idx, field) in meta.fields.iter().enumerate() {
                let needed = field.required && idx != meta.pk && idx != fk;
                assert!(
                    !needed || given.contains(&idx),
                    "{at}: `{}` is required and not among the inline's fields: show it or \
                     give it a default (#[rest(default = ...)])",
                    field.name
                );
            }
            given.into_iter().chain([fk]).collect()
        });
        let shown = ListOptions {
            fields,
            ..ListOptions::default()
        };
        let mut inner = Plain::new(meta, self.model).prepare(shown, exposures);
        inner.forms.fields.retain(|&i| i != fk);
        assert!(!inner.forms.fields.is_empty(), "{at}: `fields` is empty");
        let registered = exposures.get(&self.child);
        Box::new(PreparedInline {
            prefix: meta.name.to_owned(),
            fk,
            inner,
            extra: self.extra,
            max_shown: self.max_shown,
            can_delete: self.can_delete,
            delete_recursive: registered.is_none_or(|e| e.delete_recursive),
            admin: registered.map(|e| e.name.clone()),
        })
    }

    /// Prepares a model admin's inlines: each checked, and no two with one prefix.
    pub(crate) fn prepare_all(
        parent: &'static ModelMeta,
        parent_name: &str,
        specs: Vec<ErasedInline>,
        exposures: &HashMap<TypeId, Exposure>,
    ) -> Vec<Box<dyn InlineModel>> {
        let inlines: Vec<Box<dyn InlineModel>> = specs
            .into_iter()
            .map(|spec| spec.prepare(parent, parent_name, exposures))
            .collect();
        for (i, inline) in inlines.iter().enumerate() {
            assert!(
                inlines[..i].iter().all(|o| o.prefix() != inline.prefix()),
                "plover admin: {parent_name} has two inlines of {}: one a child model",
                inline.prefix()
            );
        }
        inlines
    }
}

/// An inline, prepared: the child model's reads and writes are its admin's (`inner`).
struct PreparedInline {
    prefix: String,
    fk: usize,
    /// The child's admin as the inline shows it: `form_fields` are the inline's columns, and
    /// its `save` is the write of every row.
    inner: PreparedAdmin,
    extra: usize,
    max_shown: usize,
    can_delete: bool,
    /// How a checked delete deletes: as the child model's admin does.
    delete_recursive: bool,
    /// The child model's admin name, when it has one (links to its pages).
    admin: Option<String>,
}

impl PreparedInline {
    fn fields(&self) -> &[usize] {
        &self.inner.forms.fields
    }

    /// The child model.
    fn meta(&self) -> &'static ModelMeta {
        self.inner.meta
    }

    /// Whether a checkbox's text means checked, as the forms read it.
    fn is_checked(raw: Option<&str>) -> bool {
        raw.is_some_and(|v| !matches!(v, "" | "0" | "false" | "off"))
    }

    /// The defaults of a new child.
    fn defaults(&self) -> Changes {
        let mut defaults = self.inner.model.changes();
        self.inner.model.fill_defaults(&mut defaults);
        defaults
    }

    /// Whether a new row holds nothing typed: every input empty, every checkbox as its
    /// default.
    fn is_blank(&self, row: &PostedRow, defaults: &Changes) -> bool {
        let meta = self.meta();
        (self.fields().iter().zip(&row.raw)).all(|(&idx, raw)| {
            let field = &meta.fields[idx];
            if field.read_only {
                true
            } else if field.kind == FieldKind::Bool {
                let default =
                    self.inner.model.changes_json(defaults, idx) == Some(Value::Bool(true));
                Self::is_checked(raw.as_deref()) == default
            } else {
                raw.as_deref().is_none_or(|v| v.trim().is_empty())
            }
        })
    }

    /// The changes a row makes, its errors into `row.errors`.
    fn changes(&self, row: &mut PostedRow) -> Changes {
        let meta = self.meta();
        let mut changes = self.inner.model.changes();
        let adding = row.pk.is_none();
        for (&idx, raw) in self.fields().iter().zip(&row.raw) {
            let field = &meta.fields[idx];
            if field.read_only {
                continue;
            }
            let value = match raw.as_deref() {
                _ if field.kind == FieldKind::Bool => Value::Bool(Self::is_checked(raw.as_deref())),
                None if adding && field.required => {
                    row.errors
                        .insert(field.name.to_owned(), "This field is required.".into());
                    continue;
                }
                None => continue,
                // A new child's empty input takes the field's default.
                Some(text) if adding && !field.required && text.trim().is_empty() => continue,
                Some(text) => match parse_input(field, text) {
                    Ok(value) => value,
                    Err(message) => {
                        row.errors.insert(field.name.to_owned(), message);
                        continue;
                    }
                },
            };
            if let Err(message) = self.inner.model.set_json(&mut changes, idx, &value) {
                row.errors.insert(field.name.to_owned(), message);
            }
        }
        changes
    }

    /// Whether `changes` sets every field it sets to the value `child` has.
    fn unchanged(&self, changes: &Changes, child: &dyn Row) -> bool {
        (0..self.meta().fields.len()).all(|idx| {
            (self.inner.model.changes_json(changes, idx))
                .is_none_or(|value| value == child.field_json(idx))
        })
    }

    /// Records why a write of `row` was refused; an error that is not the row's fault is the
    /// request's.
    fn refused(&self, row: &mut PostedRow, error: Error) -> Result<(), Error> {
        let meta = self.meta();
        let shown = |name: &str| {
            (self.fields().iter())
                .any(|&i| meta.fields[i].name == name && !meta.fields[i].read_only)
        };
        match refusal(meta, error) {
            Ok(refused) => {
                let whole = refused.fields.is_empty();
                for (field, message) in refused.fields {
                    if shown(&field) {
                        row.errors.insert(field, message);
                    } else {
                        // A field the row does not show (its foreign key to the parent...).
                        add_row_error(row, format!("{field}: {message}"));
                    }
                }
                if whole || row.errors.is_empty() {
                    add_row_error(row, refused.message.unwrap_or_else(|| "Refused.".into()));
                }
                Ok(())
            }
            Err(e) if e.status_code().is_client_error() => {
                add_row_error(row, e.public_message());
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// A row of the table: its inputs from the widgets of `template`, with `value(idx)` (the
    /// stored value, or the submitted text) and the messages of `errors`.
    fn row(
        &self,
        template: &[FormField],
        number: &str,
        pk: Option<i64>,
        value: &dyn Fn(usize) -> Option<Value>,
        errors: &BTreeMap<String, String>,
        delete: bool,
    ) -> InlineRow {
        let meta = self.meta();
        let prefix = format!("{}-{number}", self.prefix);
        let fields = (self.fields().iter().zip(template))
            .map(|(&idx, input)| {
                let field = &meta.fields[idx];
                let current = value(idx).unwrap_or(Value::Null);
                let text = plain_text(&current);
                let widget = match &input.widget {
                    Widget::Select(options) => Widget::Select(
                        (options.iter())
                            .map(|(v, t, _)| (v.clone(), t.clone(), *v == text))
                            .collect(),
                    ),
                    other => other.clone(),
                };
                FormField {
                    name: format!("{prefix}-{}", field.name),
                    label: field.verbose_name.to_owned(),
                    widget,
                    checked: current == Value::Bool(true)
                        || matches!(&current, Value::String(s) if Self::is_checked(Some(s))
                            && field.kind == FieldKind::Bool),
                    value: text,
                    error: errors.get(field.name).cloned(),
                    help: input.help.clone(),
                    attrs: input.attrs.clone(),
                }
            })
            .collect();
        let label = match pk {
            Some(pk) => format!("{} #{pk}", in_sentence(meta.verbose_name)),
            None => format!("new {} {number}", in_sentence(meta.verbose_name)),
        };
        InlineRow {
            prefix,
            label,
            pk,
            fields,
            delete,
            errors: errors
                .iter()
                .filter(|(field, _)| {
                    !self
                        .fields()
                        .iter()
                        .any(|&i| meta.fields[i].name == **field)
                })
                .map(|(_, message)| message.clone())
                .collect(),
        }
    }
}

/// Adds a message about the row as a whole (several are joined).
fn add_row_error(row: &mut PostedRow, message: String) {
    row.errors
        .entry(String::new())
        .and_modify(|m| {
            m.push(' ');
            m.push_str(&message);
        })
        .or_insert(message);
}

impl PreparedInline {
    /// The rows of a form sent back: each as it was typed, with its errors.
    fn posted_rows(&self, template: &[FormField], posted: &Posted) -> Vec<InlineRow> {
        let meta = self.meta();
        let mut rows = Vec::new();
        for row in &posted.rows {
            let text = |idx: usize| {
                let at = self.fields().iter().position(|&i| i == idx)?;
                match &row.raw[at] {
                    Some(raw) => Some(Value::String(raw.clone())),
                    None if meta.fields[idx].kind == FieldKind::Bool => Some(Value::Bool(false)),
                    None => None,
                }
            };
            let number = row.number.to_string();
            rows.push(self.row(template, &number, row.pk, &text, &row.errors, row.delete));
        }
        rows
    }

    /// The rows of a form shown afresh: the stored children of `parent` (at most `max_shown`,
    /// then a note and the path of the admin's list of them all), and `extra` blank rows.
    fn stored_rows(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        template: &[FormField],
        blank: &dyn Fn(usize) -> Option<Value>,
    ) -> Result<Shown, Error> {
        let meta = self.meta();
        let none = BTreeMap::new();
        let (mut more, mut all) = (None, None);
        let mut children = match parent {
            Some(parent) => Some(self.inner.model.load(
                conn,
                &Select {
                    filters: vec![Filter {
                        path: vec![self.fk],
                        op: Op::Eq,
                        values: vec![Param::Int(parent)],
                    }],
                    order: vec![Order::asc(meta.pk)],
                    limit: Some(i64::try_from(self.max_shown).unwrap_or(i64::MAX - 1) + 1),
                    ..Select::default()
                },
            )?),
            None => None,
        };
        if let Some(children) = children.as_mut().filter(|c| c.len() > self.max_shown) {
            children.truncate(self.max_shown);
            more = Some(format!(
                "Only the first {} {} are shown here.",
                self.max_shown,
                in_sentence(meta.verbose_name_plural)
            ));
            all = (self.admin.as_ref()).zip(parent).map(|(name, parent)| {
                format!(
                    "{}/{name}/?{}={parent}",
                    cx.chrome.prefix, meta.fields[self.fk].name
                )
            });
        }
        let mut rows = Vec::new();
        for child in children.iter().flat_map(|c| c.iter()) {
            let number = rows.len().to_string();
            let stored = |idx: usize| Some(child.field_json(idx));
            rows.push(self.row(template, &number, Some(child.pk()), &stored, &none, false));
        }
        for _ in 0..self.extra {
            let number = rows.len().to_string();
            rows.push(self.row(template, &number, None, blank, &none, false));
        }
        Ok(Shown { rows, more, all })
    }
}

/// The rows of an inline, and when some stored rows are left out, a note saying so and the
/// path of the admin's list of them all.
struct Shown {
    rows: Vec<InlineRow>,
    more: Option<String>,
    all: Option<String>,
}

impl InlineModel for PreparedInline {
    fn prefix(&self) -> &str {
        &self.prefix
    }

    fn parse(&self, req: &AdminRequest, room: usize) -> Result<Posted, Error> {
        let meta = self.meta();
        let start = format!("{}-", self.prefix);
        let mut rows: BTreeMap<u32, PostedRow> = BTreeMap::new();
        for (key, value) in &req.form {
            let Some(rest) = key.strip_prefix(&start) else {
                continue;
            };
            let (number, name) = rest.split_once('-').unwrap_or((rest, ""));
            let number: u32 = number.parse().map_err(|_| {
                bad_request(format!(
                    "the form field '{key}' is not one of the {} rows' inputs",
                    meta.name
                ))
            })?;
            if !rows.contains_key(&number) && rows.len() == room {
                return Err(bad_request(format!(
                    "the form sends more than {room} child rows; save at most that many at \
                     once (Limits::max_bulk_rows)"
                )));
            }
            let row = rows.entry(number).or_insert_with(|| PostedRow {
                number,
                raw: vec![None; self.fields().len()],
                ..PostedRow::default()
            });
            match name {
                PK_INPUT if !value.trim().is_empty() => {
                    let pk = value.trim().parse::<i64>().map_err(|_| {
                        bad_request(format!("the form field '{key}' is not a {} key", meta.name))
                    })?;
                    row.pk = Some(pk);
                }
                DELETE_INPUT => row.delete = Self::is_checked(Some(value)),
                _ => {
                    if let Some(slot) = (self.fields().iter())
                        .position(|&i| meta.fields[i].name == name)
                        .and_then(|at| row.raw.get_mut(at))
                    {
                        slot.get_or_insert_with(|| value.clone());
                    }
                }
            }
        }
        let mut seen = BTreeMap::new();
        for row in rows.values() {
            if let Some(pk) = row.pk {
                if let Some(first) = seen.insert(pk, row.number) {
                    return Err(bad_request(format!(
                        "the {} #{pk} is sent twice (rows {first} and {})",
                        meta.name, row.number
                    )));
                }
            }
            if row.delete && !self.can_delete {
                return Err(bad_request(format!(
                    "the {} rows of this form cannot be deleted here",
                    meta.name
                )));
            }
        }
        let defaults = self.defaults();
        Ok(Posted {
            rows: rows
                .into_values()
                .filter(|row| row.pk.is_some() || !self.is_blank(row, &defaults))
                .collect(),
        })
    }

    fn save(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        posted: &mut Posted,
    ) -> Result<(), Error> {
        let meta = self.meta();
        let ids: Vec<i64> = posted.rows.iter().filter_map(|r| r.pk).collect();
        let Some(parent) = parent else {
            if !ids.is_empty() {
                return Err(bad_request(format!(
                    "the form sends stored {} rows, but a new row has none yet",
                    meta.name
                )));
            }
            // No parent to refer to: only what needs none is checked.
            for row in &mut posted.rows {
                let _ = self.changes(row);
            }
            return Ok(());
        };
        // The children edited or deleted, read and locked in this transaction.
        let current: HashMap<i64, Box<dyn Row>> = (self.inner.model.load_locked(conn, &ids)?)
            .into_iter()
            .map(|child| (child.pk(), child))
            .collect();
        for &pk in &ids {
            let belongs = current
                .get(&pk)
                .is_some_and(|child| child.field_json(self.fk).as_i64() == Some(parent));
            if !belongs {
                return Err(bad_request(format!(
                    "the {} #{pk} is not one of this row's {} rows",
                    meta.name, meta.name
                )));
            }
        }
        // Deletes first (a new row may take a deleted one's unique value), then changes and
        // additions, in the order of the form.
        for row in posted.rows.iter_mut().filter(|r| r.delete) {
            let Some(pk) = row.pk else { continue };
            let deleted =
                (self.inner.model).delete(conn, &cx.req.actor, &[pk], self.delete_recursive);
            if let Err(e) = deleted {
                self.refused(row, e)?;
            }
        }
        for row in posted.rows.iter_mut().filter(|r| !r.delete) {
            cancel::stop_if_client_gone()?; // a client that left gets nothing more
            let mut changes = self.changes(row);
            if !row.errors.is_empty() {
                continue;
            }
            let existing = row.pk.and_then(|pk| current.get(&pk));
            if existing.is_some_and(|child| self.unchanged(&changes, &**child)) {
                continue; // a stored child left as it is: nothing to write
            }
            if existing.is_none() {
                (self
                    .inner
                    .model
                    .set_json(&mut changes, self.fk, &Value::from(parent)))
                .map_err(|m| Error::Internal(format!("inline foreign key: {m}")))?;
            }
            let existing = existing.map(|child| &**child);
            if let Err(e) = self.inner.save(cx, conn, changes, existing) {
                self.refused(row, e)?;
            }
        }
        Ok(())
    }

    fn view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        posted: Option<&Posted>,
        max_rows: usize,
    ) -> Result<InlineView, Error> {
        let meta = self.meta();
        let defaults = self.defaults();
        // A new row's inputs are empty (a default applies), but for checkboxes.
        let blank = |idx: usize| match meta.fields[idx].kind {
            FieldKind::Bool => self.inner.model.changes_json(&defaults, idx),
            _ => None,
        };
        // The widgets, made once (a foreign key's select is one query for all rows).
        let template = self.inner.form_fields(cx, conn, &blank, &BTreeMap::new())?;
        let none = BTreeMap::new();
        let Shown { rows, more, all } = match posted {
            Some(posted) => Shown {
                rows: self.posted_rows(&template, posted),
                more: None,
                all: None,
            },
            None => self.stored_rows(cx, conn, parent, &template, &blank)?,
        };
        let next = posted
            .and_then(|p| p.rows.last())
            .map_or(rows.len(), |r| r.number as usize + 1)
            .max(rows.len());
        Ok(InlineView {
            title: meta.verbose_name_plural.to_owned(),
            singular: in_sentence(meta.verbose_name),
            prefix: self.prefix.clone(),
            columns: (self.fields().iter())
                .map(|&i| meta.fields[i].verbose_name.to_owned())
                .collect(),
            template: self.row(&template, NUMBER_SLOT, None, &blank, &none, false),
            rows,
            next,
            max_rows,
            can_delete: self.can_delete,
            more,
            all,
        })
    }
}

impl PreparedAdmin {
    /// The inlines' rows in a submitted form: at most `max_bulk_rows` of them in all (400
    /// beyond, and for a malformed key).
    pub(super) fn parse_inlines(&self, cx: &Cx<'_>) -> Result<Vec<Posted>, Error> {
        let mut room = self.list.limits.max_bulk_rows;
        let mut out = Vec::with_capacity(self.forms.inlines.len());
        for inline in &self.forms.inlines {
            let posted = inline.parse(cx.req, room)?;
            room -= posted.rows.len().min(room);
            out.push(posted);
        }
        Ok(out)
    }

    /// The tables of the inlines: stored children of `row` (`None`: the add page), or the
    /// rows `posted` after a failed submit.
    pub(super) fn inline_views(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        row: Option<&dyn Row>,
        posted: Option<&[Posted]>,
    ) -> Result<Vec<InlineView>, Error> {
        let parent = row.map(|row| row.pk());
        let max_rows = self.list.limits.max_bulk_rows;
        (self.forms.inlines.iter().enumerate())
            .map(|(i, inline)| {
                let posted = posted.and_then(|p| p.get(i));
                inline.view(cx, conn, parent, posted, max_rows)
            })
            .collect()
    }

    /// Saves the parent (`changes`, on edit over `row`, re-read and locked here), the rows of
    /// every inline and the values of every checklist (`parts`) in one transaction. `errors` holds the parent's parse errors
    /// and receives its refusal (the whole's message into `message`); with any error anywhere
    /// nothing is written and the answer is `false`. On edit the children are written (then
    /// rolled back) even when the parent is refused, so that every error shows at once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn save_with_inlines(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        changes: Changes,
        row: Option<&dyn Row>,
        errors: &mut BTreeMap<String, String>,
        message: &mut Option<String>,
        parts: &mut Parts,
    ) -> Result<Option<Box<dyn Row>>, Error> {
        let mut failed = false;
        let mut written = None;
        // Usernames (of an inline of users) are checked against one read of the user table.
        let outcome = usernames::in_bulk(|| {
            conn.transaction(|conn| {
                let locked = self.current(cx, conn, row)?;
                let locked = locked.as_deref();
                let mut parent = locked.map(|row| row.pk());
                if errors.is_empty() {
                    match self.save(cx, conn, changes, locked) {
                        Ok(saved) => {
                            parent = Some(saved.pk());
                            written = Some(saved);
                        }
                        Err(e) => {
                            let refused = refusal(self.meta, e)?;
                            errors.extend(refused.fields);
                            *message = refused.message;
                            if errors.is_empty() && message.is_none() {
                                *message = Some("Refused.".into());
                            }
                        }
                    }
                }
                for (inline, posted) in self.forms.inlines.iter().zip(&mut parts.inlines) {
                    inline.save(cx, conn, parent, posted)?;
                }
                self.save_checklists(cx, conn, parent, &mut parts.checklists)?;
                if errors.is_empty() && message.is_none() && !parts.has_errors() {
                    Ok(())
                } else {
                    failed = true;
                    Err(Error::Internal("the inlines' save is rolled back".into()))
                }
            })
        });
        match outcome {
            Ok(()) => Ok(written),
            Err(_) if failed => Ok(None),
            // Someone saved the parent since the page was rendered: nothing was written.
            Err(Error::PreconditionFailed) => {
                *message = refusal(self.meta, Error::PreconditionFailed)?.message;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}
