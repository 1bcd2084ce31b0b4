//! docs/contract.md#filter-logic: `or=(...)` and `not=(...)` groups, nested, under the filters'
//! rules and limits.

use plover_tests::*;

/// Six samples: quantities 1 to 6, a remark on the even ones, names `a,b` and `x|y` on two.
async fn six() -> TestApp {
    let rows: Vec<String> = (1..=6)
        .map(|n| {
            let name = match n {
                5 => "a,b".to_owned(),
                6 => "x|y".to_owned(),
                _ => format!("n{n}"),
            };
            let remark = if n % 2 == 0 { "'even'" } else { "NULL" };
            format!("({n}, '{name}', {n}, 0, 0.0, TRUE, '', {remark}, NULL, '2020-01-01 00:00:00')")
        })
        .collect();
    TestApp::with_seed(&format!(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES {};",
        rows.join(", ")
    ))
    .await
}

async fn ids(app: &TestApp, pairs: &[(&str, &str)]) -> Vec<i64> {
    let resp = app.get(&url("/api/sample/", pairs)).await;
    resp.expect(200);
    resp.ids()
}

#[actix_web::test]
async fn or_keeps_rows_matching_any_term() {
    let app = six().await;
    assert_eq!(ids(&app, &[("or", "(qty=1,qty__gte=5)")]).await, [1, 5, 6]);
    assert_eq!(
        ids(&app, &[("or", "(qty__in=1|3,name=n2)")]).await,
        [1, 2, 3]
    );
    // Plain filters and groups AND together, and so do repeated groups.
    let both = [("qty__lt", "5"), ("or", "(qty=1,qty=4,qty=6)")];
    assert_eq!(ids(&app, &both).await, [1, 4]);
    let two = [("or", "(qty=1,qty=2,qty=3)"), ("or", "(qty=3,qty=4)")];
    assert_eq!(ids(&app, &two).await, [3]);
}

#[actix_web::test]
async fn not_negates_the_and_of_its_terms_nulls_included() {
    let app = six().await;
    assert_eq!(ids(&app, &[("not", "(qty__lte=4)")]).await, [5, 6]);
    assert_eq!(
        ids(&app, &[("not", "(qty__gte=2,qty__lte=5)")]).await,
        [1, 6]
    );
    // A row without a remark is not one whose remark is `even`.
    assert_eq!(ids(&app, &[("not", "(remark=even)")]).await, [1, 3, 5]);
    assert_eq!(ids(&app, &[("not", "(remark__is=null)")]).await, [2, 4, 6]);
}

#[actix_web::test]
async fn groups_nest() {
    let app = six().await;
    let nested = "(qty=1,not=(qty__lte=5),or=(name=n2,name=n3))";
    assert_eq!(ids(&app, &[("or", nested)]).await, [1, 2, 3, 6]);
    let deepest = "(or=(not=(qty=1),qty=1))";
    assert_eq!(ids(&app, &[("not", deepest)]).await, Vec::<i64>::new());
}

#[actix_web::test]
async fn values_are_percent_encoded_inside_groups() {
    let app = six().await;
    // `%2C` is a comma of the value, `%7C` a bar of an `in` value.
    assert_eq!(ids(&app, &[("or", "(name=a%2Cb,qty=1)")]).await, [1, 5]);
    assert_eq!(ids(&app, &[("or", "(name__in=x%7Cy|n1)")]).await, [1, 6]);
    assert_eq!(ids(&app, &[("or", "(name=n%31)")]).await, [1]);
}

#[actix_web::test]
async fn malformed_or_too_deep_groups_are_400_naming_the_parameter() {
    let app = six().await;
    for (param, value) in [
        ("or", ""),
        ("or", "qty=1"),
        ("or", "()"),
        ("or", "(qty=1"),
        ("not", "(qty)"),
        ("not", "(qty=1,)"),
        ("or", "(or=(not=(or=(qty=1))))"),
        ("or", "(nosuch=1)"),
        ("or", "(qty=abc)"),
        ("not", "(qty__nope=1)"),
        ("or", "(ordering=qty)"),
        ("or", "(name__in=a|b,qty__in=1|x)"),
    ] {
        let resp = app.get(&url("/api/sample/", &[(param, value)])).await;
        assert_param_error(&resp, param);
    }
}

#[actix_web::test]
async fn every_term_counts_against_the_limits() {
    let app = six().await;
    let terms: Vec<String> = (0..70).map(|n| format!("qty={n}")).collect();
    let group = format!("({})", terms.join(","));
    assert_param_error(
        &app.get(&url("/api/sample/", &[("or", &group)])).await,
        "or",
    );
    let patterns: Vec<String> = (0..17).map(|n| format!("name__like=n{n}%")).collect();
    let group = format!("({})", patterns.join(","));
    assert_param_error(
        &app.get(&url("/api/sample/", &[("or", &group)])).await,
        "or",
    );
    let fine: Vec<String> = (0..60).map(|n| format!("qty={n}")).collect();
    let group = format!("({})", fine.join(","));
    assert_eq!(ids(&app, &[("or", &group)]).await, [1, 2, 3, 4, 5, 6]);
}

#[actix_web::test]
async fn group_terms_obey_the_joins_rules() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let carol = app.user_with("carol", "pw", false, false);
    app.sql(&format!(
        "INSERT INTO message VALUES (1, {alice}, 'a', '2020-01-01 00:00:00'),
            (2, {carol}, 'c', '2020-01-02 00:00:00');"
    ));
    let found = |group: &'static str| {
        let app = &app;
        async move { app.get(&url("/api/message/", &[("or", group)])).await.ids() }
    };
    // Carol is hidden by the user resource: no term finds her messages through her.
    assert_eq!(found("(user__username=carol,id=1)").await, [1]);
    assert_eq!(found("(not=(user__username=alice))").await, [2]);
    // A field the user resource refuses is refused inside groups too.
    let refused = app
        .get(&url("/api/message/", &[("or", "(user__email=x,id=1)")]))
        .await;
    assert_param_error(&refused, "or");
}
