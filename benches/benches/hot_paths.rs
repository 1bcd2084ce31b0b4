//! The hot paths of a request: query-string parsing, filter compilation, serialization of a
//! 20-row page with and without an included resource, a create with Basic credentials,
//! serving the API's description, and the Basic-auth credential check. The cost of a model
//! permission check is counted in instructions by the `permission_cost` bench.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use plover::__private::{rows_text, CredentialCache, ListParser};
use plover::accounts::Credentials;
use plover::model::RestModel;
use plover::rest::Resource;
use plover_tests::{Message, TestApp, User};

fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn message_parser() -> ListParser {
    let (m, u) = (Message::FIELDS, User::FIELDS);
    ListParser::new(
        Resource::<Message>::new()
            .filter_exclude([m.user_id.join(u.password), m.user_id.join(u.email)]),
    )
}

fn query_string(c: &mut Criterion) {
    let parser = message_parser();
    let query = pairs("user__username=user42&id__lt=5000&id__gte=100&content__ilike=%25hello%25&ordering=-pub_date,id&limit=20&page=3");
    c.bench_function("parse_list_query", |b| {
        b.iter(|| parser.parse(&query).unwrap())
    });
}

fn filter_compilation(c: &mut Criterion) {
    let parser = message_parser();
    let query = pairs("user__username=user42&id__lt=5000&id__gte=100&content__ilike=%25hello%25");
    let parsed = parser.parse(&query).unwrap();
    c.bench_function("compile_filters_to_sql", |b| {
        b.iter(|| rows_text(Message::meta(), &parsed, false).unwrap())
    });
}

fn seed(n: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO \"user\" (id, username, password, email, join_date, active, admin) VALUES \
         (1, 'u1', '', 'u1@x', '2020-01-01 00:00:00', TRUE, FALSE), \
         (2, 'u2', '', 'u2@x', '2020-01-01 00:00:00', TRUE, FALSE);\
         INSERT INTO message (id, user_id, content, pub_date) VALUES ",
    );
    let rows: Vec<String> = (1..=n)
        .map(|i| {
            format!(
                "({i}, {}, 'message number {i}', '2020-01-01 00:00:00')",
                i % 2 + 1
            )
        })
        .collect();
    sql.push_str(&rows.join(","));
    sql.push(';');
    sql
}

fn list_page(c: &mut Criterion) {
    let rt = actix_web::rt::System::new();
    let app = rt.block_on(TestApp::with_seed(&seed(100)));
    let mut group = c.benchmark_group("list_20_rows");
    for (name, path) in [
        ("with_include", "/api/message/"),
        ("plain", "/api/msgff/"),
        (
            "filtered_with_include",
            "/api/message/?id__lt=90&id__gte=10&ordering=-id",
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let resp = rt.block_on(app.get(path));
                assert_eq!(resp.code(), 200);
                resp
            })
        });
    }
    group.finish();
}

/// A create through the whole stack: Basic credentials (verified once, then from the cache),
/// the insert and its read-back in one transaction, the 201 with the new object and its
/// included user. The SQLite file grows by one message per iteration.
fn create(c: &mut Criterion) {
    let rt = actix_web::rt::System::new();
    let app = rt.block_on(TestApp::with_seed(&seed(100)));
    app.user("alice", "pw");
    let post = || {
        plover_tests::json_request(
            actix_web::http::Method::POST,
            "/api/message/",
            &serde_json::json!({"content": "a new message"}),
        )
        .insert_header(plover_tests::basic("alice", "pw"))
    };
    c.bench_function("create_message", |b| {
        b.iter(|| {
            let resp = rt.block_on(app.send(post()));
            assert_eq!(resp.code(), 201);
            resp
        })
    });
}

/// The API's description: built once at set-up, so serving it should cost what any fixed
/// response does, whatever its size (the fixture's `/api` document is about 200 KB).
fn description(c: &mut Criterion) {
    let rt = actix_web::rt::System::new();
    let app = rt.block_on(TestApp::new());
    let mut group = c.benchmark_group("openapi");
    for path in ["/api/openapi.json", "/api/docs/"] {
        group.bench_function(path, |b| {
            b.iter(|| {
                let resp = rt.block_on(app.get(path));
                assert_eq!(resp.code(), 200);
                resp
            })
        });
    }
    group.finish();
}

fn credentials(c: &mut Criterion) {
    let hash = plover::accounts::make_password("correct horse", 4).unwrap();
    let cache = CredentialCache::new(Duration::from_secs(3600), 1000);
    assert!(cache.check("alice", &hash, "correct horse", || {
        plover::accounts::check_password("correct horse", &hash)
    }));
    let mut group = c.benchmark_group("credential_check");
    group.bench_function("cached", |b| {
        b.iter(|| {
            cache.check("alice", &hash, "correct horse", || {
                plover::accounts::check_password("correct horse", &hash)
            })
        })
    });
    group.bench_function("bcrypt_cost_4", |b| {
        b.iter_batched(
            || CredentialCache::new(Duration::from_secs(3600), 1000),
            |fresh| {
                fresh.check("alice", &hash, "correct horse", || {
                    plover::accounts::check_password("correct horse", &hash)
                })
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// A failed login costs the same for an unknown user (a dummy bcrypt check) as for a wrong
/// password (the real one): the figures should be close, so that timing does not reveal names.
fn failed_logins(c: &mut Criterion) {
    let rt = actix_web::rt::System::new();
    let app = rt.block_on(TestApp::new());
    app.user("alice", "right");
    // Throttling off: the bench measures the check itself, thousands of times.
    let unthrottled = plover::accounts::LoginLimits {
        per_username: u32::MAX,
        per_address: u32::MAX,
        ..Default::default()
    };
    let auth = app.auth.clone().login_limits(unthrottled);
    let mut group = c.benchmark_group("failed_login_cost_4");
    for (name, username) in [("unknown_user", "nobody"), ("wrong_password", "alice")] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let creds = Credentials::new(None, username, "wrong");
                let found = app
                    .db
                    .run_blocking(|conn| auth.authenticate(conn, creds))
                    .unwrap();
                assert!(found.is_none());
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    query_string,
    filter_compilation,
    list_page,
    create,
    description,
    credentials,
    failed_logins
);
criterion_main!(benches);
