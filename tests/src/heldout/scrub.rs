//! The held-out scrub corpus (issue 24): whole config files of real tools (`.pgpass`, `.netrc`,
//! kubeconfig, `.npmrc`, `.pypirc`, Docker's `config.json`, framework `.env` files, Rails
//! `database.yml`, Django `settings.py`, Spring properties, AWS `credentials`, a GCP
//! service-account key, Azure connection strings, Terraform `.tfvars`, GitHub Actions, compose
//! files, SMTP and LDAP settings, `pip.conf`, git credentials, WireGuard, `.htpasswd`, shell
//! scripts, REST-client files, Kafka properties, Ansible inventories) written from the tools'
//! documented formats, with every value drawn fresh by a seeded generator in the format's
//! alphabet and length. Provider tokens (OpenAI, Anthropic, Stripe, Slack, GitHub, GitLab,
//! Twilio, SendGrid, Mailgun, Datadog, … sixty-odd) keep their real public prefixes and markers.
//!
//! Every rendered line carries a [`Label`]:
//! - [`Label::Secret`]: the line holds one secret; it is **masked** when no run of
//!   [`RUN`] consecutive characters of the secret that includes at least one *generated*
//!   character survives in the scrubbed line (runs lying wholly inside a format's public constant,
//!   such as `sk-proj-` or the `T3BlbkFJ` marker, do not count: a scrubber may keep a prefix).
//!   The secret is only the secret part: the password of a URL (not its user), the last segment
//!   of a Slack or Discord webhook (not the workspace ids), the body of a key.
//! - [`Label::LookAlike`]: a benign line that resembles a secret (UUIDs, commit SHAs, digests,
//!   public keys, placeholders, variable references, URLs without a password, ids, base64 data,
//!   secret-sounding keys with harmless values); it must stay **byte-identical**.
//! - [`Label::Plain`]: file structure and settings nobody would mistake for a secret, plus a few
//!   debatable values (a GCP `private_key_id`, a modern Sentry DSN, whose key Sentry documents as
//!   public); rendered so files read whole, reported apart, never in the goal figures.
//!
//! What counts as a placeholder (look-alike) and what as a weak real password (secret): a value is
//! a placeholder when it visibly stands in for one: angle brackets (`<your-token>`), a template
//! or variable reference (`${X}`, `$X`, `{{ … }}`, `%(x)s`, `<%= ENV[…] %>`), all one mask
//! character (`xxxxxxxx`, `********`), a phrase naming itself (`your-api-key-here`,
//! `YOUR_API_KEY`, `replace-me`), or empty/`null`. A literal a login would accept is a secret, however weak
//! (`changeme`, `Passw0rd!`, `letmein123`): sample configs ship such defaults and they work
//! until someone changes them (format `weak-password`, so the figure shows them apart).
//!
//! Lines are scrubbed one at a time, so every secret line carries its own context (a key name, a
//! flag, a URL, or a provider shape); multi-line PEM blocks are left to the scrubber's own tests,
//! keys appear here base64-wrapped or `\n`-escaped on one line, as kubeconfig and JSON keep them.
//!
//! Must never: contain a real credential (every value is drawn from the generator), or be used to
//! tune the scrubber (it is the held-out figure).

use std::fmt;
use std::ops::Range;

use crate::Rng;

/// A secret is leaked when this many consecutive characters of it survive scrubbing (or the whole
/// secret, were one shorter; the generator makes none shorter).
pub const RUN: usize = 8;

/// The seed of the corpus the held-out test measures.
pub const SEED: u64 = 0x5EC2_E724;

/// One rendered line of one file, with what scrubbing must do to it.
#[derive(Debug, Clone)]
pub struct Line {
    /// The tool's file this line belongs to (e.g. `~/.pgpass`).
    pub file: &'static str,
    /// The format of the value on the line (e.g. `stripe-secret-key`, `uuid`, `placeholder`).
    pub format: &'static str,
    /// The line as the file holds it.
    pub text: String,
    /// What scrubbing must do.
    pub label: Label,
}

/// What scrubbing must do to a line.
#[derive(Debug, Clone)]
pub enum Label {
    /// The secret must not survive (see [`Secret::survives_in`]).
    Secret(Secret),
    /// A benign look-alike: must stay byte-identical.
    LookAlike,
    /// Structure or an obviously harmless setting: reported apart, not in the goal figures.
    Plain,
}

/// A generated secret: its text and which byte ranges of it are a format's public constant.
#[derive(Clone, Default)]
pub struct Secret {
    text: String,
    fixed: Vec<Range<usize>>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} chars)", self.text.len())
    }
}

impl Secret {
    fn new() -> Self {
        Self::default()
    }

    /// Appends a public constant of the format (a prefix, a marker).
    fn lit(mut self, s: &str) -> Self {
        let start = self.text.len();
        self.text.push_str(s);
        self.fixed.push(start..self.text.len());
        self
    }

    /// Appends generated characters.
    fn drawn(mut self, s: &str) -> Self {
        self.text.push_str(s);
        self
    }

    /// The secret's text (fake; made by the generator).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether some run of [`RUN`] characters of the secret that includes a generated character
    /// is still in `scrubbed`.
    pub fn survives_in(&self, scrubbed: &str) -> bool {
        self.windows().any(|w| scrubbed.contains(w))
    }

    /// The runs that count: every [`RUN`]-long window not lying inside one public constant.
    fn windows(&self) -> impl Iterator<Item = &str> {
        let len = self.text.len();
        let run = RUN.min(len);
        (0..=len - run)
            .filter(move |&s| !self.fixed.iter().any(|f| f.start <= s && s + run <= f.end))
            .map(move |s| &self.text[s..s + run])
    }
}

/// Every line of the corpus for `seed`, file after file.
pub fn corpus(seed: u64) -> Vec<Line> {
    let mut g = Gen(Rng::new(seed));
    let mut lines = Vec::new();
    for _ in 0..RENDERS {
        for template in TEMPLATES {
            lines.extend(template(&mut g).lines);
        }
    }
    for _ in 0..ENV_ROUNDS {
        lines.extend(env_files(&mut g).into_iter().flat_map(|f| f.lines));
    }
    lines
}

/// How many times each file template is rendered (each time with fresh values).
const RENDERS: usize = 14;
/// How many times every provider token is dealt into an env-carrying file.
const ENV_ROUNDS: usize = 12;

// ---------------------------------------------------------------------------------------------
// The generator.

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const DIGITS: &[u8] = b"0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BECH32: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
/// Symbols a password may hold in any of the files here (no quote, `#`, `$`, `:`, `@`, `/`).
const PW_SYMBOLS: &[u8] = b"!*-_.~+=^";
/// Words for memorable passwords and names.
const WORDS: &[&str] = &[
    "harbor", "violet", "maple", "orbit", "falcon", "copper", "meadow", "lantern", "quartz",
    "thistle", "summit", "walnut", "cinder", "juniper", "pebble", "saffron", "tundra", "willow",
    "ember", "glacier", "hollow", "indigo", "kestrel", "lumen", "marble", "nectar", "oyster",
    "prairie", "raven", "sorrel",
];
/// Weak but real passwords (format `weak-password`).
const WEAK: &[&str] = &[
    "changeme",
    "password1",
    "Passw0rd!",
    "letmein123",
    "admin1234",
    "Welcome1!",
    "qwerty123",
    "Summer2024!",
    "iloveyou2",
    "trustno1!",
];

struct Gen(Rng);

impl Gen {
    fn from(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| char::from(alphabet[self.0.below(alphabet.len())]))
            .collect()
    }
    fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.0.below(hi - lo + 1)
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.0.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        self.0.pick::<&str>(items)
    }
    fn alnum(&mut self, n: usize) -> String {
        self.from(ALNUM, n)
    }
    fn hex(&mut self, n: usize) -> String {
        self.from(HEX, n)
    }
    fn digits(&mut self, n: usize) -> String {
        let first = self.from(b"123456789", 1);
        first + &self.from(DIGITS, n - 1)
    }
    fn b64url(&mut self, n: usize) -> String {
        self.from(B64URL, n)
    }
    fn word(&mut self) -> &'static str {
        self.pick(WORDS)
    }
    fn uuid(&mut self) -> String {
        let v = self.hex(32);
        let variant = self.pick(&["8", "9", "a", "b"]);
        format!(
            "{}-{}-4{}-{}{}-{}",
            &v[..8],
            &v[8..12],
            &v[13..16],
            variant,
            &v[17..20],
            &v[20..]
        )
    }
    /// Base64 of `n` random bytes, padded.
    fn b64_bytes(&mut self, n: usize) -> String {
        let bytes: Vec<u8> = (0..n).map(|_| self.0.next_u64() as u8).collect();
        base64(&bytes)
    }
    /// A password of one of three styles: random (12–28 of letters, digits, symbols), memorable
    /// (`Word-Word-1234!`), or a long passphrase of random letters and digits.
    fn password(&mut self) -> String {
        match self.0.below(3) {
            0 => {
                let mut alphabet = ALNUM.to_vec();
                alphabet.extend_from_slice(PW_SYMBOLS);
                let n = self.between(12, 28);
                // Starts with a letter so that no YAML or shell reads it as something else.
                self.from(LETTERS, 1) + &self.from(&alphabet, n - 1)
            }
            1 => {
                let (a, b) = (capital(self.word()), capital(self.word()));
                let sep = self.pick(&["-", ".", "_", ""]);
                let tail = self.pick(&["!", "*", "+", "="]);
                format!("{a}{sep}{b}{sep}{}{tail}", self.digits(4))
            }
            _ => {
                let n = self.between(16, 32);
                self.from(LETTERS, 1) + &self.from(ALNUM, n - 1)
            }
        }
    }
    /// A password safe inside a URL's user-info (no symbol needing percent-encoding).
    fn url_password(&mut self) -> String {
        let n = self.between(12, 32);
        let mut alphabet = ALNUM.to_vec();
        alphabet.extend_from_slice(b"-_.~");
        self.from(LETTERS, 1) + &self.from(&alphabet, n - 1)
    }
    fn pw_secret(&mut self) -> Secret {
        let pw = self.password();
        Secret::new().drawn(&pw)
    }
    fn host(&mut self) -> String {
        let w = self.word();
        let tld = self.pick(&["example.com", "example.org", "internal", "corp.example.net"]);
        match self.0.below(3) {
            0 => format!("{w}.{tld}"),
            1 => format!("{w}-{}.{tld}", self.between(1, 9)),
            _ => format!("db-{w}.{tld}"),
        }
    }
    fn user(&mut self) -> String {
        let w = self.word();
        self.pick(&["app", "deploy", "svc_", "ci-", "admin_", ""])
            .to_owned()
            + w
    }
    fn email(&mut self) -> String {
        format!("{}.{}@example.com", self.word(), self.word())
    }
    /// A JWT: a real header, a payload of plausible claims, a random signature.
    fn jwt(&mut self) -> Secret {
        let header = base64url_nopad(
            self.pick(&[
                r#"{"alg":"HS256","typ":"JWT"}"#,
                r#"{"alg":"RS256","typ":"JWT","kid":"k1"}"#,
                r#"{"alg":"ES256","typ":"JWT"}"#,
            ])
            .as_bytes(),
        );
        let payload = format!(
            r#"{{"sub":"{}","iat":{},"exp":{},"role":"{}","jti":"{}"}}"#,
            self.uuid(),
            self.digits(10),
            self.digits(10),
            self.pick(&["service_role", "authenticated", "admin", "reader"]),
            self.hex(16)
        );
        let sig_len = if self.chance(50) { 43 } else { 86 };
        let sig = self.b64url(sig_len);
        // The header is public (the same for every token of that algorithm); the claims and the
        // signature are what the token is.
        Secret::new()
            .lit(&header)
            .lit(".")
            .drawn(&base64url_nopad(payload.as_bytes()))
            .drawn(".")
            .drawn(&sig)
    }
    /// A PEM private key as a string: the header, a body of wrapped base64 and the footer, joined
    /// with `nl` (a real newline, or `\n` escaped as in JSON).
    fn pem_key(&mut self, kind: &str, nl: &str) -> (String, Secret) {
        let (lead, body_len) = match kind {
            "EC" => ("MHcCAQEEI", 112),
            "RSA" => ("MIIEpAIBAAKCAQEA", 1580),
            _ => ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1570),
        };
        let label = if kind == "PKCS8" {
            "PRIVATE KEY".to_owned()
        } else {
            format!("{kind} PRIVATE KEY")
        };
        let mut body = Secret::new().lit(lead);
        let mut column = lead.len();
        let mut left = body_len;
        while left > 0 {
            let take = left.min(64 - column);
            body = body.drawn(&self.from(B64, take));
            left -= take;
            column += take;
            if column == 64 && left > 0 {
                body = body.drawn(nl);
                column = 0;
            }
        }
        let text = format!(
            "-----BEGIN {label}-----{nl}{}{nl}-----END {label}-----{nl}",
            body.text
        );
        (text, body)
    }
}

const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn capital(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64url_nopad(bytes: &[u8]) -> String {
    base64(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

// ---------------------------------------------------------------------------------------------
// Files.

struct File {
    name: &'static str,
    lines: Vec<Line>,
}

impl File {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            lines: Vec::new(),
        }
    }
    fn plain(&mut self, text: impl Into<String>) {
        self.push("plain", text.into(), Label::Plain);
    }
    fn look(&mut self, format: &'static str, text: impl Into<String>) {
        self.push(format, text.into(), Label::LookAlike);
    }
    fn debatable(&mut self, format: &'static str, text: impl Into<String>) {
        self.push(format, text.into(), Label::Plain);
    }
    /// A secret line: `render` places the secret's text in the line.
    fn secret(
        &mut self,
        format: &'static str,
        secret: Secret,
        render: impl FnOnce(&str) -> String,
    ) {
        let text = render(&secret.text);
        self.push(format, text, Label::Secret(secret));
    }
    fn push(&mut self, format: &'static str, text: String, label: Label) {
        self.lines.push(Line {
            file: self.name,
            format,
            text,
            label,
        });
    }
}

type Template = fn(&mut Gen) -> File;

const TEMPLATES: &[Template] = &[
    pgpass,
    netrc,
    kubeconfig,
    npmrc,
    pypirc,
    docker_config,
    laravel_env,
    rails_database_yml,
    django_settings,
    spring_properties,
    spring_yaml,
    aws_credentials,
    gcp_service_account,
    azure_appsettings,
    tfvars,
    github_actions,
    docker_compose,
    smtp_settings,
    pip_conf,
    git_credentials,
    wireguard,
    htpasswd,
    shell_script,
    rest_client,
    kafka_properties,
    ldap_conf,
    ansible_inventory,
    sentry_and_urls,
];

/// `~/.pgpass`: `hostname:port:database:username:password`, one per line.
fn pgpass(g: &mut Gen) -> File {
    let mut f = File::new("~/.pgpass");
    f.plain("# hostname:port:database:username:password");
    for _ in 0..g.between(2, 4) {
        let (host, db, user) = (g.host(), g.word(), g.user());
        let port = g.pick(&["5432", "6432", "5433", "*"]);
        let pw = g.pw_secret();
        f.secret("pgpass-password", pw, |s| {
            format!("{host}:{port}:{db}:{user}:{s}")
        });
    }
    if g.chance(40) {
        let pw = g.pw_secret();
        f.secret("pgpass-password", pw, |s| format!("*:*:*:replicator:{s}"));
    }
    f
}

/// `~/.netrc`: one-line and multi-line entries.
fn netrc(g: &mut Gen) -> File {
    let mut f = File::new("~/.netrc");
    let host = g.host();
    let login = g.email();
    let token = g.hex(40);
    f.secret("netrc-password", Secret::new().drawn(&token), |s| {
        format!("machine api.{host} login {login} password {s}")
    });
    let host = g.host();
    f.plain(format!("machine {host}"));
    f.plain(format!("  login {}", g.user()));
    let pw = g.pw_secret();
    f.secret("netrc-password", pw, |s| format!("  password {s}"));
    f.plain("default login anonymous");
    f
}

/// A kubeconfig with a client key, a token and a basic-auth user.
fn kubeconfig(g: &mut Gen) -> File {
    let mut f = File::new("~/.kube/config");
    let cluster = format!("{}-{}", g.word(), g.pick(&["prod", "staging", "dev"]));
    f.plain("apiVersion: v1");
    f.plain("clusters:");
    f.plain("- cluster:");
    let ca = base64(fake_certificate(g).as_bytes());
    f.look(
        "certificate-data",
        format!("    certificate-authority-data: {ca}"),
    );
    f.plain(format!(
        "    server: https://10.{}.{}.{}:6443",
        g.between(0, 255),
        g.between(0, 255),
        g.between(1, 254)
    ));
    f.plain(format!("  name: {cluster}"));
    f.plain("current-context: admin@".to_owned() + &cluster);
    f.plain("users:");
    f.plain("- name: admin");
    f.plain("  user:");
    let cert = base64(fake_certificate(g).as_bytes());
    f.look(
        "certificate-data",
        format!("    client-certificate-data: {cert}"),
    );
    let kind = g_kind(g);
    let (pem, _) = g.pem_key(kind, "\n");
    // The base64 of the whole PEM; its first 40 characters encode the public header.
    let encoded = base64(pem.as_bytes());
    let key = Secret::new().lit(&encoded[..40]).drawn(&encoded[40..]);
    f.secret("kubeconfig-client-key", key, |s| {
        format!("    client-key-data: {s}")
    });
    f.plain("- name: ci-bot");
    f.plain("  user:");
    let token = if g.chance(50) {
        g.jwt()
    } else {
        // kubeadm bootstrap token: [a-z0-9]{6}.[a-z0-9]{16}
        let id = g.from(LOWER_ALNUM, 6);
        let secret = g.from(LOWER_ALNUM, 16);
        Secret::new().drawn(&id).drawn(".").drawn(&secret)
    };
    f.secret("kubeconfig-token", token, |s| format!("    token: {s}"));
    f.plain("- name: legacy");
    f.plain("  user:");
    f.plain("    username: admin");
    let pw = g.pw_secret();
    f.secret("kubeconfig-password", pw, |s| format!("    password: {s}"));
    f.plain("- name: eks");
    f.plain("  user:");
    f.plain("    exec:");
    f.plain("      apiVersion: client.authentication.k8s.io/v1beta1");
    f.plain("      command: aws");
    f.look(
        "secret-word-setting",
        format!("      args: [\"eks\", \"get-token\", \"--cluster-name\", \"{cluster}\"]"),
    );
    f
}

fn g_kind(g: &mut Gen) -> &'static str {
    g.pick(&["RSA", "EC", "PKCS8"])
}

/// A certificate as PEM text (public, benign): header, wrapped base64 body, footer.
fn fake_certificate(g: &mut Gen) -> String {
    let mut body = String::from("MIIC");
    body.push_str(&g.from(B64, 60));
    for _ in 0..g.between(8, 14) {
        body.push('\n');
        body.push_str(&g.from(B64, 64));
    }
    format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n")
}

/// `.npmrc`: registry tokens, basic auth, and the `${NPM_TOKEN}` reference.
fn npmrc(g: &mut Gen) -> File {
    let mut f = File::new(".npmrc");
    f.plain("registry=https://registry.npmjs.org/");
    let scope = g.word();
    f.plain(format!("@{scope}:registry=https://npm.pkg.github.com"));
    let npm = npm_token(g);
    f.secret("npm-token", npm, |s| {
        format!("//registry.npmjs.org/:_authToken={s}")
    });
    let gh = github_pat(g);
    f.secret("github-pat", gh, |s| {
        format!("//npm.pkg.github.com/:_authToken={s}")
    });
    f.look(
        "env-reference",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    );
    let user = g.user();
    let pw = g.url_password();
    let auth = base64(format!("{user}:{pw}").as_bytes());
    f.secret("npmrc-basic-auth", Secret::new().drawn(&auth), |s| {
        format!("//npm.{}/:_auth={s}", g.host())
    });
    f.look("secret-word-setting", "always-auth=true");
    f.plain(format!("email={}", g.email()));
    f
}

/// `~/.pypirc`: a PyPI API token and a private index password.
fn pypirc(g: &mut Gen) -> File {
    let mut f = File::new("~/.pypirc");
    f.plain("[distutils]");
    f.plain("index-servers =");
    f.plain("    pypi");
    f.plain("    private");
    f.plain("");
    f.plain("[pypi]");
    f.look("secret-word-setting", "username = __token__");
    let token = pypi_token(g);
    f.secret("pypi-token", token, |s| format!("password = {s}"));
    f.plain("");
    f.plain("[private]");
    f.plain(format!("repository = https://pypi.{}/", g.host()));
    f.plain(format!("username = {}", g.user()));
    let pw = g.pw_secret();
    f.secret("pypirc-password", pw, |s| format!("password = {s}"));
    f
}

/// `~/.docker/config.json`: `auth` (base64 of `user:password`), an identity token, helpers.
fn docker_config(g: &mut Gen) -> File {
    let mut f = File::new("~/.docker/config.json");
    f.plain("{");
    f.plain("  \"auths\": {");
    f.plain("    \"https://index.docker.io/v1/\": {");
    let user = g.user();
    let pw = format!("dckr_pat_{}", g.b64url(27));
    let auth = base64(format!("{user}:{pw}").as_bytes());
    f.secret("docker-config-auth", Secret::new().drawn(&auth), |s| {
        format!("      \"auth\": \"{s}\"")
    });
    f.plain("    },");
    f.plain(format!("    \"registry.{}\": {{", g.host()));
    let n = g.between(40, 64);
    let token = g.b64url(n);
    f.secret("docker-identity-token", Secret::new().drawn(&token), |s| {
        format!("      \"identitytoken\": \"{s}\"")
    });
    f.plain("    }");
    f.plain("  },");
    f.look("secret-word-setting", "  \"credsStore\": \"desktop\",");
    f.plain("  \"credHelpers\": {");
    f.look(
        "numeric-id",
        format!(
            "    \"{}.dkr.ecr.{}.amazonaws.com\": \"ecr-login\"",
            g.digits(12),
            aws_region(g)
        ),
    );
    f.plain("  }");
    f.plain("}");
    f
}

fn aws_region(g: &mut Gen) -> &'static str {
    g.pick(&[
        "us-east-1",
        "eu-west-1",
        "eu-central-1",
        "ap-southeast-2",
        "us-west-2",
    ])
}

/// A Laravel `.env`.
fn laravel_env(g: &mut Gen) -> File {
    let mut f = File::new(".env (Laravel)");
    f.plain(format!("APP_NAME={}", capital(g.word())));
    f.plain("APP_ENV=production");
    let key = g.b64_bytes(32);
    f.secret(
        "laravel-app-key",
        Secret::new().lit("base64:").drawn(&key),
        |s| format!("APP_KEY={s}"),
    );
    f.plain("APP_DEBUG=false");
    f.plain(format!("APP_URL=https://{}", g.host()));
    f.plain("DB_CONNECTION=mysql");
    f.plain(format!("DB_HOST={}", g.host()));
    f.plain("DB_PORT=3306");
    f.plain(format!("DB_USERNAME={}", g.user()));
    let pw = g.pw_secret();
    f.secret("dotenv-password", pw, |s| format!("DB_PASSWORD={s}"));
    f.look("placeholder", "REDIS_PASSWORD=null");
    f.plain("MAIL_MAILER=smtp");
    f.plain("MAIL_HOST=smtp.mailgun.org");
    f.plain("MAIL_PORT=587");
    f.plain(format!("MAIL_USERNAME=postmaster@mg.{}", g.host()));
    let pw = mailgun_key(g);
    f.secret("mailgun-key", pw, |s| format!("MAIL_PASSWORD={s}"));
    f.look("secret-word-setting", "SESSION_LIFETIME=120");
    f.plain(format!("PUSHER_APP_ID={}", g.digits(7)));
    let secret = g.hex(20);
    f.secret("pusher-app-secret", Secret::new().drawn(&secret), |s| {
        format!("PUSHER_APP_SECRET={s}")
    });
    let weak = g.pick(WEAK);
    f.secret("weak-password", Secret::new().drawn(weak), |s| {
        format!("QUEUE_PASSWORD={s}")
    });
    f
}

/// Rails `config/database.yml` and a credentials excerpt.
fn rails_database_yml(g: &mut Gen) -> File {
    let mut f = File::new("config/database.yml");
    f.plain("default: &default");
    f.plain("  adapter: postgresql");
    f.plain("  encoding: unicode");
    f.plain("  pool: <%= ENV.fetch(\"RAILS_MAX_THREADS\") { 5 } %>");
    f.plain("production:");
    f.plain("  <<: *default");
    f.plain(format!("  database: {}_production", g.word()));
    f.plain(format!("  username: {}", g.user()));
    f.look(
        "env-reference",
        "  password: <%= ENV[\"DATABASE_PASSWORD\"] %>",
    );
    f.plain("staging:");
    f.plain("  <<: *default");
    let pw = g.pw_secret();
    f.secret("rails-password", pw, |s| format!("  password: {s}"));
    let (user, host) = (g.user(), g.host());
    let pw = g.url_password();
    f.secret("postgres-url-password", Secret::new().drawn(&pw), |s| {
        format!("  url: postgres://{user}:{s}@{host}:5432/app_staging")
    });
    f.plain("# config/credentials.yml.enc, decrypted:");
    let kb = g.hex(128);
    f.secret("rails-secret-key-base", Secret::new().drawn(&kb), |s| {
        format!("secret_key_base: {s}")
    });
    f.look("hex-id", format!("# digest: {}", g.hex(64)));
    f
}

/// Django `settings.py`.
fn django_settings(g: &mut Gen) -> File {
    let mut f = File::new("settings.py");
    f.plain("from pathlib import Path");
    f.plain("import os");
    f.plain("BASE_DIR = Path(__file__).resolve().parent.parent");
    let key = g.from(b"abcdefghijklmnopqrstuvwxyz0123456789!^*(-_=+)", 50);
    f.secret(
        "django-secret-key",
        Secret::new().lit("django-insecure-").drawn(&key),
        |s| format!("SECRET_KEY = '{s}'"),
    );
    f.look(
        "env-reference",
        "# SECRET_KEY = os.environ[\"DJANGO_SECRET_KEY\"]",
    );
    f.plain("DEBUG = False");
    f.plain(format!("ALLOWED_HOSTS = ['{}']", g.host()));
    f.plain("DATABASES = {");
    f.plain("    'default': {");
    f.plain("        'ENGINE': 'django.db.backends.postgresql',");
    f.plain(format!("        'NAME': '{}',", g.word()));
    f.plain(format!("        'USER': '{}',", g.user()));
    let pw = g.pw_secret();
    f.secret("django-db-password", pw, |s| {
        format!("        'PASSWORD': '{s}',")
    });
    f.plain(format!("        'HOST': '{}',", g.host()));
    f.plain("    },");
    f.plain("    'replica': {");
    f.look(
        "env-reference",
        "        'PASSWORD': os.getenv('REPLICA_DB_PASSWORD', ''),",
    );
    f.plain("    },");
    f.plain("}");
    f.look("secret-word-setting", "AUTH_PASSWORD_VALIDATORS = [");
    f.look(
        "secret-word-setting",
        "    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'},",
    );
    f.plain("]");
    f.plain("EMAIL_HOST = 'smtp.gmail.com'");
    f.plain(format!("EMAIL_HOST_USER = '{}'", g.email()));
    let app_pw = gmail_app_password(g);
    f.secret("gmail-app-password", app_pw, |s| {
        format!("EMAIL_HOST_PASSWORD = '{s}'")
    });
    f.look(
        "secret-word-setting",
        "PASSWORD_RESET_TIMEOUT = 259200  # 3 days, in seconds",
    );
    f
}

fn gmail_app_password(g: &mut Gen) -> Secret {
    let mut s = Secret::new();
    let spaced = g.chance(50);
    for i in 0..4 {
        if i > 0 && spaced {
            s = s.drawn(" ");
        }
        s = s.drawn(&g.from(LOWER, 4));
    }
    s
}

/// Spring Boot `application.properties`.
fn spring_properties(g: &mut Gen) -> File {
    let mut f = File::new("application.properties");
    f.plain(format!("spring.application.name={}-service", g.word()));
    f.plain(format!(
        "spring.datasource.url=jdbc:postgresql://{}:5432/{}",
        g.host(),
        g.word()
    ));
    f.plain(format!("spring.datasource.username={}", g.user()));
    let pw = g.pw_secret();
    f.secret("spring-datasource-password", pw, |s| {
        format!("spring.datasource.password={s}")
    });
    f.look(
        "env-reference",
        "spring.datasource.hikari.password=${DB_PASSWORD}",
    );
    f.look(
        "oauth-client-id",
        format!(
            "spring.security.oauth2.client.registration.github.client-id=Iv1.{}",
            g.hex(16)
        ),
    );
    let cs = g.hex(40);
    f.secret("oauth-client-secret", Secret::new().drawn(&cs), |s| {
        format!("spring.security.oauth2.client.registration.github.client-secret={s}")
    });
    let jwt_secret = g.b64_bytes(48);
    f.secret(
        "jwt-signing-secret",
        Secret::new().drawn(&jwt_secret),
        |s| format!("app.jwt.secret={s}"),
    );
    f.look("secret-word-setting", "app.jwt.expiration-ms=86400000");
    f.plain("management.endpoints.web.exposure.include=health,info");
    let pw = g.pw_secret();
    f.secret("spring-mail-password", pw, |s| {
        format!("spring.mail.password={s}")
    });
    f.look(
        "secret-word-setting",
        "server.ssl.key-store=classpath:keystore.p12",
    );
    let pw = g.pw_secret();
    f.secret("keystore-password", pw, |s| {
        format!("server.ssl.key-store-password={s}")
    });
    f
}

/// Spring Boot `application.yml`.
fn spring_yaml(g: &mut Gen) -> File {
    let mut f = File::new("application.yml");
    f.plain("spring:");
    f.plain("  data:");
    f.plain("    redis:");
    f.plain(format!("      host: {}", g.host()));
    let pw = g.pw_secret();
    f.secret("spring-redis-password", pw, |s| {
        format!("      password: {s}")
    });
    f.plain("    mongodb:");
    let (user, host) = (g.user(), g.host());
    let pw = g.url_password();
    f.secret("mongodb-url-password", Secret::new().drawn(&pw), |s| {
        format!("      uri: mongodb+srv://{user}:{s}@{host}/app?retryWrites=true&w=majority")
    });
    f.plain("  rabbitmq:");
    f.look("placeholder", "    password: ${RABBITMQ_PASSWORD:}");
    f.plain("  cloud:");
    f.plain("    vault:");
    f.look("secret-word-setting", "      authentication: KUBERNETES");
    f.look(
        "secret-word-setting",
        "      token-file: /var/run/secrets/kubernetes.io/serviceaccount/token",
    );
    f.plain("logging:");
    f.plain("  level:");
    f.plain("    root: INFO");
    f
}

/// `~/.aws/credentials` and `config`.
fn aws_credentials(g: &mut Gen) -> File {
    let mut f = File::new("~/.aws/credentials");
    f.plain("[default]");
    let id = g.from(BASE32, 16);
    f.secret(
        "aws-access-key-id",
        Secret::new().lit("AKIA").drawn(&id),
        |s| format!("aws_access_key_id = {s}"),
    );
    let secret = g.from(B64, 40);
    f.secret("aws-secret-access-key", Secret::new().drawn(&secret), |s| {
        format!("aws_secret_access_key = {s}")
    });
    f.plain(format!("region = {}", aws_region(g)));
    f.plain("");
    f.plain("[temp]");
    let id = g.from(BASE32, 16);
    f.secret(
        "aws-access-key-id",
        Secret::new().lit("ASIA").drawn(&id),
        |s| format!("aws_access_key_id={s}"),
    );
    let secret = g.from(B64, 40);
    f.secret("aws-secret-access-key", Secret::new().drawn(&secret), |s| {
        format!("aws_secret_access_key={s}")
    });
    let len = g.between(300, 420);
    let token = g.from(B64, len);
    f.secret(
        "aws-session-token",
        Secret::new().lit("IQoJb3JpZ2luX2Vj").drawn(&token),
        |s| format!("aws_session_token={s}"),
    );
    f.plain("");
    f.plain("[profile deploy]");
    let account = g.digits(12);
    f.look(
        "aws-arn",
        format!("role_arn = arn:aws:iam::{account}:role/{}-deploy", g.word()),
    );
    f.plain("source_profile = default");
    f.look(
        "aws-arn",
        format!("mfa_serial = arn:aws:iam::{account}:mfa/{}", g.word()),
    );
    f.look(
        "secret-word-setting",
        "credential_process = /usr/local/bin/aws-vault export --format=json prod",
    );
    f.look(
        "url-no-credentials",
        format!("sso_start_url = https://d-{}.awsapps.com/start", g.hex(10)),
    );
    f
}

/// A GCP service-account key file, PEM `\n`-escaped.
fn gcp_service_account(g: &mut Gen) -> File {
    let mut f = File::new("service-account.json");
    let project = format!("{}-{}-{}", g.word(), g.word(), g.digits(6));
    let account = format!("{}@{project}.iam.gserviceaccount.com", g.word());
    f.plain("{");
    f.plain("  \"type\": \"service_account\",");
    f.plain(format!("  \"project_id\": \"{project}\","));
    f.debatable(
        "gcp-private-key-id",
        format!("  \"private_key_id\": \"{}\",", g.hex(40)),
    );
    let (pem, body) = g.pem_key("PKCS8", "\\n");
    f.secret("gcp-private-key", body, |_| {
        format!("  \"private_key\": \"{pem}\",")
    });
    f.plain(format!("  \"client_email\": \"{account}\","));
    f.look(
        "numeric-id",
        format!("  \"client_id\": \"{}\",", g.digits(21)),
    );
    f.plain("  \"auth_uri\": \"https://accounts.google.com/o/oauth2/auth\",");
    f.look(
        "url-no-credentials",
        "  \"token_uri\": \"https://oauth2.googleapis.com/token\",",
    );
    f.look(
        "url-no-credentials",
        "  \"auth_provider_x509_cert_url\": \"https://www.googleapis.com/oauth2/v1/certs\",",
    );
    f.plain(format!(
        "  \"client_x509_cert_url\": \"https://www.googleapis.com/robot/v1/metadata/x509/{}\",",
        account.replace('@', "%40")
    ));
    f.plain("  \"universe_domain\": \"googleapis.com\"");
    f.plain("}");
    f
}

/// An Azure Functions / App Service `appsettings.json` with connection strings.
fn azure_appsettings(g: &mut Gen) -> File {
    let mut f = File::new("appsettings.json");
    let account = format!("{}{}", g.word(), g.from(LOWER_ALNUM, 6));
    f.plain("{");
    f.plain("  \"ConnectionStrings\": {");
    let key = g.b64_bytes(64);
    f.secret("azure-storage-key", Secret::new().drawn(&key), |s| {
        format!(
            "    \"Storage\": \"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={s};EndpointSuffix=core.windows.net\","
        )
    });
    let ns = g.word();
    let key = g.b64_bytes(32);
    f.secret("azure-servicebus-key", Secret::new().drawn(&key), |s| {
        format!(
            "    \"ServiceBus\": \"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}\","
        )
    });
    let (server, db, user) = (g.word(), g.word(), g.user());
    let pw = g.pw_secret();
    f.secret("sql-connection-password", pw, |s| {
        format!(
            "    \"Sql\": \"Server=tcp:{server}.database.windows.net,1433;Initial Catalog={db};User ID={user};Password={s};Encrypt=True;\""
        )
    });
    f.plain("  },");
    let sig = g
        .b64_bytes(32)
        .replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D");
    f.secret("azure-sas-signature", Secret::new().drawn(&sig), |s| {
        format!(
            "  \"BlobSasUrl\": \"https://{account}.blob.core.windows.net/uploads?sv=2022-11-02&ss=b&srt=co&sp=rwl&se=2026-01-01T00:00:00Z&spr=https&sig={s}\","
        )
    });
    f.look("uuid", format!("  \"TenantId\": \"{}\",", g.uuid()));
    f.look("uuid", format!("  \"ClientId\": \"{}\",", g.uuid()));
    let cs = azure_client_secret(g);
    f.secret("azure-client-secret", cs, |s| {
        format!("  \"ClientSecret\": \"{s}\",")
    });
    f.look(
        "url-no-credentials",
        format!(
            "  \"KeyVaultUri\": \"https://kv-{}.vault.azure.net/\",",
            g.word()
        ),
    );
    f.look(
        "url-no-credentials",
        format!("  \"BlobEndpoint\": \"https://{account}.blob.core.windows.net/\","),
    );
    f.plain("  \"FUNCTIONS_WORKER_RUNTIME\": \"dotnet-isolated\"");
    f.plain("}");
    f
}

/// `terraform.tfvars`.
fn tfvars(g: &mut Gen) -> File {
    let mut f = File::new("terraform.tfvars");
    f.plain(format!("region        = \"{}\"", aws_region(g)));
    f.plain("instance_type = \"t3.medium\"");
    f.look(
        "cloud-resource-id",
        format!("ami           = \"ami-0{}\"", g.hex(16)),
    );
    f.look(
        "cloud-resource-id",
        format!("vpc_id        = \"vpc-0{}\"", g.hex(16)),
    );
    let pw = g.pw_secret();
    f.secret("tfvars-password", pw, |s| {
        format!("db_password   = \"{s}\"")
    });
    let tok = github_pat(g);
    f.secret("github-pat", tok, |s| format!("github_token  = \"{s}\""));
    f.look(
        "aws-arn",
        format!(
            "kms_key_id    = \"arn:aws:kms:{}:{}:key/{}\"",
            aws_region(g),
            g.digits(12),
            g.uuid()
        ),
    );
    let pubkey = ssh_public_key(g);
    f.look("ssh-public-key", format!("ssh_public_key = \"{pubkey}\""));
    f.look("env-reference", "datadog_api_key = var.datadog_api_key");
    f.plain("tags = {");
    f.plain(format!("  Owner = \"{}\"", g.word()));
    f.plain("}");
    f
}

fn ssh_public_key(g: &mut Gen) -> String {
    let user = g.word();
    if g.chance(50) {
        format!(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} {user}@build",
            g.from(B64, 43)
        )
    } else {
        format!(
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{} {user}@laptop",
            g.from(B64, 510)
        )
    }
}

/// A GitHub Actions workflow with both references and hard-coded values.
fn github_actions(g: &mut Gen) -> File {
    let mut f = File::new(".github/workflows/deploy.yml");
    f.plain("name: deploy");
    f.plain("on:");
    f.plain("  push:");
    f.plain("    branches: [main]");
    f.plain("permissions:");
    f.plain("  contents: read");
    f.look("secret-word-setting", "  id-token: write");
    f.plain("jobs:");
    f.plain("  deploy:");
    f.plain("    runs-on: ubuntu-latest");
    f.plain("    env:");
    f.look(
        "env-reference",
        "      NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
    );
    let webhook = g.alnum(24);
    let (t, b) = (g.from(UPPER_ALNUM, 10), g.from(UPPER_ALNUM, 10));
    f.secret("slack-webhook", Secret::new().drawn(&webhook), |s| {
        format!("      SLACK_WEBHOOK_URL: https://hooks.slack.com/services/T{t}/B{b}/{s}")
    });
    f.plain("    steps:");
    f.look(
        "git-sha",
        format!("      - uses: actions/checkout@{} # v4.1.7", g.hex(40)),
    );
    f.look(
        "git-sha",
        format!("      - uses: docker/login-action@{} # v3", g.hex(40)),
    );
    f.plain("        with:");
    f.plain("          username: ${{ vars.DOCKERHUB_USER }}");
    f.look(
        "env-reference",
        "          password: ${{ secrets.DOCKERHUB_TOKEN }}",
    );
    f.look("secret-word-setting", "      - uses: actions/cache@v4");
    f.look(
        "secret-word-setting",
        "          key: ${{ runner.os }}-node-${{ hashFiles('**/package-lock.json') }}",
    );
    f.plain("      - run: ./scripts/release.sh");
    f.plain("        env:");
    let tok = github_pat(g);
    f.secret("github-pat", tok, |s| format!("          GH_TOKEN: {s}"));
    f
}

/// A compose file with database passwords in both `environment` forms.
fn docker_compose(g: &mut Gen) -> File {
    let mut f = File::new("docker-compose.yml");
    f.plain("services:");
    f.plain("  db:");
    f.look(
        "sha256-digest",
        format!("    image: postgres:16@sha256:{}", g.hex(64)),
    );
    f.plain("    environment:");
    f.plain(format!("      POSTGRES_USER: {}", g.user()));
    let pw = g.pw_secret();
    f.secret("compose-password", pw, |s| {
        format!("      POSTGRES_PASSWORD: {s}")
    });
    f.look(
        "secret-word-setting",
        "      POSTGRES_PASSWORD_FILE: /run/secrets/pg_password",
    );
    f.plain("  mysql:");
    f.plain("    image: mysql:8.4");
    f.plain("    environment:");
    let pw = g.pw_secret();
    f.secret("compose-password", pw, |s| {
        format!("      - MYSQL_ROOT_PASSWORD={s}")
    });
    f.plain("  app:");
    f.plain("    build: .");
    f.plain("    environment:");
    let pw = g.url_password();
    f.secret("redis-url-password", Secret::new().drawn(&pw), |s| {
        format!("      - REDIS_URL=redis://:{s}@redis:6379/0")
    });
    let (user, pw) = (g.user(), g.url_password());
    f.secret("amqp-url-password", Secret::new().drawn(&pw), |s| {
        format!("      - AMQP_URL=amqp://{user}:{s}@rabbitmq:5672/%2f")
    });
    f.look(
        "url-no-credentials",
        "      - DATABASE_URL=postgres://db:5432/app?sslmode=disable",
    );
    f.look(
        "env-reference",
        "      - DATABASE_PASSWORD=${POSTGRES_PASSWORD:?set it in .env}",
    );
    f.plain("    secrets:");
    f.look("secret-word-setting", "      - db_password");
    f
}

/// SMTP client settings: msmtp, Postfix `sasl_passwd`, an ini `[smtp]` section.
fn smtp_settings(g: &mut Gen) -> File {
    let mut f = File::new("~/.msmtprc + sasl_passwd + app.ini");
    f.plain("account default");
    f.plain("host smtp.fastmail.com");
    f.plain("port 465");
    f.plain("auth on");
    f.plain(format!("user {}", g.email()));
    let pw = g.from(LOWER_ALNUM, 16);
    f.secret("smtp-password", Secret::new().drawn(&pw), |s| {
        format!("password {s}")
    });
    f.look(
        "secret-word-setting",
        "passwordeval \"gpg --quiet --for-your-eyes-only --decrypt ~/.msmtp-password.gpg\"",
    );
    f.plain("tls_trust_file /etc/ssl/certs/ca-certificates.crt");
    let key = sendgrid_key(g);
    f.secret("sendgrid-key", key, |s| {
        format!("[smtp.sendgrid.net]:587 apikey:{s}")
    });
    f.plain("[mailer]");
    f.plain("ENABLED = true");
    f.plain(format!("SMTP_ADDR = smtp.{}", g.host()));
    let pw = g.pw_secret();
    f.secret("smtp-password", pw, |s| format!("PASSWD = {s}"));
    f
}

/// `pip.conf` with a private index token in the URL.
fn pip_conf(g: &mut Gen) -> File {
    let mut f = File::new("pip.conf");
    f.plain("[global]");
    let tok = prefixed("glpat-", g.b64url(20));
    f.secret(
        "https-url-token",
        tok,
        |s| {
            format!(
                "index-url = https://__token__:{s}@gitlab.example.com/api/v4/projects/{}/packages/pypi/simple",
                g.digits(4)
            )
        },
    );
    f.plain("extra-index-url = https://pypi.org/simple");
    f.plain(format!("trusted-host = pkgs.{}", g.host()));
    f.look(
        "env-reference",
        format!(
            "# index-url = https://${{PIP_USER}}:${{PIP_PASSWORD}}@pkgs.{}/simple",
            g.host()
        ),
    );
    f.plain("timeout = 60");
    f
}

/// `~/.git-credentials` and `.gitconfig`.
fn git_credentials(g: &mut Gen) -> File {
    let mut f = File::new("~/.git-credentials");
    let user = g.word();
    let tok = github_pat(g);
    f.secret("github-pat", tok, |s| {
        format!("https://{user}:{s}@github.com")
    });
    let tok = Secret::new().lit("glpat-").drawn(&g.b64url(20));
    f.secret("gitlab-pat", tok, |s| {
        format!("https://oauth2:{s}@gitlab.com")
    });
    let tok = Secret::new().lit("ghs_").drawn(&g.alnum(36));
    f.secret("github-app-token", tok, |s| {
        format!("https://x-access-token:{s}@github.com")
    });
    f.plain("[credential]");
    f.look(
        "secret-word-setting",
        "\thelper = store --file ~/.git-credentials",
    );
    f.plain("[url \"https://github.com/\"]");
    f.look("url-user-only", "\tinsteadOf = git@github.com:");
    f.look(
        "url-user-only",
        format!(
            "\turl = ssh://git@{}:2222/{}/{}.git",
            g.host(),
            g.word(),
            g.word()
        ),
    );
    f
}

/// A WireGuard `wg0.conf`: private and preshared keys are secrets, public keys are not.
fn wireguard(g: &mut Gen) -> File {
    let mut f = File::new("/etc/wireguard/wg0.conf");
    f.plain("[Interface]");
    f.plain(format!("Address = 10.{}.0.1/24", g.between(0, 255)));
    f.plain("ListenPort = 51820");
    let key = g.b64_bytes(32);
    f.secret("wireguard-private-key", Secret::new().drawn(&key), |s| {
        format!("PrivateKey = {s}")
    });
    f.plain("");
    f.plain("[Peer]");
    f.look(
        "wireguard-public-key",
        format!("PublicKey = {}", g.b64_bytes(32)),
    );
    let psk = g.b64_bytes(32);
    f.secret("wireguard-preshared-key", Secret::new().drawn(&psk), |s| {
        format!("PresharedKey = {s}")
    });
    f.plain(format!("Endpoint = vpn.{}:51820", g.host()));
    f.plain("AllowedIPs = 10.0.0.0/8");
    f
}

/// `.htpasswd` with bcrypt and APR1 hashes.
fn htpasswd(g: &mut Gen) -> File {
    let mut f = File::new(".htpasswd");
    let hash = g.from(
        b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        53,
    );
    f.secret(
        "htpasswd-bcrypt",
        Secret::new().lit("$2y$10$").drawn(&hash),
        |s| format!("{}:{s}", g.user()),
    );
    let salt = g.from(ALNUM, 8);
    let hash = g.from(
        b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        22,
    );
    let user = g.user();
    f.secret(
        "htpasswd-apr1",
        Secret::new()
            .lit("$apr1$")
            .drawn(&salt)
            .drawn("$")
            .drawn(&hash),
        |s| format!("{user}:{s}"),
    );
    f
}

/// A deploy script with passwords on command lines, and look-alikes that prompt instead.
fn shell_script(g: &mut Gen) -> File {
    let mut f = File::new("deploy.sh");
    f.plain("#!/usr/bin/env bash");
    f.plain("set -euo pipefail");
    let pw = g.pw_secret();
    let host = g.host();
    f.secret("mysql-cli-password", pw, |s| {
        format!("mysql -h {host} -u root -p{s} app < dump.sql")
    });
    f.look(
        "secret-word-setting",
        "mysql -h 127.0.0.1 -u root -p app < dump.sql",
    );
    let pw = g.pw_secret();
    let user = g.user();
    f.secret("pgpassword-env", pw, |s| {
        format!("PGPASSWORD={s} psql -h {host} -U {user} -c 'select 1'")
    });
    let pw = g.url_password();
    f.secret("curl-user-password", Secret::new().drawn(&pw), |s| {
        format!("curl -fsS -u admin:{s} https://ci.{}/api/json", g.host())
    });
    let pw = g.pw_secret();
    f.secret("sshpass-password", pw, |s| {
        format!("sshpass -p '{s}' ssh deploy@{host} 'systemctl restart app'")
    });
    let pw = g.url_password();
    f.secret("docker-login-password", Secret::new().drawn(&pw), |s| {
        format!("docker login -u bot -p {s} registry.{}", g.host())
    });
    f.look(
        "env-reference",
        "echo \"$REGISTRY_TOKEN\" | docker login -u bot --password-stdin registry.example.com",
    );
    let pw = g.url_password();
    f.secret("redis-cli-password", Secret::new().drawn(&pw), |s| {
        format!("redis-cli -h {host} -a {s} --no-auth-warning ping")
    });
    f.look("git-sha", format!("git checkout {}", g.hex(40)));
    f.look(
        "sha256-digest",
        format!("echo \"{}  release.tar.gz\" | sha256sum -c -", g.hex(64)),
    );
    f.look(
        "uuid",
        format!(
            "curl -H \"X-Request-Id: {}\" https://api.{}/health",
            g.uuid(),
            g.host()
        ),
    );
    f
}

/// A REST-client `.http` file and an OAuth token response.
fn rest_client(g: &mut Gen) -> File {
    let mut f = File::new("api.http + token.json");
    f.plain(format!("GET https://api.{}/v1/orders", g.host()));
    let jwt = g.jwt();
    f.secret("jwt", jwt, |s| format!("Authorization: Bearer {s}"));
    f.plain("");
    f.plain(format!("GET https://legacy.{}/report", g.host()));
    let (user, pw) = (g.user(), g.url_password());
    let basic = base64(format!("{user}:{pw}").as_bytes());
    f.secret("basic-auth-header", Secret::new().drawn(&basic), |s| {
        format!("Authorization: Basic {s}")
    });
    f.look("uuid", format!("X-Correlation-Id: {}", g.uuid()));
    f.look("hex-id", format!("If-None-Match: \"{}\"", g.hex(32)));
    f.plain("{");
    let jwt = g.jwt();
    f.secret("jwt", jwt, |s| format!("  \"access_token\": \"{s}\","));
    f.look("secret-word-setting", "  \"token_type\": \"Bearer\",");
    f.look("secret-word-setting", "  \"expires_in\": 3600,");
    let n = g.between(40, 64);
    let rt = g.b64url(n);
    f.secret("oauth-refresh-token", Secret::new().drawn(&rt), |s| {
        format!("  \"refresh_token\": \"{s}\",")
    });
    let cursor = base64(format!("{{\"page\":{},\"per_page\":50}}", g.between(2, 99)).as_bytes());
    f.look("base64-data", format!("  \"next_cursor\": \"{cursor}\","));
    f.plain("  \"scope\": \"openid profile email\"");
    f.plain("}");
    f
}

/// Kafka client properties (SASL/PLAIN and a truststore).
fn kafka_properties(g: &mut Gen) -> File {
    let mut f = File::new("client.properties");
    f.plain(format!(
        "bootstrap.servers=pkc-{}.{}.aws.confluent.cloud:9092",
        g.from(LOWER_ALNUM, 5),
        aws_region(g)
    ));
    f.plain("security.protocol=SASL_SSL");
    f.plain("sasl.mechanism=PLAIN");
    let api_key = g.from(UPPER_ALNUM, 16);
    let secret = g.from(B64, 64);
    f.secret("kafka-jaas-password", Secret::new().drawn(&secret), |s| {
        format!(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{api_key}\" password=\"{s}\";"
        )
    });
    f.plain("ssl.truststore.location=/etc/kafka/secrets/kafka.client.truststore.jks");
    let pw = g.pw_secret();
    f.secret("keystore-password", pw, |s| {
        format!("ssl.truststore.password={s}")
    });
    f.plain("ssl.endpoint.identification.algorithm=https");
    f.look(
        "secret-word-setting",
        "sasl.login.refresh.buffer.seconds=300",
    );
    f
}

/// `nslcd.conf` and `slapd.conf` with a bind password and a root password hash.
fn ldap_conf(g: &mut Gen) -> File {
    let mut f = File::new("/etc/nslcd.conf + slapd.conf");
    f.plain("uri ldaps://ldap.example.org/");
    f.plain("base dc=example,dc=org");
    f.plain("binddn cn=nslcd,ou=services,dc=example,dc=org");
    let pw = g.pw_secret();
    f.secret("ldap-bindpw", pw, |s| format!("bindpw {s}"));
    f.plain("rootdn \"cn=admin,dc=example,dc=org\"");
    let hash = g.b64_bytes(24);
    f.secret(
        "ldap-ssha-hash",
        Secret::new().lit("{SSHA}").drawn(&hash),
        |s| format!("rootpw {s}"),
    );
    f.look("secret-word-setting", "password-hash {SSHA}");
    f
}

/// An Ansible inventory with connection passwords and a vault-encrypted variable.
fn ansible_inventory(g: &mut Gen) -> File {
    let mut f = File::new("inventory/group_vars/all.yml");
    f.plain("ansible_user: deploy");
    let pw = g.pw_secret();
    f.secret("ansible-password", pw, |s| {
        format!("ansible_become_password: {s}")
    });
    let pw = g.pw_secret();
    f.secret("ansible-password", pw, |s| format!("ansible_ssh_pass: {s}"));
    f.look("secret-word-setting", "db_password: !vault |");
    f.plain("  $ANSIBLE_VAULT;1.1;AES256");
    for _ in 0..g.between(3, 5) {
        // Ciphertext: safe to commit, which is the point of ansible-vault.
        f.look("vault-ciphertext", format!("  {}", g.hex(80)));
    }
    f.look(
        "env-reference",
        "api_token: \"{{ lookup('env', 'API_TOKEN') }}\"",
    );
    f
}

/// Service URLs: Sentry DSNs (legacy with a secret, modern with a public key only), and URLs of
/// every kind with and without a password.
fn sentry_and_urls(g: &mut Gen) -> File {
    let mut f = File::new("config/services.env");
    let (public, org, project) = (g.hex(32), g.digits(6), g.digits(7));
    f.debatable(
        "sentry-dsn-modern",
        format!("SENTRY_DSN=https://{public}@o{org}.ingest.sentry.io/{project}"),
    );
    let (public, secret) = (g.hex(32), g.hex(32));
    f.secret("sentry-dsn-secret", Secret::new().drawn(&secret), |s| {
        format!("RAVEN_DSN=https://{public}:{s}@sentry.io/{}", g.digits(6))
    });
    let (user, host) = (g.user(), g.host());
    let pw = g.url_password();
    f.secret("mysql-url-password", Secret::new().drawn(&pw), |s| {
        format!("MYSQL_URL=mysql://{user}:{s}@{host}:3306/app")
    });
    let pw = g.url_password();
    f.secret("redis-url-password", Secret::new().drawn(&pw), |s| {
        format!("CACHE_URL=rediss://default:{s}@{}:6380", g.host())
    });
    let (user, pw) = (g.user(), g.url_password());
    f.secret("postgres-url-password", Secret::new().drawn(&pw), |s| {
        format!(
            "DATABASE_URL=postgresql://{user}:{s}@{}/app?sslmode=require",
            g.host()
        )
    });
    let pw = g.pw_secret();
    f.secret("jdbc-password", pw, |s| {
        format!(
            "JDBC_URL=jdbc:postgresql://{}:5432/app?user=app&password={s}&ssl=true",
            g.host()
        )
    });
    f.look(
        "url-no-credentials",
        format!(
            "MONGO_URL=mongodb://mongo-0.{h}:27017,mongo-1.{h}:27017/app?replicaSet=rs0",
            h = g.host()
        ),
    );
    f.look(
        "url-no-credentials",
        format!("BROKER_URL=amqp://{}:5672/%2f", g.host()),
    );
    f.look(
        "url-user-only",
        format!(
            "KAFKA_URL=kafka+ssl://{}@broker.{}:9093",
            g.user(),
            g.host()
        ),
    );
    f.look(
        "env-reference",
        format!("REDIS_URL=redis://:${{REDIS_PASSWORD}}@{}:6379/0", g.host()),
    );
    let key = g.pem_key("EC", "\\n");
    let (pem, body) = key;
    f.secret("pem-private-key-escaped", body, |_| {
        format!("JWT_PRIVATE_KEY=\"{pem}\"")
    });
    f.look(
        "public-key",
        format!(
            "JWT_PUBLIC_KEY=\"-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{}\\n{}==\\n-----END PUBLIC KEY-----\"",
            g.from(B64, 28),
            g.from(B64, 58)
        ),
    );
    f
}

// ---------------------------------------------------------------------------------------------
// Provider tokens, dealt into env-carrying files.

/// A provider's token: its format name, the variable real projects keep it in, whether its shape
/// alone names it (a public prefix or marker), and its generator.
struct Provider {
    format: &'static str,
    var: &'static str,
    shaped: bool,
    make: fn(&mut Gen) -> Secret,
}

fn npm_token(g: &mut Gen) -> Secret {
    Secret::new().lit("npm_").drawn(&g.alnum(36))
}
fn github_pat(g: &mut Gen) -> Secret {
    Secret::new().lit("ghp_").drawn(&g.alnum(36))
}
fn pypi_token(g: &mut Gen) -> Secret {
    let n = g.between(140, 180);
    Secret::new()
        .lit("pypi-AgEIcHlwaS5vcmc")
        .drawn(&g.b64url(n))
}
fn mailgun_key(g: &mut Gen) -> Secret {
    if g.chance(50) {
        Secret::new().lit("key-").drawn(&g.hex(32))
    } else {
        let (a, b, c) = (g.hex(32), g.hex(8), g.hex(8));
        Secret::new().drawn(&format!("{a}-{b}-{c}"))
    }
}
fn sendgrid_key(g: &mut Gen) -> Secret {
    let (a, b) = (g.b64url(22), g.b64url(43));
    Secret::new().lit("SG.").drawn(&a).drawn(".").drawn(&b)
}
fn azure_client_secret(g: &mut Gen) -> Secret {
    let head = g.alnum(3) + &g.from(DIGITS, 1);
    let tail = g.from(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~-",
        34,
    );
    Secret::new().drawn(&head).lit("Q~").drawn(&tail)
}
fn prefixed(prefix: &str, body: String) -> Secret {
    Secret::new().lit(prefix).drawn(&body)
}

const PROVIDERS: &[Provider] = &[
    Provider {
        format: "openai-key",
        var: "OPENAI_API_KEY",
        shaped: true,
        make: |g| match g.0.below(3) {
            0 => Secret::new()
                .lit("sk-")
                .drawn(&g.alnum(20))
                .lit("T3BlbkFJ")
                .drawn(&g.alnum(20)),
            1 => Secret::new()
                .lit("sk-proj-")
                .drawn(&g.b64url(74))
                .lit("T3BlbkFJ")
                .drawn(&g.b64url(74)),
            _ => Secret::new()
                .lit("sk-svcacct-")
                .drawn(&g.b64url(74))
                .lit("T3BlbkFJ")
                .drawn(&g.b64url(74)),
        },
    },
    Provider {
        format: "anthropic-key",
        var: "ANTHROPIC_API_KEY",
        shaped: true,
        make: |g| {
            Secret::new()
                .lit("sk-ant-api03-")
                .drawn(&g.b64url(93))
                .drawn("AA")
        },
    },
    Provider {
        format: "stripe-secret-key",
        var: "STRIPE_SECRET_KEY",
        shaped: true,
        make: |g| {
            let n = if g.chance(50) { 24 } else { 99 };
            let prefix = g.pick(&["sk_live_", "sk_test_"]);
            prefixed(prefix, g.alnum(n))
        },
    },
    Provider {
        format: "stripe-restricted-key",
        var: "STRIPE_RESTRICTED_KEY",
        shaped: true,
        make: |g| prefixed("rk_live_", g.alnum(99)),
    },
    Provider {
        format: "stripe-webhook-secret",
        var: "STRIPE_WEBHOOK_SECRET",
        shaped: true,
        make: |g| prefixed("whsec_", g.alnum(32)),
    },
    Provider {
        format: "github-pat",
        var: "GITHUB_TOKEN",
        shaped: true,
        make: github_pat,
    },
    Provider {
        format: "github-fine-grained-pat",
        var: "GH_PAT",
        shaped: true,
        make: |g| {
            let (a, b) = (g.alnum(22), g.alnum(59));
            Secret::new()
                .lit("github_pat_")
                .drawn(&a)
                .drawn("_")
                .drawn(&b)
        },
    },
    Provider {
        format: "github-oauth-token",
        var: "GITHUB_OAUTH_TOKEN",
        shaped: true,
        make: |g| prefixed("gho_", g.alnum(36)),
    },
    Provider {
        format: "gitlab-pat",
        var: "GITLAB_TOKEN",
        shaped: true,
        make: |g| prefixed("glpat-", g.b64url(20)),
    },
    Provider {
        format: "gitlab-runner-token",
        var: "CI_RUNNER_TOKEN",
        shaped: true,
        make: |g| prefixed("glrt-", g.b64url(20)),
    },
    Provider {
        format: "slack-bot-token",
        var: "SLACK_BOT_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b, c) = (g.digits(11), g.digits(13), g.alnum(24));
            Secret::new().lit("xoxb-").drawn(&format!("{a}-{b}-{c}"))
        },
    },
    Provider {
        format: "slack-user-token",
        var: "SLACK_USER_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b, c, d) = (g.digits(11), g.digits(11), g.digits(13), g.hex(32));
            Secret::new()
                .lit("xoxp-")
                .drawn(&format!("{a}-{b}-{c}-{d}"))
        },
    },
    Provider {
        format: "slack-app-token",
        var: "SLACK_APP_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b, c) = (g.from(UPPER_ALNUM, 10), g.digits(13), g.hex(64));
            Secret::new().lit("xapp-1-").drawn(&format!("A{a}-{b}-{c}"))
        },
    },
    Provider {
        format: "twilio-auth-token",
        var: "TWILIO_AUTH_TOKEN",
        shaped: false,
        make: |g| Secret::new().drawn(&g.hex(32)),
    },
    Provider {
        format: "sendgrid-key",
        var: "SENDGRID_API_KEY",
        shaped: true,
        make: sendgrid_key,
    },
    Provider {
        format: "mailgun-key",
        var: "MAILGUN_API_KEY",
        shaped: true,
        make: mailgun_key,
    },
    Provider {
        format: "datadog-api-key",
        var: "DD_API_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.hex(32)),
    },
    Provider {
        format: "datadog-app-key",
        var: "DD_APP_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.hex(40)),
    },
    Provider {
        format: "google-api-key",
        var: "GOOGLE_API_KEY",
        shaped: true,
        make: |g| prefixed("AIza", g.b64url(35)),
    },
    Provider {
        format: "google-oauth-client-secret",
        var: "GOOGLE_CLIENT_SECRET",
        shaped: true,
        make: |g| prefixed("GOCSPX-", g.b64url(28)),
    },
    Provider {
        format: "huggingface-token",
        var: "HF_TOKEN",
        shaped: true,
        make: |g| prefixed("hf_", g.from(LETTERS, 34)),
    },
    Provider {
        format: "digitalocean-token",
        var: "DIGITALOCEAN_TOKEN",
        shaped: true,
        make: |g| prefixed("dop_v1_", g.hex(64)),
    },
    Provider {
        format: "shopify-token",
        var: "SHOPIFY_ACCESS_TOKEN",
        shaped: true,
        make: |g| prefixed("shpat_", g.hex(32)),
    },
    Provider {
        format: "npm-token",
        var: "NPM_TOKEN",
        shaped: true,
        make: npm_token,
    },
    Provider {
        format: "pypi-token",
        var: "PYPI_API_TOKEN",
        shaped: true,
        make: pypi_token,
    },
    Provider {
        format: "vault-token",
        var: "VAULT_TOKEN",
        shaped: true,
        make: |g| {
            let n = g.between(24, 95);
            prefixed("hvs.", g.b64url(n))
        },
    },
    Provider {
        format: "doppler-token",
        var: "DOPPLER_TOKEN",
        shaped: true,
        make: |g| prefixed("dp.st.prd.", g.alnum(43)),
    },
    Provider {
        format: "linear-key",
        var: "LINEAR_API_KEY",
        shaped: true,
        make: |g| prefixed("lin_api_", g.alnum(40)),
    },
    Provider {
        format: "notion-token",
        var: "NOTION_TOKEN",
        shaped: true,
        make: |g| {
            if g.chance(50) {
                prefixed("secret_", g.alnum(43))
            } else {
                prefixed("ntn_", g.digits(11) + &g.alnum(35))
            }
        },
    },
    Provider {
        format: "age-secret-key",
        var: "SOPS_AGE_KEY",
        shaped: true,
        make: |g| prefixed("AGE-SECRET-KEY-1", g.from(BECH32, 58).to_ascii_uppercase()),
    },
    Provider {
        format: "telegram-bot-token",
        var: "TELEGRAM_BOT_TOKEN",
        shaped: true,
        make: |g| {
            Secret::new()
                .drawn(&g.digits(10))
                .lit(":AA")
                .drawn(&g.b64url(33))
        },
    },
    Provider {
        format: "discord-bot-token",
        var: "DISCORD_TOKEN",
        shaped: true,
        make: |g| {
            let id = base64url_nopad(g.digits(19).as_bytes());
            let (a, b) = (g.b64url(6), g.b64url(38));
            Secret::new()
                .drawn(&id)
                .drawn(".")
                .drawn(&a)
                .drawn(".")
                .drawn(&b)
        },
    },
    Provider {
        format: "discord-webhook",
        var: "DISCORD_WEBHOOK_URL",
        shaped: true,
        make: |g| Secret::new().drawn(&g.b64url(68)),
    },
    Provider {
        format: "slack-webhook",
        var: "SLACK_WEBHOOK_URL",
        shaped: true,
        make: |g| Secret::new().drawn(&g.alnum(24)),
    },
    Provider {
        format: "databricks-token",
        var: "DATABRICKS_TOKEN",
        shaped: true,
        make: |g| prefixed("dapi", g.hex(32)),
    },
    Provider {
        format: "grafana-token",
        var: "GRAFANA_SERVICE_ACCOUNT_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b) = (g.alnum(32), g.hex(8));
            Secret::new().lit("glsa_").drawn(&a).drawn("_").drawn(&b)
        },
    },
    Provider {
        format: "sonarqube-token",
        var: "SONAR_TOKEN",
        shaped: true,
        make: |g| prefixed("squ_", g.hex(40)),
    },
    Provider {
        format: "newrelic-key",
        var: "NEW_RELIC_API_KEY",
        shaped: true,
        make: |g| prefixed("NRAK-", g.from(UPPER_ALNUM, 27)),
    },
    Provider {
        format: "terraform-cloud-token",
        var: "TF_TOKEN_app_terraform_io",
        shaped: true,
        make: |g| {
            Secret::new()
                .drawn(&g.alnum(14))
                .lit(".atlasv1.")
                .drawn(&g.alnum(67))
        },
    },
    Provider {
        format: "postman-key",
        var: "POSTMAN_API_KEY",
        shaped: true,
        make: |g| {
            let (a, b) = (g.hex(24), g.hex(34));
            Secret::new().lit("PMAK-").drawn(&a).drawn("-").drawn(&b)
        },
    },
    Provider {
        format: "brevo-key",
        var: "BREVO_API_KEY",
        shaped: true,
        make: |g| {
            let (a, b) = (g.hex(64), g.alnum(16));
            Secret::new().lit("xkeysib-").drawn(&a).drawn("-").drawn(&b)
        },
    },
    Provider {
        format: "mailchimp-key",
        var: "MAILCHIMP_API_KEY",
        shaped: false,
        make: |g| {
            let (a, b) = (g.hex(32), g.between(1, 21));
            Secret::new().drawn(&format!("{a}-us{b}"))
        },
    },
    Provider {
        format: "airtable-pat",
        var: "AIRTABLE_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b) = (g.alnum(14), g.hex(64));
            Secret::new().lit("pat").drawn(&a).drawn(".").drawn(&b)
        },
    },
    Provider {
        format: "replicate-token",
        var: "REPLICATE_API_TOKEN",
        shaped: true,
        make: |g| prefixed("r8_", g.alnum(37)),
    },
    Provider {
        format: "groq-key",
        var: "GROQ_API_KEY",
        shaped: true,
        make: |g| prefixed("gsk_", g.alnum(52)),
    },
    Provider {
        format: "tavily-key",
        var: "TAVILY_API_KEY",
        shaped: true,
        make: |g| prefixed("tvly-", g.alnum(32)),
    },
    Provider {
        format: "perplexity-key",
        var: "PERPLEXITY_API_KEY",
        shaped: true,
        make: |g| prefixed("pplx-", g.alnum(48)),
    },
    Provider {
        format: "xai-key",
        var: "XAI_API_KEY",
        shaped: true,
        make: |g| prefixed("xai-", g.alnum(80)),
    },
    Provider {
        format: "langsmith-key",
        var: "LANGSMITH_API_KEY",
        shaped: true,
        make: |g| {
            let (a, b) = (g.hex(32), g.hex(10));
            Secret::new().lit("lsv2_pt_").drawn(&a).drawn("_").drawn(&b)
        },
    },
    Provider {
        format: "cloudflare-token",
        var: "CLOUDFLARE_API_TOKEN",
        shaped: false,
        make: |g| Secret::new().drawn(&g.b64url(40)),
    },
    Provider {
        format: "mistral-key",
        var: "MISTRAL_API_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.alnum(32)),
    },
    Provider {
        format: "cohere-key",
        var: "COHERE_API_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.alnum(40)),
    },
    Provider {
        format: "heroku-api-key",
        var: "HEROKU_API_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.uuid()),
    },
    Provider {
        format: "azure-client-secret",
        var: "AZURE_CLIENT_SECRET",
        shaped: true,
        make: azure_client_secret,
    },
    Provider {
        format: "algolia-admin-key",
        var: "ALGOLIA_ADMIN_API_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.hex(32)),
    },
    Provider {
        format: "okta-token",
        var: "OKTA_API_TOKEN",
        shaped: false,
        make: |g| prefixed("00", g.b64url(40)),
    },
    Provider {
        format: "dropbox-token",
        var: "DROPBOX_ACCESS_TOKEN",
        shaped: true,
        make: |g| prefixed("sl.", g.b64url(136)),
    },
    Provider {
        format: "atlassian-token",
        var: "JIRA_API_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b) = (g.b64url(180), g.from(UPPER_ALNUM, 8));
            Secret::new()
                .lit("ATATT3xFfGF0")
                .drawn(&a)
                .drawn("=")
                .drawn(&b)
        },
    },
    Provider {
        format: "pulumi-token",
        var: "PULUMI_ACCESS_TOKEN",
        shaped: true,
        make: |g| prefixed("pul-", g.hex(40)),
    },
    Provider {
        format: "rubygems-key",
        var: "GEM_HOST_API_KEY",
        shaped: true,
        make: |g| prefixed("rubygems_", g.hex(48)),
    },
    Provider {
        format: "nuget-key",
        var: "NUGET_API_KEY",
        shaped: true,
        make: |g| prefixed("oy2", g.from(LOWER_ALNUM, 43)),
    },
    Provider {
        format: "supabase-service-key",
        var: "SUPABASE_SERVICE_ROLE_KEY",
        shaped: true,
        make: |g| g.jwt(),
    },
    Provider {
        format: "mapbox-secret-token",
        var: "MAPBOX_SECRET_TOKEN",
        shaped: true,
        make: |g| {
            let claims = base64url_nopad(
                format!(
                    "{{\"u\":\"{}\",\"a\":\"{}\"}}",
                    g.word(),
                    g.from(LOWER_ALNUM, 25)
                )
                .as_bytes(),
            );
            Secret::new()
                .lit("sk.")
                .drawn(&claims)
                .drawn(".")
                .drawn(&g.b64url(22))
        },
    },
    Provider {
        format: "square-token",
        var: "SQUARE_ACCESS_TOKEN",
        shaped: true,
        make: |g| prefixed("EAAA", g.b64url(60)),
    },
    Provider {
        format: "braintree-token",
        var: "BRAINTREE_ACCESS_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b) = (g.from(LOWER_ALNUM, 16), g.hex(32));
            Secret::new()
                .lit("access_token$production$")
                .drawn(&a)
                .drawn("$")
                .drawn(&b)
        },
    },
    Provider {
        format: "firebase-fcm-key",
        var: "FCM_SERVER_KEY",
        shaped: true,
        make: |g| {
            let (a, b) = (g.b64url(7), g.b64url(134));
            Secret::new().lit("AAAA").drawn(&a).lit(":APA91b").drawn(&b)
        },
    },
    Provider {
        format: "planetscale-password",
        var: "PLANETSCALE_PASSWORD",
        shaped: true,
        make: |g| prefixed("pscale_pw_", g.b64url(43)),
    },
    Provider {
        format: "sentry-auth-token",
        var: "SENTRY_AUTH_TOKEN",
        shaped: true,
        make: |g| prefixed("sntryu_", g.hex(64)),
    },
    Provider {
        format: "pinecone-key",
        var: "PINECONE_API_KEY",
        shaped: true,
        make: |g| {
            let (a, b) = (g.alnum(6), g.alnum(64));
            Secret::new().lit("pcsk_").drawn(&a).drawn("_").drawn(&b)
        },
    },
    Provider {
        format: "vercel-token",
        var: "VERCEL_TOKEN",
        shaped: false,
        make: |g| Secret::new().drawn(&g.alnum(24)),
    },
    Provider {
        format: "netlify-token",
        var: "NETLIFY_AUTH_TOKEN",
        shaped: true,
        make: |g| prefixed("nfp_", g.alnum(36)),
    },
    Provider {
        format: "circleci-token",
        var: "CIRCLECI_TOKEN",
        shaped: true,
        make: |g| {
            let (a, b) = (g.alnum(22), g.hex(40));
            Secret::new().lit("CCIPAT_").drawn(&a).drawn("_").drawn(&b)
        },
    },
    Provider {
        format: "dockerhub-pat",
        var: "DOCKERHUB_TOKEN",
        shaped: true,
        make: |g| prefixed("dckr_pat_", g.b64url(27)),
    },
    Provider {
        format: "snyk-token",
        var: "SNYK_TOKEN",
        shaped: false,
        make: |g| Secret::new().drawn(&g.uuid()),
    },
    Provider {
        format: "jenkins-token",
        var: "JENKINS_API_TOKEN",
        shaped: false,
        make: |g| prefixed("11", g.hex(32)),
    },
    Provider {
        format: "buildkite-token",
        var: "BUILDKITE_API_TOKEN",
        shaped: true,
        make: |g| prefixed("bkua_", g.hex(40)),
    },
    Provider {
        format: "jwt-signing-secret",
        var: "JWT_SECRET",
        shaped: false,
        make: |g| {
            let n = g.between(32, 64);
            Secret::new().drawn(&g.alnum(n))
        },
    },
    Provider {
        format: "session-secret",
        var: "SESSION_SECRET",
        shaped: false,
        make: |g| Secret::new().drawn(&g.hex(64)),
    },
    Provider {
        format: "encryption-key",
        var: "ENCRYPTION_KEY",
        shaped: false,
        make: |g| Secret::new().drawn(&g.b64_bytes(32)),
    },
    Provider {
        format: "ethereum-private-key",
        var: "DEPLOYER_PRIVATE_KEY",
        shaped: false,
        make: |g| prefixed("0x", g.hex(64)),
    },
];

/// How a file of a given kind writes `name = value`.
#[derive(Clone, Copy)]
enum Syntax {
    Dotenv,
    DotenvQuoted,
    Export,
    ComposeMap,
    ComposeList,
    ActionsEnv,
    K8sStringData,
    Json,
    Tfvars,
    Systemd,
    Python,
}

impl Syntax {
    fn file(self) -> &'static str {
        match self {
            Syntax::Dotenv => ".env",
            Syntax::DotenvQuoted => ".env.production",
            Syntax::Export => "~/.bashrc",
            Syntax::ComposeMap | Syntax::ComposeList => "compose.yaml",
            Syntax::ActionsEnv => ".github/workflows/ci.yml",
            Syntax::K8sStringData => "k8s/secret.yaml",
            Syntax::Json => "config.json",
            Syntax::Tfvars => "secrets.auto.tfvars",
            Syntax::Systemd => "app.service.d/override.conf",
            Syntax::Python => "config.py",
        }
    }

    fn header(self, f: &mut File, g: &mut Gen) {
        match self {
            Syntax::Dotenv | Syntax::DotenvQuoted => {
                f.plain(format!("# {} environment", g.word()));
                f.plain("NODE_ENV=production");
            }
            Syntax::Export => f.plain("# API credentials for local scripts"),
            Syntax::ComposeMap | Syntax::ComposeList => {
                f.plain("services:");
                f.plain(format!("  {}:", g.word()));
                f.plain("    environment:");
            }
            Syntax::ActionsEnv => {
                f.plain("jobs:");
                f.plain("  test:");
                f.plain("    env:");
            }
            Syntax::K8sStringData => {
                f.plain("apiVersion: v1");
                f.plain("kind: Secret");
                f.plain("metadata:");
                f.plain(format!("  name: {}-credentials", g.word()));
                f.plain("type: Opaque");
                f.plain("stringData:");
            }
            Syntax::Json => f.plain("{"),
            Syntax::Tfvars => f.plain("# supplied by the pipeline"),
            Syntax::Systemd => f.plain("[Service]"),
            Syntax::Python => f.plain("import os"),
        }
    }

    fn render(self, var: &str, value: &str) -> String {
        match self {
            Syntax::Dotenv => format!("{var}={value}"),
            Syntax::DotenvQuoted => format!("{var}=\"{value}\""),
            Syntax::Export => format!("export {var}='{value}'"),
            Syntax::ComposeMap => format!("      {var}: {value}"),
            Syntax::ComposeList => format!("      - {var}={value}"),
            Syntax::ActionsEnv => format!("      {var}: {value}"),
            Syntax::K8sStringData => {
                format!("  {}: \"{value}\"", var.to_lowercase().replace('_', "-"))
            }
            Syntax::Json => format!("  \"{}\": \"{value}\",", camel(var)),
            Syntax::Tfvars => format!("{} = \"{value}\"", var.to_lowercase()),
            Syntax::Systemd => format!("Environment=\"{var}={value}\""),
            Syntax::Python => format!("{var} = \"{value}\""),
        }
    }
}

const SYNTAXES: [Syntax; 11] = [
    Syntax::Dotenv,
    Syntax::DotenvQuoted,
    Syntax::Export,
    Syntax::ComposeMap,
    Syntax::ComposeList,
    Syntax::ActionsEnv,
    Syntax::K8sStringData,
    Syntax::Json,
    Syntax::Tfvars,
    Syntax::Systemd,
    Syntax::Python,
];

fn camel(var: &str) -> String {
    let mut out = String::new();
    for (i, part) in var.split('_').enumerate() {
        let lower = part.to_lowercase();
        if i == 0 {
            out.push_str(&lower);
        } else {
            out.push_str(&capital(&lower));
        }
    }
    out
}

/// One round: every provider token once, dealt into files of 4–8 tokens in one syntax each, with
/// look-alikes between them. A shaped token is sometimes written where no key names it (a list
/// item, a neutral key, a code call), since its shape alone says what it is.
fn env_files(g: &mut Gen) -> Vec<File> {
    let mut order: Vec<usize> = (0..PROVIDERS.len()).collect();
    g.0.shuffle(&mut order);
    let mut files = Vec::new();
    let mut rest = &order[..];
    while !rest.is_empty() {
        let take = g.between(4, 8).min(rest.len());
        let (chunk, tail) = rest.split_at(take);
        rest = tail;
        let syntax = *g.0.pick(&SYNTAXES);
        let mut f = File::new(syntax.file());
        syntax.header(&mut f, g);
        for &i in chunk {
            let p = &PROVIDERS[i];
            let secret = (p.make)(g);
            let neutral = p.shaped && g.chance(20);
            f.secret(p.format, secret, |s| {
                let value = match p.format {
                    "slack-webhook" => format!(
                        "https://hooks.slack.com/services/T{}/B{}/{s}",
                        g.from(UPPER_ALNUM, 10),
                        g.from(UPPER_ALNUM, 10)
                    ),
                    "discord-webhook" => {
                        format!("https://discord.com/api/webhooks/{}/{s}", g.digits(19))
                    }
                    _ => s.to_owned(),
                };
                if neutral {
                    neutral_line(g, &value)
                } else {
                    syntax.render(p.var, &value)
                }
            });
            for _ in 0..g.between(1, 2) {
                let (format, var, value) = look_alike(g);
                f.look(format, syntax.render(&var, &value));
            }
        }
        if matches!(syntax, Syntax::Json) {
            f.plain("  \"debug\": false");
            f.plain("}");
        }
        files.push(f);
    }
    files
}

/// A line that holds `value` with nothing around it naming a secret.
fn neutral_line(g: &mut Gen, value: &str) -> String {
    match g.0.below(5) {
        0 => format!("      - {value}"),
        1 => format!("  \"value\": \"{value}\","),
        2 => format!("default = \"{value}\""),
        3 => format!("client = Client(\"{value}\")"),
        _ => format!("# old one, rotated last week: {value}"),
    }
}

/// A benign `(format, variable, value)` for an env-carrying file.
fn look_alike(g: &mut Gen) -> (&'static str, String, String) {
    let named = |g: &mut Gen| g.0.pick(PROVIDERS).var.to_owned();
    match g.0.below(20) {
        0 => (
            "uuid",
            g.pick(&[
                "REQUEST_ID",
                "TENANT_ID",
                "AZURE_SUBSCRIPTION_ID",
                "WORKSPACE_ID",
                "INSTANCE_UUID",
            ])
            .to_owned(),
            g.uuid(),
        ),
        1 => (
            "git-sha",
            g.pick(&[
                "GIT_COMMIT",
                "SOURCE_VERSION",
                "BUILD_REVISION",
                "GITHUB_SHA",
            ])
            .to_owned(),
            g.hex(40),
        ),
        2 => (
            "sha256-digest",
            g.pick(&["IMAGE_DIGEST", "ARTIFACT_SHA256", "BASE_IMAGE"])
                .to_owned(),
            format!("sha256:{}", g.hex(64)),
        ),
        3 => {
            let value = g
                .pick(&[
                    "<your-api-key>",
                    "your-api-key-here",
                    "YOUR_API_KEY",
                    "xxxxxxxxxxxxxxxxxxxxxxxx",
                    "********",
                    "replace-me",
                    "<REPLACE_WITH_TOKEN>",
                    "",
                    "null",
                    "sk-...",
                    "TODO: ask ops for the key",
                ])
                .to_owned();
            ("placeholder", named(g), value)
        }
        4 => {
            let var = named(g);
            let value = match g.0.below(5) {
                0 => format!("${{{var}}}"),
                1 => format!("${var}"),
                2 => format!("${{{{ secrets.{var} }}}}"),
                3 => format!("vault:secret/data/{}#{}", g.word(), var.to_lowercase()),
                _ => format!(
                    "arn:aws:secretsmanager:{}:{}:secret:prod/{}-{}",
                    aws_region(g),
                    g.digits(12),
                    g.word(),
                    g.alnum(6)
                ),
            };
            ("env-reference", var, value)
        }
        5 => {
            let (var, value) = *g.0.pick(&[
                ("TOKEN_TTL_SECONDS", "3600"),
                ("PASSWORD_MIN_LENGTH", "12"),
                ("MAX_TOKENS", "4096"),
                ("SECRET_STORE", "vault"),
                ("API_KEY_HEADER", "X-Api-Key"),
                ("AUTH_PROVIDER", "github"),
                ("JWT_ALGORITHM", "RS256"),
                ("KEY_VAULT_NAME", "kv-prod-weu"),
                ("TOKEN_URL", "https://auth.example.com/oauth/token"),
                ("PASSWORD_RESET_PATH", "/account/password/reset"),
                ("SECRETS_MOUNT", "/run/secrets"),
                ("AUTH_COOKIE_NAME", "__Host-session"),
            ]);
            ("secret-word-setting", var.to_owned(), value.to_owned())
        }
        6 => (
            "url-no-credentials",
            g.pick(&[
                "API_BASE_URL",
                "REDIS_HOST_URL",
                "WEBHOOK_ENDPOINT",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ])
            .to_owned(),
            format!("https://{}/{}", g.host(), g.word()),
        ),
        7 => {
            let json = format!(
                "{{\"beta\":{},\"rollout\":{},\"cohort\":\"{}\"}}",
                g.chance(50),
                g.between(1, 100),
                g.word()
            );
            (
                "base64-data",
                "FEATURE_FLAGS_B64".to_owned(),
                base64(json.as_bytes()),
            )
        }
        8 => (
            "ssh-public-key",
            "SSH_PUBLIC_KEY".to_owned(),
            ssh_public_key(g),
        ),
        9 => (
            "stripe-publishable-key",
            "NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY".to_owned(),
            format!("pk_live_{}", g.alnum(99)),
        ),
        10 => (
            "twilio-account-sid",
            "TWILIO_ACCOUNT_SID".to_owned(),
            format!("AC{}", g.hex(32)),
        ),
        11 => (
            "aws-arn",
            "ROLE_ARN".to_owned(),
            format!(
                "arn:aws:iam::{}:role/{}-{}",
                g.digits(12),
                g.word(),
                g.word()
            ),
        ),
        12 => (
            "numeric-id",
            g.pick(&[
                "AWS_ACCOUNT_ID",
                "GITHUB_APP_ID",
                "GCP_PROJECT_NUMBER",
                "SLACK_CHANNEL_ID_NUM",
            ])
            .to_owned(),
            g.digits(12),
        ),
        13 => (
            "hex-id",
            g.pick(&["TRACE_ID", "DEPLOY_ETAG", "BUNDLE_MD5", "GPG_FINGERPRINT"])
                .to_owned(),
            g.hex(32),
        ),
        14 => (
            "age-public-key",
            "SOPS_AGE_RECIPIENTS".to_owned(),
            format!("age1{}", g.from(BECH32, 58)),
        ),
        15 => (
            "wireguard-public-key",
            "WG_PEER_PUBLIC_KEY".to_owned(),
            g.b64_bytes(32),
        ),
        16 => (
            "oauth-client-id",
            "GOOGLE_CLIENT_ID".to_owned(),
            format!(
                "{}-{}.apps.googleusercontent.com",
                g.digits(12),
                g.from(LOWER_ALNUM, 32)
            ),
        ),
        17 => (
            "sri-integrity",
            "CDN_SCRIPT_INTEGRITY".to_owned(),
            format!("sha384-{}", g.b64_bytes(48)),
        ),
        18 => (
            "url-user-only",
            "GIT_REMOTE".to_owned(),
            format!("ssh://git@{}/{}/{}.git", g.host(), g.word(), g.word()),
        ),
        _ => (
            "cloud-resource-id",
            g.pick(&["AMI_ID", "SUBNET_ID", "SECURITY_GROUP_ID"])
                .to_owned(),
            format!("{}-0{}", g.pick(&["ami", "subnet", "sg"]), g.hex(16)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_corpus_is_big_and_varied_enough() {
        let lines = corpus(SEED);
        let secrets: Vec<&Line> = lines
            .iter()
            .filter(|l| matches!(l.label, Label::Secret(_)))
            .collect();
        let looks = lines
            .iter()
            .filter(|l| matches!(l.label, Label::LookAlike))
            .count();
        let formats: BTreeSet<&str> = secrets.iter().map(|l| l.format).collect();
        assert!(secrets.len() >= 1000, "{} secret lines", secrets.len());
        assert!(looks >= 1000, "{looks} look-alike lines");
        assert!(formats.len() >= 40, "{} secret formats", formats.len());
        for format in &formats {
            let n = secrets.iter().filter(|l| l.format == *format).count();
            assert!(n >= 10, "{format}: only {n} lines");
        }
    }

    #[test]
    fn the_corpus_is_deterministic_per_seed() {
        let texts = |seed| corpus(seed).into_iter().map(|l| l.text).collect::<Vec<_>>();
        assert_eq!(texts(SEED), texts(SEED));
        assert_ne!(texts(SEED), texts(SEED + 1));
    }

    #[test]
    fn every_secret_sits_once_on_its_line_and_nowhere_else() {
        for line in corpus(SEED) {
            let Label::Secret(secret) = &line.label else {
                continue;
            };
            assert!(secret.text().is_ascii(), "{}: not ASCII", line.format);
            assert!(
                secret.text().len() >= RUN,
                "{}: shorter than a run",
                line.format
            );
            let at = line
                .text
                .find(secret.text())
                .unwrap_or_else(|| panic!("{}: the secret is not on its line", line.format));
            let mut around = line.text.clone();
            around.replace_range(at..at + secret.text().len(), "");
            assert!(
                !secret.survives_in(&around),
                "{}: a run of the secret is also elsewhere on its line",
                line.format
            );
            assert!(secret.survives_in(&line.text), "{}", line.format);
        }
    }

    #[test]
    fn a_kept_public_prefix_is_not_a_leak_but_one_generated_character_more_is() {
        let s = Secret::new().lit("sk-proj-").drawn("ABCDEFGHIJKLMNOP");
        assert!(!s.survives_in("key: sk-proj-[REDACTED]"));
        assert!(s.survives_in("key: sk-proj-A[REDACTED]"));
        assert!(s.survives_in("key: [REDACTED]IJKLMNOP"));
        assert!(!s.survives_in("key: [REDACTED]JKLMNOP"));
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
