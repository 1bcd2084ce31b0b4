//! The body of a write (docs/contract.md#writes), parsed into a model's changes: each key a
//! field this resource lets clients write, each value of the field's type and within its
//! constraints, a create's required fields given; one 400 names every mistake.

use std::collections::BTreeMap;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::checks::Verb;
use super::hooks::Context;
use super::prepared::{Core, Prepared};
use super::request::{ApiRequest, Objects};
use crate::db::LazyConn;
use crate::error::Error;
use crate::model::{constraints, RestModel};
use crate::sql::Arg;

/// The message of a required field a create lacks.
pub(super) const REQUIRED: &str = "this field is required";

/// The body of a POST or PUT as read before authentication: one object's changes, or the
/// objects of a bulk create (parsed after authentication, each on its own), or one object
/// of a resource with nested children (parsed after authentication with its children).
pub(super) enum Body<M: RestModel> {
    One(Parsed<M>),
    Many(Vec<Map<String, Value>>),
    Parent(Map<String, Value>),
}

/// A parsed body: the changes, and the key the client sent for each field given.
pub(super) struct Parsed<M: RestModel> {
    /// The body as sent (without nested children), for the hooks' `save_object`.
    pub(super) data: Map<String, Value>,
    pub(super) changes: M::Changes,
    pub(super) sent: Vec<(usize, String)>,
}

/// The changes of a body after the hooks' `save_object`, ready to save, and the key the
/// client sent for each field given (a foreign key to no row is named under it).
pub(super) struct ToSave<M: RestModel> {
    pub(super) changes: M::Changes,
    pub(super) sent: Vec<(usize, String)>,
}

impl<M: RestModel> Prepared<M> {
    /// The body of a create or of an update of one record, read before authentication (so
    /// that a unit that writes on SQLite holds its turn among the writers no longer than it
    /// must); its errors answer after authentication and the hooks' checks all the same.
    pub(super) fn read_early(
        &self,
        req: &ApiRequest,
        verb: &Verb,
    ) -> Option<Result<Body<M>, Error>> {
        match verb.method {
            Method::POST => Some(self.read_create(req)),
            Method::PUT if verb.detail => Some(self.read_body(req, false).map(Body::One)),
            _ => None,
        }
    }

    /// The body of a POST (`creating`) or PUT, parsed into changes.
    pub(super) fn read_body(&self, req: &ApiRequest, creating: bool) -> Result<Parsed<M>, Error> {
        self.parse_changes(req.json_object()?, creating)
    }

    /// The body of a POST: one object parsed into changes, or the objects of a bulk create
    /// (more than `max_bulk_rows` of them, or of their nested children: 413).
    pub(super) fn read_create(&self, req: &ApiRequest) -> Result<Body<M>, Error> {
        match req.json_objects()? {
            Objects::One(data) if !self.writes.children.is_empty() => {
                self.check_children_count([&data])?;
                Ok(Body::Parent(data))
            }
            Objects::One(data) => self.parse_changes(data, true).map(Body::One),
            Objects::Many(items) if items.len() > self.list.limits.max_bulk_rows => {
                Err(Error::TooManyItems(self.list.limits.max_bulk_rows))
            }
            Objects::Many(items) => {
                self.check_children_count(&items)?;
                Ok(Body::Many(items))
            }
        }
    }

    /// The one object of a PUT's body, read before authentication or now.
    pub(super) fn one_body(
        &self,
        req: &ApiRequest,
        body: Option<Result<Body<M>, Error>>,
    ) -> Result<Parsed<M>, Error> {
        match body {
            Some(Ok(Body::One(parsed))) => Ok(parsed),
            Some(Err(e)) => Err(e),
            Some(Ok(Body::Many(_) | Body::Parent(_))) | None => self.read_body(req, false),
        }
    }

    /// Parses the body into changes, with the key the client used for each field given.
    pub(super) fn parse_changes(
        &self,
        data: Map<String, Value>,
        creating: bool,
    ) -> Result<Parsed<M>, Error> {
        let mut changes = M::Changes::default();
        let sent = self.parse_fields(&data, creating, &mut ChangesOf::<M>(&mut changes))?;
        Ok(Parsed {
            data,
            changes,
            sent,
        })
    }

    /// The changes of a POST or PUT after the hooks' `save_object`, from the body read before
    /// authentication. A user's `save_object` may hash a password: never while a pooled
    /// connection is held. The default hooks do nothing there, and the connection serves the
    /// write.
    pub(super) fn changes_to_save(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        parsed: Parsed<M>,
    ) -> Result<ToSave<M>, Error> {
        if self.writes.custom_hooks {
            db.release();
        }
        let Parsed {
            data,
            mut changes,
            sent,
        } = parsed;
        self.hooks.save_object(cx, &mut changes, &data)?;
        Ok(ToSave { changes, sent })
    }
}

/// A model's changes as the body's parsing writes and reads them, without the model's type:
/// the parsing is compiled once for every model.
pub(super) trait EditChanges {
    /// Sets field `idx` from JSON (the message says why it cannot).
    fn set_json(&mut self, idx: usize, value: &Value) -> Result<(), String>;
    /// Whether field `idx` is set.
    fn is_set(&self, idx: usize) -> bool;
    /// Field `idx` as the value a write binds, when it is set.
    fn change(&self, idx: usize) -> Option<Arg<'_>>;
}

/// [`EditChanges`] of the changes of `M`.
pub(super) struct ChangesOf<'a, M: RestModel>(pub(super) &'a mut M::Changes);

impl<M: RestModel> EditChanges for ChangesOf<'_, M> {
    fn set_json(&mut self, idx: usize, value: &Value) -> Result<(), String> {
        M::set_json(self.0, idx, value)
    }

    fn is_set(&self, idx: usize) -> bool {
        M::is_set(self.0, idx)
    }

    fn change(&self, idx: usize) -> Option<Arg<'_>> {
        M::change(self.0, idx)
    }
}

impl Core {
    /// Parses the body `data` into `changes`: the key the client used for each field given,
    /// or one 400 naming every mistake (a key that is no field or one not written here, a
    /// value of the wrong type or outside the field's constraints, a create's required field
    /// not given).
    fn parse_fields(
        &self,
        data: &Map<String, Value>,
        creating: bool,
        changes: &mut dyn EditChanges,
    ) -> Result<Vec<(usize, String)>, Error> {
        let meta = self.meta;
        let mut sent = Vec::new();
        let mut errors = BTreeMap::new();
        let mut invalid = Vec::new();
        for (key, value) in data {
            match meta.field(key) {
                None => {
                    errors.insert(key.clone(), self.not_a_field(key).to_owned());
                }
                Some((idx, _)) if idx == meta.pk || Some(idx) == self.writes.owner => {}
                Some((idx, field)) if !self.writes.writable[idx] => {
                    let message = if field.read_only {
                        "this field is read-only"
                    } else {
                        "this field cannot be written here"
                    };
                    errors.insert(key.clone(), message.to_owned());
                }
                Some((idx, _)) => match changes.set_json(idx, value) {
                    Ok(()) => sent.push((idx, key.clone())),
                    Err(message) => {
                        errors.insert(key.clone(), message);
                        invalid.push(idx);
                    }
                },
            }
        }
        if creating {
            for name in self.missing(changes, &invalid) {
                errors.insert(name.to_owned(), REQUIRED.to_owned());
            }
        }
        // The field constraints of the typed values that parsed, the check `save` makes (again
        // on what the hooks and the model make of them): one answer names every mistake, and
        // a body that could never be written is a 400 before any condition or row is looked at.
        for (idx, key) in &sent {
            let value = changes.change(*idx);
            if let Some(message) =
                value.and_then(|v| constraints::violation(&meta.fields[*idx], &v))
            {
                errors.insert(key.clone(), message);
            }
        }
        if errors.is_empty() {
            Ok(sent)
        } else {
            Err(Error::Validation {
                message: "Validation failed".into(),
                fields: errors,
            })
        }
    }

    /// The required fields that a create must be given and `changes` lacks, but those in
    /// `refused` (whose value was given and refused).
    pub(super) fn missing(
        &self,
        changes: &dyn EditChanges,
        refused: &[usize],
    ) -> Vec<&'static str> {
        let mut missing = Vec::new();
        for (idx, field) in self.meta.fields.iter().enumerate() {
            if field.required
                && self.writes.writable[idx]
                && Some(idx) != self.writes.owner
                && !changes.is_set(idx)
                && !refused.contains(&idx)
            {
                missing.push(field.name);
            }
        }
        missing
    }
}
