//! Property tests (proptest) of the list endpoint against a naive in-memory evaluator of
//! the rules of docs/contract.md#lists, #filters, #filter-logic, #search, #ordering and
//! #pagination.
//!
//! Each case seeds a small random table (0-12 rows: NULLs, Unicode case pairs, `%` and `_`
//! inside text, integer bounds, dates and date-times with fractional seconds), checks that the
//! API reads the rows back as seeded, sends a random list request (filters over every
//! operator, repeated keys, `in` with commas and repetitions, joins two levels deep; `or=(...)`
//! and `not=(...)` groups of the same filter terms, nested up to 3 deep, one or two of them
//! ANDed with the filters; an ordering list, through joins where the resource has them;
//! `limit`, `page`, and repeated reserved parameters of which the first counts) and compares
//! the ids the API lists, in order, and the emptiness of `meta.next` / `meta.previous`, with
//! what the evaluator computes from the rows. The links are followed too: they must lead to
//! the neighbouring pages of the same list. Each filter key, group and search of a request is
//! also checked alone, so that a conjunction listing nothing hides no fault.
//!
//! Inside a group, values are percent-encoded once more (sometimes only the characters that
//! must be: `%`, `,`, `|`, parentheses; sometimes all but the unreserved ones) and `in` values
//! are separated by `|`, so a comma belongs to the value. The evaluator's group rules: a term
//! is false where its SQL comparison is unknown (on a NULL: every operator but `is`, `ne`
//! included, exactly as for a plain filter); `or` holds when a term does, `not` when not every
//! term does (so under `not` a NULL comparison counts as false and the row is kept). `like`
//! and `ilike` terms beyond the 16 patterns of a request become `eq`.
//!
//! The properties: `/api/sample/` (every scalar type), `/api/cmodel/` (filters and ordering
//! through `b` and `b__a`: `b__b_field`, `b__id`, `b__a`/`b__a_id`, `b__a__id`,
//! `b__a__a_field`, ordered as own columns are: NULLs first ascending and last descending,
//! text by code point, the primary key last), `/api/message/` (filters, groups and ordering
//! through `user`, whose resource hides inactive users: a hidden author's `user__...` columns
//! match no filter term, `is=null` included, and order as NULL), `/api/emodel/` (`paginate_by = 5`: `limit`
//! clamped), `/api/searched/` (`q` over the search fields `name`, `body` and `remark`: a row
//! matches when every whitespace-separated word, folded as `ilike` folds, is a literal
//! substring of one of them; with filters, groups, ordering and pages), `ilike` lists
//! whatever `like` lists, and an `ordering` naming a column twice is a 400
//! (docs/contract.md#bounded-cost), through joins too.
//!
//! The evaluator's `ilike` lower-cases both sides one character at a time, each to one
//! character (`İ` is `i`, `Σ` is `σ` wherever it stands), as PostgreSQL's `ILIKE` does and
//! as Plover's SQLite function does: `str::to_lowercase` would make `_` miss `İ` (two
//! characters) and `%Σ` miss a final `Σ` (`ς`), and the engines disagree.
//!
//! The number of cases per property is `PROPTEST_CASES` (default [`DEFAULT_CASES`]); a failure
//! prints the `PROPTEST_RNG_SEED` that replays it. The properties are `async` actix tests:
//! proptest's [`TestRunner`] is driven by hand ([`check_property`]), one application per
//! property, the tables emptied and seeded again for each case. A failing case is shrunk, and
//! the panic shows the minimal one: its seed SQL, the request, and what was expected.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::future::Future;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use plover_tests::*;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::strategy::ValueTree;
use proptest::test_runner::{contextualize_config, Config, RngSeed, TestCaseError, TestRunner};
use serde_json::{json, Value};

/// Cases per property when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 48;

/// At most this many shrinking steps for a failing case.
const MAX_SHRINK_STEPS: u32 = 1000;

/// The default `paginate_by` (of `/api/sample/` and `/api/cmodel/`).
const PAGINATE_BY: usize = 20;

// --- the runner ----------------------------------------------------------------------------

/// Runs `test` on values of `strategy` as proptest would, awaiting each case: `cases` values
/// (from `PROPTEST_CASES`, default [`DEFAULT_CASES`]); a failing one is shrunk, and the test
/// panics with the message of the minimal failing case.
async fn check_property<S, F, Fut>(name: &str, strategy: S, mut test: F)
where
    S: Strategy,
    F: FnMut(S::Value) -> Fut,
    Fut: Future<Output = Result<(), TestCaseError>>,
{
    let mut config = contextualize_config(Config {
        cases: DEFAULT_CASES,
        failure_persistence: None,
        ..Config::default()
    });
    // A seed of our own when none is given, so that a failure can tell how to replay it.
    let seed = match config.rng_seed {
        RngSeed::Fixed(seed) => seed,
        RngSeed::Random => {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        }
    };
    config.rng_seed = RngSeed::Fixed(seed);
    let cases = config.cases;
    let max_shrink = config.max_shrink_iters.min(MAX_SHRINK_STEPS);
    let mut runner = TestRunner::new(config);
    for case in 1..=cases {
        let mut tree = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{name}: no value generated: {e}"));
        let Err(mut failure) = test(tree.current()).await else {
            continue;
        };
        let mut steps = 0;
        if tree.simplify() {
            while steps < max_shrink {
                steps += 1;
                match test(tree.current()).await {
                    Ok(()) => {
                        if !tree.complicate() {
                            break;
                        }
                    }
                    Err(e) => {
                        failure = e;
                        if !tree.simplify() {
                            break;
                        }
                    }
                }
            }
        }
        panic!(
            "property `{name}` failed at case {case} of {cases} (replay: PROPTEST_RNG_SEED={seed}); \
             minimal failing case (after {steps} shrinking steps):\n{failure}"
        );
    }
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

// --- values and columns --------------------------------------------------------------------

/// The type of a column, as the evaluator sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int32,
    Int64,
    Float,
    Bool,
    Text,
    Date,
    Stamp,
}

/// A value of a row, or a parsed filter value.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
    Date(NaiveDate),
    Stamp(NaiveDateTime),
}

impl Val {
    /// SQL's comparison of two values of one column: numbers by value, booleans false first,
    /// text by code point (the byte order of UTF-8), dates and date-times in time.
    fn compare(&self, other: &Val) -> Ordering {
        match (self, other) {
            (Val::Int(a), Val::Int(b)) => a.cmp(b),
            (Val::Float(a), Val::Float(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (Val::Bool(a), Val::Bool(b)) => a.cmp(b),
            (Val::Text(a), Val::Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Val::Date(a), Val::Date(b)) => a.cmp(b),
            (Val::Stamp(a), Val::Stamp(b)) => a.cmp(b),
            (a, b) => panic!("values of different kinds compared: {a:?} and {b:?}"),
        }
    }

    /// The value as an SQL literal that both engines accept.
    fn sql(&self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Float(v) => format!("{v:?}"),
            Val::Bool(v) => (if *v { "TRUE" } else { "FALSE" }).to_owned(),
            Val::Text(v) => format!("'{}'", v.replace('\'', "''")),
            Val::Date(v) => format!("'{}'", v.format("%Y-%m-%d")),
            // The form diesel writes on SQLite (`%.f`: 0, 3, 6 or 9 digits), so that SQLite's
            // text comparisons order the seeded values as the ones the API writes.
            Val::Stamp(v) => format!("'{}'", v.format("%Y-%m-%d %H:%M:%S%.f")),
        }
    }

    /// The value as the API serializes it (docs/contract.md#objects).
    fn json(&self) -> Value {
        match self {
            Val::Int(v) => json!(v),
            Val::Float(v) => json!(v),
            Val::Bool(v) => json!(v),
            Val::Text(v) => json!(v),
            Val::Date(v) => json!(v.format("%Y-%m-%d").to_string()),
            Val::Stamp(v) => json!(v.format("%Y-%m-%d %H:%M:%S").to_string()),
        }
    }
}

fn opt_sql(v: &Option<Val>) -> String {
    v.as_ref().map_or_else(|| "NULL".to_owned(), Val::sql)
}

fn opt_json(v: &Option<Val>) -> Value {
    v.as_ref().map_or(Value::Null, Val::json)
}

/// A filterable key of a resource, with the column of the evaluator's row it reads.
#[derive(Debug)]
struct Column {
    key: &'static str,
    kind: Kind,
}

/// A column that `ordering` accepts, under each of its names.
#[derive(Debug)]
struct Orderable {
    names: &'static [&'static str],
    column: usize,
}

/// A list resource: its path, its `meta.model`, its filter keys (column 0 is the primary key)
/// and its orderable columns.
#[derive(Debug)]
struct Model {
    path: &'static str,
    name: &'static str,
    columns: &'static [Column],
    orderables: &'static [Orderable],
    /// The columns filters pick from, the interesting ones (text, NULLs) more often.
    filter_picks: &'static [usize],
    /// The columns `q` searches (its `search_fields`): none for most.
    search_fields: &'static [usize],
    /// The columns read through a join whose target's resource may hide the related row:
    /// NULL there means no related row, which no filter term matches (`is=null` neither, as
    /// the join finds no row to compare), though it orders as NULL. None for most.
    through_hidden: &'static [usize],
    paginate_by: usize,
}

const fn col(key: &'static str, kind: Kind) -> Column {
    Column { key, kind }
}

/// `/api/sample/`: every scalar type.
const SAMPLE: Model = Model {
    path: "/api/sample/",
    name: "sample",
    columns: &[
        col("id", Kind::Int32),
        col("name", Kind::Text),
        col("qty", Kind::Int32),
        col("big", Kind::Int64),
        col("ratio", Kind::Float),
        col("flag", Kind::Bool),
        col("body", Kind::Text),
        col("remark", Kind::Text),
        col("day", Kind::Date),
        col("stamp", Kind::Stamp),
    ],
    orderables: &[
        Orderable {
            names: &["id"],
            column: 0,
        },
        Orderable {
            names: &["name"],
            column: 1,
        },
        Orderable {
            names: &["qty"],
            column: 2,
        },
        Orderable {
            names: &["big"],
            column: 3,
        },
        Orderable {
            names: &["ratio"],
            column: 4,
        },
        Orderable {
            names: &["flag"],
            column: 5,
        },
        Orderable {
            names: &["body"],
            column: 6,
        },
        Orderable {
            names: &["remark"],
            column: 7,
        },
        Orderable {
            names: &["day"],
            column: 8,
        },
        Orderable {
            names: &["stamp"],
            column: 9,
        },
        // The nullable columns twice: picked more often.
        Orderable {
            names: &["remark"],
            column: 7,
        },
        Orderable {
            names: &["day"],
            column: 8,
        },
    ],
    filter_picks: &[0, 1, 1, 2, 3, 4, 5, 6, 7, 7, 7, 8, 8, 9, 9],
    search_fields: &[],
    through_hidden: &[],
    paginate_by: PAGINATE_BY,
};

/// The text columns of [`SAMPLE`].
const SAMPLE_TEXT_COLUMNS: [usize; 3] = [1, 6, 7];

/// `/api/searched/`: the samples, with `search_fields` `name`, `body` and `remark` (tests/lib.rs).
const SEARCHED: Model = Model {
    path: "/api/searched/",
    name: "searched",
    search_fields: &SAMPLE_TEXT_COLUMNS,
    ..SAMPLE
};

/// The words `q` may hold on [`SEARCHED`]: `max_patterns / search fields`.
const SEARCH_WORDS: usize = MAX_PATTERNS / SAMPLE_TEXT_COLUMNS.len();

/// `/api/cmodel/`: its own fields, and the fields of its B and of that B's A, through joins.
/// The evaluator's row of a C holds the joined values (`b`, `b_id` and `b__id` are one value).
const CHAIN: Model = Model {
    path: "/api/cmodel/",
    name: "cmodel",
    columns: &[
        col("id", Kind::Int32),
        col("c_field", Kind::Text),
        col("b", Kind::Int32),
        col("b_id", Kind::Int32),
        col("b__id", Kind::Int32),
        col("b__b_field", Kind::Text),
        col("b__a", Kind::Int32),
        col("b__a_id", Kind::Int32),
        col("b__a__id", Kind::Int32),
        col("b__a__a_field", Kind::Text),
    ],
    orderables: &[
        Orderable {
            names: &["id"],
            column: 0,
        },
        Orderable {
            names: &["c_field"],
            column: 1,
        },
        Orderable {
            names: &["b", "b_id"],
            column: 2,
        },
        // Through the joins: B's fields, and A's through B (`b__a` and `b__a_id` are one
        // column of B; `b__id` and `b__a__id` are the related rows' keys, other columns).
        Orderable {
            names: &["b__b_field"],
            column: 5,
        },
        Orderable {
            names: &["b__id"],
            column: 4,
        },
        Orderable {
            names: &["b__a", "b__a_id"],
            column: 6,
        },
        Orderable {
            names: &["b__a__id"],
            column: 8,
        },
        Orderable {
            names: &["b__a__a_field"],
            column: 9,
        },
        // The joined text fields twice: picked more often.
        Orderable {
            names: &["b__b_field"],
            column: 5,
        },
        Orderable {
            names: &["b__a__a_field"],
            column: 9,
        },
    ],
    filter_picks: &[0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9],
    search_fields: &[],
    through_hidden: &[],
    paginate_by: PAGINATE_BY,
};

/// `/api/message/`: its own fields, and its author's through the `user` join, where the
/// user resource's `get_query` hides inactive users: a message of a hidden author reads NULL
/// in every `user__...` column (its `user` column, the foreign key itself, stays), so that
/// filters, groups and orderings through the join meet missing related rows.
const MESSAGES: Model = Model {
    path: "/api/message/",
    name: "message",
    columns: &[
        col("id", Kind::Int32),
        col("content", Kind::Text),
        col("user", Kind::Int32),
        col("user_id", Kind::Int32),
        col("pub_date", Kind::Stamp),
        col("user__id", Kind::Int32),
        col("user__username", Kind::Text),
        col("user__join_date", Kind::Stamp),
        col("user__active", Kind::Bool),
    ],
    orderables: &[
        Orderable {
            names: &["id"],
            column: 0,
        },
        Orderable {
            names: &["content"],
            column: 1,
        },
        Orderable {
            names: &["user", "user_id"],
            column: 2,
        },
        Orderable {
            names: &["pub_date"],
            column: 4,
        },
        Orderable {
            names: &["user__id"],
            column: 5,
        },
        Orderable {
            names: &["user__username"],
            column: 6,
        },
        Orderable {
            names: &["user__join_date"],
            column: 7,
        },
        Orderable {
            names: &["user__active"],
            column: 8,
        },
        // The joined columns that hidden authors make NULL, twice: picked more often.
        Orderable {
            names: &["user__username"],
            column: 6,
        },
        Orderable {
            names: &["user__id"],
            column: 5,
        },
    ],
    filter_picks: &[0, 1, 2, 3, 4, 5, 5, 6, 6, 6, 7, 8, 8],
    search_fields: &[],
    through_hidden: &[5, 6, 7, 8],
    paginate_by: PAGINATE_BY,
};

/// `/api/emodel/`: `paginate_by = 5`, so that a `limit` above it is clamped.
const EMODEL: Model = Model {
    path: "/api/emodel/",
    name: "emodel",
    columns: &[col("id", Kind::Int32), col("e_field", Kind::Text)],
    orderables: &[
        Orderable {
            names: &["id"],
            column: 0,
        },
        Orderable {
            names: &["e_field"],
            column: 1,
        },
    ],
    filter_picks: &[0, 1, 1],
    search_fields: &[],
    through_hidden: &[],
    paginate_by: 5,
};

/// A row as the evaluator sees it: one value per column of its [`Model`] (`None`: NULL).
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    vals: Vec<Option<Val>>,
}

/// Rows to seed: the SQL that replaces the tables' rows, the evaluator's rows, and the
/// objects the unfiltered list must serialize, by id.
#[derive(Debug)]
struct Table {
    seed: String,
    rows: Vec<Row>,
    objects: Vec<Value>,
}

// --- generators ----------------------------------------------------------------------------

/// Characters of generated text: Unicode case pairs (`é`/`É`, `ß`/`ẞ`/`SS`/`ss`,
/// `Σ`/`σ`/`ς`, `İ`/`i`), ASCII, the wildcards, a comma (which splits `in` values), a blank
/// and a backslash (no escape character).
const ALPHABET: &[char] = &[
    'a', 'A', 's', 'S', 'ß', 'ẞ', 'é', 'É', 'Σ', 'σ', 'ς', 'İ', 'i', '%', '_', ',', ' ', '\\', 'z',
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(select(ALPHABET), 0..=4).prop_map(String::from_iter)
}

fn int32() -> impl Strategy<Value = i64> {
    prop_oneof![
        select(&[0, 1, -1, i32::MIN, i32::MIN + 1, i32::MAX - 1, i32::MAX][..]).prop_map(i64::from),
        -3i64..=40,
    ]
}

fn int64() -> impl Strategy<Value = i64> {
    prop_oneof![
        select(
            &[
                0,
                1,
                -1,
                i64::MIN,
                i64::MIN + 1,
                -2_147_483_649,
                2_147_483_648,
                i64::MAX - 1,
                i64::MAX,
            ][..]
        ),
        -3i64..=3,
    ]
}

fn float() -> impl Strategy<Value = f64> {
    select(
        &[
            0.0,
            -0.0,
            0.1,
            0.5,
            -1.5,
            1.0,
            2.25,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
        ][..],
    )
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default()
}

fn day() -> impl Strategy<Value = NaiveDate> {
    select(vec![
        ymd(2020, 1, 1),
        ymd(2020, 1, 2),
        ymd(1, 1, 1),
        ymd(1969, 12, 31),
        ymd(1970, 1, 1),
        ymd(2000, 2, 29),
        ymd(9999, 12, 31),
    ])
}

/// Date-times at and around midnight and noon, with fractional seconds (microseconds: what
/// PostgreSQL stores).
fn stamp() -> impl Strategy<Value = NaiveDateTime> {
    let times: &[(u32, u32, u32, u32)] = &[
        (0, 0, 0, 0),
        (0, 0, 0, 1),
        (0, 0, 0, 500_000),
        (0, 0, 1, 0),
        (12, 30, 0, 0),
        (12, 30, 0, 250_000),
        (23, 59, 59, 0),
        (23, 59, 59, 999_999),
    ];
    (day(), select(times)).prop_map(|(d, (h, m, s, us))| {
        d.and_hms_micro_opt(h, m, s, us)
            .unwrap_or_else(|| d.and_hms_opt(0, 0, 0).unwrap_or_default())
    })
}

/// One value of every kind, for a filter value that does not come from a row.
#[derive(Debug, Clone)]
struct Fresh {
    int32: i64,
    int64: i64,
    float: f64,
    flag: bool,
    text: String,
    day: NaiveDate,
    stamp: NaiveDateTime,
}

prop_compose! {
    fn fresh()(
        int32 in int32(),
        int64 in int64(),
        float in float(),
        flag in any::<bool>(),
        text in text(),
        day in day(),
        stamp in stamp(),
    ) -> Fresh {
        Fresh { int32, int64, float, flag, text, day, stamp }
    }
}

/// A filter value: a row's value (so that filters hit) or a fresh one, possibly nudged to a
/// neighbour, how to spell it, and, for `like`/`ilike`, how to turn it into a pattern.
#[derive(Debug, Clone)]
struct ValSpec {
    row: Option<Index>,
    fresh: Fresh,
    nudge: Nudge,
    spelling: Index,
    upper: bool,
    blank: Option<Index>,
    cut: Option<Index>,
    trail: bool,
}

prop_compose! {
    fn val_spec()(
        row in prop::option::weighted(0.75, any::<Index>()),
        fresh in fresh(),
        nudge in prop_oneof![
            3 => Just(Nudge::None),
            1 => Just(Nudge::Up),
            1 => Just(Nudge::Down),
            1 => Just(Nudge::Truncate),
        ],
        spelling in any::<Index>(),
        upper in any::<bool>(),
        blank in prop::option::weighted(0.3, any::<Index>()),
        cut in prop::option::weighted(0.3, any::<Index>()),
        trail in prop::option::weighted(0.3, Just(())).prop_map(|t| t.is_some()),
    ) -> ValSpec {
        ValSpec { row, fresh, nudge, spelling, upper, blank, cut, trail }
    }
}

/// A change of a filter value to a close one, to probe the bounds of comparisons.
#[derive(Debug, Clone, Copy)]
enum Nudge {
    None,
    /// The next value up: +1, the next day, one microsecond later.
    Up,
    /// The next value down.
    Down,
    /// A date-time without its fractional seconds.
    Truncate,
}

impl Nudge {
    /// `value` nudged, if the result stays a value of `kind` that both engines store.
    fn apply(self, kind: Kind, value: Val) -> Val {
        let step = match self {
            Nudge::None => return value,
            Nudge::Up => 1,
            Nudge::Down => -1,
            Nudge::Truncate => 0,
        };
        let in_years = |y: i32| (1..=9999).contains(&y);
        let nudged = match (&value, kind) {
            (Val::Int(v), Kind::Int32) => v
                .checked_add(step)
                .filter(|n| i32::try_from(*n).is_ok())
                .map(Val::Int),
            (Val::Int(v), _) => v.checked_add(step).map(Val::Int),
            (Val::Date(d), _) => d
                .checked_add_signed(chrono::TimeDelta::days(step))
                .filter(|d| in_years(d.year()))
                .map(Val::Date),
            (Val::Stamp(t), _) if step == 0 => t.with_nanosecond(0).map(Val::Stamp),
            (Val::Stamp(t), _) => t
                .checked_add_signed(chrono::TimeDelta::microseconds(step))
                .filter(|t| in_years(t.year()))
                .map(Val::Stamp),
            _ => None,
        };
        nudged.unwrap_or(value)
    }
}

/// One filter key: a column, an operator (among those the column's kind allows) and its
/// repetitions, each a list of values (joined with commas for `in`; others use the first).
#[derive(Debug, Clone)]
struct FilterSpec {
    column: Index,
    op: Index,
    reps: Vec<Vec<ValSpec>>,
}

fn filter_spec() -> impl Strategy<Value = FilterSpec> {
    let rep = || prop::collection::vec(val_spec(), 1..=3);
    let reps = prop_oneof![
        3 => prop::collection::vec(rep(), 1..=1),
        2 => prop::collection::vec(rep(), 2..=3),
    ];
    (any::<Index>(), any::<Index>(), reps).prop_map(|(column, op, reps)| FilterSpec {
        column,
        op,
        reps,
    })
}

/// One `ordering` term: an orderable column (and which of its names), descending or not.
#[derive(Debug, Clone)]
struct Term {
    column: Index,
    name: Index,
    desc: bool,
}

fn term() -> impl Strategy<Value = Term> {
    (any::<Index>(), any::<Index>(), any::<bool>()).prop_map(|(column, name, desc)| Term {
        column,
        name,
        desc,
    })
}

/// `None`: no `ordering`; `Some(vec![])`: `ordering=` (the default order).
fn ordering() -> impl Strategy<Value = Option<Vec<Term>>> {
    prop::option::weighted(0.8, prop::collection::vec(term(), 0..=3))
}

/// A term of an `or`/`not` group: a filter (a column, an operator among those the column's
/// kind allows, its values: several for `in`, else the first) or a nested group.
#[derive(Debug, Clone)]
enum GroupTermSpec {
    Filter {
        column: Index,
        op: Index,
        values: Vec<ValSpec>,
        /// Whether the value is percent-encoded only where it must be (`%`, `,`, `|`, the
        /// parentheses), or every character but the unreserved ones.
        light: bool,
    },
    Group(GroupSpec),
}

/// An `or=(...)` (`not` false) or `not=(...)` group.
#[derive(Debug, Clone)]
struct GroupSpec {
    not: bool,
    terms: Vec<GroupTermSpec>,
}

/// The most groups a group may nest in itself, the outermost counting (docs/contract.md#filter-logic).
const GROUP_DEPTH: usize = 3;

/// A group at `depth` (1: a parameter's): 1-3 terms at the top, 1-2 deeper, nested groups
/// down to [`GROUP_DEPTH`]. At most 22 conditions a group, so that two groups and three filter
/// keys stay within the 64 conditions of docs/contract.md#bounded-cost.
fn group_spec(depth: usize) -> BoxedStrategy<GroupSpec> {
    let leaf = (
        any::<Index>(),
        any::<Index>(),
        prop::collection::vec(val_spec(), 1..=3),
        any::<bool>(),
    )
        .prop_map(|(column, op, values, light)| GroupTermSpec::Filter {
            column,
            op,
            values,
            light,
        });
    let term = if depth < GROUP_DEPTH {
        prop_oneof![
            3 => leaf,
            1 => group_spec(depth + 1).prop_map(GroupTermSpec::Group),
        ]
        .boxed()
    } else {
        leaf.boxed()
    };
    let most = if depth == 1 { 3 } else { 2 };
    (any::<bool>(), prop::collection::vec(term, 1..=most))
        .prop_map(|(not, terms)| GroupSpec { not, terms })
        .boxed()
}

/// The request of a case, apart from the rows.
#[derive(Debug, Clone)]
struct ListSpec {
    filters: Vec<FilterSpec>,
    /// `or` and `not` parameters, ANDed with the filters and each other.
    groups: Vec<GroupSpec>,
    ordering: Option<Vec<Term>>,
    limit: Option<usize>,
    page: Option<usize>,
    /// A second `ordering`, `limit` and `page`: the first one counts.
    decoy_ordering: Option<Vec<Term>>,
    decoy_limit: Option<usize>,
    decoy_page: Option<usize>,
    /// Whether the reserved parameters come before the filters.
    reserved_first: bool,
}

prop_compose! {
    fn list_spec()(
        filters in prop::collection::vec(filter_spec(), 0..=3),
        groups in prop_oneof![
            1 => Just(Vec::new()),
            1 => prop::collection::vec(group_spec(1), 1..=2),
        ],
        ordering in ordering(),
        limit in prop::option::weighted(0.7, 1usize..=25),
        page in prop::option::weighted(0.5, 1usize..=4),
        decoy_ordering in prop::option::weighted(0.1, prop::collection::vec(term(), 1..=2)),
        decoy_limit in prop::option::weighted(0.1, 1usize..=25),
        decoy_page in prop::option::weighted(0.1, 1usize..=5),
        reserved_first in any::<bool>(),
    ) -> ListSpec {
        ListSpec {
            filters, groups, ordering, limit, page, decoy_ordering, decoy_limit, decoy_page,
            reserved_first,
        }
    }
}

/// One word of `q`: part of a row's text (`len` characters of one of the search fields from
/// `from`), or fresh text, either upper-cased or not.
#[derive(Debug, Clone)]
struct WordSpec {
    row: Option<Index>,
    column: Index,
    from: Index,
    len: usize,
    upper: bool,
    fresh: String,
}

/// A search `q`: words, the whitespace between them, blanks before and after.
#[derive(Debug, Clone)]
struct SearchSpec {
    words: Vec<WordSpec>,
    seps: Vec<Index>,
    lead: bool,
    trail: bool,
}

fn search_spec() -> impl Strategy<Value = SearchSpec> {
    let word = (
        prop::option::weighted(0.8, any::<Index>()),
        any::<Index>(),
        any::<Index>(),
        1usize..=3,
        any::<bool>(),
        text(),
    )
        .prop_map(|(row, column, from, len, upper, fresh)| WordSpec {
            row,
            column,
            from,
            len,
            upper,
            fresh,
        });
    (
        prop::collection::vec(word, 0..=3),
        prop::collection::vec(any::<Index>(), 3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(words, seps, lead, trail)| SearchSpec {
            words,
            seps,
            lead,
            trail,
        })
}

/// A Sample row before ids are assigned: `gap` spaces the ids, `order` shuffles insertion.
#[derive(Debug, Clone)]
struct SampleSpec {
    gap: i64,
    order: u8,
    name: String,
    qty: i64,
    big: i64,
    ratio: f64,
    flag: bool,
    body: String,
    remark: Option<String>,
    day: Option<NaiveDate>,
    stamp: NaiveDateTime,
}

prop_compose! {
    fn sample_spec()(
        gap in 1i64..=3,
        order in any::<u8>(),
        name in text(),
        qty in int32(),
        big in int64(),
        ratio in float(),
        flag in any::<bool>(),
        body in text(),
        remark in prop::option::of(text()),
        day in prop::option::of(day()),
        stamp in stamp(),
    ) -> SampleSpec {
        SampleSpec { gap, order, name, qty, big, ratio, flag, body, remark, day, stamp }
    }
}

fn sample_rows() -> impl Strategy<Value = Vec<SampleSpec>> {
    prop::collection::vec(sample_spec(), 0..=12)
}

/// The rows of [`SAMPLE`]: ids increase by `gap`, names are made unique, rows are inserted in
/// the order of `order`.
fn sample_table(specs: &[SampleSpec]) -> Table {
    let mut names = HashSet::new();
    let mut id = 0;
    let mut rows = Vec::new();
    for s in specs {
        id += s.gap;
        let name = if names.contains(&s.name) {
            format!("{}#{id}", s.name)
        } else {
            s.name.clone()
        };
        names.insert(name.clone());
        rows.push(Row {
            id,
            vals: vec![
                Some(Val::Int(id)),
                Some(Val::Text(name)),
                Some(Val::Int(s.qty)),
                Some(Val::Int(s.big)),
                Some(Val::Float(s.ratio)),
                Some(Val::Bool(s.flag)),
                Some(Val::Text(s.body.clone())),
                s.remark.clone().map(Val::Text),
                s.day.map(Val::Date),
                Some(Val::Stamp(s.stamp)),
            ],
        });
    }
    let mut inserted: Vec<(u8, &Row)> = specs.iter().map(|s| s.order).zip(&rows).collect();
    inserted.sort_by_key(|(order, _)| *order);
    let mut seed = "DELETE FROM sample;".to_owned();
    if !inserted.is_empty() {
        let values: Vec<String> = inserted
            .iter()
            .map(|(_, r)| {
                let vals: Vec<String> = r.vals.iter().map(opt_sql).collect();
                format!("({})", vals.join(", "))
            })
            .collect();
        seed.push_str(&format!(
            "\nINSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) \
             VALUES\n{};",
            values.join(",\n")
        ));
    }
    let names = [
        "id", "name", "qty", "big", "ratio", "flag", "body", "remark", "day", "stamp",
    ];
    let objects = rows
        .iter()
        .map(|r| {
            Value::Object(
                names
                    .iter()
                    .zip(&r.vals)
                    .map(|(k, v)| ((*k).to_owned(), opt_json(v)))
                    .collect(),
            )
        })
        .collect();
    Table {
        seed,
        rows,
        objects,
    }
}

/// The A <- B <- C rows: A ids 1.., B ids 1.. each pointing at an A, C ids spaced by a gap,
/// each pointing at a B and inserted in the order of its `u8`.
#[derive(Debug, Clone)]
struct ChainSpec {
    a: Vec<String>,
    b: Vec<(Index, String)>,
    c: Vec<(i64, u8, Index, String)>,
}

fn chain_rows() -> impl Strategy<Value = ChainSpec> {
    (
        prop::collection::vec(text(), 1..=4),
        prop::collection::vec((any::<Index>(), text()), 1..=5),
        prop::collection::vec((1i64..=3, any::<u8>(), any::<Index>(), text()), 0..=12),
    )
        .prop_map(|(a, b, c)| ChainSpec { a, b, c })
}

fn chain_table(spec: &ChainSpec) -> Table {
    let a: Vec<(i64, String)> = (1..).zip(spec.a.iter().cloned()).collect();
    let b: Vec<(i64, i64, String)> = (1..)
        .zip(&spec.b)
        .map(|(id, (a_idx, field))| (id, a[a_idx.index(a.len())].0, field.clone()))
        .collect();
    let mut id = 0;
    let mut c = Vec::new();
    for (gap, order, b_idx, field) in &spec.c {
        id += gap;
        c.push((id, *order, b[b_idx.index(b.len())].0, field.clone()));
    }
    let text = |s: &str| Val::Text(s.to_owned()).sql();
    let mut seed = "DELETE FROM dmodel; DELETE FROM cmodel; DELETE FROM bmodel; \
                    DELETE FROM amodel;"
        .to_owned();
    let values: Vec<String> = a
        .iter()
        .map(|(id, f)| format!("({id}, {})", text(f)))
        .collect();
    seed.push_str(&format!(
        "\nINSERT INTO amodel (id, a_field) VALUES {};",
        values.join(", ")
    ));
    let values: Vec<String> = b
        .iter()
        .map(|(id, a_id, f)| format!("({id}, {a_id}, {})", text(f)))
        .collect();
    seed.push_str(&format!(
        "\nINSERT INTO bmodel (id, a_id, b_field) VALUES {};",
        values.join(", ")
    ));
    let mut inserted: Vec<&(i64, u8, i64, String)> = c.iter().collect();
    inserted.sort_by_key(|(_, order, _, _)| *order);
    if !inserted.is_empty() {
        let values: Vec<String> = inserted
            .iter()
            .map(|(id, _, b_id, f)| format!("({id}, {b_id}, {})", text(f)))
            .collect();
        seed.push_str(&format!(
            "\nINSERT INTO cmodel (id, b_id, c_field) VALUES {};",
            values.join(", ")
        ));
    }
    let mut rows = Vec::new();
    let mut objects = Vec::new();
    for (id, _, b_id, c_field) in &c {
        let (_, a_id, b_field) = &b[(b_id - 1) as usize];
        let (_, a_field) = &a[(a_id - 1) as usize];
        let int = |v: i64| Some(Val::Int(v));
        let txt = |v: &str| Some(Val::Text(v.to_owned()));
        rows.push(Row {
            id: *id,
            vals: vec![
                int(*id),
                txt(c_field),
                int(*b_id),
                int(*b_id),
                int(*b_id),
                txt(b_field),
                int(*a_id),
                int(*a_id),
                int(*a_id),
                txt(a_field),
            ],
        });
        objects.push(json!({
            "id": id,
            "b": {"id": b_id, "a": {"id": a_id, "a_field": a_field}, "b_field": b_field},
            "c_field": c_field,
        }));
    }
    Table {
        seed,
        rows,
        objects,
    }
}

/// Users (username, active, join date) and messages (id gap, insertion order, author,
/// content, date): some authors inactive, so hidden by the user resource.
#[derive(Debug, Clone)]
struct AuthorSpec {
    users: Vec<(String, bool, NaiveDateTime)>,
    messages: Vec<(i64, u8, Index, String, NaiveDateTime)>,
}

/// A message's content: text that is not blank (`Message.content` is `not_blank`, a CHECK
/// of the table).
fn content() -> impl Strategy<Value = String> {
    text().prop_map(|t| {
        if t.trim_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r'])
            .is_empty()
        {
            t + "."
        } else {
            t
        }
    })
}

fn author_rows() -> impl Strategy<Value = AuthorSpec> {
    (
        prop::collection::vec((text(), prop::bool::weighted(0.6), stamp()), 1..=4),
        prop::collection::vec(
            (1i64..=3, any::<u8>(), any::<Index>(), content(), stamp()),
            0..=12,
        ),
    )
        .prop_map(|(users, messages)| AuthorSpec { users, messages })
}

fn author_table(spec: &AuthorSpec) -> Table {
    // Usernames are unique: each gets its user's number (ids 1..).
    let users: Vec<(i64, String, bool, NaiveDateTime)> = (1..)
        .zip(&spec.users)
        .map(|(id, (name, active, joined))| (id, format!("{name}{id}"), *active, *joined))
        .collect();
    let mut seed =
        "DELETE FROM message; DELETE FROM relationship; DELETE FROM \"user\";".to_owned();
    let values: Vec<String> = (users.iter())
        .map(|(id, name, active, joined)| {
            let (name, joined) = (Val::Text(name.clone()).sql(), Val::Stamp(*joined).sql());
            format!(
                "({id}, {name}, '', '', {joined}, {}, FALSE)",
                Val::Bool(*active).sql()
            )
        })
        .collect();
    seed.push_str(&format!(
        "\nINSERT INTO \"user\" (id, username, password, email, join_date, active, admin) \
         VALUES {};",
        values.join(", ")
    ));
    let mut id = 0;
    let mut messages = Vec::new();
    for (gap, order, user, content, date) in &spec.messages {
        id += gap;
        messages.push((id, *order, &users[user.index(users.len())], content, *date));
    }
    let mut inserted: Vec<_> = messages.iter().collect();
    inserted.sort_by_key(|(_, order, ..)| *order);
    if !inserted.is_empty() {
        let values: Vec<String> = (inserted.iter())
            .map(|(id, _, (user, ..), content, date)| {
                let (content, date) =
                    (Val::Text((*content).clone()).sql(), Val::Stamp(*date).sql());
                format!("({id}, {user}, {content}, {date})")
            })
            .collect();
        seed.push_str(&format!(
            "\nINSERT INTO message (id, user_id, content, pub_date) VALUES {};",
            values.join(", ")
        ));
    }
    let mut rows = Vec::new();
    let mut objects = Vec::new();
    for (id, _, (user, name, active, joined), content, date) in &messages {
        let shown = |v: Val| active.then_some(v);
        rows.push(Row {
            id: *id,
            vals: vec![
                Some(Val::Int(*id)),
                Some(Val::Text((*content).clone())),
                Some(Val::Int(*user)),
                Some(Val::Int(*user)),
                Some(Val::Stamp(*date)),
                shown(Val::Int(*user)),
                shown(Val::Text(name.clone())),
                shown(Val::Stamp(*joined)),
                shown(Val::Bool(*active)),
            ],
        });
        let author = match active {
            true => json!({
                "id": user,
                "username": name,
                "join_date": Val::Stamp(*joined).json(),
                "active": true,
                "admin": false,
            }),
            false => Value::Null,
        };
        objects.push(json!({
            "id": id,
            "user": author,
            "content": content,
            "pub_date": Val::Stamp(*date).json(),
        }));
    }
    Table {
        seed,
        rows,
        objects,
    }
}

/// EModel rows: ids spaced by a gap, inserted in the order of the `u8`.
fn emodel_rows() -> impl Strategy<Value = Vec<(i64, u8, String)>> {
    prop::collection::vec((1i64..=3, any::<u8>(), text()), 0..=12)
}

fn emodel_table(spec: &[(i64, u8, String)]) -> Table {
    let mut id = 0;
    let mut rows = Vec::new();
    let mut objects = Vec::new();
    let mut inserted = Vec::new();
    for (gap, order, field) in spec {
        id += gap;
        let value = Val::Text(field.clone());
        inserted.push((*order, format!("({id}, {})", value.sql())));
        rows.push(Row {
            id,
            vals: vec![Some(Val::Int(id)), Some(value)],
        });
        objects.push(json!({"id": id, "e_field": field}));
    }
    inserted.sort_by_key(|(order, _)| *order);
    let mut seed = "DELETE FROM fmodel; DELETE FROM emodel;".to_owned();
    if !inserted.is_empty() {
        let values: Vec<String> = inserted.into_iter().map(|(_, v)| v).collect();
        seed.push_str(&format!(
            "\nINSERT INTO emodel (id, e_field) VALUES {};",
            values.join(", ")
        ));
    }
    Table {
        seed,
        rows,
        objects,
    }
}

// --- resolving a case into a request --------------------------------------------------------

/// A filter operator (docs/contract.md#filters); `Plain` is `field=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Plain,
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
    In,
    Is,
    Like,
    ILike,
}

/// The operators of non-text columns (`ne` twice: picked more often).
const OPS: [Op; 10] = [
    Op::Plain,
    Op::Eq,
    Op::Ne,
    Op::Ne,
    Op::Lt,
    Op::Lte,
    Op::Gt,
    Op::Gte,
    Op::In,
    Op::Is,
];

/// The operators of text columns (`ne`, `like` and `ilike` twice: picked more often).
const TEXT_OPS: [Op; 14] = [
    Op::Plain,
    Op::Eq,
    Op::Ne,
    Op::Ne,
    Op::Like,
    Op::ILike,
    Op::Lt,
    Op::Lte,
    Op::Gt,
    Op::Gte,
    Op::In,
    Op::Is,
    Op::Like,
    Op::ILike,
];

impl Op {
    fn suffix(self) -> &'static str {
        match self {
            Op::Plain => "",
            Op::Eq => "__eq",
            Op::Ne => "__ne",
            Op::Lt => "__lt",
            Op::Lte => "__lte",
            Op::Gt => "__gt",
            Op::Gte => "__gte",
            Op::In => "__in",
            Op::Is => "__is",
            Op::Like => "__like",
            Op::ILike => "__ilike",
        }
    }
}

/// A filter pair of the request, with what the evaluator needs to read it.
#[derive(Debug, Clone)]
struct FilterPair {
    key: String,
    column: usize,
    op: Op,
    raw: String,
}

/// A group, or a term of one, resolved against the rows of its case: a filter with its
/// values as the server decodes them (several for `in` only), or an `or` / `not` group.
#[derive(Debug, Clone)]
enum Cond {
    Filter {
        key: String,
        column: usize,
        op: Op,
        values: Vec<String>,
        light: bool,
    },
    Group {
        not: bool,
        terms: Vec<Cond>,
    },
}

impl Cond {
    /// The term as written inside a group: `key=value` with the value percent-encoded once
    /// more (`in` values separated by `|`), or `or=(...)` / `not=(...)`.
    fn written(&self) -> String {
        match self {
            Cond::Filter {
                key, values, light, ..
            } => {
                let values: Vec<String> = values.iter().map(|v| encode(v, *light)).collect();
                format!("{key}={}", values.join("|"))
            }
            Cond::Group { .. } => {
                let (name, value) = self.pair();
                format!("{name}={value}")
            }
        }
    }

    /// A group as a query pair: `("or", "(...)")` or `("not", "(...)")`.
    fn pair(&self) -> (String, String) {
        match self {
            Cond::Group { not, terms } => {
                let terms: Vec<String> = terms.iter().map(Cond::written).collect();
                let name = if *not { "not" } else { "or" };
                (name.to_owned(), format!("({})", terms.join(",")))
            }
            Cond::Filter { .. } => panic!("a filter term is not a group"),
        }
    }
}

/// A value of a group's term, percent-encoded for the group (docs/reference.md, "`or` and
/// `not` groups"): where it must be (`%`, `,`, `|`, parentheses) when `light`, else every
/// character but the unreserved ones.
fn encode(value: &str, light: bool) -> String {
    let mut out = String::new();
    for c in value.chars() {
        let keep = if light {
            !matches!(c, '%' | ',' | '|' | '(' | ')')
        } else {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
        };
        if keep {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// A request resolved against the rows of its case.
#[derive(Debug, Clone)]
struct Request {
    pairs: Vec<(String, String)>,
    filters: Vec<FilterPair>,
    /// The `or` / `not` parameters (each a [`Cond::Group`]).
    groups: Vec<Cond>,
    /// `q`, where the resource has search fields.
    search: Option<String>,
    ordering: Vec<(usize, bool)>,
    limit: Option<usize>,
    page: Option<usize>,
}

impl Request {
    fn uri(&self, model: &Model) -> String {
        let pairs: Vec<(&str, &str)> = self
            .pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        url(model.path, &pairs)
    }
}

fn pick<'a, T>(index: &Index, items: &'a [T]) -> &'a T {
    &items[index.index(items.len())]
}

/// The value of `spec` for `column`: the chosen row's if it has one there, else the fresh
/// one of the column's kind.
fn base_value(spec: &ValSpec, column: &Column, index: usize, rows: &[Row]) -> Val {
    if let (Some(row), false) = (&spec.row, rows.is_empty()) {
        if let Some(v) = &pick(row, rows).vals[index] {
            return spec.nudge.apply(column.kind, v.clone());
        }
    }
    let f = &spec.fresh;
    let fresh = match column.kind {
        Kind::Int32 => Val::Int(f.int32),
        Kind::Int64 => Val::Int(f.int64),
        Kind::Float => Val::Float(f.float),
        Kind::Bool => Val::Bool(f.flag),
        Kind::Text => Val::Text(f.text.clone()),
        Kind::Date => Val::Date(f.day),
        Kind::Stamp => Val::Stamp(f.stamp),
    };
    spec.nudge.apply(column.kind, fresh)
}

/// A value as query-string text, in one of the spellings filters accept (docs/contract.md#filters).
fn spell(value: &Val, spelling: &Index) -> String {
    match value {
        Val::Int(v) => v.to_string(),
        Val::Float(v) => format!("{v:?}"),
        Val::Bool(true) => pick(spelling, &["true", "True", "1"]).to_string(),
        Val::Bool(false) => pick(spelling, &["false", "False", "0"]).to_string(),
        Val::Text(v) => v.clone(),
        Val::Date(v) => v.format("%Y-%m-%d").to_string(),
        Val::Stamp(v) => {
            let n = spelling.index(6);
            let micros = v.nanosecond() / 1000;
            if n == 5 && v.time() == NaiveTime::MIN {
                return v.format("%Y-%m-%d").to_string();
            }
            let sep = [' ', 'T'][n % 2];
            let fraction = match (micros, n / 2) {
                (0, 0) => String::new(),
                (0, 1) => ".0".to_owned(),
                (0, _) => ".000000".to_owned(),
                (us, 0) => format!(".{us:06}").trim_end_matches('0').to_owned(),
                (us, _) => format!(".{us:06}"),
            };
            format!(
                "{}{sep}{}{fraction}",
                v.format("%Y-%m-%d"),
                v.format("%H:%M:%S")
            )
        }
    }
}

/// A `like`/`ilike` pattern made from a value: upper-cased, one character replaced by `_`,
/// a prefix replaced by `%`, a `%` appended, as the spec says.
fn pattern(spec: &ValSpec, base: &str) -> String {
    let mut chars: Vec<char> = if spec.upper {
        base.to_uppercase().chars().collect()
    } else {
        base.chars().collect()
    };
    if let (Some(blank), false) = (&spec.blank, chars.is_empty()) {
        let at = blank.index(chars.len());
        chars[at] = '_';
    }
    if let Some(cut) = &spec.cut {
        let from = cut.index(chars.len() + 1);
        chars.drain(..from);
        chars.insert(0, '%');
    }
    if spec.trail {
        chars.push('%');
    }
    chars.into_iter().collect()
}

/// The ordering terms of `terms`, each column once (later repetitions dropped), with the
/// name the request uses for each.
fn resolve_terms(model: &Model, terms: &[Term]) -> Vec<(usize, bool, &'static str)> {
    let mut out: Vec<(usize, bool, &'static str)> = Vec::new();
    for t in terms {
        let orderable = pick(&t.column, model.orderables);
        if out.iter().any(|(c, _, _)| *c == orderable.column) {
            continue;
        }
        out.push((orderable.column, t.desc, *pick(&t.name, orderable.names)));
    }
    out
}

fn ordering_value(terms: &[(usize, bool, &str)]) -> String {
    terms
        .iter()
        .map(|(_, desc, name)| format!("{}{name}", if *desc { "-" } else { "" }))
        .collect::<Vec<_>>()
        .join(",")
}

/// The operator of a filter on `column` (among those its kind allows).
fn filter_op(column: &Column, op: &Index) -> Op {
    let ops: &[Op] = if column.kind == Kind::Text {
        &TEXT_OPS
    } else {
        &OPS
    };
    *pick(op, ops)
}

/// The values of a filter with operator `op` on `column` (the evaluator's column `index`):
/// one per value spec for `in`, else one from the first.
fn filter_values(
    op: Op,
    column: &Column,
    index: usize,
    values: &[ValSpec],
    rows: &[Row],
) -> Vec<String> {
    let first = &values[0];
    let one = match op {
        Op::In => {
            return values
                .iter()
                .map(|v| spell(&base_value(v, column, index, rows), &v.spelling))
                .collect();
        }
        Op::Is if column.kind == Kind::Bool => pick(
            &first.spelling,
            &[
                "null", "none", "NULL", "None", "true", "True", "FALSE", "false",
            ],
        )
        .to_string(),
        Op::Is => pick(&first.spelling, &["null", "none", "NULL", "None", "nUlL"]).to_string(),
        Op::Like | Op::ILike => match base_value(first, column, index, rows) {
            Val::Text(t) => pattern(first, &t),
            other => spell(&other, &first.spelling),
        },
        _ => spell(&base_value(first, column, index, rows), &first.spelling),
    };
    vec![one]
}

/// The `like`/`ilike` patterns one request may hold (docs/contract.md#bounded-cost).
const MAX_PATTERNS: usize = 16;

/// A group resolved against the rows. `patterns` is what is left of [`MAX_PATTERNS`]: a
/// `like` or `ilike` term past it becomes an `eq`.
fn resolve_group(model: &Model, spec: &GroupSpec, rows: &[Row], patterns: &mut usize) -> Cond {
    let terms = spec
        .terms
        .iter()
        .map(|term| match term {
            GroupTermSpec::Filter {
                column,
                op,
                values,
                light,
            } => {
                let index = *pick(column, model.filter_picks);
                let column = &model.columns[index];
                let mut op = filter_op(column, op);
                if matches!(op, Op::Like | Op::ILike) {
                    if *patterns == 0 {
                        op = Op::Eq;
                    } else {
                        *patterns -= 1;
                    }
                }
                Cond::Filter {
                    key: format!("{}{}", column.key, op.suffix()),
                    column: index,
                    op,
                    values: filter_values(op, column, index, values, rows),
                    light: *light,
                }
            }
            GroupTermSpec::Group(inner) => resolve_group(model, inner, rows, patterns),
        })
        .collect();
    Cond::Group {
        not: spec.not,
        terms,
    }
}

fn resolve(model: &Model, spec: &ListSpec, rows: &[Row]) -> Request {
    let mut filters = Vec::new();
    let mut per_filter: Vec<Vec<FilterPair>> = Vec::new();
    for f in &spec.filters {
        let index = *pick(&f.column, model.filter_picks);
        let column = &model.columns[index];
        let op = filter_op(column, &f.op);
        let key = format!("{}{}", column.key, op.suffix());
        let mut pairs = Vec::new();
        for rep in &f.reps {
            pairs.push(FilterPair {
                key: key.clone(),
                column: index,
                op,
                raw: filter_values(op, column, index, rep, rows).join(","),
            });
        }
        per_filter.push(pairs);
    }
    // The repetitions of different keys interleaved: first repetitions first.
    let longest = per_filter.iter().map(Vec::len).max().unwrap_or(0);
    for rep in 0..longest {
        for pairs in &per_filter {
            if let Some(p) = pairs.get(rep) {
                filters.push(p.clone());
            }
        }
    }

    let mut reserved: Vec<(String, String)> = Vec::new();
    let mut ordering = Vec::new();
    if let Some(terms) = &spec.ordering {
        let terms = resolve_terms(model, terms);
        reserved.push(("ordering".to_owned(), ordering_value(&terms)));
        ordering = terms.iter().map(|(c, d, _)| (*c, *d)).collect();
    }
    if let Some(limit) = spec.limit {
        reserved.push(("limit".to_owned(), limit.to_string()));
    }
    if let Some(page) = spec.page {
        reserved.push(("page".to_owned(), page.to_string()));
    }
    if let Some(terms) = &spec.decoy_ordering {
        let terms = resolve_terms(model, terms);
        reserved.push(("ordering".to_owned(), ordering_value(&terms)));
    }
    if let Some(limit) = spec.decoy_limit {
        reserved.push(("limit".to_owned(), limit.to_string()));
    }
    if let Some(page) = spec.decoy_page {
        reserved.push(("page".to_owned(), page.to_string()));
    }
    // The first of a repeated reserved parameter counts (docs/contract.md#pagination).
    let first = |name: &str| {
        reserved
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<usize>().ok())
    };
    let (limit, page) = (first("limit"), first("page"));
    if spec.ordering.is_none() {
        if let Some(terms) = &spec.decoy_ordering {
            ordering = resolve_terms(model, terms)
                .iter()
                .map(|(c, d, _)| (*c, *d))
                .collect();
        }
    }
    let used = filters
        .iter()
        .filter(|f| matches!(f.op, Op::Like | Op::ILike))
        .count();
    let mut patterns = MAX_PATTERNS.saturating_sub(used);
    let groups: Vec<Cond> = spec
        .groups
        .iter()
        .map(|g| resolve_group(model, g, rows, &mut patterns))
        .collect();
    let filter_pairs = filters
        .iter()
        .map(|f| (f.key.clone(), f.raw.clone()))
        .chain(groups.iter().map(Cond::pair));
    let pairs = if spec.reserved_first {
        reserved.into_iter().chain(filter_pairs).collect()
    } else {
        filter_pairs.chain(reserved).collect()
    };
    Request {
        pairs,
        filters,
        groups,
        search: None,
        ordering,
        limit,
        page,
    }
}

/// The `q` of a search spec on `model`'s rows, at most [`SEARCH_WORDS`] words.
fn resolve_search(model: &Model, spec: &SearchSpec, rows: &[Row]) -> String {
    let mut q = String::new();
    if spec.lead {
        q.push(' ');
    }
    for (n, w) in spec.words.iter().enumerate() {
        if n > 0 {
            let sep: &&str = pick(&spec.seps[n - 1], &[" ", "  ", "\t", " \n "]);
            q.push_str(sep);
        }
        let column = *pick(&w.column, model.search_fields);
        let text = match (&w.row, rows.is_empty()) {
            (Some(row), false) => match &pick(row, rows).vals[column] {
                Some(Val::Text(t)) => {
                    let chars: Vec<char> = t.chars().collect();
                    let from = w.from.index(chars.len() + 1);
                    let to = (from + w.len).min(chars.len());
                    chars[from..to].iter().collect()
                }
                _ => w.fresh.clone(),
            },
            _ => w.fresh.clone(),
        };
        q.push_str(&if w.upper { text.to_uppercase() } else { text });
    }
    if spec.trail {
        q.push('\t');
    }
    if q.split_whitespace().nth(SEARCH_WORDS).is_some() {
        let words: Vec<&str> = q.split_whitespace().take(SEARCH_WORDS).collect();
        return words.join(" ");
    }
    q
}

// --- the evaluator -------------------------------------------------------------------------

/// A parsed filter value; `IsNull` is `is=null` (or `none`).
#[derive(Debug, Clone)]
enum Param {
    Val(Val),
    IsNull,
}

/// Parses query-string text as a value of `kind` (docs/contract.md#filters).
fn parse_value(kind: Kind, raw: &str) -> Result<Val, String> {
    let bad = || format!("the generator made an unparseable {kind:?} value {raw:?}");
    Ok(match kind {
        Kind::Int32 | Kind::Int64 => Val::Int(raw.parse().map_err(|_| bad())?),
        Kind::Float => Val::Float(raw.parse().map_err(|_| bad())?),
        Kind::Bool => match raw {
            "true" | "True" | "1" => Val::Bool(true),
            "false" | "False" | "0" => Val::Bool(false),
            _ => return Err(bad()),
        },
        Kind::Text => Val::Text(raw.to_owned()),
        Kind::Date => Val::Date(NaiveDate::parse_from_str(raw, "%Y-%m-%d").map_err(|_| bad())?),
        Kind::Stamp => {
            if raw.len() == 10 {
                let d = NaiveDate::parse_from_str(raw, "%Y-%m-%d").map_err(|_| bad())?;
                Val::Stamp(d.and_hms_opt(0, 0, 0).ok_or_else(bad)?)
            } else {
                let normalized = raw.replacen('T', " ", 1);
                Val::Stamp(
                    NaiveDateTime::parse_from_str(&normalized, "%Y-%m-%d %H:%M:%S%.f")
                        .map_err(|_| bad())?,
                )
            }
        }
    })
}

fn parse_is(raw: &str) -> Result<Param, String> {
    match raw.to_lowercase().as_str() {
        "null" | "none" => Ok(Param::IsNull),
        "true" => Ok(Param::Val(Val::Bool(true))),
        "false" => Ok(Param::Val(Val::Bool(false))),
        _ => Err(format!(
            "the generator made an unparseable is value {raw:?}"
        )),
    }
}

/// SQL `LIKE` without an escape character: `%` any run of characters, `_` one character.
fn like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    // matched[i]: the pattern so far matches the first i characters of the text.
    let mut matched = vec![false; text.len() + 1];
    matched[0] = true;
    for p in pattern.chars() {
        let mut next = vec![false; text.len() + 1];
        match p {
            '%' => {
                let mut any = false;
                for (i, m) in matched.iter().enumerate() {
                    any |= *m;
                    next[i] = any;
                }
            }
            '_' => {
                next[1..].copy_from_slice(&matched[..text.len()]);
            }
            c => {
                for i in 0..text.len() {
                    next[i + 1] = matched[i] && text[i] == c;
                }
            }
        }
        matched = next;
    }
    matched[text.len()]
}

/// Whether a row's value passes one filter key (all its values, per docs/contract.md#filters).
fn passes(op: Op, params: &[Param], value: Option<&Val>) -> bool {
    let values = || {
        params.iter().filter_map(|p| match p {
            Param::Val(v) => Some(v),
            Param::IsNull => None,
        })
    };
    if op == Op::Is {
        return params.iter().any(|p| match p {
            Param::IsNull => value.is_none(),
            Param::Val(v) => value.is_some_and(|x| x.compare(v) == Ordering::Equal),
        });
    }
    // Every other operator is false on NULL (`ne` included).
    let Some(x) = value else {
        return false;
    };
    let text = |v: &Val| match v {
        Val::Text(t) => t.clone(),
        other => panic!("like on a non-text value {other:?}"),
    };
    match op {
        Op::Plain | Op::Eq | Op::In => values().any(|v| x.compare(v) == Ordering::Equal),
        Op::Ne => values().all(|v| x.compare(v) != Ordering::Equal),
        Op::Lt => values().any(|v| x.compare(v) == Ordering::Less),
        Op::Lte => values().any(|v| x.compare(v) != Ordering::Greater),
        Op::Gt => values().any(|v| x.compare(v) == Ordering::Greater),
        Op::Gte => values().any(|v| x.compare(v) != Ordering::Less),
        Op::Like => values().any(|v| like(&text(x), &text(v))),
        // Case-insensitive for all of Unicode: both sides folded one character at a time.
        Op::ILike => values().any(|v| like(&fold(&text(x)), &fold(&text(v)))),
        Op::Is => false,
    }
}

/// Whether a row passes one filter key on `column`: [`passes`], except where the column reads
/// a related row that is missing ([`Model::through_hidden`]), which nothing matches.
fn matches(model: &Model, column: usize, op: Op, params: &[Param], row: &Row) -> bool {
    let value = row.vals[column].as_ref();
    let missing = value.is_none() && model.through_hidden.contains(&column);
    !missing && passes(op, params, value)
}

/// The parameters of one filter value as the server reads it: `in` values (`items` split at
/// the separator), `is` values, or one value of the column's kind.
fn params_of<'a>(
    kind: Kind,
    op: Op,
    items: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Param>, String> {
    items
        .into_iter()
        .map(|item| match op {
            Op::Is => parse_is(item),
            _ => parse_value(kind, item).map(Param::Val),
        })
        .collect()
}

/// Whether a row satisfies a group or a term of one (docs/contract.md#filter-logic). A term
/// whose SQL comparison is unknown (on a NULL) is false, which [`passes`] already says; `or`
/// holds when a term does, `not` when not every term does.
fn holds(model: &Model, cond: &Cond, row: &Row) -> Result<bool, String> {
    Ok(match cond {
        Cond::Filter {
            column, op, values, ..
        } => {
            let kind = model.columns[*column].kind;
            let params = params_of(kind, *op, values.iter().map(String::as_str))?;
            matches(model, *column, *op, &params, row)
        }
        Cond::Group { not: false, terms } => {
            let mut any = false;
            for t in terms {
                any |= holds(model, t, row)?;
            }
            any
        }
        Cond::Group { not: true, terms } => {
            let mut all = true;
            for t in terms {
                all &= holds(model, t, row)?;
            }
            !all
        }
    })
}

/// Whether a row matches the search `q`: every word (split at whitespace) is found, folded
/// as `ilike` folds it and taken literally, in one of the search fields (docs/contract.md#search).
fn found(model: &Model, q: &str, row: &Row) -> bool {
    q.split_whitespace().all(|word| {
        let word = fold(word);
        model.search_fields.iter().any(|&c| match &row.vals[c] {
            Some(Val::Text(t)) => fold(t).contains(&word),
            _ => false,
        })
    })
}

/// The ids of every row the request lists, in order, over all pages.
fn evaluate(model: &Model, rows: &[Row], request: &Request) -> Result<Vec<i64>, String> {
    // Same key: one filter with all its values; different keys: AND.
    let mut keys: Vec<(&str, usize, Op, Vec<Param>)> = Vec::new();
    for f in &request.filters {
        let kind = model.columns[f.column].kind;
        let params = match f.op {
            Op::In => params_of(kind, f.op, f.raw.split(','))?,
            _ => params_of(kind, f.op, [f.raw.as_str()])?,
        };
        match keys.iter_mut().find(|(k, _, _, _)| *k == f.key) {
            Some((_, _, _, all)) => all.extend(params),
            None => keys.push((&f.key, f.column, f.op, params)),
        }
    }
    let mut listed = Vec::new();
    for r in rows {
        let mut keep =
            (keys.iter()).all(|(_, column, op, params)| matches(model, *column, *op, params, r));
        // Groups AND with the filters and with each other.
        for g in &request.groups {
            keep = keep && holds(model, g, r)?;
        }
        if let Some(q) = &request.search {
            keep = keep && found(model, q, r);
        }
        if keep {
            listed.push(r);
        }
    }
    // NULLs first ascending, last descending; the primary key ascending breaks ties.
    let mut order = request.ordering.clone();
    if !order.iter().any(|(c, _)| *c == 0) {
        order.push((0, false));
    }
    listed.sort_by(|a, b| {
        for (column, desc) in &order {
            let o = match (&a.vals[*column], &b.vals[*column]) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => x.compare(y),
            };
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    Ok(listed.iter().map(|r| r.id).collect())
}

/// Page `page` (from 1) of `all`, `limit` ids a page.
fn page_of(all: &[i64], limit: usize, page: usize) -> Vec<i64> {
    all.iter()
        .skip((page - 1) * limit)
        .take(limit)
        .copied()
        .collect()
}

// --- reading responses ---------------------------------------------------------------------

/// A list response: `meta` and the objects.
struct Listed {
    meta: Value,
    objects: Vec<Value>,
    ids: Vec<i64>,
}

async fn list(app: &TestApp, uri: &str) -> Result<Listed, TestCaseError> {
    let resp = app.get(uri).await;
    let text = String::from_utf8_lossy(&resp.body).into_owned();
    if resp.code() != 200 {
        return Err(fail(format!(
            "GET {uri}: status {}, body {text}",
            resp.code()
        )));
    }
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| fail(format!("GET {uri}: not JSON ({e}): {text}")))?;
    let objects = body["objects"]
        .as_array()
        .ok_or_else(|| fail(format!("GET {uri}: no objects: {text}")))?
        .clone();
    let ids = objects
        .iter()
        .map(|o| o["id"].as_i64())
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| {
            fail(format!(
                "GET {uri}: an object without an integer id: {text}"
            ))
        })?;
    Ok(Listed {
        meta: body["meta"].clone(),
        objects,
        ids,
    })
}

/// JSON equality with numbers compared by value (`0.0` and `0`, `-0.0` and `0.0` alike).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_json(v, w))
        }
        _ => a == b,
    }
}

/// Seeds the table and checks that the API serializes exactly the seeded rows (so that the
/// evaluator reasons about what the database holds).
async fn seed(app: &TestApp, model: &Model, table: &Table) -> Result<(), TestCaseError> {
    app.sql(&table.seed);
    let mut objects = Vec::new();
    // 12 rows at most: 3 pages of 5; a 4th page would be a fault.
    for page in 1..=4 {
        let listed = list(app, &format!("{}?page={page}", model.path)).await?;
        objects.extend(listed.objects);
        if listed.meta["next"].as_str().is_none_or(str::is_empty) {
            break;
        }
    }
    let mut expected = table.objects.clone();
    expected.sort_by_key(|o| o["id"].as_i64());
    let same = objects.len() == expected.len()
        && objects.iter().zip(&expected).all(|(a, b)| same_json(a, b));
    if !same {
        return Err(fail(format!(
            "the seeded rows do not read back as seeded\nseed:\n{}\nexpected objects: {}\n\
             listed objects: {}",
            table.seed,
            Value::Array(expected),
            Value::Array(objects)
        )));
    }
    Ok(())
}

/// Checks one list request against the evaluator: the ids of the page, `meta.page`,
/// `meta.model`, the emptiness of `next`/`previous`, and the pages the links lead to.
async fn check_list(
    app: &TestApp,
    model: &Model,
    table: &Table,
    request: &Request,
) -> Result<(), TestCaseError> {
    let uri = request.uri(model);
    let all = evaluate(model, &table.rows, request).map_err(fail)?;
    let limit = request
        .limit
        .unwrap_or(model.paginate_by)
        .min(model.paginate_by);
    let page = request.page.unwrap_or(1);
    let context = || {
        format!(
            "seed:\n{}\nrequest: GET {uri}\nquery pairs: {:?}\nevaluator, all pages: {all:?} \
             (limit {limit}, page {page})",
            table.seed, request.pairs
        )
    };
    let listed = list(app, &uri)
        .await
        .map_err(|e| fail(format!("{e}\n{}", context())))?;
    let expected = page_of(&all, limit, page);
    prop_assert_eq!(&listed.ids, &expected, "ids of the page\n{}", context());
    prop_assert_eq!(
        listed.meta["model"].as_str(),
        Some(model.name),
        "meta.model\n{}",
        context()
    );
    prop_assert_eq!(
        listed.meta["page"].as_u64(),
        Some(page as u64),
        "meta.page\n{}",
        context()
    );
    let link = |name: &str| listed.meta[name].as_str().map(str::to_owned);
    let (Some(next), Some(previous)) = (link("next"), link("previous")) else {
        return Err(fail(format!(
            "meta.next / meta.previous missing: {}\n{}",
            listed.meta,
            context()
        )));
    };
    prop_assert_eq!(
        next.is_empty(),
        all.len() <= page * limit,
        "emptiness of meta.next {:?}\n{}",
        next,
        context()
    );
    prop_assert_eq!(
        previous.is_empty(),
        page == 1,
        "emptiness of meta.previous {:?}\n{}",
        previous,
        context()
    );
    for (link, target) in [(next, page + 1), (previous, page.saturating_sub(1))] {
        if link.is_empty() {
            continue;
        }
        let followed = list(app, &link)
            .await
            .map_err(|e| fail(format!("following a link: {e}\n{}", context())))?;
        prop_assert_eq!(
            &followed.ids,
            &page_of(&all, limit, target),
            "ids of page {} through the link {}\n{}",
            target,
            link,
            context()
        );
        prop_assert_eq!(
            followed.meta["page"].as_u64(),
            Some(target as u64),
            "meta.page through the link {}\n{}",
            link,
            context()
        );
    }
    Ok(())
}

/// Checks the request, then each of its filter keys alone (with the same ordering), so that
/// a fault of one operator is not hidden by a conjunction that lists nothing.
async fn check_request_and_each_key(
    app: &TestApp,
    model: &Model,
    table: &Table,
    request: &Request,
) -> Result<(), TestCaseError> {
    check_list(app, model, table, request).await?;
    let mut keys: Vec<&str> = Vec::new();
    for f in &request.filters {
        if !keys.contains(&f.key.as_str()) {
            keys.push(&f.key);
        }
    }
    let conditions = keys.len() + request.groups.len() + usize::from(request.search.is_some());
    if conditions < 2 {
        return Ok(());
    }
    let ordering = request.pairs.iter().find(|(k, _)| k == "ordering");
    let alone = |pairs: Vec<(String, String)>, groups: Vec<Cond>, search: Option<String>| Request {
        pairs: pairs.into_iter().chain(ordering.cloned()).collect(),
        filters: Vec::new(),
        groups,
        search,
        ordering: request.ordering.clone(),
        limit: None,
        page: None,
    };
    for group in &request.groups {
        let request = alone(vec![group.pair()], vec![group.clone()], None);
        check_list(app, model, table, &request).await?;
    }
    if let Some(q) = &request.search {
        let pair = ("q".to_owned(), q.clone());
        let request = alone(vec![pair], Vec::new(), Some(q.clone()));
        check_list(app, model, table, &request).await?;
    }
    for key in keys {
        let filters: Vec<FilterPair> = request
            .filters
            .iter()
            .filter(|f| f.key == key)
            .cloned()
            .collect();
        let pairs = filters
            .iter()
            .map(|f| (f.key.clone(), f.raw.clone()))
            .collect();
        let alone = Request {
            filters,
            ..alone(pairs, Vec::new(), None)
        };
        check_list(app, model, table, &alone).await?;
    }
    Ok(())
}

// --- the properties ------------------------------------------------------------------------

/// `/api/sample/`: filters over every operator and type, ordering, limit and page.
#[actix_web::test]
async fn sample_list_matches_the_evaluator() {
    let app = TestApp::new().await;
    let app = &app;
    check_property(
        "sample_list_matches_the_evaluator",
        (sample_rows(), list_spec()),
        |(rows, spec)| async move {
            let table = sample_table(&rows);
            seed(app, &SAMPLE, &table).await?;
            let request = resolve(&SAMPLE, &spec, &table.rows);
            check_request_and_each_key(app, &SAMPLE, &table, &request).await
        },
    )
    .await;
}

/// `/api/cmodel/`: filters and groups on its own fields and through `b` and `b__a` (two joins
/// deep), ordering on its own fields (the foreign key as `b` or `b_id`) and through the joins
/// (`b__b_field`, `-b__a__a_field`, ...), limit and page.
#[actix_web::test]
async fn join_list_matches_the_evaluator() {
    let app = TestApp::new().await;
    let app = &app;
    check_property(
        "join_list_matches_the_evaluator",
        (chain_rows(), list_spec()),
        |(rows, spec)| async move {
            let table = chain_table(&rows);
            seed(app, &CHAIN, &table).await?;
            let request = resolve(&CHAIN, &spec, &table.rows);
            check_request_and_each_key(app, &CHAIN, &table, &request).await
        },
    )
    .await;
}

/// `/api/message/`: filters, groups and orderings through `user`, whose resource hides
/// inactive users, so that some messages' related row is missing: it reads as NULL for
/// filters and orders as NULL (first ascending, last descending, the primary key breaking
/// ties), across pages; the message itself stays listed, its `user` `null`.
#[actix_web::test]
async fn hidden_related_rows_filter_and_order_as_null() {
    let app = TestApp::new().await;
    let app = &app;
    check_property(
        "hidden_related_rows_filter_and_order_as_null",
        (author_rows(), list_spec()),
        |(rows, spec)| async move {
            let table = author_table(&rows);
            seed(app, &MESSAGES, &table).await?;
            let request = resolve(&MESSAGES, &spec, &table.rows);
            check_request_and_each_key(app, &MESSAGES, &table, &request).await
        },
    )
    .await;
}

/// `/api/searched/` (search fields `name`, `body`, `remark`): `q` (words from the rows'
/// text, upper-cased or not, and fresh ones, with `%`, `_` and Unicode case pairs) with
/// filters, groups, ordering, limit and page.
#[actix_web::test]
async fn search_list_matches_the_evaluator() {
    let app = TestApp::new().await;
    let app = &app;
    check_property(
        "search_list_matches_the_evaluator",
        (sample_rows(), list_spec(), search_spec(), any::<Index>()),
        |(rows, spec, search, at)| async move {
            let table = sample_table(&rows);
            seed(app, &SEARCHED, &table).await?;
            let mut request = resolve(&SEARCHED, &spec, &table.rows);
            let q = resolve_search(&SEARCHED, &search, &table.rows);
            let at = at.index(request.pairs.len() + 1);
            request.pairs.insert(at, ("q".to_owned(), q.clone()));
            request.search = Some(q);
            check_request_and_each_key(app, &SEARCHED, &table, &request).await
        },
    )
    .await;
}

/// `/api/emodel/` (`paginate_by = 5`): a `limit` above 5 is clamped, pages hold 5 rows.
#[actix_web::test]
async fn clamped_list_matches_the_evaluator() {
    let app = TestApp::new().await;
    let app = &app;
    check_property(
        "clamped_list_matches_the_evaluator",
        (emodel_rows(), list_spec()),
        |(rows, spec)| async move {
            let table = emodel_table(&rows);
            seed(app, &EMODEL, &table).await?;
            let request = resolve(&EMODEL, &spec, &table.rows);
            check_request_and_each_key(app, &EMODEL, &table, &request).await
        },
    )
    .await;
}

/// Whatever `like` lists (case-sensitive), `ilike` (case-insensitive) lists too, with the
/// same patterns, on every text column; and both list what the evaluator computes. The
/// patterns of a column (one made from each row's text, and the generated ones) go in one
/// request as a repeated key: a row that matches one of them under `like` must match one under
/// `ilike`.
#[actix_web::test]
async fn ilike_lists_whatever_like_lists() {
    let app = TestApp::new().await;
    let app = &app;
    let strategy = (sample_rows(), prop::collection::vec(val_spec(), 1..=4));
    check_property(
        "ilike_lists_whatever_like_lists",
        strategy,
        |(rows, values)| async move {
            let table = sample_table(&rows);
            seed(app, &SAMPLE, &table).await?;
            for index in SAMPLE_TEXT_COLUMNS {
                let column = &SAMPLE.columns[index];
                let mut patterns: Vec<String> = values
                    .iter()
                    .map(|v| match base_value(v, column, index, &table.rows) {
                        Val::Text(t) => pattern(v, &t),
                        other => spell(&other, &v.spelling),
                    })
                    .collect();
                for (row, v) in table.rows.iter().zip(values.iter().cycle()) {
                    if let Some(Val::Text(t)) = &row.vals[index] {
                        patterns.push(pattern(v, t));
                    }
                }
                let request = |op: Op| {
                    let filters: Vec<FilterPair> = patterns
                        .iter()
                        .map(|p| FilterPair {
                            key: format!("{}{}", column.key, op.suffix()),
                            column: index,
                            op,
                            raw: p.clone(),
                        })
                        .collect();
                    Request {
                        pairs: filters
                            .iter()
                            .map(|f| (f.key.clone(), f.raw.clone()))
                            .collect(),
                        filters,
                        groups: Vec::new(),
                        search: None,
                        ordering: Vec::new(),
                        limit: None,
                        page: None,
                    }
                };
                let (like, ilike) = (request(Op::Like), request(Op::ILike));
                check_list(app, &SAMPLE, &table, &like).await?;
                let like_ids = list(app, &like.uri(&SAMPLE)).await?.ids;
                let ilike_ids = list(app, &ilike.uri(&SAMPLE)).await?.ids;
                let missing: Vec<i64> = like_ids
                    .iter()
                    .filter(|id| !ilike_ids.contains(id))
                    .copied()
                    .collect();
                prop_assert!(
                    missing.is_empty(),
                    "rows {:?} match `like` but not `ilike` with the same pattern\nseed:\n{}\n\
                     GET {} -> {:?}\nGET {} -> {:?}",
                    missing,
                    table.seed,
                    like.uri(&SAMPLE),
                    like_ids,
                    ilike.uri(&SAMPLE),
                    ilike_ids
                );
                check_list(app, &SAMPLE, &table, &ilike).await?;
            }
            Ok(())
        },
    )
    .await;
}

/// An `ordering` that names a column twice (in either direction, under either name of a
/// foreign key) is a 400 naming `ordering` (docs/contract.md#ordering), whatever else it holds.
#[actix_web::test]
async fn ordering_a_column_twice_is_400() {
    let app = TestApp::new().await;
    let app = &app;
    let strategy = (
        any::<Index>(),
        prop::collection::vec(term(), 0..=3),
        term(),
        any::<Index>(),
        any::<Index>(),
        prop::option::of(1usize..=25),
    );
    check_property(
        "ordering_a_column_twice_is_400",
        strategy,
        |(model, terms, extra, twice, at, limit)| async move {
            let model = *pick(&model, &[&SAMPLE, &CHAIN, &EMODEL]);
            let mut resolved = resolve_terms(model, &terms);
            if resolved.is_empty() {
                resolved = resolve_terms(model, std::slice::from_ref(&extra));
            }
            // The repeated column, under any of its names and in any direction.
            let (column, _, _) = *pick(&twice, &resolved);
            let orderable = model
                .orderables
                .iter()
                .find(|o| o.column == column)
                .ok_or_else(|| fail("an ordering term of no orderable column".to_owned()))?;
            let repeated = (column, extra.desc, *pick(&extra.name, orderable.names));
            let position = at.index(resolved.len() + 1);
            resolved.insert(position, repeated);
            let mut pairs = vec![("ordering".to_owned(), ordering_value(&resolved))];
            if let Some(limit) = limit {
                pairs.push(("limit".to_owned(), limit.to_string()));
            }
            let pairs: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let uri = url(model.path, &pairs);
            let resp = app.get(&uri).await;
            let text = String::from_utf8_lossy(&resp.body).into_owned();
            prop_assert_eq!(resp.code(), 400, "GET {}: body {}", uri, text);
            prop_assert_eq!(
                resp.header("content-type"),
                Some("application/json"),
                "GET {}",
                uri
            );
            let body: Value = serde_json::from_str(&text)
                .map_err(|e| fail(format!("GET {uri}: not JSON ({e}): {text}")))?;
            let message = body["error"].as_str().unwrap_or_default();
            prop_assert!(
                message.contains("'ordering'"),
                "GET {}: the error should name 'ordering': {}",
                uri,
                text
            );
            Ok(())
        },
    )
    .await;
}

/// One character lower-cased to one character: the case `ilike` compares in.
fn fold(text: &str) -> String {
    text.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}
