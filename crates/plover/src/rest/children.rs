//! Nested create (docs/contract.md#nested-create): the children of a writable one-to-many
//! relation ([`Resource::nested_children`]), parsed with the object a POST creates and written
//! in its transaction, each through its own resource's create path. Nothing imports this
//! module: the parent's resource reaches it through `relation`'s traits and the methods below.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::body::ToSave;
use super::erased::{Item, Writer};
use super::hooks::{set_key, Context};
use super::joins::Joins;
use super::prepared::{Core, Prepared};
use super::relation::{
    validation, ChildResource, ChildSpec, IntoChildResource, NewChildren, PendingChildren, Relation,
};
use super::resource::Resource;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::model::{save, ModelMeta, RestModel};
use crate::openapi::ChildDoc;

/// What a body key naming a relation is told outside a create.
const CREATE_ONLY: &str = "nested objects are written only when the object is created";

/// The mistakes of `e` under `path` (`children.2` + `.title`), or `e` itself when it is no
/// object's mistake.
fn under(path: &str, e: Error, errors: &mut BTreeMap<String, String>) -> Result<(), Error> {
    for (key, message) in e.item_fields().ok_or(e)? {
        errors.insert(format!("{path}.{key}"), message);
    }
    Ok(())
}

impl<M: RestModel> Prepared<M> {
    /// Parses one child object (its foreign key `fk` is the parent's to set), runs the
    /// `save_object` hook and stamps the owner.
    fn parse_child(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        fk: usize,
        mut data: Map<String, Value>,
    ) -> Result<ToSave<M>, Error> {
        let field = &M::meta().fields[fk];
        let named: Vec<String> = data
            .keys()
            .filter(|key| field.answers_to(key))
            .cloned()
            .collect();
        let mut errors = BTreeMap::new();
        for key in named {
            data.shift_remove(&key);
            errors.insert(key, "set by the parent".to_owned());
        }
        let parsed = match self.parse_changes(data, true) {
            Ok(parsed) if errors.is_empty() => parsed,
            Ok(_) => return Err(validation(errors)),
            Err(e) => {
                let mut own = e.item_fields().ok_or(e)?;
                own.append(&mut errors);
                return Err(validation(own));
            }
        };
        let mut item = self.changes_to_save(cx, db, parsed)?;
        if let Some((user, idx)) = self.owner_user(cx)? {
            self.hooks.set_owner(&mut item.changes, user, idx)?;
        }
        Ok(item)
    }
}

impl Core {
    /// The create body of one object, parsed after authentication: the object (after
    /// `save_object`, by `w`) and its nested children, or one 400 naming the mistakes of both.
    pub(super) fn parse_create(
        &self,
        w: &dyn Writer,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        mut data: Map<String, Value>,
    ) -> Result<(Item, NewChildren<'_>), Error> {
        let mut errors = BTreeMap::new();
        let children = self.take_children(cx, db, &mut data, &mut errors)?;
        match w.create_item(cx, db, data) {
            Ok(item) if errors.is_empty() => return Ok((item, children)),
            Ok(_) => {}
            Err(e) => errors.extend(e.item_fields().ok_or(e)?),
        }
        Err(validation(errors))
    }

    /// The relation whose body key is `key`.
    fn relation(&self, key: &str) -> Option<&Relation> {
        self.writes.children.iter().find(|r| r.key == key)
    }

    /// What a body key that names no field of `M` is told: create-only for a relation's key.
    pub(super) fn not_a_field(&self, key: &str) -> &'static str {
        if self.relation(key).is_some() {
            CREATE_ONLY
        } else {
            "unknown field"
        }
    }

    /// 413 when the create bodies `objects` carry more children in all than
    /// `max_bulk_rows`.
    pub(super) fn check_children_count<'o>(
        &self,
        objects: impl IntoIterator<Item = &'o Map<String, Value>>,
    ) -> Result<(), Error> {
        if self.writes.children.is_empty() {
            return Ok(());
        }
        let max = self.list.limits.max_bulk_rows;
        let mut count = 0usize;
        for object in objects {
            for relation in &self.writes.children {
                if let Some(Value::Array(items)) = object.get(&relation.key) {
                    count = count.saturating_add(items.len());
                }
            }
        }
        if count > max {
            return Err(Error::TooManyItems(max));
        }
        Ok(())
    }

    /// Takes the relations' keys out of the create body `data` and parses their children
    /// (none for a key not sent); their mistakes go to `errors` by path.
    fn take_children(
        &self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        data: &mut Map<String, Value>,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<NewChildren<'_>, Error> {
        let mut out = Vec::new();
        for relation in &self.writes.children {
            // A relation not sent has no children: the answer shows `[]`.
            let value = (data.shift_remove(&relation.key)).unwrap_or(Value::Array(Vec::new()));
            let pending = relation.child.parse(cx, db, value, &relation.key, errors)?;
            out.push((relation, pending));
        }
        Ok(NewChildren(out))
    }
}

/// The child resource of a relation: a prepared resource whose foreign key to the parent no
/// client writes.
struct Child<C: RestModel> {
    resource: Prepared<C>,
    fk: usize,
}

impl<C: RestModel> IntoChildResource for ChildSpec<Resource<C>> {
    fn prepare(
        self: Box<Self>,
        parent: &'static ModelMeta,
        key: &str,
        history: bool,
    ) -> Arc<dyn ChildResource> {
        let meta = C::meta();
        let ChildSpec { fk, mut resource } = *self;
        let field = meta.fields[fk].name;
        let Some(target) = meta.fields[fk].target() else {
            panic!(
                "plover: nested_children `{key}`: `{field}` of `{}` is not a foreign key",
                meta.name
            );
        };
        if (target.type_id)() != (parent.type_id)() {
            panic!(
                "plover: nested_children `{key}`: `{field}` of `{}` refers to `{}`, not `{}`",
                meta.name, target.name, parent.name
            );
        }
        if resource.owner_field == Some(fk) {
            panic!(
                "plover: nested_children `{key}`: `{field}` of `{}` is the child resource's \
                 owner field; the parent sets it",
                meta.name
            );
        }
        if !resource.children.is_empty() {
            panic!(
                "plover: nested_children `{key}`: the resource of `{}` has nested children of \
                 its own; one level is written",
                meta.name
            );
        }
        resource.history |= history;
        let mut resource = Prepared::new(resource);
        // The parent sets it: never required of, nor written by, the client.
        resource.writes.writable[fk] = false;
        Arc::new(Child { resource, fk })
    }
}

impl<C: RestModel> ChildResource for Child<C> {
    fn parse<'s>(
        &'s self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        value: Value,
        path: &str,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<Box<dyn PendingChildren + 's>, Error> {
        let mut pending = Pending {
            child: self,
            items: Vec::new(),
            path: path.to_owned(),
        };
        let Value::Array(items) = value else {
            errors.insert(path.to_owned(), "must be an array of objects".to_owned());
            return Ok(Box::new(pending));
        };
        if items.is_empty() {
            return Ok(Box::new(pending));
        }
        if !self.resource.hooks.check_post(cx) {
            return Err(Error::Forbidden);
        }
        for (index, item) in items.into_iter().enumerate() {
            let at = format!("{path}.{index}");
            let Value::Object(data) = item else {
                errors.insert(at, "must be an object".to_owned());
                continue;
            };
            match self.resource.parse_child(cx, db, self.fk, data) {
                Ok(parsed) => pending.items.push((index, parsed)),
                Err(e) => under(&at, e, errors)?,
            }
        }
        Ok(Box::new(pending))
    }

    fn doc(&self) -> ChildDoc<'_> {
        ChildDoc {
            shape: self.resource.shape(),
            writable: &self.resource.writes.writable,
            owner: self.resource.writes.owner,
        }
    }

    fn share_joins(&mut self, joins: &Arc<Joins>) {
        self.resource.share_joins(joins);
    }
}

/// The parsed children of one relation, by their index in the body.
struct Pending<'s, C: RestModel> {
    child: &'s Child<C>,
    items: Vec<(usize, ToSave<C>)>,
    /// Their body path (`children`).
    path: String,
}

impl<C: RestModel> PendingChildren for Pending<'_, C> {
    fn write(
        self: Box<Self>,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        parent: i64,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<Vec<u8>, Error> {
        let Pending { child, items, path } = *self;
        let resource = &child.resource;
        let mut rows = Vec::with_capacity(items.len());
        for (index, mut item) in items {
            set_key::<C>(&mut item.changes, child.fk, parent)?;
            let saved = conn.transaction(|conn| {
                resource.check_references(conn, &item)?;
                let row = save::<C>(conn, item.changes, None)?;
                resource.record(cx, conn, None, Some(&row))?;
                Ok(row)
            });
            match saved {
                Ok(row) => rows.push(row),
                Err(e) => under(&format!("{path}.{index}"), e, errors)?,
            }
        }
        if !errors.is_empty() {
            return Ok(Vec::new());
        }
        let mut objects = resource
            .serialize(cx, conn, &rows, None, b"[".to_vec())?
            .buf;
        objects.push(b']');
        Ok(objects)
    }
}
