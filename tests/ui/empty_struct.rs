use plover::RestModel;

diesel::table! {
    post (id) { id -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = post)]
pub struct Post {}

fn main() {}
