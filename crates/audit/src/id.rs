//! Audit ids: the request ids the service gives its requests, which its
//! records are stored under.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A new request id, 32 hex digits laid out as a UUIDv7: the Unix time in
/// milliseconds (48 bits), then 80 bits from the operating system's
/// generator. Unguessable, so a client can neither replay nor pre-claim the
/// id of another request's audit record; time-ordered, so the audit
/// table's unique index on it grows at its end instead of at random places
/// (random ids cost a quarter of `/v1/check` throughput in SQLite).
pub fn new_request_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    let mut bytes = [0u8; 16];
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    let random = &mut bytes[6..];
    if let Err(err) = getrandom::fill(random) {
        // Never seen on a supported OS; still unpredictable enough to a
        // client: a hash of the clock, the process and a counter.
        use sha2::Digest;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        tracing::error!(error = %err, "the OS random generator failed: request ids from a hash");
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let mut hash = sha2::Sha256::new();
        hash.update(nanos.to_le_bytes());
        hash.update(std::process::id().to_le_bytes());
        hash.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        random.copy_from_slice(&hash.finalize()[..10]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn request_ids_are_time_ordered_with_80_random_bits() {
        let a = new_request_id();
        std::thread::sleep(Duration::from_millis(2));
        let b = new_request_id();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(a < b, "{a} then {b}");
        // The random part differs even within one millisecond.
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_request_id()).collect();
        assert_eq!(ids.len(), 1000);
        let tails: std::collections::HashSet<&str> = ids.iter().map(|id| &id[12..]).collect();
        assert_eq!(tails.len(), 1000);
    }
}
