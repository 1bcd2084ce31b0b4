use plover::RestModel;

/// A type of the application's own, with no `#[derive(Choice)]`.
#[derive(Debug, Clone)]
pub struct Money(pub i64);

#[derive(RestModel)]
#[diesel(table_name = invoice)]
pub struct Invoice {
    pub id: i32,
    pub total: Money,
}

fn main() {}
