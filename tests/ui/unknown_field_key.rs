use plover::RestModel;

diesel::table! {
    post (id) { id -> Integer, title -> Text, }
}

#[derive(RestModel)]
#[diesel(table_name = post)]
pub struct Post {
    pub id: i32,
    #[rest(defualt = String::new())]
    pub title: String,
}

fn main() {}
