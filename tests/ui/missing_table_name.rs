use plover::RestModel;

diesel::table! {
    post (id) { id -> Integer, title -> Text, }
}

#[derive(RestModel)]
pub struct Post {
    pub id: i32,
    pub title: String,
}

fn main() {}
