//! How a repair shares its work among its kinds of step: window steps
//! against ejection attempts, and among windows, first-fit against the
//! exact search. Each share follows what a kind gave per unit of work so
//! far, with a floor, so that the cheaper kind per improvement gets more
//! whatever the family, and none is starved by an unlucky start.

/// How the repair shares its work between window steps and ejection
/// attempts: each gets a share in proportion to the part of the gap to
/// the bound it took off per unit of work so far (a window lowers often
/// by little, an attempt seldom by much, so lowerings are not counted
/// but what they took off), each keeping at least a quarter: what
/// either would reach alone, the two reach within about four times its
/// work.
#[derive(Default)]
pub(super) struct Methods {
    /// Work spent by window steps, then ejection attempts.
    spent: [u64; 2],
    /// The parts of the gap each took off, summed.
    lowered: [f64; 2],
}

impl Methods {
    fn ejection_share(&self) -> f64 {
        // Prior: a hundredth of the gap per this much work, for either.
        const PRIOR_WORK: f64 = 1e6;
        let rate = |k: usize| (self.lowered[k] + 0.01) / (self.spent[k] as f64 + PRIOR_WORK);
        let (w, e) = (rate(0), rate(1));
        (e / (e + w)).clamp(0.25, 0.75)
    }

    pub(super) fn ejection_next(&self) -> bool {
        let total = (self.spent[0] + self.spent[1]) as f64;
        (self.spent[1] as f64) <= self.ejection_share() * total
    }

    pub(super) fn record(&mut self, ejection: bool, work: u64, lowered: f64) {
        let k = usize::from(ejection);
        self.spent[k] += work;
        self.lowered[k] += lowered;
    }
}

/// How the repair shares its work between first-fit windows and the
/// exact search's: each gets a share of the work in proportion to how
/// often it lowered a window per unit of work so far (with a prior that
/// lets a kind that has not paid off keep a floor of the work), so that
/// the cheaper kind per improvement gets more, whatever the family.
#[derive(Default)]
pub(super) struct StepKinds {
    /// Work spent by first-fit, then exact, steps.
    spent: [u64; 2],
    /// Windows each kind lowered.
    lowered: [u64; 2],
}

impl StepKinds {
    /// The exact search's share of the work: between a sixteenth and
    /// three quarters.
    fn exact_share(&self) -> f64 {
        // Prior: one lowering per this much work, for either kind.
        const PRIOR_WORK: f64 = 1e6;
        let rate = |k: usize| (self.lowered[k] as f64 + 1.0) / (self.spent[k] as f64 + PRIOR_WORK);
        let (f, e) = (rate(0), rate(1));
        (e / (e + f)).clamp(1.0 / 16.0, 0.75)
    }

    /// Whether the next eligible window goes to the exact search: when
    /// its work is below its share.
    pub(super) fn exact_next(&self) -> bool {
        let total = (self.spent[0] + self.spent[1]) as f64;
        (self.spent[1] as f64) <= self.exact_share() * total
    }

    pub(super) fn record(&mut self, exact: bool, work: u64, lowered: bool) {
        let k = usize::from(exact);
        self.spent[k] += work;
        self.lowered[k] += u64::from(lowered);
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
            let mut kinds = StepKinds::default();
            let mut rng = Rng::new(u64::from(exact_pays));
            for _ in 0..20_000 {
                let exact = kinds.exact_next();
                // The kind that pays lowers one window in four, the other
                // one in forty; both cost the same per step.
                let odds = if exact == exact_pays { 4 } else { 40 };
                kinds.record(exact, 1_000, rng.below(0, odds) == 0);
            }
            let total = (kinds.spent[0] + kinds.spent[1]) as f64;
            let exact_work = kinds.spent[1] as f64 / total;
            let share = kinds.exact_share();
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
            let mut methods = Methods::default();
            let mut rng = Rng::new(7 + u64::from(ejection_pays));
            for _ in 0..20_000 {
                let ejecting = methods.ejection_next();
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
            let share = methods.ejection_share();
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
}
