//! Held-out evaluation corpora (issues 24 and 25): text the scrubber and the memory search are
//! **never tuned on**, built by a different method than their tuning corpora, so the figures the
//! project reports on it are honest.
//!
//! Owns: [`scrub`], whole config files of real tools rendered from templates with fresh fake
//! values, each line labelled; [`search`], facts in several registers made offline from the
//! machine's own man pages and package docs, with queries of several kinds and their targets.
//! Guarantees: deterministic (seeded generators, sorted reads), offline, no real credential.
//! The search corpus is measured by `cargo xtask bench` (its `held-out corpus` rows).
//! Must never: be read by or fed to a tuning loop (the scrubber's `scrub/corpus/`, the bench's
//! realistic corpus), nor depend on the code it measures: it only produces text and labels.

pub mod scrub;
pub mod search;
