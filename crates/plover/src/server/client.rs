//! The client a request comes from, as fair shares and login throttles count it.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// The address a client's shares and failed logins are counted by: an IPv4 address, or the
/// /64 network of an IPv6 address (one host usually holds a whole /64, so counting single IPv6
/// addresses would let it take as many shares as it likes). Requests whose peer address is
/// unknown (a Unix socket, a test request without one) share one key.
///
/// ```
/// use plover::server::ClientKey;
///
/// let a = ClientKey::of("2001:db8::1".parse().ok());
/// let b = ClientKey::of("2001:db8::2".parse().ok());
/// assert_eq!(a, b, "one /64 is one client");
/// assert_ne!(ClientKey::of("127.0.0.2".parse().ok()), ClientKey::of("127.0.0.3".parse().ok()));
/// assert_eq!(ClientKey::of("2001:db8::1".parse().ok()).to_string(), "2001:db8::/64");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey(Option<IpAddr>);

impl ClientKey {
    /// The key of a peer address (`None` when it is unknown).
    pub fn of(addr: Option<IpAddr>) -> ClientKey {
        ClientKey(addr.map(|addr| match addr {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let bits = u128::from(v6) & !((1u128 << 64) - 1);
                    IpAddr::V6(Ipv6Addr::from(bits))
                }
            },
            v4 => v4,
        }))
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(IpAddr::V6(net)) => write!(f, "{net}/64"),
            Some(v4) => write!(f, "{v4}"),
            None => f.write_str("(unknown address)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_v4_is_v4_and_unknown_is_one_key() {
        assert_eq!(
            ClientKey::of("::ffff:10.0.0.1".parse().ok()),
            ClientKey::of("10.0.0.1".parse().ok())
        );
        assert_eq!(ClientKey::of(None), ClientKey::of(None));
        assert_ne!(
            ClientKey::of("2001:db8:0:1::1".parse().ok()),
            ClientKey::of("2001:db8:0:2::1".parse().ok())
        );
    }
}
