//! Which mod broke it? A recording that ends in a failure is replayed with some of its mods left out, and the
//! mod (or the pair of mods, together) that makes the failure come is named — git bisect's halving over the
//! set of mods rather than over history, as delta debugging (Zeller's ddmin) does for failing inputs.
//!
//! The search is plain Rust over a test (`fails(kept)`: does a replay keeping only these mods fail?); the
//! caller replays. It first checks the two ends — the failure comes with every mod and does not with none —
//! then halves, one replay a step while one mod is enough for the failure (about log2(n) + 2 replays in all),
//! and only when no half alone fails looks for one mod in each half that fail together.

use std::collections::BTreeMap;

/// What a bisection found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The failure comes with these mods kept and not without any one of them: one mod, or two that fail
    /// only together (more for a failure that needs more).
    Culprits(Vec<String>),
    /// The recording's failure does not come back in a replay with every mod: nothing to bisect.
    NotReproduced,
    /// The failure comes even with every mod left out: it is not a mod's doing.
    WithoutMods,
}

/// A bisection's finding, and the replays it took (each the mods kept and whether it failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bisection {
    /// What it found.
    pub finding: Finding,
    /// Each replay, in order: the mods kept, and whether the failure came.
    pub replays: Vec<(Vec<String>, bool)>,
}

/// Bisects `mods` (in the order to halve them) with `fails`, which replays keeping only the mods given and
/// says whether the failure came. Each set is replayed once.
pub fn bisect<E>(mods: &[String], fails: impl FnMut(&[String]) -> Result<bool, E>) -> Result<Bisection, E> {
    let mut search = Search { order: mods.to_vec(), fails, known: BTreeMap::new(), replays: Vec::new() };
    let finding = search.run()?;
    Ok(Bisection { finding, replays: search.replays })
}

struct Search<F> {
    /// The mods in the caller's order, which every kept set is given in.
    order: Vec<String>,
    fails: F,
    /// The outcome of each set replayed, by its members in order.
    known: BTreeMap<Vec<String>, bool>,
    replays: Vec<(Vec<String>, bool)>,
}

impl<E, F: FnMut(&[String]) -> Result<bool, E>> Search<F> {
    fn run(&mut self) -> Result<Finding, E> {
        let all = self.order.clone();
        if !self.test(&[], &all)? {
            return Ok(Finding::NotReproduced);
        }
        if self.test(&[], &[])? {
            return Ok(Finding::WithoutMods);
        }
        // Optimistic first: one mod is enough, so a half that does not fail means the other half does.
        let guess = self.narrow(&[], &all)?;
        if self.test(&[], &guess)? {
            return Ok(Finding::Culprits(guess));
        }
        Ok(Finding::Culprits(self.find(&[], &all)?))
    }

    /// Halves `candidates` (with `base` kept) to one mod, replaying one half a step and taking the other untried
    /// when it does not fail.
    fn narrow(&mut self, base: &[String], candidates: &[String]) -> Result<Vec<String>, E> {
        let mut candidates = candidates.to_vec();
        while candidates.len() > 1 {
            let (first, second) = candidates.split_at(candidates.len() / 2);
            let (first, second) = (first.to_vec(), second.to_vec());
            candidates = if self.test(base, &first)? { first } else { second };
        }
        Ok(candidates)
    }

    /// The fewest of `candidates` that fail with `base` kept, given that all of them do and `base` alone does
    /// not: a half that fails alone is searched alone; otherwise a part of each half is needed.
    fn find(&mut self, base: &[String], candidates: &[String]) -> Result<Vec<String>, E> {
        if candidates.len() <= 1 {
            return Ok(candidates.to_vec());
        }
        let (first, second) = candidates.split_at(candidates.len() / 2);
        if self.test(base, first)? {
            return self.find(base, first);
        }
        if self.test(base, second)? {
            return self.find(base, second);
        }
        let with_second: Vec<String> = base.iter().chain(second).cloned().collect();
        let from_first = self.find(&with_second, first)?;
        let with_found: Vec<String> = base.iter().chain(&from_first).cloned().collect();
        let from_second = self.find(&with_found, second)?;
        Ok(from_first.into_iter().chain(from_second).collect())
    }

    /// Whether the replay keeping `base` and `more` fails (replayed once per set).
    fn test(&mut self, base: &[String], more: &[String]) -> Result<bool, E> {
        let kept: Vec<String> = self.order.iter().filter(|m| base.contains(m) || more.contains(m)).cloned().collect();
        if let Some(known) = self.known.get(&kept) {
            return Ok(*known);
        }
        let failed = (self.fails)(&kept)?;
        self.known.insert(kept.clone(), failed);
        self.replays.push((kept, failed));
        Ok(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mods(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("mod-{i}")).collect()
    }

    fn run(n: usize, fails: impl Fn(&[String]) -> bool) -> Bisection {
        bisect(&mods(n), |kept| Ok::<bool, ()>(fails(kept))).unwrap()
    }

    fn has(kept: &[String], name: &str) -> bool {
        kept.iter().any(|m| m == name)
    }

    /// One culprit among n mods is named in about log2(n) + 2 replays, wherever it is.
    #[test]
    fn one_culprit_is_named_in_about_log2_n_plus_two_replays() {
        for n in [1, 2, 3, 10, 16, 33] {
            for culprit in 0..n {
                let name = format!("mod-{culprit}");
                let found = run(n, |kept| has(kept, &name));
                assert_eq!(found.finding, Finding::Culprits(vec![name.clone()]), "n = {n}");
                let bound = (n as f64).log2().ceil() as usize + 3;
                assert!(found.replays.len() <= bound, "n = {n}, {culprit}: {} replays", found.replays.len());
            }
        }
    }

    /// Two mods that fail only together are both named (after the search for one mod fails: about
    /// 3·log2(n) + 2 replays).
    #[test]
    fn a_pair_that_fails_only_together_is_named() {
        for (a, b) in [(0, 9), (2, 3), (4, 7), (8, 9)] {
            let (a, b) = (format!("mod-{a}"), format!("mod-{b}"));
            let found = run(10, |kept| has(kept, &a) && has(kept, &b));
            assert_eq!(found.finding, Finding::Culprits(vec![a.clone(), b.clone()]));
            assert!(found.replays.len() <= 20, "{} replays", found.replays.len());
        }
    }

    #[test]
    fn a_failure_that_does_not_come_back_or_comes_without_mods_is_said_so() {
        assert_eq!(run(5, |_| false).finding, Finding::NotReproduced);
        assert_eq!(run(5, |_| true).finding, Finding::WithoutMods);
        let replays = run(5, |kept| has(kept, "mod-3")).replays;
        assert_eq!(replays[0], (mods(5), true), "every mod first");
        assert_eq!(replays[1], (vec![], false), "then none");
    }
}
