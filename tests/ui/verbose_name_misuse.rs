use plover::RestModel;

#[derive(Debug, RestModel)]
#[diesel(table_name = member)]
#[rest(table, verbose_name = Member, verbose_name_plural = " ")]
pub struct Member {
    pub id: i32,
    #[rest(verbose_name = 3)]
    pub join_date: chrono::NaiveDate,
    #[rest(verbose_name_plural = "Names")]
    pub name: String,
}

fn main() {}
