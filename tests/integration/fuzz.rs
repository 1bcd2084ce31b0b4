//! Fuzz tests: proptest as a bounded fuzzer over the whole HTTP stack of the test application
//! (docs/contract.md: errors, accounts, admin, bounded cost). Each property sends arbitrary
//! input to one decoder and asserts that nothing panics, that nothing answers 5xx, and that
//! every 4xx under a REST prefix is a JSON `{"error": "..."}` body (docs/contract.md#errors),
//! or exactly the 401 of docs/contract.md#authentication.
//!
//! - `query_strings_never_break_lists`: the query-string parser and filter compiler;
//! - `cursors_never_break_keyset_pages`: the keyset cursor decoder;
//! - `json_bodies_never_break_writes`: the JSON body decoder (POST, PUT, PATCH);
//! - `form_and_multipart_bodies_never_break_writes`: the urlencoded and multipart decoders;
//! - `forged_sessions_and_csrf_tokens_never_log_in`: the session cookie and CSRF checks of the
//!   login view and the admin.
//!
//! Beside those, every request must answer within [`REQUEST_TIMEOUT`] (bounded cost), no body
//! may hold a bcrypt hash, a 200 list is the list envelope, a successful write never stores
//! U+0000, a cursor page never wraps around, the login POST is 403 without its own session's
//! CSRF token, and a forged or tampered session cookie never reaches the admin (302 to the login
//! page, and an admin POST writes nothing).
//!
//! Each property runs `PROPTEST_CASES` cases ([`DEFAULT_CASES`] when unset) on one application,
//! and shrinks a failure to a minimal input, which the panic message shows with the seed that
//! reproduces the run (`PROPTEST_RNG_SEED`). A longer run:
//! `PROPTEST_CASES=20000 cargo test -p plover-tests --test integration fuzz`.

use std::fmt::Debug;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use actix_web::http::header::HeaderValue;
use actix_web::http::{Method, Uri};
use actix_web::test::TestRequest;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use plover_tests::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use serde_json::Value;

// --- the driver -------------------------------------------------------------------------------

/// Cases per property when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 200;
/// Shrink steps after a failure when `PROPTEST_MAX_SHRINK_ITERS` is not set.
const DEFAULT_SHRINK_ITERS: u32 = 2_000;
/// Time spent shrinking one failure, at most, when `PROPTEST_MAX_SHRINK_TIME` (milliseconds) is
/// not set.
const DEFAULT_SHRINK_TIME: Duration = Duration::from_secs(120);

/// proptest's configuration from the environment (`PROPTEST_*`), with this file's defaults, and
/// a fixed seed (random unless `PROPTEST_RNG_SEED` is set) so that a failure names its seed.
fn config() -> (Config, u64) {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = DEFAULT_CASES;
    }
    if std::env::var_os("PROPTEST_MAX_SHRINK_ITERS").is_none() {
        config.max_shrink_iters = DEFAULT_SHRINK_ITERS;
    }
    let seed = match config.rng_seed {
        RngSeed::Fixed(seed) => seed,
        RngSeed::Random => {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(Instant::now())
        }
    };
    config.rng_seed = RngSeed::Fixed(seed);
    // The runner is driven by hand (below): there is no source file to persist failures next to.
    config.failure_persistence = None;
    (config, seed)
}

/// A future that turns a panic while polling `F` into an error carrying the panic's message.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(move || inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_owned());
                Poll::Ready(Err(format!("PANIC: {message}")))
            }
        }
    }
}

/// Runs `check` on one input; a panic anywhere in it (the application's or the check's) is a
/// failure.
async fn attempt<V, F, Fut>(check: &F, input: V) -> Result<(), String>
where
    F: Fn(V) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    CatchUnwind(Box::pin(check(input))).await.and_then(|r| r)
}

/// At most `max` characters of `text`.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}... ({} bytes in all)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

/// The property `name`: `check` holds for every generated input. proptest's runner generates
/// the inputs and shrinks a failing one; the async check runs on the test's own runtime (the
/// application is not `Send`, so proptest's synchronous `run` does not fit).
async fn fuzz<S, F, Fut>(name: &str, strategy: S, check: F)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(S::Value) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let (config, seed) = config();
    let mut runner = TestRunner::new(config.clone());
    // Printed first: a run that aborts (a stack overflow) can still be reproduced.
    eprintln!(
        "fuzz property `{name}`: {} cases, PROPTEST_RNG_SEED={seed}",
        config.cases
    );
    let started = Instant::now();
    for case in 1..=config.cases {
        let mut tree = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{name}: the strategy generates nothing: {e}"));
        let Err(first) = attempt(&check, tree.current()).await else {
            continue;
        };
        let original = format!("{:?}", tree.current());
        let mut minimal = (original.clone(), first);
        let shrink_started = Instant::now();
        let mut steps = 0;
        let max_shrink_time = if std::env::var_os("PROPTEST_MAX_SHRINK_TIME").is_some() {
            Duration::from_millis(config.max_shrink_time.into())
        } else {
            DEFAULT_SHRINK_TIME
        };
        if tree.simplify() {
            while steps < config.max_shrink_iters && shrink_started.elapsed() < max_shrink_time {
                steps += 1;
                match attempt(&check, tree.current()).await {
                    Err(why) => {
                        minimal = (format!("{:?}", tree.current()), why);
                        if !tree.simplify() {
                            break;
                        }
                    }
                    Ok(()) => {
                        if !tree.complicate() {
                            break;
                        }
                    }
                }
            }
        }
        panic!(
            "fuzz property `{name}` failed at case {case} of {} (PROPTEST_RNG_SEED={seed}, \
             {steps} shrink steps)\n\
             minimal input: {}\n\
             failure: {}\n\
             original input: {}",
            config.cases,
            clip(&minimal.0, 4_000),
            clip(&minimal.1, 4_000),
            clip(&original, 1_000),
        );
    }
    eprintln!(
        "fuzz property `{name}`: {} cases passed in {:.1?} (PROPTEST_RNG_SEED={seed})",
        config.cases,
        started.elapsed()
    );
}

// --- what every response must satisfy ---------------------------------------------------------

/// How long one request may take before the property fails (docs/contract.md#bounded-cost).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves one request; a response that does not come within [`REQUEST_TIMEOUT`] is a failure.
async fn send(app: &TestApp, req: TestRequest, request: &str) -> Result<Resp, String> {
    actix_web::rt::time::timeout(REQUEST_TIMEOUT, app.send(req))
        .await
        .map_err(|_| {
            format!(
                "no response within {REQUEST_TIMEOUT:?}\nrequest: {}",
                clip(request, 2_000)
            )
        })
}

/// Whether `uri` is under a REST prefix of the test application.
fn is_rest(uri: &str) -> bool {
    ["/api/", "/v2/", "/small/"]
        .iter()
        .any(|prefix| uri.starts_with(prefix))
}

/// A failure: the request, the status, the content type and (the start of) the body.
fn failure(request: &str, resp: &Resp, why: &str) -> String {
    format!(
        "{why}\nrequest: {}\nresponse: {} content-type {:?}, body: {}",
        clip(request, 2_000),
        resp.code(),
        resp.header("content-type"),
        clip(&String::from_utf8_lossy(&resp.body), 1_000)
    )
}

/// No 5xx anywhere, and no bcrypt hash in any body (secrets are never readable:
/// docs/contract.md#security); under a REST prefix, every 4xx is the exact 401
/// (docs/contract.md#authentication) or a JSON error body (docs/contract.md#errors): an object
/// whose `error` is a non-empty string, with at most `fields` or `items` beside it.
fn check_response(uri: &str, request: &str, resp: &Resp) -> Result<(), String> {
    let status = resp.code();
    let fail = |why: &str| Err(failure(request, resp, why));
    if status >= 500 {
        return fail("a 5xx status");
    }
    if ["$2a$", "$2b$", "$2y$"]
        .iter()
        .any(|h| resp.body.windows(4).any(|w| w == h.as_bytes()))
    {
        return fail("a bcrypt hash in the body");
    }
    if !is_rest(uri) || !(400..500).contains(&status) {
        return Ok(());
    }
    if status == 401 {
        let exact = resp.header("www-authenticate") == Some(r#"Basic realm="Login Required""#)
            && resp.header("content-type") == Some("text/html; charset=utf-8")
            && resp.body.as_ref() == b"Authentication failed";
        return if exact {
            Ok(())
        } else {
            fail("a 401 that is not the exact one of docs/contract.md")
        };
    }
    if resp.header("content-type") != Some("application/json") {
        return fail("a 4xx without the JSON content type");
    }
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(&resp.body) else {
        return fail("a 4xx whose body is not a JSON object");
    };
    if body
        .get("error")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return fail("a 4xx JSON body without a non-empty string `error`");
    }
    if let Some(key) = body
        .keys()
        .find(|k| !["error", "fields", "items"].contains(&k.as_str()))
    {
        return fail(&format!("a 4xx JSON body with the key {key:?}"));
    }
    if body.get("fields").is_some_and(|f| !f.is_object())
        || body.get("items").is_some_and(|i| !i.is_object())
    {
        return fail("`fields` or `items` that is not an object");
    }
    Ok(())
}

/// A successful write never stores or echoes U+0000 (a text value holding it is a 400 on both
/// engines: docs/contract.md#bounded-cost).
fn check_no_nul_written(request: &str, resp: &Resp) -> Result<(), String> {
    let echoed = resp.body.contains(&0)
        || resp
            .body
            .windows(6)
            .any(|w| w.eq_ignore_ascii_case(b"\\u0000"));
    if resp.status.is_success() && echoed {
        return Err(failure(request, resp, "a 2xx write that accepted U+0000"));
    }
    Ok(())
}

/// A 200 list response is the list envelope (docs/contract.md#lists).
fn check_list_envelope(request: &str, resp: &Resp) -> Result<Value, String> {
    let body: Value = serde_json::from_slice(&resp.body)
        .map_err(|e| failure(request, resp, &format!("a 200 list that is not JSON ({e})")))?;
    let meta = &body["meta"];
    let ok = resp.header("content-type") == Some("application/json")
        && body["objects"].is_array()
        && meta["model"].is_string()
        && meta["page"].is_i64()
        && meta["previous"].is_string()
        && meta["next"].is_string();
    if ok {
        Ok(body)
    } else {
        Err(failure(
            request,
            resp,
            "a 200 list that is not the envelope",
        ))
    }
}

// --- the application's data ---------------------------------------------------------------------

/// The password of every seeded user.
const PW: &str = "pw";

/// Rows in every table the properties reach (users are created before, ids 1 to 3).
const SEED: &str = r#"
INSERT INTO amodel (id, a_field) VALUES (1, 'a1'), (2, 'a2'), (3, 'été');
INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, 'b1'), (2, 2, 'b2');
INSERT INTO cmodel (id, b_id, c_field) VALUES (1, 1, 'c1'), (2, 2, 'c%_2');
INSERT INTO dmodel (id, c_id, d_field) VALUES (1, 1, 'd1'), (2, 2, 'd2');
INSERT INTO emodel (id, e_field) VALUES (1, 'e1'), (2, 'private');
INSERT INTO fmodel (id, e_id, f_field) VALUES (1, 1, 'f1'), (2, NULL, 'f2');
INSERT INTO hmodel (id, a_id, h_field, h_date, h_day) VALUES
    (1, 1, 'h1', '2020-01-01 10:00:00', '2020-01-01'),
    (2, NULL, 'locked', '2021-06-01 00:00:00', NULL),
    (3, 2, 'private', NULL, NULL);
INSERT INTO apikey (id, key, secret) VALUES (1, 'k', 's');
INSERT INTO note (id, message, created) VALUES (1, 'n1', '2020-01-01 00:00:00');
INSERT INTO message (id, user_id, content, pub_date) VALUES
    (1, 1, 'hello', '2020-01-01 00:00:00'), (2, 2, 'ÉTÉ', '2020-01-02 00:00:00');
INSERT INTO relationship (id, from_user_id, to_user_id) VALUES (1, 1, 2);
INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
    (1, 's1', 3, 9223372036854775807, 1.5, TRUE, 'x', NULL, '2020-01-01', '2020-01-01 00:00:00'),
    (2, 's2', 1, -9223372036854775808, -0.5, FALSE, '', 'r', NULL, '2020-01-01 00:00:01'),
    (3, 's3', 3, 0, 0, TRUE, 'été', 'ÉTÉ', '2000-02-29', '1999-12-31 23:59:59'),
    (4, 's4', 2147483647, 1, 1e300, FALSE, '%', '_', '9999-12-31', '2020-01-01 00:00:00'),
    (5, 's5', -2147483648, 2, -1e300, TRUE, 'b', 'a', '0001-01-01', '2020-06-01 12:00:00'),
    (6, 's6', 0, 3, 2.5, FALSE, 'c', NULL, NULL, '2020-01-01 00:00:00'),
    (7, 's7', 7, 4, 3.5, TRUE, 'd', 'z', '2020-01-02', '2020-01-02 00:00:00'),
    (8, 's8', 8, 5, 4.5, FALSE, 'e', 'y', '2020-01-03', '2020-01-03 00:00:00'),
    (9, 's9', 9, 6, 5.5, TRUE, 'f', 'x', '2020-01-04', '2020-01-04 00:00:00'),
    (10, 's10', 10, 7, 6.5, FALSE, 'g', 'w', '2020-01-05', '2020-01-05 00:00:00');
"#;

/// The test application with users `alice` (1), `root` (2, admin) and `carol` (3), and
/// [`SEED`].
async fn seeded_app() -> TestApp {
    let app = TestApp::new().await;
    app.user("alice", PW);
    app.user_with("root", PW, true, true);
    app.user("carol", PW);
    app.sql(SEED);
    app
}

// --- encoding ---------------------------------------------------------------------------------

/// Percent-encodes bytes for a URI query or a form body: unreserved characters and `,` stay,
/// a space is `+` when `plus` is set, every other byte is `%XX`.
fn pct(bytes: &[u8], plus: bool) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b',' => {
                out.push(b as char)
            }
            b' ' if plus => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Percent-encodes every byte, letters included (`a` is `%61`).
fn pct_all(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

/// An encoded query component from raw bytes, in one of three encodings.
fn encoded(bytes: impl Strategy<Value = Vec<u8>> + 'static) -> BoxedStrategy<String> {
    (bytes, 0..8u8)
        .prop_map(|(b, how)| match how {
            0 => pct_all(&b),
            1..=3 => pct(&b, false),
            _ => pct(&b, true),
        })
        .boxed()
}

/// Arbitrary text: any characters (controls, U+0000 and non-ASCII included).
fn text(max: usize) -> BoxedStrategy<String> {
    vec(any::<char>(), 0..max)
        .prop_map(String::from_iter)
        .boxed()
}

/// Arbitrary raw bytes (U+0000 and invalid UTF-8 included).
fn bytes(max: usize) -> BoxedStrategy<Vec<u8>> {
    vec(any::<u8>(), 0..max).boxed()
}

// --- 1. query strings -----------------------------------------------------------------------------

/// Sample's columns.
const SAMPLE_FIELDS: &[&str] = &[
    "id", "name", "qty", "big", "ratio", "flag", "body", "remark", "day", "stamp",
];

/// List endpoints with filters, joins, exclusions and filter rules, and the names a filter on
/// each may start with (own fields and join paths, allowed or not).
const LISTS: &[(&str, &[&str])] = &[
    ("/api/sample/", SAMPLE_FIELDS),
    ("/api/cursor/", SAMPLE_FIELDS),
    ("/api/lean/", SAMPLE_FIELDS),
    (
        "/api/message/",
        &[
            "id",
            "user",
            "user_id",
            "content",
            "pub_date",
            "user__username",
            "user__active",
            "user__join_date",
            "user__id",
            "user__password",
            "user__email",
        ],
    ),
    (
        "/api/cmodel/",
        &[
            "id",
            "b",
            "b_id",
            "c_field",
            "b__b_field",
            "b__a",
            "b__a__a_field",
            "b__a__id",
        ],
    ),
    (
        "/api/fmodel/",
        &["id", "e", "e_id", "f_field", "e__e_field", "e__id"],
    ),
    (
        "/api/hmodel/",
        &[
            "id",
            "h_field",
            "h_date",
            "h_day",
            "a",
            "a_id",
            "a__a_field",
        ],
    ),
    (
        "/api/user/",
        &[
            "id",
            "username",
            "active",
            "admin",
            "join_date",
            "password",
            "email",
        ],
    ),
    (
        "/api/dchain/",
        &[
            "id",
            "c",
            "c_id",
            "d_field",
            "c__c_field",
            "c__b__b_field",
            "c__b__a__a_field",
            "c__b__a",
        ],
    ),
    (
        "/api/relationship/",
        &[
            "id",
            "from_user",
            "to_user",
            "from_user__username",
            "to_user__username",
            "to_user__password",
            "from_user__email",
        ],
    ),
    (
        "/api/msgff/",
        &["id", "content", "user__username", "user__email", "user"],
    ),
    ("/api/scoped/", &["id", "a_field"]),
];

/// Field names of all the models behind [`LISTS`], and a few that exist nowhere.
const FIELDS: &[&str] = &[
    "id",
    "name",
    "qty",
    "big",
    "ratio",
    "flag",
    "body",
    "remark",
    "day",
    "stamp",
    "user",
    "user_id",
    "content",
    "pub_date",
    "username",
    "password",
    "email",
    "active",
    "admin",
    "join_date",
    "from_user",
    "from_user_id",
    "to_user",
    "to_user_id",
    "a",
    "a_id",
    "a_field",
    "b",
    "b_id",
    "b_field",
    "c",
    "c_id",
    "c_field",
    "d_field",
    "e",
    "e_id",
    "e_field",
    "f_field",
    "h_field",
    "h_date",
    "h_day",
    "pk",
    "ID",
    "",
];

/// Filter operators, and a few that do not exist.
const OPS: &[&str] = &[
    "eq", "lt", "lte", "gt", "gte", "ne", "in", "is", "like", "ilike", "bogus", "EQ", "", "__",
];

/// Reserved query parameters.
const RESERVED: &[&str] = &[
    "ordering", "limit", "page", "cursor", "key", "secret", "count", "fields", "q",
];

/// Values that parse, nearly parse or sit on a boundary of some field type.
const VALUES: &[&str] = &[
    "1",
    "0",
    "-1",
    "+5",
    " 5",
    "5 ",
    "0x10",
    "1_000",
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "99999999999999999999999999999999999999",
    "1.5",
    "-0.0",
    "1e308",
    "1e309",
    "-1e309",
    "4.9e-324",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "infinity",
    "true",
    "false",
    "True",
    "False",
    "TRUE",
    "yes",
    "null",
    "none",
    "None",
    "NULL",
    "2020-01-01",
    "2020-01-01 00:00:00",
    "2020-01-01T00:00:00",
    "2020-01-01T00:00:00.123456789",
    "2020-01-01T00:00:00.1234567890123",
    "2020-01-01T00:00:00Z",
    "2020-01-01T00:00:00+01:00",
    "2020-02-30",
    "2020-13-01",
    "0000-00-00",
    "9999-12-31 23:59:59",
    "+10000-01-01",
    "-0001-01-01",
    "262143-12-31",
    "1-1-1",
    "",
    ",",
    ",,",
    "1,2,3",
    "1,,2",
    "%",
    "%%",
    "_",
    "%_%",
    "a%b_c",
    "\\",
    "%\\%",
    "é",
    "ÉTÉ",
    "%ÉTÉ%",
    "\u{0}",
    "a\u{0}b",
    "\u{feff}",
    "id",
    "-id",
    "qty,qty",
    "-id,id",
    "user__username",
    "user__password",
    "-user__password",
    "exact",
    "estimated",
    "id,name",
    "user.username",
    "k",
    "s",
];

/// A filter or reserved key, encoded.
fn query_key() -> BoxedStrategy<String> {
    let field_op =
        (select(FIELDS), proptest::option::of(select(OPS))).prop_map(|(f, op)| match op {
            Some(op) => format!("{f}__{op}"),
            None => f.to_owned(),
        });
    let path =
        (vec(select(FIELDS), 2..6), proptest::option::of(select(OPS))).prop_map(|(fields, op)| {
            let mut key = fields.join("__");
            if let Some(op) = op {
                key = format!("{key}__{op}");
            }
            key
        });
    prop_oneof![
        6 => encoded(field_op.prop_map(String::into_bytes)),
        3 => encoded(path.prop_map(String::into_bytes)),
        3 => encoded(select(RESERVED).prop_map(|r| r.as_bytes().to_vec())),
        1 => encoded(text(12).prop_map(String::into_bytes)),
        1 => encoded(bytes(12)),
    ]
    .boxed()
}

/// A filter value, encoded: typed values, `in` lists, LIKE patterns, long and random values.
fn query_value() -> BoxedStrategy<String> {
    let in_list = vec(
        prop_oneof![
            select(VALUES).prop_map(str::to_owned),
            any::<i64>().prop_map(|i| i.to_string())
        ],
        0..1_500,
    )
    .prop_map(|items| items.join(","));
    let pattern = vec(
        select(&["%", "_", "a", "é", "\\", "%%", "ÉTÉ", "%a%"][..]),
        0..8_000,
    )
    .prop_map(|parts| parts.concat());
    // Up to LONG characters, as many as fit in a URI once encoded.
    let long = (
        prop_oneof![4 => proptest::char::range('a', 'z'), 1 => any::<char>()],
        0..LONG,
    )
        .prop_map(|(c, n)| {
            let encoded = pct(c.to_string().as_bytes(), false).len();
            c.to_string().repeat(n.min(MAX_URI_BYTES / 2 / encoded))
        });
    prop_oneof![
        8 => encoded(select(VALUES).prop_map(|v| v.as_bytes().to_vec())),
        3 => encoded(any::<i64>().prop_map(|i| i.to_string().into_bytes())),
        2 => encoded(any::<f64>().prop_map(|f| f.to_string().into_bytes())),
        3 => encoded(text(24).prop_map(String::into_bytes)),
        3 => encoded(bytes(24)),
        1 => encoded(in_list.prop_map(String::into_bytes)),
        1 => encoded(pattern.prop_map(String::into_bytes)),
        1 => encoded(long.prop_map(String::into_bytes)),
    ]
    .boxed()
}

/// Pieces of a query string that are not well-formed pairs (stray `%`, `=`, `&`).
const JUNK: &[&str] = &[
    "",
    "=",
    "==",
    "&",
    "%",
    "%0",
    "%G0",
    "%zz",
    "%%",
    "+",
    "=%",
    "%=%",
    "a=%",
    "%00=%00",
    "%C0%80",
    "%ED%A0%80",
    "%FF%FE",
    "ordering",
    "page=",
    "limit=",
    "cursor=",
    "key=k&secret=s",
];

/// A value of this kind as text (a filter value): [`typed_json`], strings unquoted.
fn typed_text(kind: Kind) -> BoxedStrategy<String> {
    typed_json(kind, 5_000)
        .prop_map(|json| match serde_json::from_str::<Value>(&json) {
            Ok(Value::String(text)) => text,
            _ => json,
        })
        .boxed()
}

/// A filter on one of `fields` (the list's own names, join paths included), mostly with a real
/// operator and a value of the field's type (the kind of the path's last name), encoded.
fn own_filter(fields: &'static [&'static str]) -> BoxedStrategy<String> {
    let op = prop_oneof![
        2 => Just(None),
        4 => select(&OPS[..10]).prop_map(Some),
        1 => select(OPS).prop_map(Some),
    ];
    (select(fields), op)
        .prop_flat_map(|(field, op)| {
            let kind = key_kind(field.rsplit("__").next().unwrap_or(field));
            let value: BoxedStrategy<String> = match op {
                Some("in") => prop_oneof![
                    4 => vec(typed_text(kind), 0..20).prop_map(|v| v.join(",")),
                    1 => query_value().prop_map(|v| percent_decode(&v)),
                ]
                .boxed(),
                Some("is") => {
                    select(&["null", "none", "true", "false", "NULL", "True", "x", ""][..])
                        .prop_map(str::to_owned)
                        .boxed()
                }
                Some("like" | "ilike") => prop_oneof![
                    3 => typed_text(kind),
                    1 => query_value().prop_map(|v| percent_decode(&v)),
                ]
                .boxed(),
                _ => prop_oneof![
                    4 => typed_text(kind),
                    1 => query_value().prop_map(|v| percent_decode(&v)),
                ]
                .boxed(),
            };
            let key = match op {
                Some(op) => format!("{field}__{op}"),
                None => field.to_owned(),
            };
            (Just(key), value)
        })
        .prop_map(|(key, value)| {
            format!(
                "{}={}",
                pct(key.as_bytes(), false),
                pct(value.as_bytes(), false)
            )
        })
        .boxed()
}

/// A reserved parameter with a value of roughly its kind (page numbers, orderings of `fields`,
/// sparse field lists, counts, search words).
fn reserved_pair(fields: &'static [&'static str]) -> BoxedStrategy<String> {
    let number = prop_oneof![
        4 => (1..30i64).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => select(VALUES).prop_map(str::to_owned),
    ];
    let names = vec((any::<bool>(), select(fields)), 0..4).prop_map(|names| {
        let names: Vec<String> = names
            .into_iter()
            .map(|(desc, f)| format!("{}{f}", if desc { "-" } else { "" }))
            .collect();
        names.join(",")
    });
    prop_oneof![
        (select(&["limit", "page"][..]), number)
            .prop_map(|(k, v)| format!("{k}={}", pct(v.as_bytes(), false))),
        names
            .clone()
            .prop_map(|v| format!("ordering={}", pct(v.as_bytes(), false))),
        names.prop_map(|v| format!("fields={}", pct(v.replace('-', "").as_bytes(), false))),
        select(&["exact", "estimated", "none", ""][..]).prop_map(|v| format!("count={v}")),
        text(12).prop_map(|v| format!("q={}", pct(v.as_bytes(), true))),
        (text(8), text(8)).prop_map(|(k, s)| format!(
            "key={}&secret={}",
            pct(k.as_bytes(), false),
            pct(s.as_bytes(), false)
        )),
    ]
    .boxed()
}

/// One `&`-separated piece of a query string on a list whose own names are `fields`.
fn query_piece(fields: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        10 => own_filter(fields),
        3 => reserved_pair(fields),
        3 => (query_key(), query_value()).prop_map(|(k, v)| format!("{k}={v}")),
        1 => query_key(),
        1 => query_key().prop_map(|k| format!("{k}=")),
        1 => (query_value(), 0..3usize).prop_map(|(v, n)| format!("{}{v}", "=".repeat(n))),
        1 => select(JUNK).prop_map(str::to_owned),
    ]
    .boxed()
}

/// The longest URI the generators make: `http::Uri` takes at most 65,534 bytes.
const MAX_URI_BYTES: usize = 60_000;

/// A list URI with an arbitrary query string: some pieces, and maybe one piece repeated up to
/// 200 times; pieces that would take the URI over [`MAX_URI_BYTES`] are left out.
fn list_uri() -> BoxedStrategy<String> {
    select(LISTS)
        .prop_flat_map(|(path, fields)| {
            (
                Just(path),
                vec(query_piece(fields), 0..7),
                proptest::option::weighted(0.2, (query_piece(fields), 1..200usize)),
            )
        })
        .prop_map(|(path, mut pieces, repeated)| {
            if let Some((piece, n)) = repeated {
                pieces.extend(std::iter::repeat_n(piece, n));
            }
            let mut uri = format!("{path}?");
            let mut first = true;
            for piece in pieces {
                if uri.len() + piece.len() + 1 > MAX_URI_BYTES {
                    continue;
                }
                if !first {
                    uri.push('&');
                }
                first = false;
                uri.push_str(&piece);
            }
            uri
        })
        .boxed()
}

/// A GET of `uri`, checked as every response is, and a 200 as a list envelope.
async fn get_list(app: &TestApp, uri: String) -> Result<(), String> {
    Uri::try_from(uri.as_str()).map_err(|e| format!("the generator made an invalid URI ({e})"))?;
    let resp = send(app, TestRequest::get().uri(&uri), &format!("GET {uri}")).await?;
    check_response(&uri, &format!("GET {uri}"), &resp)?;
    if resp.code() == 200 {
        check_list_envelope(&format!("GET {uri}"), &resp)?;
    }
    Ok(())
}

#[actix_web::test]
async fn query_strings_never_break_lists() {
    let app = seeded_app().await;
    // The checks can fail: a well-formed filter lists, a bad one is a JSON 400.
    get_list(&app, "/api/sample/?qty__in=1,3&ordering=-name".into())
        .await
        .unwrap();
    assert_eq!(app.get("/api/sample/?qty__in=1,3").await.ids(), [1, 2, 3]);
    assert_param_error(&app.get("/api/sample/?qty=abc").await, "qty");
    fuzz("query_strings_never_break_lists", list_uri(), |uri| {
        get_list(&app, uri)
    })
    .await;
}

// --- typed values --------------------------------------------------------------------------------

/// The type of a column, for values that are mostly of the right type.
#[derive(Debug, Clone, Copy)]
enum Kind {
    I32,
    I64,
    F64,
    Bool,
    Text,
    Day,
    Stamp,
    /// A foreign key (a 32-bit integer naming a row, or not).
    Fk,
    /// A password: text, sometimes over bcrypt's 72 bytes.
    Password,
}

/// A JSON value for a column of this kind: mostly well-typed (in range, or on its edge), and
/// sometimes out of range, of the wrong type, U+0000 in text, text up to `long` characters, or
/// anything.
fn typed_json(kind: Kind, long: usize) -> BoxedStrategy<String> {
    let string = |s: String| Value::String(s).to_string();
    let good: BoxedStrategy<String> = match kind {
        Kind::I32 => prop_oneof![
            3 => (-3..15i32).prop_map(|i| i.to_string()),
            2 => any::<i32>().prop_map(|i| i.to_string()),
            1 => select(&["2147483647", "-2147483648", "2147483648", "-2147483649", "9223372036854775807", "1e400", "3.0", "\"3\""][..]).prop_map(str::to_owned),
        ]
        .boxed(),
        Kind::Fk => prop_oneof![
            4 => (0..5i32).prop_map(|i| i.to_string()),
            1 => any::<i32>().prop_map(|i| i.to_string()),
            1 => select(&["null", "2147483648", "-1", "\"1\"", "{\"id\":1}", "[1]"][..]).prop_map(str::to_owned),
        ]
        .boxed(),
        Kind::I64 => prop_oneof![
            3 => any::<i64>().prop_map(|i| i.to_string()),
            1 => select(&["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "18446744073709551615", "1e19", "1e400"][..]).prop_map(str::to_owned),
        ]
        .boxed(),
        Kind::F64 => prop_oneof![
            3 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:e}")),
            1 => (-100..100i32).prop_map(|i| i.to_string()),
            1 => select(&["1e308", "-1.7976931348623157e308", "4.9e-324", "1e309", "-0.0", "1E-400", "\"NaN\"", "\"inf\""][..]).prop_map(str::to_owned),
        ]
        .boxed(),
        Kind::Bool => prop_oneof![
            4 => any::<bool>().prop_map(|b| b.to_string()),
            1 => select(&["0", "1", "\"true\"", "\"False\""][..]).prop_map(str::to_owned),
        ]
        .boxed(),
        Kind::Text => prop_oneof![
            4 => proptest::string::string_regex("[a-zA-Z0-9 %_éÉ]{0,12}").expect("a regex").prop_map(string),
            2 => text(16).prop_map(string),
            1 => (text(4), text(4)).prop_map(move |(a, b)| string(format!("{a}\u{0}{b}"))),
            1 => (any::<char>(), 0..long).prop_map(move |(c, n)| string(c.to_string().repeat(n))),
        ]
        .boxed(),
        Kind::Password => prop_oneof![
            3 => proptest::string::string_regex("[a-zA-Z0-9]{0,12}").expect("a regex").prop_map(string),
            1 => (70..80usize).prop_map(move |n| string("p".repeat(n))),
            1 => text(40).prop_map(string),
        ]
        .boxed(),
        Kind::Day | Kind::Stamp => {
            let time = matches!(kind, Kind::Stamp);
            let date = (
                prop_oneof![4 => 1..10_000i32, 1 => any::<i32>()],
                prop_oneof![4 => 1..13u32, 1 => 0..100u32],
                prop_oneof![4 => 1..29u32, 1 => 0..100u32],
            )
                .prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"));
            let clock = (0..25u32, 0..61u32, 0..61u32, proptest::option::of(0..u32::MAX))
                .prop_map(|(h, m, s, frac)| match frac {
                    Some(f) => format!("{h:02}:{m:02}:{s:02}.{f}"),
                    None => format!("{h:02}:{m:02}:{s:02}"),
                });
            prop_oneof![
                4 => (date, clock, select(&[" ", "T", "  ", "t"][..]), any::<bool>()).prop_map(
                    move |(d, c, sep, with_time)| {
                        if time && with_time {
                            string(format!("{d}{sep}{c}"))
                        } else {
                            string(d)
                        }
                    }
                ),
                1 => select(&["\"2020-01-01 00:00:00\"", "\"2020-02-30\"", "\"+262143-12-31\"", "\"2020-01-01T00:00:00Z\"", "\"\"", "20200101", "null"][..]).prop_map(str::to_owned),
            ]
            .boxed()
        }
    };
    prop_oneof![
        8 => good,
        1 => select(JSON_LEAVES).prop_map(str::to_owned),
        1 => json_text(&["id"], 100),
    ]
    .boxed()
}

/// The kind of a body key of the models that the writes reach.
fn key_kind(key: &str) -> Kind {
    match key {
        "id" | "qty" => Kind::I32,
        "big" => Kind::I64,
        "ratio" => Kind::F64,
        "flag" | "active" | "admin" => Kind::Bool,
        "day" | "h_day" => Kind::Day,
        "stamp" | "h_date" | "pub_date" | "join_date" | "created" => Kind::Stamp,
        "a" | "a_id" | "b" | "b_id" | "c" | "c_id" | "e" | "e_id" | "user" | "user_id"
        | "from_user" | "from_user_id" | "to_user" | "to_user_id" => Kind::Fk,
        "password" => Kind::Password,
        _ => Kind::Text,
    }
}

// --- 2. keyset cursors ------------------------------------------------------------------------------

/// Orderings of `/api/cursor/` (keyset pagination, 3 a page) and the kinds of the values of
/// their cursors (the primary key last); nullable columns (no keyset) included.
const CURSOR_ORDERINGS: &[(&str, &[Kind])] = {
    use Kind::*;
    &[
        ("", &[I32]),
        ("id", &[I32]),
        ("-id", &[I32]),
        ("qty", &[I32, I32]),
        ("-qty", &[I32, I32]),
        ("name", &[Text, I32]),
        ("-name", &[Text, I32]),
        ("big", &[I64, I32]),
        ("-big", &[I64, I32]),
        ("ratio", &[F64, I32]),
        ("-ratio", &[F64, I32]),
        ("flag", &[Bool, I32]),
        ("-flag", &[Bool, I32]),
        ("stamp", &[Stamp, I32]),
        ("-stamp", &[Stamp, I32]),
        ("body", &[Text, I32]),
        ("qty,-name", &[I32, Text, I32]),
        ("-big,ratio,flag,stamp", &[I64, F64, Bool, Stamp, I32]),
        ("-stamp,-id", &[Stamp, I32]),
        ("remark", &[Text, I32]),
        ("day", &[Day, I32]),
    ]
};

/// Page numbers of a cursor, as JSON text.
const CURSOR_PAGES: &[&str] = &[
    "2",
    "3",
    "1",
    "0",
    "-1",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "1e400",
    "2.0",
    "2.5",
    "\"2\"",
    "null",
    "[]",
    "{}",
    "true",
];

/// JSON scalars on the boundaries of the columns a cursor holds.
const JSON_LEAVES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "3",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "1e400",
    "-1e400",
    "1E-400",
    "1.5",
    "-0.0",
    "1e308",
    "-1.7976931348623157e308",
    "4.9e-324",
    "\"\"",
    "\"s1\"",
    "\"\\u0000\"",
    "\"a\\u0000b\"",
    "\"\\ud800\"",
    "\"\\udc00\\ud800\"",
    "\"2020-01-01\"",
    "\"2020-01-01 00:00:00\"",
    "\"2020-01-01T00:00:00.999999999\"",
    "\"9999-12-31 23:59:59\"",
    "\"+262143-01-01\"",
    "\"2020-02-30\"",
    "\"1\"",
    "\"true\"",
    "\"nan\"",
    "\"inf\"",
    "\"été\"",
    "\"%\"",
    "[]",
    "{}",
];

/// A JSON text: boundary scalars, random numbers and strings (some up to `long` characters),
/// and nested arrays and objects whose keys are `keys` (not empty) or random.
fn json_text(keys: &'static [&'static str], long: usize) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        6 => select(JSON_LEAVES).prop_map(str::to_owned),
        2 => any::<i64>().prop_map(|i| i.to_string()),
        1 => any::<u64>().prop_map(|u| u.to_string()),
        1 => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        2 => text(16).prop_map(|s| Value::String(s).to_string()),
        1 => (any::<char>(), 0..long)
            .prop_map(|(c, n)| Value::String(c.to_string().repeat(n)).to_string()),
    ];
    let key = prop_oneof![
        4 => select(keys).prop_map(|k| Value::String(k.to_owned()).to_string()),
        1 => text(8).prop_map(|k| Value::String(k).to_string()),
    ];
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(|items| format!("[{}]", items.join(","))),
            vec((key.clone(), inner), 0..8).prop_map(|pairs| {
                let pairs: Vec<String> =
                    pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", pairs.join(","))
            }),
        ]
    })
    .boxed()
}

/// A cursor token for an ordering whose values have these kinds: mostly the JSON
/// `[page, [value, ...]]` with one value per kind (sometimes one too few or too many), in
/// base64url (sometimes the padded standard alphabet); or other JSON, random bytes, random text.
fn cursor_token(kinds: &'static [Kind]) -> BoxedStrategy<String> {
    let page = prop_oneof![
        5 => (2..12i64).prop_map(|i| i.to_string()),
        2 => select(CURSOR_PAGES).prop_map(str::to_owned),
        1 => any::<i64>().prop_map(|i| i.to_string()),
    ];
    let values: Vec<BoxedStrategy<String>> = kinds.iter().map(|k| typed_json(*k, 2_000)).collect();
    let count = prop_oneof![8 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)];
    let shaped = (page, values, count, typed_json(Kind::I32, 2_000)).prop_map(
        |(page, mut values, count, extra)| {
            match count {
                -1 => {
                    values.pop();
                }
                1 => values.push(extra),
                _ => {}
            }
            format!("[{page},[{}]]", values.join(","))
        },
    );
    let json = prop_oneof![
        8 => shaped,
        1 => json_text(&["page", "id"], 100),
        1 => (vec(json_text(&["0"], 100), 0..4)).prop_map(|items| format!("[{}]", items.join(","))),
    ];
    let raw = prop_oneof![
        8 => json.prop_map(String::into_bytes),
        1 => bytes(64),
    ];
    prop_oneof![
        10 => (raw, prop_oneof![6 => Just(false), 1 => Just(true)]).prop_map(|(raw, padded)| if padded {
            STANDARD.encode(raw)
        } else {
            URL_SAFE_NO_PAD.encode(raw)
        }),
        1 => proptest::string::string_regex("[A-Za-z0-9_-]{0,80}").expect("a regex"),
        1 => proptest::string::string_regex("[A-Za-z0-9_=+/.%-]{0,80}").expect("a regex"),
    ]
    // ASCII, at most three bytes each once encoded: short enough for a URI.
    .prop_map(|token| token[..token.len().min(MAX_URI_BYTES / 4)].to_owned())
    .boxed()
}

/// The cursor page that a `next` link leads to, if it holds a cursor.
fn next_cursor_page(next: &str) -> Option<Value> {
    let (_, query) = next.split_once('?')?;
    let (_, token) = form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "cursor")?;
    let raw = URL_SAFE_NO_PAD.decode(token.as_bytes()).ok()?;
    let json: Value = serde_json::from_slice(&raw).ok()?;
    Some(json[0].clone())
}

/// A GET of `/api/cursor/` with this ordering and cursor: checked as every response is; a 200
/// is the envelope, its page is the cursor's (>= 2), and its `next` cursor leads to a page after
/// it (page numbers never wrap around).
async fn get_cursor(
    app: &TestApp,
    (ordering, extra, token): (&str, String, String),
) -> Result<(), String> {
    let mut uri = "/api/cursor/?".to_owned();
    if !ordering.is_empty() {
        uri.push_str(&format!("ordering={}&", pct(ordering.as_bytes(), false)));
    }
    uri.push_str(&extra);
    uri.push_str(&format!("cursor={}", pct(token.as_bytes(), false)));
    Uri::try_from(uri.as_str()).map_err(|e| format!("the generator made an invalid URI ({e})"))?;
    let request = format!("GET {uri}");
    let resp = send(app, TestRequest::get().uri(&uri), &request).await?;
    check_response(&uri, &request, &resp)?;
    if resp.code() != 200 {
        return Ok(());
    }
    let body = check_list_envelope(&request, &resp)?;
    let page = body["meta"]["page"].as_i64().unwrap_or(0);
    if page < 2 {
        return Err(failure(&request, &resp, "a cursor page numbered below 2"));
    }
    let next = body["meta"]["next"].as_str().unwrap_or_default();
    if let Some(next_page) = next_cursor_page(next) {
        if next_page.as_i64().is_none_or(|n| n <= page) {
            return Err(failure(
                &request,
                &resp,
                &format!("the next cursor's page {next_page} does not follow page {page}"),
            ));
        }
    }
    Ok(())
}

#[actix_web::test]
async fn cursors_never_break_keyset_pages() {
    let app = seeded_app().await;
    // The checks can fail: a real cursor pages, a forged one is a JSON 400.
    let first = app.get("/api/cursor/?ordering=-qty").await.json_with(200);
    let next = first["meta"]["next"].as_str().unwrap().to_owned();
    assert_eq!(next_cursor_page(&next), Some(Value::from(2)), "{next}");
    assert_eq!(app.get(&next).await.objects().len(), 3);
    let token = next.split("cursor=").nth(1).unwrap().to_owned();
    get_cursor(&app, ("-qty", String::new(), token))
        .await
        .unwrap();
    assert_param_error(&app.get("/api/cursor/?cursor=nope").await, "cursor");
    let strategy = select(CURSOR_ORDERINGS).prop_flat_map(|(ordering, kinds)| {
        (
            Just(ordering),
            prop_oneof![
                4 => Just(String::new()),
                1 => select(&["limit=1&", "limit=3&", "page=2&", "qty__gte=1&", "cursor=x&", "limit=0&"][..])
                    .prop_map(str::to_owned),
            ],
            cursor_token(kinds),
        )
    });
    fuzz("cursors_never_break_keyset_pages", strategy, |input| {
        get_cursor(&app, input)
    })
    .await;
}

// --- 3. JSON bodies ---------------------------------------------------------------------------------

/// A writable endpoint: method, URI, the user whose Basic credentials are sent (if any), and
/// the body keys of its model.
type Target = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
);

/// Body keys of the models that the writes reach.
const SAMPLE_KEYS: &[&str] = &[
    "name", "qty", "big", "ratio", "flag", "body", "remark", "day", "stamp", "id",
];
const A_KEYS: &[&str] = &["a_field", "id"];
const B_KEYS: &[&str] = &["a", "a_id", "b_field"];
const F_KEYS: &[&str] = &["e", "e_id", "f_field"];
const H_KEYS: &[&str] = &["a", "a_id", "h_field", "h_date", "h_day"];
const MESSAGE_KEYS: &[&str] = &["content", "pub_date", "user", "user_id"];
const NOTE_KEYS: &[&str] = &["message", "created"];
const USER_KEYS: &[&str] = &[
    "username",
    "password",
    "email",
    "join_date",
    "active",
    "admin",
];
const APIKEY_KEYS: &[&str] = &["key", "secret"];

/// Writable endpoints: open ones, owner and API-key resources, the users (as `root`), a
/// 64-byte body limit, a missing row, and verbs a path does not serve.
const WRITES: &[Target] = &[
    ("POST", "/api/sample/", None, SAMPLE_KEYS),
    ("POST", "/api/amodel/", None, A_KEYS),
    ("POST", "/api/bmodel/", None, B_KEYS),
    ("POST", "/api/fmodel/", None, F_KEYS),
    ("POST", "/api/hmodel/", None, H_KEYS),
    ("POST", "/api/message/", Some("alice"), MESSAGE_KEYS),
    ("POST", "/api/message/", None, MESSAGE_KEYS),
    ("POST", "/api/note/?key=k&secret=s", None, NOTE_KEYS),
    ("POST", "/api/user/", Some("root"), USER_KEYS),
    ("POST", "/api/apikey/", Some("root"), APIKEY_KEYS),
    ("POST", "/small/amodel/", None, A_KEYS),
    ("PUT", "/api/sample/1/", None, SAMPLE_KEYS),
    ("PATCH", "/api/sample/2/", None, SAMPLE_KEYS),
    ("PUT", "/api/amodel/1/", None, A_KEYS),
    ("PUT", "/api/bmodel/1/", None, B_KEYS),
    ("PUT", "/api/fmodel/1/", None, F_KEYS),
    ("PUT", "/api/hmodel/1/", None, H_KEYS),
    ("PUT", "/api/message/1/", Some("alice"), MESSAGE_KEYS),
    ("PUT", "/api/user/3/", Some("root"), USER_KEYS),
    ("PUT", "/api/sample/999/", None, SAMPLE_KEYS),
    ("POST", "/api/sample/1/", None, SAMPLE_KEYS),
    ("DELETE", "/api/sample/", None, SAMPLE_KEYS),
];

/// The keys of the models behind [`WRITES`], and a few that exist nowhere.
const BODY_KEYS: &[&str] = &[
    "id",
    "name",
    "qty",
    "big",
    "ratio",
    "flag",
    "body",
    "remark",
    "day",
    "stamp",
    "a",
    "a_id",
    "a_field",
    "b_field",
    "e",
    "e_id",
    "f_field",
    "h_field",
    "h_date",
    "h_day",
    "user",
    "user_id",
    "content",
    "pub_date",
    "message",
    "created",
    "username",
    "password",
    "email",
    "join_date",
    "active",
    "admin",
    "key",
    "secret",
    "owner",
    "",
    "ID",
    "__proto__",
];

/// The longest strings in bodies and filter values.
const LONG: usize = 20_000;

/// A request body: text or raw bytes.
#[derive(Debug, Clone)]
enum Body {
    Text(String),
    Bytes(Vec<u8>),
}

impl Body {
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Body::Text(t) => t.into_bytes(),
            Body::Bytes(b) => b,
        }
    }
}

/// A JSON object text whose keys are mostly [`BODY_KEYS`].
fn json_object() -> BoxedStrategy<String> {
    let key = prop_oneof![
        6 => select(BODY_KEYS).prop_map(str::to_owned),
        1 => text(8),
    ];
    vec((key, json_text(BODY_KEYS, LONG)), 0..10)
        .prop_map(|pairs| {
            let pairs: Vec<String> = pairs
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", Value::String(k)))
                .collect();
            format!("{{{}}}", pairs.join(","))
        })
        .boxed()
}

/// A JSON object text for a model with these keys: each key present or not, with a value that
/// is mostly of the key's type (so that many bodies are valid); sometimes unknown keys too.
fn typed_object(keys: &'static [&'static str]) -> BoxedStrategy<String> {
    let fields: Vec<_> = keys
        .iter()
        .map(|k| {
            proptest::option::weighted(0.6, typed_json(key_kind(k), LONG))
                .prop_map(move |v| v.map(|v| format!("{}:{v}", Value::String((*k).to_owned()))))
        })
        .collect();
    let unknown = prop_oneof![
        5 => Just(Vec::new()),
        1 => vec(
            (prop_oneof![select(BODY_KEYS).prop_map(str::to_owned), text(8)], json_text(BODY_KEYS, 100)),
            1..3,
        ),
    ];
    (fields, unknown)
        .prop_map(|(fields, unknown)| {
            let mut pairs: Vec<String> = fields.into_iter().flatten().collect();
            pairs.extend(
                unknown
                    .into_iter()
                    .map(|(k, v)| format!("{}:{v}", Value::String(k))),
            );
            format!("{{{}}}", pairs.join(","))
        })
        .boxed()
}

/// A body for the JSON decoder: objects for the target's model (mostly well-typed), objects
/// with known and unknown keys, any JSON, arrays of objects (bulk writes), deep nesting, and
/// arbitrary bytes.
fn json_body(keys: &'static [&'static str]) -> BoxedStrategy<Body> {
    let deep =
        (1..3_000usize, select(&["[", "{\"name\":", "{\"a\":["][..])).prop_map(|(depth, open)| {
            let close: String = open
                .chars()
                .rev()
                .filter_map(|c| match c {
                    '[' => Some(']'),
                    '{' => Some('}'),
                    _ => None,
                })
                .collect();
            format!("{}1{}", open.repeat(depth), close.repeat(depth))
        });
    prop_oneof![
        10 => typed_object(keys).prop_map(Body::Text),
        3 => json_object().prop_map(Body::Text),
        1 => json_text(BODY_KEYS, LONG).prop_map(Body::Text),
        2 => vec(typed_object(keys), 0..5).prop_map(|o| Body::Text(format!("[{}]", o.join(",")))),
        1 => deep.prop_map(Body::Text),
        1 => bytes(256).prop_map(Body::Bytes),
        1 => (typed_object(keys), bytes(8), 0..64usize).prop_map(|(o, junk, at)| {
            // A valid object with a few bytes spliced in.
            let mut raw = o.into_bytes();
            let at = at.min(raw.len());
            raw.splice(at..at, junk);
            Body::Bytes(raw)
        }),
    ]
    .boxed()
}

/// A request to one of [`WRITES`] with this content type and body.
fn write_request((method, uri, user, _): Target, content_type: &str, body: Vec<u8>) -> TestRequest {
    let method = Method::from_bytes(method.as_bytes()).expect("a method");
    let req = raw_request(method, uri, content_type, body);
    match user {
        Some(user) => req.insert_header(basic(user, PW)),
        None => req,
    }
}

/// Sends a write and checks its response.
async fn send_write(
    app: &TestApp,
    target: Target,
    content_type: &str,
    body: Vec<u8>,
) -> Result<(), String> {
    let request = format!(
        "{} {} (as {:?}), content-type {content_type:?}, body: {:?}",
        target.0,
        target.1,
        target.2,
        String::from_utf8_lossy(&body)
    );
    let resp = send(app, write_request(target, content_type, body), &request).await?;
    check_response(target.1, &request, &resp)?;
    check_no_nul_written(&request, &resp)
}

#[actix_web::test]
async fn json_bodies_never_break_writes() {
    let app = seeded_app().await;
    // The checks can fail: a good body writes, a bad one is a JSON 400 with `fields`.
    let ok = app
        .post("/api/amodel/", serde_json::json!({"a_field": "x"}))
        .await;
    check_response("/api/amodel/", "POST", &ok).unwrap();
    ok.expect(201);
    assert_fields(
        &app.post("/api/sample/", serde_json::json!({"qty": "x"}))
            .await,
        &["qty", "name"],
    );
    let content_types = select(
        &[
            "application/json",
            "application/json",
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "application/octet-stream",
        ][..],
    );
    let strategy = select(WRITES)
        .prop_flat_map(move |target| (Just(target), content_types.clone(), json_body(target.3)));
    fuzz(
        "json_bodies_never_break_writes",
        strategy,
        |(target, ct, body)| send_write(&app, target, ct, body.into_bytes()),
    )
    .await;
}

// --- 4. form and multipart bodies ---------------------------------------------------------------

/// Form field names: the ones Plover reads, and others.
const FORM_KEYS: &[&str] = &[
    "data",
    "data",
    "data",
    "key",
    "secret",
    "csrf_token",
    "DATA",
    "",
];

/// A form value: JSON objects for a model with these keys, other JSON, text and bytes.
fn form_value(keys: &'static [&'static str]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        6 => typed_object(keys).prop_map(String::into_bytes),
        1 => json_object().prop_map(String::into_bytes),
        1 => json_text(BODY_KEYS, LONG).prop_map(String::into_bytes),
        1 => select(&["k", "s", ""][..]).prop_map(|v| v.as_bytes().to_vec()),
        1 => text(24).prop_map(String::into_bytes),
        1 => bytes(64),
    ]
    .boxed()
}

/// An urlencoded body: encoded pairs, or arbitrary bytes.
fn form_body(keys: &'static [&'static str]) -> BoxedStrategy<Body> {
    let key = prop_oneof![
        4 => select(FORM_KEYS).prop_map(|k| k.as_bytes().to_vec()),
        1 => bytes(8),
    ];
    let pair = (key, form_value(keys), any::<bool>())
        .prop_map(|(k, v, plus)| format!("{}={}", pct(&k, plus), pct(&v, plus)));
    prop_oneof![
        6 => vec(prop_oneof![8 => pair, 1 => select(JUNK).prop_map(str::to_owned)], 0..6)
            .prop_map(|pairs| Body::Text(pairs.join("&"))),
        1 => (form_value(keys), bytes(16)).prop_map(|(v, junk)| {
            // `data=` with its value unencoded, and raw bytes after it.
            let mut raw = b"data=".to_vec();
            raw.extend(v);
            raw.extend(junk);
            Body::Bytes(raw)
        }),
        1 => bytes(256).prop_map(Body::Bytes),
    ]
    .boxed()
}

/// One part of a multipart body.
#[derive(Debug, Clone)]
struct Part {
    disposition: &'static str,
    content_type: Option<&'static str>,
    content: Vec<u8>,
}

/// A multipart body and the boundary its content type names.
#[derive(Debug, Clone)]
struct Multipart {
    /// The `Content-Type` header.
    content_type: String,
    /// The boundary the body uses.
    boundary: String,
    parts: Vec<Part>,
    newline: &'static str,
    preamble: bool,
    closed: bool,
    epilogue: Vec<u8>,
}

impl Multipart {
    fn body(&self) -> Vec<u8> {
        let nl = self.newline.as_bytes();
        let mut out = Vec::new();
        if self.preamble {
            out.extend_from_slice(b"preamble");
            out.extend_from_slice(nl);
        }
        for part in &self.parts {
            out.extend_from_slice(format!("--{}", self.boundary).as_bytes());
            out.extend_from_slice(nl);
            if !part.disposition.is_empty() {
                out.extend_from_slice(
                    format!("Content-Disposition: {}", part.disposition).as_bytes(),
                );
                out.extend_from_slice(nl);
            }
            if let Some(ct) = part.content_type {
                out.extend_from_slice(format!("Content-Type: {ct}").as_bytes());
                out.extend_from_slice(nl);
            }
            out.extend_from_slice(nl);
            out.extend_from_slice(&part.content);
            out.extend_from_slice(nl);
        }
        if self.closed {
            out.extend_from_slice(format!("--{}--", self.boundary).as_bytes());
            out.extend_from_slice(nl);
        }
        out.extend_from_slice(&self.epilogue);
        out
    }
}

/// A multipart body: random boundaries (legal, over-long, empty, quoted, with blanks, or not
/// the one the header names), parts with random dispositions and contents, missing closings.
fn multipart(keys: &'static [&'static str]) -> BoxedStrategy<Multipart> {
    let boundary = prop_oneof![
        6 => proptest::string::string_regex("[A-Za-z0-9'()+_,./:=?-]{1,70}").expect("a regex"),
        1 => proptest::string::string_regex("[A-Za-z0-9]{71,200}").expect("a regex"),
        1 => proptest::string::string_regex("[ -~]{0,20}").expect("a regex"),
    ];
    let header = prop_oneof![
        8 => Just("multipart/form-data; boundary={b}"),
        1 => Just("multipart/form-data; boundary=\"{b}\""),
        1 => Just("multipart/form-data"),
        1 => Just("multipart/form-data; boundary="),
        1 => Just("multipart/form-data; boundary={b}; boundary=other"),
        1 => Just("multipart/form-data;boundary={b};charset=utf-8"),
        1 => Just("multipart/mixed; boundary={b}"),
        1 => Just("multipart/form-data; boundary=\"unterminated"),
    ];
    let part = (
        select(
            &[
                "form-data; name=\"data\"",
                "form-data; name=\"data\"",
                "form-data; name=\"data\"",
                "form-data; name=data",
                "form-data; name=\"key\"",
                "form-data; name=\"secret\"",
                "form-data; name=\"data\"; filename=\"x.json\"",
                "form-data; name=\"data\"; filename*=UTF-8''%C3%A9",
                "form-data; name=\"\"",
                "form-data; name=\"da\\\"ta\"",
                "form-data",
                "attachment; name=\"data\"",
                "form-data; name=\"data",
                "",
            ][..],
        ),
        proptest::option::weighted(
            0.2,
            select(&["application/json", "text/plain; charset=latin1", "x/y", ";"][..]),
        ),
        form_value(keys),
    )
        .prop_map(|(disposition, content_type, content)| Part {
            disposition,
            content_type,
            content,
        });
    (
        boundary,
        header,
        proptest::option::weighted(
            0.1,
            proptest::string::string_regex("[A-Za-z0-9]{1,20}").expect("a regex"),
        ),
        vec(part, 0..4),
        select(&["\r\n", "\r\n", "\r\n", "\n"][..]),
        any::<bool>(),
        prop_oneof![6 => Just(true), 1 => Just(false)],
        prop_oneof![6 => Just(Vec::new()), 1 => bytes(16)],
    )
        .prop_map(
            |(boundary, header, other, parts, newline, preamble, closed, epilogue)| Multipart {
                content_type: header.replace("{b}", &boundary),
                boundary: other.unwrap_or(boundary),
                parts,
                newline,
                preamble,
                closed,
                epilogue,
            },
        )
        .boxed()
}

/// A form or multipart body, with its content type.
#[derive(Debug, Clone)]
enum FormInput {
    Urlencoded(&'static str, Body),
    Multipart(Multipart),
}

#[actix_web::test]
async fn form_and_multipart_bodies_never_break_writes() {
    let app = seeded_app().await;
    // The checks can fail: a good form writes, a broken multipart body is a JSON 400.
    let ok = app
        .send(form_request(
            Method::POST,
            "/api/amodel/",
            &[("data", r#"{"a_field": "f"}"#)],
        ))
        .await;
    check_response("/api/amodel/", "POST", &ok).unwrap();
    ok.expect(201);
    let ok = app
        .send(multipart_request(
            Method::POST,
            "/api/note/",
            &[
                ("key", "k"),
                ("secret", "s"),
                ("data", r#"{"message": "m"}"#),
            ],
        ))
        .await;
    ok.expect(201);
    let broken = raw_request(
        Method::POST,
        "/api/amodel/",
        "multipart/form-data; boundary=nope",
        "x",
    );
    assert_error(&app.send(broken).await, 400);
    let targets: &[Target] = &[
        ("POST", "/api/amodel/", None, A_KEYS),
        ("POST", "/api/sample/", None, SAMPLE_KEYS),
        ("POST", "/api/note/", None, NOTE_KEYS),
        ("POST", "/api/message/", None, MESSAGE_KEYS),
        ("POST", "/api/message/", Some("alice"), MESSAGE_KEYS),
        ("PUT", "/api/amodel/2/", None, A_KEYS),
        ("PUT", "/api/hmodel/1/", None, H_KEYS),
        ("POST", "/small/amodel/", None, A_KEYS),
    ];
    let strategy = select(targets).prop_flat_map(|target| {
        let urlencoded = (
            select(
                &[
                    "application/x-www-form-urlencoded",
                    "application/x-www-form-urlencoded; charset=utf-8",
                    "application/x-www-form-urlencoded; charset=latin1",
                ][..],
            ),
            form_body(target.3),
        )
            .prop_map(|(ct, body)| FormInput::Urlencoded(ct, body));
        let input = prop_oneof![
            urlencoded,
            multipart(target.3).prop_map(FormInput::Multipart)
        ];
        (Just(target), input)
    });
    fuzz(
        "form_and_multipart_bodies_never_break_writes",
        strategy,
        |(target, input)| {
            let (content_type, body) = match input {
                FormInput::Urlencoded(ct, body) => (ct.to_owned(), body.into_bytes()),
                FormInput::Multipart(m) => (m.content_type.clone(), m.body()),
            };
            let app = &app;
            async move { send_write(app, target, &content_type, body).await }
        },
    )
    .await;
}

// --- 5. session cookies and CSRF tokens -------------------------------------------------------------

/// A session cookie header that the server never issued.
#[derive(Debug, Clone)]
enum ForgedCookie {
    /// A whole `Cookie` header: `plover_session=<value>` and maybe other cookies.
    Header(Vec<u8>),
    /// The logged-in admin's real cookie with one character replaced.
    Tampered(usize, char),
    /// The admin's real cookie cut short.
    Truncated(usize),
    /// The admin's real cookie with text after it.
    Extended(String),
}

/// A cookie header value: printable ASCII, and bytes 0x80 to 0xFF.
fn header_bytes(max: usize) -> BoxedStrategy<Vec<u8>> {
    vec(
        prop_oneof![8 => 0x20u8..0x7f, 1 => 0x80u8..=0xff, 1 => Just(b'\t')],
        0..max,
    )
    .boxed()
}

/// A forged session cookie: random `Cookie` headers (the session cookie's name in other cases or
/// with blanks, other cookies, long values), and mutations of the admin's real cookie.
fn forged_cookie() -> BoxedStrategy<ForgedCookie> {
    let name = select(
        &[
            plover::accounts::SESSION_COOKIE,
            plover::accounts::SESSION_COOKIE,
            plover::accounts::SESSION_COOKIE,
            "PLOVER_SESSION",
            " plover_session",
            "plover_session ",
            "other",
        ][..],
    );
    let value = prop_oneof![
        3 => proptest::string::string_regex("[A-Za-z0-9+/=_%-]{0,400}").expect("a regex")
            .prop_map(String::into_bytes),
        2 => bytes(128).prop_map(|b| STANDARD.encode(b).into_bytes()),
        1 => header_bytes(300),
        1 => (1..9_000usize).prop_map(|n| "A".repeat(n).into_bytes()),
    ];
    let cookie = (name, value).prop_map(|(name, value)| {
        let mut out = name.as_bytes().to_vec();
        out.push(b'=');
        out.extend(value);
        out
    });
    let base64ish = prop_oneof![
        4 => proptest::char::range('A', 'Z'),
        4 => proptest::char::range('a', 'z'),
        2 => proptest::char::range('0', '9'),
        1 => select(&['+', '/', '=', '-', '_', '%', ';', '"', ' '][..]),
    ];
    prop_oneof![
        4 => vec(cookie, 1..4).prop_map(|cookies| ForgedCookie::Header(cookies.join(&b"; "[..]))),
        3 => (any::<usize>(), base64ish).prop_map(|(at, c)| ForgedCookie::Tampered(at, c)),
        1 => any::<usize>().prop_map(ForgedCookie::Truncated),
        1 => proptest::string::string_regex("[A-Za-z0-9+/]{1,20}")
            .expect("a regex")
            .prop_map(ForgedCookie::Extended),
    ]
    .boxed()
}

impl ForgedCookie {
    /// The `Cookie` header, from the admin's real cookie value `real` (percent-encoded base64).
    /// The mutations work on the decoded base64 text and never give back the same bytes: the
    /// last character before the padding (which may hold unused bits) is never replaced, a cut
    /// keeps less than that, and an extension adds base64 characters after the padding.
    fn header(&self, real: &str) -> Vec<u8> {
        let name = plover::accounts::SESSION_COOKIE;
        let decoded = percent_decode(real);
        let core = decoded.trim_end_matches('=');
        let value = match self {
            ForgedCookie::Header(raw) => return raw.clone(),
            ForgedCookie::Tampered(at, c) => {
                let mut chars: Vec<char> = decoded.chars().collect();
                let at = at % (core.len() - 1);
                chars[at] = match (chars[at] == *c, *c) {
                    (false, c) => c,
                    (true, 'A') => 'B',
                    (true, _) => 'A',
                };
                chars.into_iter().collect()
            }
            ForgedCookie::Truncated(len) => core[..len % (core.len() - 1)].to_owned(),
            ForgedCookie::Extended(tail) => format!("{decoded}{tail}"),
        };
        // Encoded as the server encodes it: `+` stays, `/` and `=` are escaped.
        let value: String = value
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        format!("{name}={value}").into_bytes()
    }
}

/// Decodes the `%XX` escapes of a cookie value.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The session of a login POST.
#[derive(Debug, Clone)]
enum LoginCookie {
    None,
    Forged(ForgedCookie),
    /// A fresh anonymous session, from a GET of the login page.
    Fresh,
}

/// The CSRF token of a login POST.
#[derive(Debug, Clone)]
enum LoginToken {
    None,
    Random(String),
    /// The token of the fresh session of this request.
    Own,
    /// The token of another fresh session.
    Other,
}

/// One case: a login POST, a GET of the admin dashboard and an admin POST.
#[derive(Debug, Clone)]
struct SessionCase {
    login_cookie: LoginCookie,
    token: LoginToken,
    username: String,
    password: String,
    next: Option<String>,
    admin_cookie: ForgedCookie,
    admin_token: Option<String>,
    a_field: String,
}

fn session_case() -> BoxedStrategy<SessionCase> {
    let login_cookie = prop_oneof![
        1 => Just(LoginCookie::None),
        3 => forged_cookie().prop_map(LoginCookie::Forged),
        3 => Just(LoginCookie::Fresh),
    ];
    let random_token = prop_oneof![
        2 => proptest::string::string_regex("[A-Za-z0-9_-]{0,64}").expect("a regex"),
        1 => text(64),
    ];
    let token = prop_oneof![
        1 => Just(LoginToken::None),
        2 => random_token.clone().prop_map(LoginToken::Random),
        3 => Just(LoginToken::Own),
        1 => Just(LoginToken::Other),
    ];
    let username = prop_oneof![
        2 => select(&["alice", "root", "carol", "nobody"][..]).prop_map(str::to_owned),
        1 => text(24),
    ];
    let password = prop_oneof![
        2 => Just(PW.to_owned()),
        1 => text(80),
    ];
    let next = proptest::option::of(prop_oneof![
        select(
            &[
                "/",
                "/admin/",
                "//evil",
                "/\\evil",
                "http://evil/",
                " /x",
                "/%0d%0a"
            ][..]
        )
        .prop_map(str::to_owned),
        text(16),
    ]);
    (
        login_cookie,
        token,
        username,
        password,
        next,
        forged_cookie(),
        proptest::option::of(random_token),
        text(16),
    )
        .prop_map(
            |(
                login_cookie,
                token,
                username,
                password,
                next,
                admin_cookie,
                admin_token,
                a_field,
            )| {
                SessionCase {
                    login_cookie,
                    token,
                    username,
                    password,
                    next,
                    admin_cookie,
                    admin_token,
                    a_field,
                }
            },
        )
        .boxed()
}

/// A request with this raw `Cookie` header.
fn with_cookie(req: TestRequest, cookie: &[u8]) -> TestRequest {
    let value = HeaderValue::from_bytes(cookie).expect("a valid header value");
    req.insert_header(("cookie", value))
}

/// A fresh anonymous session: its cookie value and its CSRF token.
async fn fresh_session(app: &TestApp) -> (String, String) {
    let browser = app.browser();
    let token = browser.csrf("/accounts/login/").await;
    (browser.cookie().expect("a session cookie"), token)
}

/// Asserts a 302 to the login page.
fn expect_login_redirect(request: &str, resp: &Resp) -> Result<(), String> {
    let to_login = resp
        .header("location")
        .is_some_and(|l| l.starts_with("/accounts/login/?next="));
    if resp.code() == 302 && to_login {
        Ok(())
    } else {
        Err(failure(
            request,
            resp,
            "a forged session cookie was not sent to the login page",
        ))
    }
}

/// One [`SessionCase`]: the login POST is 403 unless it carries its own session's token (then
/// 200 with the form, or 302 for the right password); the admin answers a forged cookie with a
/// 302 to the login page, and the admin POST writes nothing.
async fn session_check(app: &TestApp, admin_cookie: &str, case: SessionCase) -> Result<(), String> {
    let name = plover::accounts::SESSION_COOKIE;
    // The login POST.
    let fresh = match case.login_cookie {
        LoginCookie::Fresh => Some(fresh_session(app).await),
        _ => None,
    };
    let cookie: Option<Vec<u8>> = match &case.login_cookie {
        LoginCookie::None => None,
        LoginCookie::Forged(forged) => Some(forged.header(admin_cookie)),
        LoginCookie::Fresh => fresh
            .as_ref()
            .map(|(c, _)| format!("{name}={c}").into_bytes()),
    };
    let token = match &case.token {
        LoginToken::None => None,
        LoginToken::Random(t) => Some(t.clone()),
        LoginToken::Own => fresh.as_ref().map(|(_, t)| t.clone()),
        LoginToken::Other => Some(fresh_session(app).await.1),
    };
    let mut fields = vec![
        ("username", case.username.as_str()),
        ("password", case.password.as_str()),
    ];
    if let Some(token) = &token {
        fields.push(("csrf_token", token));
    }
    if let Some(next) = &case.next {
        fields.push(("next", next));
    }
    // Each case from an address of its own: the failed logins of 200 cases from one address
    // would be throttled (429), which is not what this property is about.
    static CASES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = CASES
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .to_be_bytes();
    let peer = std::net::SocketAddr::from(([10, n[1], n[2], n[3]], 40000));
    let mut req = form_request(Method::POST, "/accounts/login/", &fields).peer_addr(peer);
    if let Some(cookie) = &cookie {
        req = with_cookie(req, cookie);
    }
    let request = format!(
        "POST /accounts/login/ cookie {:?} fields {fields:?}",
        cookie.as_deref().map(String::from_utf8_lossy)
    );
    let resp = send(app, req, &request).await?;
    check_response("/accounts/login/", &request, &resp)?;
    let own_token =
        matches!(case.login_cookie, LoginCookie::Fresh) && matches!(case.token, LoginToken::Own);
    let valid = case.password == PW && ["alice", "root", "carol"].contains(&case.username.as_str());
    let nul = [
        Some(&case.username),
        Some(&case.password),
        case.next.as_ref(),
    ]
    .iter()
    .flatten()
    .any(|text| text.contains('\0'));
    let expected = match (own_token, valid) {
        (false, _) => 403,
        (true, _) if nul => 400,
        (true, false) => 200,
        (true, true) => 302,
    };
    if resp.code() != expected {
        return Err(failure(&request, &resp, &format!("expected {expected}")));
    }

    // The admin dashboard, and an add POST, with a forged cookie.
    let forged = case.admin_cookie.header(admin_cookie);
    let request = format!("GET /admin/ cookie {:?}", String::from_utf8_lossy(&forged));
    let req = with_cookie(TestRequest::get().uri("/admin/"), &forged);
    let resp = send(app, req, &request).await?;
    check_response("/admin/", &request, &resp)?;
    expect_login_redirect(&request, &resp)?;
    let before = app.count("amodel");
    let mut fields = vec![("a_field", case.a_field.as_str())];
    if let Some(token) = &case.admin_token {
        fields.push(("csrf_token", token));
    }
    let request = format!(
        "POST /admin/amodel/add/ cookie {:?} fields {fields:?}",
        String::from_utf8_lossy(&forged)
    );
    let req = with_cookie(
        form_request(Method::POST, "/admin/amodel/add/", &fields),
        &forged,
    );
    let resp = app.send(req).await;
    check_response("/admin/amodel/add/", &request, &resp)?;
    expect_login_redirect(&request, &resp)?;
    if app.count("amodel") != before {
        return Err(failure(
            &request,
            &resp,
            "an admin POST with a forged cookie wrote a row",
        ));
    }
    Ok(())
}

#[actix_web::test]
async fn forged_sessions_and_csrf_tokens_never_log_in() {
    let app = seeded_app().await;
    let root = app.browser();
    root.login("root", PW).await.expect(302);
    let admin_cookie = root.cookie().expect("the admin's session cookie");
    // The checks can fail: the real cookie is logged in, and its token is the only one taken.
    let real = format!("{}={admin_cookie}", plover::accounts::SESSION_COOKIE);
    let dashboard = app
        .send(with_cookie(
            TestRequest::get().uri("/admin/"),
            real.as_bytes(),
        ))
        .await;
    dashboard.expect(200);
    let token = input_value(&dashboard.text(), "csrf_token").expect("a CSRF token");
    let before = app.count("amodel");
    let post = |token: &str| {
        with_cookie(
            form_request(
                Method::POST,
                "/admin/amodel/add/",
                &[("a_field", "x"), ("csrf_token", token)],
            ),
            real.as_bytes(),
        )
    };
    app.send(post("forged")).await.expect(403);
    assert_eq!(app.count("amodel"), before);
    assert!(app.send(post(&token)).await.status.is_redirection());
    assert_eq!(app.count("amodel"), before + 1);
    let forged = ForgedCookie::Tampered(7, 'x').header(&admin_cookie);
    let resp = app
        .send(with_cookie(TestRequest::get().uri("/admin/"), &forged))
        .await;
    expect_login_redirect("GET /admin/ tampered", &resp).unwrap();

    fuzz(
        "forged_sessions_and_csrf_tokens_never_log_in",
        session_case(),
        |case| session_check(&app, &admin_cookie, case),
    )
    .await;
    // The admin's session survived the run.
    let resp = app
        .send(with_cookie(
            TestRequest::get().uri("/admin/"),
            real.as_bytes(),
        ))
        .await;
    resp.expect(200);
}
