use plover::RestModel;

diesel::table! {
    book (id) { id -> Integer, title -> Text, year -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = book)]
#[rest(index = "year, titel")]
pub struct Book {
    pub id: i32,
    pub title: String,
    pub year: i32,
}

fn main() {}
