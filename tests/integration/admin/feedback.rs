//! What the admin says and where it leads (docs/admin.md#the-pages): models and fields by the
//! names people read, a message after each write shown once, the index's place kept through
//! the edit and delete pages, "Save and continue editing" and "Save and add another", and
//! breadcrumbs on every page.

use super::{a11y, admin, post, see_other};
use plover_tests::{unescape_html, TestApp, CHAINS};

/// The message of a page (`p.notice`, `role="status"`), its tags left out, decoded; and the
/// link in it, if any.
fn notice(html: &str) -> Option<(String, Option<String>)> {
    let start = html.find("<p class=\"notice\" role=\"status\">")?;
    let end = start + html[start..].find("</p>")?;
    let inner = &html[start..end];
    let link = inner
        .split_once("href=\"")
        .map(|(_, rest)| unescape_html(&rest[..rest.find('"').expect("the link's end")]));
    let mut text = String::new();
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    Some((unescape_html(&text), link))
}

/// The texts of the breadcrumbs of a page.
fn breadcrumbs(html: &str) -> Vec<String> {
    let Some(start) = html.find("<nav class=\"breadcrumbs\"") else {
        return Vec::new();
    };
    let nav = &html[start..start + html[start..].find("</nav>").expect("the nav's end")];
    nav.split("<li>")
        .skip(1)
        .map(|item| {
            let item = &item[..item.find("</li>").expect("the item's end")];
            let inner = item.trim_end_matches("</a>").trim_end_matches("</span>");
            unescape_html(&inner[inner.rfind('>').expect("a tag") + 1..])
        })
        .collect()
}

/// The decoded `href` of the first link whose `href` starts with `prefix`.
fn href_starting(html: &str, prefix: &str) -> Option<String> {
    let at = html.find(&format!("href=\"{prefix}"))? + "href=\"".len();
    Some(unescape_html(&html[at..at + html[at..].find('"')?]))
}

/// The decoded value of the query parameter `name` of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[actix_web::test]
async fn pages_name_models_and_fields_as_people_read_them() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    // `AModel` and its `a_field`, by default; the inputs keep the API names.
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert!(html.contains("<h1>A models</h1>"), "{html}");
    assert!(html.contains(">Add a model</a>"), "{html}");
    assert!(html.contains(">2 a models</p>"), "{html}");
    assert!(html.contains("\">A field</a>"), "the column head: {html}");
    assert!(
        html.contains("href=\"/admin/amodel/\">A models</a>"),
        "{html}"
    );
    let html = root.get("/admin/amodel/1/").await.expect(200).text();
    assert!(
        html.contains("<label for=\"f-a_field\">A field</label>"),
        "{html}"
    );
    assert!(html.contains("name=\"a_field\""), "{html}");
    // A foreign key reads as the related model's field name, without `_id`.
    let html = root.get("/admin/bmodel/1/").await.expect(200).text();
    assert!(html.contains("<label for=\"f-a\">A</label>"), "{html}");
    // The dashboard lists the models by their plurals.
    let html = root.get("/admin/").await.expect(200).text();
    assert!(html.contains(">B models</a>"), "{html}");
}

#[actix_web::test]
async fn each_write_says_what_it_did_once_escaped_with_a_link_to_the_object() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;

    let resp = post(&root, "/admin/amodel/1/", &[("a_field", "<i>new</i>")]).await;
    assert_eq!(see_other(&resp), "/admin/amodel/");
    let html = root.get("/admin/amodel/").await.expect(200).text();
    let (text, link) = notice(&html).expect("a message");
    assert_eq!(text, "The a model “<i>new</i>” was changed successfully.");
    assert_eq!(link.as_deref(), Some("/admin/amodel/1/"));
    assert!(!html.contains("<i>new</i>"), "escaped: {html}");
    let problems = a11y::problems("index with a message", &html);
    assert!(problems.is_empty(), "{problems:?}");
    // Once.
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert_eq!(notice(&html), None);

    let resp = post(&root, "/admin/amodel/add/", &[("a_field", "a3")]).await;
    assert_eq!(see_other(&resp), "/admin/amodel/");
    let html = root.get("/admin/amodel/").await.expect(200).text();
    let (text, link) = notice(&html).expect("a message");
    assert_eq!(text, "The a model “a3” was added successfully.");
    let id = app.query_i64("SELECT id FROM amodel WHERE a_field = 'a3'");
    assert_eq!(link, Some(format!("/admin/amodel/{id}/")));

    let resp = post(&root, &format!("/admin/amodel/{id}/delete/"), &[]).await;
    assert_eq!(see_other(&resp), "/admin/amodel/");
    let html = root.get("/admin/amodel/").await.expect(200).text();
    let (text, link) = notice(&html).expect("a message");
    assert_eq!(text, "The a model “a3” was deleted successfully.");
    assert_eq!(link, None, "the object is gone");

    let resp = post(
        &root,
        "/admin/dmodel/",
        &[
            ("action", "delete"),
            ("id", "1"),
            ("id", "2"),
            ("confirm", "yes"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/dmodel/");
    let html = root.get("/admin/dmodel/").await.expect(200).text();
    let (text, _) = notice(&html).expect("a message");
    assert_eq!(text, "Deleted 2 d models successfully.");
}

#[actix_web::test]
async fn the_index_keeps_its_place_through_the_edit_and_delete_pages() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let place = "/admin/amodel/?a_field__ne=zz&ordering=-id&page=1";
    let html = root.get(place).await.expect(200).text();
    let edit = href_starting(&html, "/admin/amodel/1/?").expect("row 1's edit link");
    assert_eq!(param(&edit, "_changelist").as_deref(), Some(place));

    // The edit page passes it on: its form, its Cancel, its delete link, its breadcrumb.
    let html = root.get(&edit).await.expect(200).text();
    assert!(unescape_html(&html).contains(&format!("href=\"{place}\"")));
    let delete = href_starting(&html, "/admin/amodel/1/delete/?").expect("the delete link");
    assert_eq!(param(&delete, "_changelist").as_deref(), Some(place));
    let resp = post(&root, &edit, &[("a_field", "one")]).await;
    assert_eq!(see_other(&resp), place);

    let html = root.get(&delete).await.expect(200).text();
    assert!(unescape_html(&html).contains(&format!("href=\"{place}\"")));
    let resp = post(&root, &delete, &[]).await;
    assert_eq!(see_other(&resp), place);
    assert_eq!(app.count("amodel"), 1);

    // Only a path to this index is followed: never another site, nor another page.
    for evil in [
        "https://evil.example/admin/amodel/",
        "//evil.example/admin/amodel/",
        "/\\evil.example/admin/amodel/",
        "/admin/bmodel/",
        "/admin/amodelx/",
        "javascript:alert(1)",
    ] {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("_changelist", evil)
            .finish();
        let resp = post(
            &root,
            &format!("/admin/amodel/2/?{query}"),
            &[("a_field", "x")],
        )
        .await;
        assert_eq!(see_other(&resp), "/admin/amodel/", "{evil}");
        let html = root
            .get(&format!("/admin/amodel/2/?{query}"))
            .await
            .expect(200)
            .text();
        assert!(!html.contains("evil.example"), "{evil}: {html}");
    }
}

#[actix_web::test]
async fn the_add_link_carries_the_index_place_to_the_save_of_the_new_row() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    // The plain index's add page has no place to carry.
    let html = root.get("/admin/amodel/").await.expect(200).text();
    assert!(html.contains("href=\"/admin/amodel/add/\""), "{html}");

    let place = "/admin/amodel/?a_field__ne=zz&ordering=-id&page=1";
    let html = root.get(place).await.expect(200).text();
    let add = href_starting(&html, "/admin/amodel/add/?").expect("the add link");
    assert_eq!(param(&add, "_changelist").as_deref(), Some(place));
    // The add page posts with it, and its save leads back to that page of the index.
    let html = root.get(&add).await.expect(200).text();
    assert!(unescape_html(&html).contains(&format!("href=\"{place}\"")));
    let resp = post(&root, &add, &[("a_field", "a3")]).await;
    assert_eq!(see_other(&resp), place);
    let html = root.get(place).await.expect(200).text();
    let (text, _) = notice(&html).expect("a message");
    assert_eq!(text, "The a model “a3” was added successfully.");
}

#[actix_web::test]
async fn save_and_continue_editing_and_save_and_add_another() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let html = root.get("/admin/amodel/add/").await.expect(200).text();
    assert!(html.contains("name=\"_continue\"") && html.contains("name=\"_addanother\""));

    let resp = post(
        &root,
        "/admin/amodel/add/",
        &[("a_field", "a3"), ("_continue", "1")],
    )
    .await;
    let id = app.query_i64("SELECT id FROM amodel WHERE a_field = 'a3'");
    assert_eq!(see_other(&resp), format!("/admin/amodel/{id}/"));
    let html = root
        .get(&format!("/admin/amodel/{id}/"))
        .await
        .expect(200)
        .text();
    let (text, _) = notice(&html).expect("a message");
    assert_eq!(
        text,
        "The a model “a3” was added successfully. You may edit it again below."
    );

    let resp = post(
        &root,
        "/admin/amodel/1/",
        &[("a_field", "a1+"), ("_addanother", "1")],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/amodel/add/");
    let html = root.get("/admin/amodel/add/").await.expect(200).text();
    let (text, _) = notice(&html).expect("a message");
    assert_eq!(
        text,
        "The a model “a1+” was changed successfully. You may add another a model below."
    );

    // Both keep the index's place for the save after.
    let query = "_changelist=%2Fadmin%2Famodel%2F%3Fpage%3D1";
    let resp = post(
        &root,
        &format!("/admin/amodel/1/?{query}"),
        &[("a_field", "a1"), ("_continue", "1")],
    )
    .await;
    assert_eq!(see_other(&resp), format!("/admin/amodel/1/?{query}"));
}

#[actix_web::test]
async fn every_model_page_has_breadcrumbs_and_the_edit_page_leads_with_its_history() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    for (path, trail) in [
        ("/admin/amodel/", vec!["Home", "A models"]),
        (
            "/admin/amodel/add/",
            vec!["Home", "A models", "Add a model"],
        ),
        ("/admin/amodel/1/", vec!["Home", "A models", "a1"]),
        (
            "/admin/amodel/1/delete/",
            vec!["Home", "A models", "a1", "Delete"],
        ),
        (
            "/admin/amodel/1/history/",
            vec!["Home", "A models", "a1", "History"],
        ),
        ("/admin/amodel/export/", vec!["Home", "A models", "Export"]),
        ("/admin/amodel/import/", vec!["Home", "A models", "Import"]),
    ] {
        let html = root.get(path).await.expect(200).text();
        assert_eq!(breadcrumbs(&html), trail, "{path}");
        assert!(
            html.contains("<nav class=\"breadcrumbs\" aria-label=\"Breadcrumbs\">"),
            "{path}"
        );
        assert!(html.contains("<span aria-current=\"page\">"), "{path}");
    }
    assert!(breadcrumbs(&root.get("/admin/").await.expect(200).text()).is_empty());

    let html = root.get("/admin/amodel/1/").await.expect(200).text();
    let history = html.find(">History</a>").expect("the history link");
    let form = html.find("<form method=\"post\"").expect("the form");
    assert!(history < form, "the history link comes first");
}

#[actix_web::test]
async fn the_index_keeps_its_place_through_history_export_and_import() {
    use base64::Engine as _;
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let place = "/admin/amodel/?a_field__ne=zz&ordering=-id&page=1";
    let back = format!("href=\"{place}\"");
    let html = root.get(place).await.expect(200).text();
    let edit = href_starting(&html, "/admin/amodel/1/?").expect("row 1's edit link");

    // The edit page's History link carries the place; History leads back to it, and to the
    // edit page that carries it.
    let html = root.get(&edit).await.expect(200).text();
    let history = href_starting(&html, "/admin/amodel/1/history/?").expect("the History link");
    assert_eq!(param(&history, "_changelist").as_deref(), Some(place));
    let html = unescape_html(&root.get(&history).await.expect(200).text());
    assert!(html.contains(&back), "Back to the list: {html}");
    assert!(html.contains(&format!("href=\"{edit}\"")), "{html}");

    // Export: Cancel and the breadcrumb lead back to the place; the file is still filtered.
    let html = root.get(place).await.expect(200).text();
    let export = href_starting(&html, "/admin/amodel/export/?").expect("the export link");
    assert_eq!(param(&export, "_changelist").as_deref(), Some(place));
    assert_eq!(param(&export, "a_field__ne").as_deref(), Some("zz"));
    let html = unescape_html(&root.get(&export).await.expect(200).text());
    assert_eq!(
        html.matches(&back).count(),
        2,
        "Cancel and breadcrumb: {html}"
    );
    assert!(!html.contains("<code>_changelist"), "not a filter: {html}");

    // Import: Cancel, and the end of the import, lead back to the place.
    let import = href_starting(&root.get(place).await.text(), "/admin/amodel/import/?")
        .expect("the import link");
    assert_eq!(param(&import, "_changelist").as_deref(), Some(place));
    let html = unescape_html(&root.get(&import).await.expect(200).text());
    assert!(html.contains(&back), "Cancel: {html}");
    assert!(html.contains(&format!("action=\"{import}\"")), "{html}");
    let token = root.csrf("/admin/").await;
    let data = base64::engine::general_purpose::STANDARD.encode("a_field\r\nnew\r\n");
    let resp = root
        .send(plover_tests::multipart_request(
            actix_web::http::Method::POST,
            &import,
            &[("csrf_token", &token), ("data", &data), ("confirm", "yes")],
        ))
        .await;
    assert_eq!(see_other(&resp), place);
    assert_eq!(app.count("amodel"), 3);
}

#[actix_web::test]
async fn the_add_page_takes_initial_values_from_its_query() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let html = root
        .get("/admin/bmodel/add/?a=2&b_field=%3Cb%3Enew&_changelist=%2Fadmin%2Fbmodel%2F")
        .await
        .expect(200)
        .text();
    // The text as if typed, escaped; the foreign key as its row's text.
    assert!(html.contains("value=\"&#60;b&#62;new\""), "{html}");
    assert!(html.contains("<option value=\"2\" selected>"), "{html}");
    // Only shown: nothing is written until the form is saved.
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM bmodel"), 2);
    // Without a query the field is empty.
    let html = root.get("/admin/bmodel/add/").await.expect(200).text();
    assert!(!html.contains("&#60;b&#62;new"), "{html}");
    assert!(!html.contains("<option value=\"2\" selected>"), "{html}");
}
