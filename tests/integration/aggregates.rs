//! docs/contract.md#aggregates: `GET {prefix}/<name>/aggregate/` of a resource that serves it
//! (`tally`, tickets; `msgagg`, messages; `sample`): counts, sums, averages, least and
//! greatest values per group, after the list's filters and scopes, under the filter rules
//! (joins included), at most 1,000 groups.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

/// Five tickets: two closed, three open; tickets 2 and 3 belong to 1, ticket 4 to 2.
async fn tickets() -> TestApp {
    TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened, parent_id)
         VALUES (1, 't1', 1, 'open', '', 's', '2020-01-01', NULL),
                (2, 't2', 2, 'open', '', 's', '2020-01-02', 1),
                (3, 't3', 5, 'closed', '', 's', '2020-01-03', 1),
                (4, 't4', 3, 'open', '', 's', '2020-01-04', 2),
                (5, 't5', 4, 'closed', '', 's', '2020-01-05', NULL);",
    )
    .await
}

/// The `groups` of an aggregate of `/api/<name>/` (200 expected).
async fn groups(app: &TestApp, name: &str, query: &str) -> Value {
    let uri = format!("/api/{name}/aggregate/?{query}");
    let body = app.get(&uri).await.json_with(200);
    assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{uri}: {body}");
    body["groups"].clone()
}

#[actix_web::test]
async fn an_aggregate_counts_sums_and_averages_per_group_in_group_order() {
    let app = tickets().await;
    let got = groups(
        &app,
        "tally",
        "group=status&count&sum=priority&avg=priority&min=opened&max=title",
    )
    .await;
    assert_eq!(
        got,
        json!([
            {"status": "closed", "count": 2, "sum_priority": 9, "avg_priority": 4.5,
             "min_opened": "2020-01-03", "max_title": "t5"},
            {"status": "open", "count": 3, "sum_priority": 6, "avg_priority": 2.0,
             "min_opened": "2020-01-01", "max_title": "t4"},
        ])
    );
    // Without a group, every row is one group; the keys follow the functions' order.
    let got = groups(&app, "tally", "max=priority&count&sum=priority").await;
    assert_eq!(
        got,
        json!([{"count": 5, "sum_priority": 15, "max_priority": 5}])
    );
    // Lists of fields, comma-separated or repeated.
    let got = groups(&app, "tally", "min=priority,opened&min=title").await;
    assert_eq!(
        got,
        json!([{"min_priority": 1, "min_opened": "2020-01-01", "min_title": "t1"}])
    );
}

#[actix_web::test]
async fn filters_and_groups_by_foreign_keys_and_several_fields() {
    let app = tickets().await;
    // The list's filters apply.
    let got = groups(&app, "tally", "group=status&count&priority__gte=3").await;
    assert_eq!(
        got,
        json!([{"status": "closed", "count": 2}, {"status": "open", "count": 1}])
    );
    // A foreign key groups by its id, under its key in objects; NULL first.
    let got = groups(&app, "tally", "group=parent&count").await;
    assert_eq!(
        got,
        json!([
            {"parent_id": null, "count": 2},
            {"parent_id": 1, "count": 2},
            {"parent_id": 2, "count": 1},
        ])
    );
    let got = groups(&app, "tally", "group=status,parent&count&sum=priority").await;
    assert_eq!(
        got,
        json!([
            {"status": "closed", "parent_id": null, "count": 1, "sum_priority": 4},
            {"status": "closed", "parent_id": 1, "count": 1, "sum_priority": 5},
            {"status": "open", "parent_id": null, "count": 1, "sum_priority": 1},
            {"status": "open", "parent_id": 1, "count": 1, "sum_priority": 2},
            {"status": "open", "parent_id": 2, "count": 1, "sum_priority": 3},
        ])
    );
    // Through a join: the parent's status (a ticket without a parent groups under NULL).
    let got = groups(
        &app,
        "tally",
        "group=parent__status&count&max=parent__priority",
    )
    .await;
    assert_eq!(
        got,
        json!([
            {"parent__status": null, "count": 2, "max_parent__priority": null},
            {"parent__status": "open", "count": 3, "max_parent__priority": 2},
        ])
    );
    // No rows: no groups; without a group, one of a zero count and null values.
    assert_eq!(
        groups(&app, "tally", "group=status&count&priority=9").await,
        json!([])
    );
    let got = groups(&app, "tally", "count&sum=priority&avg=priority&priority=9").await;
    assert_eq!(
        got,
        json!([{"count": 0, "sum_priority": null, "avg_priority": null}])
    );
}

#[actix_web::test]
async fn values_keep_their_types_and_text_groups_by_code_point() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
         (1, 'a', 1, 5000000000, 0.5, TRUE, '', 'b', '2020-01-02', '2020-01-01 10:00:00'),
         (2, 'B', 2, 5000000000, 1.25, TRUE, '', 'Z', NULL, '2020-01-01 11:00:00'),
         (3, 'Z', 3, 1, 2.0, FALSE, '', NULL, '2020-01-01', '2020-01-01 12:00:00'),
         (4, 'é', 4, 2, 0.25, FALSE, '', 'b', '2020-01-03', '2020-01-01 13:00:00');",
    )
    .await;
    let got = groups(
        &app,
        "sample",
        "group=remark&count&sum=big,ratio&min=day,stamp&max=name",
    )
    .await;
    assert_eq!(
        got,
        json!([
            {"remark": null, "count": 1, "sum_big": 1, "sum_ratio": 2.0,
             "min_day": "2020-01-01", "min_stamp": "2020-01-01 12:00:00", "max_name": "Z"},
            {"remark": "Z", "count": 1, "sum_big": 5000000000_i64, "sum_ratio": 1.25,
             "min_day": null, "min_stamp": "2020-01-01 11:00:00", "max_name": "B"},
            {"remark": "b", "count": 2, "sum_big": 5000000002_i64, "sum_ratio": 0.75,
             "min_day": "2020-01-02", "min_stamp": "2020-01-01 10:00:00", "max_name": "é"},
        ])
    );
    // Booleans group (false first); text orders by code point on both engines.
    let got = groups(&app, "sample", "group=flag&sum=qty").await;
    assert_eq!(
        got,
        json!([{"flag": false, "sum_qty": 7}, {"flag": true, "sum_qty": 3}])
    );
    let got = groups(&app, "sample", "group=name&count").await;
    let names: Vec<&str> = got
        .as_array()
        .map(|g| g.iter().filter_map(|o| o["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["B", "Z", "a", "é"]);
    assert_eq!(
        groups(&app, "sample", "min=name&max=name").await,
        json!([{"min_name": "B", "max_name": "é"}])
    );
}

#[actix_web::test]
async fn every_mistake_is_a_400_on_its_parameter() {
    let app = tickets().await;
    let cases = [
        // Unknown fields, and fields clients may not filter on (excluded, private).
        ("group=nope&count", "group"),
        ("count&sum=nope", "sum"),
        ("group=body&count", "group"),
        ("min=secret_note", "min"),
        ("group=status__title&count", "group"),
        // Sums and averages of numbers only; no least or greatest boolean.
        ("sum=title", "sum"),
        ("avg=status", "avg"),
        ("avg=opened", "avg"),
        // At most three fields in a group, none twice; field names, not empty ones.
        ("group=status,priority,title,opened&count", "group"),
        ("group=status,status&count", "group"),
        ("group=&count", "group"),
        ("count&sum=priority,", "sum"),
        ("sum=priority&sum=priority", "sum"),
        // Nothing asked; `count` is a flag.
        ("group=status", "count"),
        ("", "count"),
        ("count=exact", "count"),
        // No ordering or page; filters as on the list.
        ("count&ordering=priority", "ordering"),
        ("count&page=2", "page"),
        ("count&limit=5", "limit"),
        ("count&cursor=x", "cursor"),
        ("count&nope=1", "nope"),
        ("count&priority=high", "priority"),
        ("count&body=x", "body"),
    ];
    for (query, param) in cases {
        let resp = app.get(&format!("/api/tally/aggregate/?{query}")).await;
        assert_param_error(&resp, param);
    }
    let resp = app.get("/api/sample/aggregate/?min=flag").await;
    assert_param_error(&resp, "min");
    // Joins: at most eight foreign keys, in all the fields together.
    let eight = "parent__".repeat(8);
    let ok = app
        .get(&format!("/api/tally/aggregate/?count&group={eight}id"))
        .await;
    assert_eq!(ok.code(), 200, "{}", ok.text());
    let nine = "parent__".repeat(9);
    let resp = app
        .get(&format!("/api/tally/aggregate/?count&group={nine}id"))
        .await;
    assert_param_error(&resp, "group");
    let deep = "parent__".repeat(5_000);
    let resp = app
        .get(&format!("/api/tally/aggregate/?sum={deep}id"))
        .await;
    assert_param_error(&resp, "sum");
    // `fields` names keys of objects, which an aggregate has none of.
    let uri = url("/api/tally/aggregate/", &[("count", ""), ("fields", "id")]);
    assert_param_error(&app.get(&uri).await, "fields");
    // The other reserved names are what they are on the list.
    for reserved in ["q", "or", "not"] {
        let list = app
            .get(&url("/api/tally/", &[(reserved, "x")]))
            .await
            .code();
        let uri = url("/api/tally/aggregate/", &[("count", ""), (reserved, "x")]);
        assert_eq!(app.get(&uri).await.code(), list, "{reserved}");
    }
}

#[actix_web::test]
async fn more_than_a_thousand_groups_is_a_400() {
    let rows = |n: i32| -> String {
        let values: Vec<String> = (1..=n)
            .map(|i| {
                format!("({i}, 'n{i}', {i}, 0, 0.0, TRUE, '', NULL, NULL, '2020-01-01 00:00:00')")
            })
            .collect();
        format!(
            "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES {};",
            values.join(", ")
        )
    };
    let app = TestApp::with_seed(&rows(1001)).await;
    let resp = app.get("/api/sample/aggregate/?group=qty&count").await;
    assert_param_error(&resp, "group");
    // A thousand is fine, in order.
    let got = groups(&app, "sample", "group=qty&count&qty__lte=1000").await;
    let qty: Vec<i64> = got
        .as_array()
        .map(|g| g.iter().filter_map(|o| o["qty"].as_i64()).collect())
        .unwrap_or_default();
    assert_eq!(qty, (1..=1000).collect::<Vec<i64>>());
    // Fewer groups of the same rows are fine.
    let got = groups(&app, "sample", "group=flag&count").await;
    assert_eq!(got, json!([{"flag": true, "count": 1001}]));
}

#[actix_web::test]
async fn joins_obey_the_target_resource_for_rows_and_fields() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'a1', '2020-01-01 00:00:00'),
            (2, {alice}, 'a2', '2020-01-02 00:00:00'), (3, {carol}, 'c1', '2020-01-03 00:00:00');"
    ));
    // The user resource hides inactive users: Carol's message groups under NULL, and her
    // name counts in no least or greatest value.
    let got = groups(
        &app,
        "msgagg",
        "group=user__username&count&max=user__username,content",
    )
    .await;
    assert_eq!(
        got,
        json!([
            {"user__username": null, "count": 1, "max_user__username": null, "max_content": "c1"},
            {"user__username": "alice", "count": 2, "max_user__username": "alice",
             "max_content": "a2"},
        ])
    );
    let got = groups(&app, "msgagg", "min=user__username&max=user__username").await;
    assert_eq!(
        got,
        json!([{"min_user__username": "alice", "max_user__username": "alice"}])
    );
    // The foreign key itself is the message's own column: no join, every id, under the key
    // objects show it with (`user`: the resource includes the user).
    let got = groups(&app, "msgagg", "group=user&count").await;
    assert_eq!(
        got,
        json!([{"user": alice, "count": 2}, {"user": carol, "count": 1}])
    );
    // A filter through the join finds only the rows the user resource shows.
    let got = groups(&app, "msgagg", "count&user__username__in=alice,carol").await;
    assert_eq!(got, json!([{"count": 2}]));
    // Fields the user resource refuses to filter are refused here too.
    for (query, param) in [
        ("group=user__email&count", "group"),
        ("max=user__password", "max"),
        ("count&user__email=x", "user__email"),
    ] {
        let resp = app.get(&format!("/api/msgagg/aggregate/?{query}")).await;
        assert_param_error(&resp, param);
    }
}

#[actix_web::test]
async fn the_resource_scope_and_checks_apply() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel (id, a_field) VALUES (1, 'x'), (2, 'hidden'), (3, 'x');",
    )
    .await;
    let got = groups(&app, "scoped_tally", "group=a_field&count").await;
    assert_eq!(got, json!([{"a_field": "x", "count": 2}]));
    // `check_get` refuses the list: the aggregate too.
    let resp = app.get("/api/nolist_tally/aggregate/?count").await;
    assert_error(&resp, 403);
}

#[actix_web::test]
async fn aggregates_are_served_only_where_a_resource_opts_in() {
    let app = tickets().await;
    // `slim` does not serve them: `aggregate/` is a detail path with a key that names no row.
    for name in ["slim", "lean"] {
        let resp = app.get(&format!("/api/{name}/aggregate/?count")).await;
        let other = app.get(&format!("/api/{name}/nope/?count")).await;
        assert_eq!(resp.code(), 404, "{name}");
        assert_eq!(resp.text(), other.text(), "{name}");
        let post = |path: String| TestRequest::post().uri(&path).set_json(json!({}));
        let resp = app.send(post(format!("/api/{name}/aggregate/"))).await;
        let other = app.send(post(format!("/api/{name}/nope/"))).await;
        assert_eq!(resp.code(), 405);
        assert_eq!(resp.header("allow"), other.header("allow"));
    }
    // Where served: GET (and HEAD) only, with or without the final slash.
    assert_eq!(app.get("/api/tally/aggregate?count").await.code(), 200);
    let head = app
        .send(
            TestRequest::default()
                .method(Method::HEAD)
                .uri("/api/tally/aggregate/?count"),
        )
        .await;
    assert_eq!(head.code(), 200);
    for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
        let resp = app
            .send(
                TestRequest::default()
                    .method(method.clone())
                    .uri("/api/tally/aggregate/"),
            )
            .await;
        assert_eq!(resp.code(), 405, "{method}");
        assert_eq!(resp.header("allow"), Some("GET"), "{method}");
    }
    // A resource that serves no GET serves no aggregate.
    let resp = app.get("/api/postonly_tally/aggregate/?count").await;
    assert_eq!(resp.code(), 405);
    assert_eq!(resp.header("allow"), Some(""));
    // The conformance app's `sample` serves them.
    assert_eq!(groups(&app, "sample", "count").await, json!([{"count": 0}]));
}

#[actix_web::test]
async fn a_sum_past_64_bits_is_a_400_on_sum() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
         (1, 'a', 1, 9000000000000000000, 0.0, TRUE, '', NULL, NULL, '2020-01-01 00:00:00'),
         (2, 'b', 1, 9000000000000000000, 0.0, TRUE, '', NULL, NULL, '2020-01-01 00:00:00');",
    )
    .await;
    let resp = app.get("/api/sample/aggregate/?sum=big").await;
    assert_param_error(&resp, "sum");
    assert!(resp.text().contains("64-bit integer"), "{}", resp.text());
    // An average of the same values is a float.
    let got = groups(&app, "sample", "avg=big&max=big").await;
    assert_eq!(got[0]["max_big"], 9_000_000_000_000_000_000_i64);
    assert!(
        got[0]["avg_big"].as_f64().is_some_and(|avg| avg > 8.9e18),
        "{got}"
    );
}

/// Three rows whose `ratio` is 1.7e308: their sum is beyond the largest 64-bit float.
const HUGE_RATIOS: &str =
    "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, \
    stamp) VALUES \
    (1, 'a', 1, 0, 1.7e308, TRUE, '', NULL, NULL, '2020-01-01 00:00:00'), \
    (2, 'b', 2, 0, 1.7e308, TRUE, '', NULL, NULL, '2020-01-01 00:00:00'), \
    (3, 'c', 3, 0, 1.7e308, TRUE, '', NULL, NULL, '2020-01-01 00:00:00');";

#[actix_web::test]
async fn a_float_sum_or_average_past_64_bits_is_a_400_on_its_parameter() {
    let app = TestApp::with_seed(HUGE_RATIOS).await;
    for (query, param) in [
        ("sum=ratio", "sum"),
        ("avg=ratio", "avg"),
        ("avg=ratio&sum=qty", "avg"),
        ("count&group=flag&sum=ratio", "sum"),
    ] {
        let resp = app.get(&format!("/api/sample/aggregate/?{query}")).await;
        assert_param_error(&resp, param);
        assert!(
            resp.text().contains("64-bit float"),
            "{query}: {}",
            resp.text()
        );
    }
    // Within the range (one row a group), the same field sums and averages.
    let got = groups(&app, "sample", "group=qty&sum=ratio&avg=ratio&max=ratio").await;
    assert_eq!(got[2]["qty"], 3);
    assert_eq!(got[2]["sum_ratio"], 1.7e308);
    assert_eq!(got[2]["avg_ratio"], 1.7e308);
    assert_eq!(got[2]["max_ratio"], 1.7e308);
    let got = groups(&app, "sample", "sum=ratio&ratio__lt=0").await;
    assert_eq!(got, json!([{"sum_ratio": null}]));
}
