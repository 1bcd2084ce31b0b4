//! A library catalogue on Plover: authors, books, members and loans. Everything about the data
//! is declared once, in the models: the diesel `table!` (`#[rest(table)]`), the tables of the
//! database ([`create_tables`]), the rules every writer obeys (a book's price is never
//! negative; a loan needs the book in stock and marks it out, a returned loan puts it back, a
//! member holds at most three books, also under concurrent loans), and what clients may read and
//! write (a book's `in_stock` is read-only, a member's password write-only). [`routes`] serves the REST API under `/api/`, the login views under
//! `/accounts/` and the admin under `/admin/`.
//!
//! Members' apps reach the API from outside the admin's browser: `/api/my-loans/` lists the
//! loans of the member whose bearer token the request carries (`Authorization: Bearer ...`, a
//! token the librarian issues on the admin's dashboard, panel "Bearer tokens"), and pages of
//! [`APP_ORIGIN`] may call the API from a browser (CORS).

use actix_web::http::Method;
use plover::admin::{Admin, ModelAdmin, TokenPanel};
use plover::auth::{BearerAuthentication, Token};
use plover::db::Conn;
use plover::model::{lock_row, ModelMeta, Rules};
use plover::prelude::*;
use plover::query::Op;
use plover::rest::{Context, Hooks, Scope};
use plover::views::Query;

/// A writer.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = author)]
#[rest(table, display = "{name}")]
pub struct Author {
    /// Primary key.
    pub id: i32,
    /// Full name.
    pub name: String,
}

/// A book of the catalogue; its price is in cents and never negative.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = book)]
#[rest(table, display = "{title}", rules, index = "title")]
pub struct Book {
    /// Primary key.
    pub id: i32,
    /// The author.
    #[rest(fk = Author)]
    pub author_id: i32,
    /// The ISBN, one per book.
    #[rest(unique)]
    pub isbn: String,
    /// The title.
    pub title: String,
    /// Price in cents.
    pub price: i32,
    /// Whether the book is on the shelf: set by loans, never by a client.
    #[rest(read_only, default = true)]
    pub in_stock: bool,
}

impl Rules for Book {
    fn validate(_: &mut Conn<'_>, changes: &BookChanges, _: Option<&Book>) -> Result<(), Error> {
        match changes.price {
            Some(price) if price < 0 => Err(Error::field("price", "must not be negative")),
            _ => Ok(()),
        }
    }
}

/// A member: a user of the accounts component, who borrows books.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = member)]
#[rest(table, display = "{username}")]
pub struct Member {
    /// Primary key.
    pub id: i32,
    /// Login name (unique).
    #[rest(username)]
    pub username: String,
    /// bcrypt hash; set through the admin's `new_password`, never shown.
    #[rest(password)]
    pub password: String,
    /// Whether the member runs the library.
    #[rest(admin, default = false)]
    pub admin: bool,
}

/// A book lent to a member.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = loan)]
#[rest(table, rules)]
pub struct Loan {
    /// Primary key.
    pub id: i32,
    /// The book.
    #[rest(fk = Book)]
    pub book_id: i32,
    /// The borrower.
    #[rest(fk = Member)]
    pub member_id: i32,
    /// When it was lent.
    #[rest(default = plover::value::now())]
    pub lent: chrono::NaiveDateTime,
}

/// How many books one member may hold at once.
pub const MAX_LOANS: i64 = 3;

impl Rules for Loan {
    /// A new loan, or a loan moved to another book, takes that book off the shelf (it must be
    /// on it) and a moved loan puts its old book back; a member who would hold more than
    /// [`MAX_LOANS`] fails the whole write. The member and the book are locked first (in that
    /// order, everywhere), so that concurrent loans decide one after the other.
    fn before_save(
        conn: &mut Conn<'_>,
        changes: &mut LoanChanges,
        existing: Option<&Loan>,
    ) -> Result<(), Error> {
        let old = existing.map(|loan| (i64::from(loan.member_id), i64::from(loan.book_id)));
        let new_member = changes
            .member_id
            .map(i64::from)
            .filter(|m| old.is_none_or(|(member, _)| member != *m));
        let new_book = changes
            .book_id
            .map(i64::from)
            .filter(|b| old.is_none_or(|(_, book)| book != *b));
        if let Some(member) = new_member {
            lock_row::<Member>(conn, member)?;
        }
        if let Some(book) = new_book {
            lock_row::<Book>(conn, book)?;
            if !Book::load_pk(conn, book)?.is_some_and(|b| b.in_stock) {
                return Err(Error::field("book_id", "this book is out"));
            }
            shelve(conn, book, false)?;
            if let Some((_, old_book)) = old {
                lock_row::<Book>(conn, old_book)?;
                shelve(conn, old_book, true)?;
            }
        }
        if let Some(member) = new_member {
            let held = Query::<Loan>::new()
                .filter(Loan::FIELDS.member_id, Op::Eq, member)
                .count(conn)?;
            if held >= MAX_LOANS {
                return Err(Error::field(
                    "member_id",
                    "this member holds too many books",
                ));
            }
        }
        Ok(())
    }

    /// A returned (deleted) loan puts its book back on the shelf.
    fn before_delete(conn: &mut Conn<'_>, loan: &Loan) -> Result<(), Error> {
        let book = i64::from(loan.book_id);
        lock_row::<Book>(conn, book)?;
        shelve(conn, book, true)
    }
}

/// Puts the book `id` on the shelf (`true`) or takes it off.
fn shelve(conn: &mut Conn<'_>, id: i64, in_stock: bool) -> Result<(), Error> {
    let change = BookChanges {
        in_stock: Some(in_stock),
        ..BookChanges::default()
    };
    Book::update(conn, id, change).map(|_| ())
}

/// The four models, the admin's history and the bearer tokens, for [`plover::schema`].
pub fn models() -> [&'static ModelMeta; 6] {
    [
        Author::meta(),
        Book::meta(),
        Member::meta(),
        Loan::meta(),
        plover::history::HistoryEntry::meta(),
        Token::meta(),
    ]
}

/// The one origin whose pages may call the API from a browser (CORS): the members' app,
/// served on its own port while it is developed. Requests from other origins get no CORS
/// headers, so browsers refuse them.
pub const APP_ORIGIN: &str = "http://localhost:3000";

/// The scope of `/api/my-loans/`: the loans of the member the bearer token stands for.
struct OwnLoans;

impl Hooks<Loan> for OwnLoans {
    fn get_query(&self, cx: &Context<'_>, scope: &mut Scope<Loan>) {
        // The resource authenticates every GET, so a request here always has its user; a
        // request without one would see nothing.
        let member = cx.user.map_or(-1, |user| user.id);
        scope.eq(Loan::FIELDS.member_id, member);
    }

    fn reads_hidden_fields(&self) -> bool {
        false
    }
}

/// Creates the tables and indexes that do not exist yet, from the models.
pub fn create_tables(conn: &mut Conn<'_>) -> Result<(), Error> {
    plover::schema::create_tables(conn, &models())
}

/// The API, the accounts views and the admin: reading is open, writing takes an admin's Basic
/// credentials. `/api/catalogue/` is a second resource of books: it shows no price, and lets a
/// client change only the title and the price. `/api/my-loans/` (GET only) takes a bearer
/// token and lists its member's loans alone; pages of [`APP_ORIGIN`] may call the API (CORS).
/// The admin's dashboard issues bearer tokens, and its `Token` index revokes them.
pub fn routes(
    db: &Database,
    auth: &Auth<Member>,
) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone {
    let book = Book::FIELDS;
    let mut api = RestApi::new(db.clone()).cors_origins([APP_ORIGIN]);
    api.register_resource(Resource::<Author>::new().auth(AdminAuthentication::new(auth)))
        .register_resource(Resource::<Book>::new().auth(AdminAuthentication::new(auth)))
        .register_resource(
            Resource::<Book>::new()
                .name("catalogue")
                .fields([
                    book.id,
                    book.author_id,
                    book.isbn,
                    book.title,
                    book.in_stock,
                ])
                .writable([book.title, book.price])
                .auth(AdminAuthentication::new(auth)),
        )
        .register_resource(Resource::<Loan>::new().auth(AdminAuthentication::new(auth)))
        .register_resource(
            Resource::<Loan>::new()
                .name("my-loans")
                .allowed_methods([Method::GET])
                .auth(BearerAuthentication::with_methods(auth, vec![Method::GET]))
                .hooks(OwnLoans),
        );
    let mut admin = Admin::new(auth);
    admin
        .register(ModelAdmin::<Author>::new())
        .register(ModelAdmin::<Book>::new())
        .register(ModelAdmin::<Member>::new())
        .register(ModelAdmin::<Loan>::new())
        .register(ModelAdmin::<Token>::new())
        .register_panel("Bearer tokens", TokenPanel::new(auth));
    let (api, accounts, admin) = (api.setup(), auth.setup(), admin.setup());
    move |cfg| {
        accounts(cfg);
        api(cfg);
        admin(cfg);
    }
}
