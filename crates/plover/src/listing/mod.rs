//! A list request's query string (filters, ordering, pages, cursors) parsed into a selection,
//! under the filter rules of a resource or model admin.

pub(crate) mod cursor;
mod parse;

pub use parse::{parse_list_query, FilterRules};
