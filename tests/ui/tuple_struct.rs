use plover::RestModel;

diesel::table! {
    point (id) { id -> Integer, x -> Double, }
}

#[derive(RestModel)]
#[diesel(table_name = point)]
pub struct Point(pub i32, pub f64);

fn main() {}
