use plover::RestModel;

diesel::table! {
    post (id) { id -> Integer, title -> Text, }
}

diesel::table! {
    comment (id) { id -> Integer, post_id -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = post)]
pub struct Post {
    pub id: i32,
    #[rest(defualt = String::new())]
    pub title: String,
}

// One mistake, one error: the foreign key to the model in error is not reported too.
#[derive(RestModel)]
#[diesel(table_name = comment)]
pub struct Comment {
    pub id: i32,
    #[rest(fk = Post)]
    pub post_id: i32,
}

fn main() {}
