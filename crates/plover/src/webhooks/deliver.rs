//! Sending a delivery (feature `webhooks`): one signed POST with actix's HTTP client, whose
//! name look-ups go through the guard, with TLS by rustls and the Mozilla root certificates.

use std::cell::RefCell;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix_tls::connect::{Connector, Resolve, Resolver};

use super::endpoint::{host_port, Endpoint};
use super::guard::{self, Targets};

/// Why a delivery failed: the job that sends it tries again later.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// The guard refused the endpoint's addresses ([`Targets::Public`]), or its name did not
    /// resolve (the message says which).
    #[error("refused: {0}")]
    Refused(String),
    /// The request could not be sent, or no answer could be read.
    #[error("could not deliver: {0}")]
    Failed(String),
    /// No answer within the endpoint's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The receiver answered with a status other than 2xx.
    #[error("the receiver answered {0}, not 2xx")]
    Status(u16),
}

/// Posts `body` (the JSON of a delivery, sent as is) to `endpoint`, signed as Standard
/// Webhooks 1.0 says: `webhook-id: <id>` (the same on every retry, so that the receiver can
/// drop duplicates), `webhook-timestamp` (this attempt's Unix seconds) and
/// `webhook-signature` ([`Endpoint::signature`]). Delivered when the receiver answers 2xx
/// within the endpoint's timeout; redirects are not followed. Returns the status.
///
/// Call it from a job's handler ([`crate::jobs`]): the future runs on the worker's thread.
///
/// # Errors
/// [`DeliveryError`]: any other outcome, the guard's refusal included.
pub async fn deliver(endpoint: &Endpoint, id: &str, body: &[u8]) -> Result<u16, DeliveryError> {
    let (host, port) = host_port(endpoint.uri());
    // An address in the URL is never looked up, so the resolver's check would not see it.
    if host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok()
    {
        guard::addresses(host, port, endpoint.targets()).map_err(DeliveryError::Refused)?;
    }
    let timestamp = chrono::Utc::now().timestamp();
    let timeout = endpoint.answer_within();
    let request = client(endpoint.targets())
        .post(endpoint.uri().clone())
        .timeout(timeout)
        .insert_header(("content-type", "application/json"))
        .insert_header(("webhook-id", id))
        .insert_header(("webhook-timestamp", timestamp.to_string()))
        .insert_header(("webhook-signature", endpoint.signature(id, timestamp, body)));
    let sent = request.send_body(body.to_vec()).await;
    use awc::error::{ConnectError, SendRequestError};
    match sent {
        Ok(answer) if answer.status().is_success() => Ok(answer.status().as_u16()),
        Ok(answer) => Err(DeliveryError::Status(answer.status().as_u16())),
        Err(SendRequestError::Timeout | SendRequestError::Connect(ConnectError::Timeout)) => {
            Err(DeliveryError::Timeout(timeout))
        }
        Err(SendRequestError::Connect(ConnectError::Resolver(e))) => {
            Err(DeliveryError::Refused(e.to_string()))
        }
        Err(e) => Err(DeliveryError::Failed(e.to_string())),
    }
}

thread_local! {
    /// This thread's clients, one per [`Targets`] (a client keeps its connections).
    static CLIENTS: RefCell<[Option<awc::Client>; 2]> = const { RefCell::new([None, None]) };
}

/// This thread's client for `targets`.
fn client(targets: Targets) -> awc::Client {
    let slot = usize::from(targets == Targets::Any);
    CLIENTS
        .with(|clients| (clients.borrow_mut()[slot].get_or_insert_with(|| build(targets))).clone())
}

/// A client whose look-ups go through the guard, that follows no redirect.
fn build(targets: Targets) -> awc::Client {
    let resolver = Resolver::custom(Guarded(targets));
    let mut connector = awc::Connector::new()
        .connector(Connector::new(resolver).service())
        .timeout(Duration::from_secs(10));
    if let Some(tls) = tls() {
        connector = connector.rustls_0_23(tls);
    }
    awc::Client::builder()
        .connector(connector)
        .disable_redirects()
        .finish()
}

/// TLS with rustls (ring) and the Mozilla root certificates, HTTP/1.1.
fn tls() -> Option<Arc<rustls::ClientConfig>> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| log::error!("webhooks: no TLS: {e}"))
        .ok()?;
    let mut config = builder.with_root_certificates(roots).with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Some(Arc::new(config))
}

/// The system's look-up, then the guard on every address found.
struct Guarded(Targets);

type Found<'a> = Pin<Box<dyn Future<Output = Result<Vec<SocketAddr>, Box<dyn StdError>>> + 'a>>;

impl Resolve for Guarded {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> Found<'a> {
        Box::pin(async move {
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let found: Vec<SocketAddr> = match bare.parse() {
                Ok(ip) => vec![SocketAddr::new(ip, port)],
                Err(_) => tokio::net::lookup_host((bare, port)).await?.collect(),
            };
            Ok(guard::allowed(host, found, self.0)?)
        })
    }
}
