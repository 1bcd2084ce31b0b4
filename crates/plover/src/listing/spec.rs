//! The list options REST resources and model admins share (which fields show, which filters
//! are allowed, the page size, the bounds), their setters, and their compilation into
//! [`ListPlan`] at set-up.

use std::collections::HashMap;

use super::{JoinRules, ListPlan};
use crate::model::{FieldKind, ModelMeta, Path, RestModel};
use crate::query::{Count, Limits};

/// The list options of one model, as typed handles: no name is looked up again.
pub(crate) struct ListSpec<M> {
    /// `fields`: the only fields shown (indexes), if given.
    pub(crate) fields: Option<Vec<usize>>,
    /// `exclude`: fields never shown.
    pub(crate) exclude: Vec<usize>,
    /// `filter_fields`: the only paths filters may take, if given.
    pub(crate) filter_fields: Option<Vec<Path<M>>>,
    /// `filter_exclude`: paths refused, with everything below them.
    pub(crate) filter_exclude: Vec<Path<M>>,
    /// `paginate_by`: rows a page, and the most `limit` may ask for.
    pub(crate) paginate_by: i64,
    /// `limits`: bounds on one request.
    pub(crate) limits: Limits,
    /// `count`: how a list counts its rows when the request does not say.
    pub(crate) count: Option<Count>,
    /// `search_fields`: the text fields and paths `q` searches.
    pub(crate) search_fields: Vec<Path<M>>,
}

impl<M> Default for ListSpec<M> {
    fn default() -> Self {
        ListSpec {
            fields: None,
            exclude: Vec::new(),
            filter_fields: None,
            filter_exclude: Vec::new(),
            paginate_by: 20,
            limits: Limits::default(),
            count: None,
            search_fields: Vec::new(),
        }
    }
}

/// Filter and search paths as field indexes, compiled once at set-up.
#[derive(Debug, Clone, Default)]
pub(crate) struct FilterPaths {
    /// `filter_fields`, if given.
    pub(crate) only: Option<Vec<Vec<usize>>>,
    /// `filter_exclude`.
    pub(crate) exclude: Vec<Vec<usize>>,
    /// `search_fields`.
    pub(crate) search: Vec<Vec<usize>>,
}

impl<M: RestModel> ListSpec<M> {
    /// The filter and search paths as indexes. A join through a field that is not a foreign
    /// key to the next model, or a search field that is not text, is a programming error: it
    /// panics at set-up, naming the option and the path.
    pub(crate) fn filter_paths(&self) -> FilterPaths {
        let resolve = |paths: &[Path<M>], option: &str, text: bool| -> Vec<Vec<usize>> {
            paths
                .iter()
                .map(|path| match path.resolve() {
                    Ok((_, field)) if text && field.kind != FieldKind::Text => panic!(
                        "plover: {option}: `{}` is not a text field: search only text",
                        path.as_str()
                    ),
                    Ok((indexes, _)) => indexes,
                    Err(e) => panic!("plover: {option}: `{}`: {e}", path.as_str()),
                })
                .collect()
        };
        FilterPaths {
            only: self
                .filter_fields
                .as_deref()
                .map(|paths| resolve(paths, "filter_fields", false)),
            exclude: resolve(&self.filter_exclude, "filter_exclude", false),
            search: resolve(&self.search_fields, "search_fields", true),
        }
    }
}

impl ListPlan {
    /// The plan of a list over `meta` that shows the fields `exposed`, with these filter
    /// paths; `nested` gives the plans of joins through some foreign keys (by field index).
    pub(crate) fn new(
        meta: &'static ModelMeta,
        exposed: Vec<bool>,
        paths: FilterPaths,
        recursive: bool,
        nested: HashMap<usize, ListPlan>,
        limits: Limits,
        paginate_by: i64,
    ) -> ListPlan {
        ListPlan {
            meta,
            fields: paths.only,
            exclude: paths.exclude,
            recursive,
            exposed,
            nested,
            limits,
            paginate_by,
            count: None,
            search: paths.search,
        }
    }

    /// Checks at set-up that clients may filter every search field of the list `name` (its
    /// joins under the rules `joins` gives): a search field is a filter too, and must not find
    /// what filters may not. Panics naming the field otherwise.
    pub(crate) fn check_search(&self, name: &str, joins: &dyn JoinRules) {
        for path in &self.search {
            if !super::allowed(self, path, joins) {
                panic!(
                    "plover: search_fields of `{name}`: `{}` is not a field clients may filter \
                     here (hidden, private, excluded, or refused by the joined model's \
                     resource): search only what they may filter",
                    super::path::names(self.meta, path)
                );
            }
        }
    }
}

/// The setters of the shared list options, as methods of `Resource` and `ModelAdmin` (each has
/// a `list: ListSpec<M>` field): one definition, one documentation.
macro_rules! list_setters {
    () => {
        /// Shows only these fields: a resource serializes them (the primary key included only
        /// if listed); the admin's forms, columns, filters and export offer them.
        pub fn fields(mut self, fields: impl IntoIterator<Item = $crate::model::Field<M>>) -> Self {
            self.list.fields = Some($crate::model::indexes(fields));
            self
        }

        /// Never shows these fields: not serialized, offered in forms or exports, filtered or
        /// ordered on (also through joins from other models' admins).
        pub fn exclude(
            mut self,
            fields: impl IntoIterator<Item = $crate::model::Field<M>>,
        ) -> Self {
            self.list.exclude = $crate::model::indexes(fields);
            self
        }

        /// Allows filters only on these fields and paths ([`Field::join`](
        /// crate::model::Field::join); a foreign key allows its joins). A field the list does not
        /// show is filterable only when listed here.
        pub fn filter_fields<P: Into<$crate::model::Path<M>>>(
            mut self,
            filters: impl IntoIterator<Item = P>,
        ) -> Self {
            self.list.filter_fields = Some($crate::model::paths(filters));
            self
        }

        /// Refuses filters on these fields and paths and everything below them.
        pub fn filter_exclude<P: Into<$crate::model::Path<M>>>(
            mut self,
            filters: impl IntoIterator<Item = P>,
        ) -> Self {
            self.list.filter_exclude = $crate::model::paths(filters);
            self
        }

        /// Searches these text fields and paths with `q` ([`Field::join`](
        /// crate::model::Field::join) reaches into related models): `?q=two words` keeps the
        /// rows where every word is found, case-insensitively and as typed (`%` and `_` are
        /// plain characters), in at least one of them. Each must be one clients may filter
        /// (through a join, under the rules of the target's resource).
        pub fn search_fields<P: Into<$crate::model::Path<M>>>(
            mut self,
            fields: impl IntoIterator<Item = P>,
        ) -> Self {
            self.list.search_fields = $crate::model::paths(fields);
            self
        }

        /// Rows a page (default 20), which is also the most a client's `limit` may ask for.
        pub fn paginate_by(mut self, n: i64) -> Self {
            self.list.paginate_by = n.max(1);
            self
        }

        /// Bounds on one list request's filters (and in the admin, on the lookup text and the
        /// rows of a bulk action); default [`Limits::default`](crate::query::Limits::default).
        /// A request over them is a 400 naming the parameter.
        pub fn limits(mut self, limits: $crate::query::Limits) -> Self {
            self.list.limits = limits;
            self
        }
    };
}

pub(crate) use list_setters;
