//! The admin area (docs/contract.md#admin, docs/admin.md), as the conformance app sets it up:
//! order of checks, index (ordering, computed columns, pages, filters, excluded fields), HTML
//! escaping, add and edit forms, delete page and bulk delete, export, foreign-key lookup (also
//! in the filter form), the dashboard panel, and an application's own templates.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::{self, TestRequest};
use actix_web::App;
use askama::Template;
use plover::admin::views::{FormView, IndexView};
use plover::admin::{Admin, AdminTemplates, ModelAdmin};
use plover_tests::{
    assert_param_error, input_value, unescape_html, url, AModel, BModel, Browser, Resp, TestApp,
    CHAINS,
};
use serde_json::{json, Value};

mod a11y;
mod actions;
mod facets;
mod feedback;
mod import;
mod inlines;
mod ops;
mod stale;

const PW: &str = "pw";

/// Logs in `root`, an active admin (created here: the first user, id 1 when no user is seeded).
pub(crate) async fn admin(app: &TestApp) -> Browser<'_> {
    app.user_with("root", PW, true, true);
    let browser = app.browser();
    browser.login("root", PW).await.expect(302);
    browser
}

/// POSTs `fields` to `uri` with the session's CSRF token (read from the dashboard).
pub(crate) async fn post(browser: &Browser<'_>, uri: &str, fields: &[(&str, &str)]) -> Resp {
    let token = browser.csrf("/admin/").await;
    let mut all = fields.to_vec();
    all.push(("csrf_token", &token));
    browser.post_form(uri, &all).await
}

/// The primary keys of the index rows, in order (`value` of the bulk-delete checkboxes `id`).
fn row_ids(html: &str) -> Vec<i64> {
    html.split("name=\"id\" value=\"")
        .skip(1)
        .map(|rest| {
            rest[..rest.find('"').expect("the value's end")]
                .parse()
                .expect("an integer primary key")
        })
        .collect()
}

/// Asserts a 302 to the login page; returns the decoded `next`.
#[track_caller]
fn login_next(resp: &Resp) -> String {
    resp.expect(302);
    let location = resp.header("location").expect("a Location");
    let (path, query) = location.split_once('?').expect("a query");
    assert_eq!(path, "/accounts/login/");
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    assert_eq!(pairs.len(), 1, "{location}");
    assert_eq!(pairs[0].0, "next", "{location}");
    pairs[0].1.clone()
}

/// Asserts a 303 (See Other); returns its `Location`.
#[track_caller]
pub(crate) fn see_other(resp: &Resp) -> String {
    resp.expect(303);
    resp.header("location").expect("a Location").to_owned()
}

/// Asserts a redirect (302 or 303); returns its `Location`.
#[track_caller]
fn redirected(resp: &Resp) -> String {
    assert!(
        matches!(resp.code(), 302 | 303),
        "a redirect expected, got {}: {}",
        resp.code(),
        String::from_utf8_lossy(&resp.body)
    );
    resp.header("location").expect("a Location").to_owned()
}

/// The query pairs of a URL.
fn query_pairs(location: &str) -> Vec<(String, String)> {
    let query = location.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

/// The opening tag of the form control named `name`.
fn control<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let start = html[..at].rfind('<')?;
    let end = at + html[at..].find('>')?;
    Some(&html[start..=end])
}

/// The error message shown next to the form field `name` (between its control and the next
/// field), decoded.
fn field_error(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let rest = &html[at..];
    let end = rest
        .find("<div class=\"field")
        .or_else(|| rest.find("</form>"))
        .unwrap_or(rest.len());
    let block = &rest[..end];
    let start = block.find("class=\"field-error\"")?;
    let text = start + block[start..].find('>')? + 1;
    let text_end = text + block[text..].find('<')?;
    Some(unescape_html(&block[text..text_end]))
}

/// The `value` of the selected option of the select named `name`.
fn selected_option(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let rest = &html[at..];
    let select = &rest[..rest.find("</select>")?];
    let option = select
        .split("<option")
        .skip(1)
        .find(|o| o[..o.find('>').unwrap_or(o.len())].contains(" selected"))?;
    let value = option.find("value=\"")? + "value=\"".len();
    Some(unescape_html(
        &option[value..value + option[value..].find('"')?],
    ))
}

/// The `value`s of the checkboxes named `fields` of the export form.
fn export_columns(html: &str) -> Vec<String> {
    html.split("name=\"fields\" value=\"")
        .skip(1)
        .map(|rest| unescape_html(&rest[..rest.find('"').expect("the value's end")]))
        .collect()
}

/// What the tests of the order of checks compare before and after a refused request.
fn snapshot(app: &TestApp) -> (Vec<i64>, Option<String>) {
    (
        ["amodel", "bmodel", "cmodel", "dmodel", "note", "user"]
            .iter()
            .map(|t| app.count(t))
            .collect(),
        app.query_text("SELECT a_field FROM amodel WHERE id = 1"),
    )
}

/// The POSTs of the order-of-checks test: each would write if it went through.
const WRITES: &[(&str, &[(&str, &str)])] = &[
    ("/admin/amodel/add/", &[("a_field", "new")]),
    ("/admin/amodel/1/", &[("a_field", "changed")]),
    ("/admin/amodel/1/delete/", &[]),
    (
        "/admin/amodel/",
        &[("action", "delete"), ("id", "2"), ("confirm", "yes")],
    ),
    ("/admin/notes/create/", &[("message", "a note")]),
];

#[actix_web::test]
async fn admin_checks_login_then_permission_then_csrf_then_existence_then_validation() {
    let app = TestApp::with_seed(CHAINS).await;
    app.user("pleb", PW);
    let before = snapshot(&app);
    let gets = [
        "/admin/",
        "/admin/amodel/?a_field=a1&ordering=-id",
        "/admin/amodel/add/",
        "/admin/amodel/1/",
        "/admin/amodel/1/delete/",
        "/admin/amodel/export/",
        "/admin/message/lookup/user/?q=a",
        "/admin/nope/",
        "/admin/amodel/999/",
    ];

    // Anonymous: to the login page with next = path and query, GET and POST (even with a
    // valid token of the anonymous session), nothing written.
    let anon = app.browser();
    for uri in gets {
        assert_eq!(login_next(&anon.get(uri).await), uri);
    }
    let token = anon.csrf("/accounts/login/").await;
    for (uri, fields) in WRITES {
        let mut fields = fields.to_vec();
        fields.push(("csrf_token", &token));
        assert_eq!(login_next(&anon.post_form(uri, &fields).await), *uri);
    }
    let uri = "/admin/amodel/?a_field__like=a%25";
    let resp = anon
        .post_form(uri, &[("action", "delete"), ("id", "1")])
        .await;
    assert_eq!(login_next(&resp), uri);
    assert_eq!(snapshot(&app), before);

    // Logged in without the admin permission: 403, unknown models included; POSTs with this
    // session's valid token write nothing.
    let pleb = app.browser();
    pleb.login("pleb", PW).await.expect(302);
    for uri in gets {
        pleb.get(uri).await.expect(403);
    }
    let token = pleb.csrf("/accounts/login/").await;
    for (uri, fields) in WRITES {
        let mut fields = fields.to_vec();
        fields.push(("csrf_token", &token));
        pleb.post_form(uri, &fields).await.expect(403);
    }
    assert_eq!(snapshot(&app), before);

    // An admin without a token, with a forged one or with another session's: 403, also where
    // the row or the model does not exist; nothing written.
    let root = admin(&app).await;
    let before = snapshot(&app);
    for (uri, fields) in WRITES
        .iter()
        .copied()
        .chain([("/admin/amodel/999/", &[("a_field", "x")][..])])
        .chain([("/admin/nope/add/", &[][..])])
    {
        root.post_form(uri, fields).await.expect(403);
        for forged in ["forged", "", token.as_str()] {
            let mut fields = fields.to_vec();
            fields.push(("csrf_token", forged));
            root.post_form(uri, &fields).await.expect(403);
        }
    }
    assert_eq!(snapshot(&app), before);

    // Then a missing row or an unknown model name: 404, before any validation.
    for uri in [
        "/admin/nope/",
        "/admin/nope/add/",
        "/admin/nope/lookup/user/",
        "/admin/amodel/999/",
        "/admin/amodel/999/delete/",
        "/admin/amodel/abc/",
        "/admin/amodel/1/bogus/",
    ] {
        root.get(uri).await.expect(404);
    }
    post(
        &root,
        "/admin/bmodel/999/",
        &[("a", "999"), ("b_field", "x")],
    )
    .await
    .expect(404);
    post(&root, "/admin/amodel/999/delete/", &[])
        .await
        .expect(404);
    post(&root, "/admin/nope/add/", &[("a_field", "x")])
        .await
        .expect(404);
    assert_eq!(snapshot(&app), before);

    // Then validation.
    post(&root, "/admin/bmodel/1/", &[("a", "999"), ("b_field", "x")])
        .await
        .expect(400);
    assert_eq!(snapshot(&app), before);
    assert_eq!(
        app.query_text("SELECT b_field FROM bmodel WHERE id = 1")
            .as_deref(),
        Some("b1")
    );
}

const FRUITS: &str = r#"
INSERT INTO amodel (id, a_field) VALUES (1, 'mango'), (2, 'apple'), (3, 'zucchini'), (4, 'banana');
"#;

#[actix_web::test]
async fn index_orders_by_primary_key_by_default_and_sorts_by_ordering() {
    let app = TestApp::with_seed(FRUITS).await;
    let root = admin(&app).await;
    for (uri, expected) in [
        ("/admin/amodel/", &[1, 2, 3, 4][..]),
        ("/admin/amodel/?ordering=a_field", &[2, 4, 1, 3]),
        ("/admin/amodel/?ordering=-a_field", &[3, 1, 4, 2]),
        ("/admin/amodel/?ordering=-id", &[4, 3, 2, 1]),
        ("/admin/amodel/?ordering=", &[1, 2, 3, 4]),
    ] {
        let html = root.get(uri).await.expect(200).text();
        assert_eq!(row_ids(&html), expected, "{uri}");
    }
}

#[actix_web::test]
async fn index_shows_every_column_with_computed_ones() {
    let app = TestApp::with_seed(FRUITS).await;
    let root = admin(&app).await;
    let pleb = app.user("pleb", PW);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {pleb}, 'first words', '2020-01-02 03:04:05'), \
         (2, {pleb}, 'second words', '2020-01-03 03:04:05'), \
         (3, {pleb}, 'third words', '2020-01-04 03:04:05');"
    ));
    let resp = root.get("/admin/amodel/").await;
    resp.expect(200);
    assert_eq!(
        resp.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = resp.text();
    for shout in ["MANGO", "APPLE", "ZUCCHINI", "BANANA"] {
        assert!(html.contains(shout), "computed column `shout`: {shout}");
        assert!(html.contains(&shout.to_lowercase()), "{shout}");
    }

    // The user index: the computed message count; the password hash is never shown.
    let html = root.get("/admin/user/").await.expect(200).text();
    assert_eq!(row_ids(&html), [1, pleb]);
    assert!(html.contains("pleb@example.com"), "{html}");
    let hash = app
        .query_text(&format!("SELECT password FROM \"user\" WHERE id = {pleb}"))
        .expect("a hash");
    assert!(!html.contains(&hash));
    let row = &html[html
        .find(&format!("name=\"id\" value=\"{pleb}\""))
        .expect("pleb's row")..];
    let row = &row[..row.find("</tr>").expect("the row's end")];
    assert!(row.contains("<td>3</td>"), "message_count of pleb: {row}");

    // The message index: the user column shows the related row's text, the date as stored.
    let html = root.get("/admin/message/").await.expect(200).text();
    assert!(html.contains("first words") && html.contains("2020-01-02 03:04:05"));
    assert!(html.contains("<td>pleb</td>"), "{html}");
}

#[actix_web::test]
async fn index_paginates_by_20() {
    let rows: Vec<String> = (1..=25).map(|n| format!("({n}, 'row{n:02}')")).collect();
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel (id, a_field) VALUES {};",
        rows.join(", ")
    ))
    .await;
    let root = admin(&app).await;
    let page1 = root.get("/admin/amodel/").await.expect(200).text();
    assert_eq!(row_ids(&page1), (1..=20).collect::<Vec<i64>>());
    assert!(page1.contains("rel=\"next\""), "a link to page 2");
    let page2 = root.get("/admin/amodel/?page=2").await.expect(200).text();
    assert_eq!(row_ids(&page2), (21..=25).collect::<Vec<i64>>());
    assert!(!page2.contains("rel=\"next\""), "no page 3");
    assert!(page2.contains("rel=\"prev\""), "a link to page 1");
    let html = root
        .get("/admin/amodel/?ordering=-id&page=2")
        .await
        .expect(200)
        .text();
    assert_eq!(row_ids(&html), [5, 4, 3, 2, 1]);
    let html = root.get("/admin/amodel/?page=3").await.expect(200).text();
    assert_eq!(row_ids(&html), Vec::<i64>::new());
}

#[actix_web::test]
async fn index_page_size_follows_list_per_page_and_list_max_show_all() {
    let rows: Vec<String> = (1..=12).map(|n| format!("({n}, 'row{n:02}')")).collect();
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel (id, a_field) VALUES {};",
        rows.join(", ")
    ))
    .await;
    app.user_with("root", PW, true, true);
    let mut custom = Admin::new(&app.auth);
    custom.register(
        ModelAdmin::<AModel>::new()
            .list_per_page(5)
            .list_max_show_all(12),
    );
    let service = plover_tests::TestService::new(
        App::new()
            .wrap(app.auth.session_middleware())
            .configure(app.auth.setup())
            .configure(custom.setup()),
    )
    .await;
    let root = service.browser();
    root.login("root", PW).await.expect(302);
    let page = root.get("/admin/amodel/").await.expect(200).text();
    assert_eq!(row_ids(&page), (1..=5).collect::<Vec<i64>>());
    assert!(
        page.contains("<a href=\"/admin/amodel/?limit=12\" class=\"show-all\">Show all</a>"),
        "{page}"
    );
    let all = root.get("/admin/amodel/?limit=12").await.expect(200).text();
    assert_eq!(row_ids(&all), (1..=12).collect::<Vec<i64>>());
    assert!(
        !all.contains("show-all") && !all.contains("rel=\"next\""),
        "{all}"
    );
    // Over the bound: refused on the page, which shows a page of 5 and its links drop it.
    let refused = root.get("/admin/amodel/?limit=13").await.expect(400).text();
    assert!(
        refused.contains("limit=13 was refused: this list shows at most 12 rows a page."),
        "{refused}"
    );
    assert_eq!(row_ids(&refused), (1..=5).collect::<Vec<i64>>());
    assert!(
        refused.contains("href=\"/admin/amodel/?page=2\""),
        "{refused}"
    );
    // One more row than the bound: no "Show all".
    app.sql("INSERT INTO amodel (id, a_field) VALUES (13, 'row13')");
    let page = root.get("/admin/amodel/").await.expect(200).text();
    assert!(!page.contains("show-all"), "{page}");
    root.get("/admin/amodel/?limit=0").await.expect(400);
}

#[actix_web::test]
async fn index_filters_use_the_rest_syntax_and_what_rest_refuses_is_400() {
    let app = TestApp::with_seed(FRUITS).await;
    let root = admin(&app).await;
    for (uri, expected) in [
        ("/admin/amodel/?a_field=apple", &[2][..]),
        ("/admin/amodel/?a_field__like=%25an%25", &[1, 4]),
        ("/admin/amodel/?id__in=1,3", &[1, 3]),
        ("/admin/amodel/?id__ne=1&ordering=-a_field", &[3, 4, 2]),
    ] {
        let html = root.get(uri).await.expect(200).text();
        assert_eq!(row_ids(&html), expected, "{uri}");
    }
    for uri in [
        "/admin/amodel/?nope=1",
        "/admin/amodel/?a_field__bogus=1",
        "/admin/amodel/?ordering=nope",
        "/admin/amodel/?ordering=-nope",
        "/admin/amodel/?ordering=shout",
        "/admin/amodel/?id=abc",
        "/admin/amodel/?page=0",
        "/admin/amodel/?page=abc",
        "/admin/amodel/?a_field=apple&nope=1",
    ] {
        let resp = root.get(uri).await;
        assert_eq!(resp.code(), 400, "{uri}");
        assert_eq!(row_ids(&resp.text()), Vec::<i64>::new(), "{uri}");
        assert!(!resp.text().contains("mango"), "never the rows: {uri}");
    }
}

#[actix_web::test]
async fn index_searches_its_search_fields_and_keeps_the_search_everywhere() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let alice = app.user("alice", PW);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'Hello world', '2020-01-01 00:00:00'),
            (2, {alice}, 'bye 100%', '2020-01-02 00:00:00'), (3, 1, 'hello root', '2020-01-03 00:00:00');"
    ));
    let html = root.get("/admin/message/?q=HELLO").await.expect(200).text();
    assert_eq!(row_ids(&html), [1, 3]);
    // The box shows the search and keeps the other parameters, not the page.
    assert!(html.contains(r#"name="q" value="HELLO""#), "{html}");
    let html = root
        .get("/admin/message/?q=alice&ordering=-id&page=1")
        .await
        .expect(200)
        .text();
    assert_eq!(row_ids(&html), [2, 1], "through the join, ordered");
    let form = html
        .split("class=\"search-form\"")
        .nth(1)
        .unwrap_or_default();
    let form = form.split("</form>").next().unwrap_or_default();
    assert!(form.contains(r#"name="ordering" value="-id""#), "{form}");
    assert!(!form.contains(r#"name="page""#), "{form}");
    // Sorting links and the export keep it.
    assert!(html.contains("?q=alice&#38;ordering=id\""), "{html}");
    assert!(html.contains("export/?q=alice"), "{html}");
    // `%` is a plain character.
    assert_eq!(
        row_ids(&root.get("/admin/message/?q=0%25").await.text()),
        [2]
    );
    // A model admin without search fields shows no box and refuses `q`.
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert!(!html.contains("search-form"), "{html}");
    root.get("/admin/amodel/?q=x").await.expect(400);
}

#[actix_web::test]
async fn index_never_filters_or_orders_on_excluded_fields_also_through_joins() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let alice = app.user("alice", PW);
    let bob = app.user("bob", PW);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {alice}, 'from alice', '2020-01-02 03:04:05'), \
         (2, {bob}, 'from bob', '2020-01-03 03:04:05');"
    ));
    // Joins through the user work on the fields the user admin shows.
    let by_bob = format!("/admin/message/?user={bob}");
    for (uri, expected) in [
        ("/admin/message/?user__username=alice", &[1][..]),
        (by_bob.as_str(), &[2]),
        ("/admin/user/?username=bob", &[bob]),
        ("/admin/user/?ordering=-username", &[1, bob, alice]),
    ] {
        let html = root.get(uri).await.expect(200).text();
        assert_eq!(row_ids(&html), expected, "{uri}");
    }
    let mut accepted = Vec::new();
    for uri in [
        "/admin/user/?password=x",
        "/admin/user/?password__like=%25",
        "/admin/user/?password__ne=x",
        "/admin/user/?ordering=password",
        "/admin/user/?ordering=-password",
        "/admin/user/?ordering=username,password",
        "/admin/message/?user__password=x",
        "/admin/message/?user__password__like=%25",
        "/admin/message/?user__password__ne=x",
    ] {
        let resp = root.get(uri).await;
        if resp.code() != 400 || !row_ids(&resp.text()).is_empty() {
            accepted.push(format!(
                "{uri} -> {} {:?}",
                resp.code(),
                row_ids(&resp.text())
            ));
        }
    }
    assert!(
        accepted.is_empty(),
        "refusals expected (400): {accepted:#?}"
    );
}

#[actix_web::test]
async fn index_filter_form_redirects_to_the_rest_syntax() {
    let app = TestApp::with_seed(FRUITS).await;
    let root = admin(&app).await;
    let location = see_other(
        &root
            .get("/admin/amodel/?_fk=a_field__like&_fv=%25an%25")
            .await,
    );
    assert!(location.starts_with("/admin/amodel/?"), "{location}");
    assert_eq!(
        query_pairs(&location),
        [("a_field__like".to_owned(), "%an%".to_owned())]
    );
    let html = root.get(&location).await.expect(200).text();
    assert_eq!(row_ids(&html), [1, 4]);

    // Other parameters are kept, but the page: a new filter starts on page 1.
    let location = see_other(
        &root
            .get("/admin/amodel/?ordering=-id&page=2&id__ne=4&_fk=a_field__like&_fv=%25an%25")
            .await,
    );
    let pairs = query_pairs(&location);
    for pair in [
        ("ordering", "-id"),
        ("id__ne", "4"),
        ("a_field__like", "%an%"),
    ] {
        assert!(
            pairs.contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?} in {location}"
        );
    }
    assert!(!pairs.iter().any(|(k, _)| k.starts_with('_') || k == "page"));
    let html = root.get(&location).await.expect(200).text();
    assert_eq!(row_ids(&html), [1]);
}

/// The opening tag of the filter form's option for the key `key`.
fn filter_option<'a>(html: &'a str, key: &str) -> &'a str {
    let start = html
        .find(&format!("<option value=\"{key}\""))
        .unwrap_or_else(|| panic!("an option {key}: {html}"));
    &html[start..start + html[start..].find('>').expect("the tag's end")]
}

#[actix_web::test]
async fn index_filter_keys_of_a_looked_up_foreign_key_carry_the_lookup() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let html = root.get("/admin/message/").await.expect(200).text();
    // The keys that take one user's key search users; the others are typed in.
    for key in ["user", "user__ne"] {
        assert!(
            filter_option(&html, key).contains("data-lookup=\"/admin/message/lookup/user/\""),
            "{key}: {}",
            filter_option(&html, key)
        );
    }
    for key in [
        "user__lt",
        "user__in",
        "id",
        "content",
        "content__like",
        "pub_date",
    ] {
        assert!(
            !filter_option(&html, key).contains("data-lookup"),
            "{key}: {}",
            filter_option(&html, key)
        );
    }
    // The search box is there for the script, hidden without it.
    assert!(
        html.contains("<span class=\"lookup filter-lookup\" hidden>"),
        "{html}"
    );
    root.get("/admin/message/lookup/user/?q=ro")
        .await
        .json_with(200);

    // A foreign key without a lookup: typed in.
    let html = root.get("/admin/bmodel/").await.expect(200).text();
    assert!(!filter_option(&html, "a").contains("data-lookup"), "{html}");
}

#[actix_web::test]
async fn every_value_in_admin_pages_is_html_escaped() {
    let script = "<script>alert(1)</script>";
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel (id, a_field) VALUES (1, '{script}');
         INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, '<script>alert(2)</script>');
         INSERT INTO note (id, message, created) VALUES (1, '<script>alert(3)</script>', '2020-01-01 00:00:00');"
    ))
    .await;
    let root = admin(&app).await;
    let check = |uri: &str, html: &str, shown: &[&str]| {
        assert!(
            !html.to_lowercase().contains("<script>alert"),
            "{uri}: {html}"
        );
        let decoded = unescape_html(html);
        for text in shown {
            assert!(decoded.contains(text), "{uri} shows {text}: {html}");
        }
    };
    for (uri, shown) in [
        ("/admin/amodel/", &[script, "<SCRIPT>ALERT(1)</SCRIPT>"][..]),
        (
            "/admin/amodel/?a_field=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
            &[script],
        ),
        ("/admin/amodel/1/", &[script]),
        (
            "/admin/amodel/1/delete/",
            &[script, "<script>alert(2)</script>"],
        ),
        ("/admin/bmodel/", &[script, "<script>alert(2)</script>"]),
        ("/admin/bmodel/add/", &[script]),
        ("/admin/", &["<script>alert(3)</script>"]),
    ] {
        let html = root.get(uri).await.expect(200).text();
        check(uri, &html, shown);
    }
    assert_eq!(
        input_value(&root.get("/admin/amodel/1/").await.text(), "a_field").as_deref(),
        Some(script)
    );

    // A failed submit shows the submitted values escaped too.
    let resp = post(
        &root,
        "/admin/bmodel/add/",
        &[("a", "999"), ("b_field", "<script>alert(4)</script>")],
    )
    .await;
    resp.expect(400);
    check("failed add", &resp.text(), &["<script>alert(4)</script>"]);
}

#[actix_web::test]
async fn add_creates_the_row_and_redirects_to_the_index() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a1');").await;
    let root = admin(&app).await;
    let pleb = app.user("pleb", PW);

    let html = root.get("/admin/amodel/add/").await.expect(200).text();
    assert!(control(&html, "a_field").is_some(), "{html}");
    assert!(input_value(&html, "csrf_token").is_some());

    let resp = post(&root, "/admin/amodel/add/", &[("a_field", "fresh")]).await;
    assert_eq!(see_other(&resp), "/admin/amodel/");
    assert_eq!(app.count("amodel"), 2);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 2")
            .as_deref(),
        Some("fresh")
    );

    // A foreign key by its field name, as a select of the related rows.
    let html = root.get("/admin/bmodel/add/").await.expect(200).text();
    assert!(control(&html, "a")
        .expect("a control `a`")
        .starts_with("<select"));
    let resp = post(
        &root,
        "/admin/bmodel/add/",
        &[("a", "1"), ("b_field", "bee")],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/bmodel/");
    assert_eq!(
        app.query_i64("SELECT a_id FROM bmodel WHERE b_field = 'bee'"),
        1
    );

    // A foreign key with a lookup, a date-time as one value.
    let id = pleb.to_string();
    let resp = post(
        &root,
        "/admin/message/add/",
        &[
            ("user", &id),
            ("content", "hello"),
            ("pub_date", "2020-01-02 03:04:05"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/message/");
    assert_eq!(
        app.query_i64("SELECT user_id FROM message WHERE content = 'hello'"),
        pleb
    );
    let message = app.get("/api/message/?content=hello").await.objects();
    assert_eq!(message.len(), 1);
    assert_eq!(message[0]["pub_date"], "2020-01-02 03:04:05");
}

#[actix_web::test]
async fn a_failed_add_writes_nothing_and_shows_the_form_again_with_the_submitted_values() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a1');").await;
    let root = admin(&app).await;
    let pleb = app.user("pleb", PW).to_string();
    let before = (
        app.count("amodel"),
        app.count("bmodel"),
        app.count("message"),
    );

    // A missing required field.
    let resp = post(&root, "/admin/amodel/add/", &[]).await;
    resp.expect(400);
    assert_eq!(
        resp.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = resp.text();
    assert!(field_error(&html, "a_field").is_some(), "{html}");
    assert!(input_value(&html, "csrf_token").is_some(), "the form again");

    // A foreign key to a missing row.
    let html = post(
        &root,
        "/admin/bmodel/add/",
        &[("a", "999"), ("b_field", "keep me")],
    )
    .await
    .expect(400)
    .text();
    assert!(field_error(&html, "a").is_some(), "{html}");
    assert_eq!(field_error(&html, "b_field"), None);
    assert_eq!(input_value(&html, "b_field").as_deref(), Some("keep me"));

    // A number field given text.
    let html = post(
        &root,
        "/admin/message/add/",
        &[
            ("user", "abc"),
            ("content", "typed"),
            ("pub_date", "2020-01-02 03:04:05"),
        ],
    )
    .await
    .expect(400)
    .text();
    assert!(field_error(&html, "user").is_some(), "{html}");
    assert_eq!(input_value(&html, "content").as_deref(), Some("typed"));
    assert_eq!(input_value(&html, "user").as_deref(), Some("abc"));

    // An invalid date-time.
    let html = post(
        &root,
        "/admin/message/add/",
        &[
            ("user", &pleb),
            ("content", "typed"),
            ("pub_date", "not-a-date"),
        ],
    )
    .await
    .expect(400)
    .text();
    assert!(field_error(&html, "pub_date").is_some(), "{html}");
    assert_eq!(field_error(&html, "content"), None);
    assert_eq!(input_value(&html, "content").as_deref(), Some("typed"));
    assert_eq!(input_value(&html, "user").as_deref(), Some(pleb.as_str()));
    assert_eq!(
        input_value(&html, "pub_date").as_deref(),
        Some("not-a-date")
    );

    // A user that does not exist, and a missing required field of a model with several.
    let html = post(
        &root,
        "/admin/message/add/",
        &[("user", "999"), ("content", "typed")],
    )
    .await
    .expect(400)
    .text();
    assert!(field_error(&html, "user").is_some(), "{html}");
    let html = post(&root, "/admin/message/add/", &[("user", &pleb)])
        .await
        .expect(400)
        .text();
    assert!(field_error(&html, "content").is_some(), "{html}");

    assert_eq!(
        (
            app.count("amodel"),
            app.count("bmodel"),
            app.count("message")
        ),
        before
    );
}

#[actix_web::test]
async fn a_unique_violation_on_add_is_409_with_the_form_and_writes_nothing() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    app.user("alice", PW);
    let resp = post(
        &root,
        "/admin/user/add/",
        &[("username", "alice"), ("email", "dup@example.com")],
    )
    .await;
    resp.expect(409);
    let html = resp.text();
    assert_eq!(app.count("user"), 2);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM \"user\" WHERE email = 'dup@example.com'"),
        0
    );
    assert_eq!(
        input_value(&html, "username").as_deref(),
        Some("alice"),
        "the form again: {html}"
    );
    assert_eq!(
        input_value(&html, "email").as_deref(),
        Some("dup@example.com")
    );
    assert!(input_value(&html, "csrf_token").is_some(), "the form again");
}

#[actix_web::test]
async fn booleans_are_checkboxes_and_absent_means_false_on_add() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let html = root.get("/admin/user/add/").await.expect(200).text();
    for name in ["active", "admin"] {
        let tag = control(&html, name).expect("a control");
        assert!(tag.contains("type=\"checkbox\""), "{tag}");
    }
    assert!(
        control(&html, "password").is_none(),
        "the password is excluded"
    );

    let resp = post(
        &root,
        "/admin/user/add/",
        &[("username", "carol"), ("email", "carol@example.com")],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/user/");
    let resp = post(
        &root,
        "/admin/user/add/",
        &[
            ("username", "dave"),
            ("email", "dave@example.com"),
            ("active", "1"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/user/");
    for (name, active, admin) in [("carol", 0, 0), ("dave", 1, 0)] {
        assert_eq!(
            app.query_i64(&format!(
                "SELECT active FROM \"user\" WHERE username = '{name}'"
            )),
            active,
            "{name}"
        );
        assert_eq!(
            app.query_i64(&format!(
                "SELECT admin FROM \"user\" WHERE username = '{name}'"
            )),
            admin,
            "{name}"
        );
    }
}

#[actix_web::test]
async fn edit_shows_the_current_values_and_updates() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let bob = app.user("bob", PW);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {bob}, 'hello', '2020-01-02 03:04:05');"
    ));

    let html = root.get("/admin/amodel/1/").await.expect(200).text();
    assert_eq!(input_value(&html, "a_field").as_deref(), Some("a1"));
    assert!(input_value(&html, "csrf_token").is_some());
    let html = root.get("/admin/bmodel/2/").await.expect(200).text();
    assert_eq!(input_value(&html, "b_field").as_deref(), Some("b2"));
    assert_eq!(selected_option(&html, "a").as_deref(), Some("2"));
    let html = root
        .get(&format!("/admin/user/{bob}/"))
        .await
        .expect(200)
        .text();
    assert_eq!(input_value(&html, "username").as_deref(), Some("bob"));
    assert_eq!(
        input_value(&html, "email").as_deref(),
        Some("bob@example.com")
    );
    assert!(control(&html, "active")
        .expect("active")
        .contains(" checked"));
    assert!(!control(&html, "admin").expect("admin").contains(" checked"));
    assert!(control(&html, "password").is_none());
    let html = root.get("/admin/message/1/").await.expect(200).text();
    assert_eq!(input_value(&html, "content").as_deref(), Some("hello"));
    assert_eq!(
        input_value(&html, "user").as_deref(),
        Some(bob.to_string().as_str())
    );
    let shown = input_value(&html, "pub_date").expect("a pub_date input");
    assert_eq!(shown.replacen('T', " ", 1), "2020-01-02 03:04:05");

    let resp = post(&root, "/admin/amodel/1/", &[("a_field", "changed")]).await;
    assert_eq!(redirected(&resp), "/admin/amodel/");
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 1")
            .as_deref(),
        Some("changed")
    );
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 2")
            .as_deref(),
        Some("a2")
    );
    let resp = post(
        &root,
        "/admin/bmodel/2/",
        &[("a", "1"), ("b_field", "moved")],
    )
    .await;
    assert_eq!(redirected(&resp), "/admin/bmodel/");
    assert_eq!(
        app.query_text("SELECT b_field FROM bmodel WHERE id = 2 AND a_id = 1")
            .as_deref(),
        Some("moved")
    );
}

#[actix_web::test]
async fn edit_leaves_fields_missing_from_the_post_unchanged_but_unchecks_absent_checkboxes() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let bob = app.user_with("bob", PW, true, true);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {bob}, 'hello', '2020-01-02 03:04:05');"
    ));
    let read = |column: &str| {
        app.query_text(&format!("SELECT {column} FROM \"user\" WHERE id = {bob}"))
            .expect("a value")
    };
    let (hash, joined) = (read("password"), read("join_date"));

    let resp = post(
        &root,
        &format!("/admin/user/{bob}/"),
        &[("email", "new@example.com")],
    )
    .await;
    assert_eq!(redirected(&resp), "/admin/user/");
    assert_eq!(read("username"), "bob");
    assert_eq!(read("email"), "new@example.com");
    assert_eq!(read("password"), hash, "the password is not in the form");
    assert_eq!(read("join_date"), joined);
    assert_eq!(
        app.query_i64(&format!("SELECT active FROM \"user\" WHERE id = {bob}")),
        0,
        "an absent checkbox is false"
    );
    assert_eq!(
        app.query_i64(&format!("SELECT admin FROM \"user\" WHERE id = {bob}")),
        0
    );

    let resp = post(&root, "/admin/message/1/", &[("content", "edited")]).await;
    assert_eq!(redirected(&resp), "/admin/message/");
    assert_eq!(
        app.query_text("SELECT content FROM message WHERE id = 1")
            .as_deref(),
        Some("edited")
    );
    assert_eq!(
        app.query_i64("SELECT user_id FROM message WHERE id = 1"),
        bob
    );
    let message = app.get("/api/message/1/").await.json_with(200);
    assert_eq!(message["pub_date"], "2020-01-02 03:04:05");
}

#[actix_web::test]
async fn an_invalid_edit_is_400_and_leaves_the_row_unchanged() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let bob = app.user("bob", PW);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {bob}, 'hello', '2020-01-02 03:04:05');"
    ));
    let message = || {
        (
            app.query_text("SELECT content FROM message WHERE id = 1"),
            app.query_i64("SELECT user_id FROM message WHERE id = 1"),
        )
    };
    let before = message();
    let id = bob.to_string();
    for (fields, bad) in [
        (
            &[("content", "changed"), ("pub_date", "garbage")][..],
            "pub_date",
        ),
        (&[("content", "changed"), ("user", "abc")], "user"),
        (&[("content", "changed"), ("user", "999")], "user"),
        (
            &[("content", "changed"), ("user", &id), ("pub_date", "")],
            "pub_date",
        ),
    ] {
        let resp = post(&root, "/admin/message/1/", fields).await;
        resp.expect(400);
        let html = resp.text();
        assert!(field_error(&html, bad).is_some(), "{fields:?}: {html}");
        assert_eq!(
            input_value(&html, "content").as_deref(),
            Some("changed"),
            "the submitted value"
        );
        assert_eq!(message(), before, "{fields:?}");
    }
    let html = post(
        &root,
        "/admin/bmodel/1/",
        &[("a", "999"), ("b_field", "zzz")],
    )
    .await
    .expect(400)
    .text();
    assert!(field_error(&html, "a").is_some(), "{html}");
    assert_eq!(
        app.query_text("SELECT b_field FROM bmodel WHERE id = 1 AND a_id = 1")
            .as_deref(),
        Some("b1")
    );

    // A unique conflict: 409, unchanged.
    let resp = post(
        &root,
        &format!("/admin/user/{bob}/"),
        &[
            ("username", "root"),
            ("email", "x@example.com"),
            ("active", "1"),
        ],
    )
    .await;
    resp.expect(409);
    assert_eq!(
        app.query_text(&format!("SELECT username FROM \"user\" WHERE id = {bob}"))
            .as_deref(),
        Some("bob")
    );
    assert_eq!(
        app.query_text(&format!("SELECT email FROM \"user\" WHERE id = {bob}"))
            .as_deref(),
        Some("bob@example.com")
    );
    let html = resp.text();
    assert_eq!(
        input_value(&html, "username").as_deref(),
        Some("root"),
        "the form again: {html}"
    );
}

#[actix_web::test]
async fn delete_page_lists_dependents_and_post_deletes_recursively() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let html = root.get("/admin/amodel/1/delete/").await.expect(200).text();
    // The random CSRF token could hold any of the texts looked for.
    let token = input_value(&html, "csrf_token").expect("a CSRF token");
    let text = unescape_html(&html).replace(&token, "");
    for shown in ["a1", "b1", "c1", "d1"] {
        assert!(text.contains(shown), "{shown}: {html}");
    }
    for other in ["a2", "b2", "c2", "d2"] {
        assert!(!text.contains(other), "{other}: {html}");
    }
    assert!(input_value(&html, "csrf_token").is_some());
    for table in ["amodel", "bmodel", "cmodel", "dmodel"] {
        assert_eq!(app.count(table), 2, "GET deletes nothing: {table}");
    }

    // A dependent row's own delete page lists what depends on it, not what it depends on.
    let html = root.get("/admin/bmodel/2/delete/").await.expect(200).text();
    let token = input_value(&html, "csrf_token").expect("a CSRF token");
    let text = unescape_html(&html).replace(&token, "");
    assert!(text.contains("b2") && text.contains("c2") && text.contains("d2"));
    assert!(!text.contains("a2") && !text.contains("c1"));

    let resp = post(&root, "/admin/amodel/1/delete/", &[]).await;
    assert_eq!(redirected(&resp), "/admin/amodel/");
    for table in ["amodel", "bmodel", "cmodel", "dmodel"] {
        assert_eq!(
            app.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE id = 2")),
            1,
            "{table}"
        );
        assert_eq!(app.count(table), 1, "{table}");
    }
}

#[actix_web::test]
async fn bulk_delete_confirms_the_selected_rows_then_deletes_them_only() {
    let app = TestApp::with_seed(&format!(
        "{CHAINS} INSERT INTO amodel (id, a_field) VALUES (3, 'a3'), (4, 'a4');"
    ))
    .await;
    let root = admin(&app).await;

    // The index's action select starts on no action, and Go asks nothing in a script.
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert!(
        html.contains("<select name=\"action\" id=\"bulk-action\"><option value=\"\">---------</option><option value=\"delete\">Delete</option>"),
        "{html}"
    );
    assert!(!html.contains("data-confirm"), "{html}");
    assert!(
        html.contains("<input type=\"hidden\" name=\"confirm\" value=\"ask\">"),
        "the index's form asks for the confirmation page: {html}"
    );

    // Go: a confirmation page lists the rows, their count and what goes with them; nothing
    // is deleted yet.
    let place = "/admin/amodel/?a_field__ne=zz";
    let resp = post(
        &root,
        place,
        &[
            ("action", "delete"),
            ("id", "3"),
            ("id", "1"),
            ("confirm", "ask"),
        ],
    )
    .await;
    let html = resp.expect(200).text();
    assert!(html.contains("<h1>Delete the selected rows</h1>"), "{html}");
    assert!(html.contains("2 selected rows"), "{html}");
    assert_eq!(row_ids(&html), [1, 3], "the confirmation carries the rows");
    assert!(html.contains(">a1 <span"), "{html}");
    assert!(html.contains(">a3 <span"), "{html}");
    assert!(
        html.contains("These rows refer to them and go with them"),
        "{html}"
    );
    assert!(html.contains("<li>b1</li>"), "{html}");
    assert!(!html.contains("<li>b2</li>"), "{html}");
    assert!(html.contains("name=\"confirm\" value=\"yes\""), "{html}");
    assert!(html.contains("name=\"csrf_token\""), "{html}");
    assert!(html.contains("Yes, delete 2 rows"), "{html}");
    let action = format!("<form method=\"post\" action=\"{}\">", place);
    assert!(
        html.contains(&action),
        "it posts back to the index's place: {html}"
    );
    assert_eq!(
        app.count("amodel"),
        4,
        "nothing deleted before the confirmation"
    );

    // Confirming deletes them (and what goes with them), back to the place.
    let resp = post(
        &root,
        place,
        &[
            ("action", "delete"),
            ("id", "1"),
            ("id", "3"),
            ("confirm", "yes"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), place);
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert_eq!(row_ids(&html), [2, 4]);
    for table in ["bmodel", "cmodel", "dmodel"] {
        assert_eq!(
            app.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE id = 2")),
            1,
            "{table}"
        );
        assert_eq!(app.count(table), 1, "recursively: {table}");
    }
    // Without the CSRF token the confirmation is refused.
    root.post_form(
        "/admin/amodel/",
        &[("action", "delete"), ("id", "4"), ("confirm", "yes")],
    )
    .await
    .expect(403);
    assert_eq!(app.count("amodel"), 2);

    // Nothing selected, or no action chosen: back to the index with a notice, nothing deleted.
    let resp = post(&root, place, &[("action", "delete")]).await;
    assert_eq!(see_other(&resp), place);
    let html = root.get(place).await.expect(200).text();
    assert!(
        html.contains("Delete: no row was selected, nothing was done."),
        "{html}"
    );
    let resp = post(&root, place, &[("action", ""), ("id", "2")]).await;
    assert_eq!(see_other(&resp), place);
    let html = root.get(place).await.expect(200).text();
    assert!(
        html.contains("No action was chosen, nothing was done."),
        "{html}"
    );
    assert_eq!(app.count("amodel"), 2);

    // A script's bulk delete, without the `confirm` field the index's form sends, deletes at
    // once (docs/admin.md#actions).
    let resp = post(&root, place, &[("action", "delete"), ("id", "4")]).await;
    assert_eq!(see_other(&resp), place);
    assert_eq!(app.count("amodel"), 1);

    // An unknown action or a bad id: 400, nothing deleted.
    post(&root, "/admin/amodel/", &[("action", "bogus"), ("id", "2")])
        .await
        .expect(400);
    post(
        &root,
        "/admin/amodel/",
        &[("action", "delete"), ("id", "x"), ("confirm", "yes")],
    )
    .await
    .expect(400);
    post(&root, "/admin/amodel/", &[("id", "2")])
        .await
        .expect(400);
    assert_eq!(app.count("amodel"), 1);
}

/// POSTs the export form of `model` with these filters (a query string) and fields.
async fn export(
    browser: &Browser<'_>,
    model: &str,
    filters: &str,
    format: &str,
    fields: &[&str],
) -> Resp {
    let mut form = vec![("format", format)];
    form.extend(fields.iter().map(|f| ("fields", *f)));
    let uri = if filters.is_empty() {
        format!("/admin/{model}/export/")
    } else {
        format!("/admin/{model}/export/?{filters}")
    };
    post(browser, &uri, &form).await
}

#[actix_web::test]
async fn export_writes_the_filtered_rows_in_json_and_csv() {
    let app = TestApp::with_seed(
        r#"INSERT INTO amodel (id, a_field) VALUES (1, 'xa'), (2, 'say "hi", bye'), (3, 'xb'),
           (4, 'other'), (5, 'two
lines');"#,
    )
    .await;
    let root = admin(&app).await;

    // The form offers every exportable column.
    let html = root
        .get("/admin/amodel/export/?a_field__like=x%25")
        .await
        .expect(200)
        .text();
    assert_eq!(export_columns(&html), ["id", "a_field"]);
    assert!(input_value(&html, "csrf_token").is_some());

    // JSON: the filtered query, primary key ascending, ordering/page/limit ignored.
    let filters = "a_field__like=x%25&ordering=-a_field&page=2&limit=1";
    let resp = export(&root, "amodel", filters, "json", &["a_field", "id"]).await;
    assert_eq!(
        resp.json_with(200),
        json!([{"id": 1, "a_field": "xa"}, {"id": 3, "a_field": "xb"}])
    );
    let resp = export(&root, "amodel", filters, "json", &["a_field"]).await;
    assert_eq!(
        resp.json_with(200),
        json!([{"a_field": "xa"}, {"a_field": "xb"}])
    );
    let resp = export(&root, "amodel", "a_field=none", "json", &["id"]).await;
    assert_eq!(resp.json_with(200), json!([]));

    // CSV: a header row, RFC 4180 quoting, columns in the model's order.
    let resp = export(&root, "amodel", "", "csv", &["a_field", "id"]).await;
    resp.expect(200);
    let content_type = resp.header("content-type").unwrap_or_default();
    assert_eq!(
        content_type.split(';').next().map(str::trim),
        Some("text/csv"),
        "{content_type}"
    );
    assert_eq!(
        resp.text(),
        "id,a_field\r\n1,xa\r\n2,\"say \"\"hi\"\", bye\"\r\n3,xb\r\n4,other\r\n5,\"two\nlines\"\r\n"
    );
}

#[actix_web::test]
async fn csv_export_cells_that_a_spreadsheet_would_evaluate_start_with_a_quote() {
    let app = TestApp::with_seed(
        r#"INSERT INTO amodel (id, a_field) VALUES (1, '=HYPERLINK("http://evil","x")'),
           (2, '+1+1'), (3, '-2'), (4, '@SUM(A1)'), (5, 'a=b');"#,
    )
    .await;
    let root = admin(&app).await;
    let resp = export(&root, "amodel", "", "csv", &["id", "a_field"]).await;
    assert_eq!(
        resp.expect(200).text(),
        "id,a_field\r\n1,\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"\r\n2,'+1+1\r\n\
         3,'-2\r\n4,'@SUM(A1)\r\n5,a=b\r\n"
    );
    // The JSON export keeps the text as it is.
    let resp = export(&root, "amodel", "id=1", "json", &["a_field"]).await;
    assert_eq!(
        resp.json_with(200),
        json!([{"a_field": "=HYPERLINK(\"http://evil\",\"x\")"}])
    );
}

#[actix_web::test]
async fn export_types_booleans_dates_and_foreign_keys() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let pleb = app.user("pleb", PW);
    app.user_with("sleepy", PW, false, false);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {pleb}, 'hello', '2020-01-02 03:04:05'), (2, 1, 'mine', '2021-05-06 07:08:09');"
    ));

    let resp = export(
        &root,
        "user",
        "ordering=-id",
        "csv",
        &["username", "active", "admin"],
    )
    .await;
    assert_eq!(
        resp.expect(200).text(),
        "username,active,admin\r\nroot,true,true\r\npleb,true,false\r\nsleepy,false,false\r\n"
    );
    let resp = export(
        &root,
        "user",
        "username=pleb",
        "json",
        &["id", "active", "join_date"],
    )
    .await;
    assert_eq!(
        resp.json_with(200),
        json!([{"id": pleb, "active": true, "join_date": "2020-01-01 00:00:00"}])
    );

    // A foreign key column is named by its field and holds the related primary key.
    let fields = ["id", "user", "content", "pub_date"];
    let resp = export(&root, "message", "", "json", &fields).await;
    assert_eq!(
        resp.json_with(200),
        json!([
            {"id": 1, "user": pleb, "content": "hello", "pub_date": "2020-01-02 03:04:05"},
            {"id": 2, "user": 1, "content": "mine", "pub_date": "2021-05-06 07:08:09"},
        ])
    );
    let resp = export(&root, "message", "user__username=pleb", "csv", &fields).await;
    assert_eq!(
        resp.expect(200).text(),
        format!("id,user,content,pub_date\r\n1,{pleb},hello,2020-01-02 03:04:05\r\n")
    );
}

#[actix_web::test]
async fn a_long_export_is_read_in_chunks_and_arrives_whole() {
    // 2,500 rows, every tenth filtered out and every third with a comma: the export reads
    // them 1,000 at a time and sends each chunk as it is read.
    let text = |i: i64| match (i % 10, i % 3) {
        (0, _) => format!("skip {i}"),
        (_, 0) => format!("r{i}, with a comma"),
        _ => format!("r{i}"),
    };
    let values: Vec<String> = (1..=2500)
        .map(|i| format!("({i}, '{}')", text(i)))
        .collect();
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel (id, a_field) VALUES {};",
        values.join(", ")
    ))
    .await;
    let root = admin(&app).await;
    let kept: Vec<i64> = (1..=2500).filter(|i| i % 10 != 0).collect();

    let resp = export(
        &root,
        "amodel",
        "a_field__like=r%25",
        "csv",
        &["id", "a_field"],
    )
    .await;
    let mut expected = String::from("id,a_field\r\n");
    for &i in &kept {
        let field = text(i);
        if field.contains(',') {
            expected.push_str(&format!("{i},\"{field}\"\r\n"));
        } else {
            expected.push_str(&format!("{i},{field}\r\n"));
        }
    }
    assert_eq!(resp.expect(200).text(), expected);
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"amodel.csv\"")
    );

    let resp = export(
        &root,
        "amodel",
        "a_field__like=r%25",
        "json",
        &["id", "a_field"],
    )
    .await;
    let objects: Vec<Value> = kept
        .iter()
        .map(|&i| json!({"id": i, "a_field": text(i)}))
        .collect();
    assert_eq!(resp.json_with(200), Value::Array(objects));

    // Exactly one full chunk: the next one is empty, and the file still ends properly.
    let resp = export(&root, "amodel", "id__lte=1000", "json", &["id"]).await;
    let ids: Vec<Value> = (1..=1000).map(|i| json!({ "id": i })).collect();
    assert_eq!(resp.json_with(200), Value::Array(ids));
    let resp = export(&root, "amodel", "id__lte=1000", "csv", &["id"]).await;
    let lines: Vec<String> = std::iter::once("id".to_owned())
        .chain((1..=1000).map(|i| i.to_string()))
        .collect();
    assert_eq!(resp.expect(200).text(), lines.join("\r\n") + "\r\n");
}

#[actix_web::test]
async fn export_refuses_no_column_unknown_formats_refused_filters_and_the_password() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'xa');").await;
    let root = admin(&app).await;
    let hash = app
        .query_text("SELECT password FROM \"user\" WHERE username = 'root'")
        .expect("a hash");

    let html = root.get("/admin/user/export/").await.expect(200).text();
    let columns = export_columns(&html);
    assert_eq!(
        columns,
        ["id", "username", "email", "join_date", "active", "admin"]
    );

    let mut accepted = Vec::new();
    for (model, filters, format, fields) in [
        ("amodel", "", "json", &[][..]),
        ("amodel", "", "csv", &[]),
        ("amodel", "", "xml", &["id"]),
        ("amodel", "", "", &["id"]),
        ("amodel", "", "json", &["nope"]),
        ("amodel", "", "json", &["shout"]),
        ("amodel", "nope=1", "json", &["id"]),
        ("amodel", "a_field__bogus=1", "json", &["id"]),
        ("amodel", "id=abc", "json", &["id"]),
        ("user", "", "json", &["password"]),
        ("user", "", "csv", &["username", "password"]),
        ("user", "password__like=%25", "json", &["id"]),
        ("message", "user__password__like=%25", "json", &["id"]),
    ] {
        let resp = export(&root, model, filters, format, fields).await;
        assert!(!resp.text().contains(&hash));
        if resp.code() != 400 {
            accepted.push(format!(
                "{model} {filters:?} {format:?} {fields:?} -> {} {}",
                resp.code(),
                String::from_utf8_lossy(&resp.body)
            ));
        }
    }
    assert!(
        accepted.is_empty(),
        "refusals expected (400): {accepted:#?}"
    );
    // Without a format choice.
    let token = root.csrf("/admin/").await;
    root.post_form(
        "/admin/amodel/export/",
        &[("fields", "id"), ("csrf_token", &token)],
    )
    .await
    .expect(400);
}

/// Users for the lookup: `lk00`..`lk19` inserted in reverse (ids 21 - n), and names with
/// characters that a pattern would misread.
fn lookup_users() -> String {
    let mut sql = String::new();
    let names: Vec<String> = (0..20)
        .rev()
        .map(|n| format!("lk{n:02}"))
        .chain(["100%sure", "100percent", "a_b", "axb", "back\\slash", "été"].map(str::to_owned))
        .collect();
    for name in names {
        sql.push_str(&format!(
            "INSERT INTO \"user\" (username, password, email, join_date, active, admin) \
             VALUES ('{name}', '', 'x@example.com', '2020-01-01 00:00:00', TRUE, FALSE);\n"
        ));
    }
    sql
}

/// The lookup's JSON for these parameters, with its shape checked.
async fn lookup(browser: &Browser<'_>, pairs: &[(&str, &str)]) -> Value {
    let body = browser
        .get(&url("/admin/message/lookup/user/", pairs))
        .await
        .json_with(200);
    let obj = body.as_object().expect("an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["has_next", "objects", "page"], "{body}");
    assert!(
        body["page"].is_i64() && body["has_next"].is_boolean(),
        "{body}"
    );
    for o in body["objects"].as_array().expect("objects") {
        let o = o.as_object().expect("an object");
        assert_eq!(o.len(), 2, "{o:?}");
        assert!(o["id"].is_i64() && o["text"].is_string(), "{o:?}");
    }
    body
}

/// The `text`s of a lookup answer.
fn texts(body: &Value) -> Vec<String> {
    body["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .map(|o| o["text"].as_str().expect("a text").to_owned())
        .collect()
}

#[actix_web::test]
async fn lookup_pages_by_15_ordered_by_the_column_literal_and_case_insensitive() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    app.sql(&lookup_users());

    let page1 = lookup(&root, &[("q", "lk"), ("page", "1")]).await;
    let expected: Vec<Value> = (0..15)
        .map(|n| json!({"id": 21 - n, "text": format!("lk{n:02}")}))
        .collect();
    assert_eq!(page1["objects"], Value::Array(expected));
    assert_eq!(
        (page1["page"].clone(), page1["has_next"].clone()),
        (json!(1), json!(true))
    );
    let page2 = lookup(&root, &[("q", "lk"), ("page", "2")]).await;
    let expected: Vec<Value> = (15..20)
        .map(|n| json!({"id": 21 - n, "text": format!("lk{n:02}")}))
        .collect();
    assert_eq!(page2["objects"], Value::Array(expected));
    assert_eq!(
        (page2["page"].clone(), page2["has_next"].clone()),
        (json!(2), json!(false))
    );
    let page3 = lookup(&root, &[("q", "lk"), ("page", "3")]).await;
    assert_eq!(
        (page3["objects"].clone(), page3["has_next"].clone()),
        (json!([]), json!(false))
    );
    // Without a page: the first.
    assert_eq!(lookup(&root, &[("q", "lk")]).await, page1);

    // Case-insensitive, over all of Unicode.
    let ten: Vec<String> = (0..10).map(|n| format!("lk{n:02}")).collect();
    assert_eq!(texts(&lookup(&root, &[("q", "LK0")]).await), ten);
    for q in ["ÉTÉ", "Été", "été", "TÉ"] {
        assert_eq!(texts(&lookup(&root, &[("q", q)]).await), ["été"], "{q}");
    }
    // A literal substring: `%`, `_` and `\` are plain characters.
    for (q, found) in [
        ("%", &["100%sure"][..]),
        ("0%s", &["100%sure"]),
        ("100%", &["100%sure"]),
        ("_", &["a_b"]),
        ("a_b", &["a_b"]),
        ("A_B", &["a_b"]),
        ("\\", &["back\\slash"]),
        ("k\\s", &["back\\slash"]),
        ("%%", &[]),
        ("zzz", &[]),
    ] {
        assert_eq!(texts(&lookup(&root, &[("q", q)]).await), found, "{q}");
    }
    // No or an empty q: every user (27), 15 a page.
    for pairs in [&[][..], &[("q", "")]] {
        let body = lookup(&root, pairs).await;
        assert_eq!(body["objects"].as_array().map(Vec::len), Some(15));
        assert_eq!(body["has_next"], true);
        let last = lookup(&root, &[pairs, &[("page", "2")]].concat()).await;
        assert_eq!(last["objects"].as_array().map(Vec::len), Some(12));
        assert_eq!(last["has_next"], false);
    }
}

#[actix_web::test]
async fn lookup_refuses_bad_pages_other_fields_and_non_admins() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    app.user("pleb", PW);
    for page in ["0", "-1", "abc", "1.5", ""] {
        let resp = root
            .get(&url(
                "/admin/message/lookup/user/",
                &[("q", "a"), ("page", page)],
            ))
            .await;
        assert_param_error(&resp, "page");
    }
    for uri in [
        "/admin/message/lookup/content/",
        "/admin/message/lookup/nope/",
        "/admin/bmodel/lookup/a/",
        "/admin/nope/lookup/user/",
    ] {
        root.get(uri).await.expect(404);
    }
    let pleb = app.browser();
    pleb.login("pleb", PW).await.expect(302);
    let resp = pleb.get("/admin/message/lookup/user/?q=r").await;
    resp.expect(403);
    assert!(!resp.text().contains("root"));
    let anon = app.browser();
    let uri = "/admin/message/lookup/user/?q=r&page=1";
    assert_eq!(login_next(&anon.get(uri).await), uri);
}

#[actix_web::test]
async fn the_notes_panel_shows_the_3_newest_and_creates_notes() {
    let app = TestApp::with_seed(
        "INSERT INTO note (id, message, created) VALUES \
         (1, 'note-one', '2020-01-01 00:00:00'), (2, 'note-two', '2020-01-02 00:00:00'), \
         (3, 'note-three', '2020-01-03 00:00:00'), (4, 'note-four', '2020-01-04 00:00:00');",
    )
    .await;
    let root = admin(&app).await;
    let newest_first = |html: &str, expected: &[&str], absent: &[&str]| {
        let positions: Vec<usize> = expected
            .iter()
            .map(|m| html.find(m).unwrap_or_else(|| panic!("{m} shown: {html}")))
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "{expected:?}: {html}"
        );
        for m in absent {
            assert!(!html.contains(m), "{m} not shown");
        }
    };
    let html = root.get("/admin/").await.expect(200).text();
    assert!(html.contains("Notes"));
    newest_first(
        &html,
        &["note-four", "note-three", "note-two"],
        &["note-one"],
    );

    let resp = post(&root, "/admin/notes/create/", &[("message", "note-five")]).await;
    assert_eq!(redirected(&resp), "/admin/");
    assert_eq!(app.count("note"), 5);
    assert_eq!(
        app.query_text("SELECT message FROM note WHERE id = 5")
            .as_deref(),
        Some("note-five")
    );
    let html = root.get("/admin/").await.expect(200).text();
    newest_first(
        &html,
        &["note-five", "note-four", "note-three"],
        &["note-two", "note-one"],
    );

    // An unknown action or panel: 404, nothing written.
    post(&root, "/admin/notes/bogus/", &[("message", "x")])
        .await
        .expect(404);
    post(&root, "/admin/nopanel/create/", &[("message", "x")])
        .await
        .expect(404);
    assert_eq!(app.count("note"), 5);
}

/// An application's templates for one model: the index (in the admin's layout) and the edit
/// form (a page of its own) replaced; add, delete and export the crate's.
struct PlainTemplates;

#[derive(askama::Template)]
#[template(
    ext = "html",
    source = "<ul class=\"plain\">{% for row in view.rows %}<li id=\"row-{{ row.pk }}\">\
              {% for cell in row.cells %}[{{ cell }}]{% endfor %}</li>{% endfor %}</ul>"
)]
struct PlainIndex<'a> {
    view: &'a IndexView,
}

#[derive(askama::Template)]
#[template(
    ext = "html",
    source = "<!doctype html><title>{{ view.title }}</title>\
              {% if let Some(e) = view.error %}<p class=\"plain-error\">{{ e }}</p>{% endif %}\
              <form method=\"post\" action=\"{{ view.action }}\" class=\"plain-edit\">\
              <input type=\"hidden\" name=\"csrf_token\" value=\"{{ view.chrome.csrf }}\">\
              {% for f in view.fields %}<label>{{ f.name }} <input name=\"{{ f.name }}\" \
              value=\"{{ f.value }}\"></label>{% if let Some(e) = f.error %}<em>{{ e }}</em>\
              {% endif %}{% endfor %}</form>"
)]
struct PlainEdit<'a> {
    view: &'a FormView,
}

fn template_error(e: askama::Error) -> plover::Error {
    plover::Error::Internal(e.to_string())
}

impl AdminTemplates for PlainTemplates {
    fn index(&self, view: &IndexView) -> Result<String, plover::Error> {
        let content = PlainIndex { view }.render().map_err(template_error)?;
        view.chrome.page(&format!("Plain {}", view.title), &content)
    }

    fn edit(&self, view: &FormView) -> Result<String, plover::Error> {
        PlainEdit { view }.render().map_err(template_error)
    }
}

/// Serves `req` by `service`: the status and the body.
async fn call<S, R, B, E>(service: &S, req: R) -> (u16, String)
where
    S: Service<R, Response = ServiceResponse<B>, Error = E>,
    E: std::fmt::Debug,
    B: MessageBody,
{
    let resp = test::call_service(service, req).await;
    let status = resp.status().as_u16();
    let body = test::read_body(resp).await;
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[actix_web::test]
async fn an_application_replaces_the_index_and_edit_templates_of_a_model() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel (id, a_field) VALUES (1, '<b>a1</b>');
         INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, '<b>bold</b>');",
    )
    .await;
    let root = admin(&app).await;
    let token = root.csrf("/admin/").await;
    let cookie = format!(
        "{}={}",
        plover::accounts::SESSION_COOKIE,
        root.cookie().expect("a session")
    );
    // An admin of the application's own, over the same database and sessions.
    let mut custom = Admin::new(&app.auth);
    custom
        .register(ModelAdmin::<BModel>::new().templates(PlainTemplates))
        .register(ModelAdmin::<AModel>::new());
    let service = test::init_service(
        App::new()
            .wrap(app.auth.session_middleware())
            .configure(app.auth.setup())
            .configure(custom.setup()),
    )
    .await;
    let get = |uri: &str| {
        TestRequest::get()
            .uri(uri)
            .insert_header(("cookie", cookie.clone()))
            .to_request()
    };

    // The index: the application's template with the real rows, escaped, in the admin's frame.
    let (status, html) = call(&service, get("/admin/bmodel/")).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("<ul class=\"plain\"><li id=\"row-1\">"),
        "{html}"
    );
    assert!(!html.contains("<b>"), "escaped: {html}");
    assert!(
        unescape_html(&html).contains("[1][<b>a1</b>][<b>bold</b>]"),
        "{html}"
    );
    assert!(html.contains("<h1>Plain B models</h1>"), "{html}");
    assert!(html.contains("/admin/static/admin.css"), "{html}");
    assert!(!html.contains("filter-form"), "{html}");

    // The edit form: the application's page.
    let (status, html) = call(&service, get("/admin/bmodel/1/")).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("class=\"plain-edit\""), "{html}");
    assert!(
        !html.contains("edit-form") && !html.contains("<b>"),
        "{html}"
    );
    assert_eq!(
        input_value(&html, "b_field").as_deref(),
        Some("<b>bold</b>")
    );

    // A failed edit keeps its status and shows the application's form with the errors.
    let (status, html) = call(
        &service,
        TestRequest::post()
            .uri("/admin/bmodel/1/")
            .insert_header(("cookie", cookie.clone()))
            .set_form([
                ("a", "999"),
                ("b_field", "<b>changed</b>"),
                ("csrf_token", token.as_str()),
            ])
            .to_request(),
    )
    .await;
    assert_eq!(status, 400, "{html}");
    assert!(html.contains("class=\"plain-error\""), "{html}");
    assert!(html.contains("<em>"), "a message next to a: {html}");
    assert_eq!(
        input_value(&html, "b_field").as_deref(),
        Some("<b>changed</b>")
    );
    assert_eq!(
        app.query_text("SELECT b_field FROM bmodel WHERE id = 1")
            .as_deref(),
        Some("<b>bold</b>")
    );

    // The pages it does not replace, and the other model's, are the crate's.
    for uri in [
        "/admin/bmodel/add/",
        "/admin/bmodel/1/delete/",
        "/admin/bmodel/export/",
        "/admin/amodel/",
        "/admin/amodel/1/",
    ] {
        let (status, html) = call(&service, get(uri)).await;
        assert_eq!(status, 200, "{uri}: {html}");
        assert!(!html.contains("plain"), "{uri}: {html}");
        assert!(html.contains("<nav class=\"side\""), "{uri}: {html}");
        assert!(!html.contains("<b>"), "{uri}: {html}");
    }
    let (_, html) = call(&service, get("/admin/amodel/")).await;
    assert!(html.contains("class=\"filter-form\""), "{html}");
    assert!(unescape_html(&html).contains("<b>a1</b>"), "{html}");
    let (_, html) = call(&service, get("/admin/bmodel/add/")).await;
    assert!(html.contains("class=\"edit-form\""), "{html}");
}

/// The whole `<textarea>` element named `name`, from its opening tag to its end.
fn textarea<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let open = control(html, name)?;
    let start = html.find(open)?;
    let end = start + html[start..].find("</textarea>")?;
    Some(&html[start..end])
}

#[actix_web::test]
async fn forms_take_their_widgets_and_html_constraints_from_the_model() {
    let app = TestApp::new().await;
    let browser = admin(&app).await;
    let html = browser.get("/admin/ticket/add/").await.expect(200).text();
    let title = control(&html, "title").expect("a title input");
    assert!(title.starts_with("<input type=\"text\""), "{title}");
    assert!(
        title.contains(" required") && title.contains(" maxlength=\"100\""),
        "{title}"
    );
    let priority = control(&html, "priority").expect("a priority input");
    assert!(priority.contains("type=\"number\""), "{priority}");
    assert!(
        priority.contains(" min=\"1\"") && priority.contains(" max=\"5\""),
        "{priority}"
    );
    let status = control(&html, "status").expect("a status control");
    assert!(status.starts_with("<select"), "{status}");
    for choice in ["open", "closed"] {
        assert!(
            html.contains(&format!("<option value=\"{choice}\"")),
            "{choice}"
        );
    }
    assert!(textarea(&html, "body").is_some(), "body is a textarea");
    assert!(control(&html, "opened").is_some_and(|c| c.contains("type=\"date\"")));
    // The private note is edited here (the admin is a trusted surface).
    assert!(control(&html, "secret_note").is_some());

    // Out of bounds: the form again, each field's message beside it, the values kept.
    let resp = post(
        &browser,
        "/admin/ticket/add/",
        &[
            ("title", "   "),
            ("priority", "7"),
            ("status", "closed"),
            ("body", "line one\r\nline two"),
            ("secret_note", ""),
            ("opened", "2026-11-26"),
            ("parent", ""),
        ],
    )
    .await;
    assert_eq!(resp.code(), 400);
    let html = resp.text();
    assert_eq!(
        field_error(&html, "title").as_deref(),
        Some("must not be blank")
    );
    assert_eq!(
        field_error(&html, "priority").as_deref(),
        Some("must be between 1 and 5")
    );
    assert_eq!(selected_option(&html, "status").as_deref(), Some("closed"));
    assert!(textarea(&html, "body").is_some_and(|t| t.contains("line one")));
    assert_eq!(app.count("ticket"), 0);

    let resp = post(
        &browser,
        "/admin/ticket/add/",
        &[
            ("title", "Printer"),
            ("priority", "5"),
            ("status", "closed"),
            ("body", "line one\r\nline two"),
            ("secret_note", "call Bob"),
            ("opened", "2026-11-26"),
            ("parent", ""),
        ],
    )
    .await;
    redirected(&resp);
    assert_eq!(
        app.query_text("SELECT status || '/' || priority || '/' || secret_note FROM ticket")
            .as_deref(),
        Some("closed/5/call Bob")
    );
    // The index, its filters and the export offer the private note only where a column names
    // it: this admin names none.
    let index = browser.get("/admin/ticket/").await.expect(200).text();
    assert!(index.contains("Printer") && !index.contains("call Bob"));
    let resp = browser.get("/admin/ticket/?secret_note=call%20Bob").await;
    assert_eq!(resp.code(), 400);
}

#[actix_web::test]
async fn export_offers_a_private_field_only_where_columns_names_it() {
    use plover::admin::Column;
    use plover_tests::Ticket;
    let app = TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
         VALUES (1, 'printer', 3, 'open', '', 'call 555-0199', '2024-01-01');",
    )
    .await;
    let root = admin(&app).await;
    // `ModelAdmin::<Ticket>::new()`: no `columns`, so no `secret_note` (#[rest(private)]).
    let html = root.get("/admin/ticket/export/").await.expect(200).text();
    let offered = export_columns(&html);
    assert!(!offered.contains(&"secret_note".to_owned()), "{offered:?}");
    assert!(offered.contains(&"title".to_owned()), "{offered:?}");
    let all: Vec<&str> = offered.iter().map(String::as_str).collect();
    for format in ["csv", "json"] {
        let body = export(&root, "ticket", "", format, &all)
            .await
            .expect(200)
            .text();
        assert!(body.contains("printer") && !body.contains("555"), "{body}");
        for fields in [&["secret_note"][..], &["id", "secret_note"]] {
            let resp = export(&root, "ticket", "", format, fields).await;
            assert!(!resp.text().contains("555"), "{}", resp.text());
            resp.expect(400);
        }
        let resp = export(
            &root,
            "ticket",
            "secret_note__like=call%25",
            format,
            &["id"],
        )
        .await;
        resp.expect(400);
    }

    // Named in `columns`, it is offered and exported.
    let mut custom = Admin::new(&app.auth);
    let f = Ticket::FIELDS;
    custom.register(
        ModelAdmin::<Ticket>::new().columns([f.id, f.title, f.secret_note].map(Column::field)),
    );
    let service = plover_tests::TestService::new(
        App::new()
            .wrap(app.auth.session_middleware())
            .configure(app.auth.setup())
            .configure(custom.setup()),
    )
    .await;
    let browser = service.browser();
    browser.login("root", PW).await.expect(302);
    let html = browser
        .get("/admin/ticket/export/")
        .await
        .expect(200)
        .text();
    assert!(export_columns(&html).contains(&"secret_note".to_owned()));
    let token = input_value(&html, "csrf_token").expect("a token");
    let resp = browser
        .post_form(
            "/admin/ticket/export/",
            &[
                ("format", "json"),
                ("fields", "secret_note"),
                ("csrf_token", &token),
            ],
        )
        .await;
    assert_eq!(
        resp.json_with(200),
        json!([{"secret_note": "call 555-0199"}])
    );
}

#[actix_web::test]
#[should_panic(expected = "cannot search the private field `secret_note` unless the ticket admin")]
async fn a_lookup_over_a_private_field_its_admin_does_not_show_stops_the_setup() {
    use plover_tests::Ticket;
    let app = TestApp::new().await;
    let mut admin = Admin::new(&app.auth);
    admin.register(
        ModelAdmin::<Ticket>::new()
            .foreign_key_lookup(Ticket::FIELDS.parent_id, Ticket::FIELDS.secret_note),
    );
    let _ = admin.setup();
}
