//! Pages of a query for application list views: `?page=`, counts and links.

use actix_web::HttpRequest;

use super::query::Query;
use crate::db::{Conn, DbConn};
use crate::error::Error;
use crate::http::urlencoded::{link, pairs};
use crate::listing::PAGE;
use crate::model::RestModel;

/// Rows per page unless told otherwise (as the REST API's `paginate_by`).
pub const PAGINATE_BY: i64 = 20;

/// A query cut into pages of `paginate_by` rows (flask-peewee's `PaginatedQuery`).
/// A [`Query`] converts into one of 20 rows a page.
#[derive(Debug, Clone)]
pub struct PaginatedQuery<M: RestModel> {
    query: Query<M>,
    paginate_by: i64,
}

impl<M: RestModel> From<Query<M>> for PaginatedQuery<M> {
    fn from(query: Query<M>) -> Self {
        PaginatedQuery {
            query,
            paginate_by: PAGINATE_BY,
        }
    }
}

impl<M: RestModel> Query<M> {
    /// This query in pages of `n` rows (at least 1).
    pub fn paginate_by(self, n: i64) -> PaginatedQuery<M> {
        PaginatedQuery {
            query: self,
            paginate_by: n.max(1),
        }
    }
}

impl<M: RestModel> PaginatedQuery<M> {
    /// The page that the request's `?page=` names (1 when absent), loaded with the request's
    /// connection. A `page` that is not an integer >= 1 is a 400 naming `page`; a page past the
    /// end is empty, as in the REST API.
    pub async fn get_page(self, req: &HttpRequest, db: &DbConn) -> Result<Page<M>, Error> {
        let at = PageAt::of(req)?;
        db.run(move |conn| self.load(conn, at)).await
    }

    /// Loads one page: a `COUNT(*)`, then the page's rows (skipped past the end).
    pub fn load(&self, conn: &mut Conn<'_>, at: PageAt) -> Result<Page<M>, Error> {
        let count = self.query.count(conn)?;
        let offset = (at.number - 1).saturating_mul(self.paginate_by);
        let objects = if offset < count {
            self.query.window(conn, offset, self.paginate_by)?
        } else {
            Vec::new()
        };
        Ok(Page {
            objects,
            number: at.number,
            paginate_by: self.paginate_by,
            count,
            pages: ((count + self.paginate_by - 1) / self.paginate_by).max(1),
            at,
        })
    }
}

/// Which page a request asks for, and what its links keep: the path and every other query
/// parameter.
#[derive(Debug, Clone)]
pub struct PageAt {
    number: i64,
    path: String,
    query: Vec<(String, String)>,
}

impl PageAt {
    /// Reads `?page=` (the first one counts): 400 naming `page` unless an integer >= 1.
    pub fn of(req: &HttpRequest) -> Result<PageAt, Error> {
        let query = pairs(req.query_string().as_bytes());
        let number = match query.iter().find(|(k, _)| k == PAGE) {
            None => 1,
            Some((_, raw)) => match raw.parse::<i64>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(Error::param(PAGE, "expected an integer >= 1")),
            },
        };
        Ok(PageAt {
            number,
            path: req.path().to_owned(),
            query: query.into_iter().filter(|(k, _)| k != PAGE).collect(),
        })
    }
}

/// One page of rows, with what a template needs to link to the others.
#[derive(Debug)]
pub struct Page<M> {
    /// The rows of this page.
    pub objects: Vec<M>,
    /// The page number, from 1.
    pub number: i64,
    /// Rows per page.
    pub paginate_by: i64,
    /// How many rows the query matches in all.
    pub count: i64,
    /// How many pages there are (at least 1, also when there are no rows).
    pub pages: i64,
    at: PageAt,
}

impl<M> Page<M> {
    /// Whether a later page holds rows.
    pub fn has_next(&self) -> bool {
        self.number < self.pages
    }

    /// Whether this is not the first page (also past the end: the previous page is
    /// `number - 1`, as in the REST API).
    pub fn has_previous(&self) -> bool {
        self.number > 1
    }

    /// The link to the next page, if it has rows.
    pub fn next_url(&self) -> Option<String> {
        self.has_next().then(|| self.url(self.number + 1))
    }

    /// The link to the previous page, unless this is the first.
    pub fn previous_url(&self) -> Option<String> {
        self.has_previous().then(|| self.url(self.number - 1))
    }

    /// The link to page `number`: this path with every other query parameter kept.
    pub fn url(&self, number: i64) -> String {
        link(&self.at.path, &self.at.query, (PAGE, &number.to_string()))
    }
}
