//! The index's row count and facets (docs/admin.md#counts-and-facets): the count exact up to
//! the bound, then PostgreSQL's estimate; each facet kind's values and counts under the other
//! filters and the search; a value's link filters the index; `_facets` shows the counts, is
//! kept by every link and is no filter; facet texts are escaped; misdeclared facets panic at
//! set-up.

use plover::admin::{Admin, ModelAdmin};
use plover::prelude::*;
use plover_tests::{unescape_html, Message, Sample, TestApp, User};

use super::{admin, query_pairs, row_ids, PW};

/// One link of a facet, as the page shows it.
#[derive(Debug, Clone)]
struct Link {
    label: String,
    href: String,
    current: bool,
    count: Option<i64>,
}

/// The links of the facet titled `By {title}`: "All" first, then its values, then "and N
/// more" if any.
fn facet(html: &str, field: &str) -> Vec<Link> {
    // The heading names the field as people read it (`pub_date`: "By date published").
    let name = [Message::meta(), Sample::meta(), User::meta()]
        .iter()
        .find_map(|meta| meta.field(field))
        .map_or(field, |(_, f)| f.verbose_name());
    let title = name[..1].to_lowercase() + &name[1..];
    let start = html
        .find(&format!(">By {title}</h2>"))
        .unwrap_or_else(|| panic!("no facet {title}: {html}"));
    let list = &html[start..];
    links(&list[..list.find("</ul>").expect("the facet's end")])
}

/// The links of the items (`<li>`) of `list`.
fn links(list: &str) -> Vec<Link> {
    list.split("<li")
        .skip(1)
        .map(|item| {
            let href = item.split("href=\"").nth(1).expect("a link");
            let href = unescape_html(&href[..href.find('"').expect("the link's end")]);
            let a_open = item.find("<a ").expect("an anchor");
            let text_start = a_open + item[a_open..].find('>').expect("the anchor's end") + 1;
            let text_end = text_start + item[text_start..].find("</a>").expect("</a>");
            let count = item.split("class=\"facet-count\">").nth(1).map(|rest| {
                rest[..rest.find('<').expect("the count's end")]
                    .parse()
                    .expect("a number")
            });
            Link {
                label: unescape_html(&item[text_start..text_end]),
                href,
                current: item[a_open..text_start].contains("aria-current=\"true\""),
                count,
            }
        })
        .collect()
}

/// The `(label, count)` of a facet's values (not "All").
fn counts(html: &str, title: &str) -> Vec<(String, Option<i64>)> {
    facet(html, title)
        .into_iter()
        .skip(1)
        .map(|l| (l.label, l.count))
        .collect()
}

/// The label of the facet's current link ("All" when no value is chosen).
fn current(html: &str, title: &str) -> Vec<String> {
    facet(html, title)
        .into_iter()
        .filter(|l| l.current)
        .map(|l| l.label)
        .collect()
}

/// The link labelled `label` of a facet.
fn link(html: &str, title: &str, label: &str) -> String {
    facet(html, title)
        .into_iter()
        .find(|l| l.label == label)
        .unwrap_or_else(|| panic!("no {label} in facet {title}: {html}"))
        .href
}

/// The index's row count, as shown.
fn row_count(html: &str) -> String {
    let start = html.find("id=\"row-count\">").expect("a row count") + "id=\"row-count\">".len();
    unescape_html(&html[start..start + html[start..].find('<').expect("its end")])
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn some(v: &[(&str, i64)]) -> Vec<(String, Option<i64>)> {
    v.iter().map(|(l, n)| ((*l).to_owned(), Some(*n))).collect()
}

/// root (1, the admin), alice (2), bob (3), carol (4, no messages), and five messages.
async fn messages(app: &TestApp) -> plover_tests::Browser<'_> {
    let root = admin(app).await;
    let alice = app.user_with("alice", PW, true, false);
    let bob = app.user_with("bob", PW, false, false);
    app.user_with("carol", PW, true, false);
    app.sql(&format!(
        "INSERT INTO message (id, user_id, content, pub_date) VALUES
            (1, {alice}, 'hello world', '2023-05-01 10:00:00'),
            (2, {alice}, 'hello again', '2024-01-15 10:00:00'),
            (3, {bob}, 'hello from bob', '2024-01-20 10:00:00'),
            (4, {bob}, 'bye', '2024-03-02 10:00:00'),
            (5, {alice}, 'bye bye', '2024-03-10 10:00:00');"
    ));
    root
}

#[actix_web::test]
async fn foreign_key_and_date_facets_count_under_the_other_filters_and_the_search() {
    let app = TestApp::new().await;
    let root = messages(&app).await;

    let html = root
        .get("/admin/message/?_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "5 messages");
    // The most frequent authors first; carol and root, without messages, are not listed.
    assert_eq!(counts(&html, "user"), some(&[("alice", 3), ("bob", 2)]));
    assert_eq!(counts(&html, "pub_date"), some(&[("2023", 1), ("2024", 4)]));
    assert_eq!(current(&html, "user"), ["All"]);

    // Under a search: the count and every facet.
    let html = root
        .get("/admin/message/?q=hello&_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "3 messages");
    assert_eq!(counts(&html, "user"), some(&[("alice", 2), ("bob", 1)]));
    assert_eq!(counts(&html, "pub_date"), some(&[("2023", 1), ("2024", 2)]));

    // A facet counts under the other filters, not its own: bob chosen, alice still offered.
    let html = root
        .get("/admin/message/?q=hello&user=3&_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "1 message");
    assert_eq!(row_ids(&html), [3]);
    assert_eq!(counts(&html, "user"), some(&[("alice", 2), ("bob", 1)]));
    assert_eq!(current(&html, "user"), ["bob"]);
    assert_eq!(counts(&html, "pub_date"), some(&[("2024", 1)]));

    // Clicking a year filters by it, keeping the search, the ordering, the other filters and
    // `_facets`, back on the first page.
    let html = root
        .get("/admin/message/?q=hello&ordering=-id&_facets=1&page=2")
        .await
        .expect(200)
        .text();
    let year = link(&html, "pub_date", "2024");
    let mut kept = query_pairs(&year);
    kept.sort();
    assert_eq!(
        kept,
        pairs(&[
            ("_facets", "1"),
            ("ordering", "-id"),
            ("pub_date__gte", "2024-01-01"),
            ("pub_date__lt", "2025-01-01"),
            ("q", "hello"),
        ])
    );
    let html = root.get(&year).await.expect(200).text();
    assert_eq!(row_ids(&html), [3, 2]);
    assert_eq!(row_count(&html), "2 messages");
    // The chosen year, marked, with its months.
    assert_eq!(
        counts(&html, "pub_date"),
        some(&[("2024", 2), ("January 2024", 2)])
    );
    assert_eq!(current(&html, "pub_date"), ["2024"]);
    let month = link(&html, "pub_date", "January 2024");
    let html = root.get(&month).await.expect(200).text();
    assert_eq!(row_ids(&html), [3, 2]);
    assert_eq!(current(&html, "pub_date"), ["January 2024"]);
    // Without the search: March too.
    let all_words = link(&html, "pub_date", "2024").replace("q=hello&", "");
    let html = root.get(&all_words).await.expect(200).text();
    assert_eq!(
        counts(&html, "pub_date"),
        some(&[("2024", 4), ("January 2024", 2), ("March 2024", 2)])
    );
    // "All" removes the facet's filters, and only them.
    let all = link(&html, "pub_date", "All");
    let mut kept = query_pairs(&all);
    kept.sort();
    assert_eq!(kept, pairs(&[("_facets", "1"), ("ordering", "-id")]));
    assert_eq!(
        row_ids(&root.get(&all).await.expect(200).text()),
        [5, 4, 3, 2, 1]
    );

    // Conditions through the foreign key obey the user admin's rules, facets included: a
    // join filter narrows every facet; one on a field the user admin hides is a 400, never
    // counts.
    let html = root
        .get("/admin/message/?user__username=bob&_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(counts(&html, "user"), some(&[("bob", 2)]));
    assert_eq!(counts(&html, "pub_date"), some(&[("2024", 2)]));
    let html = root
        .get("/admin/message/?user__password__like=%25&_facets=1")
        .await
        .expect(400)
        .text();
    assert!(!html.contains("facet-count"), "{html}");

    // A user chosen by a facet link.
    let html = root
        .get("/admin/message/?_facets=1")
        .await
        .expect(200)
        .text();
    let bob = link(&html, "user", "bob");
    assert_eq!(query_pairs(&bob), pairs(&[("_facets", "1"), ("user", "3")]));
    assert_eq!(row_ids(&root.get(&bob).await.expect(200).text()), [3, 4]);
}

#[actix_web::test]
async fn without_facets_1_the_values_are_listed_without_counts_and_a_link_shows_them() {
    let app = TestApp::new().await;
    let root = messages(&app).await;

    let html = root.get("/admin/message/?q=hello").await.expect(200).text();
    assert!(!html.contains("facet-count"), "{html}");
    assert_eq!(
        row_count(&html),
        "3 messages",
        "the row count is always shown"
    );
    // The related rows by key; the years of the table (least to greatest date).
    let users: Vec<String> = counts(&html, "user").into_iter().map(|(l, _)| l).collect();
    assert_eq!(users, ["root", "alice", "bob", "carol"]);
    let years: Vec<String> = counts(&html, "pub_date")
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(years, ["2023", "2024"]);
    // The link that shows counts keeps the query.
    let start = html.find("class=\"facet-toggle\"").expect("a toggle");
    let toggle = &html[start..];
    assert!(toggle.contains(">Show counts</a>"), "{toggle}");
    let href = toggle.split("href=\"").nth(1).unwrap();
    let href = unescape_html(&href[..href.find('"').unwrap()]);
    assert_eq!(
        query_pairs(&href),
        pairs(&[("q", "hello"), ("_facets", "1")])
    );
    let html = root.get(&href).await.expect(200).text();
    assert_eq!(counts(&html, "user"), some(&[("alice", 2), ("bob", 1)]));
    let start = html.find("class=\"facet-toggle\"").expect("a toggle");
    let toggle = &html[start..];
    assert!(toggle.contains(">Hide counts</a>"), "{toggle}");
    let href = toggle.split("href=\"").nth(1).unwrap();
    let href = unescape_html(&href[..href.find('"').unwrap()]);
    assert_eq!(query_pairs(&href), pairs(&[("q", "hello")]));

    // A chosen year lists its twelve months, without counts.
    let html = root
        .get("/admin/message/?pub_date__gte=2024-01-01&pub_date__lt=2025-01-01")
        .await
        .expect(200)
        .text();
    let months = counts(&html, "pub_date");
    assert_eq!(months.len(), 13, "{months:?}");
    assert_eq!(months[1], ("January 2024".to_owned(), None));
    assert_eq!(months[12], ("December 2024".to_owned(), None));
    assert_eq!(current(&html, "pub_date"), ["2024"]);

    // `_facets` is no filter: no chip, and a bad value is a 400 naming it.
    let html = root
        .get("/admin/message/?_facets=1")
        .await
        .expect(200)
        .text();
    assert!(!html.contains("<code>_facets"), "{html}");
    let html = root
        .get("/admin/message/?_facets=yes")
        .await
        .expect(400)
        .text();
    assert!(html.contains("_facets"), "{html}");
}

#[actix_web::test]
async fn boolean_facets_and_the_export_keeps_facets_as_ignored() {
    let app = TestApp::new().await;
    let root = messages(&app).await;

    let html = root.get("/admin/user/?_facets=1").await.expect(200).text();
    assert_eq!(row_count(&html), "4 users");
    assert_eq!(counts(&html, "active"), some(&[("Yes", 3), ("No", 1)]));
    assert_eq!(counts(&html, "admin"), some(&[("Yes", 1), ("No", 3)]));
    let yes = link(&html, "active", "Yes");
    assert_eq!(
        query_pairs(&yes),
        pairs(&[("_facets", "1"), ("active", "true")])
    );

    let html = root.get(&yes).await.expect(200).text();
    assert_eq!(row_ids(&html), [1, 2, 4]);
    assert_eq!(current(&html, "active"), ["Yes"]);
    assert_eq!(current(&html, "admin"), ["All"]);
    // The other facet counts under the filter; the own one does not.
    assert_eq!(counts(&html, "admin"), some(&[("Yes", 1), ("No", 2)]));
    assert_eq!(counts(&html, "active"), some(&[("Yes", 3), ("No", 1)]));

    // The export link keeps `_facets`, which the export ignores, and the index's place.
    let start = html
        .find("href=\"/admin/user/export/")
        .expect("an export link")
        + 6;
    let export = unescape_html(&html[start..start + html[start..].find('"').unwrap()]);
    let mut kept = query_pairs(&export);
    kept.sort();
    assert_eq!(
        kept,
        pairs(&[
            ("_changelist", "/admin/user/?_facets=1&active=true"),
            ("_facets", "1"),
            ("active", "true")
        ])
    );
    let page = root.get(&export).await.expect(200).text();
    assert!(!page.contains("_facets</"), "not shown as a filter: {page}");
    let csv = super::post(&root, &export, &[("format", "csv"), ("fields", "id")])
        .await
        .expect(200)
        .text();
    assert_eq!(csv, "id\r\n1\r\n2\r\n4\r\n");
}

#[actix_web::test]
async fn choice_and_nullable_foreign_key_facets_escape_the_related_rows_text() {
    let app = TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened, parent_id)
         VALUES (1, '<b>\"Tom & Jerry\"</b>', 3, 'open', '', '', '2024-02-03', NULL),
                (2, 'child a', 3, 'open', '', '', '2024-02-04', 1),
                (3, 'child b', 3, 'closed', '', '', '2025-06-01', 1),
                (4, 'lone', 3, 'closed', '', '', '2025-07-01', NULL);",
    )
    .await;
    let root = admin(&app).await;

    let html = root
        .get("/admin/ticket/?_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(counts(&html, "status"), some(&[("open", 2), ("closed", 2)]));
    // The rows without a parent are a value of their own.
    assert_eq!(
        counts(&html, "parent"),
        some(&[("None", 2), ("<b>\"Tom & Jerry\"</b>", 2)])
    );
    assert!(!html.contains("<b>\"Tom"), "escaped: {html}");
    assert!(html.contains("&#60;b&#62;&#34;Tom &#38; Jerry"), "{html}");
    assert_eq!(counts(&html, "opened"), some(&[("2024", 2), ("2025", 2)]));

    let closed = link(&html, "status", "closed");
    assert_eq!(
        query_pairs(&closed),
        pairs(&[("_facets", "1"), ("status", "closed")])
    );
    let html = root.get(&closed).await.expect(200).text();
    assert_eq!(row_ids(&html), [3, 4]);
    assert_eq!(
        counts(&html, "parent"),
        some(&[("None", 1), ("<b>\"Tom & Jerry\"</b>", 1)])
    );
    assert_eq!(counts(&html, "opened"), some(&[("2025", 2)]));
    // Every choice is listed, with 0 where no row has it.
    let html = root
        .get("/admin/ticket/?_facets=1&title=lone")
        .await
        .expect(200)
        .text();
    assert_eq!(counts(&html, "status"), some(&[("open", 0), ("closed", 1)]));

    let none = link(&html, "parent", "None");
    assert_eq!(
        query_pairs(&none),
        pairs(&[("_facets", "1"), ("title", "lone"), ("parent__is", "null")])
    );
    assert_eq!(row_ids(&root.get(&none).await.expect(200).text()), [4]);
}

#[actix_web::test]
async fn a_foreign_key_facet_lists_the_ten_most_frequent_and_how_many_more() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let mut sql = String::new();
    // Users u01..u12 (ids 2..13); u01 has 3 messages, u02 2, the others 1 each.
    for n in 1..=12 {
        let id = app.user(&format!("u{n:02}"), PW);
        let times = match n {
            1 => 3,
            2 => 2,
            _ => 1,
        };
        for _ in 0..times {
            sql.push_str(&format!(
                "INSERT INTO message (user_id, content, pub_date) VALUES ({id}, 'm', '2024-01-01 00:00:00');\n"
            ));
        }
    }
    app.sql(&sql);
    let html = root
        .get("/admin/message/?_facets=1")
        .await
        .expect(200)
        .text();
    let values = facet(&html, "user");
    let listed: Vec<(String, Option<i64>)> = values[1..values.len() - 1]
        .iter()
        .map(|l| (l.label.clone(), l.count))
        .collect();
    // By count, then by key.
    let mut expected = some(&[("u01", 3), ("u02", 2)]);
    expected.extend((3..=10).map(|n| (format!("u{n:02}"), Some(1))));
    assert_eq!(listed, expected);
    let more = values.last().unwrap();
    assert_eq!(more.label, "and 2 more");
    assert_eq!(more.href, "#facet-q-user", "the facet's search box");
    // A chosen user beyond the ten is listed too, marked.
    let html = root
        .get("/admin/message/?_facets=1&user=13")
        .await
        .expect(200)
        .text();
    assert_eq!(current(&html, "user"), ["u12"]);
    assert_eq!(row_count(&html), "1 message");
}

/// The search form of the facet of the foreign key `field`, if it has one.
fn search_form<'a>(html: &'a str, field: &str) -> Option<&'a str> {
    let start = html.find(&format!("data-field=\"{field}\""))?;
    let start = html[..start].rfind("<form")?;
    Some(&html[start..start + html[start..].find("</form>")?])
}

/// The `(name, value)` of the hidden inputs of a form, decoded.
fn hidden(form: &str) -> Vec<(String, String)> {
    form.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|rest| {
            let (name, rest) = rest.split_once('"').expect("the name's end");
            let value = rest.split("value=\"").nth(1).expect("a value");
            let value = &value[..value.find('"').expect("the value's end")];
            (unescape_html(name), unescape_html(value))
        })
        .collect()
}

/// The links of a facet's search results, `(label, link, count)`.
fn matches(html: &str) -> Vec<(String, String, Option<i64>)> {
    let Some(start) = html.find("<ul class=\"facet-matches\"") else {
        return Vec::new();
    };
    let list = &html[start..];
    links(&list[..list.find("</ul>").expect("the list's end")])
        .into_iter()
        .map(|l| (l.label, l.href, l.count))
        .collect()
}

/// Whether any link of the page carries the parameter `name`.
fn any_link_has(html: &str, name: &str) -> bool {
    html.split("href=\"").skip(1).any(|rest| {
        query_pairs(&unescape_html(&rest[..rest.find('"').unwrap()]))
            .iter()
            .any(|(k, _)| k == name)
    })
}

#[actix_web::test]
async fn a_foreign_key_facet_with_many_values_searches_them_with_its_lookup() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    // Users u01..u12 (ids 2..13), a message each.
    let mut sql = String::new();
    for n in 1..=12 {
        let id = app.user(&format!("u{n:02}"), PW);
        sql.push_str(&format!(
            "INSERT INTO message (user_id, content, pub_date) VALUES ({id}, 'm{n}', '2024-01-{n:02} 00:00:00');\n"
        ));
    }
    app.sql(&sql);

    // More authors than the facet lists: a search box, which "and 2 more" leads to, keeping
    // the index's search, ordering and counts (not its page).
    let place = "/admin/message/?q=m&ordering=-pub_date&_facets=1";
    let html = root
        .get(&format!("{place}&page=1"))
        .await
        .expect(200)
        .text();
    assert_eq!(facet(&html, "user").last().unwrap().href, "#facet-q-user");
    let form = search_form(&html, "user").unwrap_or_else(|| panic!("a search box: {html}"));
    assert!(form.contains("action=\"/admin/message/\""), "{form}");
    assert!(
        form.contains("data-lookup=\"/admin/message/lookup/user/\""),
        "{form}"
    );
    assert!(
        form.contains("<label for=\"facet-q-user\""),
        "labelled: {form}"
    );
    assert!(
        form.contains("id=\"facet-q-user\" name=\"_facet_q_user\" value=\"\""),
        "{form}"
    );
    assert_eq!(
        hidden(form),
        pairs(&[("q", "m"), ("ordering", "-pub_date"), ("_facets", "1")])
    );
    assert!(matches(&html).is_empty());

    // What the form sends: the authors whose username contains `u1`, each a link that filters
    // the index as the facet's values do, counted. The search itself filters nothing, and no
    // link carries it on.
    let html = root
        .get(&format!("{place}&_facet_q_user=u1"))
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "12 messages");
    let found = matches(&html);
    let labels: Vec<(&str, Option<i64>)> = found.iter().map(|(l, _, n)| (l.as_str(), *n)).collect();
    assert_eq!(
        labels,
        [("u10", Some(1)), ("u11", Some(1)), ("u12", Some(1))]
    );
    assert_eq!(
        query_pairs(&found[2].1),
        pairs(&[
            ("q", "m"),
            ("ordering", "-pub_date"),
            ("_facets", "1"),
            ("user", "13")
        ])
    );
    let form = search_form(&html, "user").expect("the search box");
    assert!(
        form.contains("value=\"u1\""),
        "the text stays in the box: {form}"
    );
    assert!(!any_link_has(&html, "_facet_q_user"), "{html}");
    let problems = super::a11y::problems("index with a facet search", &html);
    assert!(problems.is_empty(), "{problems:?}");

    // The chosen author, beyond the ten listed, is marked; the place is kept.
    let html = root.get(&found[2].1).await.expect(200).text();
    assert_eq!(row_count(&html), "1 message");
    assert_eq!(current(&html, "user"), ["u12"]);
    assert_eq!(row_ids(&html).len(), 1);

    // Without counts, no counts; the search text is a literal, bound and escaped.
    let html = root
        .get("/admin/message/?_facet_q_user=u0")
        .await
        .expect(200)
        .text();
    let found: Vec<(String, Option<i64>)> =
        matches(&html).into_iter().map(|(l, _, n)| (l, n)).collect();
    let expected: Vec<(String, Option<i64>)> =
        (1..=9).map(|n| (format!("u{n:02}"), None)).collect();
    assert_eq!(found, expected);
    for text in ["%", "_", "<i>x</i>'", "u01' OR '1'='1"] {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("_facet_q_user", text)
            .finish();
        let html = root
            .get(&format!("/admin/message/?{query}"))
            .await
            .expect(200)
            .text();
        assert!(matches(&html).is_empty(), "{text}: {html}");
        assert!(!html.contains("<i>x</i>"), "escaped: {html}");
        assert!(
            unescape_html(&html).contains(&format!("No user matches “{text}”.")),
            "{text}: {html}"
        );
    }
    let long = "u".repeat(10_001);
    let html = root
        .get(&format!("/admin/message/?_facet_q_user={long}"))
        .await
        .expect(400)
        .text();
    assert!(html.contains("_facet_q_user"), "{html}");
}

#[actix_web::test]
async fn a_foreign_key_facet_without_a_lookup_leads_to_the_filter_form() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let sql: String = (1..=12)
        .map(|n| {
            format!(
                "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened, parent_id)
                 VALUES ({n}, 't{n}', 3, 'open', '', '', '2024-02-03', NULL);\n"
            )
        })
        .collect();
    app.sql(&sql);
    let html = root.get("/admin/ticket/").await.expect(200).text();
    let values = facet(&html, "parent");
    let more = values.last().unwrap();
    assert_eq!(
        (more.label.as_str(), more.href.as_str()),
        ("and more", "#filter-key")
    );
    assert!(search_form(&html, "parent").is_none(), "{html}");
    // A facet search of it is ignored.
    let html = root
        .get("/admin/ticket/?_facet_q_parent=t1")
        .await
        .expect(200)
        .text();
    assert!(matches(&html).is_empty());
}

#[actix_web::test]
async fn counts_are_exact_up_to_the_bound_then_an_estimate_on_postgresql() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let sample = |id: i64, flag: bool, day: &str| {
        format!(
            "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp)
             VALUES ({id}, 's{id}', 1, 0, 0, {flag}, '', NULL, {day}, '2024-05-0{id} 00:00:00');"
        )
    };
    app.sql(&(sample(1, true, "'2024-01-01'") + &sample(2, false, "NULL")));
    let html = root
        .get("/admin/sample/?_facets=1")
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "2 samples");
    assert_eq!(counts(&html, "flag"), some(&[("Yes", 1), ("No", 1)]));
    assert_eq!(counts(&html, "day"), some(&[("2024", 1), ("None", 1)]));
    // The bound (3) itself is exact.
    app.sql(&sample(3, true, "NULL"));
    let html = root.get("/admin/sample/").await.expect(200).text();
    assert_eq!(row_count(&html), "3 samples");
    // Past the bound: SQLite counts them all; PostgreSQL estimates, marked, never below it.
    app.sql(&(sample(4, true, "NULL") + &sample(5, false, "NULL")));
    let html = root.get("/admin/sample/").await.expect(200).text();
    let shown = row_count(&html);
    if app.is_postgres() {
        let n: i64 = shown
            .strip_prefix("about ")
            .and_then(|rest| rest.strip_suffix(" samples"))
            .unwrap_or_else(|| panic!("an estimate: {shown}"))
            .replace(',', "")
            .parse()
            .expect("a number");
        assert!(n >= 4, "{shown}");
    } else {
        assert_eq!(shown, "5 samples");
    }
    // Under a filter within the bound: exact again.
    let html = root
        .get("/admin/sample/?flag=false")
        .await
        .expect(200)
        .text();
    assert_eq!(row_count(&html), "2 samples");
}

#[actix_web::test]
async fn show_facets_always_counts_without_a_toggle() {
    let app = TestApp::with_seed(
        "INSERT INTO vault (id, label, pin) VALUES (1, 'gold', ''), (2, 'silver', '');
         INSERT INTO deposit (id, vault_id, amount) VALUES (1, 2, 5), (2, 2, 6), (3, 1, 7);",
    )
    .await;
    let root = admin(&app).await;
    let html = root.get("/admin/deposit/").await.expect(200).text();
    assert_eq!(
        counts(&html, "vault"),
        some(&[("vault #2", 2), ("vault #1", 1)])
    );
    assert!(!html.contains("facet-toggle"), "{html}");
    assert_eq!(row_count(&html), "3 deposits");
}

/// Sets up an admin of messages with these facets.
fn set_up(admin_of: impl FnOnce() -> ModelAdmin<Message>) {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let auth = Auth::<User>::new(db);
    let mut admin = Admin::new(&auth);
    admin.register(ModelAdmin::<User>::new().exclude([User::FIELDS.password]));
    admin.register(admin_of());
    let _ = admin.setup();
}

#[test]
#[should_panic(expected = "list_filter of `message`: `content` is a free text without choices")]
fn a_free_text_facet_panics_at_set_up() {
    set_up(|| ModelAdmin::new().list_filter([Message::FIELDS.content]));
}

#[test]
#[should_panic(expected = "list_filter of `sample`: `qty` is a number without choices")]
fn a_number_facet_panics_at_set_up() {
    let db = Database::from_url("sqlite://:memory:").unwrap();
    let auth = Auth::<User>::new(db);
    let mut admin = Admin::new(&auth);
    admin.register(ModelAdmin::<Sample>::new().list_filter([Sample::FIELDS.qty]));
    let _ = admin.setup();
}

#[test]
#[should_panic(
    expected = "list_filter of `message`: `pub_date` is not a field this index may filter"
)]
fn a_facet_the_index_may_not_filter_panics_at_set_up() {
    set_up(|| {
        ModelAdmin::new()
            .exclude([Message::FIELDS.pub_date])
            .list_filter([Message::FIELDS.pub_date])
    });
}

#[actix_web::test]
async fn foreign_key_filter_chips_and_the_export_show_the_related_rows_text() {
    let app = TestApp::new().await;
    let root = messages(&app).await;

    // The chips name the users (key kept in the links); a key with no row shows the key.
    let html = root
        .get("/admin/message/?user=3&user__in=2,99&content__ne=x")
        .await
        .expect(200)
        .text();
    let html = unescape_html(&html);
    assert!(html.contains("<code>user = bob (#3)</code>"), "{html}");
    assert!(
        html.contains("<code>user__in = alice (#2), #99</code>"),
        "{html}"
    );
    assert!(html.contains("<code>content__ne = x</code>"), "{html}");
    assert!(
        html.contains("href=\"/admin/message/export/?user=3&"),
        "the export link keeps the key: {html}"
    );

    // The export page says which rows, by name too.
    let html = root
        .get("/admin/message/export/?user=3")
        .await
        .expect(200)
        .text();
    assert!(html.contains("<code>user = bob (#3)</code>"), "{html}");
}
