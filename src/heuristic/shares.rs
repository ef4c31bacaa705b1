//! How work is shared between two kinds of it: in a repair, window steps
//! against ejection attempts, and among windows, first-fit against the
//! exact search; in a lane alone on its core, the exact search against
//! everything else (placements and repair). Each kind gets a share of the work in proportion to
//! what it gained per unit of work so far (with a prior, so that a kind
//! that has not paid off yet keeps a floor of the work), so that the
//! cheaper kind per improvement gets more whatever the family, and an
//! unlucky start starves neither.

/// Two kinds of step, the first and the second, and what each gained.
pub(crate) struct Shares {
    /// Work spent by the first kind, then the second.
    spent: [u64; 2],
    /// What each gained, summed.
    gained: [f64; 2],
    rule: Rule,
}

/// How gains become shares.
#[derive(Clone, Copy)]
struct Rule {
    /// Each kind starts as if it had gained this over `prior_work`.
    prior_gain: f64,
    prior_work: f64,
    /// The second kind's share stays within these.
    least: f64,
    most: f64,
}

impl Shares {
    /// Window steps (first) against ejection attempts (second), gaining
    /// the part of the gap to the bound each took off (a window lowers
    /// often by little, an attempt seldom by much, so lowerings are not
    /// counted but what they took off); each keeps at least a quarter,
    /// so what either would reach alone the two reach within about four
    /// times its work.
    pub(crate) fn methods() -> Shares {
        Shares::new(Rule {
            prior_gain: 0.01,
            prior_work: 1e6,
            least: 0.25,
            most: 0.75,
        })
    }

    /// First-fit windows (first) against the exact search's (second),
    /// gaining one for each window lowered; the exact search gets between
    /// a sixteenth and three quarters.
    pub(crate) fn step_kinds() -> Shares {
        Shares::new(Rule {
            prior_gain: 1.0,
            prior_work: 1e6,
            least: 1.0 / 16.0,
            most: 0.75,
        })
    }

    /// The rest of a lane's work (first) against its exact rounds
    /// (second), in microseconds, gaining the part of the gap between
    /// the best height and the lower bound each closed (a proof closes
    /// it from below, a placement from above); each keeps at least a
    /// quarter of the time.
    pub(crate) fn lane_time() -> Shares {
        Shares::new(Rule {
            prior_gain: 0.01,
            prior_work: 1e5,
            least: 0.25,
            most: 0.75,
        })
    }

    /// A lane's placements once the plain orders are out (first: the
    /// perturbed restarts) against its repair (second), in units of
    /// work, gaining the part of the gap each closed; `unit` is a round's
    /// first grant (the prior's work), and each keeps a quarter.
    pub(crate) fn restarts_against_repair(unit: f64) -> Shares {
        Shares::new(Rule {
            prior_gain: 0.01,
            prior_work: unit,
            least: 0.25,
            most: 0.75,
        })
    }

    fn new(rule: Rule) -> Shares {
        Shares {
            spent: [0; 2],
            gained: [0.0; 2],
            rule,
        }
    }

    /// The second kind's share of the work.
    pub(crate) fn second_share(&self) -> f64 {
        let rule = self.rule;
        let rate = |k: usize| {
            (self.gained[k] + rule.prior_gain) / (self.spent[k] as f64 + rule.prior_work)
        };
        let (first, second) = (rate(0), rate(1));
        (second / (first + second)).clamp(rule.least, rule.most)
    }

    /// Whether the second kind has gained, and so much more per unit of
    /// work than the first that it has the most work the rule gives it.
    pub(crate) fn second_favoured(&self) -> bool {
        self.gained[1] > 0.0 && self.second_share() >= self.rule.most
    }

    /// Whether the next step is of the second kind: when its work is
    /// below its share.
    pub(crate) fn second_next(&self) -> bool {
        let total = (self.spent[0] + self.spent[1]) as f64;
        (self.spent[1] as f64) <= self.second_share() * total
    }

    pub(crate) fn record(&mut self, second: bool, work: u64, gained: f64) {
        let k = usize::from(second);
        self.spent[k] += work;
        self.gained[k] += gained;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// The work goes where windows are lowered: the kind that lowers
    /// more per unit of work gets the larger share, the other keeps at
    /// least its floor, and the work each kind takes follows its share.
    #[test]
    fn step_kinds_share_work_by_what_each_lowers() {
        for exact_pays in [false, true] {
            let mut kinds = Shares::step_kinds();
            let mut rng = Rng::new(u64::from(exact_pays));
            for _ in 0..20_000 {
                let exact = kinds.second_next();
                // The kind that pays lowers one window in four, the other
                // one in forty; both cost the same per step.
                let odds = if exact == exact_pays { 4 } else { 40 };
                kinds.record(exact, 1_000, f64::from(u8::from(rng.below(0, odds) == 0)));
            }
            let total = (kinds.spent[0] + kinds.spent[1]) as f64;
            let exact_work = kinds.spent[1] as f64 / total;
            let share = kinds.second_share();
            assert!((1.0 / 16.0..=0.75).contains(&share));
            assert!(
                (exact_work - share).abs() < 0.02,
                "{exact_work} against {share}"
            );
            if exact_pays {
                assert!(share > 0.6, "exact pays and gets {share}");
            } else {
                assert!(share < 0.15, "first-fit pays and exact gets {share}");
                assert!(kinds.spent[1] > 0, "the floor keeps exact steps running");
            }
        }
    }

    /// Between window steps and ejection attempts the work follows what
    /// each took off the gap per unit of work, whichever kind lowers
    /// often by little or seldom by much, each keeping a quarter.
    #[test]
    fn methods_share_work_by_the_gap_each_takes_off() {
        for ejection_pays in [false, true] {
            let mut methods = Shares::methods();
            let mut rng = Rng::new(7 + u64::from(ejection_pays));
            for _ in 0..20_000 {
                let ejecting = methods.second_next();
                // Windows lower one step in three by a thousandth of the
                // gap; attempts one in twenty by a twentieth when they
                // pay, by a thousandth when not. Attempts cost more.
                let (work, lowered) = match ejecting {
                    true if ejection_pays => (4_000, (rng.below(0, 20) == 0) as u8 as f64 / 20.0),
                    true => (4_000, (rng.below(0, 20) == 0) as u8 as f64 / 1000.0),
                    false => (1_000, (rng.below(0, 3) == 0) as u8 as f64 / 1000.0),
                };
                methods.record(ejecting, work, lowered);
            }
            let total = (methods.spent[0] + methods.spent[1]) as f64;
            let ejection_work = methods.spent[1] as f64 / total;
            let share = methods.second_share();
            assert!((0.25..=0.75).contains(&share));
            assert!(
                (ejection_work - share).abs() < 0.02,
                "{ejection_work} against {share}"
            );
            if ejection_pays {
                assert!(share > 0.6, "ejection pays and gets {share}");
            } else {
                assert!(share < 0.3, "windows pay and ejection gets {share}");
            }
        }
    }

    /// A lane's exact rounds are favoured (not cut) only once they have
    /// closed part of the gap, and by more per second than the rest: an
    /// exact search that closes nothing, however little it has spent,
    /// keeps being cut to its share, and the rest keeps a quarter.
    #[test]
    fn lane_time_favours_the_exact_search_only_once_it_pays() {
        // Neither gains, the exact search having spent far less: the
        // rates favour it by the prior alone, yet it is not favoured.
        let mut lane = Shares::lane_time();
        lane.record(false, 4_000_000, 0.0);
        lane.record(true, 10_000, 0.0);
        assert!(lane.second_share() >= 0.75);
        assert!(!lane.second_favoured(), "favoured for spending little");
        // The rest closes a tenth of the gap, the exact search nothing.
        let mut lane = Shares::lane_time();
        lane.record(false, 1_000_000, 0.1);
        lane.record(true, 1_000_000, 0.0);
        assert!((lane.second_share() - 0.25).abs() < 1e-9);
        assert!(!lane.second_favoured());
        // The exact search closes a fifth in the time the rest closes a
        // hundredth: favoured, at three quarters and no more.
        let mut lane = Shares::lane_time();
        lane.record(false, 1_000_000, 0.01);
        lane.record(true, 1_000_000, 0.2);
        assert!((lane.second_share() - 0.75).abs() < 1e-9);
        assert!(lane.second_favoured());
        // Both close the gap alike: shared about evenly, not favoured.
        let mut lane = Shares::lane_time();
        lane.record(false, 1_000_000, 0.1);
        lane.record(true, 1_000_000, 0.1);
        assert!((lane.second_share() - 0.5).abs() < 1e-9);
        assert!(!lane.second_favoured());
    }

    /// A lane's placements and repair: the work follows what each
    /// lowered, within a quarter and three quarters, and the prior is a
    /// round's first grant, so that the first grants decide nothing alone.
    #[test]
    fn restarts_and_repair_share_by_what_each_lowers() {
        let unit = 1_600_000.0;
        let mut lane = Shares::restarts_against_repair(unit);
        // One grant each, nothing lowered: still even.
        lane.record(false, 1_600_000, 0.0);
        lane.record(true, 1_600_000, 0.0);
        assert!((lane.second_share() - 0.5).abs() < 1e-9);
        // The repair closes a tenth of the gap in its next grants, the
        // restarts nothing: the repair gets three quarters, no more.
        for _ in 0..4 {
            lane.record(false, 1_600_000, 0.0);
            lane.record(true, 1_600_000, 0.025);
        }
        assert!((lane.second_share() - 0.75).abs() < 1e-9);
        // The restarts then lower more per unit of work: the share turns.
        for _ in 0..8 {
            lane.record(false, 1_600_000, 0.05);
            lane.record(true, 1_600_000, 0.0);
        }
        assert!(lane.second_share() < 0.5);
        assert!(lane.second_share() >= 0.25);
    }
}
