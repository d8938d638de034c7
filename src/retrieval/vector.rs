//! Vector maths of hybrid search: the dot product every candidate costs, and
//! the unit copies it is taken over (so a dot product is a cosine).

/// Dot product with wasm SIMD128: four lanes at a time. The package is
/// built with `simd128` (every runtime it targets has it); a build without
/// it uses the scalar loop below.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    use core::arch::wasm32::{f32x4, f32x4_add, f32x4_extract_lane, f32x4_mul, v128, v128_load};
    let n = a.len().min(b.len());
    let chunks = n / 4;
    let mut acc: v128 = f32x4(0.0, 0.0, 0.0, 0.0);
    for i in 0..chunks {
        // SAFETY: i * 4 + 3 < n <= len of both slices; v128_load reads 16 unaligned bytes.
        let (x, y) = unsafe {
            (v128_load(a.as_ptr().add(i * 4) as *const v128), v128_load(b.as_ptr().add(i * 4) as *const v128))
        };
        acc = f32x4_add(acc, f32x4_mul(x, y));
    }
    let mut s = f32x4_extract_lane::<0>(acc)
        + f32x4_extract_lane::<1>(acc)
        + f32x4_extract_lane::<2>(acc)
        + f32x4_extract_lane::<3>(acc);
    for i in chunks * 4..n {
        s += a[i] * b[i];
    }
    s
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Four accumulators, the same association as the SIMD path, so both
    // rank alike; it is exact enough for ranking.
    let mut acc = [0f32; 4];
    let chunks = a.len() / 4 * 4;
    for i in (0..chunks).step_by(4) {
        for k in 0..4 {
            acc[k] += a[i + k] * b[i + k];
        }
    }
    let mut s = acc.iter().sum::<f32>();
    for i in chunks..a.len() {
        s += a[i] * b[i];
    }
    s
}

pub(super) fn normalized(v: &[f32]) -> Option<Vec<f32>> {
    let n = dot(v, v).sqrt();
    (n.is_finite() && n > 0.0).then(|| v.iter().map(|x| x / n).collect())
}
