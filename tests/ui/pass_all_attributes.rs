//! Every attribute the derive accepts, on every supported field type.

use plover::RestModel;

diesel::table! {
    author (pk) {
        pk -> BigInt,
        handle -> Text,
        secret -> Text,
        score -> Double,
        ratio -> Float,
        active -> Bool,
        born -> Nullable<Date>,
        joined -> Timestamp,
    }
}

diesel::table! {
    book (id) {
        id -> Integer,
        writer_id -> BigInt,
        editor_id -> Nullable<BigInt>,
        title -> Text,
        pages -> Integer,
        notes -> Nullable<Text>,
        internal -> Text,
    }
}

diesel::allow_tables_to_appear_in_same_query!(author, book);

#[derive(Debug, RestModel)]
#[diesel(table_name = author)]
#[rest(name = "writer", exclude = "secret, ratio", display = "{handle} ({pk})")]
#[rest(verbose_name = "Writer", verbose_name_plural = "People who write")]
pub struct Author {
    #[rest(primary_key)]
    pub pk: i64,
    pub handle: String,
    #[rest(default = String::new())]
    pub secret: String,
    #[rest(default = 0.0)]
    pub score: f64,
    #[rest(default)]
    pub ratio: f32,
    #[rest(default = true)]
    pub active: bool,
    #[rest(unique)]
    pub born: Option<chrono::NaiveDate>,
    #[rest(default = plover::value::now(), verbose_name = "Date joined")]
    pub joined: chrono::NaiveDateTime,
}

#[derive(Debug, RestModel)]
#[diesel(table_name = book)]
#[rest(index = "headline, -pages", index = "writer, edited_by")]
pub struct Book {
    pub id: i32,
    #[rest(fk = Author)]
    pub writer_id: i64,
    #[rest(fk = Author, name = "edited_by")]
    pub editor_id: Option<i64>,
    #[rest(name = "headline")]
    pub title: String,
    #[rest(default = 0, index)]
    pub pages: i32,
    pub notes: Option<String>,
    #[rest(exclude, default = String::from("-"))]
    pub internal: String,
}

fn main() {
    let author = Author::meta();
    assert_eq!(author.name(), "writer");
    assert_eq!(author.table(), "author");
    assert_eq!(author.verbose_name(), "Writer");
    assert_eq!(author.verbose_name_plural(), "People who write");
    let verbose = |meta: &plover::model::ModelMeta, key: &str| {
        meta.field(key).map(|(_, f)| f.verbose_name())
    };
    assert_eq!(verbose(author, "joined"), Some("Date joined"));
    assert_eq!(verbose(author, "handle"), Some("Handle"));
    assert_eq!(author.pk_field().column(), "pk");
    assert!(author.field("secret").is_some_and(|(_, f)| f.is_write_only()));
    assert!(author
        .field("ratio")
        .is_some_and(|(_, f)| f.is_write_only() && !f.is_required()));
    assert!(author.field("handle").is_some_and(|(_, f)| f.is_required()));
    assert!(author.field("born").is_some_and(|(_, f)| f.is_unique()));
    assert!(author.field("pk").is_some_and(|(_, f)| f.is_unique()));
    assert!(author.field("handle").is_some_and(|(_, f)| !f.is_unique()));
    let ann = Author {
        pk: 7,
        handle: "ann".into(),
        secret: String::new(),
        score: 0.0,
        ratio: 0.0,
        active: true,
        born: None,
        joined: plover::value::now(),
    };
    assert_eq!(plover::RestModel::display(&ann), "ann (7)");

    let book = Book::meta();
    assert_eq!(book.name(), "book");
    assert_eq!((book.verbose_name(), book.verbose_name_plural()), ("Book", "Books"));
    assert_eq!(verbose(book, "edited_by"), Some("Edited by"));
    assert_eq!(verbose(book, "writer"), Some("Writer"));
    assert!(book.field("writer").is_some_and(|(_, f)| f.target().is_some()));
    assert!(book
        .field("edited_by")
        .is_some_and(|(_, f)| f.is_nullable() && f.target().is_some()));
    assert!(book.field("headline").is_some());
    assert!(book.field("internal").is_some_and(|(_, f)| f.is_write_only()));
    let indexes: Vec<Vec<(&str, bool)>> = book
        .indexes()
        .iter()
        .map(|i| i.iter().map(|c| (c.column, c.descending)).collect())
        .collect();
    assert_eq!(
        indexes,
        [
            vec![("pages", false)],
            vec![("title", false), ("pages", true)],
            vec![("writer_id", false), ("editor_id", false)],
        ]
    );

    let mut changes = BookChanges::default();
    <Book as RestModel>::fill_defaults(&mut changes);
    assert_eq!(changes.pages, Some(0));
    assert_eq!(changes.internal.as_deref(), Some("-"));
    constraints_and_choices_are_in_the_metadata();
}

/// A fixed set of values.
#[derive(Debug, Clone, Copy, PartialEq, plover::Choice)]
pub enum Wood {
    Oak,
    #[rest(rename = "pine-wood")]
    Pine,
}

/// A model whose diesel `table!` comes from the derive, with constraints and choices.
#[derive(Debug, RestModel)]
#[diesel(table_name = shelf)]
#[rest(table)]
pub struct Shelf {
    pub id: i64,
    #[rest(not_blank, min_len = 1, max_len = 40)]
    pub label: String,
    #[rest(min = 0, max = 9.5)]
    pub width: Option<f32>,
    #[rest(min = -3, max = 300)]
    pub boards: i64,
    pub opened: Option<chrono::NaiveDate>,
    #[rest(default = Wood::Oak)]
    pub wood: Wood,
    pub finish: Option<Wood>,
    #[rest(long, search_index, choices = ["matte", "gloss"], default = "matte".to_owned())]
    pub coat: String,
}

#[allow(dead_code)]
fn the_generated_table_is_diesels() {
    use diesel::prelude::*;
    let _query = shelf::table.filter(shelf::label.eq("a")).select(shelf::width);
    let _ = Shelf::meta();
}

#[allow(dead_code)]
fn constraints_and_choices_are_in_the_metadata() {
    use plover::model::{Bound, Constraints};
    let shelf = Shelf::meta();
    let field = |name: &str| shelf.field(name).map(|(_, f)| f).expect(name);
    assert_eq!(
        *field("label").constraints(),
        Constraints {
            min_len: Some(1),
            max_len: Some(40),
            not_blank: true,
            ..Constraints::NONE
        }
    );
    assert_eq!(field("width").constraints().max, Some(Bound::Float(9.5)));
    assert_eq!(field("width").constraints().min, Some(Bound::Float(0.0)));
    assert_eq!(field("boards").constraints().min, Some(Bound::Int(-3)));
    assert_eq!(field("wood").constraints().choices, ["oak", "pine-wood"]);
    assert_eq!(field("finish").constraints().choices, ["oak", "pine-wood"]);
    assert!(field("coat").is_long());
    assert!(field("coat").has_search_index());
    assert!(!field("label").has_search_index());
    assert_eq!(field("coat").constraints().choices, ["matte", "gloss"]);
}

/// A user model of its own: the derive implements `UserModel` from the marked fields.
#[derive(Debug, RestModel)]
#[diesel(table_name = reader)]
#[rest(table)]
pub struct Reader {
    pub id: i32,
    #[rest(username, max_len = 30)]
    pub login: String,
    #[rest(password)]
    pub hash: String,
    #[rest(active, default = true)]
    pub enabled: bool,
    #[rest(admin, default = false)]
    pub staff: bool,
}

#[allow(dead_code)]
fn the_marked_fields_make_a_user_model() {
    use plover::accounts::UserModel;
    fn user_model<U: UserModel>() -> [&'static str; 2] {
        [U::USERNAME_FIELD, U::PASSWORD_FIELD]
    }
    assert_eq!(user_model::<Reader>(), ["login", "hash"]);
    assert_eq!(<Reader as UserModel>::ADMIN_FIELD, Some("staff"));
    let reader = Reader { id: 1, login: "ann".into(), hash: String::new(), enabled: false, staff: true };
    assert!(!reader.is_active() && reader.is_admin() && reader.username() == "ann");
    let hash = Reader::meta().field("hash").map(|(_, f)| f).expect("hash");
    assert!(hash.is_write_only() && !hash.is_required(), "write-only, no usable password by default");
    assert!(Reader::meta().field("login").map(|(_, f)| f.is_unique()) == Some(true));
}
