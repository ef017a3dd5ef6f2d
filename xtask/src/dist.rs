//! `cargo xtask dist [--check]`: the release archive.
//!
//! Builds the four bins with the release profile (LTO, one codegen unit, stripped) and packs them
//! with an archive README (it starts from the download: check, unpack, put on `PATH`, attach),
//! LICENSE and a SHA256SUMS file into `dist/clawboo-mcp-<version>-<target>.tar.gz`, with
//! `<archive>.sha256` beside it. `--check` then verifies the archive's own checksum, unpacks it,
//! verifies SHA256SUMS, checks that each bin is static (no ELF interpreter; `ldd` is shown), probes
//! the unpacked bins (as root, also inside an empty `chroot`: no libc, no `/etc`, nothing), and packs
//! the same inputs a second time to prove the bytes do not change.
//!
//! Static: on `*-linux-gnu` the bins link glibc statically (`-C target-feature=+crt-static`), so
//! they start on any x86_64 Linux, whatever its libc. `x86_64-unknown-linux-musl` would be the
//! cleaner choice, but this project's toolchain has no musl standard library and none can be
//! fetched (rustup cannot download targets here; Debian packages only its own rustc's std, for
//! other versions and targets). What static glibc means: a host name is resolved through glibc's
//! built-in `files` and `dns` sources (`/etc/hosts`, `/etc/resolv.conf`); an `/etc/nsswitch.conf`
//! that relies on other sources (mdns, systemd-resolved's module, LDAP) is not honoured for them.
//! IP addresses, as in the default Ollama address, never need a lookup. Other targets (macOS)
//! are built as usual.
//!
//! Reproducible: the tarball is written in process with the `tar` crate, not by the system `tar`:
//! ustar entries in a fixed order, mtime from `SOURCE_DATE_EPOCH` or else the commit time of
//! `HEAD`, owner root (0:0), modes 0755 for the folder and bins and 0644 for documents; it is
//! compressed with `flate2`'s pure-Rust backend at level 9 with no name and no time in the gzip
//! header. The same bins give the same bytes on any machine, with no `gzip` installed. The bins
//! themselves come from cargo; a release build of one commit with one toolchain in one folder is
//! expected to give the same bins. Hashes are SHA-256 by `ring` (already the library's
//! dependency), written in `sha256sum`'s format so a user checks them with `sha256sum -c`.
//! `--check` unpacks with the system `tar`, the reader a user has, so the archive is proven to
//! open with it.
//!
//! Must never: leave a half-written archive or checksum under the final name (each is written
//! beside it first).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use clawboo_tests::{Server, TempDir, target_dir, workspace_root};
use flate2::{Compression, GzBuilder};
use tar::{Builder, EntryType, Header};

use crate::probe;
use crate::usage;

/// `cargo xtask dist [--check]` (the flag read by `main`).
pub fn run(check: bool) -> anyhow::Result<()> {
    let target = host_target()?;
    let bins = build_release(&target)?;
    let name = format!("clawboo-mcp-{}-{target}", env!("CARGO_PKG_VERSION"));
    let files = archive_files(&bins, &target)?;
    let mtime = source_date()?;
    let archive = write_archive(&name, &files, mtime)?;
    if check {
        check_archive(&archive)?;
        let repacked = gzip(&tar_bytes(&name, &files, mtime)?)?;
        if repacked != fs::read(&archive)? {
            bail!(
                "packing the same bins twice gave different bytes: the archive is not reproducible"
            );
        }
        println!("reproducible: packing the same bins again gives identical bytes");
    }
    Ok(())
}

/// The target triple of the host toolchain.
fn host_target() -> anyhow::Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV printed no host line")
}

/// Whether `target` is built with glibc linked in statically.
fn static_glibc(target: &str) -> bool {
    target.ends_with("-linux-gnu")
}

/// Builds the four bins for `target` with the release profile, statically linked where
/// [`static_glibc`]; returns the folder holding them. `--target` keeps these flags off build
/// scripts and out of `target/release`, which `probe` and `bench` use.
fn build_release(target: &str) -> anyhow::Result<PathBuf> {
    let mut extra: Vec<(&str, &str)> = Vec::new();
    if static_glibc(target) {
        println!("dist: building static release bins for {target} (glibc linked in)");
        extra.push(("RUSTFLAGS", "-C target-feature=+crt-static"));
    } else {
        println!("dist: building release bins for {target}");
    }
    probe::cargo_build(&["--release", "--target", target], &extra)?;
    Ok(target_dir().join(target).join("release"))
}

/// One file of the archive, under the archive's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveFile {
    /// The name inside the folder.
    pub name: String,
    /// Unix permission bits.
    pub mode: u32,
    /// The content.
    pub bytes: Vec<u8>,
}

/// Every file of the archive, in archive order: the bins, README.md, LICENSE, SHA256SUMS.
fn archive_files(bins: &Path, target: &str) -> anyhow::Result<Vec<ArchiveFile>> {
    let mut files = Vec::new();
    println!("{:<24} {:>12}", "bin", "bytes");
    for bin in probe::bins() {
        let path = bins.join(bin);
        let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        println!("{bin:<24} {:>12}", bytes.len());
        files.push(ArchiveFile {
            name: bin.to_owned(),
            mode: 0o755,
            bytes,
        });
    }
    let readme =
        fs::read_to_string(workspace_root().join("README.md")).context("cannot read README.md")?;
    let license = fs::read(workspace_root().join("LICENSE")).context("cannot read LICENSE")?;
    files.push(ArchiveFile {
        name: "README.md".into(),
        mode: 0o644,
        bytes: archive_readme(&readme, target).into_bytes(),
    });
    files.push(ArchiveFile {
        name: "LICENSE".into(),
        mode: 0o644,
        bytes: license,
    });
    let sums: String = files
        .iter()
        .map(|file| sha256_line(&file.name, &file.bytes))
        .collect();
    files.push(ArchiveFile {
        name: "SHA256SUMS".into(),
        mode: 0o644,
        bytes: sums.into_bytes(),
    });
    Ok(files)
}

/// The sections of the source README that only make sense in a clone of the repository.
const SOURCE_ONLY_SECTIONS: [&str; 3] = ["Automation", "Release archive", "Layout"];

/// The archive's README: how to install from the download, then the source README's sections
/// about using the bins. Its first screen (title, build commands) and the sections about the source
/// tree are left out, so it links nothing the archive lacks.
pub fn archive_readme(source: &str, target: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let repository = env!("CARGO_PKG_REPOSITORY");
    let folder = format!("clawboo-mcp-{version}-{target}");
    let libc = if static_glibc(target) {
        "The bins are statically linked (glibc built in): they need no libc on the machine and run on \
         any x86_64 Linux distribution. Host names (say `OLLAMA_HOST=http://ollama.lan:11434`) are \
         resolved from `/etc/hosts` and DNS only; IP addresses never need a lookup.\n"
            .to_owned()
    } else {
        format!("The bins are built for {target}.\n")
    };
    let mut out = format!(
        "# clawboo-mcp {version} ({target})\n\n\
         Four Model Context Protocol servers that let a team of AI coding agents (Claude Code, Codex,\n\
         OpenClaw, …) coordinate through one shared SQLite file.\n\n\
         ## Install from this archive\n\n\
         ```sh\n\
         sha256sum -c {folder}.tar.gz.sha256      # beside the download: the archive is intact\n\
         tar -xzf {folder}.tar.gz\n\
         cd {folder} && sha256sum -c SHA256SUMS   # every file is intact\n\
         install -m 755 clawboo-mcp-* ~/.local/bin/   # or /usr/local/bin, any folder on PATH\n\
         clawboo-mcp-tasks --version\n\
         clawboo-mcp-tasks attach --runtime claude-code   # prints the command that plugs it in\n\
         ```\n\n\
         {libc}\n\
         Source, issues and the code map: {repository}\n\n"
    );
    for section in source.split("\n## ").skip(1) {
        let title = section.lines().next().unwrap_or("").trim();
        if !SOURCE_ONLY_SECTIONS.contains(&title) {
            out.push_str("## ");
            out.push_str(section.trim_end());
            out.push_str("\n\n");
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The archive's timestamps: `SOURCE_DATE_EPOCH`, else the commit time of `HEAD`, else 0.
fn source_date() -> anyhow::Result<u64> {
    if let Ok(value) = std::env::var("SOURCE_DATE_EPOCH") {
        return value.trim().parse().map_err(|_| {
            usage(format!(
                "SOURCE_DATE_EPOCH={value:?} is not a number of seconds"
            ))
        });
    }
    let commit_time = Command::new("git")
        .current_dir(workspace_root())
        .args(["log", "-1", "--format=%ct", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok());
    Ok(commit_time.unwrap_or(0))
}

/// Writes `dist/<name>.tar.gz` and `dist/<name>.tar.gz.sha256`, each beside its final name first.
fn write_archive(name: &str, files: &[ArchiveFile], mtime: u64) -> anyhow::Result<PathBuf> {
    let dist = workspace_root().join("dist");
    fs::create_dir_all(&dist).with_context(|| format!("cannot create {}", dist.display()))?;
    let stale = dist.join(name);
    if stale.is_dir() {
        // The staging folder of older versions of this command.
        fs::remove_dir_all(&stale).with_context(|| format!("cannot clear {}", stale.display()))?;
    }
    let file_name = format!("{name}.tar.gz");
    let archive = dist.join(&file_name);
    let partial = dist.join(format!("{file_name}.partial"));
    let bytes = gzip(&tar_bytes(name, files, mtime)?)?;
    fs::write(&partial, &bytes).with_context(|| format!("cannot write {}", partial.display()))?;
    fs::rename(&partial, &archive)?;
    let sum_line = sha256_line(&file_name, &bytes);
    let sum_file = dist.join(format!("{file_name}.sha256"));
    let sum_partial = dist.join(format!("{file_name}.sha256.partial"));
    fs::write(&sum_partial, &sum_line)?;
    fs::rename(&sum_partial, &sum_file)?;
    println!(
        "dist/{file_name} ({} bytes), sha256 {}",
        fs::metadata(&archive)?.len(),
        sum_line.split_whitespace().next().unwrap_or("?")
    );
    Ok(archive)
}

/// A POSIX ustar archive of `files` under the folder `folder`, every entry owned by root (0:0)
/// with mtime `mtime`, in the order given.
pub fn tar_bytes(folder: &str, files: &[ArchiveFile], mtime: u64) -> anyhow::Result<Vec<u8>> {
    let header = |path: &str, mode: u32, size: u64, kind: EntryType| -> anyhow::Result<Header> {
        let mut header = Header::new_ustar();
        header
            .set_path(path)
            .with_context(|| format!("archive path {path:?} does not fit a ustar header"))?;
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("root")?;
        header.set_groupname("root")?;
        header.set_mtime(mtime);
        header.set_size(size);
        header.set_cksum();
        Ok(header)
    };
    let mut tar = Builder::new(Vec::new());
    let folder_entry = header(&format!("{folder}/"), 0o755, 0, EntryType::Directory)?;
    tar.append(&folder_entry, std::io::empty())?;
    for file in files {
        let path = format!("{folder}/{}", file.name);
        let size = file.bytes.len() as u64;
        tar.append(
            &header(&path, file.mode, size, EntryType::Regular)?,
            file.bytes.as_slice(),
        )?;
    }
    Ok(tar.into_inner()?)
}

/// `data` compressed with gzip at level 9, with no name and no time in the header.
fn gzip(data: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut encoder = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::best());
    encoder.write_all(data)?;
    Ok(encoder.finish()?)
}

/// The line `sha256sum` prints for a file `name` holding `bytes`: `<hex>  <name>`.
fn sha256_line(name: &str, bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}  {name}\n")
}

/// The `sha256sum` lines of the files `names` in `dir`, in that order.
fn sha256_lines(dir: &Path, names: &[&str]) -> anyhow::Result<String> {
    names
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let bytes =
                fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(sha256_line(name, &bytes))
        })
        .collect()
}

fn check_archive(archive: &Path) -> anyhow::Result<()> {
    let dist = archive.parent().context("the archive has no folder")?;
    let file_name = archive
        .file_name()
        .and_then(|n| n.to_str())
        .context("the archive's name is not UTF-8")?;
    let recorded = fs::read_to_string(dist.join(format!("{file_name}.sha256")))
        .with_context(|| format!("no {file_name}.sha256 beside the archive"))?;
    if sha256_lines(dist, &[file_name])? != recorded {
        bail!("{file_name} does not match {file_name}.sha256");
    }
    println!("{file_name} matches {file_name}.sha256");

    let unpacked = TempDir::new("dist-check");
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .context("cannot run tar")?;
    if !status.success() {
        bail!("tar could not unpack {}", archive.display());
    }
    let root = fs::read_dir(unpacked.path())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .context("the archive holds no folder")?;
    let recorded = fs::read_to_string(root.join("SHA256SUMS")).context("no SHA256SUMS")?;
    let files: Vec<&str> = recorded
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    if files.len() != probe::bins().len() + 2 {
        bail!(
            "SHA256SUMS lists {} files, expected {}",
            files.len(),
            probe::bins().len() + 2
        );
    }
    if sha256_lines(&root, &files)? != recorded {
        bail!("the unpacked files do not match SHA256SUMS");
    }
    println!("the unpacked files match SHA256SUMS");

    let target = host_target()?;
    if static_glibc(&target) {
        for bin in probe::bins() {
            let path = root.join(bin);
            if let Some(interpreter) = elf_interpreter(&fs::read(&path)?)? {
                bail!("{bin} is dynamically linked (interpreter {interpreter})");
            }
            println!(
                "{bin}: static (no ELF interpreter); ldd: {}",
                ldd_verdict(&path)
            );
        }
    }
    println!("probing the unpacked bins");
    probe::probe_bins(|launch| {
        Server::spawn_program(root.join(launch.bin), launch.args, launch.db, &launch.env())
    })?;
    if static_glibc(&target) {
        probe_in_empty_root(&root)?;
    }
    Ok(())
}

/// The program interpreter an ELF64 executable asks for (`PT_INTERP`), `None` when it has none
/// (a static executable the kernel starts by itself).
pub fn elf_interpreter(elf: &[u8]) -> anyhow::Result<Option<String>> {
    let word = |at: usize, len: usize| -> anyhow::Result<u64> {
        let bytes = elf.get(at..at + len).context("a truncated ELF file")?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    };
    if elf.get(0..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        bail!("not a little-endian ELF64 file");
    }
    let table = word(0x20, 8)? as usize;
    let entry_size = word(0x36, 2)? as usize;
    let count = word(0x38, 2)? as usize;
    for index in 0..count {
        let header = table + index * entry_size;
        if word(header, 4)? == 3 {
            let offset = word(header + 8, 8)? as usize;
            let size = word(header + 32, 8)? as usize;
            let raw = elf
                .get(offset..offset + size)
                .context("a truncated PT_INTERP")?;
            return Ok(Some(
                String::from_utf8_lossy(raw)
                    .trim_end_matches('\0')
                    .to_owned(),
            ));
        }
    }
    Ok(None)
}

/// What `ldd` says of `path`, on one line (or why it could not be asked).
fn ldd_verdict(path: &Path) -> String {
    match Command::new("ldd").arg(path).output() {
        Ok(out) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        }
        Err(e) => format!("not available ({e})"),
    }
}

/// As root, probes each bin inside an empty `chroot`: the folder holds the bin and nothing else,
/// no libc, no `/etc`, no `/tmp`, which is less than any distribution's image. Skipped, with a
/// line saying so, without root or `chroot`.
fn probe_in_empty_root(unpacked: &Path) -> anyhow::Result<()> {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    if !is_root {
        println!("empty-root probe skipped: it needs root for chroot");
        return Ok(());
    }
    let empty = TempDir::new("dist-chroot");
    for bin in probe::bins() {
        fs::copy(unpacked.join(bin), empty.path().join(bin))?;
    }
    let root_arg = empty.path().display().to_string();
    println!("probing the bins in an empty chroot (no libc, no /etc)");
    probe::probe_bins(|launch| {
        let inside = format!("/{}", launch.bin);
        let mut args = vec![root_arg.as_str(), inside.as_str()];
        args.extend(launch.args);
        let mut env = vec![("HOME", "/")];
        if launch.vault.is_some() {
            env.push(("MEMORY_DIR", "/memory"));
        }
        Server::spawn_program(
            PathBuf::from("chroot"),
            &args,
            Path::new(&format!("/{}.db", launch.bin)),
            &env,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<ArchiveFile> {
        vec![
            ArchiveFile {
                name: "clawboo-mcp-tasks".into(),
                mode: 0o755,
                bytes: (0..3000u32).map(|i| (i * 7 % 251) as u8).collect(),
            },
            ArchiveFile {
                name: "README.md".into(),
                mode: 0o644,
                bytes: b"# hello\n".to_vec(),
            },
        ]
    }

    #[test]
    fn packing_the_same_files_twice_gives_identical_bytes() {
        let first = gzip(&tar_bytes("pkg-1", &files(), 1_700_000_000).unwrap()).unwrap();
        let second = gzip(&tar_bytes("pkg-1", &files(), 1_700_000_000).unwrap()).unwrap();
        assert_eq!(first, second);
        assert_eq!(&first[..3], &[0x1f, 0x8b, 8], "a gzip stream (deflate)");
        assert_eq!(
            &first[3..8],
            &[0, 0, 0, 0, 0],
            "no name and no time in the header"
        );
        let later = gzip(&tar_bytes("pkg-1", &files(), 1_700_000_001).unwrap()).unwrap();
        assert_ne!(first, later, "the mtime is in the archive");
    }

    #[test]
    fn the_system_tar_reads_the_archive_with_fixed_owner_mode_and_time() {
        let dir = TempDir::new("dist-tar");
        let archive = dir.path().join("pkg.tar.gz");
        let bytes = gzip(&tar_bytes("pkg-1", &files(), 1_700_000_000).unwrap()).unwrap();
        fs::write(&archive, bytes).unwrap();
        let listing = Command::new("tar")
            .args(["-tvzf"])
            .arg(&archive)
            .env("TZ", "UTC")
            .output()
            .expect("tar");
        assert!(listing.status.success());
        let listing = String::from_utf8_lossy(&listing.stdout);
        let lines: Vec<&str> = listing.lines().collect();
        assert_eq!(lines.len(), 3, "{listing}");
        assert!(lines[0].starts_with("drwxr-xr-x root/root"), "{listing}");
        assert!(
            lines[1].starts_with("-rwxr-xr-x root/root")
                && lines[1].ends_with("pkg-1/clawboo-mcp-tasks"),
            "{listing}"
        );
        assert!(
            lines[2].starts_with("-rw-r--r-- root/root") && lines[2].ends_with("pkg-1/README.md"),
            "{listing}"
        );
        assert!(
            lines.iter().all(|l| l.contains("2023-11-14 22:13")),
            "{listing}"
        );
        let out = dir.path().join("out");
        fs::create_dir(&out).unwrap();
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            fs::read(out.join("pkg-1/clawboo-mcp-tasks")).unwrap(),
            files()[0].bytes
        );
    }

    #[test]
    fn checksums_are_sha256sum_lines() {
        assert_eq!(
            sha256_line("empty", b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty\n"
        );
        assert_eq!(
            sha256_line("abc", b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  abc\n"
        );
    }

    #[test]
    fn a_name_too_long_for_ustar_is_refused() {
        let mut long = files();
        long[0].name = "x".repeat(120);
        assert!(tar_bytes("pkg", &long, 0).is_err());
    }

    #[test]
    fn the_archive_readme_starts_from_the_download_and_links_nothing_missing() {
        let source = "# clawboo-mcp\n\nOn a fresh machine with Rust installed:\n\n## Use it\n\nattach\n\n\
                      ## Automation\n\ncargo xtask\n\n## Layout\n\nSee [ARCHITECTURE.md](ARCHITECTURE.md).\n";
        let readme = archive_readme(source, "x86_64-unknown-linux-gnu");
        let install = readme
            .find("## Install from this archive")
            .expect("install section");
        assert!(
            install < readme.find("## Use it").expect("kept section"),
            "{readme}"
        );
        assert!(readme.contains("tar -xzf clawboo-mcp-"), "{readme}");
        assert!(readme.contains("sha256sum -c"), "{readme}");
        assert!(readme.contains("PATH"), "{readme}");
        assert!(readme.contains("statically linked"), "{readme}");
        for gone in ["Rust installed", "ARCHITECTURE.md", "cargo xtask"] {
            assert!(!readme.contains(gone), "{gone} in {readme}");
        }
    }

    #[test]
    fn the_real_readme_becomes_an_archive_readme_without_dangling_links() {
        let source = fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let readme = archive_readme(&source, "x86_64-unknown-linux-gnu");
        assert!(readme.starts_with("# clawboo-mcp "), "{readme}");
        assert!(readme.contains("## Use it with"), "{readme}");
        for gone in [
            "](ARCHITECTURE.md)",
            "](#release-archive)",
            "Rust installed",
            "## Layout",
        ] {
            assert!(!readme.contains(gone), "{gone} in the archive README");
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn elf_interpreter_tells_a_dynamic_executable_from_a_static_one() {
        let this = fs::read(std::env::current_exe().unwrap()).unwrap();
        // The test binary is built the ordinary (dynamic) way.
        let interpreter = elf_interpreter(&this).unwrap();
        assert!(
            interpreter.is_some_and(|i| i.contains("ld-linux")),
            "a dynamic test binary"
        );
        assert!(elf_interpreter(b"not an elf").is_err());
    }
}
