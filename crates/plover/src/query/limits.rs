//! Bounds on the work one request may ask for (docs/contract.md#bounded-cost).

/// The longest `Idempotency-Key` a POST may send, in characters (a UUID has 36); a longer or
/// empty one is 400 naming the header (docs/contract.md#idempotency-keys).
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

/// How much one list request (REST, admin index and export) or admin bulk action may ask for.
/// A request over a bound is a 400 naming the parameter, never a slow query or an engine
/// error. Set per resource with `Resource::limits` and per model admin with
/// `ModelAdmin::limits`.
///
/// ```
/// let mut limits = plover::query::Limits::default();
/// limits.max_in_values = 200;
/// assert_eq!(limits.max_conditions, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Filter conditions (distinct filter keys) in one request (default 64).
    pub max_conditions: usize,
    /// Values in one `in` list, all its repetitions together (default 1,000).
    pub max_in_values: usize,
    /// Values of all filters of one request together (default 4,000): keeps every query well
    /// inside the engines' limits on bound parameters.
    pub max_values: usize,
    /// Characters in one filter value (default 10,000): keeps `like` patterns inside SQLite's
    /// pattern limit and their matching cheap.
    pub max_value_chars: usize,
    /// Rows one admin bulk action may select, rows of one admin import, child rows of one
    /// admin form with inlines, and objects of one REST bulk create (default 1,000).
    pub max_bulk_rows: usize,
    /// Bytes of the CSV file of one admin import (default 2 MiB).
    pub max_import_bytes: usize,
    /// Pattern values (each value of a `like` or `ilike` filter, repeated or not) in one
    /// request (default 16): a pattern is matched against every candidate row's text, so
    /// hundreds of them over large texts would keep a core busy for minutes.
    pub max_patterns: usize,
    /// Foreign keys one filter or ordering term may join through (default 8).
    pub max_joins: usize,
    /// How deep `or=(...)` and `not=(...)` groups may nest, the outermost counting as one
    /// (default 3).
    pub max_group_depth: usize,
    /// Rows that `count=auto` counts exactly (default 10,000): on PostgreSQL, when the
    /// planner estimates more rows than this, the answer is its estimate instead, which costs
    /// no scan of the rows (docs/contract.md#counts). SQLite always counts exactly.
    pub count_exact_up_to: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_conditions: 64,
            max_in_values: 1_000,
            max_values: 4_000,
            max_value_chars: 10_000,
            max_bulk_rows: 1_000,
            max_import_bytes: 2 * 1024 * 1024,
            max_patterns: 16,
            max_joins: 8,
            max_group_depth: 3,
            count_exact_up_to: 10_000,
        }
    }
}

impl Limits {
    /// Whether one filter value (or lookup text) is within `max_value_chars`; the error is a
    /// message for the client.
    pub(crate) fn check_value(&self, text: &str) -> Result<(), String> {
        if text.chars().count() > self.max_value_chars {
            Err(format!(
                "a value has at most {} characters",
                self.max_value_chars
            ))
        } else {
            Ok(())
        }
    }
}
