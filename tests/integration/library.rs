//! The library catalogue of `examples/library` (issue: the model as the one source of truth):
//! its tables come from its models, one price rule guards both book resources and the admin,
//! `in_stock` is read-only and a member's password write-only, a member created in the admin
//! logs in, and a loan's rule reads and writes a book in the loan's own transaction, which a
//! failure rolls back; loans deleted through a `Query` restock their books by the same rule.

use actix_web::App;
use futures_util::future::join_all;
use library::{Book, Loan, Member, MemberChanges, MAX_LOANS};
use plover::prelude::*;
use plover::query::Op;
use plover::views::{get_object_or_404, Query};
use plover_tests::*;
use serde_json::json;

struct Library {
    db: Database,
    service: TestService,
    _store: Store,
}

const PW: &str = "librarian";

impl Library {
    /// The example over a fresh database, with the admin member `librarian`, the author 1 and
    /// the book 1 (in stock).
    async fn new() -> Library {
        let (db, store) = fresh_database("");
        db.run_blocking(library::create_tables).expect("tables");
        let auth = Auth::<Member>::new(db.clone()).cost(4);
        let hash = auth.make_password(PW).expect("a hash");
        db.run_blocking(|conn| {
            let librarian = MemberChanges {
                username: Some("librarian".into()),
                password: Some(hash),
                admin: Some(true),
            };
            Member::insert(conn, librarian)
        })
        .expect("the librarian");
        let routes = library::routes(&db, &auth);
        let service =
            TestService::new(App::new().wrap(auth.session_middleware()).configure(routes)).await;
        let library = Library {
            db,
            service,
            _store: store,
        };
        library
            .send("POST", "/api/author/", json!({"name": "Le Guin"}))
            .await
            .expect(201);
        library.add_book("isbn-1", 1200).await;
        library
    }

    async fn send(&self, method: &str, uri: &str, body: serde_json::Value) -> Resp {
        let method = actix_web::http::Method::from_bytes(method.as_bytes()).expect("a method");
        let req = json_request(method, uri, &body).insert_header(basic("librarian", PW));
        self.service.send(req).await
    }

    async fn add_book(&self, isbn: &str, price: i32) -> i64 {
        let body = json!({"author_id": 1, "isbn": isbn, "title": isbn, "price": price});
        self.send("POST", "/api/book/", body).await.json_with(201)["id"]
            .as_i64()
            .expect("an id")
    }

    fn book(&self, id: i64) -> Book {
        let book = self
            .db
            .run_blocking(move |c| get_object_or_404::<Book>(c, id));
        book.expect("the book")
    }

    fn count<M: RestModel>(&self) -> i64 {
        self.db
            .run_blocking(|c| Query::<M>::new().count(c))
            .expect("a count")
    }
}

#[actix_web::test]
async fn one_price_rule_guards_both_book_resources_and_the_admin() {
    let lib = Library::new().await;
    let negative = json!({"author_id": 1, "isbn": "isbn-2", "title": "t", "price": -1});
    assert_fields(&lib.send("POST", "/api/book/", negative).await, &["price"]);
    let reprice = json!({"price": -5});
    assert_fields(
        &lib.send("PUT", "/api/catalogue/1/", reprice).await,
        &["price"],
    );
    let admin = lib.service.browser();
    admin.login("librarian", PW).await.expect(302);
    let token = admin.csrf("/admin/book/add/").await;
    let form = admin
        .post_form(
            "/admin/book/add/",
            &[
                ("author", "1"),
                ("isbn", "isbn-3"),
                ("title", "Typed title kept"),
                ("price", "-3"),
                ("csrf_token", &token),
            ],
        )
        .await
        .text();
    assert!(form.contains("must not be negative"), "{form}");
    assert!(form.contains("Typed title kept"), "{form}");
    assert_eq!(lib.count::<Book>(), 1);
    assert_eq!(lib.book(1).price, 1200);
    // A price of 0 is fine everywhere.
    lib.send("PUT", "/api/catalogue/1/", json!({"price": 0}))
        .await
        .expect(200);
    assert_eq!(lib.book(1).price, 0);
}

#[actix_web::test]
async fn clients_write_only_what_a_resource_lets_them_and_never_read_a_password() {
    let lib = Library::new().await;
    let shown = lib.send("GET", "/api/catalogue/1/", json!(null)).await;
    let shown = shown.json_with(200);
    assert_eq!(shown["in_stock"], true);
    assert!(shown.get("price").is_none(), "{shown}");
    for body in [json!({"isbn": "changed"}), json!({"in_stock": false})] {
        let key = body.as_object().and_then(|o| o.keys().next().cloned());
        let resp = lib.send("PUT", "/api/catalogue/1/", body).await;
        assert_fields(&resp, &[key.as_deref().unwrap_or_default()]);
    }
    let resp = lib
        .send("PUT", "/api/book/1/", json!({"in_stock": false}))
        .await;
    assert_fields(&resp, &["in_stock"]);
    assert!(lib.book(1).in_stock && lib.book(1).isbn == "isbn-1");
    let admin = lib.service.browser();
    admin.login("librarian", PW).await.expect(302);
    let page = admin.get("/admin/member/1/").await.text();
    assert!(
        page.contains("name=\"new_password\"") && !page.contains("$2"),
        "{page}"
    );
}

#[actix_web::test]
async fn a_member_created_in_the_admin_logs_in() {
    let lib = Library::new().await;
    let admin = lib.service.browser();
    admin.login("librarian", PW).await.expect(302);
    let token = admin.csrf("/admin/member/add/").await;
    admin
        .post_form(
            "/admin/member/add/",
            &[
                ("username", "reader"),
                ("new_password", "reads a lot"),
                ("csrf_token", &token),
            ],
        )
        .await
        .expect(303);
    lib.service
        .browser()
        .login("reader", "reads a lot")
        .await
        .expect(302);
    lib.service
        .browser()
        .login("reader", "wrong")
        .await
        .expect(200);
}

#[actix_web::test]
async fn a_loan_takes_its_book_off_the_shelf_in_its_own_transaction() {
    let lib = Library::new().await;
    let loan = |book: i64| json!({"book_id": book, "member_id": 1});
    lib.send("POST", "/api/loan/", loan(1)).await.expect(201);
    assert!(!lib.book(1).in_stock, "the rule wrote the book");
    let again = lib.send("POST", "/api/loan/", loan(1)).await;
    let fields = assert_fields(&again, &["book_id"]);
    assert_eq!(fields["book_id"], "this book is out");
    // Up to MAX_LOANS books; the next loan fails after its rule took the book off the shelf:
    // the whole write is rolled back, and the book is still in stock.
    for n in 2..=MAX_LOANS {
        let book = lib.add_book(&format!("isbn-{n}"), 100).await;
        lib.send("POST", "/api/loan/", loan(book)).await.expect(201);
    }
    let spare = lib.add_book("isbn-spare", 100).await;
    let over = lib.send("POST", "/api/loan/", loan(spare)).await;
    assert_fields(&over, &["member_id"]);
    assert!(lib.book(spare).in_stock, "rolled back with the loan");
    assert_eq!(lib.count::<Loan>(), MAX_LOANS);
}

#[actix_web::test]
async fn the_catalogue_does_not_filter_or_order_on_the_price_it_hides() {
    let lib = Library::new().await;
    for query in [
        "price__lt=1000",
        "price=1200",
        "price__gte=0",
        "ordering=price",
        "ordering=-price",
    ] {
        let resp = lib
            .send("GET", &format!("/api/catalogue/?{query}"), json!(null))
            .await;
        assert_eq!(resp.code(), 400, "{query}: {}", resp.text());
    }
    // The book resource, which shows the price, filters on it.
    let resp = lib
        .send("GET", "/api/book/?price__lt=1000", json!(null))
        .await;
    assert_eq!(resp.json_with(200)["objects"], json!([]));
}

/// A new member `name`; returns its id.
async fn add_member(lib: &Library, name: &str) -> i64 {
    let member = MemberChanges {
        username: Some(name.into()),
        password: Some(String::new()),
        admin: Some(false),
    };
    lib.db
        .run_blocking(move |conn| Member::insert(conn, member))
        .expect("a member")
}

#[actix_web::test]
async fn twelve_concurrent_loans_never_pass_the_cap() {
    let lib = Library::new().await;
    // Many rounds: without the member's lock, PostgreSQL let 4 of 12 through in 3 of 4 rounds.
    for round in 0..10 {
        let member = add_member(&lib, &format!("reader{round}")).await;
        let mut books = Vec::new();
        for n in 0..12 {
            books.push(lib.add_book(&format!("r{round}-{n}"), 100).await);
        }
        let loans = books.iter().map(|&book| {
            lib.send(
                "POST",
                "/api/loan/",
                json!({"book_id": book, "member_id": member}),
            )
        });
        let codes: Vec<u16> = join_all(loans).await.iter().map(Resp::code).collect();
        let lent = codes.iter().filter(|c| **c == 201).count();
        assert_eq!(lent as i64, MAX_LOANS, "round {round}: {codes:?}");
        assert!(codes.iter().all(|c| *c == 201 || *c == 400), "{codes:?}");
        let out = books.iter().filter(|&&b| !lib.book(b).in_stock).count();
        assert_eq!(
            out as i64, MAX_LOANS,
            "round {round}: only lent books are out"
        );
    }
}

#[actix_web::test]
async fn concurrent_loans_of_one_book_lend_it_once() {
    let lib = Library::new().await;
    for round in 0..5 {
        let book = lib.add_book(&format!("one-{round}"), 100).await;
        let mut members = Vec::new();
        for n in 0..12 {
            members.push(add_member(&lib, &format!("m{round}-{n}")).await);
        }
        let loans = members.iter().map(|&member| {
            lib.send(
                "POST",
                "/api/loan/",
                json!({"book_id": book, "member_id": member}),
            )
        });
        let codes: Vec<u16> = join_all(loans).await.iter().map(Resp::code).collect();
        assert_eq!(
            codes.iter().filter(|c| **c == 201).count(),
            1,
            "round {round}: {codes:?}"
        );
    }
}

#[actix_web::test]
async fn a_loan_moved_onto_a_lent_book_is_refused_and_a_returned_loan_restocks_its_book() {
    let lib = Library::new().await;
    let other = add_member(&lib, "other").await;
    let (first, second, free) = (
        1,
        lib.add_book("isbn-2", 100).await,
        lib.add_book("isbn-3", 100).await,
    );
    let loan = lib
        .send(
            "POST",
            "/api/loan/",
            json!({"book_id": first, "member_id": 1}),
        )
        .await
        .json_with(201)["id"]
        .as_i64()
        .expect("an id");
    lib.send(
        "POST",
        "/api/loan/",
        json!({"book_id": second, "member_id": other}),
    )
    .await
    .expect(201);
    // Onto a book that is out: refused, nothing changes.
    let moved = lib
        .send(
            "PUT",
            &format!("/api/loan/{loan}/"),
            json!({"book_id": second}),
        )
        .await;
    assert_fields(&moved, &["book_id"]);
    assert!(!lib.book(first).in_stock && !lib.book(second).in_stock);
    // Onto a book on the shelf: that one goes out, the first comes back.
    lib.send(
        "PUT",
        &format!("/api/loan/{loan}/"),
        json!({"book_id": free}),
    )
    .await
    .expect(200);
    assert!(lib.book(first).in_stock);
    assert!(!lib.book(free).in_stock);
    // Returned: the book is back.
    lib.send("DELETE", &format!("/api/loan/{loan}/"), json!(null))
        .await
        .expect(200);
    assert!(lib.book(free).in_stock);
    // Deleting the other member in the admin deletes its loan too, which restocks its book.
    let admin = lib.service.browser();
    admin.login("librarian", PW).await.expect(302);
    let page = format!("/admin/member/{other}/delete/");
    let token = admin.csrf(&page).await;
    admin
        .post_form(&page, &[("csrf_token", &token)])
        .await
        .expect(303);
    assert_eq!(lib.count::<Loan>(), 0);
    assert!(
        lib.book(second).in_stock,
        "the recursive delete ran the loan's rule"
    );
}

#[actix_web::test]
async fn loans_deleted_by_a_query_restock_their_books_through_the_rule() {
    let lib = Library::new().await;
    let other = add_member(&lib, "other").await;
    let books = [
        1,
        lib.add_book("isbn-2", 100).await,
        lib.add_book("isbn-3", 100).await,
    ];
    for (book, member) in [(books[0], 1), (books[1], other), (books[2], other)] {
        lib.send(
            "POST",
            "/api/loan/",
            json!({"book_id": book, "member_id": member}),
        )
        .await
        .expect(201);
    }
    assert!(books.iter().all(|&b| !lib.book(b).in_stock));
    let others = Query::<Loan>::new().filter(Loan::FIELDS.member_id, Op::Eq, other);
    let (deleted, left) = lib
        .db
        .run_blocking(move |c| Ok((others.delete(c)?, others.exists(c)?)))
        .expect("a delete");
    assert_eq!((deleted, left), (2, false));
    assert_eq!(lib.count::<Loan>(), 1);
    // `before_delete` ran for each deleted loan: their books are back, the other is still out.
    assert!(!lib.book(books[0]).in_stock);
    assert!(lib.book(books[1]).in_stock && lib.book(books[2]).in_stock);
}

#[actix_web::test]
async fn a_bearer_token_reads_its_members_loans_and_a_wrong_one_is_refused() {
    let lib = Library::new().await;
    let (ann, bob) = (add_member(&lib, "ann").await, add_member(&lib, "bob").await);
    let second = lib.add_book("isbn-2", 900).await;
    for (book, member) in [(1, ann), (second, bob)] {
        let body = json!({"book_id": book, "member_id": member});
        lib.send("POST", "/api/loan/", body).await.expect(201);
    }
    let auth = Auth::<Member>::new(lib.db.clone());
    let token = lib
        .db
        .run_blocking(|conn| auth.issue_token(conn, ann, "ann's phone"))
        .expect("a token");
    let get = |authorization: Option<String>| {
        let mut req = actix_web::test::TestRequest::get().uri("/api/my-loans/");
        if let Some(value) = authorization {
            req = req.insert_header(("Authorization", value));
        }
        lib.service.send(req)
    };
    let mine = get(Some(format!("Bearer {token}"))).await.json_with(200);
    let loans = mine["objects"].as_array().expect("objects");
    assert_eq!(loans.len(), 1, "{mine}");
    assert_eq!(loans[0]["member_id"], ann);
    for wrong in [
        Some(format!("Bearer {token}x")),
        Some("Bearer not-a-token".to_owned()),
        Some(basic("librarian", PW).1),
        None,
    ] {
        let resp = get(wrong.clone()).await;
        assert_eq!(resp.code(), 401, "{wrong:?}: {}", resp.text());
        assert!(
            resp.header("www-authenticate")
                .is_some_and(|h| h.starts_with("Bearer")),
            "{wrong:?}"
        );
    }
    // A revoked token authenticates no one.
    let revoked = token.clone();
    lib.db
        .run_blocking(move |conn| auth.revoke_token(conn, &revoked))
        .expect("revoked");
    assert_eq!(get(Some(format!("Bearer {token}"))).await.code(), 401);
}

#[actix_web::test]
async fn pages_of_the_app_origin_alone_may_call_the_api_from_a_browser() {
    use actix_web::test::TestRequest;
    let lib = Library::new().await;
    let preflight = |origin: &str| {
        TestRequest::default()
            .method(actix_web::http::Method::OPTIONS)
            .uri("/api/book/")
            .insert_header(("Origin", origin.to_owned()))
            .insert_header(("Access-Control-Request-Method", "POST"))
            .insert_header((
                "Access-Control-Request-Headers",
                "authorization, content-type",
            ))
    };
    let allowed = lib.service.send(preflight(library::APP_ORIGIN)).await;
    assert!(allowed.code() < 300, "{}", allowed.code());
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some(library::APP_ORIGIN)
    );
    let methods = allowed
        .header("access-control-allow-methods")
        .unwrap_or_default();
    assert!(methods.contains("POST"), "{methods}");
    let other = lib.service.send(preflight("https://evil.example")).await;
    assert!(other.header("access-control-allow-origin").is_none());
    assert!(other.header("access-control-allow-methods").is_none());
    // Simple requests: the header for the app's pages alone, and none without `Origin`.
    let get = |origin: Option<&str>| {
        let mut req = TestRequest::get().uri("/api/book/");
        if let Some(origin) = origin {
            req = req.insert_header(("Origin", origin.to_owned()));
        }
        lib.service.send(req)
    };
    let resp = get(Some(library::APP_ORIGIN)).await;
    resp.expect(200);
    assert_eq!(
        resp.header("access-control-allow-origin"),
        Some(library::APP_ORIGIN)
    );
    let resp = get(Some("https://evil.example")).await;
    assert!(resp.header("access-control-allow-origin").is_none());
    let resp = get(None).await;
    resp.expect(200);
    assert!(resp.header("access-control-allow-origin").is_none());
}
