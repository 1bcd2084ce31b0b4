//! Snapshot of the derive's expansion for one representative model. Run with
//! `UPDATE_SNAPSHOTS=1` to rewrite `src/snapshots/expansion.rs.txt` after a deliberate change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::derive_rest_model_inner;

/// Pretty-printed expansion of `input`.
fn expand(input: syn::DeriveInput) -> String {
    let tokens = derive_rest_model_inner(input);
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    prettyplease::unparse(&file)
}

/// Compares `actual` with the checked-in snapshot `name`, or rewrites it with `UPDATE_SNAPSHOTS=1`.
fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e}; run with UPDATE_SNAPSHOTS=1",
                path.display()
            )
        })
        .replace("\r\n", "\n");
    assert!(
        expected == actual,
        "the expansion differs from {}; review the difference and run with UPDATE_SNAPSHOTS=1 to \
         accept it\n--- actual ---\n{actual}",
        path.display()
    );
}

#[test]
fn expansion() {
    let actual = expand(syn::parse_quote! {
        /// A posted message.
        #[derive(Debug, RestModel)]
        #[diesel(table_name = message)]
        #[rest(exclude = "secret")]
        pub struct Message {
            pub id: i32,
            #[rest(fk = User)]
            pub user_id: i32,
            #[rest(fk = Message)]
            pub reply_to_id: Option<i32>,
            pub content: String,
            #[rest(default = plover::value::now())]
            pub pub_date: chrono::NaiveDateTime,
            pub secret: String,
        }
    });
    assert_snapshot("expansion.rs.txt", &actual);
}

/// Every attribute the derive accepts (attr.rs's `STRUCT_KEYS` and `FIELD_KEYS`, both forms of
/// `default`, `table_name`, a user model's four parts) and a field of a `Choice` type.
#[test]
fn expansion_of_every_attribute() {
    let actual = expand(syn::parse_quote! {
        /// A member of the club.
        ///
        /// Only the first paragraph describes the resource.
        #[derive(Debug, RestModel)]
        #[diesel(table_name = member)]
        #[rest(name = "members", display = "{login} ({pk})", rules, table)]
        #[rest(exclude = "secret", index = "handle, -score", index = "team")]
        pub struct Member {
            #[rest(primary_key)]
            pub pk: i64,
            /// The name the member signs in with.
            #[rest(username, name = "handle", min_len = 3, max_len = 30, not_blank)]
            pub login: String,
            #[rest(password)]
            pub hash: String,
            #[rest(active, default = true)]
            pub enabled: bool,
            #[rest(admin, default)]
            pub staff: bool,
            #[rest(fk = Team, index)]
            pub team_id: Option<i32>,
            #[rest(read_only, min = 0, max = 100, default = 0)]
            pub score: i32,
            #[rest(min = -1.5, max = 9.5)]
            pub ratio: Option<f64>,
            #[rest(long, choices = ["short", "long"], default = "short".to_owned())]
            pub bio: String,
            #[rest(private, unique)]
            pub code: Option<String>,
            #[rest(write_only)]
            pub token: Option<String>,
            #[rest(exclude, default = String::new())]
            pub legacy: String,
            pub secret: String,
            pub mood: Mood,
            pub born: Option<chrono::NaiveDate>,
            #[rest(default = plover::value::now())]
            pub joined: chrono::NaiveDateTime,
        }
    });
    assert_snapshot("every_attribute.rs.txt", &actual);
}

/// `#[derive(Choice)]` with its one attribute, `rename`.
#[test]
fn choice_expansion() {
    let input: syn::DeriveInput = syn::parse_quote! {
        pub enum Mood {
            Calm,
            OnHold,
            #[rest(rename = "on-edge")]
            Edgy,
        }
    };
    let file: syn::File =
        syn::parse2(crate::choice::derive(&input)).expect("the expansion parses as a file");
    assert_snapshot("choice.rs.txt", &prettyplease::unparse(&file));
}
