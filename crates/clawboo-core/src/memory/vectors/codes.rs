//! The two compact codes of a vector and how they are compared.
//!
//! - **Sign bits** ([`Bits`], [`BITS`] of them, 64 bytes): the signs of [`BITS`] orthogonal
//!   random projections (a randomized Hadamard transform: the vector, zero-padded to a power of
//!   two, has each coordinate's sign flipped by a fixed pseudo-random pattern, then is transformed;
//!   more rounds with other patterns when the padded length is below [`BITS`]). Two vectors at
//!   angle θ disagree on a share θ/π of the bits, so the Hamming distance orders vectors by angle
//!   (SimHash), at about 1/12 of a byte per dimension, and costs a few `popcnt`s to compare.
//! - **Asymmetric estimate** ([`Asymmetric`]): a query's exact projections against a stored
//!   vector's sign bits, a finer order than the Hamming distance for the same stored bytes.
//! - **Int8 code** ([`Code`]): each coordinate scaled by the largest magnitude to a signed byte,
//!   followed by the codes' Euclidean norm as a little-endian `f32`; the cosine of two codes is
//!   within about 0.01 of the true cosine.
//!
//! Both are pure functions of the vector (fixed seeds, no training), so any process computes the
//! same codes, and a code never depends on what else is stored. Must never: panic on any input
//! (zero, non-finite or empty vectors give all-zero codes, which compare as far from everything).

/// Sign bits per vector.
pub(super) const BITS: usize = 512;
/// `u64` words of a [`Bits`].
pub(super) const WORDS: usize = BITS / 64;
/// Bytes of a [`Bits`] as stored.
pub(super) const BITS_BYTES: usize = BITS / 8;

/// A vector's sign bits.
pub(super) type Bits = [u64; WORDS];

/// A vector's [`BITS`] random projections, whose signs are its [`Bits`].
pub(super) type Projections = [f32; BITS];

/// The sign bits of `vector`.
pub(super) fn bits(vector: &[f32]) -> Bits {
    signs(&projections(vector))
}

/// The signs of `projections`, as bits (set for a positive projection).
pub(super) fn signs(projections: &Projections) -> Bits {
    let mut out = [0u64; WORDS];
    for (i, y) in projections.iter().enumerate() {
        if *y > 0.0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

/// The projections of `vector` (all zero for an empty or non-finite vector).
pub(super) fn projections(vector: &[f32]) -> Projections {
    let mut out = [0.0f32; BITS];
    if vector.is_empty() || !vector.iter().all(|x| x.is_finite()) {
        return out;
    }
    let padded = vector.len().next_power_of_two();
    let mut buffer = vec![0.0f32; padded];
    let mut written = 0;
    let mut round = 0u64;
    while written < BITS {
        for (i, (slot, x)) in buffer.iter_mut().zip(vector).enumerate() {
            *slot = if flip(round, i as u64) { -x } else { *x };
        }
        buffer[vector.len()..].fill(0.0);
        hadamard(&mut buffer);
        let take = (BITS - written).min(padded);
        out[written..written + take].copy_from_slice(&buffer[..take]);
        written += take;
        round += 1;
    }
    out
}

/// Whether round `round` flips coordinate `i` (a fixed pseudo-random pattern: splitmix64).
fn flip(round: u64, i: u64) -> bool {
    let mut z = ((round << 32) | i).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) & 1 == 1
}

/// The unnormalized fast Walsh–Hadamard transform, in place (`values.len()` a power of two).
fn hadamard(values: &mut [f32]) {
    let mut half = 1;
    while half < values.len() {
        for pair in values.chunks_exact_mut(2 * half) {
            let (low, high) = pair.split_at_mut(half);
            for (a, b) in low.iter_mut().zip(high) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        half *= 2;
    }
}

/// Bits as stored: little-endian words.
pub(super) fn bits_to_bytes(bits: &Bits) -> Vec<u8> {
    bits.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The Hamming distances from `query` to each of the packed bit vectors in `packed` (stored
/// bytes, [`BITS_BYTES`] per vector), appended to `out`.
pub(super) fn distances(query: &Bits, packed: &[u8], out: &mut Vec<u16>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU supports `popcnt`, the only feature the function is compiled for.
            unsafe { distances_popcnt(query, packed, out) };
            return;
        }
    }
    distances_portable(query, packed, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn distances_popcnt(query: &Bits, packed: &[u8], out: &mut Vec<u16>) {
    distances_portable(query, packed, out);
}

#[inline(always)]
fn distances_portable(query: &Bits, packed: &[u8], out: &mut Vec<u16>) {
    out.extend(packed.chunks_exact(BITS_BYTES).map(|stored| {
        let mut distance = 0u32;
        for (q, chunk) in query.iter().zip(stored.chunks_exact(8)) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            distance += (q ^ u64::from_le_bytes(word)).count_ones();
        }
        distance as u16
    }));
}

/// A query's asymmetric estimator: the similarity of the query's exact [`Projections`] to a stored
/// vector's sign bits, `Σ projection × (±1 by the bit)`. Its expectation is proportional to the
/// cosine (for random projections), and it keeps the query's magnitudes where the Hamming distance
/// keeps only signs, so it orders candidates by angle more finely than their Hamming distance
/// does. Computed with one lookup table per stored byte (the sums over each of the 256 bytes'
/// set bits).
pub(super) struct Asymmetric {
    tables: Vec<[f32; 256]>,
    total: f32,
}

impl Asymmetric {
    /// The estimator of the query whose projections are `projections`.
    pub(super) fn new(projections: &Projections) -> Self {
        let tables = projections
            .chunks_exact(8)
            .map(|eight| {
                let mut table = [0.0f32; 256];
                for byte in 1..256usize {
                    // The byte without its lowest set bit is already summed.
                    table[byte] = table[byte & (byte - 1)] + eight[byte.trailing_zeros() as usize];
                }
                table
            })
            .collect();
        Self {
            tables,
            total: projections.iter().sum(),
        }
    }

    /// The estimate for sign bits stored as `stored` ([`BITS_BYTES`]; higher is nearer).
    pub(super) fn score(&self, stored: &[u8]) -> f32 {
        let set: f32 = self
            .tables
            .iter()
            .zip(stored)
            .map(|(table, byte)| table[usize::from(*byte)])
            .sum();
        2.0 * set - self.total
    }
}

/// A vector's int8 code: one signed byte per dimension, then the codes' norm (`f32`, LE).
pub(super) type Code = Vec<u8>;

/// The int8 code of `vector` (all zero, norm 0, for a zero or non-finite vector).
pub(super) fn code(vector: &[f32]) -> Code {
    let scale = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let usable = scale > 0.0 && vector.iter().all(|x| x.is_finite());
    let mut out: Vec<u8> = vector
        .iter()
        .map(|x| {
            if usable {
                (x / scale * 127.0).round().clamp(-127.0, 127.0) as i8 as u8
            } else {
                0
            }
        })
        .collect();
    let norm = out
        .iter()
        .map(|&c| {
            let c = f32::from(c as i8);
            c * c
        })
        .sum::<f32>()
        .sqrt();
    out.extend(norm.to_le_bytes());
    out
}

/// The approximate cosine of two codes of the same length (`-1` when either is zero or the
/// lengths differ, so such a vector ranks last).
pub(super) fn code_cosine(a: &[u8], b: &[u8]) -> f32 {
    if a.len() != b.len() || a.len() < 4 {
        return -1.0;
    }
    let (a, a_norm) = a.split_at(a.len() - 4);
    let (b, b_norm) = b.split_at(b.len() - 4);
    let norm = |n: &[u8]| f32::from_le_bytes([n[0], n[1], n[2], n[3]]);
    let (a_norm, b_norm) = (norm(a_norm), norm(b_norm));
    if a_norm <= 0.0 || b_norm <= 0.0 || !(a_norm * b_norm).is_finite() {
        return -1.0;
    }
    dot(a, b) as f32 / (a_norm * b_norm)
}

/// The dot product of two int8 code bodies (written so the compiler vectorizes it).
fn dot(a: &[u8], b: &[u8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x as i8) * i32::from(y as i8))
        .sum()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::memory::embed::cosine;

    /// Values in `[-1, 1]` from the test PRNG.
    pub(in crate::memory::vectors) fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut rng = clawboo_tests::Rng::new(seed);
        move || rng.below(2001) as f32 / 1000.0 - 1.0
    }

    #[test]
    fn int8_cosine_is_within_a_hundredth_of_the_true_cosine() {
        let mut next = uniform(0x9E37_79B9);
        for _ in 0..200 {
            let a: Vec<f32> = (0..768).map(|_| next()).collect();
            let b: Vec<f32> = a.iter().map(|x| x * 0.5 + next() * 0.5).collect();
            let approx = f64::from(code_cosine(&code(&a), &code(&b)));
            assert!((approx - cosine(&a, &b)).abs() < 0.01, "{approx}");
        }
        assert_eq!(code_cosine(&code(&[0.0, 0.0]), &code(&[1.0, 0.0])), -1.0);
        assert_eq!(
            code_cosine(&code(&[f32::NAN, 1.0]), &code(&[1.0, 0.0])),
            -1.0
        );
        assert_eq!(code_cosine(&code(&[1.0]), &code(&[1.0, 0.0])), -1.0);
    }

    #[test]
    fn hamming_distance_estimates_the_angle() {
        let mut next = uniform(0x2545_F491);
        // (Below 64 dimensions the padded transform has too few sign patterns for a fine estimate;
        // real embedding models have hundreds.)
        for dims in [64, 384, 768, 1536] {
            for _ in 0..20 {
                let a: Vec<f32> = (0..dims).map(|_| next()).collect();
                let b: Vec<f32> = a.iter().map(|x| x * 0.7 + next() * 0.3).collect();
                let mut d = Vec::new();
                distances(&bits(&a), &bits_to_bytes(&bits(&b)), &mut d);
                let estimate = (std::f64::consts::PI * f64::from(d[0]) / BITS as f64).cos();
                assert!(
                    (estimate - cosine(&a, &b)).abs() < 0.2,
                    "{dims}: {estimate} vs {}",
                    cosine(&a, &b)
                );
            }
        }
        let v: Vec<f32> = (0..768).map(|_| next()).collect();
        let negated: Vec<f32> = v.iter().map(|x| -x).collect();
        let mut d = Vec::new();
        distances(&bits(&v), &bits_to_bytes(&bits(&v)), &mut d);
        distances(&bits(&v), &bits_to_bytes(&bits(&negated)), &mut d);
        assert_eq!(d[0], 0);
        assert!(d[1] > (BITS * 9 / 10) as u16, "{}", d[1]);
    }

    #[test]
    fn the_asymmetric_estimate_is_the_signed_sum_and_orders_by_angle_better_than_hamming() {
        let mut next = uniform(0x51_7CC1);
        let query: Vec<f32> = (0..768).map(|_| next()).collect();
        let projected = projections(&query);
        assert_eq!(signs(&projected), bits(&query));
        let estimate = Asymmetric::new(&projected);
        // Stored vectors at every angle to the query.
        let stored: Vec<Vec<f32>> = (0..300)
            .map(|i| {
                let share = i as f32 / 300.0;
                query
                    .iter()
                    .map(|x| x * share + next() * (1.0 - share))
                    .collect()
            })
            .collect();
        let mut asymmetric = Vec::new();
        let mut hamming = Vec::new();
        for v in &stored {
            let b = bits(v);
            let signed: f32 = projected
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    if b[i / 64] >> (i % 64) & 1 == 1 {
                        *p
                    } else {
                        -p
                    }
                })
                .sum();
            let score = estimate.score(&bits_to_bytes(&b));
            assert!(
                (score - signed).abs() <= 1e-3 * signed.abs().max(1.0),
                "{score} {signed}"
            );
            let mut d = Vec::new();
            distances(&bits(&query), &bits_to_bytes(&b), &mut d);
            asymmetric.push(f64::from(score));
            hamming.push(-f64::from(d[0]));
        }
        // Pairs the estimate orders as the true cosine does (ties count against it).
        let exact: Vec<f64> = stored.iter().map(|v| cosine(&query, v)).collect();
        let agreeing = |estimate: &[f64]| {
            let mut right = 0;
            for i in 0..exact.len() {
                for j in i + 1..exact.len() {
                    let truth = exact[i] > exact[j];
                    if estimate[i] != estimate[j] && (estimate[i] > estimate[j]) == truth {
                        right += 1;
                    }
                }
            }
            right
        };
        assert!(
            agreeing(&asymmetric) > agreeing(&hamming),
            "{} vs {}",
            agreeing(&asymmetric),
            agreeing(&hamming)
        );
    }

    #[test]
    fn codes_of_degenerate_vectors_are_zero_and_torn_bits_are_not_read() {
        assert_eq!(bits(&[]), [0; WORDS]);
        assert_eq!(bits(&[f32::INFINITY, 1.0]), [0; WORDS]);
        assert_eq!(code(&[0.0, 0.0]), vec![0, 0, 0, 0, 0, 0]);
        let b = bits(&[0.25, -1.0, 3.0]);
        assert_eq!(bits_to_bytes(&b).len(), BITS_BYTES);
        // Packed input of a torn length compares only whole vectors.
        let mut d = Vec::new();
        distances(&b, &[0; BITS_BYTES + 5], &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(projections(&[f32::NAN]), [0.0; BITS]);
    }
}
