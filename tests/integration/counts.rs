//! docs/contract.md#counts: `?count=exact|estimated`, a resource's default, and counts that
//! obey the same scopes as the rows.

use plover_tests::*;
use serde_json::Value;

/// Five samples, quantities 1 to 5.
async fn five() -> TestApp {
    let rows: Vec<String> = (1..=5)
        .map(|n| format!("({n}, 'n{n}', {n}, 0, 0.0, TRUE, '', NULL, NULL, '2020-01-01 00:00:00')"))
        .collect();
    TestApp::with_seed(&format!(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES {};",
        rows.join(", ")
    ))
    .await
}

/// `meta.count` and `meta.pages` of a list page.
async fn counted(app: &TestApp, query: &str) -> (Value, Value) {
    let body = app.get(&format!("/api/sample/?{query}")).await.json();
    (body["meta"]["count"].clone(), body["meta"]["pages"].clone())
}

#[actix_web::test]
async fn count_exact_counts_the_rows_the_filters_match() {
    let app = five().await;
    let cases = [
        ("count=exact", 5, 1),
        ("count=exact&limit=2", 5, 3),
        ("count=exact&limit=2&page=3", 5, 3),
        ("count=exact&limit=2&page=9", 5, 3),
        ("count=exact&qty__gt=2&limit=1", 3, 3),
        ("count=exact&qty__gt=2&limit=1&page=2", 3, 3),
        ("count=exact&qty=9", 0, 0),
    ];
    for (query, count, pages) in cases {
        assert_eq!(
            counted(&app, query).await,
            (Value::from(count), Value::from(pages)),
            "{query}"
        );
    }
    // Without `count`, nothing is counted or shown.
    let meta = app.get("/api/sample/").await.json()["meta"].clone();
    assert!(
        meta.get("count").is_none() && meta.get("pages").is_none(),
        "{meta}"
    );
    // The next page keeps asking.
    let body = app.get("/api/sample/?count=exact&limit=2").await.json();
    let next = body["meta"]["next"].as_str().unwrap_or_default();
    assert!(next.contains("count=exact"), "{next}");
}

#[actix_web::test]
async fn count_estimated_is_the_planners_estimate_on_postgresql() {
    let app = five().await;
    let (count, pages) = counted(&app, "count=estimated&limit=2").await;
    let n = count.as_i64().expect("an integer count");
    assert!(n >= 0, "{count}");
    assert_eq!(pages.as_i64(), Some((n + 1) / 2));
    if !app.is_postgres() {
        assert_eq!(n, 5, "exact on SQLite");
    }
    // A page that ends the list knows its count on both engines.
    assert_eq!(counted(&app, "count=estimated").await.0, 5);
}

#[actix_web::test]
async fn another_count_is_400() {
    let app = five().await;
    for value in ["", "yes", "EXACT", "planned"] {
        let resp = app.get(&url("/api/sample/", &[("count", value)])).await;
        assert_param_error(&resp, "count");
    }
}

#[actix_web::test]
async fn a_resource_may_count_by_default() {
    let app = five().await;
    let body = app.get("/api/counted/?limit=2").await.json();
    assert_eq!(body["meta"]["count"], 5);
    assert_eq!(body["meta"]["pages"], 3);
    let body = app
        .get("/api/counted/?limit=2&count=estimated")
        .await
        .json();
    assert!(body["meta"]["count"].is_i64(), "{body}");
}

#[actix_web::test]
async fn counts_obey_the_scopes_of_the_rows() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'a', '2020-01-01 00:00:00'),
            (2, {carol}, 'c', '2020-01-02 00:00:00'), (3, {carol}, 'd', '2020-01-03 00:00:00');"
    ));
    let count = |query: &'static str| {
        let app = &app;
        async move { app.get(query).await.json()["meta"]["count"].clone() }
    };
    // The user resource shows active users only; a join into it finds only them.
    assert_eq!(count("/api/user/?count=exact&limit=1").await, 1);
    assert_eq!(count("/api/message/?count=exact&limit=1").await, 3);
    let hidden = "/api/message/?count=exact&limit=1&user__username__in=alice,carol";
    assert_eq!(count(hidden).await, 1);
}
