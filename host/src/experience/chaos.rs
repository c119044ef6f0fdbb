//! Lyra's chaos-testing delay: `max(0, min + random * uniform(0, 1))` seconds before actions execute.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A configured chaos delay. The same seed gives the same delay on every machine and run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosDelay {
    /// Seconds always waited (Lyra's `lyra.chaos.ExperienceDelayLoad.MinSecs`).
    pub min_secs: f64,
    /// Up to this many seconds more, chosen by the seeded generator (`...RandomSecs`).
    pub random_secs: f64,
    /// Seeds the generator that picks the random part, so runs with the same seed wait alike.
    pub seed: u64,
}

/// The longest chaos delay accepted: it is for shaking out load-order bugs, not for pausing a game.
pub const MAX_CHAOS_SECS: f64 = 600.0;

impl ChaosDelay {
    /// A chaos delay of `min_secs` plus up to `random_secs`, refused unless both are finite, not negative, and
    /// together at most [`MAX_CHAOS_SECS`].
    pub fn new(min_secs: f64, random_secs: f64, seed: u64) -> Result<Self, crate::Error> {
        for (what, value) in [("minimum", min_secs), ("random part", random_secs)] {
            if !value.is_finite() || value < 0.0 {
                let message = format!("the chaos delay's {what} must be a finite number of seconds >= 0, not {value}");
                return Err(crate::Error::refused(message));
            }
        }
        if min_secs + random_secs > MAX_CHAOS_SECS {
            return Err(crate::Error::refused(format!(
                "a chaos delay of up to {} s is longer than the {MAX_CHAOS_SECS} s allowed",
                min_secs + random_secs
            )));
        }
        Ok(ChaosDelay { min_secs, random_secs, seed })
    }

    /// The delay this configuration waits: never negative nor longer than [`MAX_CHAOS_SECS`], whatever the
    /// fields hold.
    pub fn delay(&self) -> Duration {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let roll: f64 = rng.random();
        let secs = self.min_secs + roll * self.random_secs.max(0.0);
        // NaN compares false everywhere: it ends up 0.
        let secs = if secs > 0.0 { secs.min(MAX_CHAOS_SECS) } else { 0.0 };
        Duration::from_secs_f64(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_bounded() {
        let chaos = ChaosDelay { min_secs: 0.5, random_secs: 1.0, seed: 42 };
        assert_eq!(chaos.delay(), chaos.delay());
        assert!(chaos.delay() >= Duration::from_millis(500) && chaos.delay() <= Duration::from_millis(1500));
        assert_ne!(chaos.delay(), ChaosDelay { seed: 43, ..chaos }.delay());
        assert_eq!(ChaosDelay { min_secs: -5.0, random_secs: 1.0, seed: 1 }.delay(), Duration::ZERO);
    }

    #[test]
    fn refuses_what_cannot_be_waited() {
        for (min, random) in
            [(1e9, 0.0), (f64::INFINITY, 0.0), (-1.0, 0.0), (f64::NAN, 0.0), (0.0, -0.5), (500.0, 200.0)]
        {
            assert!(ChaosDelay::new(min, random, 0).is_err(), "{min},{random}");
        }
        assert_eq!(ChaosDelay::new(0.2, 0.5, 7).unwrap().seed, 7);
    }

    #[test]
    fn a_delay_built_by_hand_never_panics_or_waits_for_ever() {
        for min in [f64::INFINITY, f64::NAN, 1e300, -f64::INFINITY] {
            assert!(ChaosDelay { min_secs: min, random_secs: 0.0, seed: 0 }.delay() <= Duration::from_secs(600));
        }
    }
}
