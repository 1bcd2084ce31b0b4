use plover::RestModel;

#[derive(Debug, RestModel)]
#[diesel(table_name = item)]
#[rest(table)]
pub struct Item {
    pub id: i32,
    #[rest(min = 1)]
    pub name: String,
    #[rest(long, search_index, min_len = 2)]
    pub count: i32,
    #[rest(max = 2.5)]
    pub whole: i64,
    #[rest(min = 5, max = 1)]
    pub upside_down: i32,
    #[rest(choices = ["a", "b"])]
    pub flag: bool,
    #[rest(choices = ["a", "a"])]
    pub twice: String,
    #[rest(private, write_only)]
    pub pin: String,
}

fn main() {}
