//! docs/contract.md#filters: operators, value parsing, joins, combination rules,
//! filter_fields / filter_exclude / filter_recursive, model-level and nested excludes.

use actix_web::test::TestRequest;
use plover_tests::*;

const SAMPLES: &str = r#"
INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
    (1, 'n1', 1, 10, 0.5, TRUE, '', 'Alpha', '2020-01-01', '2020-01-01 08:00:00'),
    (2, 'n2', 2, 20, 1.5, FALSE, '', 'alpha', '2020-01-02', '2020-01-02 09:30:00'),
    (3, 'n3', 3, 30, 2.5, TRUE, '', NULL, NULL, '2020-01-03 10:00:00'),
    (4, 'n4', 4, 9000000000, 3.5, FALSE, '', 'beta_x', '2020-01-04', '2020-01-04 23:59:59'),
    (5, 'n5', 5, 50, 4.5, TRUE, '', 'été', '2020-01-05', '2020-01-05 00:00:00.500');
"#;

async fn samples() -> TestApp {
    TestApp::with_seed(SAMPLES).await
}

/// The ids that `/api/sample/` lists for these filters.
async fn ids(app: &TestApp, pairs: &[(&str, &str)]) -> Vec<i64> {
    app.get(&url("/api/sample/", pairs)).await.ids()
}

/// Query pairs and the ids they should list.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a [i64]);

/// A path, query pairs and the ids they should list.
type PathCase<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [i64]);

async fn check(app: &TestApp, cases: &[Case<'_>]) {
    for (pairs, expected) in cases {
        assert_eq!(&ids(app, pairs).await, expected, "{pairs:?}");
    }
}

#[actix_web::test]
async fn operators_on_integers() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("qty", "2")], &[2]),
            (&[("qty__eq", "3")], &[3]),
            (&[("qty__lt", "3")], &[1, 2]),
            (&[("qty__lte", "3")], &[1, 2, 3]),
            (&[("qty__gt", "2")], &[3, 4, 5]),
            (&[("qty__gte", "2")], &[2, 3, 4, 5]),
            (&[("qty__ne", "2")], &[1, 3, 4, 5]),
            (&[("qty__in", "1,4")], &[1, 4]),
            (&[("qty", "-1")], &[]),
            (&[("id", "3")], &[3]),
            (&[("big", "9000000000")], &[4]),
            (&[("big__gt", "25")], &[3, 4, 5]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn operators_on_floats_and_text() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("ratio__lt", "2")], &[1, 2]),
            (&[("ratio", "1.5")], &[2]),
            (&[("ratio__gte", "3.5")], &[4, 5]),
            (&[("name", "n2")], &[2]),
            (&[("name__in", "n1,n3")], &[1, 3]),
            (&[("name__gt", "n3")], &[4, 5]),
            (&[("remark", "été")], &[5]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn boolean_values() {
    let app = samples().await;
    for value in ["true", "True", "1"] {
        assert_eq!(ids(&app, &[("flag", value)]).await, [1, 3, 5], "{value}");
    }
    for value in ["false", "False", "0"] {
        assert_eq!(ids(&app, &[("flag", value)]).await, [2, 4], "{value}");
    }
    for value in ["yes", "2", ""] {
        assert_param_error(
            &app.get(&url("/api/sample/", &[("flag", value)])).await,
            "flag",
        );
    }
}

#[actix_web::test]
async fn datetime_values() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("stamp", "2020-01-01 08:00:00")], &[1]),
            (&[("stamp", "2020-01-01T08:00:00")], &[1]),
            (&[("stamp__gte", "2020-01-02 09:30:00")], &[2, 3, 4, 5]),
            (&[("stamp__lt", "2020-01-03T00:00:00")], &[1, 2]),
            (&[("stamp__gt", "2020-01-03")], &[3, 4, 5]),
            (&[("stamp__lt", "2020-01-02")], &[1]),
            (&[("stamp__lte", "2020-01-02T09:30:00.000")], &[1, 2]),
            (&[("stamp__lte", "2020-01-02T09:30:00.5")], &[1, 2]),
            // Fractional seconds are stored and compared.
            (&[("stamp", "2020-01-05")], &[]),
            (&[("stamp__gt", "2020-01-05")], &[5]),
            (&[("stamp", "2020-01-05 00:00:00.5")], &[5]),
            (&[("stamp__lt", "2020-01-05T00:00:00.499")], &[1, 2, 3, 4]),
        ],
    )
    .await;
    for value in [
        "yesterday",
        "2020-02-30 00:00:00",
        "2020-01-01 25:00:00",
        "2020/01/01",
    ] {
        assert_param_error(
            &app.get(&url("/api/sample/", &[("stamp", value)])).await,
            "stamp",
        );
    }
}

#[actix_web::test]
async fn date_values() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("day", "2020-01-02")], &[2]),
            (&[("day__gte", "2020-01-02")], &[2, 4, 5]),
            (&[("day__lt", "2020-01-04")], &[1, 2]),
            (&[("day__in", "2020-01-01,2020-01-04")], &[1, 4]),
        ],
    )
    .await;
    for value in ["2020-13-01", "2020-1-2", "2020-01-02 00:00:00", "x"] {
        assert_param_error(
            &app.get(&url("/api/sample/", &[("day", value)])).await,
            "day",
        );
    }
}

#[actix_web::test]
async fn in_takes_commas_and_repetitions() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("qty__in", "1"), ("qty__in", "3,4")], &[1, 3, 4]),
            (&[("qty__in", "1,2"), ("qty__in", "5")], &[1, 2, 5]),
            (&[("qty__in", "2")], &[2]),
            (
                &[("day__in", "2020-01-05"), ("day__in", "2020-01-01")],
                &[1, 5],
            ),
        ],
    )
    .await;
    assert_param_error(
        &app.get(&url(
            "/api/sample/",
            &[("qty__in", "1"), ("qty__in", "2,x")],
        ))
        .await,
        "qty__in",
    );
}

#[actix_web::test]
async fn is_null_and_is_true_false() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("remark__is", "null")], &[3]),
            (&[("remark__is", "none")], &[3]),
            (&[("remark__is", "NULL")], &[3]),
            (&[("day__is", "None")], &[3]),
            (&[("flag__is", "true")], &[1, 3, 5]),
            (&[("flag__is", "false")], &[2, 4]),
            (&[("flag__is", "TRUE")], &[1, 3, 5]),
            (&[("qty__is", "null")], &[]),
        ],
    )
    .await;
    // true/false only for booleans; anything else is refused.
    for (key, value) in [
        ("qty__is", "true"),
        ("remark__is", "false"),
        ("flag__is", "maybe"),
    ] {
        assert_param_error(&app.get(&url("/api/sample/", &[(key, value)])).await, key);
    }
}

#[actix_web::test]
async fn like_is_case_sensitive() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("remark__like", "Alp%")], &[1]),
            (&[("remark__like", "alp%")], &[2]),
            (&[("remark__like", "ALPHA")], &[]),
            (&[("remark__like", "%a")], &[1, 2]),
            (&[("remark__like", "alph_")], &[2]),
            (&[("remark__like", "b_ta%")], &[4]),
            (&[("remark__like", "alp_")], &[]),
            (&[("remark__like", "%été%")], &[5]),
            (&[("remark__like", "%ÉTÉ%")], &[]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn ilike_is_case_insensitive_for_all_of_unicode() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("remark__ilike", "ALPHA")], &[1, 2]),
            (&[("remark__ilike", "%LPH%")], &[1, 2]),
            (&[("remark__ilike", "BETA%")], &[4]),
            (&[("remark__ilike", "%ÉTÉ%")], &[5]),
            (&[("remark__ilike", "É_É")], &[5]),
            (&[("remark__ilike", "%")], &[1, 2, 4, 5]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn like_and_ilike_apply_to_text_only() {
    let app = samples().await;
    for key in [
        "qty__like",
        "flag__ilike",
        "day__like",
        "stamp__ilike",
        "ratio__like",
    ] {
        assert_param_error(&app.get(&url("/api/sample/", &[(key, "1")])).await, key);
    }
}

#[actix_web::test]
async fn same_key_repeated_is_or_except_ne() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("qty", "1"), ("qty", "3")], &[1, 3]),
            (&[("remark__like", "A%"), ("remark__like", "b%")], &[1, 4]),
            (&[("qty__gt", "4"), ("qty__lt", "2")], &[]),
            (&[("qty__lt", "2"), ("qty__lt", "4")], &[1, 2, 3]),
            (&[("qty__gte", "5"), ("qty__gte", "4")], &[4, 5]),
            (&[("qty__in", "1"), ("qty", "1")], &[1]),
            (&[("qty__ne", "1"), ("qty__ne", "4")], &[2, 3, 5]),
            (&[("qty__gte", "2"), ("flag", "true")], &[3, 5]),
            (&[("qty__gte", "2"), ("qty__lte", "3")], &[2, 3]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn ne_does_not_match_null() {
    let app = samples().await;
    check(
        &app,
        &[
            (&[("remark__ne", "alpha")], &[1, 4, 5]),
            (&[("day__ne", "2020-01-01")], &[2, 4, 5]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn reserved_parameters_are_never_filters() {
    let app =
        TestApp::with_seed("INSERT INTO apikey VALUES (1, 'k1', 's1'), (2, 'k2', 's2');").await;
    app.user_with("root", "pw", true, true);
    // ApiKey has fields named key and secret: they still do not filter.
    let resp = app
        .send(
            TestRequest::get()
                .uri("/api/apikey/?key=k1&secret=s1&ordering=&page=1&limit=5")
                .insert_header(basic("root", "pw")),
        )
        .await;
    assert_eq!(resp.ids(), [1, 2]);
}

#[actix_web::test]
async fn foreign_key_filters_by_field_or_column_name() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'a1', '2020-01-01 00:00:00'),
            (2, {bob}, 'b1', '2020-01-01 00:00:00'), (3, {alice}, 'a2', '2020-01-01 00:00:00');"
    ));
    let a = alice.to_string();
    let both = format!("{alice},{bob}");
    for (pairs, expected) in [
        (vec![("user", a.as_str())], vec![1, 3]),
        (vec![("user_id", a.as_str())], vec![1, 3]),
        (vec![("user__in", both.as_str())], vec![1, 2, 3]),
        (vec![("user_id__ne", a.as_str())], vec![2]),
        (vec![("user__username", "bob")], vec![2]),
        (vec![("user__username__in", "alice,bob")], vec![1, 2, 3]),
        (vec![("user__username__ilike", "ALI%")], vec![1, 3]),
        (vec![("user__active", "true"), ("content", "a2")], vec![3]),
        (vec![("user__username", "alice"), ("id__ne", "1")], vec![3]),
    ] {
        assert_eq!(
            app.get(&url("/api/message/", &pairs)).await.ids(),
            expected,
            "{pairs:?}"
        );
    }
    assert_param_error(&app.get("/api/message/?user=alice").await, "user");
    assert_param_error(
        &app.get("/api/message/?user_id__in=1,two").await,
        "user_id__in",
    );
}

#[actix_web::test]
async fn equality_on_a_unique_field_through_a_foreign_key() {
    // `user__username` (#[rest(unique)]) and `user__id` (the key) with one value compare the
    // foreign key with a scalar subquery; the rows must be those of `IN (...)`, on every page.
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {bob}, 'b1', '2020-01-03 00:00:00'),
            (2, {alice}, 'a1', '2020-01-09 00:00:00'), (3, {bob}, 'b2', '2020-01-01 00:00:00'),
            (4, {bob}, 'b3', '2020-01-05 00:00:00'), (5, {alice}, 'a2', '2020-01-02 00:00:00'),
            (6, {bob}, 'b4', '2020-01-04 00:00:00');"
    ));
    let b = bob.to_string();
    let newest_first = ("ordering", "-pub_date");
    for (pairs, expected) in [
        (
            vec![("user__username", "bob"), newest_first],
            vec![4, 6, 1, 3],
        ),
        (
            vec![("user__username__in", "bob"), newest_first],
            vec![4, 6, 1, 3],
        ),
        (
            vec![("user__id", b.as_str()), newest_first],
            vec![4, 6, 1, 3],
        ),
        (
            vec![
                ("user__username", "bob"),
                newest_first,
                ("limit", "2"),
                ("page", "2"),
            ],
            vec![1, 3],
        ),
        (
            vec![
                ("user__username", "bob"),
                ("user__username", "alice"),
                newest_first,
            ],
            vec![2, 4, 6, 1, 5, 3],
        ),
        (
            vec![("user__username", "bob"), ("content__ne", "b2")],
            vec![1, 4, 6],
        ),
        (vec![("user__username", "nobody")], vec![]),
    ] {
        assert_eq!(
            app.get(&url("/api/message/", &pairs)).await.ids(),
            expected,
            "{pairs:?}"
        );
    }

    // Two hops: only the last one selects a single row; the outer one still selects many.
    let app = TestApp::with_seed(CHAINS).await;
    app.sql(
        "INSERT INTO bmodel (id, a_id, b_field) VALUES (3, 2, 'b3');
        INSERT INTO cmodel (id, b_id, c_field) VALUES (3, 3, 'c3');",
    );
    for pairs in [[("b__a__id", "2")], [("b__a__a_field", "a2")]] {
        assert_eq!(
            app.get(&url("/api/cmodel/", &pairs)).await.ids(),
            [2, 3],
            "{pairs:?}"
        );
    }
}

#[actix_web::test]
async fn joins_of_one_two_and_three_hops() {
    let app = TestApp::with_seed(CHAINS).await;
    let cases: &[PathCase<'_>] = &[
        ("/api/bmodel/", &[("a__a_field", "a2")], &[2]),
        ("/api/cmodel/", &[("b__b_field", "b1")], &[1]),
        ("/api/cmodel/", &[("b__a__a_field", "a1")], &[1]),
        ("/api/cmodel/", &[("b__a__a_field__in", "a1,a2")], &[1, 2]),
        ("/api/cmodel/", &[("b__a__id__gt", "1")], &[2]),
        ("/api/dmodel/", &[("c__b__a__a_field", "a2")], &[2]),
        (
            "/api/dmodel/",
            &[("c__b__a__a_field__ilike", "A%")],
            &[1, 2],
        ),
        ("/api/dmodel/", &[("c__b__b_field__like", "b1%")], &[1]),
        ("/api/dmodel/", &[("c__b__a", "1")], &[1]),
        ("/api/dmodel/", &[("c__b__a_id", "2")], &[2]),
        ("/api/dmodel/", &[("c", "1")], &[1]),
        ("/api/dmodel/", &[("c_id", "2")], &[2]),
        (
            "/api/dmodel/",
            &[("c__b__a__a_field", "a1"), ("d_field", "d2")],
            &[],
        ),
    ];
    for (path, pairs, expected) in cases {
        assert_eq!(
            &app.get(&url(path, pairs)).await.ids(),
            expected,
            "{path} {pairs:?}"
        );
    }
    for (path, key) in [
        ("/api/cmodel/", "b__nope"),
        ("/api/cmodel/", "b__a__nope__in"),
        ("/api/dmodel/", "c__b__a__a_field__bogus"),
        ("/api/cmodel/", "b__a__id"),
    ] {
        let value = if key == "b__a__id" { "x" } else { "1" };
        assert_param_error(&app.get(&url(path, &[(key, value)])).await, key);
    }
}

#[actix_web::test]
async fn nullable_foreign_key_filters() {
    let app = TestApp::with_seed(
        "INSERT INTO emodel VALUES (1, 'e1');
         INSERT INTO fmodel VALUES (1, 1, 'with'), (2, NULL, 'without');",
    )
    .await;
    assert_eq!(app.get("/api/fmodel/?e__is=null").await.ids(), [2]);
    assert_eq!(app.get("/api/fmodel/?e=1").await.ids(), [1]);
    assert_eq!(
        app.get("/api/fmodel/?e_id__ne=1").await.ids(),
        Vec::<i64>::new()
    );
}

#[actix_web::test]
async fn unknown_fields_and_operators_are_400() {
    let app = TestApp::new().await;
    for key in [
        "nope",
        "a_field__nope__eq",
        "id__bogus",
        "a_field__",
        "__a_field",
        "a_field__eq__eq",
        "a_field__eq__like",
        "a_field__a_field",
    ] {
        assert_param_error(&app.get(&url("/api/amodel/", &[(key, "1")])).await, key);
    }
}

#[actix_web::test]
async fn values_that_do_not_parse_are_400() {
    let app = samples().await;
    for (key, value) in [
        ("id", "abc"),
        ("id__in", "1,x"),
        ("id__gt", "1.5"),
        ("qty__lt", "ten"),
        ("qty", "2147483648"),
        ("big", "1e3"),
        ("big", "9223372036854775808"),
        ("ratio__gt", "half"),
        ("ratio", "NaN"),
        ("ratio", "inf"),
    ] {
        assert_param_error(&app.get(&url("/api/sample/", &[(key, value)])).await, key);
    }
}

#[actix_web::test]
async fn filter_exclude_refuses_paths_and_below() {
    let app = TestApp::new().await;
    app.user("alice", "pw");
    for (path, key) in [
        ("/api/message/", "user__password"),
        ("/api/message/", "user__email"),
        ("/api/message/", "user__password__like"),
        ("/api/user/", "password"),
        ("/api/user/", "email__ilike"),
        ("/api/relationship/", "to_user__password"),
        ("/api/relationship/", "from_user__email__in"),
    ] {
        assert_param_error(&app.get(&url(path, &[(key, "%")])).await, key);
    }
    assert_eq!(
        app.get("/api/user/?username=alice").await.objects().len(),
        1
    );
}

#[actix_web::test]
async fn filter_fields_restricts_filters() {
    let app = TestApp::with_seed(
        "INSERT INTO amodel VALUES (1, 'a1');
         INSERT INTO hmodel VALUES (1, 1, 'h1', NULL, '2021-03-04'), (2, NULL, 'h2', NULL, NULL);",
    )
    .await;
    for key in ["a", "a_id", "a__a_field", "a__in", "a__is"] {
        assert_param_error(&app.get(&url("/api/hmodel/", &[(key, "1")])).await, key);
    }
    check_path(
        &app,
        "/api/hmodel/",
        &[
            (&[("h_field", "h1")], &[1]),
            (&[("h_day", "2021-03-04"), ("id", "1")], &[1]),
            (&[("h_day__is", "null")], &[2]),
        ],
    )
    .await;
}

async fn check_path(app: &TestApp, path: &str, cases: &[Case<'_>]) {
    for (pairs, expected) in cases {
        assert_eq!(
            &app.get(&url(path, pairs)).await.ids(),
            expected,
            "{path} {pairs:?}"
        );
    }
}

#[actix_web::test]
async fn filter_fields_allows_listed_join_paths_and_their_prefixes() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'a', '2020-01-01 00:00:00'),
            (2, {bob}, 'b', '2020-01-01 00:00:00');"
    ));
    // msgff: filter_fields = content, user__username.
    check_path(
        &app,
        "/api/msgff/",
        &[
            (&[("content", "b")], &[2]),
            (&[("user__username", "alice")], &[1]),
            (&[("user__username__like", "b%")], &[2]),
        ],
    )
    .await;
    for key in [
        "user",
        "user_id",
        "user__email",
        "user__id",
        "id",
        "pub_date",
    ] {
        assert_param_error(&app.get(&url("/api/msgff/", &[(key, "1")])).await, key);
    }
    // msgfk: filter_fields = user: the foreign key allows its joins.
    let b = bob.to_string();
    check_path(
        &app,
        "/api/msgfk/",
        &[
            (&[("user", b.as_str())], &[2]),
            (&[("user_id", b.as_str())], &[2]),
            (&[("user__username", "alice")], &[1]),
            (&[("user__username__like", "b%")], &[2]),
        ],
    )
    .await;
    assert_param_error(&app.get("/api/msgfk/?content=a").await, "content");
    // The user resource of the API hides `email`: no join reaches it, listed or not.
    let key = "user__email__like";
    assert_param_error(&app.get(&url("/api/msgfk/", &[(key, "bob@%")])).await, key);
}

#[actix_web::test]
async fn filter_recursive_false_refuses_joins_only() {
    let app = TestApp::with_seed(
        "INSERT INTO emodel VALUES (1, 'e1');
         INSERT INTO fmodel VALUES (1, 1, 'f1'), (2, NULL, 'f2');",
    )
    .await;
    for key in ["e__e_field", "e__id", "e__e_field__like"] {
        assert_param_error(&app.get(&url("/api/fmodel/", &[(key, "e1")])).await, key);
    }
    assert_eq!(app.get("/api/fmodel/?e=1").await.ids(), [1]);
    assert_eq!(app.get("/api/fmodel/?e_id__in=1").await.ids(), [1]);
    assert_eq!(app.get("/api/fmodel/?f_field=f2").await.ids(), [2]);
}

#[actix_web::test]
async fn model_level_exclude_is_never_filterable() {
    let app = TestApp::with_seed(
        "INSERT INTO vault VALUES (1, 'v1', '1234'), (2, 'v2', '0000');
         INSERT INTO deposit VALUES (1, 1, 10), (2, 2, 20);",
    )
    .await;
    for (path, key) in [
        ("/api/vault/", "pin"),
        ("/api/vault/", "pin__like"),
        ("/api/deposit/", "vault__pin"),
        ("/api/deposit/", "vault__pin__in"),
    ] {
        assert_param_error(&app.get(&url(path, &[(key, "1234")])).await, key);
    }
    assert_eq!(app.get("/api/deposit/?vault__label=v2").await.ids(), [2]);
    assert_eq!(app.get("/api/deposit/?vault=1").await.ids(), [1]);
}

#[actix_web::test]
async fn nested_exclude_and_filter_exclude_apply_through_joins() {
    let app = TestApp::with_seed(CHAINS).await;
    // dchain: c is included with filter_exclude c_field; its b is included excluding b_field.
    for key in [
        "c__c_field",
        "c__b__b_field",
        "c__b__b_field__like",
        "c__c_field__in",
    ] {
        assert_param_error(&app.get(&url("/api/dchain/", &[(key, "x")])).await, key);
    }
    check_path(
        &app,
        "/api/dchain/",
        &[
            (&[("c__b__a__a_field", "a2")], &[2]),
            (&[("c__b", "1")], &[1]),
            (&[("d_field", "d1")], &[1]),
        ],
    )
    .await;
    // The same joins are allowed where nothing excludes them.
    check_path(
        &app,
        "/api/dmodel/",
        &[
            (&[("c__c_field", "c2")], &[2]),
            (&[("c__b__b_field", "b1")], &[1]),
        ],
    )
    .await;
}

#[actix_web::test]
async fn hostile_values_are_plain_values() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'sentinel');").await;
    for value in [
        "' OR '1'='1",
        "'; DROP TABLE amodel; --",
        "1) OR (1=1",
        "%' OR 1=1 --",
    ] {
        assert_eq!(
            app.get(&url("/api/amodel/", &[("a_field", value)]))
                .await
                .ids(),
            Vec::<i64>::new()
        );
    }
    assert_param_error(
        &app.get(&url("/api/amodel/", &[("id", "1 OR 1=1")])).await,
        "id",
    );
    assert_eq!(app.get("/api/amodel/").await.ids(), [1]);
}

#[actix_web::test]
async fn like_on_a_large_text_does_not_backtrack() {
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel VALUES (1, '{}');",
        "a".repeat(1024 * 1024)
    ))
    .await;
    assert_eq!(
        app.query_i64("SELECT length(a_field) FROM amodel"),
        1024 * 1024
    );
    let pattern = format!("{}b", "%a".repeat(40));
    let started = std::time::Instant::now();
    let resp = app
        .get(&url("/api/amodel/", &[("a_field__like", &pattern)]))
        .await;
    assert_eq!(resp.ids(), Vec::<i64>::new());
    let resp = app
        .get(&url("/api/amodel/", &[("a_field__ilike", &pattern)]))
        .await;
    assert_eq!(resp.ids(), Vec::<i64>::new());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[actix_web::test]
async fn a_backslash_in_a_pattern_is_a_plain_character_on_every_engine() {
    let app =
        TestApp::with_seed(r"INSERT INTO amodel VALUES (1, 'a\b'), (2, 'ab'), (3, 'a\\b');").await;
    let list = |pairs: &'static [(&'static str, &'static str)]| {
        let app = &app;
        async move { app.get(&url("/api/amodel/", pairs)).await.ids() }
    };
    assert_eq!(list(&[("a_field__like", r"a\b")]).await, vec![1]);
    assert_eq!(list(&[("a_field__ilike", r"A\B")]).await, vec![1]);
    assert_eq!(list(&[("a_field__like", r"a\\b")]).await, vec![3]);
    assert_eq!(list(&[("a_field__like", r"a\%")]).await, vec![1, 3]);
}
