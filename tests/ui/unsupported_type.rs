use plover::RestModel;

diesel::table! {
    blob (id) { id -> Integer, data -> Binary, size -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = blob)]
pub struct Blob {
    pub id: i32,
    pub data: Vec<u8>,
    pub size: u32,
}

fn main() {}
