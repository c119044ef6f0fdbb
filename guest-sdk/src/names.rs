//! Comparing names in the SDK's own lookups.
//!
//! The SDK compares names on every decision of a batch — a state name (the four of Lyra share their
//! `InitState.` prefix), a deferred call's feature, a property asked for — so it compares them inline, eight
//! bytes at a time, without the call `==` makes to `memcmp` (`memcmp.rs` gives plugins a faster one).

/// Whether `a` and `b` are the same text.
#[inline]
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && same_bytes(a.as_bytes(), b.as_bytes())
}

/// Whether two byte strings of the same length are equal: eight bytes at a time, then the bytes left over as
/// the last eight bytes (overlapping the word before them) when there are eight (names rarely are shorter).
fn same_bytes(whole_a: &[u8], whole_b: &[u8]) -> bool {
    let (mut a, mut b) = (whole_a, whole_b);
    while let (Some((x, rest_of_a)), Some((y, rest_of_b))) = (a.split_first_chunk::<8>(), b.split_first_chunk::<8>()) {
        if u64::from_ne_bytes(*x) != u64::from_ne_bytes(*y) {
            return false;
        }
        (a, b) = (rest_of_a, rest_of_b);
    }
    match (whole_a.last_chunk::<8>(), whole_b.last_chunk::<8>()) {
        (Some(x), Some(y)) => u64::from_ne_bytes(*x) == u64::from_ne_bytes(*y),
        _ => a.iter().zip(b).all(|(x, y)| x == y),
    }
}

/// Whether `a` and `b` are both absent or the same text.
pub(crate) fn same_or_none(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_same_only_when_every_byte_is() {
        let states =
            ["InitState.Spawned", "InitState.DataAvailable", "InitState.DataInitialized", "InitState.GameplayReady"];
        for a in states {
            for b in states {
                assert_eq!(same(a, b), a == b, "{a} and {b}");
            }
        }
        // Differences in the words, in the tail, and in the length, on either side of a word's end.
        for text in ["", "a", "Hero", "Possession", "12345678", "123456789", "PawnExtensionComponent"] {
            let copy: String = text.chars().collect();
            assert!(same(text, &copy), "{text} and a copy of it elsewhere");
            for i in 0..text.len() {
                let mut other = text.as_bytes().to_vec();
                other[i] ^= 1;
                assert!(!same(text, std::str::from_utf8(&other).unwrap()), "{text} changed at {i}");
            }
            assert!(!same(text, &format!("{text}x")));
        }
        assert!(same_or_none(None, None));
        assert!(same_or_none(Some("Hero"), Some("Hero")));
        assert!(!same_or_none(Some("Hero"), None));
        assert!(!same_or_none(None, Some("Hero")));
    }
}
