//! The links of a list (docs/contract.md#pagination): other pages, another ordering or filter,
//! each the list's path with the request's parameters that carry over, and the one changed.

use super::{kept_in_links, PAGE};
use crate::http::urlencoded::link;

/// The links of one list request: its path, and the decoded query pairs the links start from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Links<'a> {
    /// The list's path (`/api/message/`, `/admin/message/`).
    pub(crate) path: &'a str,
    /// The request's decoded query pairs, in order.
    pub(crate) pairs: &'a [(String, String)],
    /// Whether a parameter carries over to the other links.
    carried: fn(&str) -> bool,
}

impl<'a> Links<'a> {
    /// The links of a REST list: the page position (`page`, `cursor`) and the credentials
    /// (`key`, `secret`) never carry over.
    pub(crate) fn rest(path: &'a str, pairs: &'a [(String, String)]) -> Links<'a> {
        Links {
            path,
            pairs,
            carried: kept_in_links,
        }
    }

    /// The links of an admin index: every parameter but the page carries over.
    #[cfg(feature = "admin")]
    pub(crate) fn admin(path: &'a str, pairs: &'a [(String, String)]) -> Links<'a> {
        Links {
            path,
            pairs,
            carried: |key| key != PAGE,
        }
    }

    /// The parameters that carry over, in the request's order.
    pub(crate) fn kept(&self) -> impl Iterator<Item = &'a (String, String)> + '_ {
        self.pairs.iter().filter(|(k, _)| (self.carried)(k))
    }

    /// The first value of a parameter of the request.
    #[cfg(feature = "admin")]
    pub(crate) fn param(&self, name: &str) -> Option<&'a str> {
        super::first(self.pairs, name)
    }

    /// The list with the parameters that carry over and that `keep` keeps, then `name=value`.
    pub(crate) fn adding(&self, keep: impl Fn(&str) -> bool, name: &str, value: &str) -> String {
        let kept = self.kept().filter(|(k, _)| keep(k));
        link(self.path, kept, (name, value))
    }

    /// The list with `name=value` instead of the request's values of `name` (on its first
    /// page, unless `name` is the page).
    pub(crate) fn with(&self, name: &str, value: &str) -> String {
        self.adding(|k| k != name, name, value)
    }

    /// Page `page` of the list; none below the first.
    pub(crate) fn page(&self, page: i64) -> Option<String> {
        (page >= 1).then(|| self.with(PAGE, &page.to_string()))
    }

    /// The list with the parameters that carry over but the request's `index`th pair (a
    /// filter's chip removing it). The query string may be empty (`path?`).
    #[cfg(feature = "admin")]
    pub(crate) fn without(&self, index: usize) -> String {
        let rest: Vec<(String, String)> = (self.pairs.iter().enumerate())
            .filter(|&(i, (k, _))| i != index && (self.carried)(k))
            .map(|(_, pair)| pair.clone())
            .collect();
        format!("{}?{}", self.path, crate::http::urlencoded::encode(&rest))
    }
}

/// `path` with the query `pairs` (the path alone when there are none).
#[cfg(feature = "admin")]
pub(crate) fn with_query(path: &str, pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", crate::http::urlencoded::encode(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        crate::http::urlencoded::pairs(text.as_bytes())
    }

    #[test]
    fn rest_links_drop_the_page_position_and_the_credentials() {
        let query = pairs("a=1&page=3&cursor=x&key=k&secret=s&ordering=-b");
        let links = Links::rest("/api/m/", &query);
        assert_eq!(links.page(0), None);
        assert_eq!(
            links.page(2).as_deref(),
            Some("/api/m/?a=1&ordering=-b&page=2")
        );
        assert_eq!(
            links.with("cursor", "t"),
            "/api/m/?a=1&ordering=-b&cursor=t"
        );
    }

    #[cfg(feature = "admin")]
    #[test]
    fn admin_links_keep_all_but_the_page() {
        let query = pairs("a=1&page=3&ordering=b&q=x");
        let links = Links::admin("/admin/m/", &query);
        assert_eq!(
            links.with("ordering", "-b"),
            "/admin/m/?a=1&q=x&ordering=-b"
        );
        assert_eq!(links.without(0), "/admin/m/?ordering=b&q=x");
        assert_eq!(with_query("/admin/m/", &[]), "/admin/m/");
        let kept: Vec<&str> = links.kept().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept, ["a", "ordering", "q"]);
    }
}
