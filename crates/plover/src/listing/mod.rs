//! A list request's query string (filters, ordering, pages, cursors) parsed into a selection,
//! under the filter rules of a resource or model admin.

mod aggregate;
mod cursor;
mod estimates;
mod filters;
mod groups;
pub(crate) mod links;
pub(crate) mod page;
mod parse;
mod path;
mod plan;
mod spec;

pub(crate) use aggregate::{
    AggregateQuery, GROUP, MAX_GROUPS, MAX_GROUP_FIELDS, MAX_VALUES as MAX_AGGREGATE_VALUES,
};
#[cfg(feature = "admin")]
pub(crate) use filters::{check_search_text, check_text_param};
pub(crate) use groups::{NOT, OR};
pub(crate) use links::Links;
#[cfg(feature = "admin")]
pub(crate) use page::{offset, Counting, Page};
#[cfg(feature = "admin")]
pub(crate) use parse::positive;
pub(crate) use plan::allowed;
pub(crate) use plan::{JoinRules, ListPlan};
pub(crate) use spec::{list_setters, FilterPaths, ListSpec};

/// The parameter that orders a list.
pub(crate) const ORDERING: &str = "ordering";
/// The parameter that sets the page size.
pub(crate) const LIMIT: &str = "limit";
/// The parameter that names a page by number.
pub(crate) const PAGE: &str = "page";
/// The parameter that names a page by keyset cursor (REST).
pub(crate) const CURSOR: &str = "cursor";
/// The parameter that asks for the number of matching rows (`exact` or `estimated`).
pub(crate) const COUNT: &str = "count";
/// The parameter that searches a list's search fields.
pub(crate) const SEARCH: &str = "q";
/// The parameter that names the keys of the objects shown (sparse fields).
pub(crate) const FIELDS: &str = "fields";
/// The parameter of an upsert that names the unique field finding its rows (REST).
pub(crate) const ON: &str = "on";
/// Parameters reserved for list features (sparse fields, search, filter groups): never
/// filters, whatever the model's fields are called.
pub(crate) const RESERVED: [&str; 4] = [FIELDS, SEARCH, OR, NOT];
/// The API-key credentials a query string may carry (REST).
pub(crate) const CREDENTIALS: [&str; 2] = ["key", "secret"];

/// Whether a list parameter is a filter: not the ordering, the window, a cursor, the count, a
/// reserved name or a credential (docs/contract.md#lists).
pub(crate) fn is_filter(key: &str) -> bool {
    ![ORDERING, LIMIT, PAGE, CURSOR, COUNT].contains(&key)
        && !RESERVED.contains(&key)
        && !CREDENTIALS.contains(&key)
}

/// The first value of the parameter `name` among a query string's decoded pairs.
pub(crate) fn first<'p>(pairs: &'p [(String, String)], name: &str) -> Option<&'p str> {
    (pairs.iter())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The field names of a `__`-separated path (`user__username`), as `path.split("__")` gives
/// them, without setting up a substring searcher for each request's keys.
pub(crate) fn path_parts(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(path);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.as_bytes().windows(2).position(|pair| pair == b"__") {
            Some(at) => {
                rest = text.get(at + 2..);
                text.get(..at)
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// Whether a list parameter carries over to the links of other pages: not the page position
/// (`page`, `cursor`) and not the credentials.
pub(crate) fn kept_in_links(key: &str) -> bool {
    ![PAGE, CURSOR].contains(&key) && !CREDENTIALS.contains(&key)
}

#[cfg(test)]
mod tests {
    #[test]
    fn path_parts_split_as_str_split_does() {
        for path in [
            "",
            "a",
            "_",
            "__",
            "___",
            "____",
            "a__b",
            "a___b",
            "a__b__",
            "__a",
            "é__ü_x__",
            "user__username__ilike",
        ] {
            let ours: Vec<&str> = super::path_parts(path).collect();
            let std: Vec<&str> = path.split("__").collect();
            assert_eq!(ours, std, "{path:?}");
        }
    }
}
