//! Webhooks (docs/changes.md#webhooks): endpoints, signatures as the Standard Webhooks 1.0
//! specification writes them, deliveries from the outbox, and (feature `webhooks`) the
//! delivery of one signed POST.
//!
//! - [`Endpoint`]: a receiver's URL, the resources and operations it wants, its secret
//!   (`whsec_<base64>`, [`Secret`]), two while it is rotated. [`Endpoint::new`] refuses a URL
//!   that does not parse, and one whose host is or resolves to a loopback, private,
//!   link-local, unspecified or multicast address unless the application allows such
//!   [`Targets`].
//! - `deliver` (feature `webhooks`): posts a body with the headers `webhook-id`,
//!   `webhook-timestamp` and `webhook-signature`; a 2xx within the endpoint's timeout (10 s)
//!   is delivered, anything else an error. Deliveries run as [jobs](crate::jobs), whose
//!   retries are the webhook's retries.
//!
//! - [`Webhooks`]: the endpoints of a REST API's resources, and the dispatcher that turns each
//!   event of the outbox into one delivery job per endpoint that wants it (body
//!   `{"id", "event", "resource", "object"}`, `webhook-id` the event's id), in event order per
//!   endpoint, retried for at least 24 h, then dead-lettered (the job's `failed` state).
//!
//! Without the feature no HTTP client is compiled: endpoints and signatures are there,
//! `deliver` is not. With it, Plover builds actix's client (awc) with TLS: rustls with the
//! ring provider and the Mozilla root certificates (webpki-roots), so `https` endpoints work
//! with no system certificate store.
//!
//! ```
//! use plover::webhooks::{Endpoint, Targets};
//!
//! let endpoint = Endpoint::new(
//!     "http://127.0.0.1:9000/hooks",
//!     "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
//!     Targets::Any, // a local receiver: allowed explicitly
//! )
//! .unwrap()
//! .resources(&["ticket"]);
//! assert!(endpoint.wants("ticket", "created"));
//! assert_eq!(
//!     endpoint.signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#),
//!     "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
//! );
//! assert!(Endpoint::new("http://10.0.0.8/", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Targets::Public).is_err());
//! ```

mod cursor;
#[cfg(feature = "webhooks")]
mod deliver;
mod dispatch;
mod endpoint;
mod guard;
mod secret;
pub(crate) mod stored;

#[cfg(feature = "webhooks")]
pub use deliver::{deliver, DeliveryError};
#[cfg(feature = "webhooks")]
pub use dispatch::Running;
pub use dispatch::{Dispatcher, Webhooks, DELIVERY_JOB, RETRY_FOR};
pub use endpoint::{Endpoint, DELIVERY_TIMEOUT};
pub use guard::Targets;
pub use secret::Secret;
pub use stored::{WebhookEndpoint, WebhookEndpointChanges};
