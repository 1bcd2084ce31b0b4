//! The guard against server-side request forgery: a webhook goes to public addresses only,
//! unless the application allows the others explicitly ([`Targets::Any`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Which addresses an endpoint's deliveries may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Targets {
    /// Public addresses only (the default): an endpoint whose host is or resolves to a
    /// loopback, private (RFC 1918, IPv6 unique local), link-local, unspecified, multicast or
    /// broadcast address is refused, at registration and again on every delivery (a name that
    /// later resolves elsewhere is refused then).
    #[default]
    Public,
    /// Any address: for tests, and receivers inside the application's own network.
    Any,
}

/// Whether a delivery to `ip` is refused under [`Targets::Public`].
pub(crate) fn refused(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> bool {
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.octets()[0] == 0 // "this network": 0.0.0.0/8 reaches the host itself
}

fn refused_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local, fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local, fe80::/10
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated), fec0::/10
}

/// The addresses of `host` (a name, or an address, IPv6 in brackets or not) at `port`,
/// refused as a whole when `targets` is [`Targets::Public`] and any of them is not public
/// (the connection might go to any of them). Blocking: a name is resolved by the system.
pub(crate) fn addresses(
    host: &str,
    port: u16,
    targets: Targets,
) -> Result<Vec<SocketAddr>, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let found: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => (bare, port)
            .to_socket_addrs()
            .map_err(|e| format!("{host} does not resolve: {e}"))?
            .collect(),
    };
    allowed(host, found, targets)
}

/// `found`, or the reason it is refused.
pub(crate) fn allowed(
    host: &str,
    found: Vec<SocketAddr>,
    targets: Targets,
) -> Result<Vec<SocketAddr>, String> {
    if found.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if targets == Targets::Public {
        if let Some(bad) = found.iter().find(|a| refused(a.ip())) {
            return Err(format!(
                "{host} is a loopback, private, link-local or otherwise non-public address \
                 ({}): refused unless the application allows such targets",
                bad.ip()
            ));
        }
    }
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_refused_and_public_ones_pass() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(refused(bad.parse().unwrap()), "{bad}");
        }
        for good in ["93.184.215.14", "172.32.0.1", "8.8.8.8", "2606:4700::1111"] {
            assert!(!refused(good.parse().unwrap()), "{good}");
        }
    }

    #[test]
    fn a_literal_address_is_judged_without_resolving_and_any_allows_it() {
        assert!(addresses("127.0.0.1", 80, Targets::Public).is_err());
        assert!(addresses("[::1]", 80, Targets::Public).is_err());
        let any = addresses("[::1]", 8080, Targets::Any).unwrap();
        assert_eq!(any, ["[::1]:8080".parse::<SocketAddr>().unwrap()]);
        assert!(addresses("localhost", 80, Targets::Public).is_err());
    }
}
