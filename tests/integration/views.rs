//! `plover::views`: `get_object_or_404` and `Query::get_or_404` (HTML and JSON 404s),
//! `object_list` and `PaginatedQuery` (page bounds as in the REST API, counts, links that keep
//! the other parameters), through the views of `tests/views_routes.rs`.

use plover_tests::*;

/// Two users; alice has messages 1-7, bob 8; message n was posted on day n.
async fn app() -> TestApp {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    let mut rows = Vec::new();
    for n in 1..=8 {
        let user = if n <= 7 { alice } else { bob };
        rows.push(format!(
            "({n}, {user}, 'message <{n}>', '2020-01-{n:02} 10:00:00')"
        ));
    }
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES {};",
        rows.join(", ")
    ));
    app
}

/// The `data-id`s of the listed messages.
fn listed(html: &str) -> Vec<i64> {
    html.split("data-id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse().ok())
        .collect()
}

#[actix_web::test]
async fn get_object_or_404_renders_the_row_or_an_html_404() {
    let app = app().await;
    let found = app.get("/views/message/3/").await;
    found.expect(200);
    assert_eq!(
        found.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = found.text();
    assert!(!html.contains("<3>"), "escaped: {html}");
    assert!(
        unescape_html(&html).contains("<p>message <3></p>"),
        "{html}"
    );

    for missing in [
        "/views/message/99/",
        "/views/message/0/",
        "/views/message/99999999999/",
    ] {
        let resp = app.get(missing).await;
        resp.expect(404);
        assert_eq!(
            resp.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{missing}"
        );
        assert!(
            resp.text().contains("<h1>Not Found</h1>"),
            "{}",
            resp.text()
        );
    }
}

#[actix_web::test]
async fn get_object_or_404_in_a_json_view_answers_the_json_error() {
    let app = app().await;
    let found = app.get("/views/message/2.json").await.json_with(200);
    assert_eq!(found["content"], "message <2>");
    let missing = app.get("/views/message/42.json").await;
    assert_eq!(
        missing.json_with(404),
        serde_json::json!({"error": "Not found"})
    );
}

#[actix_web::test]
async fn get_or_404_loads_by_a_filter_through_a_foreign_key() {
    let app = app().await;
    let alice = app.get("/views/by/alice/latest/").await;
    alice.expect(200);
    assert!(
        alice.text().contains("<h1>Message 7</h1>"),
        "{}",
        alice.text()
    );
    let bob = app.get("/views/by/bob/latest/").await;
    assert!(bob.text().contains("<h1>Message 8</h1>"), "{}", bob.text());
    app.get("/views/by/carol/latest/").await.expect(404);
}

#[actix_web::test]
async fn object_list_pages_count_and_link_in_order() {
    let app = app().await;
    let first = app.get("/views/messages/").await;
    first.expect(200);
    let html = first.text();
    assert_eq!(listed(&html), vec![1, 2, 3]);
    assert!(html.contains("8 messages, page 1 of 3"), "{html}");
    assert_eq!(link(&html, "prev"), None);
    assert_eq!(
        link(&html, "next").as_deref(),
        Some("/views/messages/?page=2")
    );

    let second = app.get("/views/messages/?page=2").await.text();
    assert_eq!(listed(&second), vec![4, 5, 6]);
    assert_eq!(
        link(&second, "prev").as_deref(),
        Some("/views/messages/?page=1")
    );
    assert_eq!(
        link(&second, "next").as_deref(),
        Some("/views/messages/?page=3")
    );

    let last = app.get("/views/messages/?page=3").await.text();
    assert_eq!(listed(&last), vec![7, 8]);
    assert_eq!(link(&last, "next"), None);
}

#[actix_web::test]
async fn a_page_past_the_end_is_empty_and_bad_pages_are_400() {
    let app = app().await;
    let past = app.get("/views/messages/?page=9").await;
    past.expect(200);
    let html = past.text();
    assert_eq!(listed(&html), Vec::<i64>::new());
    assert!(html.contains("page 9 of 3"), "{html}");
    // As in the REST API, the previous page of a page past the end is page - 1.
    assert_eq!(
        link(&html, "prev").as_deref(),
        Some("/views/messages/?page=8")
    );
    assert_eq!(link(&html, "next"), None);
    let huge = app.get("/views/messages/?page=9223372036854775807").await;
    huge.expect(200);
    assert_eq!(listed(&huge.text()), Vec::<i64>::new());

    for bad in ["0", "-1", "abc", "1.5", "", "99999999999999999999"] {
        let resp = app.get(&format!("/views/messages/?page={bad}")).await;
        resp.expect(400);
        assert_eq!(
            resp.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(
            resp.text().contains("page: expected an integer"),
            "{bad}: {}",
            resp.text()
        );
        let json = app.get(&format!("/views/messages.json?page={bad}")).await;
        assert!(
            json.json_with(400)["error"]
                .as_str()
                .unwrap()
                .contains("'page'"),
            "{bad}"
        );
    }
    // The first `page` counts, as in the REST API.
    let twice = app.get("/views/messages/?page=2&page=x").await;
    assert_eq!(listed(&twice.text()), vec![4, 5, 6]);
}

#[actix_web::test]
async fn page_links_keep_the_other_parameters_encoded() {
    let app = app().await;
    let html = app
        .get("/views/messages/?user=1&tag=a%20b%26c&page=2")
        .await
        .text();
    // alice (user 1) has 7 messages: page 2 holds 4-6.
    assert_eq!(listed(&html), vec![4, 5, 6]);
    assert!(html.contains("7 messages, page 2 of 3"), "{html}");
    assert_eq!(
        link(&html, "next").as_deref(),
        Some("/views/messages/?user=1&tag=a+b%26c&page=3")
    );
    assert_eq!(
        link(&html, "prev").as_deref(),
        Some("/views/messages/?user=1&tag=a+b%26c&page=1")
    );
}

#[actix_web::test]
async fn paginated_query_serves_json_views_with_the_default_page_size() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let rows: Vec<String> = (1..=45)
        .map(|n| format!("({n}, {alice}, 'm{n}', '2020-01-01 10:00:00')"))
        .collect();
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES {};",
        rows.join(", ")
    ));
    let first = app.get("/views/messages.json").await.json_with(200);
    assert_eq!(first["count"], 45);
    assert_eq!(first["pages"], 3);
    let ids: Vec<i64> = first["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(ids, (26..=45).rev().collect::<Vec<i64>>());
    assert_eq!(first["next"], "/views/messages.json?page=2");
    assert_eq!(first["previous"], serde_json::Value::Null);
    let last = app.get("/views/messages.json?page=3").await.json_with(200);
    assert_eq!(last["ids"].as_array().unwrap().len(), 5);
    assert_eq!(last["next"], serde_json::Value::Null);

    let empty = TestApp::new().await;
    let none = empty.get("/views/messages.json").await.json_with(200);
    assert_eq!(none["count"], 0);
    assert_eq!(none["pages"], 1);
    assert_eq!(none["next"], serde_json::Value::Null);
}

#[actix_web::test]
async fn a_query_naming_a_missing_field_is_a_500_page_without_details() {
    let app = app().await;
    let resp = app.get("/views/broken/").await;
    resp.expect(500);
    let html = resp.text();
    assert!(html.contains("Something went wrong"), "{html}");
    assert!(!html.contains("nope"), "{html}");
}
