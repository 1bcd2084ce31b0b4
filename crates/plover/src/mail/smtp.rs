//! The SMTP backend (lettre, TLS by rustls with the Mozilla root certificates).

use std::fmt;
use std::time::Duration;

use lettre::transport::smtp::authentication::Credentials;
use lettre::{SmtpTransport, Transport};

use super::{MailBackend, MailError, Message};

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// TLS from the first byte ("SMTPS", port 465 by default): the safest.
    Implicit,
    /// A plain connection upgraded with `STARTTLS`, which the server must offer, else nothing
    /// is sent (port 587 by default). The default.
    StartTls,
    /// No encryption at all (port 25 by default): only for a relay on the same machine or a
    /// development sink. Credentials would cross the network in clear.
    Plain,
}

/// Where and how to reach an SMTP server: host, port, TLS mode, credentials, timeout.
///
/// ```
/// use std::time::Duration;
/// use plover::mail::{SmtpBackend, SmtpSettings, Tls};
///
/// let settings = SmtpSettings::new("smtp.example.com")
///     .tls(Tls::Implicit)                     // default: Tls::StartTls
///     .port(465)                              // default: the TLS mode's port
///     .credentials("apikey", "secret")        // default: none
///     .timeout(Duration::from_secs(10));      // the default
/// assert!(!format!("{settings:?}").contains("secret"));
/// let backend = SmtpBackend::new(settings).expect("a valid host name");
/// # let _ = backend;
/// ```
#[derive(Clone)]
pub struct SmtpSettings {
    host: String,
    port: Option<u16>,
    tls: Tls,
    credentials: Option<(String, String)>,
    timeout: Duration,
}

impl SmtpSettings {
    /// The server at `host` (a name, checked against its TLS certificate, or an address),
    /// with `STARTTLS` required, no credentials and a 10 s timeout.
    pub fn new(host: &str) -> SmtpSettings {
        SmtpSettings {
            host: host.to_owned(),
            port: None,
            tls: Tls::StartTls,
            credentials: None,
            timeout: Duration::from_secs(10),
        }
    }

    /// The port (default: 465 with [`Tls::Implicit`], 587 with [`Tls::StartTls`], 25 with
    /// [`Tls::Plain`]).
    pub fn port(mut self, port: u16) -> SmtpSettings {
        self.port = Some(port);
        self
    }

    /// How the connection is protected (default [`Tls::StartTls`]).
    pub fn tls(mut self, tls: Tls) -> SmtpSettings {
        self.tls = tls;
        self
    }

    /// The username and password to log in to the server with (`AUTH PLAIN` or `LOGIN`,
    /// only over TLS unless the mode is [`Tls::Plain`]).
    pub fn credentials(mut self, username: &str, password: &str) -> SmtpSettings {
        self.credentials = Some((username.to_owned(), password.to_owned()));
        self
    }

    /// How long connecting and each exchange with the server may take (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> SmtpSettings {
        self.timeout = timeout;
        self
    }
}

impl fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.credentials.as_ref().map(|(user, _)| user))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Sends messages to an SMTP server, one connection per message.
pub struct SmtpBackend {
    transport: SmtpTransport,
    settings: SmtpSettings,
}

impl fmt::Debug for SmtpBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpBackend")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SmtpBackend {
    /// A backend for the server of `settings`. Nothing is connected yet: an unreachable
    /// server shows as the failure of each message.
    ///
    /// # Errors
    /// [`MailError::Smtp`] when the TLS settings cannot be made for the host.
    pub fn new(settings: SmtpSettings) -> Result<SmtpBackend, MailError> {
        let smtp = |e: lettre::transport::smtp::Error| MailError::Smtp(e.to_string());
        let mut builder = match settings.tls {
            Tls::Implicit => SmtpTransport::relay(&settings.host).map_err(smtp)?,
            Tls::StartTls => SmtpTransport::starttls_relay(&settings.host).map_err(smtp)?,
            Tls::Plain => SmtpTransport::builder_dangerous(&settings.host),
        };
        if let Some(port) = settings.port {
            builder = builder.port(port);
        }
        if let Some((user, password)) = &settings.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        let transport = builder.timeout(Some(settings.timeout)).build();
        Ok(SmtpBackend {
            transport,
            settings,
        })
    }
}

impl MailBackend for SmtpBackend {
    fn send(&self, message: &Message) -> Result<(), MailError> {
        self.transport
            .send(&message.to_lettre()?)
            .map(drop)
            .map_err(|e| MailError::Smtp(e.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::thread;

    use super::*;
    use crate::mail::Mailer;

    /// A one-connection SMTP sink on a free local port: its port, and the thread that returns
    /// the DATA it received.
    fn sink() -> (u16, thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut out = stream.try_clone().unwrap();
            let mut lines = BufReader::new(stream);
            let mut reply = |text: &str| out.write_all(format!("{text}\r\n").as_bytes());
            reply("220 sink ready").unwrap();
            let (mut data, mut in_data, mut line) = (String::new(), false, String::new());
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                let command = line.to_ascii_uppercase();
                if in_data {
                    if line == ".\r\n" {
                        in_data = false;
                        reply("250 queued").unwrap();
                    } else {
                        data.push_str(&line);
                    }
                } else if command.starts_with("EHLO") {
                    reply("250 sink").unwrap();
                } else if command.starts_with("DATA") {
                    in_data = true;
                    reply("354 go on").unwrap();
                } else if command.starts_with("QUIT") {
                    reply("221 bye").unwrap();
                    break;
                } else {
                    reply("250 ok").unwrap();
                }
                line.clear();
            }
            data
        });
        (port, server)
    }

    #[test]
    fn a_message_reaches_a_plain_local_server() {
        let (port, server) = sink();
        let backend =
            SmtpBackend::new(SmtpSettings::new("127.0.0.1").tls(Tls::Plain).port(port)).unwrap();
        let message = Message::new(
            "alice@example.com",
            "noreply@example.com",
            "Réinitialiser",
            "Bonjour, élan.",
        )
        .html("<p>Bonjour</p>");
        backend.send(&message).unwrap();
        let data = server.join().unwrap();
        assert!(data.contains("To: alice@example.com"), "{data}");
        assert!(data.contains("From: noreply@example.com"), "{data}");
        assert!(data.contains("multipart/alternative"), "{data}");
    }

    #[test]
    fn an_unreachable_server_is_an_error_and_a_log_line_not_a_panic() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let settings = SmtpSettings::new("127.0.0.1")
            .tls(Tls::Plain)
            .port(port)
            .timeout(Duration::from_secs(2));
        let mailer = Mailer::new(SmtpBackend::new(settings).unwrap(), "noreply@example.com");
        let message = mailer.message("alice@example.com", "Hi", "Hello.");
        assert!(matches!(mailer.send_now(&message), Err(MailError::Smtp(_))));
        mailer.send_later(message); // logged on its own thread
    }

    #[test]
    fn starttls_is_required_when_asked_for() {
        let (port, server) = sink(); // offers no STARTTLS
        let backend = SmtpBackend::new(SmtpSettings::new("127.0.0.1").port(port)).unwrap();
        let message = Message::new("alice@example.com", "noreply@example.com", "Hi", "Hello.");
        assert!(matches!(backend.send(&message), Err(MailError::Smtp(_))));
        assert_eq!(server.join().unwrap(), "", "nothing was sent in clear");
    }
}
