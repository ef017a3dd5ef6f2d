//! The lifecycle: `STRATEGY.md` knobs, decay, and `memory_compact` (consolidate → promote →
//! prune, spec §7), each action logged in `lifecycle_log`.
//!
//! Owns: [`Strategy`] (the documented numeric knobs, each falling back to the reference's constant
//! when absent, unparsable or out of range; a missing or unreadable file is all defaults, never an
//! error) and the rules: episodes of one UTC day sharing a tag merge (pinned ones never do); an
//! episode scoring above 0.7 with `- ` bullets is promoted into `entities/projects/promoted-<name>`
//! once; memories below `prune_threshold` (and older than `prune_min_age_days`) are archived unless
//! pinned or about a person.
//!
//! Guarantees: compact runs inside one `BEGIN IMMEDIATE`, so no other writer sees it half done;
//! a merged member's credit row is dropped only when no `credit_events` row refers to it.
//! Must never: fail a compact because of `STRATEGY.md`.

use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use super::engine::{self, CreditRow, FileRow};
use super::frontmatter::Frontmatter;
use super::index::{Delta, Refresh};
use super::{Brain, BrainError, MemoryType, time, vault};

/// The knobs of `STRATEGY.md` (config names of the reference's docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    /// EMA learning rate, (0, 1]. Default 0.1.
    pub alpha: f64,
    /// Score of a new credit row, [0, 1]. Default 0.5.
    pub initial_score: f64,
    /// Per-day decay rate of a new credit row, ≥ 0. Default 0.01.
    pub decay_rate: f64,
    /// Prune below this score, [0, 1]. Default 0.2.
    pub prune_threshold: f64,
    /// Never prune a memory younger than this many days. Default 0 (the reference has no rule).
    pub prune_min_age_days: f64,
    /// `MEMORY.md` budget in tokens. Default 5000.
    pub max_context_budget: i64,
    /// Hours between consolidations, for a host's scheduler (the server has no timers).
    pub consolidation_interval: Option<f64>,
    /// Hours between prunings, for a host's scheduler.
    pub prune_interval: Option<f64>,
}

impl Default for Strategy {
    fn default() -> Self {
        Self {
            alpha: 0.1,
            initial_score: 0.5,
            decay_rate: 0.01,
            prune_threshold: 0.2,
            prune_min_age_days: 0.0,
            max_context_budget: 5000,
            consolidation_interval: None,
            prune_interval: None,
        }
    }
}

/// The promotion threshold (strict `>`), the transfer rate and the demoted episode score.
const PROMOTE_ABOVE: f64 = 0.7;
const PROMOTE_TRANSFER: f64 = 0.25;
const PROMOTED_EPISODE_CAP: f64 = 0.69;

/// `key: value` / `key = value` on one line, after list markers and emphasis; `None` otherwise.
fn knob(line: &str) -> Option<(&str, f64)> {
    let line = line
        .trim()
        .trim_start_matches(['-', '*', '+', '>', ' ', '`', '|'])
        .trim_start();
    let end = line
        .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(end);
    let rest = rest.trim_start_matches(['*', '`', ' ']);
    let rest = rest.strip_prefix([':', '='])?;
    let value = rest
        .trim()
        .trim_matches(['*', '`'])
        .split(|c: char| c.is_whitespace() || c == ',' || c == '|' || c == '`')
        .next()?;
    Some((key, value.parse::<f64>().ok().filter(|v| v.is_finite())?))
}

impl Strategy {
    /// Reads the knobs from `text`; anything else in it is prose and ignored.
    pub fn parse(text: &str) -> Self {
        let mut s = Self::default();
        for (key, v) in text.lines().filter_map(knob) {
            match key {
                "alpha" if v > 0.0 && v <= 1.0 => s.alpha = v,
                "initial_score" if (0.0..=1.0).contains(&v) => s.initial_score = v,
                "decay_rate" if v >= 0.0 => s.decay_rate = v,
                "prune_threshold" if (0.0..=1.0).contains(&v) => s.prune_threshold = v,
                "prune_min_age_days" if v >= 0.0 => s.prune_min_age_days = v,
                "max_context_budget" if (0.0..=1e9).contains(&v) => {
                    s.max_context_budget = v.floor() as i64;
                }
                "consolidation_interval" if v > 0.0 => s.consolidation_interval = Some(v),
                "prune_interval" if v > 0.0 => s.prune_interval = Some(v),
                _ => {}
            }
        }
        s
    }

    /// `<root>/STRATEGY.md`'s knobs; defaults when it is missing or unreadable.
    pub fn load(root: &Path) -> Self {
        std::fs::read_to_string(root.join("STRATEGY.md"))
            .map(|t| Self::parse(&t))
            .unwrap_or_default()
    }

    /// Whether pruning would archive a live memory with this credit row now.
    pub(super) fn prunable(&self, c: &CreditRow, pinned: bool, now_ms: i64) -> bool {
        let old_enough = self.prune_min_age_days <= 0.0
            || time::parse_iso(&c.created_at)
                .is_some_and(|t| (now_ms - t) as f64 / DAY_MS >= self.prune_min_age_days);
        c.score < self.prune_threshold
            && !c.id.starts_with("entity-people-")
            && !pinned
            && old_enough
    }
}

const DAY_MS: f64 = 86_400_000.0;

/// One compaction in progress: its transaction, the clock, the knobs and the report so far.
struct Pass<'a> {
    tx: &'a Connection,
    delta: &'a mut Delta,
    now_ms: i64,
    now: &'a str,
    strategy: &'a Strategy,
    report: CompactReport,
}

/// `memory_compact`'s answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CompactReport {
    /// Merged episodes written.
    pub consolidated: usize,
    /// Episodes promoted.
    pub promoted: usize,
    /// Memories archived.
    pub pruned: usize,
    /// One line per action (decay, then merges, promotions, prunings).
    pub details: Vec<String>,
}

/// What a decay run did.
#[derive(Debug, Clone, Serialize)]
pub struct DecayReport {
    /// Credit rows whose score decayed.
    pub decayed: usize,
    /// The `lifecycle_log` details (`null` when nothing decayed).
    pub details: Option<String>,
}

fn day_text(days: f64) -> String {
    if days.fract() == 0.0 {
        format!("{}", days as i64)
    } else {
        format!("{days}")
    }
}

impl Brain {
    /// Decays scores: by `days` for every row when given (the reference's `applyDecay`), else each
    /// row by the whole-or-more days since it was last accessed or last decayed.
    pub fn decay(&self, days: Option<f64>) -> Result<DecayReport, BrainError> {
        let (now_ms, now) = self.now();
        self.in_vault(Refresh::Skip, |tx, _| {
            let report = decay_in(tx, now_ms, &now, days)?;
            if report.decayed > 0 {
                self.write_digest(tx, &self.strategy())?;
            }
            Ok(report)
        })
    }

    /// `memory_compact`: decay, consolidate, promote, prune, then `MEMORY.md`.
    pub fn compact(&self) -> Result<CompactReport, BrainError> {
        let (now_ms, now) = self.now();
        let strategy = self.strategy();
        self.in_vault(Refresh::Strict, |tx, delta| {
            let mut pass = Pass {
                tx,
                delta,
                now_ms,
                now: &now,
                strategy: &strategy,
                report: CompactReport {
                    consolidated: 0,
                    promoted: 0,
                    pruned: 0,
                    details: Vec::new(),
                },
            };
            let decayed = decay_in(tx, now_ms, &now, None)?;
            pass.report.details.extend(decayed.details);
            self.consolidate(&mut pass)?;
            self.promote(&mut pass)?;
            self.prune(&mut pass)?;
            self.write_digest(tx, &strategy)?;
            Ok(pass.report)
        })
    }

    fn score_of(tx: &Connection, id: &str, now: &str, s: &Strategy) -> Result<f64, BrainError> {
        engine::ensure_record(tx, id, now, Self::row_defaults(s))?;
        Ok(engine::credit(tx, id)?.map_or(s.initial_score, |c| c.score))
    }

    fn consolidate(&self, pass: &mut Pass<'_>) -> Result<(), BrainError> {
        let (tx, now, strategy, now_ms) = (pass.tx, pass.now, pass.strategy, pass.now_ms);
        let mut days: std::collections::BTreeMap<String, Vec<FileRow>> = Default::default();
        for ep in engine::files_of_type(tx, MemoryType::Episode)? {
            if ep.fm.pinned {
                continue;
            }
            let Some(day) = ep
                .fm
                .created
                .get(..10)
                .filter(|d| time::parse_iso(d).is_some())
            else {
                continue;
            };
            days.entry(day.to_owned()).or_default().push(ep);
        }
        let mut stamp = now_ms;
        for (day, eps) in days {
            let mut visited = vec![false; eps.len()];
            for seed in 0..eps.len() {
                if visited[seed] {
                    continue;
                }
                visited[seed] = true;
                let mut cluster = vec![seed];
                let mut tags = eps[seed].fm.tags.clone();
                for j in seed + 1..eps.len() {
                    if !visited[j] && eps[j].fm.tags.iter().any(|t| tags.contains(t)) {
                        visited[j] = true;
                        cluster.push(j);
                        for t in &eps[j].fm.tags {
                            if !tags.contains(t) {
                                tags.push(t.clone());
                            }
                        }
                    }
                }
                if cluster.len() < 2 {
                    continue;
                }
                let members: Vec<&FileRow> = cluster.iter().map(|&i| &eps[i]).collect();
                let mut body = format!("# Consolidated Episode ({day})");
                for m in &members {
                    body.push_str(&format!("\n\n## {}\n\n{}", m.name, m.body.trim()));
                }
                let mut sum = 0.0;
                for m in &members {
                    sum += Self::score_of(tx, &m.fm.id, now, strategy)?;
                }
                let noon = time::parse_iso(&day).unwrap_or(now_ms) + 43_200_000;
                let noon_iso = time::iso(noon);
                let month = &noon_iso[..7];
                let first = if vault::is_kebab(&members[0].name) {
                    members[0].name.as_str()
                } else {
                    "episode"
                };
                let stored = loop {
                    let slug = format!("{first}-merged-{stamp}");
                    stamp += 1;
                    let fm = Frontmatter {
                        id: format!("episode-{month}-{slug}"),
                        kind: MemoryType::Episode,
                        category: month.to_owned(),
                        tags: tags.clone(),
                        created: noon_iso.clone(),
                        updated: noon_iso.clone(),
                        pinned: false,
                    };
                    let rel = format!("episodes/{month}/{slug}.md");
                    match self.write_new(
                        tx,
                        pass.delta,
                        fm,
                        rel,
                        &slug,
                        &body,
                        Self::row_defaults(strategy),
                        now,
                    ) {
                        Err(BrainError::Exists(_)) => continue,
                        other => break other?,
                    }
                };
                let score = sum.min(1.0);
                engine::set_score(tx, &stored.id, score)?;
                let mut targets = Vec::new();
                for m in &members {
                    self.archive_row(tx, pass.delta, m)?;
                    engine::drop_record_without_events(tx, &m.fm.id)?;
                    targets.push(m.fm.id.clone());
                }
                targets.push(stored.id.clone());
                let detail = format!(
                    "Merged {} episodes on {day} into {} (score: {score:.3})",
                    members.len(),
                    stored.id
                );
                engine::log(tx, "consolidate", &targets, &detail, now)?;
                pass.report.details.push(detail);
                pass.report.consolidated += 1;
            }
        }
        Ok(())
    }

    fn promote(&self, pass: &mut Pass<'_>) -> Result<(), BrainError> {
        let (tx, now, strategy) = (pass.tx, pass.now, pass.strategy);
        let done = engine::promoted_episodes(tx)?;
        for ep in engine::files_of_type(tx, MemoryType::Episode)? {
            if done.contains(&ep.fm.id) {
                continue;
            }
            let s = Self::score_of(tx, &ep.fm.id, now, strategy)?;
            if s <= PROMOTE_ABOVE {
                continue;
            }
            let facts: Vec<&str> = ep
                .body
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("- "))
                .collect();
            let target = format!("promoted-{}", ep.name);
            if facts.is_empty() || !vault::is_kebab(&target) {
                continue;
            }
            let rel = format!("entities/projects/{target}.md");
            let entity_id = match engine::file_by_path(tx, &rel)? {
                None => {
                    let mut tags = ep.fm.tags.clone();
                    tags.push("promoted".to_owned());
                    let fm = Frontmatter {
                        id: format!("entity-projects-{target}"),
                        kind: MemoryType::Entity,
                        category: "projects".to_owned(),
                        tags,
                        created: now.to_owned(),
                        updated: now.to_owned(),
                        pinned: false,
                    };
                    let body = format!("# Promoted from {}\n\n{}", ep.name, facts.join("\n"));
                    let defaults = Self::row_defaults(strategy);
                    self.write_new(tx, pass.delta, fm, rel, &target, &body, defaults, now)?
                        .id
                }
                Some(existing) => {
                    let have: Vec<&str> = existing
                        .body
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .collect();
                    let missing: Vec<&str> = facts
                        .iter()
                        .copied()
                        .filter(|f| !have.contains(f))
                        .collect();
                    let id = existing.fm.id.clone();
                    if !missing.is_empty() {
                        let body = format!("{}\n{}", existing.body.trim(), missing.join("\n"));
                        self.rewrite(tx, pass.delta, existing, &body, now)?;
                    }
                    id
                }
            };
            let entity_score = Self::score_of(tx, &entity_id, now, strategy)?;
            let entity_score = (entity_score + PROMOTE_TRANSFER * s).min(1.0);
            engine::set_score(tx, &entity_id, entity_score)?;
            engine::set_score(tx, &ep.fm.id, s.min(PROMOTED_EPISODE_CAP))?;
            engine::log(
                tx,
                "promote",
                &[ep.fm.id.clone(), entity_id.clone()],
                &format!("Promoted facts from {} into {entity_id}", ep.fm.id),
                now,
            )?;
            pass.report.details.push(format!(
                "Promoted {} facts from {} to {entity_id} (score: {entity_score:.3})",
                facts.len(),
                ep.fm.id
            ));
            pass.report.promoted += 1;
        }
        Ok(())
    }

    fn prune(&self, pass: &mut Pass<'_>) -> Result<(), BrainError> {
        let (tx, now, strategy, now_ms) = (pass.tx, pass.now, pass.strategy, pass.now_ms);
        let mut rows = engine::live_credits(tx)?;
        rows.retain(|(c, _, pinned)| strategy.prunable(c, *pinned, now_ms));
        rows.sort_by(|a, b| a.0.score.total_cmp(&b.0.score));
        for (c, _, _) in rows {
            let Some(row) = engine::file_by_id(tx, &c.id)? else {
                continue;
            };
            self.archive_row(tx, pass.delta, &row)?;
            let detail = format!("Archived {} (score: {:.3})", c.id, c.score);
            engine::log(tx, "prune", std::slice::from_ref(&c.id), &detail, now)?;
            pass.report.details.push(detail);
            pass.report.pruned += 1;
        }
        Ok(())
    }
}

/// Decays inside the caller's transaction; logs one `decay` row when anything decayed.
fn decay_in(
    tx: &Connection,
    now_ms: i64,
    now: &str,
    days: Option<f64>,
) -> Result<DecayReport, BrainError> {
    let rows = engine::decay_rows(tx)?;
    let mut targets = Vec::new();
    let details = match days {
        Some(d) if d.is_nan() || d <= 0.0 || d.is_infinite() => None,
        Some(d) => {
            for (c, _) in &rows {
                engine::set_decayed(tx, &c.id, c.score * (-c.decay_rate * d).exp(), now)?;
                targets.push(c.id.clone());
            }
            Some(format!("Applied decay for {} day(s)", day_text(d)))
        }
        None => {
            for (c, until) in &rows {
                let since = [Some(&c.last_accessed), until.as_ref()]
                    .into_iter()
                    .flatten()
                    .filter_map(|t| time::parse_iso(t))
                    .max();
                let Some(since) = since else { continue };
                let elapsed = (now_ms - since) as f64 / DAY_MS;
                if elapsed >= 1.0 {
                    engine::set_decayed(tx, &c.id, c.score * (-c.decay_rate * elapsed).exp(), now)?;
                    targets.push(c.id.clone());
                }
            }
            (!targets.is_empty()).then(|| {
                format!(
                    "Applied decay by days since last access to {} memory(ies)",
                    targets.len()
                )
            })
        }
    };
    if let Some(d) = &details {
        engine::log(tx, "decay", &targets, d, now)?;
    }
    Ok(DecayReport {
        decayed: targets.len(),
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_reads_documented_knobs_and_ignores_prose() {
        let s = Strategy::parse(
            "# Strategy\n\n## Pruning Rules\n- Prune when credit score < 0.2 and age > 30 days\n\
             - prune_threshold: 0.3\n* **alpha**: 0.5\n`decay_rate = 0.02`\n\
             Maximum tokens for MEMORY.md: 5000\nmax_context_budget: 800 tokens\n\
             initial_score: 7\nprune_min_age_days: -1\nunknown_knob: 3\n",
        );
        assert_eq!(s.prune_threshold, 0.3);
        assert_eq!(s.alpha, 0.5);
        assert_eq!(s.decay_rate, 0.02);
        assert_eq!(s.max_context_budget, 800);
        assert_eq!(s.initial_score, 0.5, "out of range falls back");
        assert_eq!(s.prune_min_age_days, 0.0);
    }

    #[test]
    fn garbage_strategy_is_all_defaults() {
        assert_eq!(
            Strategy::parse("alpha: lots\n\0\u{fffd}: ::"),
            Strategy::default()
        );
        assert_eq!(Strategy::parse(""), Strategy::default());
    }
}
