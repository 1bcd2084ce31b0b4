use plover::RestModel;

diesel::table! {
    post (id) { id -> Integer, title -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = posts)]
pub struct Post {
    pub id: i32,
    pub title: String,
}

fn main() {}
