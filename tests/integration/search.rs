//! docs/contract.md#search: `search_fields` and `?q=`, every word in some field, literal and
//! case-insensitive, through joins under the target's rules.

use plover_tests::*;

/// Alice (active) and carol (hidden by the user resource), and their messages.
async fn messages() -> TestApp {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES
            (1, {alice}, 'Hello world', '2020-01-01 00:00:00'),
            (2, {alice}, 'the WORLD is wide', '2020-01-02 00:00:00'),
            (3, {carol}, 'hello from carol', '2020-01-03 00:00:00'),
            (4, {alice}, '100% sure_thing', '2020-01-04 00:00:00'),
            (5, {alice}, 'une École', '2020-01-05 00:00:00'),
            (6, {carol}, 'alice was here', '2020-01-06 00:00:00');"
    ));
    app
}

async fn found(app: &TestApp, q: &str) -> Vec<i64> {
    app.get(&url("/api/message/", &[("q", q)])).await.ids()
}

#[actix_web::test]
async fn every_word_matches_some_search_field() {
    let app = messages().await;
    assert_eq!(found(&app, "hello").await, [1, 3]);
    assert_eq!(found(&app, "WORLD").await, [1, 2]);
    assert_eq!(found(&app, "hello world").await, [1]);
    assert_eq!(found(&app, "  world   wide ").await, [2]);
    // `alice` is found in the username of her messages, and in carol's text.
    assert_eq!(found(&app, "alice").await, [1, 2, 4, 5, 6]);
    assert_eq!(found(&app, "alice hello").await, [1]);
    assert_eq!(found(&app, "nothing").await, Vec::<i64>::new());
    // No words: no condition.
    assert_eq!(found(&app, "   ").await.len(), 6);
    // Case folding for all of Unicode.
    assert_eq!(found(&app, "éCOLE").await, [5]);
}

#[actix_web::test]
async fn wildcards_are_plain_characters() {
    let app = messages().await;
    assert_eq!(found(&app, "100%").await, [4]);
    assert_eq!(found(&app, "%").await, [4]);
    // As wildcards, `1_0` and `0%s` would match `100% sure`.
    assert_eq!(found(&app, "1_0").await, Vec::<i64>::new());
    assert_eq!(found(&app, "0%s").await, Vec::<i64>::new());
    assert_eq!(found(&app, "e_th").await, [4]);
    assert_eq!(found(&app, "_").await, [4]);
}

#[actix_web::test]
async fn a_join_finds_only_the_rows_its_target_shows() {
    let app = messages().await;
    // Carol is hidden by the user resource: her username matches nothing.
    assert_eq!(found(&app, "carol").await, [3], "her text only");
    assert_eq!(found(&app, "carol hello").await, [3]);
}

/// PostgreSQL reads the keys of the users a word finds first, up to a thousand, and keeps the
/// subquery past them (docs/performance.md#growth): the rows are the same either way.
#[actix_web::test]
async fn a_join_that_finds_many_rows_finds_the_same_messages() {
    let app = messages().await;
    app.sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1100)
         INSERT INTO \"user\" (username, password, email, join_date, active, admin)
         SELECT 'bob' || i, '', 'bob' || i || '@example.com', '2020-01-01 00:00:00', TRUE, FALSE
         FROM n;
         INSERT INTO message (id, user_id, content, pub_date)
         SELECT 7, id, 'a message', '2020-02-01 00:00:00' FROM \"user\" WHERE username = 'bob1100';
         INSERT INTO message (id, user_id, content, pub_date)
         SELECT 8, id, 'another', '2020-02-02 00:00:00' FROM \"user\" WHERE username = 'bob7';",
    );
    // 1,100 users: past the thousand keys.
    assert_eq!(found(&app, "bob").await, [7, 8]);
    // 11 users (bob110, bob1100 to bob1109), and with a word of the text.
    assert_eq!(found(&app, "bob110").await, [7]);
    assert_eq!(found(&app, "BOB110 message").await, [7]);
    assert_eq!(found(&app, "bob110 hello").await, Vec::<i64>::new());
    // No user: the text alone.
    assert_eq!(found(&app, "world").await, [1, 2]);
    assert_eq!(
        app.get("/api/message/?q=bob&count=exact").await.json()["meta"]["count"],
        2
    );
}

#[actix_web::test]
async fn search_combines_with_filters_and_stays_in_the_links() {
    let app = messages().await;
    let body = app
        .get("/api/message/?q=world&id__gt=1&limit=1")
        .await
        .json();
    assert_eq!(body["objects"][0]["id"], 2);
    let body = app.get("/api/message/?q=alice&limit=2").await.json();
    let next = body["meta"]["next"].as_str().unwrap_or_default();
    assert!(next.contains("q=alice"), "{next}");
    let body = app
        .get("/api/message/?q=alice&count=exact&limit=2")
        .await
        .json();
    assert_eq!(body["meta"]["count"], 5);
}

#[actix_web::test]
async fn bad_searches_are_400() {
    let app = messages().await;
    // A list without search fields.
    assert_param_error(&app.get("/api/sample/?q=x").await, "q");
    // Each word is searched in both fields; 16 patterns make 8 words.
    let many = ["w"; 9].join(" ");
    assert_param_error(&app.get(&url("/api/message/", &[("q", &many)])).await, "q");
    let eight = ["w"; 8].join(" ");
    app.get(&url("/api/message/", &[("q", &eight)]))
        .await
        .expect(200);
    // Text no engine stores the same.
    assert_param_error(&app.get("/api/message/?q=a%00b").await, "q");
    let long = "x".repeat(10_001);
    assert_param_error(&app.get(&url("/api/message/", &[("q", &long)])).await, "q");
}

/// `/api/message/` with `patterns` values of `content__ilike` (repeated: all must match) and
/// the search `q`.
async fn with_patterns(app: &TestApp, patterns: usize, q: &str) -> Resp {
    let mut pairs = vec![("content__ilike", "%"); patterns];
    pairs.push(("q", q));
    app.get(&url("/api/message/", &pairs)).await
}

#[actix_web::test]
async fn search_words_share_the_pattern_budget_with_like_filters() {
    let app = messages().await;
    // Each word counts once per search field (two here): 16 patterns in all is the bound.
    assert_eq!(with_patterns(&app, 14, "hello").await.ids(), [1, 3]);
    assert_eq!(with_patterns(&app, 12, "hello world").await.ids(), [1]);
    for (patterns, q) in [(15, "hello"), (15, "one two"), (13, "hello world")] {
        assert_param_error(&with_patterns(&app, patterns, q).await, "q");
    }
    // Eight words fill the budget alone: one more pattern anywhere is too many.
    let eight = ["w"; 8].join(" ");
    assert_param_error(&with_patterns(&app, 16, &eight).await, "q");
    assert_param_error(&with_patterns(&app, 1, &eight).await, "q");
    with_patterns(&app, 0, &eight).await.expect(200);
    // Patterns inside groups count too.
    let group = |n: usize| format!("({})", vec!["content__ilike=%25"; n].join(","));
    let or = |n: usize, q: &str| {
        let or = group(n);
        url("/api/message/", &[("or", or.as_str()), ("q", q)])
    };
    assert_eq!(app.get(&or(14, "hello")).await.ids(), [1, 3]);
    assert_param_error(&app.get(&or(15, "hello")).await, "q");
    let not = url("/api/message/", &[("not", &group(15)), ("q", "hello")]);
    assert_param_error(&app.get(&not).await, "q");
}

/// On SQLite, a search reads the index of a `#[rest(search_index)]` field for a word of three
/// characters or more (docs/reference.md#search-q): a row the index misses is not found by
/// such a word, and is by a shorter one. The triggers keep the index as rows are added,
/// changed and deleted.
#[actix_web::test]
async fn sqlite_reads_a_search_index_that_its_triggers_keep() {
    let app = messages().await;
    if app.is_postgres() {
        return;
    }
    let indexed = |word: &str| {
        app.query_i64(&format!(
            "SELECT count(*) FROM message_content_search \
             WHERE message_content_search MATCH '\"{word}\"'"
        ))
    };
    // The index holds the text folded as a search folds it.
    assert_eq!(indexed("world"), 2);
    assert_eq!(indexed("école"), 1);
    assert_eq!(indexed("ÉCOLE"), 0, "upper case is not in the index");
    // Taken out of the index behind the table's back: a word of a trigram or more no longer
    // finds the row, a shorter one still does (no trigram: the plain LIKE).
    app.sql("DELETE FROM message_content_search WHERE rowid = 2");
    assert_eq!(found(&app, "world").await, [1]);
    assert_eq!(found(&app, "wo").await, [1, 2]);
    // Rows changed and deleted are found as they are now.
    app.sql(
        "INSERT OR REPLACE INTO message_content_search (rowid, content) \
         VALUES (2, 'the world is wide')",
    );
    app.sql("UPDATE message SET content = 'a new planet' WHERE id = 1");
    assert_eq!(found(&app, "world").await, [2]);
    assert_eq!(found(&app, "PLANET").await, [1]);
    app.sql("DELETE FROM message WHERE id = 2");
    assert_eq!(found(&app, "world").await, Vec::<i64>::new());
    assert_eq!(indexed("world"), 0);
    // A user's name through the join, by its own index.
    assert_eq!(found(&app, "ALICE").await, [1, 4, 5, 6]);
    app.sql("UPDATE \"user\" SET username = 'alicia' WHERE username = 'alice'");
    assert_eq!(found(&app, "alicia").await, [1, 4, 5]);
}

/// A search index declared on a table that has rows already takes them when it is made
/// (`schema::create_tables`, or the fix `makemigrations` writes), and a database without it
/// is searched without it.
#[actix_web::test]
async fn a_search_index_made_later_takes_the_rows_already_there() {
    let app = messages().await;
    let drop = if app.is_postgres() {
        "DROP INDEX message_content_search"
    } else {
        "DROP TRIGGER message_content_search_insert; DROP TRIGGER message_content_search_delete; \
         DROP TRIGGER message_content_search_update; DROP TABLE message_content_search"
    };
    app.sql(drop);
    app.sql("UPDATE message SET content = 'brave new world' WHERE id = 3");
    // Without the index: the same rows.
    assert_eq!(found(&app, "world").await, [1, 2, 3]);
    let differences = app
        .db
        .run_blocking(|conn| {
            plover::schema::differences(conn, <microblog::Message as plover::RestModel>::meta())
        })
        .unwrap();
    assert_eq!(differences.len(), 1, "{differences:?}");
    assert!(differences[0].harmless);
    assert!(
        differences[0].what.contains("search index"),
        "{}",
        differences[0].what
    );
    app.db
        .run_blocking(|conn| plover::schema::create_tables(conn, &microblog::models()))
        .unwrap();
    assert_eq!(found(&app, "world").await, [1, 2, 3]);
    assert_eq!(found(&app, "brave").await, [3]);
    if !app.is_postgres() {
        let all = app.query_i64("SELECT count(*) FROM message_content_search");
        assert_eq!(all, 6, "every message once");
    }
    let none = app
        .db
        .run_blocking(|conn| {
            plover::schema::differences(conn, <microblog::Message as plover::RestModel>::meta())
        })
        .unwrap();
    assert!(none.is_empty(), "{none:?}");
}

/// `?q=heron&count=exact&limit=3`: the count and the ids of the first page.
async fn herons(app: &TestApp) -> (Option<i64>, Vec<i64>) {
    let resp = app.get("/api/message/?q=heron&count=exact&limit=3").await;
    let count = resp.json()["meta"]["count"].as_i64();
    (count, resp.ids())
}

/// Messages by alice that hold the word `heron`, with the keys `step * i + offset` for `i` from
/// 1 to `rows`.
fn add_herons(app: &TestApp, rows: i64, step: i64, offset: i64) {
    let alice = app.query_i64("SELECT id FROM \"user\" WHERE username = 'alice'");
    app.sql(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
         INSERT INTO message (id, user_id, content, pub_date)
         SELECT {step} * i + {offset}, {alice}, 'a grey heron', '2021-01-01 00:00:00' FROM n"
    ));
}

/// On SQLite, a search index gives a word's count as many keys as it has rows when they are
/// few for the table's size: `sqrt(2 n)` keys of `n` (at least 1,000), judged from the spread of
/// the word's first thousand (docs/reference.md#search-q); a list in the order of its key reads
/// its page from the index at any size of word. A row taken out of the index behind the table's
/// back tells which way a word was read: the index no longer finds it, the `LIKE` does.
#[actix_web::test]
async fn a_search_index_gives_more_keys_in_a_larger_table() {
    let app = messages().await;
    if app.is_postgres() {
        return;
    }
    // 1,500 rows spread over nine million keys: 4,242 at most, so the index, without the row
    // it lost.
    add_herons(&app, 1500, 6000, 0);
    app.sql("DELETE FROM message_content_search WHERE rowid = 6000");
    assert_eq!(herons(&app).await, (Some(1499), vec![12000, 18000, 24000]));
    // 4,500 rows: past the bound, the count is the LIKE's, which finds it; the page, in the
    // order of the key, is still the index's.
    add_herons(&app, 3000, 3000, 1000);
    assert_eq!(herons(&app).await, (Some(4500), vec![4000, 7000, 10000]));
    // In another order, the page is the LIKE's too.
    let by_date = app
        .get("/api/message/?q=heron&ordering=pub_date&limit=3")
        .await;
    assert_eq!(by_date.ids(), [4000, 6000, 7000]);
    // A word in every row of the table's first keys reads one thousand keys only: the LIKE.
    add_herons(&app, 2000, 1, 1000);
    assert_eq!(herons(&app).await.0, Some(6500));
}

/// On SQLite, a list in the order of its key reads a searched word's first keys from the
/// index, a window at a time: the window grows while the other conditions leave the page
/// short, up to the bound of the word's keys, past which the word is read as a whole (here by
/// the `LIKE`, which finds the row taken out of the index). Descending, and from a cursor, it
/// starts where the page starts.
#[actix_web::test]
async fn a_list_in_key_order_reads_a_word_a_window_at_a_time() {
    let app = messages().await;
    if app.is_postgres() {
        return;
    }
    let carol = app.query_i64("SELECT id FROM \"user\" WHERE username = 'carol'");
    let carols = format!("/api/message/?q=heron&user_id={carol}&limit=3");
    // 700 herons of alice's, then carol's ten: the page is found in a window of 1,000 keys.
    add_herons(&app, 710, 1, 1000);
    app.sql(&format!(
        "UPDATE message SET user_id = {carol} WHERE id > 1700"
    ));
    app.sql("DELETE FROM message_content_search WHERE rowid = 1702");
    assert_eq!(app.get(&carols).await.ids(), [1701, 1703, 1704]);
    // 1,200 of alice's first: past the windows, the word as a whole, past its bound: the LIKE.
    app.sql("DELETE FROM message WHERE id > 1000");
    add_herons(&app, 1210, 1, 1000);
    app.sql(&format!(
        "UPDATE message SET user_id = {carol} WHERE id > 2200"
    ));
    app.sql("DELETE FROM message_content_search WHERE rowid = 2202");
    assert_eq!(app.get(&carols).await.ids(), [2201, 2202, 2203]);
    // Descending, page after page by cursor (a resource of messages that pages by cursor),
    // from the index.
    app.sql("DELETE FROM message_content_search WHERE rowid = 2206");
    let first = app
        .get("/api/message_pages/?q=heron&ordering=-id&limit=3")
        .await;
    assert_eq!(first.ids(), [2210, 2209, 2208]);
    let next = first.json()["meta"]["next"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(next.contains("cursor="), "{next}");
    assert_eq!(app.get(&next).await.ids(), [2207, 2205, 2204]);
}

/// On SQLite, every page of a searched list in the order of its key, by cursor and by number,
/// ascending and descending, with and without a condition that the window's rows must meet,
/// holds the rows that the `LIKE` without the index finds: windows that fill a page, that
/// grow, and that give up, on one table.
#[actix_web::test]
async fn every_page_of_a_searched_list_in_key_order_is_the_like_s() {
    let app = messages().await;
    if app.is_postgres() {
        return;
    }
    let alice = app.query_i64("SELECT id FROM \"user\" WHERE username = 'alice'");
    let carol = app.query_i64("SELECT id FROM \"user\" WHERE username = 'carol'");
    let heronry = app.user("heronry", "pw");
    // A sparse word at first, dense from 1,200 to 1,500; carol's rows every fifth, the
    // heronry's (found by its name) every 97th.
    app.sql(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO message (id, user_id, content, pub_date)
         SELECT i,
                CASE WHEN i % 97 = 0 THEN {heronry} WHEN i % 5 = 0 THEN {carol} ELSE {alice} END,
                CASE WHEN (i * 7919) % 13 < 2 OR i BETWEEN 1200 AND 1499
                     THEN 'a grey heron' ELSE 'a grey gull' END,
                '2021-01-01 00:00:00'
         FROM n"
    ));
    let like = |condition: &str, desc: bool| {
        let ids = app.query_text(&format!(
            "SELECT group_concat(id) FROM (SELECT m.id FROM message m JOIN \"user\" u \
             ON u.id = m.user_id WHERE (m.content LIKE '%heron%' OR u.username LIKE \
             '%heron%') {condition} ORDER BY m.id {})",
            if desc { "DESC" } else { "ASC" }
        ));
        let ids = ids.unwrap_or_default();
        (ids.split(',').filter(|id| !id.is_empty()))
            .map(|id| id.parse::<i64>().unwrap_or(-1))
            .collect::<Vec<_>>()
    };
    for (filter, condition) in [
        (String::new(), String::new()),
        (
            format!("&user_id={carol}"),
            format!("AND m.user_id = {carol}"),
        ),
        (
            format!("&user_id={heronry}"),
            format!("AND m.user_id = {heronry}"),
        ),
        // The heronry's rows past a window come after carol's that the next window brings.
        (
            format!("&user_id__in={carol},{heronry}"),
            format!("AND m.user_id IN ({carol}, {heronry})"),
        ),
    ] {
        for desc in [false, true] {
            let expected = like(&condition, desc);
            assert!(expected.len() > 5, "{filter}: {expected:?}");
            let ordering = if desc { "-id" } else { "id" };
            for limit in [1, 7, 20] {
                // By cursor, every page.
                let mut next = format!(
                    "/api/message_pages/?q=heron&ordering={ordering}&limit={limit}{filter}"
                );
                let mut seen = Vec::new();
                while !next.is_empty() && seen.len() <= expected.len() {
                    let body = app.get(&next).await.json_with(200);
                    let ids = body["objects"].as_array().map_or(Vec::new(), |objects| {
                        objects.iter().filter_map(|o| o["id"].as_i64()).collect()
                    });
                    seen.extend(ids);
                    next = body["meta"]["next"].as_str().unwrap_or_default().to_owned();
                }
                assert_eq!(seen, expected, "{ordering} {limit} {filter} by cursor");
                // By number, the first pages and the last.
                let pages = expected.len().div_ceil(limit);
                for page in [1, 2, 3, pages] {
                    let url = format!(
                        "/api/message/?q=heron&ordering={ordering}&limit={limit}&page={page}{filter}"
                    );
                    let from = (page - 1) * limit;
                    let want =
                        &expected[from.min(expected.len())..(from + limit).min(expected.len())];
                    assert_eq!(app.get(&url).await.ids(), want, "{url}");
                }
            }
        }
    }
}
