use plover::prelude::*;

diesel::table! {
    book (id) { id -> Integer, title -> Text, price -> Integer, }
}

#[derive(Debug, RestModel)]
#[diesel(table_name = book)]
pub struct Book {
    pub id: i32,
    pub title: String,
    pub price: i32,
}

fn main() {
    let f = Book::FIELDS;
    let _ = Resource::<Book>::new().fields([f.id, f.titel]);
}
