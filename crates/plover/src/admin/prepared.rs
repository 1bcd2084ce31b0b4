//! A `ModelAdmin` checked and turned into set-up-time tables, and the type-erased interface
//! the dispatcher calls.

use std::any::TypeId;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::action::{check_names, PreparedAction};
use super::erased::{Changes, Model};
use super::facets::{Facets, ShowFacets};
use super::inline::{ErasedInline, Posted};
use super::lookup::{Lookup, Lookups};
use super::names::in_sentence;
use super::page::Reply;
use super::rights::Rights;
use super::templates::{AdminTemplates, DefaultTemplates};
use super::views::{ChecklistView, Chrome, Crumb, InlineView};
use crate::accounts::safe_next;
use crate::db::Conn;
use crate::error::Error;
use crate::history::Actor;
use crate::http::digest;
use crate::http::urlencoded::encode;
use crate::listing::links::with_query;
use crate::listing::{first, Counting, FilterPaths, ListPlan, ListSpec};
use crate::model::row::{Row, Rows};
use crate::model::{FieldMeta, ModelMeta, RestModel};
use crate::permissions::Held;
use crate::query::Limits;

/// The parameter that carries the index's place (its path, search, filters, ordering and
/// page) through the edit and delete pages: `?_changelist=/admin/message/%3Fq%3Dhi`.
pub(crate) const CHANGELIST: &str = "_changelist";

/// The parts of an admin request the views use, detached from actix.
#[derive(Debug)]
pub(crate) struct AdminRequest {
    /// Whether this is a POST.
    pub(crate) post: bool,
    /// The path, as requested.
    pub(crate) path: String,
    /// The decoded query pairs.
    pub(crate) query: Vec<(String, String)>,
    /// The decoded form fields of a POST.
    pub(crate) form: Vec<(String, String)>,
    /// For the user model's forms: the hash of a non-empty `new_password`, made before a
    /// pooled connection was taken, or the message why it could not be.
    pub(crate) new_password: Option<Result<String, String>>,
    /// The signed-in user, as the history records the writes.
    pub(crate) actor: Actor,
}

impl AdminRequest {
    /// The first value of a form field.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        first(&self.form, name)
    }

    /// The first value of a query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        first(&self.query, name)
    }

    /// The path with the query string, as requested.
    pub(crate) fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, encode(&self.query))
        }
    }
}

/// What every view gets besides the connection.
pub(crate) struct Cx<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) req: &'a AdminRequest,
    /// The user's permissions.
    pub(crate) held: &'a Held,
    /// Whether the page is the edit page of a row the user may view but not change: shown
    /// read-only, inlines too.
    pub(crate) view_only: bool,
}

/// A registered model with its type erased.
pub(crate) trait AdminModel: Send + Sync {
    fn name(&self) -> &str;
    /// Its model's name for people, plural (`Messages`): navigation and headings.
    fn title(&self) -> &'static str;
    /// The name of its model (`RestModel::meta().name`), that of its permissions.
    fn model_name(&self) -> &'static str;
    /// The table of its model (the history's `object_table`).
    fn table(&self) -> &'static str;
    /// Whether its forms take a `new_password` (the user model's admin).
    fn takes_password(&self) -> bool;
    /// What the request's user may do here ([`PreparedAdmin::rights`]).
    fn rights_of(&self, cx: &Cx<'_>) -> Rights;
    fn index(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error>;
    fn bulk(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error>;
    fn add(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error>;
    fn edit(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error>;
    fn delete(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error>;
    fn export(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error>;
    fn import(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error>;
    /// The largest body its import page reads: the file, re-posted as base64 for the
    /// confirmation, and the form around it.
    fn import_body_limit(&self) -> usize;
    fn lookup(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, field: &str) -> Result<Reply, Error>;
    fn history(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error>;
}

/// An inline after set-up, with its child type erased.
pub(crate) trait InlineModel: Send + Sync {
    /// The beginning of its inputs' names: the child model's name.
    fn prefix(&self) -> &str;
    /// Its rows in a submitted form (no database): at most `room` of them, else 400; a key
    /// that is not a number, or sent twice, is 400 too. New rows left empty are dropped.
    fn parse(&self, req: &AdminRequest, room: usize) -> Result<Posted, Error>;
    /// Writes the rows, the parent being `parent` (`None`: the parent could not be saved, so
    /// the rows are only checked for what needs no parent), inside the caller's transaction,
    /// each row in a savepoint; the rows' errors go to `posted`. A stored child that is not
    /// one of the parent's is an error (400) for the whole request.
    fn save(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        posted: &mut Posted,
    ) -> Result<(), Error>;
    /// The table of the form: the stored children of `parent` (`None` on the add page) and
    /// empty rows, or after a failed submit the rows as `posted`, with their errors.
    fn view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        posted: Option<&Posted>,
        max_rows: usize,
    ) -> Result<InlineView, Error>;
}

/// The values of one checklist in a submitted form, and what is wrong with them.
#[derive(Debug, Default)]
pub(crate) struct Ticked {
    pub(crate) values: BTreeSet<String>,
    pub(crate) error: Option<String>,
}

/// A checklist with its child type erased.
pub(crate) trait ChecklistModel: Send + Sync {
    /// The name of its inputs.
    fn name(&self) -> &str;
    /// Its values in the submitted form; `None` when the form does not hold it. 403 when it
    /// does and the user may not add and delete the child rows.
    fn parse(&self, cx: &Cx<'_>) -> Result<Option<Ticked>, Error>;
    /// Writes the difference between `ticked` and the parent's rows, inside the caller's
    /// transaction (`parent` `None`: the parent could not be saved; the values are only
    /// checked). A value that is no choice, or that the child's rules refuse, goes to
    /// `ticked.error`, and the caller rolls back.
    fn save(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        ticked: &mut Ticked,
    ) -> Result<(), Error>;
    /// The checklist of the form, ticked as stored for `parent` (none on the add page) or as
    /// `ticked` after a failed submit; read-only when `shown_only` or when the user may not
    /// add and delete the child rows; `None` when the user may not view them.
    fn view(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        parent: Option<i64>,
        ticked: Option<&Ticked>,
        shown_only: bool,
    ) -> Result<Option<ChecklistView>, Error>;
}

/// What a submitted form holds besides the model's fields: the rows of each inline, the
/// values of each checklist (`None`: not in the form).
#[derive(Debug, Default)]
pub(crate) struct Parts {
    pub(crate) inlines: Vec<Posted>,
    pub(crate) checklists: Vec<Option<Ticked>>,
}

impl Parts {
    /// Whether a row of an inline or a checklist has an error.
    pub(crate) fn has_errors(&self) -> bool {
        self.inlines.iter().any(Posted::has_errors)
            || (self.checklists.iter().flatten()).any(|t| t.error.is_some())
    }
}

/// A computed index column: the value of a row.
pub(crate) type RowValue = Arc<dyn Fn(&dyn Row) -> String + Send + Sync>;

/// A computed index column: the values of a page of rows.
pub(crate) type PageValues =
    Arc<dyn Fn(&mut Conn<'_>, &dyn Rows) -> Result<Vec<String>, Error> + Send + Sync>;

/// The check every add and edit runs first ([`ModelAdmin::clean`](super::ModelAdmin)).
pub(crate) type ErasedClean =
    Arc<dyn Fn(&mut Conn<'_>, &mut Changes, Option<&dyn Row>) -> Result<(), Error> + Send + Sync>;

/// An index column, resolved.
pub(crate) enum PreparedColumn {
    /// A field, by index.
    Field(usize),
    /// A value computed from each row, under its title.
    Computed(String, RowValue),
    /// A value computed for a page of rows at once, under its title.
    Page(String, PageValues),
}

impl std::fmt::Debug for PreparedColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreparedColumn::Field(idx) => f.debug_tuple("Field").field(idx).finish(),
            PreparedColumn::Computed(title, _) => f
                .debug_struct("Computed")
                .field("title", title)
                .finish_non_exhaustive(),
            PreparedColumn::Page(title, _) => f
                .debug_struct("PageComputed")
                .field("title", title)
                .finish_non_exhaustive(),
        }
    }
}

/// A `ModelAdmin` after set-up, its options grouped by the pages that use them.
pub(crate) struct PreparedAdmin {
    /// The URL name.
    pub(crate) name: String,
    /// The model.
    pub(crate) meta: &'static ModelMeta,
    /// Its reads and writes.
    pub(crate) model: Box<dyn Model>,
    /// What the index, its filters, the lookups and the export may show and filter.
    pub(crate) list: ListPlan,
    pub(crate) templates: std::sync::Arc<dyn AdminTemplates>,
    /// The index page.
    pub(crate) index: IndexOptions,
    /// The add and edit pages.
    pub(crate) forms: FormOptions,
    /// The type-ahead lookups of foreign keys.
    pub(crate) lookups: Lookups,
    /// The delete page and the bulk delete.
    pub(crate) deletes: DeleteOptions,
    /// Whether rows are only shown, deleted and acted on ([`ModelAdmin::read_only`]).
    pub(crate) read_only: bool,
}

/// What the index shows besides its rows.
pub(crate) struct IndexOptions {
    /// The columns, in order.
    pub(crate) columns: Vec<PreparedColumn>,
    /// The application's actions on selected rows.
    pub(crate) actions: Vec<PreparedAction>,
    /// The facets (`list_filter`).
    pub(crate) facets: Facets,
    /// How it counts its rows (exact up to `count_exact_up_to`).
    pub(crate) count: Counting,
    /// The `ordering` when the request gives none.
    pub(crate) ordering: Option<String>,
    /// The filters applied before the request's (index and export).
    pub(crate) scope: Vec<(String, String)>,
    /// Rows a page without a `limit` (`list_per_page`).
    pub(crate) per_page: i64,
    /// The most rows a page shows (`list_max_show_all`, never below `per_page`).
    pub(crate) max_show_all: i64,
}

/// What the add and edit forms edit.
pub(crate) struct FormOptions {
    /// The fields, in model order (never the primary key).
    pub(crate) fields: Vec<usize>,
    /// For the user model: its password field, set from the forms' `new_password` input.
    pub(crate) password: Option<usize>,
    /// The children the forms edit, in order.
    pub(crate) inlines: Vec<Box<dyn InlineModel>>,
    /// The check every add and edit runs first.
    pub(crate) clean: Option<ErasedClean>,
    /// The checklists the forms edit, in order.
    pub(crate) checklists: Vec<Box<dyn ChecklistModel>>,
}

/// How rows are deleted.
pub(crate) struct DeleteOptions {
    /// Whether the delete page lists the dependent rows deleted along.
    pub(crate) collect_objects: bool,
    /// Whether deletes take dependent rows along (else a referenced row is not deleted).
    pub(crate) recursive: bool,
}

/// What one registration shows in forms, known before every model is prepared (joins from
/// other models' admins honour it).
pub(crate) struct Exposure {
    pub(crate) exposed: Vec<bool>,
    pub(crate) filter_paths: FilterPaths,
    pub(crate) limits: Limits,
    /// The admin's URL name (inlines of the model link to its index).
    pub(crate) name: String,
    /// Whether its deletes take dependent rows along (inlines of the model delete so too).
    pub(crate) delete_recursive: bool,
}

/// The list options of a model admin that say what it shows, as field indexes.
pub(crate) struct ListOptions {
    /// `fields`: the only fields shown, if given.
    pub(crate) fields: Option<Vec<usize>>,
    /// `exclude`: fields never shown.
    pub(crate) exclude: Vec<usize>,
    /// `paginate_by`: rows an index page.
    pub(crate) paginate_by: i64,
    /// `limits`: bounds on one request.
    pub(crate) limits: Limits,
    /// The filter and search paths.
    pub(crate) filter_paths: FilterPaths,
}

impl ListOptions {
    /// The options of `list`.
    pub(crate) fn of<M: RestModel>(list: &ListSpec<M>) -> ListOptions {
        ListOptions {
            fields: list.fields.clone(),
            exclude: list.exclude.clone(),
            paginate_by: list.paginate_by,
            limits: list.limits,
            filter_paths: list.filter_paths(),
        }
    }
}

impl Default for ListOptions {
    /// The options of a list left as it comes.
    fn default() -> ListOptions {
        let list = ListSpec::<()>::default();
        ListOptions {
            fields: list.fields,
            exclude: list.exclude,
            paginate_by: list.paginate_by,
            limits: list.limits,
            filter_paths: FilterPaths::default(),
        }
    }
}

/// The options of a `ModelAdmin` but its list's, the model's type erased as they are set: the
/// admin is checked and prepared from them by code compiled once.
pub(crate) struct Plain {
    pub(crate) meta: &'static ModelMeta,
    pub(crate) model: Box<dyn Model>,
    pub(crate) name: Option<String>,
    /// The index's columns, fields not checked yet.
    pub(crate) columns: Vec<PreparedColumn>,
    pub(crate) filter_paginate_by: i64,
    /// `(foreign key, the model it must refer to, the field of that model searched)`, by index.
    pub(crate) foreign_key_lookups: Vec<(usize, &'static ModelMeta, usize)>,
    pub(crate) delete_collect_objects: bool,
    pub(crate) delete_recursive: bool,
    pub(crate) actions: Vec<PreparedAction>,
    pub(crate) templates: Arc<dyn AdminTemplates>,
    /// The children edited on the edit page, in order.
    pub(crate) inlines: Vec<ErasedInline>,
    /// `list_filter`: the fields of the index's facets, by index.
    pub(crate) list_filter: Vec<usize>,
    pub(crate) show_facets: ShowFacets,
    pub(crate) count_exact_up_to: i64,
    /// `list_max_show_all`: the most rows one index page shows (its `limit`, "Show all").
    pub(crate) list_max_show_all: i64,
    /// `read_only`: no add, edit or import pages; rows are shown, deleted and acted on.
    pub(crate) read_only: bool,
    /// The index's `ordering` when the request gives none (`-id`).
    pub(crate) ordering: Option<String>,
    /// Filters every index and export of this admin applies before the request's, in the
    /// REST syntax (`kind=plover.webhook`): a view of some rows, not a permission.
    pub(crate) scope: Vec<(String, String)>,
    /// The check every add and edit of this admin runs first.
    pub(crate) clean: Option<ErasedClean>,
}

impl Plain {
    /// The defaults of an admin of the model `meta`, whose reads and writes are `model`:
    /// every field in forms and columns, dependents collected and deleted.
    pub(crate) fn new(meta: &'static ModelMeta, model: Box<dyn Model>) -> Plain {
        Plain {
            meta,
            model,
            name: None,
            columns: Vec::new(),
            filter_paginate_by: 15,
            foreign_key_lookups: Vec::new(),
            delete_collect_objects: true,
            delete_recursive: true,
            actions: Vec::new(),
            templates: Arc::new(DefaultTemplates),
            inlines: Vec::new(),
            list_filter: Vec::new(),
            show_facets: ShowFacets::Allow,
            count_exact_up_to: 10_000,
            list_max_show_all: 200,
            read_only: false,
            ordering: None,
            scope: Vec::new(),
            clean: None,
        }
    }

    /// The fields the forms show, and the primary key: what the admin lets people see and
    /// filter, its list options being `shown`.
    pub(crate) fn exposure(&self, shown: &ListOptions) -> Exposure {
        let columns: Vec<usize> = (self.columns.iter())
            .filter_map(|c| match c {
                PreparedColumn::Field(idx) => Some(*idx),
                _ => None,
            })
            .collect();
        Exposure {
            exposed: exposed(self.meta, shown.fields.as_deref(), &shown.exclude, &columns),
            filter_paths: shown.filter_paths.clone(),
            limits: shown.limits,
            name: (self.name.as_deref()).unwrap_or(self.meta.name).to_owned(),
            delete_recursive: self.delete_recursive,
        }
    }

    /// Checks the options, its list options being `shown`, against the model and builds the
    /// tables. Misconfigurations panic here, at start.
    pub(crate) fn prepare(
        self,
        shown: ListOptions,
        exposures: &HashMap<TypeId, Exposure>,
    ) -> PreparedAdmin {
        let exposure = self.exposure(&shown);
        let meta = self.meta;
        let form_fields = form_fields(meta, shown.fields.as_deref(), &shown.exclude);
        let mut columns = self.columns;
        for column in &columns {
            if let PreparedColumn::Field(idx) = column {
                check_column(meta, &exposure, *idx);
            }
        }
        if columns.is_empty() {
            columns = exposed_fields(&exposure)
                .into_iter()
                .map(PreparedColumn::Field)
                .collect();
        }
        let lookups = Lookups {
            by_field: lookups(meta, &self.foreign_key_lookups, exposures),
            per_page: self.filter_paginate_by,
        };
        let name = self.name.unwrap_or_else(|| meta.name.to_owned());
        let actions = self.actions;
        check_names(&name, &actions);
        let per_page = shown.paginate_by;
        // The plan takes any `limit` up to the bound; the index asks for `per_page` itself.
        let max_show_all = self.list_max_show_all.max(per_page);
        let list = rules_for(meta, &exposure, exposures, 0, max_show_all);
        list.check_search(&name, &());
        let inlines = ErasedInline::prepare_all(meta, &name, self.inlines, exposures);
        let mut facets = Facets::new(
            meta,
            &list,
            &name,
            &self.list_filter,
            self.show_facets,
            &lookups,
        );
        facets.scope.clone_from(&self.scope);
        if let Some(ordering) = &self.ordering {
            let pairs = [(crate::listing::ORDERING.to_owned(), ordering.clone())];
            if let Err(e) = list.parse(&pairs, &()) {
                panic!("plover admin: the ordering `{ordering}` of {name}: {e}");
            }
        }
        if let Err(e) = list.conditions(&self.scope, &()) {
            panic!("plover admin: the scope of {name}: {e}");
        }
        PreparedAdmin {
            name,
            meta,
            model: self.model,
            list,
            templates: self.templates,
            index: IndexOptions {
                columns,
                actions,
                facets,
                count: Counting::ExactUpTo(self.count_exact_up_to),
                ordering: self.ordering,
                scope: self.scope,
                per_page,
                max_show_all,
            },
            forms: FormOptions {
                fields: form_fields,
                password: None,
                inlines,
                clean: self.clean,
                checklists: Vec::new(),
            },
            lookups,
            deletes: DeleteOptions {
                collect_objects: self.delete_collect_objects,
                recursive: self.delete_recursive,
            },
            read_only: self.read_only,
        }
    }
}

/// What an admin of `meta` whose list shows `fields` but `exclude` exposes: the fields its
/// forms show, the primary key, and the private fields that a column of the index names
/// (`columns`, field indexes).
fn exposed(
    meta: &ModelMeta,
    fields: Option<&[usize]>,
    exclude: &[usize],
    columns: &[usize],
) -> Vec<bool> {
    // A private field is offered in the index, filters and export only where a column names
    // it.
    let named: Vec<usize> = (columns.iter().copied())
        .filter(|&idx| meta.fields.get(idx).is_some_and(|f| f.private))
        .collect();
    let mut exposed = meta.shown(fields, exclude, &named);
    exposed[meta.pk] = true;
    exposed
}

/// The fields the add and edit forms show (never the primary key): a trusted surface, they
/// show and edit private fields too. Panics when they hide a required field.
fn form_fields(meta: &ModelMeta, fields: Option<&[usize]>, exclude: &[usize]) -> Vec<usize> {
    let private: Vec<usize> = (0..meta.fields.len())
        .filter(|&i| meta.fields[i].private)
        .collect();
    let in_forms = meta.shown(fields, exclude, &private);
    let form_fields: Vec<usize> = (0..meta.fields.len())
        .filter(|&i| i != meta.pk && in_forms[i])
        .collect();
    for (i, field) in meta.fields.iter().enumerate() {
        assert!(
            !(field.required && !form_fields.contains(&i) && i != meta.pk),
            "plover admin: the {} forms hide `{}`, which is required: show it or give it a \
             default (#[rest(default = ...)])",
            meta.name,
            field.name
        );
    }
    form_fields
}

/// The field `idx` of an index column, checked to be one the forms show (else a panic).
fn check_column(meta: &ModelMeta, exposure: &Exposure, idx: usize) -> usize {
    assert!(
        exposure.exposed.get(idx) == Some(&true),
        "plover admin: column `{}` of {} is a field its forms hide",
        meta.fields.get(idx).map_or("?", |f| f.name),
        meta.name
    );
    idx
}

/// The exposed fields, in model order: the index's columns where `columns` names none.
fn exposed_fields(exposure: &Exposure) -> Vec<usize> {
    (0..exposure.exposed.len())
        .filter(|&i| exposure.exposed[i])
        .collect()
}

/// The `foreign_key_lookups` of an admin of `meta` (field, related model, searched field),
/// checked: each a foreign key into the model named, searching a field that is neither
/// write-only nor private (unless its own admin's `columns` names it).
fn lookups(
    meta: &ModelMeta,
    foreign_key_lookups: &[(usize, &'static ModelMeta, usize)],
    exposures: &HashMap<TypeId, Exposure>,
) -> HashMap<usize, Lookup> {
    foreign_key_lookups
        .iter()
        .map(|&(idx, related, column)| {
            let field = meta.fields[idx].name;
            let Some(target) = meta.fields[idx].target() else {
                panic!("plover admin: `foreign_key_lookups` names `{field}`, which is not a foreign key");
            };
            assert!(
                std::ptr::eq(target, related),
                "plover admin: `foreign_key_lookups`: `{field}` refers to `{}`, not to `{}`",
                target.name,
                related.name
            );
            let searched = &target.fields[column];
            assert!(
                !searched.excluded,
                "plover admin: `foreign_key_lookups` cannot search the write-only field `{}`",
                searched.name
            );
            // A private field's values are listed only where its own admin's index shows
            // them (`columns` names it).
            let shown = (exposures.get(&(target.type_id)()))
                .is_some_and(|e| e.exposed.get(column) == Some(&true));
            assert!(
                !searched.private || shown,
                "plover admin: `foreign_key_lookups` cannot search the private field `{}` \
                 unless the {} admin's `columns` names it",
                searched.name,
                target.name
            );
            (idx, Lookup { target, column })
        })
        .collect()
}

/// Filter rules of one admin: its exposed fields, and through a foreign key to another
/// registered model, that model's rules (so `user__password` is refused where the user admin
/// hides `password`).
fn rules_for(
    meta: &'static ModelMeta,
    exposure: &Exposure,
    exposures: &HashMap<TypeId, Exposure>,
    depth: usize,
    paginate_by: i64,
) -> ListPlan {
    let mut nested = HashMap::new();
    if depth < 4 {
        for (idx, field) in meta.fields.iter().enumerate() {
            let Some(target) = field.target() else {
                continue;
            };
            if let Some(inner) = exposures.get(&(target.type_id)()) {
                nested.insert(
                    idx,
                    rules_for(target, inner, exposures, depth + 1, paginate_by),
                );
            }
        }
    }
    // Fields the forms hide are refused like `filter_exclude` paths.
    let mut paths = exposure.filter_paths.clone();
    paths.exclude.extend(
        (0..meta.fields.len())
            .filter(|&i| !exposure.exposed[i])
            .map(|i| vec![i]),
    );
    ListPlan::new(
        meta,
        exposure.exposed.clone(),
        paths,
        true,
        nested,
        exposure.limits,
        paginate_by,
    )
}

impl PreparedAdmin {
    /// A field of the model.
    pub(crate) fn field(&self, idx: usize) -> &'static FieldMeta {
        &self.meta.fields[idx]
    }

    /// The row with primary key `raw` (404 when absent or not a key).
    pub(crate) fn find(&self, conn: &mut Conn<'_>, raw: &str) -> Result<Box<dyn Row>, Error> {
        let pk = raw.parse::<i64>().map_err(|_| Error::NotFound)?;
        self.model.load_pk(conn, pk)?.ok_or(Error::NotFound)
    }

    /// The scope's filters, then `pairs` (a request's query).
    pub(crate) fn scoped(&self, pairs: &[(String, String)]) -> Vec<(String, String)> {
        (self.index.scope.iter()).chain(pairs).cloned().collect()
    }

    /// What the request's user may do here: their permissions on the model, without add
    /// where the model admin is `read_only` (its rows are still acted on and deleted).
    pub(crate) fn rights(&self, cx: &Cx<'_>) -> Rights {
        let rights = Rights::of(cx.held, self.meta.name);
        Rights {
            add: rights.add && !self.read_only,
            ..rights
        }
    }

    /// Adds `checklists` to the forms. Panics when two have one name, or one has a form
    /// field's name.
    pub(crate) fn add_checklists(&mut self, checklists: Vec<Box<dyn ChecklistModel>>) {
        let meta = self.meta;
        for checklist in checklists {
            let name = checklist.name();
            let taken = (self.forms.fields.iter()).any(|&f| meta.fields[f].name == name)
                || self.forms.checklists.iter().any(|c| c.name() == name);
            assert!(
                !taken,
                "plover admin: the forms of {} have two inputs named `{name}`",
                self.name
            );
            self.forms.checklists.push(checklist);
        }
    }

    /// Whether the edit page only shows the row: a `read_only` model admin, or a user who
    /// may not change it.
    pub(crate) fn shown_only(&self, cx: &Cx<'_>) -> bool {
        self.read_only || cx.view_only
    }

    /// The version tag of a row of the model (the forms' `_version`).
    pub(crate) fn version(&self, row: &dyn Row) -> String {
        digest::version((0..self.meta.fields.len()).map(|idx| row.field_json(idx)))
    }

    /// The model's name for one row, as it reads inside a sentence (`message`).
    pub(crate) fn singular(&self) -> String {
        in_sentence(self.meta.verbose_name)
    }

    /// The model's name for `n` rows, as it reads inside a sentence (`1 message`,
    /// `3 messages`: the count is the caller's).
    pub(crate) fn counted(&self, n: usize) -> String {
        match n {
            1 => self.singular(),
            _ => in_sentence(self.meta.verbose_name_plural),
        }
    }

    /// `{prefix}/{name}/`.
    pub(crate) fn url(&self, cx: &Cx<'_>) -> String {
        format!("{}/{}/", cx.chrome.prefix, self.name)
    }

    /// The index as the user left it: the request's [`CHANGELIST`] parameter when it is a
    /// local path to this index (checked as a login's `next` is: an absolute or
    /// scheme-relative URL, or another page, is ignored), else the index.
    pub(crate) fn list_place(&self, cx: &Cx<'_>) -> String {
        let url = self.url(cx);
        (cx.req.param(CHANGELIST))
            .and_then(safe_next)
            .filter(|place| place == &url || place.starts_with(&format!("{url}?")))
            .unwrap_or(url)
    }

    /// `page` (a URL without a query) carrying the index's place ([`Self::list_place`]), so
    /// that its saves and deletes lead back there.
    pub(crate) fn keeping_place(&self, cx: &Cx<'_>, page: &str) -> String {
        with_query(page, &self.place_param(cx))
    }

    /// The index's place ([`Self::list_place`]) as the query parameter `_changelist`, or
    /// nothing when it is the plain index.
    pub(crate) fn place_param(&self, cx: &Cx<'_>) -> Vec<(String, String)> {
        let place = self.list_place(cx);
        match place == self.url(cx) {
            true => Vec::new(),
            false => vec![(CHANGELIST.to_owned(), place)],
        }
    }

    /// The frame of one of this model's pages: the request's, with the breadcrumbs
    /// `Home › {model's plural} › trail...`, the model's linked to the index as the user left
    /// it (the index page itself passes no trail).
    pub(crate) fn chrome(&self, cx: &Cx<'_>, trail: Vec<Crumb>) -> Chrome {
        let mut chrome = cx.chrome.clone();
        let home = Crumb::link("Home", format!("{}/", cx.chrome.prefix));
        let model = match trail.is_empty() {
            true => Crumb::here(self.meta.verbose_name_plural),
            false => Crumb::link(self.meta.verbose_name_plural, self.list_place(cx)),
        };
        chrome.breadcrumbs = [home, model].into_iter().chain(trail).collect();
        chrome
    }

    /// The JSON lookup of a foreign key, `{prefix}/{name}/lookup/{field}/`.
    pub(crate) fn lookup_url(&self, cx: &Cx<'_>, field: &FieldMeta) -> String {
        format!("{}lookup/{}/", self.url(cx), field.name)
    }
}

impl AdminModel for PreparedAdmin {
    fn name(&self) -> &str {
        &self.name
    }
    fn title(&self) -> &'static str {
        self.meta.verbose_name_plural
    }
    fn model_name(&self) -> &'static str {
        self.meta.name
    }
    fn table(&self) -> &'static str {
        self.meta.table
    }
    fn takes_password(&self) -> bool {
        self.forms.password.is_some()
    }
    fn rights_of(&self, cx: &Cx<'_>) -> Rights {
        self.rights(cx)
    }
    fn index(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        self.index_page(cx, conn)
    }
    fn bulk(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        self.bulk_action(cx, conn)
    }
    fn add(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        if self.read_only {
            return Err(Error::NotFound);
        }
        self.form_view(cx, conn, None)
    }
    fn edit(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error> {
        if self.read_only && cx.req.post {
            return Err(Error::MethodNotAllowed(vec![actix_web::http::Method::GET]));
        }
        let row = self.find(conn, pk)?;
        self.form_view(cx, conn, Some(row))
    }
    fn delete(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error> {
        let row = self.find(conn, pk)?;
        self.delete_view(cx, conn, row)
    }
    fn export(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        self.export_view(cx, conn)
    }
    fn import(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        if self.read_only {
            return Err(Error::NotFound);
        }
        self.import_view(cx, conn)
    }
    fn import_body_limit(&self) -> usize {
        let file = self.list.limits.max_import_bytes;
        file.saturating_add(file / 3 + 4).saturating_add(64 * 1024)
    }
    fn lookup(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, field: &str) -> Result<Reply, Error> {
        self.lookup_json(cx, conn, field)
    }
    fn history(&self, cx: &Cx<'_>, conn: &mut Conn<'_>, pk: &str) -> Result<Reply, Error> {
        self.history_view(cx, conn, pk)
    }
}

/// A 400 page for a request the view cannot serve.
pub(crate) fn bad_request(message: impl Into<String>) -> Error {
    Error::BadBody(message.into())
}
