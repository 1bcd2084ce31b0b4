use plover::RestModel;

diesel::table! {
    status (id) { id -> Integer, }
}

#[derive(RestModel)]
#[diesel(table_name = status)]
pub enum Status {
    Draft,
    Published,
}

fn main() {}
