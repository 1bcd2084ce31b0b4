//! Endpoints kept in the database, `plover_webhook_endpoint`: registered in the admin (or by
//! any writer of the table) rather than in code, delivered to beside the code's endpoints when
//! the application asks for it ([`Webhooks::stored_endpoints`](super::Webhooks::stored_endpoints)).

use plover_derive::RestModel;

use super::endpoint::Endpoint;
use super::guard::Targets;
use super::secret::Secret;
use crate::db::Conn;
use crate::error::Error;
use crate::query::Op;
use crate::views::Query;

#[cfg(feature = "admin")]
/// The operations an endpoint may ask for.
const OPERATIONS: [&str; 3] = ["created", "updated", "deleted"];

/// A webhook endpoint kept in the table `plover_webhook_endpoint`: a row of the admin's
/// "webhook-endpoints" pages ([`Admin::webhooks`](crate::admin::Admin::webhooks)).
///
/// The dispatcher reads the active rows at each pass (an endpoint removed or deactivated gets
/// no new deliveries; those queued for it fail and are dead-lettered). `resources` and
/// `operations` are comma-separated names, empty for all. The admin refuses a URL that does
/// not parse or that the guard refuses ([`Targets`]) and a malformed secret, and makes a
/// secret (`whsec_` and 32 random bytes in base64) when none is given; a row written otherwise
/// that is not a valid endpoint is skipped with a warning in the log.
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = plover_webhook_endpoint)]
#[rest(table, display = "{url}")]
pub struct WebhookEndpoint {
    /// Primary key.
    pub id: i64,
    /// Where deliveries are posted (`http` or `https`).
    #[rest(max_len = 2000, unique)]
    pub url: String,
    /// The signing secret, `whsec_<base64 key>`: private (no REST resource serializes it).
    #[rest(private, max_len = 200, default = Secret::generate().expose())]
    pub secret: String,
    /// The names of the resources it wants, separated by commas; empty: every resource.
    #[rest(max_len = 1000, default = String::new())]
    pub resources: String,
    /// The operations it wants (`created`, `updated`, `deleted`), separated by commas;
    /// empty: all.
    #[rest(max_len = 100, default = String::new())]
    pub operations: String,
    /// Whether it gets deliveries.
    #[rest(default = true)]
    pub active: bool,
    /// When it was registered (UTC).
    #[rest(default = crate::value::now())]
    pub created: chrono::NaiveDateTime,
}

/// The names of a comma-separated list, trimmed, without empty ones.
fn names(list: &str) -> Vec<&str> {
    (list.split(',').map(str::trim))
        .filter(|n| !n.is_empty())
        .collect()
}

impl WebhookEndpoint {
    /// The endpoint deliveries go to, without a name look-up: every delivery checks the
    /// addresses under `targets` again.
    fn endpoint(&self, targets: Targets) -> Result<Endpoint, Error> {
        let endpoint = Endpoint::unresolved(&self.url, &self.secret, targets)?;
        Ok(endpoint
            .resources(&names(&self.resources))
            .operations(&names(&self.operations)))
    }
}

/// The active stored endpoints, as deliveries see them; rows that are not valid endpoints are
/// skipped (and logged).
pub(crate) fn active(conn: &mut Conn<'_>, targets: Targets) -> Result<Vec<Endpoint>, Error> {
    let rows = Query::<WebhookEndpoint>::new()
        .filter(WebhookEndpoint::FIELDS.active, Op::Eq, true)
        .order_by(WebhookEndpoint::FIELDS.id)
        .all(conn)
        .map_err(|e| {
            e.explain_missing_table(
                "the webhook endpoints table",
                "plover_webhook_endpoint",
                "plover::webhooks::WebhookEndpoint::meta()",
            )
        })?;
    Ok((rows.iter())
        .filter_map(|row| match row.endpoint(targets) {
            Ok(endpoint) => Some(endpoint),
            Err(e) => {
                log::warn!("webhooks: the stored endpoint #{} is skipped: {e}", row.id);
                None
            }
        })
        .collect())
}

#[cfg(feature = "admin")]
/// What the admin checks of an endpoint about to be saved, and completes: a blank secret is
/// made, the URL written as it is parsed, the lists trimmed. `resources` are the names an
/// endpoint may want; `taken` the URLs of the endpoints in code.
///
/// # Errors
/// A field error ([`Error::field`]) on `url` (it does not parse, the guard refuses it under
/// `targets`, or an endpoint in code has it), `secret`, `resources` or `operations`.
pub(crate) fn check(
    changes: &mut WebhookEndpointChanges,
    existing: Option<&WebhookEndpoint>,
    targets: Targets,
    resources: &[&str],
    taken: &[String],
) -> Result<(), Error> {
    let url = (changes.url.clone())
        .or_else(|| existing.map(|e| e.url.clone()))
        .unwrap_or_default();
    let secret = match (&changes.secret, existing) {
        (Some(s), _) if !s.trim().is_empty() => s.trim().to_owned(),
        (None, Some(e)) => e.secret.clone(),
        _ => Secret::generate().expose(),
    };
    let endpoint = Endpoint::new(&url, &secret, targets)?;
    if taken.contains(&endpoint.url()) {
        return Err(Error::field(
            "url",
            "an endpoint in the application's code has this URL",
        ));
    }
    changes.url = Some(endpoint.url());
    changes.secret = Some(secret);
    if let Some(list) = &changes.resources {
        let listed = names(list);
        if let Some(bad) = listed.iter().find(|n| !resources.contains(n)) {
            return Err(Error::field(
                "resources",
                format!(
                    "no resource is named {bad:?}: name some of {resources:?}, or none for all"
                ),
            ));
        }
        changes.resources = Some(listed.join(","));
    }
    if let Some(list) = &changes.operations {
        let listed = names(list);
        if let Some(bad) = listed.iter().find(|n| !OPERATIONS.contains(n)) {
            return Err(Error::field(
                "operations",
                format!("{bad:?} is not created, updated or deleted"),
            ));
        }
        changes.operations = Some(listed.join(","));
    }
    Ok(())
}

#[cfg(feature = "admin")]
/// A secret as lists show it: its prefix and last four characters.
pub(crate) fn masked(secret: &str) -> String {
    let tail: String = (secret
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev())
    .collect();
    format!("whsec_…{tail}")
}

#[cfg(all(test, feature = "admin"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn field(error: Error) -> String {
        match error {
            Error::Validation { fields, .. } => fields.keys().cloned().collect(),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_blank_secret_is_made_and_bad_values_are_field_errors() {
        let mut changes = WebhookEndpointChanges {
            url: Some(" http://127.0.0.1:9/hooks ".into()),
            secret: Some(String::new()),
            resources: Some("ticket, message".into()),
            operations: Some("created,".into()),
            ..WebhookEndpointChanges::default()
        };
        check(
            &mut changes,
            None,
            Targets::Any,
            &["ticket", "message"],
            &[],
        )
        .unwrap();
        assert!(Secret::parse(changes.secret.as_deref().unwrap()).is_ok());
        assert_eq!(changes.url.as_deref(), Some("http://127.0.0.1:9/hooks"));
        assert_eq!(changes.resources.as_deref(), Some("ticket,message"));
        assert_eq!(changes.operations.as_deref(), Some("created"));

        let bad = |url: &str, secret: &str, resources: &str, operations: &str| {
            let mut changes = WebhookEndpointChanges {
                url: Some(url.into()),
                secret: Some(secret.into()),
                resources: Some(resources.into()),
                operations: Some(operations.into()),
                ..WebhookEndpointChanges::default()
            };
            let taken = ["http://127.0.0.1:8/".to_owned()];
            field(check(&mut changes, None, Targets::Public, &["ticket"], &taken).unwrap_err())
        };
        assert_eq!(bad("http://10.0.0.1/", "", "", ""), "url");
        assert_eq!(bad("not a url", "", "", ""), "url");
        assert_eq!(bad("http://93.184.215.14/", "whsec_!!", "", ""), "secret");
        assert_eq!(bad("http://93.184.215.14/", "", "user", ""), "resources");
        assert_eq!(
            bad("http://93.184.215.14/", "", "", "renamed"),
            "operations"
        );
        assert_eq!(masked("whsec_abcdefgh"), "whsec_…efgh");
    }
}
