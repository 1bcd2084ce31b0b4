//! A webhook endpoint: where deliveries go, which changes it wants, how they are signed.

use std::time::Duration;

use actix_web::http::Uri;

use super::guard::{self, Targets};
use super::secret::Secret;
use crate::error::Error;

/// How long a receiver has to answer a delivery with a 2xx unless
/// [`Endpoint::timeout`] says otherwise.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A receiver of webhooks: its URL, the resources and operations it wants, and its secret
/// (two while a secret is rotated). Made with [`Endpoint::new`], which refuses a URL that
/// does not parse or whose host is not public (see [`Targets`]).
#[derive(Debug, Clone)]
pub struct Endpoint {
    url: Uri,
    resources: Vec<String>,
    operations: Vec<String>,
    /// The newest first; at most two.
    secrets: Vec<Secret>,
    targets: Targets,
    timeout: Duration,
}

impl Endpoint {
    /// An endpoint at `url` (`http` or `https`, with a host) signing with `secret`
    /// (`whsec_<base64>`), wanting every resource and operation. Under [`Targets::Public`]
    /// the host is resolved now (a blocking look-up): an address that is not public refuses
    /// the endpoint, and every delivery checks the addresses again.
    ///
    /// # Errors
    /// [`Error::Validation`] on `url` (it does not parse, is not http(s), has no host or
    /// carries a user name, does not resolve, or is refused by the guard) or on `secret`.
    pub fn new(url: &str, secret: &str, targets: Targets) -> Result<Endpoint, Error> {
        let endpoint = Endpoint::unresolved(url, secret, targets)?;
        if targets == Targets::Public {
            let (host, port) = host_port(&endpoint.url);
            guard::addresses(host, port, targets).map_err(|m| Error::field("url", m))?;
        }
        Ok(endpoint)
    }

    /// [`Endpoint::new`] without the look-up of the host (every delivery checks its
    /// addresses): for the endpoints the dispatcher reads from the database at each pass.
    pub(crate) fn unresolved(url: &str, secret: &str, targets: Targets) -> Result<Endpoint, Error> {
        let url = parse(url).map_err(|message| Error::field("url", message))?;
        let secret = Secret::parse(secret)?;
        Ok(Endpoint {
            url,
            resources: Vec::new(),
            operations: Vec::new(),
            secrets: vec![secret],
            targets,
            timeout: DELIVERY_TIMEOUT,
        })
    }

    /// Only the changes of these resources (by registered name; default: all).
    pub fn resources(mut self, names: &[&str]) -> Endpoint {
        self.resources = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Only these operations: `created`, `updated`, `deleted` (default: all).
    pub fn operations(mut self, names: &[&str]) -> Endpoint {
        self.operations = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Rotates the secret: deliveries are signed with `new` and with the current secret (two
    /// signatures, so that the receiver may switch when it likes); a secret from an earlier
    /// rotation is dropped.
    ///
    /// # Errors
    /// [`Error::Validation`] on `secret` when `new` is not a secret.
    pub fn rotate(mut self, new: &str) -> Result<Endpoint, Error> {
        self.secrets.insert(0, Secret::parse(new)?);
        self.secrets.truncate(2);
        Ok(self)
    }

    /// How long the receiver has to answer (default [`DELIVERY_TIMEOUT`], 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Endpoint {
        self.timeout = timeout;
        self
    }

    /// The URL deliveries are posted to.
    pub fn url(&self) -> String {
        self.url.to_string()
    }

    /// Whether the endpoint wants the change `operation` of `resource`.
    pub fn wants(&self, resource: &str, operation: &str) -> bool {
        let wanted =
            |list: &[String], name: &str| list.is_empty() || list.iter().any(|n| n == name);
        wanted(&self.resources, resource) && wanted(&self.operations, operation)
    }

    /// The value of the `webhook-signature` header of a delivery of `body` with the id `id`
    /// at `timestamp` (Unix seconds): `v1,<base64>`, one per secret, separated by spaces.
    pub fn signature(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let signed: Vec<String> = (self.secrets.iter())
            .map(|secret| secret.sign(id, timestamp, body))
            .collect();
        signed.join(" ")
    }

    /// The names of the resources it wants (empty: all).
    pub(crate) fn resource_names(&self) -> &[String] {
        &self.resources
    }

    /// Whether it wants some change of the resource `name`.
    pub(crate) fn wants_resource(&self, name: &str) -> bool {
        self.resources.is_empty() || self.resources.iter().any(|n| n == name)
    }

    /// Which addresses its deliveries may reach.
    pub fn targets(&self) -> Targets {
        self.targets
    }

    #[cfg(feature = "webhooks")]
    pub(crate) fn uri(&self) -> &Uri {
        &self.url
    }

    #[cfg(feature = "webhooks")]
    pub(crate) fn answer_within(&self) -> Duration {
        self.timeout
    }
}

/// `text` as an endpoint URL, or why not.
fn parse(text: &str) -> Result<Uri, String> {
    let url: Uri = (text.trim().parse()).map_err(|e| format!("not a URL ({e}): {text:?}"))?;
    if !matches!(url.scheme_str(), Some("http" | "https")) {
        return Err(format!("not an http or https URL: {text:?}"));
    }
    let Some(authority) = url.authority() else {
        return Err(format!("the URL has no host: {text:?}"));
    };
    if authority.as_str().contains('@') {
        return Err("the URL carries a user name: put credentials in the secret".into());
    }
    if authority.host().is_empty() {
        return Err(format!("the URL has no host: {text:?}"));
    }
    Ok(url)
}

/// The host and port of an endpoint URL (parsed: it has both or a default port).
pub(crate) fn host_port(url: &Uri) -> (&str, u16) {
    let default = if url.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    (
        url.host().unwrap_or_default(),
        url.port_u16().unwrap_or(default),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    fn field_error(result: Result<Endpoint, Error>, field: &str) -> String {
        match result.unwrap_err() {
            Error::Validation { fields, .. } => fields.get(field).cloned().unwrap(),
            other => panic!("not a validation error: {other}"),
        }
    }

    #[test]
    fn urls_that_do_not_parse_or_reach_private_addresses_are_refused() {
        let new = |url: &str| Endpoint::new(url, SECRET, Targets::Public);
        assert!(field_error(new("not a url"), "url").contains("not"));
        assert!(field_error(new("ftp://example.com/"), "url").contains("http"));
        assert!(field_error(new("http://user:pw@example.com/"), "url").contains("user"));
        for private in [
            "http://127.0.0.1:8080/hook",
            "http://[::1]/",
            "https://10.0.0.8/",
            "http://169.254.169.254/latest/meta-data/",
            "http://localhost/",
        ] {
            let message = field_error(new(private), "url");
            assert!(message.contains("refused"), "{private}: {message}");
        }
        let local = Endpoint::new("http://127.0.0.1:8080/hook", SECRET, Targets::Any).unwrap();
        assert_eq!(local.url(), "http://127.0.0.1:8080/hook");
        assert!(field_error(
            Endpoint::new("http://127.0.0.1/", "whsec_", Targets::Any),
            "secret"
        )
        .contains("16 to 64 bytes"));
    }

    #[test]
    fn resources_and_operations_narrow_what_an_endpoint_wants() {
        let all = Endpoint::new("http://127.0.0.1/", SECRET, Targets::Any).unwrap();
        assert!(all.wants("ticket", "deleted"));
        let some = all
            .resources(&["ticket"])
            .operations(&["created", "updated"]);
        assert!(some.wants("ticket", "created"));
        assert!(!some.wants("ticket", "deleted"));
        assert!(!some.wants("user", "created"));
    }

    #[test]
    fn a_rotated_endpoint_signs_with_the_new_secret_and_the_current_one() {
        let old = Endpoint::new("http://127.0.0.1/", SECRET, Targets::Any).unwrap();
        let new = Secret::generate();
        let rotated = old.clone().rotate(&new.expose()).unwrap();
        let one = old.signature("7", 1_700_000_000, b"{}");
        let two = rotated.signature("7", 1_700_000_000, b"{}");
        assert_eq!(
            two,
            format!("{} {one}", new.sign("7", 1_700_000_000, b"{}"))
        );
        let third = rotated.rotate(&Secret::generate().expose()).unwrap();
        let third = third.signature("7", 1_700_000_000, b"{}");
        assert_eq!(third.split(' ').count(), 2);
        assert!(!third.contains(&one));
    }
}
