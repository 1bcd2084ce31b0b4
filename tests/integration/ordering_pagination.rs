//! docs/contract.md#lists, #ordering and #pagination: ordering, limit, page and the list
//! envelope's links.

use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::{json, Value};

/// `n` AModel rows `r00`, `r01`, ... with ids 1..=n.
fn amodels(n: usize) -> String {
    (0..n)
        .map(|i| format!("INSERT INTO amodel VALUES ({}, 'r{i:02}');", i + 1))
        .collect()
}

/// Samples with these (qty, flag, remark) values, named `s1`, `s2`, ... (ids 1, 2, ...).
fn samples(rows: &[(i32, bool, Option<&str>)]) -> String {
    rows.iter()
        .enumerate()
        .map(|(i, (qty, flag, remark))| {
            let remark = remark.map_or("NULL".to_owned(), |r| format!("'{r}'"));
            format!(
                "INSERT INTO sample (id, name, qty, flag, remark, stamp) VALUES
                 ({id}, 's{id}', {qty}, {flag}, {remark}, '2020-01-01 00:00:00');",
                id = i + 1,
                flag = if *flag { "TRUE" } else { "FALSE" },
            )
        })
        .collect()
}

fn field<'a>(objects: &'a [Value], key: &str) -> Vec<&'a Value> {
    objects.iter().map(|o| &o[key]).collect()
}

/// `(meta, ids)` of a list response.
async fn page(app: &TestApp, uri: &str) -> (Value, Vec<i64>) {
    let resp = app.get(uri).await;
    let ids = resp.ids();
    (resp.json()["meta"].clone(), ids)
}

// --- ordering -----------------------------------------------------------------------------

#[actix_web::test]
async fn default_order_is_primary_key_ascending() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (3, 'c'), (1, 'b'), (2, 'a'); \
         INSERT INTO amodel VALUES (10, 'z');",
    )
    .await;
    assert_eq!(app.get("/api/amodel/").await.ids(), [1, 2, 3, 10]);
    // An empty ordering means the default order.
    assert_eq!(app.get("/api/amodel/?ordering=").await.ids(), [1, 2, 3, 10]);
}

#[actix_web::test]
async fn default_order_holds_when_the_database_would_scan_an_index() {
    // A filter on the unique `name` lets SQLite walk its index, in name order: the
    // primary-key order must still come out.
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, stamp) VALUES (1, 'z', 1, '2020-01-01 00:00:00'),
            (2, 'y', 1, '2020-01-01 00:00:00'), (3, 'x', 1, '2020-01-01 00:00:00');",
    )
    .await;
    assert_eq!(app.get("/api/sample/?name__gte=a").await.ids(), [1, 2, 3]);
    assert_eq!(app.get("/api/sample/?name__in=x,z").await.ids(), [1, 3]);
}

#[actix_web::test]
async fn ordering_ascending_and_descending() {
    let app = TestApp::with_seed(&samples(&[
        (3, true, None),
        (1, false, None),
        (2, true, None),
    ]))
    .await;
    assert_eq!(app.get("/api/sample/?ordering=qty").await.ids(), [2, 3, 1]);
    assert_eq!(app.get("/api/sample/?ordering=-qty").await.ids(), [1, 3, 2]);
    assert_eq!(app.get("/api/sample/?ordering=-id").await.ids(), [3, 2, 1]);
    assert_eq!(app.get("/api/sample/?ordering=id").await.ids(), [1, 2, 3]);
    assert_eq!(
        app.get("/api/sample/?ordering=-name").await.ids(),
        [3, 2, 1]
    );
}

#[actix_web::test]
async fn ordering_a_comma_separated_list() {
    let app = TestApp::with_seed(&samples(&[
        (2, true, None),
        (1, false, None),
        (2, true, None),
        (1, false, None),
        (3, false, None),
    ]))
    .await;
    let objects = app.get("/api/sample/?ordering=flag,-qty").await.objects();
    assert_eq!(
        objects
            .iter()
            .map(|o| (o["flag"].clone(), o["qty"].clone(), o["id"].clone()))
            .collect::<Vec<_>>(),
        vec![
            (json!(false), json!(3), json!(5)),
            (json!(false), json!(1), json!(2)),
            (json!(false), json!(1), json!(4)),
            (json!(true), json!(2), json!(1)),
            (json!(true), json!(2), json!(3)),
        ]
    );
    assert_eq!(
        app.get("/api/sample/?ordering=-qty,-name").await.ids(),
        [5, 3, 1, 4, 2]
    );
}

#[actix_web::test]
async fn ties_are_broken_by_primary_key_ascending() {
    // With an index on qty, SQLite would serve `ORDER BY qty DESC` alone by walking the index
    // backwards, ties in descending primary-key order.
    let app = TestApp::with_seed(&format!(
        "CREATE INDEX sample_qty ON sample (qty); {}",
        samples(&[
            (5, true, None),
            (1, true, None),
            (5, true, None),
            (1, true, None),
            (5, true, None),
            (5, true, None),
            (1, true, None),
        ])
    ))
    .await;
    assert_eq!(
        app.get("/api/sample/?ordering=-qty").await.ids(),
        [1, 3, 5, 6, 2, 4, 7]
    );
    assert_eq!(
        app.get("/api/sample/?ordering=flag").await.ids(),
        [1, 2, 3, 4, 5, 6, 7]
    );
    // Pages of 2 over ties never repeat or skip a row.
    let mut seen = Vec::new();
    for n in 1..=4 {
        let (_, ids) = page(&app, &format!("/api/sample/?ordering=qty&limit=2&page={n}")).await;
        seen.extend(ids);
    }
    assert_eq!(seen, [2, 4, 7, 1, 3, 5, 6]);
}

#[actix_web::test]
async fn text_sorts_by_code_point() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (1, 'b'), (2, 'B'), (3, 'é'), (4, 'a'), (5, 'Z'), (6, 'E');",
    )
    .await;
    let objects = app.get("/api/amodel/?ordering=a_field").await.objects();
    assert_eq!(
        field(&objects, "a_field"),
        [
            &json!("B"),
            &json!("E"),
            &json!("Z"),
            &json!("a"),
            &json!("b"),
            &json!("é")
        ]
    );
    let objects = app.get("/api/amodel/?ordering=-a_field").await.objects();
    assert_eq!(objects[0]["a_field"], json!("é"));
    assert_eq!(objects[5]["a_field"], json!("B"));
}

#[actix_web::test]
async fn nulls_sort_first_ascending_and_last_descending() {
    let app = TestApp::with_seed(&samples(&[
        (1, true, Some("m")),
        (2, true, None),
        (3, true, Some("a")),
        (4, true, None),
        (5, true, Some("z")),
    ]))
    .await;
    assert_eq!(
        app.get("/api/sample/?ordering=remark").await.ids(),
        [2, 4, 3, 1, 5]
    );
    assert_eq!(
        app.get("/api/sample/?ordering=-remark").await.ids(),
        [5, 1, 3, 2, 4]
    );
}

#[actix_web::test]
async fn ordering_on_a_foreign_key_by_field_or_column_name() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {bob}, 'x', '2020-01-01 00:00:00'),
            (2, {alice}, 'y', '2020-01-01 00:00:00'), (3, {bob}, 'z', '2020-01-01 00:00:00');"
    ));
    assert!(alice < bob);
    assert_eq!(
        app.get("/api/message/?ordering=user").await.ids(),
        [2, 1, 3]
    );
    assert_eq!(
        app.get("/api/message/?ordering=user_id").await.ids(),
        [2, 1, 3]
    );
    assert_eq!(
        app.get("/api/message/?ordering=-user").await.ids(),
        [1, 3, 2]
    );
    assert_eq!(
        app.get("/api/message/?ordering=-user_id,-id").await.ids(),
        [3, 1, 2]
    );
}

#[actix_web::test]
async fn ordering_on_anything_but_an_exposed_column_is_400() {
    let app = TestApp::with_seed(&samples(&[(1, true, None)])).await;
    for (path, value) in [
        ("/api/sample/", "nope"),
        ("/api/sample/", "-nope"),
        ("/api/sample/", "qty,nope"),
        ("/api/sample/", "qty,"),
        ("/api/sample/", "--qty"),
        ("/api/sample/", "user"),
        ("/api/sample/", "id desc"),
        ("/api/sample/", "id; DROP TABLE sample"),
        ("/api/sample/", "RANDOM()"),
        // Not exposed by the resource's fields / exclude.
        ("/api/slim/", "flag"),
        ("/api/slim/", "-remark"),
        ("/api/lean/", "body"),
        ("/api/user/", "password"),
        ("/api/user/", "-email"),
        // Excluded at the model level.
        ("/api/vault/", "pin"),
        // A key that prepare_data adds is not a column.
        ("/v2/note/", "message_length"),
    ] {
        let resp = app.get(&url(path, &[("ordering", value)])).await;
        assert_param_error(&resp, "ordering");
    }
    assert_eq!(app.count("sample"), 1);
    assert_eq!(app.get("/api/slim/?ordering=-qty,name").await.ids(), [1]);
    assert_eq!(
        app.get("/api/vault/?ordering=-label").await.ids(),
        Vec::<i64>::new()
    );
}

#[actix_web::test]
async fn repeated_ordering_limit_and_page_use_the_first() {
    let app = TestApp::with_seed(&amodels(6)).await;
    assert_eq!(
        app.get("/api/amodel/?ordering=-id&ordering=id").await.ids(),
        [6, 5, 4, 3, 2, 1]
    );
    let (meta, ids) = page(&app, "/api/amodel/?limit=2&limit=4&page=2&page=1").await;
    assert_eq!(ids, [3, 4]);
    assert_eq!(meta["page"], json!(2));
}

// --- pagination ---------------------------------------------------------------------------

#[actix_web::test]
async fn default_page_size_is_20() {
    let app = TestApp::with_seed(&amodels(23)).await;
    let first = app.get("/api/amodel/").await.json_with(200);
    assert_eq!(
        first["meta"],
        json!({"model": "amodel", "page": 1, "previous": "", "next": "/api/amodel/?page=2"})
    );
    assert_eq!(first["objects"].as_array().map(Vec::len), Some(20));
    assert_eq!(first["objects"][19], json!({"id": 20, "a_field": "r19"}));
    let (meta, ids) = page(&app, "/api/amodel/?page=2").await;
    assert_eq!(ids, [21, 22, 23]);
    assert_eq!(
        meta,
        json!({"model": "amodel", "page": 2, "previous": "/api/amodel/?page=1", "next": ""})
    );
}

#[actix_web::test]
async fn paginate_by_sets_the_page_size_and_bounds_limit() {
    let app = TestApp::with_seed(
        &(1..=7)
            .map(|i| format!("INSERT INTO emodel VALUES ({i}, 'e{i}');"))
            .collect::<String>(),
    )
    .await;
    assert_eq!(app.get("/api/emodel/").await.ids(), [1, 2, 3, 4, 5]);
    assert_eq!(app.get("/api/emodel/?limit=6").await.ids(), [1, 2, 3, 4, 5]);
    assert_eq!(app.get("/api/emodel/?limit=3").await.ids(), [1, 2, 3]);
    let (meta, ids) = page(&app, "/api/emodel/?page=2").await;
    assert_eq!(ids, [6, 7]);
    assert_eq!(meta["next"], json!(""));
}

#[actix_web::test]
async fn limit_above_paginate_by_is_clamped() {
    let app = TestApp::with_seed(&amodels(22)).await;
    let (meta, ids) = page(&app, "/api/amodel/?limit=100").await;
    assert_eq!(ids, (1..=20).collect::<Vec<i64>>());
    assert_eq!(meta["next"], json!("/api/amodel/?limit=100&page=2"));
    let (_, ids) = page(&app, "/api/amodel/?limit=100&page=2").await;
    assert_eq!(ids, [21, 22]);
}

#[actix_web::test]
async fn limit_and_page_select_the_window() {
    let app = TestApp::with_seed(&amodels(5)).await;
    let (meta, ids) = page(&app, "/api/amodel/?limit=2&page=2").await;
    assert_eq!(ids, [3, 4]);
    assert_eq!(
        meta,
        json!({"model": "amodel", "page": 2,
               "previous": "/api/amodel/?limit=2&page=1",
               "next": "/api/amodel/?limit=2&page=3"})
    );
    let (meta, ids) = page(&app, "/api/amodel/?limit=2&page=3").await;
    assert_eq!(ids, [5]);
    assert_eq!(meta["next"], json!(""));
    assert_eq!(meta["previous"], json!("/api/amodel/?limit=2&page=2"));
}

#[actix_web::test]
async fn exact_page_boundary_has_no_next() {
    let app = TestApp::with_seed(&amodels(4)).await;
    let (meta, ids) = page(&app, "/api/amodel/?limit=2&page=2").await;
    assert_eq!(ids, [3, 4]);
    assert_eq!(meta["next"], json!(""));
    let (meta, _) = page(&app, "/api/amodel/?limit=4").await;
    assert_eq!(meta["next"], json!(""));
    assert_eq!(meta["previous"], json!(""));
}

#[actix_web::test]
async fn a_page_past_the_end_is_empty() {
    let app = TestApp::with_seed(&amodels(3)).await;
    let body = app.get("/api/amodel/?page=9").await.json_with(200);
    assert_eq!(
        body,
        json!({"meta": {"model": "amodel", "page": 9, "previous": "/api/amodel/?page=8",
                        "next": ""},
               "objects": []})
    );
    let empty = TestApp::new().await;
    assert_eq!(
        empty.get("/api/amodel/").await.json_with(200),
        json!({"meta": {"model": "amodel", "page": 1, "previous": "", "next": ""},
               "objects": []})
    );
}

#[actix_web::test]
async fn bad_limit_or_page_is_400() {
    let app = TestApp::with_seed(&amodels(2)).await;
    for (param, value) in [
        ("limit", "0"),
        ("limit", "-1"),
        ("limit", "abc"),
        ("limit", "1.5"),
        ("limit", ""),
        ("limit", "1; DROP TABLE amodel"),
        ("page", "0"),
        ("page", "-2"),
        ("page", "abc"),
        ("page", ""),
        ("page", "99999999999999999999"),
    ] {
        let resp = app.get(&url("/api/amodel/", &[(param, value)])).await;
        assert_param_error(&resp, param);
    }
    assert_eq!(app.count("amodel"), 2);
}

#[actix_web::test]
async fn links_keep_every_other_parameter_percent_encoded() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (1, 'p a'), (2, 'p b'), (3, 'p c'), (4, 'p d'), (5, 'p e'), \
         (6, 'other');",
    )
    .await;
    let uri = url(
        "/api/amodel/",
        &[
            ("a_field__like", "p %"),
            ("ordering", "-a_field"),
            ("limit", "2"),
            ("page", "2"),
            ("id__in", "1,2,3,4,5"),
        ],
    );
    let (meta, ids) = page(&app, &uri).await;
    assert_eq!(ids, [3, 2]);
    assert_eq!(
        meta["next"],
        json!("/api/amodel/?a_field__like=p+%25&ordering=-a_field&limit=2&id__in=1%2C2%2C3%2C4%2C5&page=3")
    );
    assert_eq!(
        meta["previous"],
        json!("/api/amodel/?a_field__like=p+%25&ordering=-a_field&limit=2&id__in=1%2C2%2C3%2C4%2C5&page=1")
    );
    // Following the links gives the neighbouring pages.
    let (_, next) = page(&app, meta["next"].as_str().unwrap()).await;
    assert_eq!(next, [1]);
    let (_, previous) = page(&app, meta["previous"].as_str().unwrap()).await;
    assert_eq!(previous, [5, 4]);
}

#[actix_web::test]
async fn links_encode_unicode_and_repeated_parameters() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'é'), (2, 'é'), (3, 'x');").await;
    let (meta, ids) = page(
        &app,
        &url(
            "/api/amodel/",
            &[("a_field", "é"), ("a_field", "y&z=1"), ("limit", "1")],
        ),
    )
    .await;
    assert_eq!(ids, [1]);
    assert_eq!(
        meta["next"],
        json!("/api/amodel/?a_field=%C3%A9&a_field=y%26z%3D1&limit=1&page=2")
    );
}

#[actix_web::test]
async fn links_drop_key_and_secret() {
    let app = TestApp::with_seed(
        "INSERT INTO apikey VALUES (1, 'k', 's');
         INSERT INTO note VALUES (1, 'n1', '2020-01-01 00:00:00'), (2, 'n2', '2020-01-01 00:00:00'),
                                 (3, 'n3', '2020-01-01 00:00:00');",
    )
    .await;
    let (meta, ids) = page(&app, "/api/note/?key=k&limit=1&secret=s&page=2").await;
    assert_eq!(ids, [2]);
    assert_eq!(meta["next"], json!("/api/note/?limit=1&page=3"));
    assert_eq!(meta["previous"], json!("/api/note/?limit=1&page=1"));
    // The same pair in headers: the links carry nothing of it either.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/note/?limit=2")
                .insert_header(("key", "k"))
                .insert_header(("secret", "s")),
        )
        .await;
    assert_eq!(resp.ids(), [1, 2]);
    assert_eq!(
        resp.json()["meta"]["next"],
        json!("/api/note/?limit=2&page=2")
    );
}

#[actix_web::test]
async fn links_use_the_canonical_path_and_prefix() {
    let app = TestApp::with_seed(
        "INSERT INTO note VALUES (1, 'n1', '2020-01-01 00:00:00'), (2, 'n2', '2020-01-01 00:00:00');",
    )
    .await;
    let (meta, _) = page(&app, "/v2/note?limit=1").await;
    assert_eq!(meta["next"], json!("/v2/note/?limit=1&page=2"));
    assert_eq!(meta["model"], json!("note"));
    let app = TestApp::with_seed(&amodels(3)).await;
    let (meta, _) = page(&app, "/api/amodel?limit=1&page=2").await;
    assert_eq!(meta["next"], json!("/api/amodel/?limit=1&page=3"));
    assert_eq!(meta["previous"], json!("/api/amodel/?limit=1&page=1"));
}

#[actix_web::test]
async fn walking_next_then_previous_visits_every_row_once() {
    let app = TestApp::with_seed(&amodels(11)).await;
    let mut pages = Vec::new();
    let mut uri = "/api/amodel/?limit=3&ordering=-a_field".to_owned();
    loop {
        let (meta, ids) = page(&app, &uri).await;
        pages.push((meta["page"].clone(), ids));
        match meta["next"].as_str() {
            Some("") => break,
            Some(next) => uri = next.to_owned(),
            None => panic!("no next link"),
        }
    }
    assert_eq!(
        pages,
        vec![
            (json!(1), vec![11, 10, 9]),
            (json!(2), vec![8, 7, 6]),
            (json!(3), vec![5, 4, 3]),
            (json!(4), vec![2, 1]),
        ]
    );
    let mut back = Vec::new();
    loop {
        let (meta, ids) = page(&app, &uri).await;
        back.push(ids);
        match meta["previous"].as_str() {
            Some("") => break,
            Some(previous) => uri = previous.to_owned(),
            None => panic!("no previous link"),
        }
    }
    assert_eq!(
        back,
        vec![vec![2, 1], vec![5, 4, 3], vec![8, 7, 6], vec![11, 10, 9]]
    );
}

#[actix_web::test]
async fn ordering_combines_with_filters_and_pages() {
    let app = TestApp::with_seed(&samples(&[
        (4, true, None),
        (2, true, None),
        (3, true, None),
        (1, true, None),
        (5, true, None),
    ]))
    .await;
    let (meta, ids) = page(&app, "/api/sample/?qty__gte=2&ordering=-qty&limit=2").await;
    assert_eq!(ids, [5, 1]);
    assert_eq!(
        meta["next"],
        json!("/api/sample/?qty__gte=2&ordering=-qty&limit=2&page=2")
    );
    let (_, ids) = page(&app, meta["next"].as_str().unwrap()).await;
    assert_eq!(ids, [3, 2]);
}

#[actix_web::test]
async fn the_largest_page_number_is_past_the_end() {
    let app = TestApp::with_seed(&amodels(3)).await;
    let body = app
        .get("/api/amodel/?page=9223372036854775807")
        .await
        .json_with(200);
    assert_eq!(
        body,
        json!({"meta": {"model": "amodel", "page": 9223372036854775807i64,
                        "previous": "/api/amodel/?page=9223372036854775806", "next": ""},
               "objects": []})
    );
    let (meta, ids) = page(&app, "/api/amodel/?limit=1&page=4611686018427387904").await;
    assert_eq!(ids, Vec::<i64>::new());
    assert_eq!(meta["next"], json!(""));
}

// --- keyset (cursor) pagination -----------------------------------------------------------------

/// Follows `next` links from `uri`; returns (page, ids, previous) per page.
async fn walk(app: &TestApp, uri: &str) -> Vec<(Value, Vec<i64>, Value)> {
    let mut pages = Vec::new();
    let mut uri = uri.to_owned();
    loop {
        let (meta, ids) = page(app, &uri).await;
        pages.push((meta["page"].clone(), ids, meta["previous"].clone()));
        match meta["next"].as_str() {
            Some("") => return pages,
            Some(next) => uri = next.to_owned(),
            None => panic!("no next link"),
        }
    }
}

#[actix_web::test]
async fn cursor_pages_walk_every_row_once_in_order_with_ties() {
    let qtys = [3, 1, 3, 2, 3, 1, 2, 3];
    let rows: Vec<(i32, bool, Option<&str>)> = qtys.iter().map(|q| (*q, true, None)).collect();
    let app = TestApp::with_seed(&samples(&rows)).await;
    let pages = walk(&app, "/api/cursor/?ordering=-qty&qty__gte=1").await;
    let ids: Vec<Vec<i64>> = pages.iter().map(|(_, ids, _)| ids.clone()).collect();
    // qty descending, ties by id ascending: 3: 1,3,5,8; 2: 4,7; 1: 2,6.
    assert_eq!(ids, vec![vec![1, 3, 5], vec![8, 4, 7], vec![2, 6]]);
    let numbers: Vec<Value> = pages.iter().map(|(n, _, _)| n.clone()).collect();
    assert_eq!(numbers, vec![json!(1), json!(2), json!(3)]);
    // Cursor pages lead forward only; the first page still links nowhere back.
    assert!(pages.iter().all(|(_, _, previous)| previous == ""));
    let (meta, _) = page(&app, "/api/cursor/?ordering=-qty&qty__gte=1&key=k&secret=s").await;
    let next = meta["next"].as_str().unwrap();
    assert!(
        next.starts_with("/api/cursor/?ordering=-qty&qty__gte=1&cursor="),
        "{next}"
    );
}

#[actix_web::test]
async fn rows_added_before_the_cursor_do_not_shift_the_next_page() {
    let app = TestApp::with_seed(&amodels(0)).await;
    app.sql(&samples(&[
        (1, true, None),
        (2, true, None),
        (3, true, None),
        (4, true, None),
    ]));
    let (meta, ids) = page(&app, "/api/cursor/?ordering=qty").await;
    assert_eq!(ids, [1, 2, 3]);
    // A new row sorting first would push an OFFSET page by one; the cursor page is stable.
    app.sql(
        "INSERT INTO sample (id, name, qty, stamp) VALUES (9, 's9', 0, '2020-01-01 00:00:00');",
    );
    let (_, ids) = page(&app, meta["next"].as_str().unwrap()).await;
    assert_eq!(ids, [4]);
}

#[actix_web::test]
async fn a_nullable_ordering_column_pages_by_number() {
    let app = TestApp::with_seed(&samples(&[
        (1, true, Some("b")),
        (2, true, None),
        (3, true, Some("a")),
        (4, true, Some("c")),
    ]))
    .await;
    let (meta, ids) = page(&app, "/api/cursor/?ordering=remark").await;
    assert_eq!(ids, [2, 3, 1]);
    assert_eq!(meta["next"], json!("/api/cursor/?ordering=remark&page=2"));
}

#[actix_web::test]
async fn bad_cursors_are_400() {
    let app = TestApp::with_seed(&samples(&[(1, true, None)])).await;
    for cursor in ["nope", "W10", "WzEsWzFdXQ", "WzIsWyJ4IiwxXV0"] {
        let resp = app
            .get(&format!("/api/cursor/?ordering=qty&cursor={cursor}"))
            .await;
        assert_param_error(&resp, "cursor");
    }
    assert_param_error(&app.get("/api/sample/?cursor=WzIsWzEsMV1d").await, "cursor");
}
