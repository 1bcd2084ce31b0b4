use plover::RestModel;

diesel::table! {
    tag (code) { id -> Integer, code -> Integer, other -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = tag)]
pub struct Tag {
    pub id: i32,
    #[rest(primary_key)]
    pub code: i32,
    #[rest(primary_key)]
    pub other: i32,
}

fn main() {}
