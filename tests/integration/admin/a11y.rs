//! The admin's pages for the keyboard and screen readers (docs/admin.md#accessibility), as
//! served: a skip link first, a `main` it leads to, a caption on every table and a label on
//! every control. The browser tests (`tests/browser.rs`) run axe-core and the keyboard on them.

use super::{admin, post};
use plover_tests::{TestApp, CHAINS};

/// The value of the attribute `name` in the tag `tag` (`<input ...>`), if it has one.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// The problems of one page: no skip link first, no `main#content`, a table without a caption,
/// a control (input but hidden ones, select, textarea) without a label (`<label for>` its id,
/// a `<label>` around it, or an `aria-label`).
pub(super) fn problems(page: &str, html: &str) -> Vec<String> {
    let mut found = Vec::new();
    let body = html.split_once("<body>").map_or("", |(_, b)| b);
    if !body
        .trim_start()
        .starts_with("<a class=\"skip-link\" href=\"#content\">Skip to content</a>")
    {
        found.push(format!("{page}: the skip link does not come first"));
    }
    let main = html
        .find("<main")
        .map(|i| &html[i..i + html[i..].find('>').unwrap_or(0)]);
    if main.and_then(|tag| attr(tag, "id")) != Some("content") {
        found.push(format!("{page}: no main#content"));
    }
    for (i, _) in html.match_indices("<table") {
        let after = html[i..].split_once('>').map_or("", |(_, rest)| rest);
        if !after.trim_start().starts_with("<caption") {
            found.push(format!("{page}: a table without a caption"));
        }
    }
    for control in ["<input", "<select", "<textarea"] {
        for (i, _) in html.match_indices(control) {
            let tag = &html[i..i + html[i..].find('>').unwrap_or(0)];
            if attr(tag, "type") == Some("hidden") || attr(tag, "aria-label").is_some() {
                continue;
            }
            let labelled = attr(tag, "id").is_some_and(|id| labels_for(html, id))
                || html[..i].rfind("<label") > html[..i].rfind("</label>");
            if !labelled {
                found.push(format!("{page}: no label for {tag}>"));
            }
        }
    }
    found
}

/// Whether a `<label>` of `html` names `id` in its `for` (whatever other attributes it has).
fn labels_for(html: &str, id: &str) -> bool {
    html.match_indices("<label").any(|(i, _)| {
        let tag = &html[i..i + html[i..].find('>').unwrap_or(0)];
        attr(tag, "for") == Some(id)
    })
}

#[actix_web::test]
async fn every_admin_page_has_a_skip_link_table_captions_and_labelled_controls() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let bob = app.user("bob", super::PW);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES \
         (1, {bob}, 'hello', '2020-01-02 03:04:05');"
    ));
    // A change, for the History page.
    let resp = post(
        &root,
        "/admin/message/1/",
        &[
            ("user", &bob.to_string()),
            ("content", "hello again"),
            ("pub_date", "2020-01-02T03:04:05"),
        ],
    )
    .await;
    resp.expect(303);
    let group = app
        .db
        .run_blocking(|c| plover::permissions::create_group(c, "support"))
        .expect("a group")
        .id;

    let mut found = Vec::new();
    for (page, uri) in [
        ("dashboard", "/admin/".to_owned()),
        ("index", "/admin/message/?content__like=%25h%25".to_owned()),
        ("user index", "/admin/user/".to_owned()),
        ("add", "/admin/message/add/".to_owned()),
        ("edit", "/admin/message/1/".to_owned()),
        ("edit with a select", "/admin/bmodel/2/".to_owned()),
        ("delete", format!("/admin/user/{bob}/delete/")),
        (
            "group, its permissions' checklist",
            format!("/admin/group/{group}/"),
        ),
        ("user, its groups' checklist", format!("/admin/user/{bob}/")),
        ("history", "/admin/message/1/history/".to_owned()),
        ("export", "/admin/message/export/".to_owned()),
        ("import", "/admin/message/import/".to_owned()),
    ] {
        let html = root.get(&uri).await.expect(200).text();
        found.extend(problems(page, &html));
    }
    // The index has its table; the History page has one too, now.
    let html = root.get("/admin/message/1/history/").await.text();
    assert!(
        html.contains("<caption class=\"visually-hidden\">"),
        "{html}"
    );
    let html = root.get("/admin/nosuch/").await.expect(404).text();
    found.extend(problems("not found", &html));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_checks_find_what_is_missing() {
    let bad = "<body>\n<header></header><main><table><tr><td>1</td></tr></table>\
               <input type=\"text\" id=\"x\"><input type=\"hidden\" name=\"h\">\
               <label>y <input type=\"checkbox\"></label><select id=\"s\"></select>\
               <label for=\"s\">s</label></main>";
    let found = problems("bad", bad);
    assert_eq!(
        found,
        [
            "bad: the skip link does not come first",
            "bad: no main#content",
            "bad: a table without a caption",
            "bad: no label for <input type=\"text\" id=\"x\">",
        ]
    );
}
