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
