//! How the lexical and vector signals of the candidates become one
//! relevance in [0, 1]: min-max weighting, or reciprocal rank. A search
//! without vectors divides BM25 by the best score, whatever the fusion.

use super::options::{Fusion, SearchOptions};

/// A candidate: document number, BM25 score, cosine (with vectors).
pub(super) type Candidate = (u32, f64, Option<f64>);

/// Relevance in [0, 1] per candidate.
pub(super) fn fuse(cands: &[Candidate], opts: &SearchOptions) -> Vec<f64> {
    let has_vectors = cands.iter().any(|c| c.2.is_some());
    let minmax = |xs: Vec<f64>| -> Vec<f64> {
        let (lo, hi) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        xs.iter()
            .map(|&x| {
                if hi > lo {
                    (x - lo) / (hi - lo)
                } else if hi > 0.0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect()
    };
    if !has_vectors {
        let max = cands.iter().map(|c| c.1).fold(0.0, f64::max);
        return cands.iter().map(|c| if max > 0.0 { c.1 / max } else { 0.0 }).collect();
    }
    match opts.fusion {
        Fusion::Minmax => {
            let lex = minmax(cands.iter().map(|c| c.1).collect());
            let vec = minmax(cands.iter().map(|c| c.2.unwrap_or(-1.0)).collect());
            lex.iter().zip(vec).map(|(l, v)| opts.alpha * l + (1.0 - opts.alpha) * v).collect()
        }
        Fusion::Rrf => {
            let ranks = |key: &dyn Fn(&Candidate) -> Option<f64>| -> Vec<Option<usize>> {
                let mut order: Vec<usize> = (0..cands.len())
                    .filter(|&i| key(&cands[i]).is_some_and(|s| s > 0.0 || cands[i].2.is_some()))
                    .collect();
                crate::order::sort_by(&mut order, |&a, &b| {
                    key(&cands[b]).unwrap_or(0.0).total_cmp(&key(&cands[a]).unwrap_or(0.0)).then(a.cmp(&b))
                });
                let mut r = vec![None; cands.len()];
                for (rank, i) in order.into_iter().enumerate() {
                    r[i] = Some(rank + 1);
                }
                r
            };
            let lex = ranks(&|c| (c.1 > 0.0).then_some(c.1));
            let vec = ranks(&|c| c.2);
            let raw: Vec<f64> = (0..cands.len())
                .map(|i| {
                    [lex[i], vec[i]].iter().flatten().map(|&r| 1.0 / (opts.rrf_k + r as f64)).sum::<f64>()
                })
                .collect();
            let max = raw.iter().copied().fold(0.0, f64::max);
            raw.iter().map(|r| if max > 0.0 { r / max } else { 0.0 }).collect()
        }
    }
}
